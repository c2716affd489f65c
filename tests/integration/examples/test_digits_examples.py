"""The digits examples train to >= 0.95 test accuracy (the training library's acceptance
tests): the MLP in 2,000 SGD steps, the CNN in its default 1,000 steps. Each runs in
process through its `main` and must print `test accuracy: ...` last."""

from __future__ import annotations

import importlib
import pathlib
import sys

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parents[3] / "examples"


def _load(name: str):
    """The example module `name` (the examples import each other by plain name)."""
    if str(EXAMPLES) not in sys.path:
        sys.path.insert(0, str(EXAMPLES))
    return importlib.import_module(name)


def _check(capsys, accuracy: float) -> None:
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last == f"test accuracy: {accuracy:.3f}"
    assert accuracy >= 0.95, last


def test_digits_data_split_and_batches():
    data = _load("digits_data")
    split = data.load_digits_split(seed=0)
    assert split.x_train.shape == (1437, 64) and split.x_test.shape == (360, 64)
    assert split.x_train.dtype.name == "float32"
    assert 0.0 <= split.x_train.min() and split.x_train.max() <= 1.0
    again = data.load_digits_split(seed=0)
    assert (again.y_test == split.y_test).all()
    batches = data.minibatches(split.x_train, split.y_train, 128, seed=3)
    first = [next(batches)[1] for _ in range(12)]
    replay = data.minibatches(split.x_train, split.y_train, 128, seed=3)
    assert all((next(replay)[1] == y).all() for y in first)
    assert all(y.shape == (128,) for y in first)
    with pytest.raises(ValueError, match="batch_size"):
        next(data.minibatches(split.x_train, split.y_train, 0))


def test_digits_mlp_reaches_95_percent_in_2000_steps(capsys):
    mlp = _load("digits_mlp")
    accuracy = mlp.main(["--steps", "2000", "--batch-size", "128", "--learning-rate", "0.1"])
    _check(capsys, accuracy)


def test_digits_cnn_reaches_95_percent(capsys):
    cnn = _load("digits_cnn")
    _check(capsys, cnn.main([]))
