"""`tf.app`: a program's entry point with flag parsing (follows `tf.compat.v1.app`, which
TensorFlow builds on absl-py's `absl.app`).

`tf.app.run(main)` parses the command line into `tf.flags.FLAGS`, calls `main(argv)` with
the program name and the arguments that are not flags, and exits with its return value.
Difference from TensorFlow 1.15: an unknown flag is an error (absl's message names it and
the program exits with status 1) instead of being passed through to `main`, so that a
mistyped flag is never silently ignored.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from absl import app as _absl_app

from tensorweave import flags  # noqa: F401  (`tf.app.flags`, as in TensorFlow)


def run(main: Callable[[list[str]], Any] | None = None,
        argv: Sequence[str] | None = None) -> NoReturn:
    """Parses flags and runs `main` (follows `tf.app.run`).

    Args:
      main: called with the remaining arguments (`argv[0]` first); default: the `main`
        function of the `__main__` module.
      argv: the command line (default `sys.argv`).

    Raises:
      SystemExit: always: with `main`'s return value, or 1 after printing absl's error
        for a bad command line (e.g. `Unknown command line flag 'x'`).
    """
    main = main or sys.modules["__main__"].main
    _absl_app.run(main=main, argv=list(argv) if argv is not None else None)
    raise AssertionError("absl.app.run returned")  # pragma: no cover  (it always exits)


__all__ = ["flags", "run"]
