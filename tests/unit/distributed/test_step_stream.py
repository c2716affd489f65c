"""Step streams (`transport.step_stream`): frames both ways on one connection,
writers that never block on a full socket, pumps that deliver into the step rendezvous,
and every way a wait ends (values, cancellation, deadline, peer gone, peer's error)."""

from __future__ import annotations

import socket
import threading
import time

import numpy as np
import pytest

from tensorweave import errors
from tensorweave.distributed.transport.step_stream import StreamPump
from tensorweave.distributed.transport.stream_conn import (
    KIND_END,
    KIND_RESPONSE,
    KIND_TENSORS,
    StreamConn,
)
from tensorweave.framework.cancellation import CancellationManager
from tensorweave.framework.rendezvous import StepRendezvous

pytestmark = [pytest.mark.timeout(30)]
CALLER, PS = "/job:worker/replica:0/task:0", "/job:ps/replica:0/task:0"


@pytest.fixture
def pair():
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    ends = StreamConn(a, PS), StreamConn(b, CALLER)  # the caller's end, the server's end
    yield ends
    for end in ends:
        end.close()


def _received(rdv: StepRendezvous, keys: list[str]) -> list:
    box: list = []
    rdv.recv_many_async(keys, lambda values, err: box.append((values, err)))
    assert box, f"{keys} not delivered"
    values, err = box[0]
    assert err is None
    return values


def test_full_sockets_never_block_the_writers(pair):
    caller, server = pair
    big = np.arange(4 << 20, dtype=np.float32)  # 16 MiB each way, nobody reading yet
    done = threading.Event()

    def both_write() -> None:
        caller.send_frame(KIND_TENSORS, [memoryview(big).cast("B")])
        server.send_frame(KIND_TENSORS, [memoryview(big[::-1].copy()).cast("B")])
        done.set()

    writer = threading.Thread(target=both_write, daemon=True)
    writer.start()
    assert done.wait(10.0), "a writer blocked on a full socket"
    deadline = time.monotonic() + 10.0
    _, kind, body = server.read_frame(deadline)
    assert kind == KIND_TENSORS
    np.testing.assert_array_equal(np.frombuffer(body, np.float32), big)
    _, _, body = caller.read_frame(deadline)
    np.testing.assert_array_equal(np.frombuffer(body, np.float32), big[::-1])


def test_values_travel_both_ways_and_end_rides_with_the_last(pair):
    caller_conn, server_conn = pair
    caller_rdv, server_rdv = StepRendezvous(1), StepRendezvous(1)
    caller = StreamPump(caller_rdv, CancellationManager(), None, server=False)
    server = StreamPump(server_rdv, CancellationManager(), None, server=True)
    caller.attach(caller_conn, PS, recv_keys=["w"], send_keys=["g1", "g2"])
    server.attach(server_conn, CALLER, recv_keys=["g1", "g2"], send_keys=["w"])

    server_rdv.send("w", np.float32(3.0))  # batched until the server waits...
    server.flush()  # ...which it does first thing before waiting
    assert server.wants(["g1"]) and caller.wants(["w"])
    caller_rdv.send("g1", np.ones(2, np.float32))  # batched: "g2" still to come
    caller.poll()  # flushes nothing yet for the caller, reads "w"
    assert _received(caller_rdv, ["w"]) == [3.0]
    caller_rdv.send("g2", np.zeros(3, np.int64))  # last key: sent with the END
    assert caller_conn.end_sent
    while server.wants(["g1", "g2"]):
        server.poll()
    g1, g2 = _received(server_rdv, ["g1", "g2"])
    np.testing.assert_array_equal(g1, [1, 1])
    assert g2.dtype == np.int64 and g2.shape == (3,)
    caller.close()
    server.close()
    server_conn.send_frame(KIND_RESPONSE, [b"answer"])
    server_conn.drain()  # the END is already there
    assert server_conn.peer_ended
    assert caller_conn.read_until_response(time.monotonic() + 5) == (0, b"answer")


def test_a_partition_ending_early_still_sends_the_end(pair):
    caller_conn, server_conn = pair
    caller = StreamPump(StepRendezvous(1), CancellationManager(), None, server=False)
    caller.attach(caller_conn, PS, recv_keys=[], send_keys=["g"])
    caller.close()  # failed before sending "g"
    status, kind, _ = server_conn.read_frame(time.monotonic() + 5)
    assert kind == KIND_END


def test_end_before_the_values_aborts_the_server_partition(pair):
    caller_conn, server_conn = pair
    server = StreamPump(StepRendezvous(1), CancellationManager(), None, server=True)
    server.attach(server_conn, CALLER, recv_keys=["g"], send_keys=[])
    caller_conn.send_end()
    with pytest.raises(errors.AbortedError, match="ended the step before sending g"):
        server.poll()


def test_the_peers_error_answer_fails_the_callers_wait(pair):
    caller_conn, server_conn = pair
    caller = StreamPump(StepRendezvous(1), CancellationManager(), None, server=False)
    caller.attach(caller_conn, PS, recv_keys=["w"], send_keys=[])
    server_conn.send_frame(KIND_RESPONSE, [b"Out of memory on the ps"],
                           status=errors.RESOURCE_EXHAUSTED)
    with pytest.raises(errors.ResourceExhaustedError, match="Out of memory on the ps"):
        caller.poll()
    assert not caller.wants(["w"])
    assert caller_conn.read_until_response(None)[0] == errors.RESOURCE_EXHAUSTED


def test_cancellation_wakes_a_blocked_read(pair):
    caller_conn, _ = pair
    cancellation = CancellationManager()
    caller = StreamPump(StepRendezvous(1), cancellation, None, server=False)
    caller.attach(caller_conn, PS, recv_keys=["w"], send_keys=[])
    outcome: list = []
    reader = threading.Thread(target=lambda: outcome.append(caller.poll()), daemon=True)
    reader.start()
    cancellation.start_cancel(errors.CancelledError(None, None, "step cancelled"))
    reader.join(10.0)
    assert not reader.is_alive() and outcome == [None]
    caller.close()


def test_deadline_and_a_vanished_peer_end_the_wait(pair):
    caller_conn, server_conn = pair
    caller = StreamPump(StepRendezvous(1), CancellationManager(), time.monotonic() + 0.05,
                        server=False)
    caller.attach(caller_conn, PS, recv_keys=["w"], send_keys=[])
    with pytest.raises(errors.DeadlineExceededError, match=PS):
        caller.poll()
    caller = StreamPump(StepRendezvous(2), CancellationManager(), None, server=False)
    caller.attach(caller_conn, PS, recv_keys=["w"], send_keys=[])
    server_conn.close()
    with pytest.raises(errors.UnavailableError, match=PS):
        caller.poll()
    assert caller_conn.broken


def test_values_sent_at_the_end_ride_with_the_answer(pair):
    caller_conn, server_conn = pair
    server_rdv = StepRendezvous(1)
    server = StreamPump(server_rdv, CancellationManager(), None, server=True)
    server.attach(server_conn, CALLER, recv_keys=[], send_keys=["applied"])
    server_rdv.send("applied", np.float32(1.0))
    server.flush(final=True)
    server.close()
    server_conn.send_frame(KIND_RESPONSE, [b"ok"])  # one write: the values, then the answer
    deadline = time.monotonic() + 5
    assert caller_conn.read_frame(deadline)[1] == KIND_TENSORS
    assert caller_conn.read_frame(deadline)[1:] == (KIND_RESPONSE, bytearray(b"ok"))


def test_background_reader_delivers_and_stops_at_close(pair):
    import concurrent.futures

    caller_conn, server_conn = pair
    rdv = StepRendezvous(1)
    caller = StreamPump(rdv, CancellationManager(), None, server=False)
    caller.attach(caller_conn, PS, recv_keys=["w", "never"], send_keys=[], batch=False)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        caller.start_background(pool)
        server = StreamPump(StepRendezvous(1), CancellationManager(), None, server=True)
        server.attach(server_conn, CALLER, recv_keys=[], send_keys=["w"], batch=False)
        server._rdv.send("w", np.float32(5.0))  # unbatched: written at once
        got: list = []
        arrived = threading.Event()
        rdv.recv_many_async(["w"], lambda values, err: (got.append(values), arrived.set()))
        assert arrived.wait(10.0)
        assert got == [[5.0]]
        started = time.monotonic()
        caller.close()  # "never" never comes: close stops the reader instead of hanging
        assert time.monotonic() - started < 5.0


def test_a_frame_of_many_tensors_goes_out_in_several_writes(pair):
    caller_conn, server_conn = pair
    caller_rdv, server_rdv = StepRendezvous(1), StepRendezvous(1)
    keys = [f"g{i}" for i in range(1500)]  # 3,000 buffers: more than one sendmsg takes
    caller = StreamPump(caller_rdv, CancellationManager(), None, server=False)
    server = StreamPump(server_rdv, CancellationManager(), None, server=True)
    caller.attach(caller_conn, PS, recv_keys=[], send_keys=keys)
    server.attach(server_conn, CALLER, recv_keys=keys, send_keys=[])
    for i, key in enumerate(keys):
        caller_rdv.send(key, np.full(3, i, np.float32))
    while server.wants(keys):
        server.poll()
    values = _received(server_rdv, keys)
    assert [int(v[0]) for v in values] == list(range(1500))
