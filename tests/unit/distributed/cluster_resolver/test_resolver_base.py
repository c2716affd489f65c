"""Cluster resolvers: the package's re-exports, the base, simple and union resolvers."""

from __future__ import annotations

import importlib

import pytest

from tensorweave.distributed import cluster_resolver as cr
from tensorweave.distributed.cluster_spec import ClusterSpec

_MODULES = {
    "base": [
        "ClusterResolver",
        "SimpleClusterResolver",
        "UnionClusterResolver",
        "format_master_url",
    ],
    "tf_config": ["TFConfigClusterResolver", "tf_config_from_env", "is_chief"],
    "slurm": ["SlurmClusterResolver", "expand_hostlist", "expand_tasks_per_node"],
    "host_list": ["HostListClusterResolver", "parse_host_list"],
}


@pytest.mark.parametrize("module", sorted(_MODULES))
def test_package_reexports_every_public_name(module):
    mod = importlib.import_module(f"tensorweave.distributed.cluster_resolver.{module}")
    for name in _MODULES[module]:
        assert getattr(cr, name) is getattr(mod, name)
    assert sorted(cr.__all__) == sorted(n for names in _MODULES.values() for n in names)


def test_tf_distribute_namespace():
    from tensorweave import distribute
    from tensorweave.distributed.server import Server

    assert distribute.Server is Server
    assert distribute.cluster_resolver is cr
    assert distribute.cluster_resolver.TFConfigClusterResolver is cr.TFConfigClusterResolver


# ---------------------------------------------------------------- base and simple


def test_cluster_resolver_is_abstract():
    with pytest.raises(TypeError):
        cr.ClusterResolver()


def test_simple_cluster_resolver():
    spec = ClusterSpec({"ps": ["p0:1"], "worker": ["w0:1", "w1:1"]})
    resolver = cr.SimpleClusterResolver(
        spec, master="grpc://w0:1", task_type="worker", task_id=1, environment="cloud"
    )
    assert resolver.cluster_spec() is spec
    assert resolver.master() == "grpc://w0:1"
    assert resolver.master("worker", 1) == "w1:1"
    assert resolver.master("worker", 1, rpc_layer="grpc") == "grpc://w1:1"
    assert (resolver.task_type, resolver.task_id, resolver.environment) == ("worker", 1, "cloud")
    assert resolver.num_accelerators() == {}
    resolver.task_type, resolver.task_id, resolver.rpc_layer = "ps", 0, "grpc"
    assert (resolver.task_type, resolver.task_id) == ("ps", 0)
    assert resolver.master("ps", 0) == "grpc://p0:1"
    gpus = cr.SimpleClusterResolver(spec, num_accelerators={"GPU": 2})
    assert gpus.num_accelerators() == {"GPU": 2}
    with pytest.raises(TypeError, match="cluster_spec must be"):
        cr.SimpleClusterResolver({"worker": ["w:1"]})
    with pytest.raises(TypeError, match="master must be a string"):
        cr.SimpleClusterResolver(spec, master=None)


def test_format_master_url():
    assert cr.format_master_url("h:1") == "h:1"
    assert cr.format_master_url("h:1", "grpc") == "grpc://h:1"


# ---------------------------------------------------------------- union


def _simple(cluster, **kwargs):
    return cr.SimpleClusterResolver(ClusterSpec(cluster), **kwargs)


def test_union_concatenates_lists_and_merges_jobs():
    union = cr.UnionClusterResolver(
        _simple({"worker": ["w0:1", "w1:1"]}, master="grpc://w0:1", task_type="worker", task_id=0),
        _simple({"worker": ["w2:1"], "ps": ["p0:1"]}),
    )
    assert union.cluster_spec() == ClusterSpec({"worker": ["w0:1", "w1:1", "w2:1"], "ps": ["p0:1"]})
    assert union.master() == "grpc://w0:1"
    assert union.master("worker", 2, rpc_layer="grpc") == "grpc://w2:1"
    assert (union.task_type, union.task_id) == ("worker", 0)


def test_union_sparse_merge_and_conflict():
    union = cr.UnionClusterResolver(
        _simple({"worker": {0: "w0:1", 2: "w2:1"}}), _simple({"worker": {1: "w1:1"}})
    )
    assert union.cluster_spec() == ClusterSpec({"worker": ["w0:1", "w1:1", "w2:1"]})
    # A dense list merged with a sparse dict: the list's indices count.
    union = cr.UnionClusterResolver(_simple({"worker": ["w0:1"]}), _simple({"worker": {3: "x:1"}}))
    assert union.cluster_spec().as_dict() == {"worker": {0: "w0:1", 3: "x:1"}}
    conflict = cr.UnionClusterResolver(
        _simple({"worker": {0: "w0:1", 2: "w2:1"}}), _simple({"worker": ["a:1", "b:1", "c:1"]})
    )
    with pytest.raises(KeyError, match="Duplicate keys"):
        conflict.cluster_spec()


def test_union_overrides_and_errors():
    union = cr.UnionClusterResolver(
        _simple({"w": ["a:1"]}, task_type="w", task_id=0, rpc_layer="grpc"),
        task_id=3,
    )
    assert (union.task_type, union.task_id, union.rpc_layer) == ("w", 3, "grpc")
    union = cr.UnionClusterResolver(_simple({"w": ["a:1"]}, task_id=5), task_id=0)
    assert union.task_id == 0  # an override of 0 is honoured
    with pytest.raises(ValueError, match="At least one"):
        cr.UnionClusterResolver()
    with pytest.raises(TypeError, match="sub-class"):
        cr.UnionClusterResolver(ClusterSpec({}))
