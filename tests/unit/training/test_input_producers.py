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
    with pytest.raises(NotImplementedError, match="num_epochs"):
        input_lib.string_input_producer([b"a"], num_epochs=1)


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
