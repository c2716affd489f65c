"""`tf.logging`: TensorFlow 1.x's logging functions on the standard `logging` module
(follows `tensorflow/python/platform/tf_logging.py`).

Messages go to the `tensorweave` logger, the parent of the library's own loggers, so
`set_verbosity` also governs tensorweave's messages (as it governs TensorFlow's). Its level
is unset at first, so the root logger's (WARNING) applies, as in TensorFlow. When the
program has configured no root handler, the first use of the logger gives it a stderr
handler in `logging.BASIC_FORMAT`, as TensorFlow's logger does; otherwise records
propagate to the program's handlers only.

TensorFlow's verbosity levels are the standard ones: `DEBUG` 10, `INFO` 20, `WARN` 30,
`ERROR` 40, `FATAL` 50. `fatal` logs at FATAL and does not end the program (as in
TensorFlow's Python logging).
"""

from __future__ import annotations

import logging as _logging
import sys
import threading
from typing import Any

DEBUG = _logging.DEBUG
INFO = _logging.INFO
WARN = _logging.WARN
ERROR = _logging.ERROR
FATAL = _logging.FATAL

_LOGGER_NAME = "tensorweave"
_setup_lock = threading.Lock()
# NOTE: per-call-site counters of log_every_n/log_first_n (TensorFlow keeps the same);
# keys are (file, line) of the caller, bounded by the program's call sites.
_counts: dict[tuple[str, int], int] = {}


def get_logger() -> _logging.Logger:
    """The `tensorweave` logger (follows `tf.get_logger`); see the module docstring."""
    logger = _logging.getLogger(_LOGGER_NAME)
    with _setup_lock:
        if not getattr(logger, "_tensorweave_configured", False):
            if not _logging.getLogger().handlers:
                handler = _logging.StreamHandler(sys.stderr)
                handler.setFormatter(_logging.Formatter(_logging.BASIC_FORMAT, None))
                logger.addHandler(handler)
            logger._tensorweave_configured = True  # type: ignore[attr-defined]
    return logger


def log(level: int, msg: Any, *args: Any, **kwargs: Any) -> None:
    """Logs `msg % args` at `level` (follows `tf.logging.log`)."""
    get_logger().log(level, msg, *args, stacklevel=2, **kwargs)


def debug(msg: Any, *args: Any, **kwargs: Any) -> None:
    """Logs at DEBUG."""
    get_logger().debug(msg, *args, stacklevel=2, **kwargs)


def info(msg: Any, *args: Any, **kwargs: Any) -> None:
    """Logs at INFO."""
    get_logger().info(msg, *args, stacklevel=2, **kwargs)


def warning(msg: Any, *args: Any, **kwargs: Any) -> None:
    """Logs at WARN."""
    get_logger().warning(msg, *args, stacklevel=2, **kwargs)


warn = warning


def error(msg: Any, *args: Any, **kwargs: Any) -> None:
    """Logs at ERROR."""
    get_logger().error(msg, *args, stacklevel=2, **kwargs)


def fatal(msg: Any, *args: Any, **kwargs: Any) -> None:
    """Logs at FATAL (the program goes on, as with TensorFlow's `tf.logging.fatal`)."""
    get_logger().critical(msg, *args, stacklevel=2, **kwargs)


def vlog(level: int, msg: Any, *args: Any, **kwargs: Any) -> None:
    """Logs at `level` (follows `tf.logging.vlog`, which is `log`)."""
    get_logger().log(level, msg, *args, stacklevel=2, **kwargs)


def _count_call_site() -> int:
    frame = sys._getframe(2)
    key = (frame.f_code.co_filename, frame.f_lineno)
    with _setup_lock:
        _counts[key] = _counts.get(key, 0) + 1
        return _counts[key]


def log_every_n(level: int, msg: Any, n: int, *args: Any) -> None:
    """Logs on the 1st, (n+1)th, (2n+1)th, ... call from this call site.

    Follows `tf.logging.log_every_n` (`n` < 1 counts as 1).
    """
    count = _count_call_site()
    if (count - 1) % max(1, n) == 0:
        get_logger().log(level, msg, *args, stacklevel=2)


def log_first_n(level: int, msg: Any, n: int, *args: Any) -> None:
    """Logs only the first `n` calls from this call site (follows `tf.logging.log_first_n`)."""
    if _count_call_site() <= n:
        get_logger().log(level, msg, *args, stacklevel=2)


def log_if(level: int, msg: Any, condition: Any, *args: Any) -> None:
    """Logs when `condition` is true (follows `tf.logging.log_if`)."""
    if condition:
        get_logger().log(level, msg, *args, stacklevel=2)


def flush() -> None:
    """Flushes the handlers of the `tensorweave` logger (follows `tf.logging.flush`)."""
    for handler in get_logger().handlers:
        handler.flush()


def get_verbosity() -> int:
    """The effective level of the `tensorweave` logger (follows `tf.logging.get_verbosity`)."""
    return get_logger().getEffectiveLevel()


def set_verbosity(v: int | str) -> None:
    """Sets the level of the `tensorweave` logger (follows `tf.logging.set_verbosity`).

    Args:
      v: a level number (`tf.logging.INFO`, ...) or name ("INFO").

    Raises:
      ValueError: for an unknown level name.
    """
    get_logger().setLevel(v)


def TaskLevelStatusMessage(msg: Any) -> None:  # noqa: N802  (TensorFlow's name)
    """Logs `msg` at ERROR (follows `tf.logging.TaskLevelStatusMessage`)."""
    get_logger().error(msg, stacklevel=2)


__all__ = [
    "DEBUG", "ERROR", "FATAL", "INFO", "TaskLevelStatusMessage", "WARN", "debug", "error",
    "fatal", "flush", "get_logger", "get_verbosity", "info", "log", "log_every_n",
    "log_first_n", "log_if", "set_verbosity", "vlog", "warn", "warning",
]
