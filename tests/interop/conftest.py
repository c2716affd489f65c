"""The interop tier: a real TensorFlow, run as a separate process, is the reference.

TensorFlow is never imported into the test process (tensorweave never imports it); tests run
scripts with the interpreter named by `TENSORWEAVE_TF_PYTHON` (`make interop` installs one in
`.venv-tf`) and exchange files, GraphDefs and RPCs with it. Without that variable every test
here is skipped with a message saying so.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

TF_PYTHON_ENV = "TENSORWEAVE_TF_PYTHON"
# NOTE: TF's first import takes several seconds on a loaded 2-core box.
TF_TIMEOUT_S = 300


@pytest.fixture(scope="session")
def tf_python() -> str:
    """Path of a Python interpreter that can `import tensorflow` (skips without one)."""
    path = os.environ.get(TF_PYTHON_ENV)
    if not path or not os.path.exists(path):
        pytest.skip(f"interop: set {TF_PYTHON_ENV} to a Python with tensorflow (make interop)")
    return path


def run_tf(tf_python: str, script: str, *args: str, timeout: float = TF_TIMEOUT_S) -> dict:
    """Runs `script` under TensorFlow's interpreter; returns the JSON its last line prints.

    The script gets `tf` as `tensorflow.compat.v1` in graph mode and its arguments in
    `sys.argv[1:]`.
    """
    prelude = (
        "import os, sys, json\n"
        "os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '3')\n"
        "import tensorflow.compat.v1 as tf\n"
        "tf.disable_eager_execution()\n"
    )
    proc = subprocess.run(
        [tf_python, "-c", prelude + textwrap.dedent(script), *args],
        capture_output=True, text=True, timeout=timeout, check=False,
    )
    if proc.returncode != 0:
        tail = proc.stderr[-4000:]
        raise AssertionError(f"TensorFlow script failed ({proc.returncode}):\n{tail}")
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    return json.loads(lines[-1]) if lines else {}


def tw_python() -> str:
    """The interpreter running tensorweave's tests (for tensorweave-side subprocesses)."""
    return sys.executable
