"""Between stand-in hosts (network namespaces) a server announces its TCP step-call socket,
a client in another namespace is admitted on it, and steps across the namespaces give the
values they give on one host. Skipped without root (`deploy.netns.available`)."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.deploy import netns
from tensorweave.distributed.transport import grpc_client, local_rpc, methods, tcp_stream
from tensorweave.protos import worker_pb2
from tensorweave.testing.processes import ServerProcess, spec_string

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

OK, WHY = netns.available()


@pytest.mark.skipif(not OK, reason=f"network namespaces unavailable: {WHY}")
def test_steps_and_step_calls_across_namespaces():
    with netns.Hosts(2) as hosts:
        cluster = {"ps": [f"{hosts.address(0)}:2222"], "worker": [f"{hosts.address(1)}:2222"]}
        spec = spec_string(cluster)
        procs = [ServerProcess(spec, "ps", 0, argv_prefix=tuple(hosts.command(0, []))),
                 ServerProcess(spec, "worker", 0, argv_prefix=tuple(hosts.command(1, [])))]
        try:
            for p in procs:
                p.wait_ready()
            ps = cluster["ps"][0]
            channel = grpc_client.make_channel(ps)
            try:
                client = local_rpc.LocalRpcClient("/job:ps/replica:0/task:0", ps,
                                                  connector=tcp_stream.TcpConnector(ps, channel))
                request = worker_pb2.CleanupGraphRequest(step_id=3).SerializeToString()
                assert client.call(methods.CLEANUP_GRAPH, request, 30.0) is not None
                client.close()
            finally:
                channel.close()
            g = tf.Graph()
            with g.as_default():
                with tf.device("/job:ps/task:0"):
                    v = tf.Variable([1.0, 2.0], name="v")
                with tf.device("/job:worker/task:0"):
                    total = v * 3.0
                with tf.device("/job:ps/task:0"):
                    update = v.assign_add(total)
            with tf.Session("grpc://" + cluster["worker"][0], graph=g) as sess:
                sess.run(v.initializer)
                for _ in range(3):
                    sess.run(update)
                np.testing.assert_allclose(sess.run(v), [64.0, 128.0])  # v <- 4 v
        finally:
            for p in procs:
                p.terminate()
