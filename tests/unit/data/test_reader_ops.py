"""Queue-based readers: cases ported from TensorFlow's reader_ops_test.py (keys, values,
read_up_to, OutOfRangeError when the filename queue is exhausted), plus tf.train.batch
and shuffle_batch on top of a reader."""

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import errors


@pytest.fixture(autouse=True)
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


def filename_queue(names):
    q = tf.FIFOQueue(99, [tf.string], shapes=())
    return q, q.enqueue_many([names]), q.close()


def read_all(reader, names, up_to=None):
    q, enq, close = filename_queue(names)
    op = reader.read(q) if up_to is None else reader.read_up_to(q, up_to)
    out = []
    with tf.Session() as sess:
        sess.run(enq)
        sess.run(close)
        while True:
            try:
                out.append(sess.run(op))
            except errors.OutOfRangeError:
                break
        counts = sess.run([reader.num_records_produced(), reader.num_work_units_completed()])
    return out, counts


def test_tf_record_reader_keys_are_offsets(tmp_path):
    path = str(tmp_path / "a.tfr")
    with tf.python_io.TFRecordWriter(path) as w:
        for r in (b"a", b"bb", b"ccc"):
            w.write(r)
    out, counts = read_all(tf.TFRecordReader(), [path])
    assert [v for _, v in out] == [b"a", b"bb", b"ccc"]
    assert [k for k, _ in out] == [f"{path}:{o}".encode() for o in (0, 17, 35)]
    assert counts == [3, 1]


def test_text_line_reader_two_files_skip_header(tmp_path):
    names = []
    for i in range(2):
        p = tmp_path / f"t{i}.csv"
        p.write_bytes(f"header\n{i},a\n{i},b\n".encode())
        names.append(str(p))
    out, _ = read_all(tf.TextLineReader(skip_header_lines=1), names)
    assert [v for _, v in out] == [b"0,a", b"0,b", b"1,a", b"1,b"]
    assert out[0][0] == f"{names[0]}:2".encode()


def test_read_up_to_returns_partial_batches(tmp_path):
    p = tmp_path / "t.txt"
    p.write_bytes(b"1\n2\n3\n4\n5\n")
    out, counts = read_all(tf.TextLineReader(), [str(p)], up_to=2)
    assert [list(v) for _, v in out] == [[b"1", b"2"], [b"3", b"4"], [b"5"]]
    assert counts == [5, 1]


def test_fixed_length_whole_file_identity(tmp_path):
    p = tmp_path / "f.bin"
    p.write_bytes(b"H" + b"abcdef" + b"FF")
    out, _ = read_all(tf.FixedLengthRecordReader(2, header_bytes=1, footer_bytes=2), [str(p)])
    assert [v for _, v in out] == [b"ab", b"cd", b"ef"]
    assert out[2][0] == f"{p}:2".encode()
    hop, _ = read_all(tf.FixedLengthRecordReader(2, header_bytes=1, footer_bytes=2,
                                                 hop_bytes=1), [str(p)])
    assert [v for _, v in hop] == [b"ab", b"bc", b"cd", b"de", b"ef"]
    whole, _ = read_all(tf.WholeFileReader(), [str(p)])
    assert whole == [(str(p).encode(), p.read_bytes())]
    ident, _ = read_all(tf.IdentityReader(), ["w1", "w2"])
    assert ident == [(b"w1", b"w1"), (b"w2", b"w2")]


def test_reset_and_missing_file(tmp_path):
    reader = tf.IdentityReader()
    q, enq, _ = filename_queue(["x", "y"])
    key, _ = reader.read(q)
    with tf.Session() as sess:
        sess.run(enq)
        assert sess.run(key) == b"x"
        sess.run(reader.reset())
        assert sess.run(reader.num_records_produced()) == 0
    bad = tf.WholeFileReader()
    q2, enq2, _ = filename_queue([str(tmp_path / "missing")])
    with tf.Session() as sess:
        sess.run(enq2)
        with pytest.raises(errors.NotFoundError):
            sess.run(bad.read(q2))


def test_string_input_producer_reader_batch(tmp_path):
    names = []
    for i in range(2):
        path = str(tmp_path / f"ex{i}.tfr")
        with tf.io.TFRecordWriter(path) as w:
            for j in range(5):
                ex = tf.train.Example(features=tf.train.Features(feature={
                    "v": tf.train.Feature(int64_list=tf.train.Int64List(value=[10 * i + j]))}))
                w.write(ex.SerializeToString())
        names.append(path)
    queue = tf.train.string_input_producer(names, num_epochs=1, shuffle=False)
    _, record = tf.TFRecordReader().read(queue)
    v = tf.parse_single_example(record, {"v": tf.FixedLenFeature([], tf.int64)})["v"]
    batch = tf.train.batch([v], batch_size=4, allow_smaller_final_batch=True)
    # NOTE: TensorFlow returns a Tensor for a one-element list; main returns a list.
    batch = batch[0] if isinstance(batch, list) else batch
    got = []
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())  # NOTE: num_epochs' counter is local
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        try:
            while True:
                got.extend(sess.run(batch).tolist())
        except errors.OutOfRangeError:
            pass
        coord.request_stop()
        coord.join(threads)
    assert got == [0, 1, 2, 3, 4, 10, 11, 12, 13, 14]


def test_shuffle_batch_over_a_reader():
    queue = tf.train.string_input_producer([f"w{i}" for i in range(10)], shuffle=False)
    key, _ = tf.IdentityReader().read(queue)
    batch = tf.train.shuffle_batch([key], batch_size=5, capacity=30, min_after_dequeue=10,
                                   seed=3)
    batch = batch[0] if isinstance(batch, list) else batch
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        values = np.concatenate([sess.run(batch) for _ in range(4)])
        coord.request_stop()
        sess.run(queue.close(cancel_pending_enqueues=True))
        coord.join(threads)
    assert set(values.tolist()) <= {f"w{i}".encode() for i in range(10)}
    assert values.tolist() != sorted(values.tolist())
