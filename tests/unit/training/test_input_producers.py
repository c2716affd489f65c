"""Queue-based input helpers (mirrors parts of TF's input_test.py)."""

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.kernels import data_flow_kernels  # noqa: F401  (registers the kernels)
from tensorweave.training import input as input_lib
from tensorweave.training.coordinator import Coordinator
from tensorweave.training.queue_runner import start_queue_runners


@pytest.fixture
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


def _run_with_runners(graph, fetches_list):
    coord = Coordinator()
    with tf.Session(graph=graph) as sess:
        threads = start_queue_runners(sess, coord=coord)
        try:
            return [sess.run(f) for f in fetches_list]
        finally:
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)


def test_string_input_producer_cycles_in_order(graph):
    q = input_lib.string_input_producer([b"a", b"b", b"c"], shuffle=False, capacity=8)
    assert q.name == "input_producer"
    assert len(graph.get_collection(tf.GraphKeys.QUEUE_RUNNERS)) == 1
    assert any(op.name.endswith("fraction_of_8_full") for op in graph.get_operations())
    (out,) = _run_with_runners(graph, [q.dequeue_many(7)])
    assert list(out) == [b"a", b"b", b"c", b"a", b"b", b"c", b"a"]


def test_string_input_producer_shuffles_each_epoch(graph):
    q = input_lib.string_input_producer([b"%d" % i for i in range(5)], seed=3)
    (out,) = _run_with_runners(graph, [q.dequeue_many(10)])
    assert sorted(out[:5]) == sorted(out[5:]) == [b"%d" % i for i in range(5)]


def test_string_input_producer_errors(graph):
    with pytest.raises(ValueError, match="non-null"):
        input_lib.string_input_producer([])
    with pytest.raises(ValueError, match="num_epochs must be > 0 not 0."):
        input_lib.string_input_producer([b"a"], num_epochs=0)


def test_limit_epochs_counts_evaluations(graph):
    x = tf.constant(5)
    assert tf.train.limit_epochs(x) is x
    limited = tf.train.limit_epochs(x, 2)
    assert limited.op.name == "limit_epochs"
    assert [v.op.name for v in tf.local_variables()] == ["limit_epochs/epochs"]
    assert tf.local_variables()[0].dtype.base_dtype == tf.int64
    with tf.Session(graph=graph) as sess:
        sess.run(tf.local_variables_initializer())
        assert [sess.run(limited), sess.run(limited)] == [5, 5]
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(limited)


def _drain(graph, fetch):
    """Every value of `fetch` until OutOfRangeError (the producer's queue closed)."""
    coord = Coordinator()
    out = []
    with tf.Session(graph=graph) as sess:
        sess.run(tf.local_variables_initializer())
        threads = start_queue_runners(sess, coord=coord)
        try:
            while True:
                out.append(sess.run(fetch))
        except tf.errors.OutOfRangeError:
            pass
        finally:
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)
    return out


def test_string_input_producer_num_epochs_then_out_of_range(graph):
    # As TensorFlow 2.21's tf.compat.v1.train.string_input_producer: two passes, then the
    # runner closes the queue and the dequeue raises OutOfRangeError.
    q = input_lib.string_input_producer([b"a", b"b", b"c"], num_epochs=2, shuffle=False)
    assert [v.op.name for v in tf.local_variables()] == ["input_producer/limit_epochs/epochs"]
    assert _drain(graph, q.dequeue()) == [b"a", b"b", b"c", b"a", b"b", b"c"]


def test_slice_input_producer_one_shuffled_epoch_in_batches(graph):
    values = np.arange(10, dtype=np.int64)
    (x,) = input_lib.slice_input_producer([values], num_epochs=1, seed=4)
    batch = input_lib.batch([x], batch_size=4, allow_smaller_final_batch=True)
    batch = batch[0] if isinstance(batch, list) else batch
    got = _drain(graph, batch)
    assert [len(b) for b in got] == [4, 4, 2]
    assert sorted(np.concatenate(got).tolist()) == values.tolist()


def test_input_producer_needs_a_defined_element_shape(graph):
    with pytest.raises(ValueError, match="fully defined"):
        input_lib.input_producer(tf.placeholder(tf.float32, [None, None]))


def test_range_and_slice_input_producers(graph):
    q = input_lib.range_input_producer(3, shuffle=False)
    x, y = input_lib.slice_input_producer(
        [tf.constant([1, 2, 3]), tf.constant([10, 20, 30])], shuffle=False
    )
    out_range, first, second = _run_with_runners(graph, [q.dequeue_many(4), [x, y], [x, y]])
    assert list(out_range) == [0, 1, 2, 0]
    assert [int(v) for v in first] == [1, 10] and [int(v) for v in second] == [2, 20]


def test_batch_keeps_structure_and_shapes(graph):
    x, y = input_lib.slice_input_producer(
        [tf.constant(np.arange(6)), tf.constant(np.arange(6) * 10)], shuffle=False
    )
    bx, by = input_lib.batch([x, y], batch_size=4)
    assert bx.shape.as_list() == [4] and bx.op.name == "batch"
    named = input_lib.batch({"a": x}, batch_size=2, name="named")
    assert set(named) == {"a"}
    ((vx, vy),) = _run_with_runners(graph, [[bx, by]])
    np.testing.assert_array_equal(vy, vx * 10)


def test_batch_enqueue_many_and_unknown_shapes(graph):
    rows = tf.constant(np.arange(12, dtype=np.float32).reshape(6, 2))
    b = input_lib.batch([rows], batch_size=3, enqueue_many=True)
    assert isinstance(b, list) and b[0].shape.as_list() == [3, 2]
    with pytest.raises(ValueError, match="fully defined"):
        input_lib.batch(tf.placeholder(tf.float32), batch_size=2)
    with pytest.raises(NotImplementedError):
        input_lib.batch(rows, batch_size=2, dynamic_pad=True)
    (out,) = _run_with_runners(graph, [b[0]])
    assert out.shape == (3, 2)


def test_shuffle_batch(graph):
    x = input_lib.range_input_producer(10, shuffle=False).dequeue()
    b = input_lib.shuffle_batch([x], batch_size=5, capacity=20, min_after_dequeue=5, seed=4)
    assert b[0].shape.as_list() == [5]
    (out,) = _run_with_runners(graph, [b[0]])
    assert out.shape == (5,) and all(0 <= v < 10 for v in out)
