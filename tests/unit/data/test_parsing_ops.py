"""Parsing ops: cases ported from TensorFlow's parsing_ops_test.py, decode_raw_op_test.py,
decode_csv_op_test.py (values checked against TensorFlow 2.21)."""

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import errors
from tensorweave.protos import example_pb2


def example(**features):
    e = example_pb2.Example()
    for key, values in features.items():
        f = e.features.feature[key]
        if values and isinstance(values[0], bytes):
            f.bytes_list.value.extend(values)
        elif values and isinstance(values[0], float):
            f.float_list.value.extend(values)
        else:
            f.int64_list.value.extend(values)
    return e.SerializeToString()


def run(fetch, feed=None):
    with tf.Session(graph=tf.get_default_graph()) as sess:
        return sess.run(fetch, feed)


@pytest.fixture(autouse=True)
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


def test_parse_example_dense_sparse_and_defaults():
    records = [example(a=[1.0, 2.0], b=[3], s=[b"x"]), example(a=[4.0, 5.0], b=[6, 7])]
    out = run(tf.io.parse_example(records, {
        "a": tf.io.FixedLenFeature([2], tf.float32),
        "b": tf.io.VarLenFeature(tf.int64),
        "s": tf.io.FixedLenFeature([], tf.string, default_value="?"),
    }))
    np.testing.assert_array_equal(out["a"], [[1, 2], [4, 5]])
    assert out["a"].dtype == np.float32
    np.testing.assert_array_equal(out["b"].indices, [[0, 0], [1, 0], [1, 1]])
    np.testing.assert_array_equal(out["b"].values, [3, 6, 7])
    np.testing.assert_array_equal(out["b"].dense_shape, [2, 2])
    assert list(out["s"]) == [b"x", b"?"]


def test_parse_example_static_shapes():
    p = tf.placeholder(tf.string, [5])
    out = tf.io.parse_example(p, {"a": tf.io.FixedLenFeature([2, 3], tf.float32),
                                  "b": tf.io.VarLenFeature(tf.int64)})
    assert out["a"].shape.as_list() == [5, 2, 3]
    assert out["b"].indices.shape.as_list() == [None, 2]


def test_fixed_len_sequence_feature_pads_with_default():
    records = [example(s=[1, 2, 3]), example(), example(s=[4])]
    out = run(tf.io.parse_example(records, {
        "s": tf.io.FixedLenSequenceFeature([], tf.int64, allow_missing=True, default_value=-1)}))
    np.testing.assert_array_equal(out["s"], [[1, 2, 3], [-1, -1, -1], [4, -1, -1]])


def test_parse_single_example():
    out = run(tf.io.parse_single_example(example(a=[1.0, 2.0], b=[5, 6]), {
        "a": tf.io.FixedLenFeature([2], tf.float32),
        "b": tf.io.VarLenFeature(tf.int64),
        "z": tf.io.FixedLenFeature([], tf.int64, default_value=9),
        "m": tf.io.FixedLenFeature([2, 2], tf.int64, default_value=[[1, 2], [3, 4]]),
    }))
    np.testing.assert_array_equal(out["a"], [1, 2])
    np.testing.assert_array_equal(out["b"].indices, [[0], [1]])
    np.testing.assert_array_equal(out["b"].dense_shape, [2])
    assert out["z"] == 9
    np.testing.assert_array_equal(out["m"], [[1, 2], [3, 4]])


@pytest.mark.parametrize("spec, message", [
    ({"q": tf.io.FixedLenFeature([2], tf.int64)},
     "Feature: q \\(data type: int64\\) is required but could not be found"),
    ({"a": tf.io.FixedLenFeature([2], tf.int64)},
     "Key: a.  Data types don't match. Data type: float but expected type: int64"),
    ({"a": tf.io.FixedLenFeature([3], tf.float32)}, "Key: a, Index: 0.  Number of float values"),
])
def test_spec_mismatch_names_the_key(spec, message):
    parsed = tf.io.parse_single_example(example(a=[1.0, 2.0]), spec)
    with pytest.raises(errors.InvalidArgumentError, match=message):
        run(parsed)


def test_example_names_in_errors_and_bad_protos():
    parsed = tf.io.parse_example([example()], {"k": tf.io.FixedLenFeature([], tf.float32)},
                                 example_names=["ex0"])
    with pytest.raises(errors.InvalidArgumentError, match="Name: ex0, Feature: k"):
        run(parsed)
    with pytest.raises(errors.InvalidArgumentError, match="Could not parse example input"):
        run(tf.io.parse_example([b"\xff\xff"], {"k": tf.io.VarLenFeature(tf.float32)}))


def test_invalid_specs_at_graph_build():
    with pytest.raises(ValueError, match="Missing"):
        tf.io.parse_example(["x"], {})
    with pytest.raises(ValueError, match="allow_missing"):
        tf.io.parse_example(["x"], {"a": tf.io.FixedLenSequenceFeature([], tf.int64)})
    with pytest.raises(ValueError, match="Unsupported"):
        tf.io.parse_example(["x"], {"a": tf.io.FixedLenFeature([], tf.int32)})


def test_parse_single_sequence_example():
    seq = example_pb2.SequenceExample()
    seq.context.feature["len"].int64_list.value.append(2)
    steps = seq.feature_lists.feature_list["tok"].feature
    steps.add().int64_list.value.extend([1, 2])
    steps.add().int64_list.value.extend([3, 4])
    var = seq.feature_lists.feature_list["v"].feature
    var.add().float_list.value.extend([0.5])
    var.add().float_list.value.extend([1.5, 2.5])
    ctx, seqs = tf.io.parse_single_sequence_example(
        seq.SerializeToString(),
        context_features={"len": tf.io.FixedLenFeature([], tf.int64)},
        sequence_features={"tok": tf.io.FixedLenSequenceFeature([2], tf.int64),
                           "v": tf.io.VarLenFeature(tf.float32),
                           "e": tf.io.FixedLenSequenceFeature([], tf.int64, allow_missing=True)})
    c, s = run((ctx, seqs))
    assert c["len"] == 2
    np.testing.assert_array_equal(s["tok"], [[1, 2], [3, 4]])
    np.testing.assert_array_equal(s["v"].indices, [[0, 0], [1, 0], [1, 1]])
    np.testing.assert_array_equal(s["v"].values, [0.5, 1.5, 2.5])
    np.testing.assert_array_equal(s["v"].dense_shape, [2, 2])
    assert s["e"].shape == (0,)


def test_decode_raw():
    out = run(tf.io.decode_raw(tf.constant([b"\x01\x00\x02\x00", b"\xff\xff\x00\x01"]), tf.int16))
    np.testing.assert_array_equal(out, [[1, 2], [-1, 256]])
    big = run(tf.io.decode_raw(tf.constant([b"\x00\x01"]), tf.uint16, little_endian=False))
    np.testing.assert_array_equal(big, [[1]])
    assert run(tf.io.decode_raw(tf.constant(b"abc"), tf.uint8)).tolist() == [97, 98, 99]
    with pytest.raises(errors.InvalidArgumentError, match="same size"):
        run(tf.io.decode_raw(tf.constant([b"ab", b"abcd"]), tf.uint8))


def test_decode_csv():
    a, b, c = run(tf.io.decode_csv(["1,2.5,\"a,b\"", ",3,", "4,1e3,\"x\"\"y\""],
                                   [[0], [0.0], ["d"]]))
    np.testing.assert_array_equal(a, [1, 0, 4])
    np.testing.assert_array_equal(b, [2.5, 3.0, 1000.0])
    assert list(c) == [b"a,b", b"d", b'x"y']
    sel = run(tf.io.decode_csv(["1|2|3"], [[0], [0]], field_delim="|", select_cols=[0, 2]))
    assert [list(x) for x in sel] == [[1], [3]]
    na = run(tf.io.decode_csv(["NA,2"], [[7], [0]], na_value="NA"))
    assert [list(x) for x in na] == [[7], [2]]


@pytest.mark.parametrize("record, defaults, message", [
    ("1,2", [[0]], "Expect 1 fields but have 2 in record 0"),
    (",2", [None, [0]], "Field 0 is required but missing in record 0"),
    ("x,2", [[0], [0]], "Field 0 in record 0 is not a valid int32: x"),
])
def test_decode_csv_errors(record, defaults, message):
    with pytest.raises(errors.InvalidArgumentError, match=message):
        defaults = [d if d is not None else tf.constant([], tf.int32) for d in defaults]
        run(tf.io.decode_csv([record], defaults))


def test_string_codecs_and_files(tmp_path):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    back = run(tf.io.parse_tensor(tf.io.serialize_tensor(x), tf.float32))
    np.testing.assert_array_equal(back, x)
    enc = tf.io.encode_base64(tf.constant([b"\xfb\xff", b"hi"]))
    assert run(enc).tolist() == [b"-_8", b"aGk"]
    assert run(tf.io.decode_base64(enc)).tolist() == [b"\xfb\xff", b"hi"]
    path = str(tmp_path / "f.txt")
    run(tf.io.write_file(path, "contents"))
    assert run(tf.io.read_file(path)) == b"contents"
    assert run(tf.io.matching_files(str(tmp_path / "*.txt"))).tolist() == [path.encode()]
    import zlib
    assert run(tf.io.decode_compressed([zlib.compress(b"zz")], "ZLIB")).tolist() == [b"zz"]
    with pytest.raises(errors.NotFoundError):
        run(tf.io.read_file(str(tmp_path / "missing")))


def _sequence(length, ctx_value):
    seq = example_pb2.SequenceExample()
    seq.context.feature["c"].int64_list.value.append(ctx_value)
    for t in range(length):
        seq.feature_lists.feature_list["tok"].feature.add().int64_list.value.extend([t, -t])
        seq.feature_lists.feature_list["w"].feature.add().bytes_list.value.extend(
            [b"w"] * (t + 1))
    return seq.SerializeToString()


def test_parse_sequence_example_batch():
    ctx, seqs, lengths = run(tf.io.parse_sequence_example(
        [_sequence(2, 7), _sequence(3, 8)],
        context_features={"c": tf.io.FixedLenFeature([], tf.int64)},
        sequence_features={"tok": tf.io.FixedLenSequenceFeature([2], tf.int64),
                           "w": tf.io.VarLenFeature(tf.string)}))
    assert ctx["c"].tolist() == [7, 8]
    assert seqs["tok"].tolist() == [[[0, 0], [1, -1], [0, 0]], [[0, 0], [1, -1], [2, -2]]]
    assert lengths["tok"].tolist() == [2, 3]
    assert seqs["w"].dense_shape.tolist() == [2, 3, 3]
    assert seqs["w"].indices[:3].tolist() == [[0, 0, 0], [0, 1, 0], [0, 1, 1]]
    assert len(seqs["w"].values) == 3 + 6


def test_json_example_and_png(tmp_path):
    js = tf.io.decode_json_example(['{"features": {"feature": {"a": {"floatList": '
                                    '{"value": [1.5]}}}}}'])
    parsed = tf.io.parse_example(js, {"a": tf.io.FixedLenFeature([], tf.float32)})
    assert run(parsed)["a"].tolist() == [1.5]
    with pytest.raises(errors.InvalidArgumentError, match="JSON"):
        run(tf.io.decode_json_example(["{bad"]))
    image = (np.arange(60) * 4 % 256).astype(np.uint8).reshape(4, 5, 3)
    png = tf.io.encode_png(image)
    back, gray, four = run([tf.io.decode_png(png), tf.io.decode_png(png, channels=1),
                            tf.io.decode_image(png, channels=4)])
    np.testing.assert_array_equal(back, image)
    assert gray.shape == (4, 5, 1) and four.shape == (4, 5, 4) and (four[..., 3] == 255).all()
    with pytest.raises(errors.UnimplementedError):
        run(tf.io.decode_image(b"\xff\xd8\xff\xe0 not really a jpeg"))


def test_match_filenames_once(tmp_path):
    for n in ("b.txt", "a.txt", "c.dat"):
        (tmp_path / n).write_text("x")
    files = tf.io.match_filenames_once(str(tmp_path / "*.txt"))
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        assert sess.run(files).tolist() == [str(tmp_path / n).encode() for n in ("a.txt", "b.txt")]


def test_var_len_features_are_sparse_tensors_that_sparse_ops_accept():
    # Reference values from TensorFlow 2.21 (tf.compat.v1, graph mode) on the same records.
    records = [example(b=[3], w=[b"x"]), example(w=[b"y", b"z"]), example(b=[6, 7, 8])]
    parsed = tf.io.parse_example(records, {"b": tf.io.VarLenFeature(tf.int64),
                                           "w": tf.io.VarLenFeature(tf.string)})
    b = parsed["b"]
    assert isinstance(b, tf.SparseTensor)
    assert b.indices.dtype == tf.int64 and b.dense_shape.dtype == tf.int64
    assert b.indices.shape.as_list() == [None, 2]
    single = tf.io.parse_single_example(example(b=[4, 5]), {"b": tf.io.VarLenFeature(tf.int64)})
    assert isinstance(single["b"], tf.SparseTensor)
    assert single["b"].indices.shape.as_list() == [None, 1]
    out = run({
        "dense": tf.sparse.to_dense(b, default_value=-1),
        "dense2": tf.sparse_tensor_to_dense(b),
        "rsum": tf.sparse.reduce_sum(b, axis=1),
        "wdense": tf.sparse.to_dense(parsed["w"], default_value=""),
        "ind": tf.sparse.to_indicator(b, 10),
        "emb": tf.nn.embedding_lookup_sparse(
            tf.constant(np.arange(20.0).reshape(10, 2)), b, None, combiner="sum"),
        "single": tf.sparse.to_dense(single["b"]),
        "value": b,
    })
    assert out["dense"].tolist() == [[3, -1, -1], [-1, -1, -1], [6, 7, 8]]
    assert out["dense2"].tolist() == [[3, 0, 0], [0, 0, 0], [6, 7, 8]]
    assert out["rsum"].tolist() == [3, 0, 21]
    assert out["wdense"].tolist() == [[b"x", b""], [b"y", b"z"], [b"", b""]]
    assert np.flatnonzero(out["ind"][2]).tolist() == [6, 7, 8] and not out["ind"][1].any()
    assert out["emb"].tolist() == [[6.0, 7.0], [0.0, 0.0], [42.0, 45.0]]
    assert out["single"].tolist() == [4, 5]
    assert isinstance(out["value"], tf.SparseTensorValue)
    assert out["value"].indices.tolist() == [[0, 0], [2, 0], [2, 1], [2, 2]]


def test_dataset_map_carries_var_len_features_as_sparse_tensors():
    records = [example(b=[1, 2]), example(b=[5])]
    ds = tf.data.Dataset.from_tensor_slices(records).map(
        lambda s: tf.io.parse_single_example(s, {"b": tf.io.VarLenFeature(tf.int64)}))
    ds = ds.map(lambda d: {"b": d["b"], "dense": tf.sparse.to_dense(d["b"])})
    element = tf.data.make_one_shot_iterator(ds).get_next()
    assert isinstance(element["b"], tf.SparseTensor)
    with tf.Session() as sess:
        first, second = sess.run(element), sess.run(element)
    assert first["b"].indices.tolist() == [[0], [1]] and first["b"].values.tolist() == [1, 2]
    assert first["dense"].tolist() == [1, 2]
    assert second["b"].dense_shape.tolist() == [1] and second["dense"].tolist() == [5]
