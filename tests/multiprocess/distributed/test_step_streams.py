"""Steps between a worker (this process) and two ps processes on the same host stream their
values on the `RunGraph` calls (`transport.step_stream`): same results as the pull path
(`TensorweaveOptions.disable_step_streams`), failures on either side leave the variables
untouched and the next step works, and traced steps (another plan kind) stream too."""

from __future__ import annotations

import time

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.cluster import pick_unused_port
from tensorweave.testing.processes import ServerProcess, spec_string

pytestmark = [pytest.mark.timeout(120)]


@pytest.fixture(scope="module")
def worker():
    cluster = {"ps": [f"localhost:{pick_unused_port()}" for _ in range(2)],
               "worker": [f"localhost:{pick_unused_port()}"]}
    ps = [ServerProcess(spec_string(cluster), "ps", i) for i in range(2)]
    try:
        for p in ps:
            p.wait_ready()
        server = tf.train.Server(tf.train.ClusterSpec(cluster), job_name="worker",
                                 task_index=0)
        yield server
        server.stop()
    finally:
        for p in ps:
            p.kill()  # by PID


def _config(streams: bool = True) -> tf.ConfigProto:
    config = tf.ConfigProto(operation_timeout_in_ms=30_000)
    config.tensorweave.disable_step_streams = not streams
    return config


def _model(cluster_ps: int = 2):
    """A linear model whose weights are spread over both ps tasks (round robin)."""
    g = tf.Graph()
    with g.as_default(), tf.device(tf.train.replica_device_setter(ps_tasks=cluster_ps)):
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        y = tf.placeholder(tf.float32, [None], name="y")
        w = tf.get_variable("w", initializer=tf.constant([[0.1], [0.2], [0.3]]))
        b = tf.get_variable("b", initializer=tf.constant([0.5]))
        pred = tf.reshape(tf.matmul(x, w) + b, [-1])
        loss = tf.reduce_mean(tf.square(pred - y))
        step = tf.train.get_or_create_global_step()
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
        init = tf.global_variables_initializer()
    return g, x, y, w, b, loss, train, step, init


def _data(n: int = 8):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(n, 3)).astype(np.float32)
    return x, (x @ np.array([1.0, -2.0, 0.5], np.float32) + 0.25).astype(np.float32)


def _train(target: str, streams: bool, steps: int = 20):
    g, x, y, w, b, loss, train, step, init = _model()
    xs, ys = _data()
    with tf.Session(target, graph=g, config=_config(streams)) as sess:
        sess.run(init)
        losses = [sess.run([train, loss], {x: xs, y: ys})[1] for _ in range(steps)]
        return losses, sess.run([w, b, step])


def test_streamed_steps_train_exactly_like_pulled_ones(worker):
    before = worker.runtime.stats.streamed_runs
    pulled_losses, pulled = _train(worker.target, streams=False)
    assert worker.runtime.stats.streamed_runs == before
    streamed_losses, streamed = _train(worker.target, streams=True)
    assert worker.runtime.stats.streamed_runs - before >= 2 * 20  # both ps partitions of every step
    np.testing.assert_array_equal(streamed_losses, pulled_losses)
    for a, b in zip(streamed, pulled):
        np.testing.assert_array_equal(a, b)
    assert streamed[2] == 20
    assert streamed_losses[-1] < streamed_losses[0] / 4


def test_failed_steps_change_nothing_and_the_next_step_works(worker):
    g, x, y, w, b, loss, train, step, init = _model()
    with g.as_default():
        with tf.device("/job:ps/task:1"):  # where b lives; w is on ps 0
            bad_targets = tf.check_numerics(tf.reduce_sum(y), "bad targets")
        with tf.device("/job:worker/task:0"):
            bad_input = tf.check_numerics(tf.reduce_sum(x), "bad input")
        guarded = tf.group(train, bad_targets, bad_input)
    xs, ys = _data()
    with tf.Session(worker.target, graph=g, config=_config()) as sess:
        sess.run(init)
        before = sess.run([w, b, step])
        # The worker's own partition fails (NaN input) while both ps partitions wait for it.
        nan_x = xs.copy()
        nan_x[0, 0] = np.nan
        with pytest.raises(tf.errors.InvalidArgumentError, match="bad input"):
            sess.run(guarded, {x: nan_x, y: ys})
        after = sess.run([w, b, step])
        for a, c in zip(after, before):
            np.testing.assert_array_equal(a, c)
        # A ps partition fails: the other ps's applied update is rolled back.
        with pytest.raises(tf.errors.InvalidArgumentError, match="bad targets"):
            sess.run(guarded, {x: xs, y: np.full_like(ys, np.inf)})
        after = sess.run([w, b, step])
        for a, c in zip(after, before):
            np.testing.assert_array_equal(a, c)
        # The connections are clean: ordinary steps go on.
        for _ in range(3):
            sess.run(train, {x: xs, y: ys})
        assert sess.run(step) == 3


def test_traced_steps_stream_through_a_background_reader(worker):
    g, x, y, w, b, loss, train, step, init = _model()
    xs, ys = _data()
    with tf.Session(worker.target, graph=g, config=_config()) as sess:
        sess.run(init)
        plain = sess.run(loss, {x: xs, y: ys})
        before = worker.runtime.stats.streamed_runs
        options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
        metadata = tf.RunMetadata()
        traced = sess.run([train, loss], {x: xs, y: ys}, options=options,
                          run_metadata=metadata)[1]
        assert worker.runtime.stats.streamed_runs - before == 2
        assert traced == plain
        devices = {d.device for d in metadata.step_stats.dev_stats}
        assert {"/job:ps/replica:0/task:0/device:CPU:0",
                "/job:ps/replica:0/task:1/device:CPU:0",
                "/job:worker/replica:0/task:0/device:CPU:0"} <= devices
        assert sess.run(step) == 1


def test_a_blocked_ps_partition_ends_at_the_step_deadline(worker):
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:ps/task:0"):
            queue = tf.FIFOQueue(4, tf.float32, shapes=[[]], name="q")
            taken = queue.dequeue()  # empty until `put` runs
            put = queue.enqueue(5.0)
        with tf.device("/job:worker/task:0"):
            x = tf.placeholder(tf.float32, [])
            out = taken + x * 2.0  # the worker's partition waits for the ps's value
    with tf.Session(worker.target, graph=g, config=_config()) as sess:
        started = time.monotonic()
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(out, {x: 1.0}, options=tf.RunOptions(timeout_in_ms=500))
        assert time.monotonic() - started < 10.0
        sess.run(put)
        before = worker.runtime.stats.streamed_runs
        assert sess.run(out, {x: 1.0}) == 7.0  # streamed steps go on after the timeout
        assert worker.runtime.stats.streamed_runs == before + 1
