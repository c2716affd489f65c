"""`examples/in_graph.py`: in-graph replication from one client (variables on ps 0, a model
replica on each of 2 workers, each on half of the batch, gradients averaged with
`tf.add_n(...) / 2`) equals SGD on the whole batch in one local session, to 1e-5 after 20
steps on the same data."""

from __future__ import annotations

import importlib
import pathlib
import sys

import numpy as np
import pytest

from tensorweave.testing.cluster import create_local_cluster

EXAMPLES = pathlib.Path(__file__).resolve().parents[3] / "examples"

pytestmark = pytest.mark.timeout(120)


def _load(name: str):
    if str(EXAMPLES) not in sys.path:
        sys.path.insert(0, str(EXAMPLES))
    return importlib.import_module(name)


@pytest.fixture
def cluster():
    workers, ps = create_local_cluster(2, 1)
    yield workers, ps
    for server in workers + ps:
        server.stop()


def test_two_worker_replicas_match_the_doubled_batch_in_one_process(cluster):
    in_graph = _load("in_graph")
    workers, _ = cluster
    replicated = in_graph.run_in_graph(workers[0].target, steps=20, batch_size=64)
    single = in_graph.run_single_process(steps=20, batch_size=64)
    # The replicas really ran where they were pinned: ps 0 and both workers.
    assert replicated.partition_devices == [
        "/job:ps/replica:0/task:0/device:CPU:0",
        "/job:worker/replica:0/task:0/device:CPU:0",
        "/job:worker/replica:0/task:1/device:CPU:0",
    ]
    assert len(replicated.params) == len(single.params) == 6
    for got, want in zip(replicated.params, single.params):
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-5)
    np.testing.assert_allclose(replicated.losses, single.losses, rtol=1e-5)
    # Training moved the parameters (the comparison is not of the initial values).
    initial = in_graph.init_params(0)
    assert in_graph.max_param_diff(single, in_graph.RunResult(initial, [], 0.0, [])) > 1e-3
    assert replicated.losses[-1] < replicated.losses[0]


def test_main_starts_its_own_cluster_and_reports_the_difference(capsys):
    in_graph = _load("in_graph")
    diff = in_graph.main(["--steps", "5", "--batch_size", "32"])
    out = capsys.readouterr().out.strip().splitlines()
    assert diff <= 1e-5
    assert out[0].startswith("step 1: loss ")
    assert out[-1].startswith("max |in-graph - single process| after 5 steps: ")
