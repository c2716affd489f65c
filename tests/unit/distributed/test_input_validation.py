"""Cluster specs, servers and session targets refuse values that can never work: ports
out of range, job names outside TF's device-name grammar, negative task indices, targets
without a port or with a host that does not resolve."""

import logging
import socket

import pytest

import tensorweave as tf
from tensorweave import errors
from tensorweave.distributed.target import split_target


@pytest.mark.parametrize("cluster, fragment", [
    ({"worker": ["localhost:70000"]}, "70000"),
    ({"worker": ["localhost:65536"]}, "65536"),
    ({"": ["localhost:2222"]}, "''"),
    ({"1worker": ["localhost:2222"]}, "'1worker'"),
    ({"ps/0": ["localhost:2222"]}, "'ps/0'"),
    ({"worker": {-1: "localhost:2222"}}, "-1"),
])
def test_cluster_spec_rejects_bad_values(cluster, fragment):
    with pytest.raises(ValueError, match=fragment):
        tf.train.ClusterSpec(cluster)


def test_cluster_def_proto_is_validated_too():
    from tensorweave.protos import cluster_pb2

    cluster_def = cluster_pb2.ClusterDef()
    job = cluster_def.job.add(name="worker")
    job.tasks[0] = "localhost:99999"
    with pytest.raises(ValueError, match="99999"):
        tf.train.ClusterSpec(cluster_def)


def test_server_rejects_a_port_out_of_range():
    with pytest.raises(ValueError, match="70000"):
        tf.train.Server({"worker": ["localhost:70000"]}, start=False)


def test_valid_names_and_ports_pass():
    spec = tf.train.ClusterSpec({"ps": ["h:1"], "worker_2": {3: "h:65535"}, "local": ["h:0"]})
    assert spec.task_address("worker_2", 3) == "h:65535"


@pytest.mark.parametrize("target", ["grpc://localhost", "grpc://localhost:0",
                                    "grpc://localhost:70000", "grpc://:2222",
                                    "grpc://localhost:port"])
def test_malformed_target_is_invalid_argument(target):
    with tf.Graph().as_default():
        c = tf.constant(1.0)
        with pytest.raises(errors.InvalidArgumentError, match="target"):
            with tf.Session(target) as sess:
                sess.run(c)


def test_unresolvable_host_is_unavailable():
    with tf.Graph().as_default():
        c = tf.constant(1.0)
        with pytest.raises(errors.UnavailableError, match="no-such-host.invalid"):
            with tf.Session("grpc://no-such-host.invalid:2222") as sess:
                sess.run(c)


def test_reachable_host_without_a_server_keeps_waiting_with_a_log_line(caplog):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = tf.ConfigProto(operation_timeout_in_ms=1500)
    with tf.Graph().as_default(), caplog.at_level(logging.WARNING, "tensorweave.session"):
        c = tf.constant(1.0)
        with pytest.raises(errors.DeadlineExceededError):
            with tf.Session(f"grpc://127.0.0.1:{port}", config=config) as sess:
                sess.run(c)
    assert "Still waiting" in caplog.text


def test_split_target_handles_ipv6():
    assert split_target("grpc://[::1]:2222") == ("::1", 2222)
