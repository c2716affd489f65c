"""Chunked iteration and map-and-batch fusion give exactly the elements (values, order,
dtypes) of element-by-element iteration."""

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import function_runtime
from tensorweave.kernels import dataset_chunks, dataset_vectorize
from tensorweave.ops import dataset_structure as st


@pytest.fixture(autouse=True)
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


def values(ds):
    nxt = ds.make_one_shot_iterator().get_next()
    out = []
    with tf.Session() as sess:
        while True:
            try:
                out.append(sess.run(nxt))
            except tf.errors.OutOfRangeError:
                return out


def test_shuffle_order_same_with_and_without_chunks():
    x = np.arange(50)
    elements = values(tf.data.Dataset.from_tensor_slices(x).shuffle(7, seed=5).repeat(2))
    batched = values(tf.data.Dataset.from_tensor_slices(x).shuffle(7, seed=5).repeat(2).batch(8))
    assert np.concatenate(batched).tolist() == [int(v) for v in elements]
    # A shuffle over a non-slice input (element buffer) emits the same order.
    generic = values(tf.data.Dataset.range(50).shuffle(7, seed=5).repeat(2))
    assert generic == [int(v) for v in elements]


def test_map_batch_fusion_values_and_dtypes():
    x = np.arange(40, dtype=np.uint8).reshape(20, 2)
    y = np.arange(20)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).repeat(2).map(
        lambda a, b: (tf.cast(a, tf.float32) / 4.0, b * 2)).batch(6)
    out = values(ds)
    assert [len(b[0]) for b in out] == [6] * 6 + [4]
    allx = np.concatenate([b[0] for b in out])
    assert allx.dtype == np.float32
    np.testing.assert_array_equal(allx, np.concatenate([x, x]).astype(np.float32) / 4.0)
    np.testing.assert_array_equal(np.concatenate([b[1] for b in out]), np.tile(y * 2, 2))
    dropped = values(tf.data.Dataset.from_tensor_slices(y).map(lambda b: b + 1).batch(
        6, drop_remainder=True))
    assert [b.tolist() for b in dropped] == [list(range(1, 7)), list(range(7, 13)),
                                             list(range(13, 19))]


def test_non_elementwise_map_is_not_fused():
    ds = tf.data.Dataset.from_tensor_slices(np.arange(12).reshape(6, 2)).map(
        lambda a: tf.reduce_sum(a)).batch(4)
    assert [b.tolist() for b in values(ds)] == [[1, 5, 9, 13], [17, 21]]
    noisy = tf.data.Dataset.from_tensor_slices(np.zeros([6, 2], np.float32)).map(
        lambda a: a + tf.random_uniform([2])).batch(6)
    rows = values(noisy)[0]
    assert not np.array_equal(rows[0], rows[1])  # one draw per element, as TensorFlow


@pytest.mark.parametrize("fn, expected", [
    (lambda a: a * 2.0, True),
    (lambda a: tf.cast(a, tf.int32) + 1, True),
    (lambda a: a * tf.constant([1.0, 2.0]), False),
    (lambda a: tf.reduce_sum(a), False),
    (lambda a: tf.constant(1.0), False),
])
def test_is_elementwise(fn, expected):
    traced = st.trace(fn, tf.float32, tf.TensorShape([2]), "test")
    graph_def = function_runtime.parse_body(traced.body)
    assert dataset_vectorize.is_elementwise(graph_def, 1) is expected


def test_rebatch_across_chunks():
    chunks = iter([(np.arange(3),), (np.arange(3, 4),), (np.arange(4, 10),)])
    out = [b[0].tolist() for b in dataset_chunks.rebatch(chunks, 4, drop=False)]
    assert out == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]


def test_file_datasets_batch_in_chunks(tmp_path):
    path = str(tmp_path / "r.tfr")
    with tf.io.TFRecordWriter(path) as w:
        for i in range(5):
            w.write(b"r%d" % i)
    (tmp_path / "t.txt").write_bytes(b"a\nb\nc\n")
    recs = values(tf.data.TFRecordDataset([path, path]).batch(4))
    assert [b.tolist() for b in recs] == [[b"r0", b"r1", b"r2", b"r3"],
                                         [b"r4", b"r0", b"r1", b"r2"], [b"r3", b"r4"]]
    lines = values(tf.data.TextLineDataset(str(tmp_path / "t.txt")).repeat(2).batch(4))
    assert [b.tolist() for b in lines] == [[b"a", b"b", b"c", b"a"], [b"b", b"c"]]
