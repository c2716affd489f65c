"""Coordinator and LooperThread (mirrors TF's coordinator_test.py; no sleeps: threads are
synchronised with events)."""

import sys
import threading
import time

import pytest

from tensorweave import errors
from tensorweave.training.coordinator import Coordinator, LooperThread


def _stop_on_event(coord, event, ex=None):
    event.wait()
    coord.request_stop(ex)


def _raise_in_thread(coord, event, ex, report_exc_info=False):
    try:
        event.wait()
        raise ex
    except RuntimeError:
        if report_exc_info:
            coord.request_stop(sys.exc_info())
        else:
            coord.request_stop(ex)


def _raise_in_stop_on_exception(coord, event, ex):
    with coord.stop_on_exception():
        event.wait()
        raise ex


def test_stop_api():
    coord = Coordinator()
    assert not coord.should_stop()
    assert not coord.wait_for_stop(0.01)
    coord.request_stop()
    assert coord.should_stop()
    assert coord.wait_for_stop(0.01)


def test_stop_async():
    coord = Coordinator()
    event = threading.Event()
    t = threading.Thread(target=_stop_on_event, args=(coord, event))
    t.start()
    assert not coord.should_stop()
    event.set()
    assert coord.wait_for_stop(10.0)
    assert coord.should_stop()
    t.join()


def test_join_returns_when_threads_end():
    coord = Coordinator()
    events = [threading.Event() for _ in range(3)]
    threads = [threading.Thread(target=e.wait) for e in events]
    for t in threads:
        t.start()
    for e in events:
        e.set()
    start = time.monotonic()
    coord.join(threads)
    assert time.monotonic() - start < 5.0
    assert coord.joined


def test_join_with_stop_requested_by_thread():
    coord = Coordinator()
    ev = threading.Event()
    threads = [threading.Thread(target=_stop_on_event, args=(coord, ev))]
    threads.append(threading.Thread(target=coord.wait_for_stop))
    for t in threads:
        t.start()
    ev.set()
    coord.join(threads)
    assert all(not t.is_alive() for t in threads)


def test_join_registered_threads():
    coord = Coordinator()
    ev = threading.Event()
    t1 = threading.Thread(target=_stop_on_event, args=(coord, ev))
    t2 = threading.Thread(target=coord.wait_for_stop)
    coord.register_thread(t1)
    coord.register_thread(t2)
    t1.start()
    t2.start()
    ev.set()
    coord.join()
    assert not t1.is_alive() and not t2.is_alive()


@pytest.mark.parametrize("report_exc_info", [False, True])
def test_join_raises_the_first_exception(report_exc_info):
    coord = Coordinator()
    ev1, ev2 = threading.Event(), threading.Event()
    threads = [
        threading.Thread(
            target=_raise_in_thread, args=(coord, ev1, RuntimeError("First"), report_exc_info)
        ),
        threading.Thread(
            target=_raise_in_thread, args=(coord, ev2, RuntimeError("Too late"), report_exc_info)
        ),
    ]
    for t in threads:
        t.start()
    ev1.set()
    coord.wait_for_stop(10.0)
    ev2.set()
    with pytest.raises(RuntimeError, match="First"):
        coord.join(threads)


def test_join_raises_from_stop_on_exception():
    coord = Coordinator()
    ev = threading.Event()
    t = threading.Thread(
        target=_raise_in_stop_on_exception, args=(coord, ev, RuntimeError("First"))
    )
    t.start()
    ev.set()
    with pytest.raises(RuntimeError, match="First"):
        coord.join([t])


def test_join_ignores_out_of_range():
    coord = Coordinator()
    ev = threading.Event()
    t = threading.Thread(
        target=_raise_in_stop_on_exception,
        args=(coord, ev, errors.OutOfRangeError(None, None, "end of data")),
    )
    t.start()
    ev.set()
    coord.join([t])
    assert coord.should_stop()


def test_join_ignores_my_exception_type():
    coord = Coordinator(clean_stop_exception_types=(ValueError,))
    ev = threading.Event()
    t = threading.Thread(
        target=_raise_in_stop_on_exception, args=(coord, ev, ValueError("Clean stop"))
    )
    t.start()
    ev.set()
    coord.join([t])


def test_request_stop_after_join_raises():
    coord = Coordinator()
    coord.request_stop(RuntimeError("First"))
    with pytest.raises(RuntimeError, match="First"):
        coord.join([])
    with pytest.raises(RuntimeError, match="Second"):
        coord.request_stop(RuntimeError("Second"))
    coord.request_stop()  # no exception: nothing to report


def test_raise_requested_exception_and_clear_stop():
    coord = Coordinator()
    coord.raise_requested_exception()
    coord.request_stop(RuntimeError("Boom"))
    with pytest.raises(RuntimeError, match="Boom"):
        coord.raise_requested_exception()
    coord.clear_stop()
    assert not coord.should_stop()
    assert not coord.joined
    coord.raise_requested_exception()


def test_exception_keeps_traceback():
    coord = Coordinator()
    try:
        raise RuntimeError("with tb")
    except RuntimeError:
        coord.request_stop(sys.exc_info())
    with pytest.raises(RuntimeError) as info:
        coord.join([])
    assert any(f.name == "test_exception_keeps_traceback" for f in info.traceback)


def test_straggler_raises_runtime_error_naming_it():
    coord = Coordinator()
    release = threading.Event()
    t = threading.Thread(target=release.wait, name="stuck-thread")
    t.start()
    coord.request_stop()
    try:
        with pytest.raises(RuntimeError, match="stuck-thread"):
            coord.join([t], stop_grace_period_secs=0.05)
    finally:
        release.set()
        t.join()


def test_straggler_ignored_with_ignore_live_threads():
    coord = Coordinator()
    release = threading.Event()
    t = threading.Thread(target=release.wait, name="stuck-thread")
    t.start()
    coord.request_stop()
    try:
        coord.join([t], stop_grace_period_secs=0.05, ignore_live_threads=True)
    finally:
        release.set()
        t.join()


def test_straggler_exception_wins_over_runtime_error():
    coord = Coordinator()
    release = threading.Event()
    t = threading.Thread(target=release.wait)
    t.start()
    coord.request_stop(ValueError("real cause"))
    try:
        with pytest.raises(ValueError, match="real cause"):
            coord.join([t], stop_grace_period_secs=0.05)
    finally:
        release.set()
        t.join()


def test_looper_thread_with_target_runs_until_stop():
    coord = Coordinator()
    calls = []
    reached = threading.Event()

    def target(x):
        calls.append(x)
        if len(calls) >= 3:
            reached.set()
            coord.request_stop()

    looper = LooperThread.loop(coord, None, target, args=(7,))
    assert looper.daemon
    assert reached.wait(10.0)
    coord.join()
    assert calls[:3] == [7, 7, 7]


def test_looper_thread_timer_and_hooks():
    coord = Coordinator()
    seen = []
    ran = threading.Event()

    class Looper(LooperThread):
        def start_loop(self):
            seen.append("start")

        def run_loop(self):
            seen.append("run")
            ran.set()

        def stop_loop(self):
            seen.append("stop")

    looper = Looper(coord, 0.001)
    looper.start()
    assert ran.wait(10.0)
    coord.request_stop()
    coord.join([looper])
    assert seen[0] == "start" and seen[-1] == "stop" and "run" in seen


def test_looper_thread_exception_is_reported():
    coord = Coordinator()

    def boom():
        raise RuntimeError("looper failed")

    LooperThread.loop(coord, None, boom)
    with pytest.raises(RuntimeError, match="looper failed"):
        coord.join()


def test_looper_thread_argument_errors():
    with pytest.raises(ValueError, match="Coordinator"):
        LooperThread(None, 1.0)
    with pytest.raises(ValueError, match="target"):
        LooperThread(Coordinator(), 1.0, args=(1,))
