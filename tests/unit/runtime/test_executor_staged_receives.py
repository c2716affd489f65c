"""Partitions whose only asynchronous kernels are `_Recv`s run straight-line, with every
receive started at once and awaited by round (`_recv_batch`): a later round's value may
depend on what the partition sends first, so those sends must come before that wait."""

from __future__ import annotations

import time

import numpy as np
import pytest

from tensorweave import errors
from tensorweave.framework import dtypes
from tensorweave.framework.rendezvous import StepRendezvous, create_key
from tensorweave.framework.resource_mgr import ResourceMgr
from tensorweave.kernels.context import StepContext
from tensorweave.runtime.executor import Plan
from tensorweave.runtime.node_spec import NodeSpec

HERE = "/job:ps/replica:0/task:0/device:CPU:0"
PEER = "/job:worker/replica:0/task:0/device:CPU:0"


def _transfer_attrs(tensor_name: str, src: str, dst: str) -> dict:
    return {"tensor_name": tensor_name, "send_device": src, "send_device_incarnation": 1,
            "recv_device": dst, "client_terminated": False}


def _recv(name: str, tensor_name: str, batch: int) -> NodeSpec:
    attrs = {**_transfer_attrs(tensor_name, PEER, HERE), "tensor_type": dtypes.float32,
             "_recv_batch": batch}
    return NodeSpec(name, "_Recv", [], HERE, attrs)


def _plan() -> Plan:
    """weights -> (peer) -> grads: `w` is sent first (round 0), `g` comes back (round 1)."""
    const = NodeSpec("w", "Const", [], HERE, {"dtype": dtypes.float32,
                                              "value": np.array(2.0, np.float32)})
    send = NodeSpec("w/_send", "_Send", ["w"], HERE,
                    {**_transfer_attrs("w", HERE, PEER), "T": dtypes.float32})
    x = _recv("x/_recv", "x", 0)
    g = _recv("g/_recv", "g", 1)
    scaled = NodeSpec("scaled", "Mul", ["x/_recv", "w"], HERE, {"T": dtypes.float32})
    out = NodeSpec("out", "AddV2", ["g/_recv", "scaled"], HERE, {"T": dtypes.float32})
    return Plan([const, send, x, g, scaled, out], [], ["out:0"], HERE)


class _Peer(StepRendezvous):
    """Answers `g` only once the plan sent `w` (as a worker computes gradients from the
    weights), and `x` at once."""

    def send(self, key, value):
        super().send(key, value)
        if ";w;" in key:
            super().send(create_key(PEER, 1, HERE, "g"), np.float32(value * 10))


def _context(rendezvous, deadline_s=5.0) -> StepContext:
    ctx = StepContext(ResourceMgr("ps"), 1, rendezvous, deadline=time.monotonic() + deadline_s,
                      device=HERE)
    return ctx


def test_sends_go_out_before_waiting_for_the_next_round():
    plan = _plan()
    assert "_w.wait" in plan._straight.source  # straight-line, not the ready-queue loop
    rdv = _Peer(1)
    rdv.send(create_key(PEER, 1, HERE, "x"), np.float32(3.0))
    (out,) = plan.run(_context(rdv), [])
    assert out == np.float32(2.0 * 10 + 3.0 * 2.0)


def test_missing_value_times_out_naming_the_receive():
    plan = _plan()
    rdv = StepRendezvous(1)  # nobody ever sends x or g
    with pytest.raises(errors.DeadlineExceededError, match="x/_recv"):
        plan.run(_context(rdv, deadline_s=0.2), [])


def test_cancelled_step_ends_the_wait():
    plan = _plan()
    rdv = StepRendezvous(1)
    ctx = _context(rdv, deadline_s=30.0)
    ctx.cancellation.start_cancel(errors.CancelledError(None, None, "closed by the test"))
    with pytest.raises(errors.CancelledError, match="closed by the test"):
        plan.run(ctx, [])
