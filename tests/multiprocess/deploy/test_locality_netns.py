"""A task in a network namespace standing in for a host counts the tasks whose addresses
are assigned there as its co-located tasks (the thread budget's `tasks_on_host`), though the
host name resolves elsewhere: 1 ps on one stand-in host and 2 workers on another give each
worker 2 tasks on its host and the ps 1 (before, every task counted only itself and took
every core's BLAS threads). Skipped without root (`deploy.netns.available`)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tensorweave.deploy import netns

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

OK, WHY = netns.available()

_PROBE = """
import json, sys
from tensorweave.distributed.server import tasks_on_host
from tensorweave.distributed.cluster_spec import ClusterSpec
from tensorweave.distributed.transport.host_locality import HostLocality
cluster = ClusterSpec(json.loads(sys.argv[1]))
h = HostLocality()
print(json.dumps({"tasks": tasks_on_host(cluster, h),
                  "local": [h.is_local_address(a) for a in sys.argv[2:]]}))
"""


@pytest.mark.skipif(not OK, reason=f"network namespaces unavailable: {WHY}")
def test_tasks_on_a_stand_in_host_see_each_other():
    with netns.Hosts(2) as hosts:
        ps, worker = hosts.address(0), hosts.address(1)
        cluster = {"ps": [f"{ps}:2222"], "worker": [f"{worker}:2222", f"{worker}:2223"]}
        found = []
        for i in range(2):
            out = subprocess.run(
                hosts.command(i, [sys.executable, "-c", _PROBE, json.dumps(cluster),
                                  f"{ps}:2222", f"{worker}:2222", "127.0.0.1:1"]),
                capture_output=True, text=True, timeout=60, check=True)
            found.append(json.loads(out.stdout.strip().splitlines()[-1]))
    assert found[0] == {"tasks": 1, "local": [True, False, True]}
    assert found[1] == {"tasks": 2, "local": [False, True, True]}
