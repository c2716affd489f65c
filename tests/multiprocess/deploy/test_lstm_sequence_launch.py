"""`examples/lstm_sequence.py` between-graph on 1 ps + 2 workers through `tensorweave
launch`: the LSTM's variables live on the ps, both workers train it through their loops
and report a test accuracy; the launcher stops the ps once the workers are done."""

from __future__ import annotations

import io
import pathlib
import re

import pytest

from tensorweave.deploy.launcher import launch

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

EXAMPLE = pathlib.Path(__file__).resolve().parents[3] / "examples" / "lstm_sequence.py"


def test_lstm_sequence_between_graph_with_the_launcher():
    out = io.StringIO()
    result = launch(["python", str(EXAMPLE), "--steps", "200", "--units", "32"], 1, 2,
                    stream=out, color=False)
    text = out.getvalue()
    assert result.returncode == 0, text[-3000:]
    accuracies = [float(a) for a in re.findall(r"worker \d: test accuracy (\d\.\d+)", text)]
    assert len(accuracies) == 2, text[-3000:]
    assert min(accuracies) >= 0.6, text[-3000:]
