"""Shared helpers of the data-flow op tests (`test_data_flow_queues.py`,
`test_data_flow_accumulators.py`): polling observable state and running blocking steps.
"""

import threading
import time

_TICK = threading.Event()  # never set: a bounded pause between polls of observable state


def wait_until(predicate, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        _TICK.wait(0.001)


class Runner:
    """Runs `sess.run(fetch)` in a thread and keeps its result or error."""

    def __init__(self, sess, fetch, **kwargs):
        self.result = self.error = None
        self.thread = threading.Thread(target=self._run, args=(sess, fetch, kwargs))
        self.thread.start()

    def _run(self, sess, fetch, kwargs):
        try:
            self.result = sess.run(fetch, **kwargs)
        except Exception as e:  # noqa: BLE001
            self.error = e

    def join(self, timeout=10.0):
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "the step did not finish"
        return self
