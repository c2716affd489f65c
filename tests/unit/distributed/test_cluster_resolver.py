"""Cluster resolvers: TF_CONFIG, Slurm, union, simple and host-list resolvers."""

from __future__ import annotations

import json

import pytest

from tensorweave.distributed import cluster_resolver as cr
from tensorweave.distributed.cluster_spec import ClusterSpec

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


# ---------------------------------------------------------------- Slurm


@pytest.mark.parametrize(
    "hostlist, expected",
    [
        ("node[01-03,07],gpu5", ["node01", "node02", "node03", "node07", "gpu5"]),
        ("n[1-2],m5,o[3-4,6,7-9]", ["n1", "n2", "m5", "o3", "o4", "o6", "o7", "o8", "o9"]),
        ("host", ["host"]),
        ("a,b", ["a", "b"]),
        ("n[8-11]", ["n8", "n9", "n10", "n11"]),
        ("n[08-11]", ["n08", "n09", "n10", "n11"]),
        ("r[1-2]n[1-2]", ["r1n1", "r1n2", "r2n1", "r2n2"]),
        ("n[3]-ib", ["n3-ib"]),
        ("[1-2]x", ["1x", "2x"]),
    ],
)
def test_expand_hostlist(hostlist, expected):
    assert cr.expand_hostlist(hostlist) == expected


@pytest.mark.parametrize("hostlist", ["", "a,,b", "n[1-2", "n1-2]", "n[[1]]", "n[3-1]", "n[a-b]"])
def test_expand_hostlist_errors(hostlist):
    with pytest.raises(ValueError, match="Invalid hostlist format"):
        cr.expand_hostlist(hostlist)


def test_expand_tasks_per_node():
    assert cr.expand_tasks_per_node("2(x3),1") == [2, 2, 2, 1]
    assert cr.expand_tasks_per_node("4") == [4]
    assert cr.expand_tasks_per_node("1,3(x2)") == [1, 3, 3]
    for bad in ("", "2(x)", "x", "2(3)"):
        with pytest.raises(ValueError, match="Invalid tasks-per-node"):
            cr.expand_tasks_per_node(bad)


def _slurm_env(procid, nodelist="node[01-02],gpu5", tasks_per_node="2(x2),1", ntasks="5"):
    return {
        "SLURM_PROCID": str(procid),
        "SLURM_STEP_NUM_TASKS": ntasks,
        "SLURM_STEP_NODELIST": nodelist,
        "SLURM_STEP_TASKS_PER_NODE": tasks_per_node,
    }


def test_slurm_default_all_workers():
    resolver = cr.SlurmClusterResolver(environ=_slurm_env(3))
    assert resolver.cluster_spec() == ClusterSpec(
        {
            "worker": [
                "node01:8888",
                "node01:8889",
                "node02:8888",
                "node02:8889",
                "gpu5:8888",
            ]
        }
    )
    assert (resolver.task_type, resolver.task_id) == ("worker", 3)
    assert resolver.master() == "grpc://node02:8889"
    assert resolver.master("worker", 4, rpc_layer="grpc+verbs") == "grpc+verbs://gpu5:8888"
    assert resolver.num_accelerators() == {}


def test_slurm_jobs_sorted_by_name_and_ranks():
    jobs = {"worker": 3, "ps": 2}
    expected = ClusterSpec(
        {
            "ps": ["node01:2000", "node01:2001"],
            "worker": ["node02:2000", "node02:2001", "gpu5:2000"],
        }
    )
    roles = []
    for rank in range(5):
        resolver = cr.SlurmClusterResolver(jobs=jobs, port_base=2000, environ=_slurm_env(rank))
        assert resolver.cluster_spec() == expected
        roles.append((resolver.task_type, resolver.task_id))
    assert roles == [("ps", 0), ("ps", 1), ("worker", 0), ("worker", 1), ("worker", 2)]


def test_slurm_fallback_variables_and_overrides():
    env = {
        "SLURM_PROCID": "1",
        "SLURM_NTASKS": "4",
        "SLURM_JOB_NODELIST": "c[1-2]",
        "SLURM_TASKS_PER_NODE": "2(x2)",
    }
    resolver = cr.SlurmClusterResolver(environ=env, rpc_layer=None)
    assert resolver.cluster_spec().as_dict() == {
        "worker": ["c1:8888", "c1:8889", "c2:8888", "c2:8889"]
    }
    assert resolver.master() == "c1:8889"
    # tasks_per_node as an int applies to every node.
    resolver = cr.SlurmClusterResolver(jobs={"worker": 2}, tasks_per_node=1, environ=env)
    assert resolver.cluster_spec().as_dict() == {"worker": ["c1:8888", "c2:8888"]}
    assert (resolver.task_type, resolver.task_id) == ("worker", 1)
    # A dict gives the hosts directly; rank 1 is outside all jobs, so there is no own task.
    resolver = cr.SlurmClusterResolver(
        jobs={"worker": 1}, tasks_per_node={"x": 1, "y": 1}, environ={"SLURM_PROCID": "1"}
    )
    assert resolver.cluster_spec().as_dict() == {"worker": ["x:8888"]}
    assert resolver.task_type is None and resolver.master() == ""


def test_slurm_errors():
    with pytest.raises(RuntimeError, match="SLURM_PROCID not found"):
        cr.SlurmClusterResolver()
    env = _slurm_env(0)
    del env["SLURM_STEP_NODELIST"]
    with pytest.raises(RuntimeError, match="SLURM_STEP_NODELIST or SLURM_JOB_NODELIST"):
        cr.SlurmClusterResolver(environ=env)
    with pytest.raises(ValueError, match="Requested 6 tasks but only 5"):
        cr.SlurmClusterResolver(jobs={"ps": 1, "worker": 5}, environ=_slurm_env(0))
    with pytest.raises(ValueError, match="has 3 nodes but tasks-per-node describes 2"):
        cr.SlurmClusterResolver(environ=_slurm_env(0, tasks_per_node="2,3"))
    with pytest.raises(ValueError, match="Invalid hostlist"):
        cr.SlurmClusterResolver(environ=_slurm_env(0, nodelist="n[1-"))


def test_slurm_from_environ(monkeypatch):
    for key, value in _slurm_env(4).items():
        monkeypatch.setenv(key, value)
    resolver = cr.SlurmClusterResolver.from_environ(port_base=9000)
    assert (resolver.task_type, resolver.task_id) == ("worker", 4)
    assert resolver.master() == "grpc://gpu5:9000"


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
