"""`examples/lstm_sequence.py`: the LSTM over digit rows learns in one process (a short
run) and the benchmark script's building blocks run."""

from __future__ import annotations

import importlib
import pathlib
import sys

EXAMPLES = pathlib.Path(__file__).resolve().parents[3] / "examples"


def _load(name: str):
    if str(EXAMPLES) not in sys.path:
        sys.path.insert(0, str(EXAMPLES))
    return importlib.import_module(name)


def test_lstm_sequence_learns_digit_rows(capsys, monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    example = _load("lstm_sequence")
    accuracy = example.main(["--steps", "150", "--units", "32"])
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last == f"test accuracy: {accuracy:.3f}"
    assert accuracy >= 0.8
