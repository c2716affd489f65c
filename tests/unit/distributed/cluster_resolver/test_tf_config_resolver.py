"""Cluster resolvers: TFConfigClusterResolver, tf_config_from_env and is_chief."""

from __future__ import annotations

import json

import pytest

from tensorweave.distributed import cluster_resolver as cr
from tensorweave.distributed.cluster_spec import ClusterSpec

# ---------------------------------------------------------------- TF_CONFIG

_TF_CONFIG = {
    "cluster": {"chief": ["c0:2222"], "worker": ["w0:2222", "w1:2222"], "ps": ["p0:2222"]},
    "task": {"type": "worker", "index": 1},
    "rpc_layer": "grpc",
}


def test_tf_config_resolver_from_text_and_dict():
    for tf_config in (_TF_CONFIG, json.dumps(_TF_CONFIG)):
        resolver = cr.TFConfigClusterResolver(tf_config=tf_config)
        assert resolver.cluster_spec() == ClusterSpec(_TF_CONFIG["cluster"])
        assert (resolver.task_type, resolver.task_id, resolver.rpc_layer) == ("worker", 1, "grpc")
        assert resolver.master() == "grpc://w1:2222"
        assert resolver.master("chief", 0) == "grpc://c0:2222"
        assert resolver.master("ps", 0, rpc_layer="grpc+verbs") == "grpc+verbs://p0:2222"
        assert resolver.environment == ""
        assert resolver.num_accelerators() == {}


def test_tf_config_coercion_and_sparse_cluster():
    tf_config = {
        "cluster": {"worker": {"1": "w1:2222", "3": "w3:2222"}, "ps": ["p0:2222"]},
        "task": {"type": "worker", "index": "3"},
        "environment": "cloud",
    }
    resolver = cr.TFConfigClusterResolver(tf_config=json.dumps(tf_config))
    assert resolver.cluster_spec().as_dict() == {
        "worker": {1: "w1:2222", 3: "w3:2222"},
        "ps": ["p0:2222"],
    }
    assert resolver.task_id == 3 and isinstance(resolver.task_id, int)
    assert resolver.rpc_layer is None
    assert resolver.master() == "w3:2222"  # no rpc layer known: bare address
    assert resolver.environment == "cloud"
    typed = cr.TFConfigClusterResolver(tf_config={"task": {"type": 7, "index": 0}})
    assert typed.task_type == "7"


def test_tf_config_overrides():
    resolver = cr.TFConfigClusterResolver(
        task_type="ps", task_id=0, rpc_layer="grpc+mpi", environment="google", tf_config=_TF_CONFIG
    )
    assert (resolver.task_type, resolver.task_id) == ("ps", 0)
    assert resolver.master() == "grpc+mpi://p0:2222"
    assert resolver.environment == "google"
    resolver.task_type, resolver.task_id = "chief", 0
    assert resolver.master() == "grpc+mpi://c0:2222"


def test_tf_config_master_rules():
    with_session_master = dict(_TF_CONFIG, session_master="grpc://elsewhere:1")
    assert cr.TFConfigClusterResolver(tf_config=with_session_master).master() == (
        "grpc://elsewhere:1"
    )
    single = {"cluster": {"worker": ["w0:2222"]}, "task": {"type": "worker", "index": 0}}
    assert cr.TFConfigClusterResolver(tf_config=single).master() == ""
    single_sparse = {"cluster": {"worker": {"37": "w:1"}}, "rpc_layer": "grpc"}
    assert cr.TFConfigClusterResolver(tf_config=single_sparse).master() == ""
    assert cr.TFConfigClusterResolver().master() == ""
    assert cr.TFConfigClusterResolver().cluster_spec() == ClusterSpec({})
    no_task = {"cluster": _TF_CONFIG["cluster"]}
    with pytest.raises(ValueError, match="names no task"):
        cr.TFConfigClusterResolver(tf_config=no_task).master()
    bad_task = dict(_TF_CONFIG, task={"type": "worker", "index": 9})
    with pytest.raises(ValueError, match="No task with index 9"):
        cr.TFConfigClusterResolver(tf_config=bad_task).master()


def test_tf_config_errors():
    with pytest.raises(ValueError, match="not valid JSON"):
        cr.TFConfigClusterResolver(tf_config="{")
    with pytest.raises(ValueError, match="must be a JSON object"):
        cr.TFConfigClusterResolver(tf_config="[1]")
    with pytest.raises(TypeError, match="tf_config must be"):
        cr.TFConfigClusterResolver(tf_config=42)
    assert cr.TFConfigClusterResolver(tf_config="  ").task_type is None


def test_tf_config_from_env():
    assert cr.tf_config_from_env({}) is None
    assert cr.tf_config_from_env({"TF_CONFIG": " "}) is None
    assert cr.tf_config_from_env({"TF_CONFIG": json.dumps(_TF_CONFIG)}) == _TF_CONFIG
    with pytest.raises(ValueError):
        cr.tf_config_from_env({"TF_CONFIG": "nope"})


def test_tf_config_from_env_reads_os_environ(monkeypatch):
    monkeypatch.setenv("TF_CONFIG", json.dumps({"task": {"type": "ps", "index": 0}}))
    assert cr.tf_config_from_env() == {"task": {"type": "ps", "index": 0}}
    monkeypatch.delenv("TF_CONFIG")
    assert cr.tf_config_from_env() is None


def test_is_chief():
    assert cr.is_chief(None)
    assert cr.is_chief({})
    assert cr.is_chief('{"cluster": {}}')
    chief = dict(_TF_CONFIG, task={"type": "chief", "index": 0})
    assert cr.is_chief(chief)
    assert cr.is_chief(json.dumps(chief))
    assert not cr.is_chief(_TF_CONFIG)
    legacy = {"cluster": {"master": ["m:1"], "worker": ["w:1"]}, "task": {"type": "master"}}
    assert cr.is_chief(legacy)
    evaluator = dict(_TF_CONFIG, task={"type": "evaluator", "index": 0})
    assert not cr.is_chief(evaluator)


@pytest.mark.parametrize(
    "tf_config, message",
    [
        ({"cluster": {"worker": ["w:1"]}, "task": {"type": "worker"}}, "exactly one 'chief'"),
        (
            {"cluster": {"chief": ["c:1"], "master": ["m:1"]}, "task": {"type": "chief"}},
            "exactly one 'chief'",
        ),
        ({"cluster": {"chief": ["c:1", "d:1"]}, "task": {"type": "chief"}}, "only one 'chief'"),
        ({"cluster": {"chief": ["c:1"]}}, "no task type"),
        ({"cluster": {"chief": ["c:1"]}, "task": {"type": "ps", "index": 0}}, "No such job"),
        ({"cluster": {"chief": ["c:1"]}, "task": {"type": "chief", "index": 1}}, "No task"),
    ],
)
def test_is_chief_errors(tf_config, message):
    with pytest.raises(ValueError, match=message):
        cr.is_chief(tf_config)
