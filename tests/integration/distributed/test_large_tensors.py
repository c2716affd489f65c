"""Large tensors through a gRPC server (`use_rpc_for_inprocess_master=True`, so the client
talks to the in-process server over gRPC): fetch and push with and without the /dev/shm
fast path, its fallbacks, file cleanup, worker-to-worker `RecvTensors`, and a tensor over
protobuf's 2 GiB limit."""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.distributed.process_runtime import ProcessRuntime
from tensorweave.distributed.transport import grpc_client, grpc_server, shm
from tensorweave.testing.cluster import create_local_cluster

MIB = 1 << 20
# NOTE: files given back for reuse stay RECYCLE_TTL_S: shortened so the leak check is quick.
RUNTIME = ProcessRuntime(outbox_options=shm.OutboxOptions(recycle_ttl_s=0.2))


def _config(shared_memory: bool = True) -> tf.ConfigProto:
    config = tf.ConfigProto()
    config.rpc_options.use_rpc_for_inprocess_master = True
    config.tensorweave.disable_shared_memory = not shared_memory
    return config


def _my_files() -> list[str]:
    prefix = f"tw-{os.getpid()}-"
    if not os.path.isdir(shm.SHM_DIR):
        return []
    return sorted(n for n in os.listdir(shm.SHM_DIR) if n.startswith(prefix))


def _wait_gone(path: str, timeout_s: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.02)
    return not os.path.exists(path)


class Spy:
    """Counts shm writes/reads and gRPC stream transfers."""

    def __init__(self, monkeypatch):
        self.writes = self.reads = self.pulls = self.pushes = 0
        real_write, real_read = shm.write, shm.read
        real_pull = grpc_client.GrpcRemoteWorker.pull_tensor
        real_push = grpc_client.GrpcRemoteWorker.push_tensor

        def write(*a, **k):
            self.writes += 1
            return real_write(*a, **k)

        def read(*a, **k):
            self.reads += 1
            return real_read(*a, **k)

        def pull(worker, *a, **k):
            self.pulls += 1
            return real_pull(worker, *a, **k)

        def push(worker, *a, **k):
            self.pushes += 1
            return real_push(worker, *a, **k)

        monkeypatch.setattr(shm, "write", write)
        monkeypatch.setattr(shm, "read", read)
        monkeypatch.setattr(grpc_client.GrpcRemoteWorker, "pull_tensor", pull)
        monkeypatch.setattr(grpc_client.GrpcRemoteWorker, "push_tensor", push)


@pytest.fixture
def server():
    s = tf.train.Server.create_local_server(config=_config(), runtime=RUNTIME)
    yield s
    s.stop()


@pytest.fixture(autouse=True)
def _no_leaks():
    before = set(_my_files())
    yield
    deadline = time.monotonic() + 10.0
    while set(_my_files()) - before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert set(_my_files()) - before == set(), "shared-memory files were left behind"


def _variable_graph(n: int, name: str):
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(tf.zeros([n]), name=name)
        p = tf.placeholder(tf.float32, [n])
        assign = v.assign(p).op
    return g, v, p, assign


needs_shm = pytest.mark.skipif(not shm.available(), reason="/dev/shm is not writable here")


@pytest.mark.parametrize("mib", [16, 128])
@pytest.mark.parametrize("shared_memory", [pytest.param(True, marks=needs_shm), False],
                         ids=["shm", "grpc"])
def test_fetch_and_push(server, monkeypatch, mib, shared_memory):
    spy = Spy(monkeypatch)
    n = mib * MIB // 4
    g, v, p, assign = _variable_graph(n, f"big_{mib}_{shared_memory}")
    data = np.random.default_rng(mib).random(n, dtype=np.float32)
    with tf.Session(server.target, graph=g, config=_config(shared_memory), runtime=RUNTIME) as sess:
        sess.run(v.initializer)
        sess.run(assign, {p: data})
        out = sess.run(v)
        np.testing.assert_array_equal(out, data)
        assert out.flags.writeable
        out[0] = -1.0  # the user's own copy
        data2 = data[::-1].copy()
        sess.run(assign, {p: data2})
        np.testing.assert_array_equal(sess.run(v), data2)
    if shared_memory:
        assert (spy.writes, spy.reads) == (4, 4)  # 2 pushes + 2 fetches, one file each
        assert spy.pulls == spy.pushes == 0, "no gRPC stream round trips"
    else:
        assert spy.writes == spy.reads == 0
        assert spy.pulls == 2 and spy.pushes == 2


@needs_shm
def test_small_tensors_stay_inline(server, monkeypatch):
    spy = Spy(monkeypatch)
    n = (shm.MIN_BYTES - 4) // 4
    g, v, p, assign = _variable_graph(n, "small")
    data = np.arange(n, dtype=np.float32)
    with tf.Session(server.target, graph=g, config=_config(), runtime=RUNTIME) as sess:
        sess.run(v.initializer)
        sess.run(assign, {p: data})
        np.testing.assert_array_equal(sess.run(v), data)
    assert spy.writes == spy.pulls == spy.pushes == 0


@needs_shm
def test_fetch_falls_back_when_the_file_cannot_be_read(server, monkeypatch):
    """The client cannot read the worker's file (e.g. another /dev/shm namespace): it pulls
    the value over gRPC, which the worker serves from the file it still has."""
    n = 16 * MIB // 4
    g, v, p, assign = _variable_graph(n, "unreadable")
    data = np.random.default_rng(3).random(n, dtype=np.float32)
    real_read = shm.read
    failed = []

    def read_once_fails(msg, *a, **k):
        if not failed:
            failed.append(msg.path)
            raise shm.ShmError("simulated: not visible here")
        return real_read(msg, *a, **k)

    with tf.Session(server.target, graph=g, config=_config(), runtime=RUNTIME) as sess:
        sess.run(v.initializer)
        sess.run(assign, {p: data})
        monkeypatch.setattr(shm, "read", read_once_fails)
        np.testing.assert_array_equal(sess.run(v), data)
        assert failed and not os.path.exists(failed[0])
        # NOTE: the peer is off shared memory for a while: plain streams now.
        spy = Spy(monkeypatch)
        np.testing.assert_array_equal(sess.run(v), data)
        assert spy.writes == 0 and spy.pulls == 1


@needs_shm
def test_push_falls_back_when_the_worker_rejects_files(server, monkeypatch):
    n = 16 * MIB // 4
    g, v, p, assign = _variable_graph(n, "rejected")
    data = np.random.default_rng(4).random(n, dtype=np.float32)
    rejected = []
    real = grpc_server.WorkerServicer._read_shm_sends

    def reject_once(self, msgs, sends):
        if not rejected:
            rejected.append([m.path for m in msgs])
            return False
        return real(self, msgs, sends)

    monkeypatch.setattr(grpc_server.WorkerServicer, "_read_shm_sends", reject_once)
    with tf.Session(server.target, graph=g, config=_config(), runtime=RUNTIME) as sess:
        sess.run(v.initializer)
        spy = Spy(monkeypatch)
        sess.run(assign, {p: data})
        assert rejected and spy.pushes == 1, "resent over gRPC"
        assert not any(os.path.exists(path) for path in rejected[0])
        np.testing.assert_array_equal(sess.run(v), data)


@needs_shm
def test_server_with_shared_memory_disabled(monkeypatch):
    """A server whose default config disables shared memory neither reads feed files nor
    writes fetch files; clients fall back to gRPC."""
    server = tf.train.Server.create_local_server(config=_config(shared_memory=False),
                                                    runtime=RUNTIME)
    try:
        n = 16 * MIB // 4
        g, v, p, assign = _variable_graph(n, "server_off")
        data = np.random.default_rng(5).random(n, dtype=np.float32)
        with tf.Session(server.target, graph=g, config=_config(), runtime=RUNTIME) as sess:
            sess.run(v.initializer)
            spy = Spy(monkeypatch)
            sess.run(assign, {p: data})
            np.testing.assert_array_equal(sess.run(v), data)
            assert spy.reads == 0 and spy.pushes == 1 and spy.pulls == 1
    finally:
        server.stop()


@needs_shm
def test_unread_files_expire_when_the_receiver_dies(server, monkeypatch):
    """A receiver that never reads its file (it died): the worker unlinks it after the TTL."""
    server.worker.transfers.outbox.ttl_s = 0.3
    n = 16 * MIB // 4
    g, v, p, assign = _variable_graph(n, "dies")
    left = []

    def dead_receiver(msg, *a, **k):
        left.append(msg.path)
        return np.zeros([d.size for d in msg.tensor_shape.dim], np.float32)

    with tf.Session(server.target, graph=g, config=_config(), runtime=RUNTIME) as sess:
        sess.run(v.initializer)
        monkeypatch.setattr(shm, "read", dead_receiver)
        sess.run(v)
    assert len(left) == 1 and os.path.basename(left[0]) in _my_files()
    assert _wait_gone(left[0]), "expired file still there"
    assert len(server.worker.transfers.outbox) == 0


@needs_shm
def test_server_stop_removes_unread_files(monkeypatch):
    server = tf.train.Server.create_local_server(config=_config(), runtime=RUNTIME)
    n = 16 * MIB // 4
    g, v, _, _ = _variable_graph(n, "stopped")
    left = []

    def dead_receiver(msg, *a, **k):
        left.append(msg.path)
        return np.zeros([d.size for d in msg.tensor_shape.dim], np.float32)

    try:
        with tf.Session(server.target, graph=g, config=_config(), runtime=RUNTIME) as sess:
            sess.run(v.initializer)
            monkeypatch.setattr(shm, "read", dead_receiver)
            sess.run(v)
        assert left and os.path.exists(left[0])
    finally:
        server.stop()
    assert not os.path.exists(left[0])


@pytest.mark.parametrize("shared_memory", [pytest.param(True, marks=needs_shm), False],
                         ids=["shm", "grpc"])
def test_worker_to_worker_recv_tensors(monkeypatch, shared_memory):
    """A worker partition consumes a 16 MiB variable of the ps (`RecvTensors`) and returns
    a 16 MiB result to the client."""
    config = _config(shared_memory)
    workers, ps = create_local_cluster(1, 1, worker_config=config, ps_config=config,
                                       runtime=RUNTIME)
    try:
        n = 16 * MIB // 4
        g = tf.Graph()
        with g.as_default():
            with tf.device("/job:ps/task:0"):
                v = tf.Variable(tf.zeros([n]), name="w2w")
                p = tf.placeholder(tf.float32, [n])
                assign = v.assign(p).op
            with tf.device("/job:worker/task:0"):
                y = v * 2.0
        data = np.random.default_rng(6).random(n, dtype=np.float32)
        target = workers[0].target
        with tf.Session(target, graph=g, config=config, runtime=RUNTIME) as sess:
            sess.run(v.initializer)
            sess.run(assign, {p: data})
            spy = Spy(monkeypatch)
            np.testing.assert_array_equal(sess.run(y), data * 2.0)
        if shared_memory:
            # NOTE: ps -> worker (RecvTensors), worker -> client (RunGraph).
            assert spy.writes == 2 and spy.reads == 2 and spy.pulls == 0
        else:
            assert spy.writes == 0 and spy.pulls == 2
    finally:
        for s in workers + ps:
            s.stop()


@pytest.mark.slow
@pytest.mark.parametrize("shared_memory", [False, pytest.param(True, marks=needs_shm)],
                         ids=["grpc", "shm"])
def test_fetch_over_2gib(server, shared_memory):
    """A 2.5 GiB float32 tensor: chunked streams (and files written/read in pieces) lift
    protobuf's and the syscalls' 2 GiB limits. Peak memory ~3 copies (~7.5 GiB)."""
    n = (5 << 30) // 2 // 4  # 2.5 GiB of float32
    g = tf.Graph()
    with g.as_default():
        big = tf.fill([n], 1.5)
    with tf.Session(server.target, graph=g, config=_config(shared_memory), runtime=RUNTIME) as sess:
        out = sess.run(big)
    assert out.shape == (n,) and out.dtype == np.float32
    for i in (0, 1, n // 3, n // 2 + 7, n - 2, n - 1):
        assert out[i] == 1.5
    assert out.flags.writeable


@pytest.mark.slow
@needs_shm
def test_shared_memory_with_a_server_process(monkeypatch):
    """Client and ps in two processes: 16 MiB push and fetch through /dev/shm, nothing
    left behind by either process (the ps keeps given-back files until it stops)."""
    from tensorweave.testing.cluster import pick_unused_port
    from tensorweave.testing.processes import ServerProcess, spec_string

    address = f"127.0.0.1:{pick_unused_port()}"
    with ServerProcess(spec_string({"ps": [address]}), "ps", 0) as proc:
        proc.wait_ready()
        spy = Spy(monkeypatch)
        n = 16 * MIB // 4
        g, v, p, assign = _variable_graph(n, "cross_process")
        data = np.random.default_rng(7).random(n, dtype=np.float32)
        with tf.Session(f"grpc://{address}", graph=g, config=_config(), runtime=RUNTIME) as sess:
            sess.run(v.initializer)
            sess.run(assign, {p: data})
            np.testing.assert_array_equal(sess.run(v), data)
        assert spy.writes == 1 and spy.reads == 1  # this process: the feed and the fetch
        assert spy.pulls == spy.pushes == 0
        assert proc.terminate() == 0  # NOTE: SIGTERM stops the server, which cleans up
    theirs = [f for f in os.listdir(shm.SHM_DIR) if f.startswith(f"tw-{proc.pid}-")]
    assert theirs == []
