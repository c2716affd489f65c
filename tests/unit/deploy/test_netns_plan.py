"""Plans of `tensorweave launch --netns` (no namespaces are created: `Hosts` only names them)."""

from __future__ import annotations

import json

import pytest

from tensorweave.deploy import netns


def test_per_job_puts_the_ps_on_one_host_and_the_workers_on_another():
    hosts = netns.Hosts(2)
    plan = netns.plan_in_hosts(["python", "t.py"], 1, 2, hosts, "per-job")
    a0, a1 = hosts.address(0), hosts.address(1)
    assert plan.cluster == {"ps": (f"{a0}:2222",), "worker": (f"{a1}:2222", f"{a1}:2223")}
    worker1 = plan.tasks[2]
    assert worker1.argv[:4] == ("ip", "netns", "exec", hosts.names[1])
    assert json.loads(worker1.tf_config)["task"] == {"type": "worker", "index": 1}


def test_per_task_gives_every_task_a_host():
    hosts = netns.Hosts(3)
    plan = netns.plan_in_hosts("python t.py --x={task_index}", 2, 1, hosts, "per-task", True)
    assert [t.address for t in plan.tasks] == [f"{hosts.address(i)}:2222" for i in range(3)]
    assert "--x=0" in plan.tasks[2].argv and "--job_name=worker" in plan.tasks[2].argv
    assert {t.argv[3] for t in plan.tasks} == set(hosts.names)


def test_addresses_are_in_the_private_range_and_names_fit_interfaces():
    hosts = netns.Hosts(4)
    assert hosts.address(3).startswith("10.231.") and hosts.root_address.endswith(".254")
    assert len(hosts.bridge) <= 15 and all(len(n) <= 15 for n in hosts.names)


def test_bad_layouts_and_counts():
    with pytest.raises(ValueError, match="unknown --netns layout"):
        netns.host_count("per-rack", 1, 1)
    with pytest.raises(ValueError, match="needs 3 hosts"):
        netns.plan_in_hosts("python t.py", 1, 2, netns.Hosts(2), "per-task")
    with pytest.raises(ValueError):
        netns.Hosts(0)
