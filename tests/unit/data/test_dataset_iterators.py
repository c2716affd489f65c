"""tf.data iterators and file datasets: cases ported from TensorFlow's iterator_test,
reader_dataset_ops_test (TextLine, TFRecord, FixedLengthRecord)."""

import gzip

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import errors


@pytest.fixture(autouse=True)
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


def drain(sess, nxt):
    out = []
    while True:
        try:
            out.append(sess.run(nxt))
        except errors.OutOfRangeError:
            return out


def test_reinitializable_iterator_from_structure():
    train = tf.data.Dataset.range(4)
    val = tf.data.Dataset.range(10, 12)
    it = tf.data.Iterator.from_structure(train.output_types, train.output_shapes)
    nxt = it.get_next()
    init_train, init_val = it.make_initializer(train), it.make_initializer(val)
    with tf.Session() as sess:
        with pytest.raises(errors.FailedPreconditionError, match="not been initialized"):
            sess.run(nxt)
        sess.run(init_train)
        assert sess.run(nxt) == 0
        sess.run(init_val)
        assert drain(sess, nxt) == [10, 11]
        sess.run(init_train)
        assert drain(sess, nxt) == [0, 1, 2, 3]
    with pytest.raises(TypeError, match="Expected output types"):
        it.make_initializer(tf.data.Dataset.from_tensors(1.0))
    with pytest.raises(ValueError, match="does not have an initializer"):
        it.initializer  # noqa: B018


def test_initializable_iterator_with_placeholder():
    limit = tf.placeholder(tf.int64, [])
    it = tf.data.Dataset.range(limit).make_initializable_iterator()
    nxt = it.get_next()
    with tf.Session() as sess:
        sess.run(it.initializer, {limit: 3})
        assert drain(sess, nxt) == [0, 1, 2]
        sess.run(it.initializer, {limit: 1})
        assert drain(sess, nxt) == [0]
    with pytest.raises(ValueError, match="placeholder"):
        tf.data.Dataset.range(limit).make_one_shot_iterator()


def test_reinitialize_slices_iterator_mid_epoch_and_after_the_end():
    # A from_tensor_slices dataset iterates with a plain iterator (no close()).
    x = np.array([1.5, 2.5, 3.5], np.float32)
    y = np.array([10, 20, 30], np.int32)
    it = tf.data.Dataset.from_tensor_slices((x, y)).make_initializable_iterator()
    nxt = it.get_next()
    with tf.Session() as sess:
        sess.run(it.initializer)
        assert sess.run(nxt) == (1.5, 10)
        sess.run(it.initializer)
        assert drain(sess, nxt) == [(1.5, 10), (2.5, 20), (3.5, 30)]
        sess.run(it.initializer)
        assert drain(sess, nxt) == [(1.5, 10), (2.5, 20), (3.5, 30)]


def test_feedable_iterator_string_handles():
    a = tf.data.make_one_shot_iterator(tf.data.Dataset.range(3))
    b = tf.data.make_one_shot_iterator(tf.data.Dataset.range(100, 103))
    handle = tf.placeholder(tf.string, [])
    it = tf.data.Iterator.from_string_handle(handle, tf.data.get_output_types(a),
                                             tf.data.get_output_shapes(a))
    nxt = it.get_next()
    assert tf.data.get_output_classes(it) is tf.Tensor
    with tf.Session() as sess:
        ha, hb = sess.run([a.string_handle(), b.string_handle()])
        assert sess.run(nxt, {handle: ha}) == 0
        assert sess.run(nxt, {handle: hb}) == 100
        assert sess.run(nxt, {handle: ha}) == 1
        with pytest.raises(errors.InvalidArgumentError):
            sess.run(nxt, {handle: b"junk"})


def test_iterators_are_per_session():
    nxt = tf.data.Dataset.range(3).make_one_shot_iterator().get_next()
    with tf.Session() as s1, tf.Session() as s2:
        assert s1.run(nxt) == 0 and s1.run(nxt) == 1
        assert s2.run(nxt) == 0


def test_get_next_static_shapes_and_structure():
    ds = tf.data.Dataset.from_tensor_slices({"x": np.zeros([5, 3], np.float32),
                                             "y": np.arange(5)}).batch(2)
    nxt = ds.make_one_shot_iterator().get_next()
    assert nxt["x"].shape.as_list() == [None, 3]
    assert nxt["y"].dtype == tf.int64
    assert nxt["x"].op.type == "IteratorGetNext"


def test_text_line_dataset(tmp_path):
    (tmp_path / "a.txt").write_bytes(b"one\ntwo\r\nthree")
    with gzip.open(tmp_path / "b.txt.gz", "wb") as f:
        f.write(b"four\nfive\n")
    ds = tf.data.TextLineDataset([str(tmp_path / "a.txt")]).concatenate(
        tf.data.TextLineDataset(str(tmp_path / "b.txt.gz"), compression_type="GZIP"))
    nxt = ds.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        assert drain(sess, nxt) == [b"one", b"two", b"three", b"four", b"five"]


def test_tf_record_dataset_and_corruption(tmp_path):
    paths = []
    for i in range(2):
        paths.append(str(tmp_path / f"r{i}.tfr"))
        with tf.io.TFRecordWriter(paths[-1], "ZLIB") as w:
            for j in range(3):
                w.write(f"{i}:{j}".encode())
    ds = tf.data.TFRecordDataset(paths, compression_type="ZLIB")
    with tf.Session() as sess:
        assert drain(sess, ds.make_one_shot_iterator().get_next()) == [
            b"0:0", b"0:1", b"0:2", b"1:0", b"1:1", b"1:2"]
    bad = tmp_path / "bad.tfr"
    with tf.io.TFRecordWriter(str(bad)) as w:
        w.write(b"abc")
    data = bytearray(bad.read_bytes())
    data[13] ^= 1
    bad.write_bytes(bytes(data))
    nxt = tf.data.TFRecordDataset(str(bad)).make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        with pytest.raises(errors.DataLossError, match="offset 0 in .*bad.tfr"):
            sess.run(nxt)


def test_fixed_length_record_dataset(tmp_path):
    path = tmp_path / "f.bin"
    path.write_bytes(b"HH" + b"aaabbbccc" + b"F")
    ds = tf.data.FixedLengthRecordDataset(str(path), 3, header_bytes=2, footer_bytes=1)
    with tf.Session() as sess:
        assert drain(sess, ds.make_one_shot_iterator().get_next()) == [b"aaa", b"bbb", b"ccc"]
    short = tf.data.FixedLengthRecordDataset(str(path), 4, header_bytes=2, footer_bytes=1)
    with tf.Session() as sess:
        with pytest.raises(errors.DataLossError, match="not an exact multiple"):
            sess.run(short.make_one_shot_iterator().get_next())


def test_missing_file(tmp_path):
    nxt = tf.data.TFRecordDataset(str(tmp_path / "nope")).make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        with pytest.raises(errors.NotFoundError):
            sess.run(nxt)


def test_parse_records_in_a_pipeline(tmp_path):
    path = str(tmp_path / "ex.tfr")
    with tf.io.TFRecordWriter(path) as w:
        for i in range(5):
            ex = tf.train.Example(features=tf.train.Features(feature={
                "v": tf.train.Feature(float_list=tf.train.FloatList(value=[i, -i]))}))
            w.write(ex.SerializeToString())
    ds = tf.data.TFRecordDataset(path).map(
        lambda r: tf.io.parse_single_example(r, {"v": tf.io.FixedLenFeature([2], tf.float32)})
    ).batch(5)
    with tf.Session() as sess:
        out = sess.run(ds.make_one_shot_iterator().get_next())
    np.testing.assert_array_equal(out["v"][:, 0], [0, 1, 2, 3, 4])
    np.testing.assert_array_equal(out["v"][:, 1], [0, -1, -2, -3, -4])


def test_captured_variable_monitored_session_and_meta_graph_roundtrip():
    v = tf.Variable(10, dtype=tf.int64)
    it = tf.data.Dataset.range(5).map(lambda x: x + v).batch(2).make_initializable_iterator()
    nxt = it.get_next()
    step = tf.assign_add(tf.train.get_or_create_global_step(), 1)
    scaffold = tf.train.Scaffold(
        local_init_op=tf.group(tf.local_variables_initializer(), it.initializer))
    out = []
    with tf.train.MonitoredTrainingSession(scaffold=scaffold) as sess:
        while not sess.should_stop():  # OutOfRangeError ends the loop
            out.append(sess.run([nxt, step])[0].tolist())
    assert out == [[10, 11], [12, 13], [14]]
    meta = tf.train.export_meta_graph()
    g2 = tf.Graph()
    with g2.as_default():
        tf.train.import_meta_graph(meta)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(g2.get_operation_by_name(it.initializer.name))
            assert sess.run(g2.get_tensor_by_name(nxt.name)).tolist() == [10, 11]


def test_list_files_interleave_tf_record_datasets(tmp_path):
    for i in range(3):
        with tf.io.TFRecordWriter(str(tmp_path / f"part-{i}.tfr")) as w:
            for j in range(2):
                w.write(f"{i}{j}".encode())
    files = tf.data.Dataset.list_files(str(tmp_path / "part-*.tfr"), shuffle=False)
    ds = files.interleave(tf.data.TFRecordDataset, cycle_length=3, block_length=1)
    with tf.Session() as sess:
        got = drain(sess, ds.make_one_shot_iterator().get_next())
    assert got == [b"00", b"10", b"20", b"01", b"11", b"21"]
    shuffled = tf.data.Dataset.list_files(str(tmp_path / "*.tfr"), seed=4)
    with tf.Session() as sess:
        names = drain(sess, shuffled.make_one_shot_iterator().get_next())
    assert sorted(names) == sorted(str(p).encode() for p in tmp_path.glob("*.tfr"))
