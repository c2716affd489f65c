"""`tf.logging` and `tf.get_logger` on the standard `logging` module (TF's levels)."""

from __future__ import annotations

import logging

import pytest

import tensorweave as tf


@pytest.fixture
def records(caplog):
    caplog.set_level(logging.DEBUG, logger="tensorweave")
    yield caplog
    tf.logging.get_logger().setLevel(logging.NOTSET)


def test_levels_are_tensorflows():
    assert (tf.logging.DEBUG, tf.logging.INFO, tf.logging.WARN, tf.logging.ERROR,
            tf.logging.FATAL) == (10, 20, 30, 40, 50)


def test_logger_is_tensorweaves_and_defaults_to_warn():
    logger = tf.get_logger()
    assert logger is tf.logging.get_logger() and logger.name == "tensorweave"
    assert logger.level == logging.NOTSET
    assert tf.logging.get_verbosity() == logging.getLogger().getEffectiveLevel()


def test_set_and_get_verbosity(records):
    tf.logging.set_verbosity(tf.logging.ERROR)
    assert tf.logging.get_verbosity() == tf.logging.ERROR
    tf.logging.set_verbosity("INFO")
    assert tf.logging.get_verbosity() == tf.logging.INFO
    with pytest.raises(ValueError):
        tf.logging.set_verbosity("LOUD")


def test_functions_log_at_their_levels(records):
    tf.logging.debug("d %d", 1)
    tf.logging.info("i %s", "x")
    tf.logging.warn("w1")
    tf.logging.warning("w2")
    tf.logging.error("e")
    tf.logging.fatal("f")
    tf.logging.log(tf.logging.INFO, "l %d", 2)
    tf.logging.vlog(tf.logging.WARN, "v")
    tf.logging.TaskLevelStatusMessage("status")
    got = [(r.levelno, r.getMessage()) for r in records.records]
    assert got == [(10, "d 1"), (20, "i x"), (30, "w1"), (30, "w2"), (40, "e"), (50, "f"),
                   (20, "l 2"), (30, "v"), (40, "status")]
    assert all(r.name == "tensorweave" for r in records.records)
    assert records.records[0].filename == "test_tf_logging.py"


def test_verbosity_filters(records):
    tf.logging.set_verbosity(tf.logging.ERROR)
    tf.logging.info("hidden")
    tf.logging.error("shown")
    assert [r.getMessage() for r in records.records] == ["shown"]


def test_log_every_n_and_first_n_count_per_call_site(records):
    for i in range(7):
        tf.logging.log_every_n(tf.logging.INFO, "every %d", 3, i)
    for i in range(5):
        tf.logging.log_first_n(tf.logging.INFO, "first %d", 2, i)
    for flag in (True, False, 1):
        tf.logging.log_if(tf.logging.INFO, "if %s", flag, flag)
    assert [r.getMessage() for r in records.records] == [
        "every 0", "every 3", "every 6", "first 0", "first 1", "if True", "if 1"]


def test_flush_flushes_handlers(records):
    flushed = []

    class Handler(logging.Handler):
        def emit(self, record):
            pass

        def flush(self):
            flushed.append(True)

    handler = Handler()
    tf.logging.get_logger().addHandler(handler)
    try:
        tf.logging.flush()
    finally:
        tf.logging.get_logger().removeHandler(handler)
    assert flushed
