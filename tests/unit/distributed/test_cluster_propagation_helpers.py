"""The pure helpers of ClusterSpec propagation (`distributed/cluster_propagation.py`)."""

from __future__ import annotations

import pytest

from tensorweave import errors
from tensorweave.distributed import cluster_propagation as cp
from tensorweave.distributed.cluster_spec import ClusterSpec
from tensorweave.protos import config_pb2, device_attributes_pb2

CLUSTER = ClusterSpec({"worker": ["localhost:1", "localhost:2"], "ps": ["localhost:3"]})


def test_propagated_cluster_only_with_jobs():
    assert cp.propagated_cluster(None) is None
    assert cp.propagated_cluster(config_pb2.ConfigProto()) is None
    config = config_pb2.ConfigProto(cluster_def=CLUSTER.as_cluster_def())
    assert cp.propagated_cluster(config) == CLUSTER


def test_task_at_matches_the_target_address():
    assert cp.task_at(CLUSTER, "grpc://localhost:2") == "/job:worker/replica:0/task:1"
    assert cp.task_at(CLUSTER, "localhost:3") == "/job:ps/replica:0/task:0"
    with pytest.raises(errors.InvalidArgumentError, match="no task"):
        cp.task_at(CLUSTER, "grpc://localhost:9")
    twice = ClusterSpec({"a": ["localhost:1"], "b": ["localhost:1"]})
    with pytest.raises(errors.InvalidArgumentError, match="several tasks"):
        cp.task_at(twice, "localhost:1")


def test_server_def_and_session_identity():
    sd = cp.server_def_for(CLUSTER, "/job:worker/replica:0/task:1")
    assert (sd.job_name, sd.task_index, sd.protocol) == ("worker", 1, "grpc")
    assert ClusterSpec(sd.cluster) == CLUSTER
    assert cp.session_identity(sd, "/job:localhost/replica:0/task:0") == \
        "/job:worker/replica:0/task:1"
    assert cp.session_identity(sd, "/job:worker/replica:0/task:1") is None
    assert cp.session_identity(None, "/job:worker/replica:0/task:1") is None


def test_renamed_devices_keep_everything_but_the_task():
    attr = device_attributes_pb2.DeviceAttributes(
        name="/job:localhost/replica:0/task:0/device:CPU:0", device_type="CPU",
        incarnation=(1 << 64) - 5, physical_device_desc="tensorweave")
    (renamed,) = cp.renamed_devices("/job:worker/replica:0/task:1", [attr])
    assert renamed.name == "/job:worker/replica:0/task:1/device:CPU:0"
    assert renamed.incarnation == attr.incarnation
    assert renamed.physical_device_desc == "tensorweave"
    assert attr.name.startswith("/job:localhost")  # the input is not changed


@pytest.mark.parametrize("isolate,share,propagated,want", [
    (False, False, False, False), (True, False, False, True), (False, False, True, True),
    (False, True, True, False), (True, True, True, True),
])
def test_isolates_state(isolate, share, propagated, want):
    config = config_pb2.ConfigProto(isolate_session_state=isolate)
    config.experimental.share_session_state_in_clusterspec_propagation = share
    assert cp.isolates_state(config, propagated) is want
