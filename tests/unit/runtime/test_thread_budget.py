"""The BLAS thread budget: `ConfigProto.intra_op_parallelism_threads` and the shared-host
default (`runtime.thread_budget`)."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.distributed.server import tasks_on_host
from tensorweave.runtime import thread_budget


@pytest.fixture
def restore_blas():
    before = thread_budget.blas_threads()
    yield before
    thread_budget.set_blas_threads(before)


def test_default_threads_share_the_cores():
    assert thread_budget.default_threads(16, 3) == 5
    assert thread_budget.default_threads(2, 3) == 1
    assert thread_budget.default_threads(8, 1) == 8
    assert thread_budget.default_threads(4, 0) == 4


def test_host_cores_is_positive():
    assert thread_budget.host_cores() >= 1


def test_set_blas_threads_rejects_zero():
    with pytest.raises(ValueError, match="BLAS threads must be >= 1"):
        thread_budget.set_blas_threads(0)


def test_explicit_intra_op_threads_size_the_pool(restore_blas):
    config = tf.ConfigProto(intra_op_parallelism_threads=1)
    assert thread_budget.apply_config(config) == 1
    assert thread_budget.blas_threads() == 1
    np.dot(np.ones((64, 64)), np.ones((64, 64)))


def test_session_config_sizes_the_pool(restore_blas):
    thread_budget.set_blas_threads(2)
    with tf.Session(config=tf.ConfigProto(intra_op_parallelism_threads=1)):
        assert thread_budget.blas_threads() == 1


def test_session_without_intra_op_leaves_the_pool(restore_blas):
    thread_budget.set_blas_threads(1)
    assert thread_budget.apply_config(tf.ConfigProto()) is None
    with tf.Session():
        assert thread_budget.blas_threads() == 1


def test_the_default_only_lowers_the_pool(restore_blas):
    thread_budget.set_blas_threads(1)
    assert thread_budget.apply_config(None, tasks_on_host=1) == 1
    assert thread_budget.blas_threads() == 1


def test_the_default_is_the_share_of_the_cores(restore_blas):
    thread_budget.set_blas_threads(max(1, thread_budget.host_cores()))
    tasks = thread_budget.host_cores() + 1
    assert thread_budget.apply_config(tf.ConfigProto(), tasks_on_host=tasks) == 1
    assert thread_budget.blas_threads() == 1


def test_tasks_on_host_counts_local_addresses():
    cluster = tf.train.ClusterSpec({"ps": ["127.0.0.1:1", "localhost:2"],
                                    "worker": ["192.0.2.1:3", "127.0.0.1:4"]})
    assert tasks_on_host(cluster) == 3
    assert tasks_on_host(tf.train.ClusterSpec({"worker": ["192.0.2.7:1"]})) == 1


def test_server_applies_its_default_and_its_config(restore_blas):
    thread_budget.set_blas_threads(1)
    server = tf.train.Server({"local": ["localhost:0"]},
                             config=tf.ConfigProto(intra_op_parallelism_threads=1))
    try:
        assert thread_budget.blas_threads() == 1
    finally:
        server.stop()
