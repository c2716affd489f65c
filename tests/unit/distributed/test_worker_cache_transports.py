"""`WorkerCache` picks one transport per peer: the first factory that answers."""

from __future__ import annotations

import pytest

from tensorweave import errors
from tensorweave.distributed.cluster_spec import ClusterSpec
from tensorweave.distributed.process_runtime import ProcessRuntime
from tensorweave.distributed.worker_cache import TransportOptions, WorkerCache


class _Conn:
    in_process = False
    streaming = None

    def __init__(self, kind, peer):
        self.kind = kind
        self.task_name = peer.task
        self.address = peer.address
        self.closed = False

    def close(self):
        self.closed = True


def _factory(kind, applies, log):
    def connect(peer):
        log.append((kind, peer.task))
        return _Conn(kind, peer) if applies(peer) else None

    return connect


CLUSTER = ClusterSpec({"ps": ["fast-fabric:1"], "worker": ["elsewhere:2"]})


def test_first_applying_transport_wins_and_is_kept_per_peer():
    log = []
    cache = WorkerCache(CLUSTER, TransportOptions(), ProcessRuntime(), transports=[
        _factory("fabric", lambda p: p.address.startswith("fast-fabric"), log),
        _factory("fallback", lambda p: True, log),
    ])
    ps = cache.get("/job:ps/replica:0/task:0")
    worker = cache.get("/job:worker/replica:0/task:0")
    assert (ps.kind, worker.kind) == ("fabric", "fallback")
    assert cache.get("/job:ps/replica:0/task:0") is ps  # one connection per peer
    assert log == [("fabric", "/job:ps/replica:0/task:0"),
                   ("fabric", "/job:worker/replica:0/task:0"),
                   ("fallback", "/job:worker/replica:0/task:0")]
    cache.close()
    assert ps.closed and worker.closed


def test_shared_objects_are_made_once_per_key_and_closed_with_the_cache():
    made = []

    class _Channel:
        closed = False

        def close(self):
            self.closed = True

    def connect(peer):
        channel = peer.shared(("channel", peer.address), lambda: made.append(1) or _Channel())
        conn = _Conn("x", peer)
        conn.channel = channel
        return conn

    cluster = ClusterSpec({"ps": ["h:1", "h:1"]})
    cache = WorkerCache(cluster, runtime=ProcessRuntime(), transports=[connect])
    a, b = cache.get("/job:ps/replica:0/task:0"), cache.get("/job:ps/replica:0/task:1")
    assert a.channel is b.channel and len(made) == 1
    cache.close()
    assert a.channel.closed


def test_no_transport_names_the_peer():
    cache = WorkerCache(CLUSTER, runtime=ProcessRuntime(), transports=[lambda peer: None])
    with pytest.raises(errors.UnimplementedError, match="fast-fabric:1"):
        cache.get("/job:ps/replica:0/task:0")


def test_in_process_transport_only_sees_its_own_runtime():
    """A server registered in one runtime is invisible to caches of another (tests make
    their own runtime instead of sharing process globals)."""
    class _Server:
        class worker:  # noqa: N801
            task_name = "/job:ps/replica:0/task:0"

        master = object()

    mine, other = ProcessRuntime(), ProcessRuntime()
    server = _Server()
    mine.servers.register("fast-fabric:1", server)
    assert WorkerCache(CLUSTER, runtime=mine).get("/job:ps/replica:0/task:0") is _Server.worker
    assert other.servers.lookup("fast-fabric:1") is None
    assert WorkerCache(CLUSTER, runtime=mine).master("/job:ps/replica:0/task:0") is _Server.master


def test_transport_factories_see_the_cache_security():
    """A cluster token / TLS settings reach every transport through `peer.options`."""
    from tensorweave.distributed.transport import tcp_stream
    from tensorweave.distributed.transport.security import TransportSecurity
    from tensorweave.protos import config_pb2

    sec = TransportSecurity(token=b"t0ken")
    options = TransportOptions.from_config(config_pb2.ConfigProto(), sec)
    assert options.security is sec and "t0ken" not in repr(options)
    seen = []
    cache = WorkerCache(CLUSTER, options, ProcessRuntime(), transports=[
        lambda peer: seen.append(peer.options.security) or _Conn("x", peer)])
    cache.get("/job:ps/replica:0/task:0")
    assert seen == [sec]
    cache.close()

    local = ClusterSpec({"ps": ["localhost:1"]})
    cache = WorkerCache(local, options, ProcessRuntime(), transports=[tcp_stream.connect])
    worker = cache.get("/job:ps/replica:0/task:0")
    assert worker._stub.local._token == b"t0ken"  # in every step-call frame
    cache.close()
