"""`tf.train.Supervisor` and `tf.train.basic_train_loop` (cases ported from TensorFlow's
supervisor_test.py; services are awaited through a recording summary writer or the
checkpoint files, with bounded waits)."""

from __future__ import annotations

import glob
import os

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.summary_ops import scalar_summary
from tensorweave.testing.threads import wait_until


class RecordingWriter(tf.summary.FileWriter):
    """A FileWriter that also keeps what it was given (tests wait on it)."""

    def __init__(self, logdir):
        super().__init__(logdir)
        self.summaries, self.session_logs = [], []

    def add_summary(self, summary, global_step=None):
        super().add_summary(summary, global_step)
        self.summaries.append((summary, global_step))

    def add_session_log(self, session_log, global_step=None):
        super().add_session_log(session_log, global_step)
        self.session_logs.append((session_log.status, global_step))


def _events(logdir):
    paths = sorted(glob.glob(os.path.join(logdir, "events*")))
    return [list(tf.train.summary_iterator(p)) for p in paths]


def _values(event_or_summary):
    """(tag, simple_value) pairs of an Event's summary, a Summary or a serialized one."""
    summary = event_or_summary
    if isinstance(summary, bytes):
        summary = tf.summary.Summary.FromString(summary)
    elif not isinstance(summary, tf.summary.Summary):
        summary = summary.summary
    return [(v.tag, v.simple_value) for v in summary.value]


def test_basics(tmp_path):
    with tf.Graph().as_default():
        my_op = tf.constant(1.0)
        sv = tf.train.Supervisor(logdir=str(tmp_path))
        sess = sv.prepare_or_wait_for_session("")
        for _ in range(10):
            assert sess.run(my_op) == 1.0
        sess.close()
        sv.stop()
        assert sv.is_chief and sv.should_stop()
        assert tf.get_default_graph().finalized
        assert os.path.exists(tmp_path / "graph.pbtxt")


def test_managed_session(tmp_path):
    with tf.Graph().as_default():
        my_op = tf.constant(1.0)
        sv = tf.train.Supervisor(logdir=str(tmp_path))
        with sv.managed_session("") as sess:
            for _ in range(10):
                sess.run(my_op)
        assert sv.should_stop()
        with pytest.raises(RuntimeError, match="closed"):
            sess.run(my_op)


def test_managed_session_user_error(tmp_path):
    with tf.Graph().as_default():
        my_op = tf.constant(1.0)
        sv = tf.train.Supervisor(logdir=str(tmp_path))
        last_step = None
        with pytest.raises(RuntimeError, match="failing here"):
            with sv.managed_session("") as sess:
                for step in range(10):
                    last_step = step
                    if step == 1:
                        raise RuntimeError("failing here")
                    sess.run(my_op)
        assert sv.should_stop() and last_step == 1


def test_managed_session_ignores_out_of_range(tmp_path):
    with tf.Graph().as_default():
        my_op = tf.constant(1.0)
        sv = tf.train.Supervisor(logdir=str(tmp_path))
        last_step = None
        with sv.managed_session("") as sess:
            for step in range(10):
                last_step = step
                if step == 3:
                    raise tf.errors.OutOfRangeError(None, my_op.op, "all done")
                sess.run(my_op)
        assert sv.should_stop() and last_step == 3


def _summ():
    return scalar_summary(["c1", "c2", "c3"], tf.constant([1.0, 2.0, 3.0]))


def test_managed_session_do_not_keep_summary_writer(tmp_path):
    with tf.Graph().as_default():
        summ = _summ()
        sv = tf.train.Supervisor(logdir=str(tmp_path), summary_op=None)
        for _ in range(2):
            with sv.managed_session("", close_summary_writer=True,
                                    start_standard_services=False) as sess:
                sv.summary_computed(sess, sess.run(summ))
    files = _events(str(tmp_path))
    assert len(files) == 2
    for events in files:
        assert events[0].file_version == "brain.Event:2"
        assert events[1].graph_def
        assert _values(events[-2]) == [("c1", 1.0), ("c2", 2.0), ("c3", 3.0)]
        assert events[-1].session_log.status == tf.summary.SessionLog.STOP


def test_managed_session_keep_summary_writer(tmp_path):
    with tf.Graph().as_default():
        summ = _summ()
        sv = tf.train.Supervisor(logdir=str(tmp_path))
        for _ in range(2):
            with sv.managed_session("", close_summary_writer=False,
                                    start_standard_services=False) as sess:
                sv.summary_computed(sess, sess.run(summ))
    sv.summary_writer.close()
    (events,) = _events(str(tmp_path))
    summaries = [e for e in events if e.HasField("summary")]
    assert [_values(e) for e in summaries] == [[("c1", 1.0), ("c2", 2.0), ("c3", 3.0)]] * 2


def _two_queue_pipeline():
    q1 = tf.FIFOQueue(10, tf.int32, shapes=[[]])
    fill = q1.enqueue_many([np.arange(9, dtype=np.int32)])
    close = q1.close()
    q2 = tf.FIFOQueue(4, tf.int32, shapes=[[]])
    tf.train.add_queue_runner(tf.train.QueueRunner(q2, [q2.enqueue(q1.dequeue())]))
    return fill, close, q2.dequeue()


def test_managed_end_of_input_two_queues(tmp_path):
    with tf.Graph().as_default():
        fill, close, rec = _two_queue_pipeline()
        sv = tf.train.Supervisor(logdir=str(tmp_path),
                                 init_fn=lambda s: (s.run(fill), s.run(close)))
        got = []
        with sv.managed_session("") as sess:
            while not sv.should_stop():
                got.append(int(sess.run(rec)))
        assert sorted(got) == list(range(9))


def test_managed_main_error_two_queues(tmp_path):
    with pytest.raises(RuntimeError, match="fail at step 3"):
        with tf.Graph().as_default():
            fill, close, rec = _two_queue_pipeline()
            sv = tf.train.Supervisor(logdir=str(tmp_path),
                                     init_fn=lambda s: (s.run(fill), s.run(close)))
            with sv.managed_session("") as sess:
                for step in range(9):
                    if sv.should_stop():
                        break
                    if step == 3:
                        raise RuntimeError("fail at step 3")
                    sess.run(rec)


def test_session_config(tmp_path):
    with tf.Graph().as_default():
        my_op = tf.constant([1.0])
        sv = tf.train.Supervisor(logdir=str(tmp_path))
        sess = sv.prepare_or_wait_for_session(
            "", config=tf.ConfigProto(allow_soft_placement=True))
        assert sess.run(my_op) == [1.0]
        sess.close()
        sv.stop()


def test_chief_can_write_events(tmp_path):
    with tf.Graph().as_default():
        summ = _summ()
        sv = tf.train.Supervisor(is_chief=True, logdir=str(tmp_path), summary_op=None)
        sess = sv.prepare_or_wait_for_session("")
        sv.summary_computed(sess, sess.run(summ))
        sess.close()
        sv.stop()
    (events,) = _events(str(tmp_path))
    assert events[0].file_version == "brain.Event:2"
    graph = tf.GraphDef()
    graph.ParseFromString(events[1].graph_def)
    assert graph == sess.graph.as_graph_def(add_shapes=True)
    assert events[2].HasField("meta_graph_def")
    assert _values(events[3]) == [("c1", 1.0), ("c2", 2.0), ("c3", 3.0)]
    assert events[4].session_log.status == tf.summary.SessionLog.STOP
    assert len(events) == 5


def test_non_chief_cannot_write_events():
    with tf.Graph().as_default():
        summ = _summ()
        sv = tf.train.Supervisor(is_chief=False)
        sess = sv.prepare_or_wait_for_session("")
        with pytest.raises(RuntimeError, match="requires a summary writer"):
            sv.summary_computed(sess, sess.run(summ))
        with pytest.raises(RuntimeError, match="Only chief supervisor"):
            sv.start_standard_services(sess)
        assert sv.summary_writer is None and sv.save_path is None
        assert sv.save_model_secs is None and sv.save_summaries_secs is None


def test_no_logdir_but_want_summary():
    with tf.Graph().as_default():
        summ = _summ()
        sv = tf.train.Supervisor(logdir="", summary_op=None)
        sess = sv.prepare_or_wait_for_session("")
        with pytest.raises(RuntimeError, match="requires a summary writer"):
            sv.summary_computed(sess, sess.run(summ))
        assert sv.start_standard_services(sess) is None


def test_logdir_but_explicitly_no_summary_writer(tmp_path):
    with tf.Graph().as_default():
        tf.Variable([1.0], name="foo")
        summ = _summ()
        sv = tf.train.Supervisor(logdir=str(tmp_path), summary_writer=None)
        sess = sv.prepare_or_wait_for_session("")
        wait_until(lambda: tf.gfile.Glob(sv.save_path + "*"), timeout=30)
        with pytest.raises(RuntimeError, match="requires a summary writer"):
            sv.summary_computed(sess, sess.run(summ))
        sv.stop()


def test_no_logdir_but_explicit_summary_writer(tmp_path):
    with tf.Graph().as_default():
        summ = _summ()
        sw = tf.summary.FileWriter(str(tmp_path))
        sv = tf.train.Supervisor(logdir="", summary_op=None, summary_writer=sw)
        sess = sv.prepare_or_wait_for_session("")
        sv.summary_computed(sess, sess.run(summ))
        sess.close()
        sv.stop()
    (events,) = _events(str(tmp_path))
    assert [_values(e) for e in events if e.HasField("summary")] == [
        [("c1", 1.0), ("c2", 2.0), ("c3", 3.0)]]
    assert events[-1].session_log.status == tf.summary.SessionLog.STOP


def test_no_logdir_succeeds():
    with tf.Graph().as_default():
        tf.Variable([1.0, 2.0, 3.0])
        sv = tf.train.Supervisor(logdir="", summary_op=None)
        sess = sv.prepare_or_wait_for_session("")
        sess.close()
        sv.stop()


def test_use_session_manager():
    with tf.Graph().as_default():
        tf.Variable([1.0, 2.0, 3.0])
        sm = tf.train.SessionManager()
        sv = tf.train.Supervisor(logdir="", session_manager=sm)
        assert sv.session_manager is sm
        sv.prepare_or_wait_for_session("")


def test_init_op_and_defaults(tmp_path):
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0, 3.0])
        sv = tf.train.Supervisor(logdir=str(tmp_path))
        sess = sv.prepare_or_wait_for_session("")
        np.testing.assert_allclose(sess.run(v), [1.0, 2.0, 3.0])
        assert sv.init_op is tf.get_collection(tf.GraphKeys.INIT_OP)[0]
        assert sv.ready_op is tf.get_collection(tf.GraphKeys.READY_OP)[0]
        assert sv.saver is tf.get_collection(tf.GraphKeys.SAVERS)[0]
        assert sv.ready_for_local_init_op is None and sv.summary_op is None
        assert isinstance(sv.coord, tf.train.Coordinator)
        sv.stop()


def test_init_fn(tmp_path):
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0, 3.0])
        sv = tf.train.Supervisor(logdir=str(tmp_path), init_op=None,
                                 init_fn=lambda sess: sess.run(v.initializer))
        sess = sv.prepare_or_wait_for_session("")
        np.testing.assert_allclose(sess.run(v), [1.0, 2.0, 3.0])
        sv.stop()


def test_init_op_with_feed_dict(tmp_path):
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float32, shape=(3,))
        v = tf.Variable(p, name="v")
        sv = tf.train.Supervisor(logdir=str(tmp_path),
                                 init_op=tf.global_variables_initializer(),
                                 init_feed_dict={p: [1.0, 2.0, 3.0]})
        assert sv.init_feed_dict == {p: [1.0, 2.0, 3.0]}
        sess = sv.prepare_or_wait_for_session("")
        np.testing.assert_allclose(sess.run(v), [1.0, 2.0, 3.0])
        sv.stop()


def test_ready_for_local_init_op(tmp_path):
    server = tf.train.Server.create_local_server()

    def get_session(is_chief):
        g = tf.Graph()
        with g.as_default(), tf.device("/job:local"):
            v = tf.Variable(1, name="var_v")
            vadd = v.assign_add(1)
            w = tf.Variable(v, trainable=False, collections=[tf.GraphKeys.LOCAL_VARIABLES])
            ready_for_local = tf.report_uninitialized_variables(tf.global_variables())
        sv = tf.train.Supervisor(logdir=str(tmp_path), is_chief=is_chief, graph=g,
                                 recovery_wait_secs=0.05, init_op=v.initializer,
                                 ready_for_local_init_op=ready_for_local)
        return sv, sv.prepare_or_wait_for_session(server.target), v, vadd, w

    try:
        sv0, sess0, v0, _, w0 = get_session(True)
        sv1, sess1, _, vadd1, w1 = get_session(False)
        assert sess0.run(w0) == 1
        assert sess1.run(vadd1) == 2
        assert sess1.run(w1) == 1
        assert sess0.run(v0) == 2
        sv0.stop()
        sv1.stop()
    finally:
        server.stop()


def test_local_init_op(tmp_path):
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0, 3.0], trainable=False,
                        collections=[tf.GraphKeys.LOCAL_VARIABLES])
        w = tf.Variable([4, 5, 6], trainable=False, collections=[])
        tf.add_to_collection(tf.GraphKeys.TABLE_INITIALIZERS, w.initializer)
        assert not tf.global_variables()
        sv = tf.train.Supervisor(logdir=str(tmp_path), init_op=None)
        sess = sv.prepare_or_wait_for_session("")
        np.testing.assert_allclose(sess.run(v), [1.0, 2.0, 3.0])
        np.testing.assert_array_equal(sess.run(w), [4, 5, 6])
        sv.stop()


def test_local_init_op_for_non_chief(tmp_path):
    with tf.Graph().as_default():
        with tf.device("/job:localhost"):
            v = tf.Variable([1.0, 2.0, 3.0], trainable=False,
                            collections=[tf.GraphKeys.LOCAL_VARIABLES])
        sv = tf.train.Supervisor(logdir=str(tmp_path), init_op=None, is_chief=False)
        sess = sv.prepare_or_wait_for_session("")
        np.testing.assert_allclose(sess.run(v), [1.0, 2.0, 3.0])
        sv.stop()


def test_init_op_fails(tmp_path):
    server = tf.train.Server.create_local_server()
    try:
        with tf.Graph().as_default():
            v = tf.Variable([1.0, 2.0, 3.0], name="v")
            tf.Variable([4.0, 5.0, 6.0], name="w")
            sv = tf.train.Supervisor(logdir=str(tmp_path), init_op=v.initializer)
            with pytest.raises(RuntimeError, match="Variables not initialized: w"):
                sv.prepare_or_wait_for_session(server.target)
    finally:
        server.stop()


def test_init_op_fails_for_transient_variable(tmp_path):
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0, 3.0], name="v", collections=[tf.GraphKeys.LOCAL_VARIABLES])
        tf.Variable([1.0, 2.0, 3.0], name="w", collections=[tf.GraphKeys.LOCAL_VARIABLES])
        sv = tf.train.Supervisor(logdir=str(tmp_path), local_init_op=v.initializer)
        with pytest.raises(RuntimeError, match="Variables not initialized: w"):
            sv.prepare_or_wait_for_session("")


def test_setup_fail(tmp_path):
    with tf.Graph().as_default():
        tf.Variable([1.0, 2.0, 3.0], name="v")
        with pytest.raises(ValueError, match="must have their device set"):
            tf.train.Supervisor(logdir=str(tmp_path), is_chief=False)
    with tf.Graph().as_default(), tf.device("/job:ps"):
        tf.Variable([1.0, 2.0, 3.0], name="v")
        tf.train.Supervisor(logdir=str(tmp_path), is_chief=False)


def test_unwritable_logdir_names_the_path(tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    logdir = str(blocker / "logs")
    with tf.Graph().as_default():
        tf.Variable(1.0)
        with pytest.raises(tf.errors.OpError, match="a_file/logs"):
            tf.train.Supervisor(logdir=logdir)
        # Only a chief writes: another task never touches logdir.
    with tf.Graph().as_default(), tf.device("/job:ps"):
        tf.Variable(1.0)
        tf.train.Supervisor(logdir=logdir, is_chief=False)


def test_default_global_step(tmp_path):
    with tf.Graph().as_default():
        tf.Variable(287, name="global_step")
        sv = tf.train.Supervisor(logdir=str(tmp_path))
        sess = sv.prepare_or_wait_for_session("")
        assert sess.run(sv.global_step) == 287
        sv.stop()


def test_float_global_step_is_not_used(tmp_path):
    with tf.Graph().as_default():
        tf.Variable(1.5, name="global_step")
        assert tf.train.Supervisor(logdir="").global_step is None


def test_restore_from_meta_graph(tmp_path):
    logdir = str(tmp_path)
    with tf.Graph().as_default():
        tf.Variable(1, name="v0")
        sv = tf.train.Supervisor(logdir=logdir)
        sess = sv.prepare_or_wait_for_session("")
        filename = sv.saver.save(sess, sv.save_path)
        sv.stop()
    with tf.Graph().as_default():
        new_saver = tf.train.import_meta_graph(filename + ".meta")
        sv2 = tf.train.Supervisor(logdir=logdir, saver=new_saver)
        sess = sv2.prepare_or_wait_for_session("")
        assert sess.run("v0:0") == 1
        sv2.saver.save(sess, sv2.save_path)
        sv2.stop()


def test_restores_logdir_on_restart(tmp_path):
    logdir = str(tmp_path)

    def build():
        gs = tf.train.get_or_create_global_step()
        v = tf.Variable(0.0, name="v")
        return gs, v, tf.group(v.assign_add(1.0), gs.assign_add(1))

    with tf.Graph().as_default():
        _, _, step = build()
        sv = tf.train.Supervisor(logdir=logdir, save_model_secs=0)
        with sv.managed_session("") as sess:
            for _ in range(3):
                sess.run(step)
            sv.saver.save(sess, sv.save_path, global_step=sv.global_step)
    with tf.Graph().as_default():
        gs, v, _ = build()
        sv = tf.train.Supervisor(logdir=logdir, save_model_secs=0)
        with sv.managed_session("") as sess:
            assert sess.run([gs, v]) == [3, 3.0]


def test_standard_services_without_global_step(tmp_path):
    logdir = str(tmp_path)
    with tf.Graph().as_default():
        v = tf.Variable([1.0], name="foo")
        tf.summary.scalar("v", v[0])
        writer = RecordingWriter(logdir)
        sv = tf.train.Supervisor(logdir=logdir, summary_writer=writer)
        assert sv.global_step is None
        sess = sv.prepare_or_wait_for_session("")
        save_path = sv.save_path
        wait_until(lambda: tf.gfile.Glob(save_path + ".index") and writer.summaries,
                   timeout=30)
        sv.stop()
    (events,) = _events(logdir)
    assert events[0].file_version == "brain.Event:2"
    summaries = [e for e in events if e.HasField("summary")]
    assert _values(summaries[0]) == [("v", 1.0)]
    assert events[-1].session_log.status == tf.summary.SessionLog.STOP
    with tf.Graph().as_default(), tf.Session() as sess:
        v = tf.Variable([10.1], name="foo")
        tf.train.Saver([v]).restore(sess, save_path)
        assert sess.run(v)[0] == 1.0


def test_standard_services_with_global_step(tmp_path):
    logdir = str(tmp_path)
    with tf.Graph().as_default():
        tf.Variable(123, name="global_step")
        writer = RecordingWriter(logdir)
        sv = tf.train.Supervisor(logdir=logdir, summary_writer=writer)
        sess = sv.prepare_or_wait_for_session("")
        save_path = f"{sv.save_path}-123"
        statuses = lambda: [s for s, _ in writer.session_logs]  # noqa: E731
        wait_until(lambda: writer.summaries
                   and tf.summary.SessionLog.CHECKPOINT in statuses(), timeout=30)
        sv.stop()
        sess.close()
    assert writer.session_logs[0] == (tf.summary.SessionLog.START, 123)
    assert (tf.summary.SessionLog.CHECKPOINT, 123) in writer.session_logs
    summary, step = writer.summaries[0]
    assert step == 123 and _values(summary) == [("global_step/sec", 0.0)]
    (events,) = _events(logdir)
    assert events[-1].session_log.status == tf.summary.SessionLog.STOP
    with tf.Graph().as_default(), tf.Session() as sess:
        v = tf.Variable(-12, name="global_step")
        tf.train.Saver([v]).restore(sess, save_path)
        assert sess.run(v) == 123


def test_no_queue_runners(tmp_path):
    with tf.Graph().as_default(), tf.Session() as sess:
        sv = tf.train.Supervisor(logdir=str(tmp_path))
        assert sv.start_queue_runners(sess) == []
        sv.stop()


@pytest.mark.parametrize("is_chief", [True, False])
def test_prepare_session_after_stop(tmp_path, is_chief):
    with tf.Graph().as_default():
        sv = tf.train.Supervisor(logdir=str(tmp_path), is_chief=is_chief)
        sess = sv.prepare_or_wait_for_session("")
        sv.stop()
        sess.close()
        assert sv.should_stop()
        sess2 = sv.PrepareSession("")
        assert not sv.ShouldStop()
        sv.Stop()
        sess2.close()
        assert sv.should_stop()


def test_loop_request_stop_and_wait(tmp_path):
    with tf.Graph().as_default():
        sv = tf.train.Supervisor(logdir="")
        calls = []
        sv.prepare_or_wait_for_session("")
        looper = sv.loop(None, calls.append, args=(1,))
        wait_until(lambda: len(calls) >= 3)
        sv.request_stop()
        sv.wait_for_stop()
        sv.stop()
        assert not looper.is_alive() and set(calls) == {1}


def test_stop_on_exception_reraises_from_stop():
    with tf.Graph().as_default():
        sv = tf.train.Supervisor(logdir="")
        with sv.stop_on_exception():
            raise ValueError("boom")
        assert sv.should_stop()
        with pytest.raises(ValueError, match="boom"):
            sv.stop()


def test_summary_thread_writes_the_summary_op(tmp_path):
    logdir = str(tmp_path)
    with tf.Graph().as_default():
        gs = tf.train.get_or_create_global_step()
        tf.summary.scalar("two", tf.constant(2.0))
        writer = RecordingWriter(logdir)
        sv = tf.train.Supervisor(logdir=logdir, summary_writer=writer, save_model_secs=0,
                                 global_step=gs)
        with sv.managed_session(""):
            wait_until(lambda: any(_values(s) == [("two", 2.0)] for s, _ in writer.summaries),
                       timeout=30)


def test_basic_train_loop_retries_after_aborted(tmp_path):
    with tf.Graph().as_default():
        tf.Variable(0, name="v")
        sv = tf.train.Supervisor(logdir="")
        calls = []

        def step(sess, bump, factor=1):
            calls.append(bump * factor)
            if len(calls) == 2:
                raise tf.errors.AbortedError(None, None, "restarted")
            if len(calls) == 4:
                sv.request_stop()

        tf.train.basic_train_loop(sv, step, args=(1,), kwargs={"factor": 5})
        assert calls == [5, 5, 5, 5]
