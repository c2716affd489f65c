"""RPC interop with a real TensorFlow: TensorFlow clients against `tensorweave server`
processes, a tensorweave client against TensorFlow servers, and mixed ps/worker clusters
training the digits MLP between-graph (issue 14 item 6).

The same client program (tf_programs/seed_snippets.py: the seeds' snippets) runs under
TensorFlow against TensorFlow servers (the reference), under TensorFlow against tensorweave
servers, and under tensorweave against TensorFlow servers; all three print the same values.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from tests.interop.tf_cluster import (
    PROGRAMS,
    TF_READY_TIMEOUT_S,
    cluster_dict,
    run_program,
    servers,
    tw_python,
)

pytestmark = pytest.mark.interop

TASKS = [("ps", 0), ("worker", 0), ("worker", 1)]
EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "examples")


def _addresses(cluster: dict[str, list[str]]) -> list[str]:
    return [cluster["ps"][0], *cluster["worker"]]


@pytest.fixture(scope="module")
def tf_cluster(tf_python):
    cluster = cluster_dict()
    with servers(TASKS, cluster, tf_python):
        yield cluster


@pytest.fixture(scope="module")
def reference(tf_python, tf_cluster) -> dict:
    """The snippets' values: a TensorFlow client against TensorFlow servers."""
    return run_program(tf_python, "seed_snippets.py", "tensorflow", *_addresses(tf_cluster))


def _assert_same(got: dict, want: dict) -> None:
    for key in ("hello", "shared_before", "shared_after", "increment", "extended",
                "mlp_sgd_step", "mlp_adam_step"):
        assert got[key] == want[key], key
    assert got["trace"] == want["trace"]  # var and AssignAdd ran on /job:ps
    assert {d for d, _ in got["trace"]} == {"/job:ps/replica:0/task:0/device:CPU:0"}
    for key in ("mlp_sgd", "mlp_adam"):
        np.testing.assert_allclose(got[key], want[key], rtol=1e-5)
    assert want["mlp_adam"][-1] < 0.5 * want["mlp_adam"][0]
    assert want["extended"] == [30.0, 31.0]


def test_tensorflow_client_against_tensorweave_servers(tf_python, reference):
    cluster = cluster_dict()
    with servers(TASKS, cluster, None):
        got = run_program(tf_python, "seed_snippets.py", "tensorflow", *_addresses(cluster))
    _assert_same(got, reference)
    # TF 2.x's compat.v1 default: resource variables, run by tensorweave's ps.
    assert got["counter_op"] == got["mlp_sgd_var_op"] == "VarHandleOp"


def test_tensorweave_client_against_tensorflow_servers(tf_cluster, reference):
    got = run_program(tw_python(), "seed_snippets.py", "tensorweave", *_addresses(tf_cluster))
    _assert_same(got, reference)
    assert got["counter_op"] == "VariableV2"  # tensorweave's TF1 default: ref variables
    assert got["mlp_sgd_var_op"] == "VarHandleOp"


@pytest.fixture(scope="module")
def digits_npz(tmp_path_factory) -> str:
    sys.path.insert(0, EXAMPLES)
    try:
        import digits_data
    finally:
        sys.path.remove(EXAMPLES)
    split = digits_data.load_digits_split(0)
    path = str(tmp_path_factory.mktemp("digits") / "digits.npz")
    np.savez(path, x_train=split.x_train, y_train=split.y_train, x_test=split.x_test,
             y_test=split.y_test)
    return path


def _wait_all(procs: list[subprocess.Popen], timeout: float) -> list[str]:
    outs = []
    try:
        for p in procs:
            outs.append(p.communicate(timeout=timeout)[0])
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait(10)
    for p, out in zip(procs, outs):
        assert p.returncode == 0, out[-4000:]
    return outs


def _last_json(out: str) -> dict:
    return json.loads([ln for ln in out.splitlines() if ln.startswith("{")][-1])


def test_tensorflow_ps_with_tensorweave_workers_trains_digits(tf_python):
    """examples/trainer.py (tensorweave) on two workers, the ps a TensorFlow server."""
    cluster = cluster_dict()
    with servers([("ps", 0)], cluster, tf_python):
        flags = [f"--ps_hosts={cluster['ps'][0]}",
                 f"--worker_hosts={','.join(cluster['worker'])}", "--job_name=worker",
                 "--train_steps=300"]
        procs = [subprocess.Popen([tw_python(), os.path.join(EXAMPLES, "trainer.py"), *flags,
                                   f"--task_index={i}"], stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True) for i in range(2)]
        outs = _wait_all(procs, 400)
    records = [_last_json(out) for out in outs]
    # NOTE: a worker's last global-step read may miss the other worker's final increment,
    # so the steps done are counted from the workers' own counts (as the other case does).
    assert sum(r["local_steps"] for r in records) >= 300, records
    # The final model: a worker that stops first evaluates while the other still trains
    # (asynchronous updates), as tests/multiprocess/training judges it too.
    assert max(r["test_accuracy"] for r in records) >= 0.95, records


def test_tensorweave_ps_with_tensorflow_workers_trains_digits(tf_python, digits_npz):
    """Two TensorFlow workers (tf_programs/digits_worker.py), the ps `tensorweave server`."""
    cluster = cluster_dict()
    with servers([("ps", 0)], cluster, None):
        procs = [subprocess.Popen([tf_python, os.path.join(PROGRAMS, "digits_worker.py"),
                                   json.dumps(cluster), str(i), digits_npz, "300"],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                 for i in range(2)]
        outs = _wait_all(procs, 400 + TF_READY_TIMEOUT_S)
    records = [_last_json(out) for out in outs]
    assert sum(r["local_steps"] for r in records) >= 300, records
    # The final model: a worker that stops first evaluates while the other still trains
    # (asynchronous updates), as tests/multiprocess/training judges it too.
    assert max(r["test_accuracy"] for r in records) >= 0.95, records


@pytest.mark.parametrize("server_kinds,client", [
    (("tensorweave", "tensorweave"), "tensorflow"),
    (("tensorweave", "tensorweave"), "tensorweave"),
    (("tensorflow", "tensorflow"), "tensorweave"),
    (("tensorweave", "tensorflow"), "tensorweave"),
    (("tensorweave", "tensorflow"), "tensorflow"),
])
def test_cluster_spec_propagation_across_implementations(tf_python, server_kinds, client):
    """Two servers that know only themselves (`create_local_server`'s one-task cluster)
    serve a session as /job:worker/task:0 and task:1 of its `ConfigProto.cluster_def`;
    in the mixed cases a tensorweave master drives a TensorFlow task:1 (strings and floats
    crossing both ways)."""
    addresses = [cluster_dict(0, 1)["worker"][0] for _ in range(2)]
    with contextlib.ExitStack() as stack:
        for address, kind in zip(addresses, server_kinds):
            stack.enter_context(servers([("localhost", 0)], {"localhost": [address]},
                                        tf_python if kind == "tensorflow" else None))
        python = tf_python if client == "tensorflow" else tw_python()
        got = run_program(python, "propagation_client.py", client, *addresses)
    assert got["value"] == 50.0
    assert got["strings"] == ["ab+ab|xab", "cde+cde|ycde"]
    assert got["devices"] == ["/job:worker/replica:0/task:0/device:CPU:0",
                              "/job:worker/replica:0/task:1/device:CPU:0"]
