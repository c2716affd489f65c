"""The eventfd a thread uses to wait for cancellation in a streamed step is closed when
the thread ends (a long-lived ps serves each worker's connection on its own thread: one
leaked fd per worker session before)."""

import os
import threading

from tensorweave.distributed.process_runtime import ProcessRuntime
from tensorweave.distributed.transport import step_stream
from tensorweave.framework.cancellation import CancellationManager


def _eventfds() -> int:
    count = 0
    for name in os.listdir("/proc/self/fd"):
        try:
            count += "eventfd" in os.readlink(f"/proc/self/fd/{name}")
        except OSError:
            pass
    return count


EVENTFDS = step_stream.ThreadEventFds()  # NOTE: a runtime's, long-lived


def _pump_once() -> None:
    for _ in range(3):  # NOTE: reused within one thread
        waker = step_stream._Waker(CancellationManager(), EVENTFDS)
        waker.fire()
        waker.close()


def test_finished_threads_leave_no_eventfd():
    before = _eventfds()
    for _ in range(20):
        t = threading.Thread(target=_pump_once)
        t.start()
        t.join()
    assert _eventfds() - before <= 1  # NOTE: at most one still being collected


def test_a_thread_reuses_its_eventfd():
    fds = []

    def run() -> None:
        for _ in range(2):
            waker = step_stream._Waker(CancellationManager(), EVENTFDS)
            fds.append(waker.fd)
            waker.close()

    t = threading.Thread(target=run)
    t.start()
    t.join()
    assert fds[0] == fds[1]


def test_each_runtime_has_its_own_eventfds():
    a, b = ProcessRuntime(), ProcessRuntime()
    assert a.eventfds is not b.eventfds
    wa = step_stream._Waker(CancellationManager(), a.eventfds)
    wb = step_stream._Waker(CancellationManager(), b.eventfds)
    try:
        assert wa.fd != wb.fd
    finally:
        wa.close()
        wb.close()
