"""tf.data core: cases ported from TensorFlow's kernel_tests (from_tensor_slices_test,
range_test, map_test, filter_test, batch_test, padded_batch_test, shuffle_test,
repeat_test, take/skip/shard/zip/concatenate/interleave/flat_map/cache tests, iterator
tests). Element order and values match TensorFlow 2.21 for deterministic pipelines."""

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import errors


@pytest.fixture(autouse=True)
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


def values(dataset, initializable=False, feed=None):
    """All elements of a dataset, then checks OutOfRangeError repeats."""
    it = dataset.make_initializable_iterator() if initializable else \
        dataset.make_one_shot_iterator()
    nxt = it.get_next()
    out = []
    with tf.Session() as sess:
        if initializable:
            sess.run(it.initializer, feed)
        while True:
            try:
                out.append(sess.run(nxt))
            except errors.OutOfRangeError:
                break
        with pytest.raises(errors.OutOfRangeError, match="End of sequence"):
            sess.run(nxt)
    return out


def test_from_tensor_slices_structures():
    ds = tf.data.Dataset.from_tensor_slices(
        {"a": np.arange(3), "b": (np.array([[1, 2], [3, 4], [5, 6]], np.float32), ["x", "y", "z"])})
    assert ds.output_types == {"a": tf.int64, "b": (tf.float32, tf.string)}
    assert ds.output_shapes["b"][0].as_list() == [2]
    out = values(ds)
    assert [o["a"] for o in out] == [0, 1, 2]
    np.testing.assert_array_equal(out[1]["b"][0], [3, 4])
    assert [o["b"][1] for o in out] == [b"x", b"y", b"z"]
    with pytest.raises(ValueError):
        tf.data.Dataset.from_tensor_slices((np.arange(3), np.arange(4)))


def test_from_tensors_and_range():
    assert [v.tolist() for v in values(tf.data.Dataset.from_tensors([1, 2]))] == [[1, 2]]
    assert values(tf.data.Dataset.range(5)) == [0, 1, 2, 3, 4]
    assert values(tf.data.Dataset.range(2, 10, 3)) == [2, 5, 8]
    assert values(tf.data.Dataset.range(5, 0, -2)) == [5, 3, 1]
    assert values(tf.data.Dataset.range(0)) == []


def test_map_filter_and_captured_tensors():
    scale = tf.constant(10, tf.int64)
    ds = tf.data.Dataset.range(6).map(lambda x: (x, x * scale)).filter(
        lambda x, y: tf.equal(x % 2, 0))
    assert [tuple(v) for v in values(ds)] == [(0, 0), (2, 20), (4, 40)]
    p = tf.placeholder(tf.int64, [])
    fed = tf.data.Dataset.range(3).map(lambda x: x + p)
    assert values(fed, initializable=True, feed={p: 100}) == [100, 101, 102]


def test_parallel_map_keeps_order():
    ds = tf.data.Dataset.range(20).map(lambda x: x * x, num_parallel_calls=4)
    assert values(ds) == [i * i for i in range(20)]


def test_map_dict_and_nested_outputs():
    ds = tf.data.Dataset.from_tensor_slices({"x": [1.0, 2.0]}).map(
        lambda d: {"y": d["x"] * 2, "z": (d["x"], tf.constant("s"))})
    assert ds.output_types == {"y": tf.float32, "z": (tf.float32, tf.string)}
    out = values(ds)
    assert out[1]["y"] == 4.0 and out[1]["z"][1] == b"s"


def test_filter_predicate_must_be_scalar_bool():
    with pytest.raises(ValueError, match="scalar boolean"):
        tf.data.Dataset.range(3).filter(lambda x: x)


def test_batch_and_drop_remainder():
    ds = tf.data.Dataset.range(7).batch(3)
    assert ds.output_shapes.as_list() == [None]
    assert [v.tolist() for v in values(ds)] == [[0, 1, 2], [3, 4, 5], [6]]
    dropped = tf.data.Dataset.range(7).batch(3, drop_remainder=True)
    assert dropped.output_shapes.as_list() == [3]
    assert [v.tolist() for v in values(dropped)] == [[0, 1, 2], [3, 4, 5]]
    strings = tf.data.Dataset.from_tensor_slices(["a", "b", "c"]).batch(2)
    assert [v.tolist() for v in values(strings)] == [[b"a", b"b"], [b"c"]]


def test_batch_of_different_shapes_fails():
    ds = tf.data.Dataset.range(1, 4).map(lambda x: tf.fill([x], x)).batch(2)
    with pytest.raises(errors.InvalidArgumentError, match="Cannot batch tensors with different"):
        values(ds)


def test_padded_batch():
    ds = tf.data.Dataset.range(1, 5).map(lambda x: tf.fill([x], x))
    out = values(ds.padded_batch(2, padded_shapes=[None]))
    assert [v.tolist() for v in out] == [[[1, 0], [2, 2]], [[3, 3, 3, 0], [4, 4, 4, 4]]]
    fixed = values(ds.padded_batch(4, padded_shapes=[5], padding_values=tf.constant(-1, tf.int64)))
    assert fixed[0].tolist()[0] == [1, -1, -1, -1, -1]
    assert fixed[0].shape == (4, 5)


def test_shuffle_is_a_permutation_and_seeded():
    ds = tf.data.Dataset.range(20).shuffle(5, seed=7)
    first = values(ds)
    assert sorted(first) == list(range(20)) and first != list(range(20))
    again = tf.data.Dataset.range(20).shuffle(5, seed=7)
    assert values(again) == first
    epochs = values(tf.data.Dataset.range(10).shuffle(10, seed=3).repeat(2))
    assert sorted(epochs[:10]) == list(range(10)) and epochs[:10] != epochs[10:]
    same = values(tf.data.Dataset.range(10).shuffle(10, seed=3, reshuffle_each_iteration=False)
                  .repeat(2))
    assert same[:10] == same[10:]


def test_repeat_take_skip_shard():
    ds = tf.data.Dataset.range(3)
    assert values(ds.repeat(2)) == [0, 1, 2, 0, 1, 2]
    assert values(ds.repeat().take(7)) == [0, 1, 2, 0, 1, 2, 0]
    assert values(ds.take(-1)) == [0, 1, 2]
    assert values(ds.skip(1)) == [1, 2]
    assert values(ds.skip(-1)) == []
    assert values(tf.data.Dataset.range(10).shard(3, 1)) == [1, 4, 7]
    assert values(tf.data.Dataset.range(0).repeat()) == []
    with pytest.raises(errors.InvalidArgumentError, match="Index must be between 0 and 2"):
        values(tf.data.Dataset.range(10).shard(3, 3))


def test_zip_concatenate_enumerate():
    a, b = tf.data.Dataset.range(3), tf.data.Dataset.range(10, 15)
    assert [tuple(v) for v in values(tf.data.Dataset.zip((a, b)))] == [(0, 10), (1, 11), (2, 12)]
    assert values(a.concatenate(b)) == [0, 1, 2, 10, 11, 12, 13, 14]
    assert [tuple(v) for v in values(b.enumerate(5))][:2] == [(5, 10), (6, 11)]
    with pytest.raises(TypeError):
        a.concatenate(tf.data.Dataset.from_tensor_slices([1.0]))


def test_interleave_order_matches_tensorflow():
    # The example of TensorFlow's Dataset.interleave documentation.
    ds = tf.data.Dataset.range(1, 6).interleave(
        lambda x: tf.data.Dataset.from_tensors(x).repeat(6), cycle_length=2, block_length=4)
    assert values(ds) == [1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 3, 3,
                          4, 4, 5, 5, 5, 5, 5, 5]
    par = tf.data.Dataset.range(1, 4).interleave(
        lambda x: tf.data.Dataset.from_tensors(x).repeat(2), cycle_length=3,
        num_parallel_calls=2)
    assert values(par) == [1, 2, 3, 1, 2, 3]


def test_flat_map_and_unbatch():
    ds = tf.data.Dataset.range(3).flat_map(lambda x: tf.data.Dataset.range(x))
    assert values(ds) == [0, 0, 1]
    un = tf.data.Dataset.from_tensors([[1, 2], [3, 4]]).unbatch()
    assert [v.tolist() for v in values(un)] == [[1, 2], [3, 4]]
    with pytest.raises(TypeError, match="must return a `Dataset`"):
        tf.data.Dataset.range(3).flat_map(lambda x: x)


def test_cache_and_prefetch():
    ds = tf.data.Dataset.range(5).map(lambda x: x + 1).cache().repeat(2).prefetch(2)
    assert values(ds) == [1, 2, 3, 4, 5] * 2
    assert values(tf.data.Dataset.range(100).prefetch(tf.data.AUTOTUNE)) == list(range(100))


def test_from_generator():
    def gen():
        for i in range(3):
            yield i, [i] * i

    ds = tf.data.Dataset.from_generator(gen, (tf.int64, tf.float32),
                                        (tf.TensorShape([]), tf.TensorShape([None])))
    out = values(ds)
    assert [o[0] for o in out] == [0, 1, 2]
    assert out[2][1].tolist() == [2.0, 2.0] and out[2][1].dtype == np.float32
    bad = tf.data.Dataset.from_generator(lambda: iter([[1, 2]]), tf.int64, tf.TensorShape([3]))
    with pytest.raises(errors.InvalidArgumentError, match="shape"):
        values(bad)


def test_error_in_map_names_the_dataset_op():
    ds = tf.data.Dataset.range(3).map(lambda x: tf.reshape(x, tf.stack([x + 2])), name="reshaper")
    nxt = ds.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        with pytest.raises(errors.InvalidArgumentError, match="reshaper") as info:
            sess.run(nxt)
    assert "{{node Reshape}}" in str(info.value)



def test_experimental_transformations_and_options():
    ds = tf.data.Dataset.range(4).apply(
        tf.data.experimental.shuffle_and_repeat(4, count=2, seed=1))
    out = values(ds)
    assert sorted(out[:4]) == [0, 1, 2, 3] and sorted(out[4:]) == [0, 1, 2, 3]
    mb = tf.data.Dataset.range(5).apply(tf.data.experimental.map_and_batch(lambda x: x * 3, 2))
    assert [v.tolist() for v in values(mb)] == [[0, 3], [6, 9], [12]]
    assert values(tf.data.Dataset.range(2).with_options(tf.data.Options())) == [0, 1]
    assert tf.data.AUTOTUNE == -1
    spec = tf.data.Dataset.range(3).element_spec
    assert spec.dtype == tf.int64 and spec.shape.as_list() == []


def test_padded_batch_of_tuples_with_strings():
    ds = tf.data.Dataset.from_tensor_slices((["a", "bb"], [[1, 2], [3, 4]])).map(
        lambda s, v: (s, v[:1]))
    out = values(ds.padded_batch(2, padded_shapes=([], [3]), padding_values=("", 9)))
    assert out[0][0].tolist() == [b"a", b"bb"]
    assert out[0][1].tolist() == [[1, 9, 9], [3, 9, 9]]
