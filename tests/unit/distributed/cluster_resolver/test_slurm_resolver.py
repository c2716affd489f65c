"""Cluster resolvers: SlurmClusterResolver and Slurm host-list expansion."""

from __future__ import annotations

import pytest

from tensorweave.distributed import cluster_resolver as cr
from tensorweave.distributed.cluster_spec import ClusterSpec

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
