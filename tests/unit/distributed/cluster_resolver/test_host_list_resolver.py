"""Cluster resolvers: HostListClusterResolver and parse_host_list."""

from __future__ import annotations

import pytest

from tensorweave.distributed import cluster_resolver as cr
from tensorweave.distributed.cluster_spec import ClusterSpec

# ---------------------------------------------------------------- host lists


def test_host_list_resolver_kubernetes_names():
    resolver = cr.HostListClusterResolver(
        {
            "worker": [
                "trainer-worker-0.trainer-worker.ns.svc",
                "trainer-worker-1.trainer-worker.ns.svc:2223",
            ],
            "ps": ["trainer-ps-0.trainer-ps.ns.svc"],
        },
        task_type="worker",
        task_id=1,
        rpc_layer="grpc",
    )
    assert resolver.cluster_spec() == ClusterSpec(
        {
            "worker": [
                "trainer-worker-0.trainer-worker.ns.svc:2222",
                "trainer-worker-1.trainer-worker.ns.svc:2223",
            ],
            "ps": ["trainer-ps-0.trainer-ps.ns.svc:2222"],
        }
    )
    assert resolver.master() == "grpc://trainer-worker-1.trainer-worker.ns.svc:2223"
    assert (
        resolver.master("ps", 0, rpc_layer="grpc+x")
        == "grpc+x://trainer-ps-0.trainer-ps.ns.svc:2222"
    )


def test_host_list_resolver_string_form_and_ports():
    resolver = cr.HostListClusterResolver("worker=h0, h1 ;ps=p0:9999", port=3000)
    assert resolver.cluster_spec().as_dict() == {
        "worker": ["h0:3000", "h1:3000"],
        "ps": ["p0:9999"],
    }
    assert resolver.master() == ""
    assert resolver.task_type is None
    resolver = cr.HostListClusterResolver({"w": ["::1", "[::2]", "[::3]:5", "w-10"]}, port=7)
    assert resolver.cluster_spec().job_tasks("w") == ["[::1]:7", "[::2]:7", "[::3]:5", "w-10:7"]
    resolver = cr.HostListClusterResolver({"w": "a,b"})
    assert resolver.cluster_spec().as_dict() == {"w": ["a:2222", "b:2222"]}


def test_host_list_resolver_errors():
    with pytest.raises(ValueError, match="has no '='"):
        cr.HostListClusterResolver("worker:h0")
    with pytest.raises(ValueError, match="Empty host list"):
        cr.HostListClusterResolver("")
    with pytest.raises(ValueError, match="Empty job name"):
        cr.HostListClusterResolver("=h0")
    with pytest.raises(ValueError, match="Duplicate job name 'w'"):
        cr.HostListClusterResolver("w=a;w=b")
    with pytest.raises(ValueError, match="Empty host in job 'w'"):
        cr.HostListClusterResolver("w=a,,b")
    with pytest.raises(TypeError, match="job_hosts must be"):
        cr.HostListClusterResolver(["a"])
    with pytest.raises(ValueError, match="No task with index 2"):
        cr.HostListClusterResolver("w=a,b", task_type="w", task_id=2)
    assert cr.parse_host_list("worker=h0,h1;ps=p0") == {"worker": ["h0", "h1"], "ps": ["p0"]}
