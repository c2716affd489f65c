"""`benchmarks/layouts.py` end to end on a small cluster: the synchronous layouts ((d)
in-graph replication, (e) `SyncReplicasOptimizer`) run to the end with 2 workers (in (e)
a worker done first trains on until the other is, so neither waits for tokens forever),
count worker batches, and report the cluster's CPU per batch over every task."""

from __future__ import annotations

import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "benchmarks"))

import layouts  # noqa: E402

pytestmark = [pytest.mark.timeout(240)]


@pytest.mark.parametrize("layout", ["sync", "ingraph"])
def test_synchronous_layout_ends_with_two_workers(layout):
    result = layouts.run_layout(layout, workers=2, steps=40, warmup=5, env_blas1=True)
    assert result["backend"] == "tensorweave"
    assert result["global_steps_per_sec"] > 0
    # (d) reports one record (the client's), (e) one per worker, all trained.
    assert len(result["steps_per_sec_by_worker"]) == (2 if layout == "sync" else 1)
    assert all(a > 0.3 for a in result["test_accuracy_by_worker"])
    assert result["cluster_cpu_ms_per_batch"] > 0
    assert result["cpu_bound_batches_per_sec"] > 0
