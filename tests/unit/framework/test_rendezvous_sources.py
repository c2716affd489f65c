"""`StepRendezvous` receive sources: routed sends leave through their source, and a waiting
thread polls the sources that still owe the keys it waits for."""

from __future__ import annotations

import pytest

from tensorweave import errors
from tensorweave.framework.rendezvous import StepRendezvous


class _FakeSource:
    """Delivers `incoming` (key -> value) one per `poll`; records forwards and flushes."""

    def __init__(self, rdv: StepRendezvous, incoming: dict):
        self.rdv = rdv
        self.incoming = dict(incoming)
        self.forwarded: list = []
        self.flushes = 0

    def forward(self, key, value):
        self.forwarded.append((key, value))

    def flush(self):
        self.flushes += 1

    def wants(self, keys):
        return any(k in self.incoming for k in keys)

    def poll(self):
        key = next(iter(self.incoming))
        self.rdv.send(key, self.incoming.pop(key))


def _recv(rdv, keys):
    got = []
    rdv.recv_many_async(keys, lambda values, err: got.append((values, err)))
    return got


def test_routed_sends_leave_through_their_source():
    rdv = StepRendezvous(1)
    source = _FakeSource(rdv, {})
    rdv.route(["out"], source)
    rdv.send("out", 1.0)
    rdv.send("here", 2.0)
    assert source.forwarded == [("out", 1.0)]
    assert _recv(rdv, ["here"]) == [([2.0], None)]
    rdv.unroute(["out"])
    rdv.send("out", 3.0)
    assert _recv(rdv, ["out"]) == [([3.0], None)]


def test_poll_reads_only_sources_that_owe_the_keys():
    rdv = StepRendezvous(1)
    assert not rdv.polled and not rdv.poll(["a"])
    source = _FakeSource(rdv, {"a": 1.0, "b": 2.0})
    rdv.add_polled(source)
    assert rdv.polled
    assert not rdv.poll(["elsewhere"])  # nobody owes it: wait on the queue instead
    rdv.flush_polled()
    assert source.flushes == 1
    while rdv.poll(["a", "b"]):
        pass
    assert _recv(rdv, ["a", "b"]) == [([1.0, 2.0], None)]
    rdv.remove_polled(source)
    assert not rdv.polled


def test_a_routed_send_after_abort_raises_the_abort_error():
    rdv = StepRendezvous(1)
    source = _FakeSource(rdv, {})
    rdv.route(["out"], source)
    rdv.abort(errors.AbortedError(None, None, "gone"))
    with pytest.raises(errors.AbortedError, match="gone"):
        rdv.send("out", 1.0)
    assert source.forwarded == []
