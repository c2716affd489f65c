"""A partitioned embedding on a 1-worker / 2-ps in-process cluster.

`fixed_size_partitioner(4)` under `replica_device_setter` puts the parts round robin on
the two ps tasks; a lookup gathers each touched part on its own ps (as
`tf.nn.embedding_lookup` does with `colocate_with`), and a sparse SGD step updates only the
touched rows. `RunOptions(trace_level=FULL_TRACE)` step stats show which task ran what.
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.device_spec import canonical_name
from tensorweave.ops import embedding_ops
from tensorweave.ops.partitioned_variables import fixed_size_partitioner
from tensorweave.testing.cluster import create_local_cluster
from tensorweave.training.device_setter import replica_device_setter

PS0 = "/job:ps/replica:0/task:0/device:CPU:0"
PS1 = "/job:ps/replica:0/task:1/device:CPU:0"
ROWS, DIM, LR = 10, 3, 0.5
IDS = np.array([1, 7, 2], np.int64)  # parts 0 (rows 0-2) and 2 (rows 6-7): both on ps 0


@pytest.fixture
def cluster():
    workers, ps = create_local_cluster(1, 2)
    yield workers[0]
    for server in workers + ps:
        server.stop()


def _trace(sess, fetches):
    metadata = tf.RunMetadata()
    out = sess.run(
        fetches,
        options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
        run_metadata=metadata,
    )
    ran = {d.device: {n.node_name for n in d.node_stats} for d in metadata.step_stats.dev_stats}
    return out, ran


def _lookup_and_update(emb):
    """Per touched part: a gather and a `ScatterSub` of `LR * 1`, both on the part's ps."""
    lookups, updates, touched = [], [], []
    for i, part in enumerate(emb):
        info = part._get_save_slice_info()
        start, size = info.var_offset[0], info.var_shape[0]
        mask = (IDS >= start) & (IDS < start + size)
        if not mask.any():
            continue
        local = IDS[mask] - start
        touched.append(i)
        with tf.colocate_with(part):
            lookups.append(tf.gather(part, local, name=f"gather_part_{i}"))
        delta = tf.IndexedSlices(tf.fill([len(local), DIM], LR), tf.constant(local))
        updates.append(part.scatter_sub(delta, name=f"sgd_part_{i}"))
    return lookups, updates, touched


def test_partitioned_embedding_lookup_and_sparse_update(cluster):
    initial = np.arange(ROWS * DIM, dtype=np.float32).reshape(ROWS, DIM)
    with tf.Graph().as_default():
        with tf.device(replica_device_setter(cluster=cluster.server_def.cluster)):
            emb = tf.get_variable(
                "emb", initializer=tf.constant(initial), partitioner=fixed_size_partitioner(4)
            )
            lookups, updates, touched = _lookup_and_update(emb)
            full = emb.as_tensor()
        assert [canonical_name(p.device) for p in emb] == [
            "/job:ps/task:0",
            "/job:ps/task:1",
            "/job:ps/task:0",
            "/job:ps/task:1",
        ]
        assert [p.get_shape().as_list() for p in emb] == [[3, 3], [3, 3], [2, 3], [2, 3]]
        assert touched == [0, 2]
        assert all(canonical_name(u.device) == "/job:ps/task:0" for u in updates)
        with tf.Session(cluster.target) as sess:
            _, ran = _trace(sess, tf.global_variables_initializer())
            assert {"emb/part_0/Assign", "emb/part_2/Assign"} <= ran[PS0]
            assert {"emb/part_1/Assign", "emb/part_3/Assign"} <= ran[PS1]

            (rows_0, rows_2), ran = _trace(sess, lookups)
            np.testing.assert_array_equal(rows_0, initial[[1, 2]])
            np.testing.assert_array_equal(rows_2, initial[[7]])
            assert {"gather_part_0", "gather_part_2"} <= ran[PS0]
            assert not any("gather" in n for n in ran.get(PS1, ()))

            _, ran = _trace(sess, updates)
            assert {"sgd_part_0", "sgd_part_2"} <= ran[PS0]
            assert not any(n.startswith(("sgd", "emb")) for n in ran.get(PS1, ()))

            expected = initial.copy()
            expected[IDS] -= LR
            np.testing.assert_array_equal(sess.run(full), expected)
            changed = np.nonzero((sess.run(full) != initial).any(axis=1))[0]
            assert changed.tolist() == sorted(IDS.tolist())
    _check_state_is_shared(cluster, expected)


def _check_state_is_shared(cluster, expected):
    """Another client graph naming the same parts reads the values their ps tasks hold."""
    with tf.Graph().as_default():
        with tf.device(replica_device_setter(cluster=cluster.server_def.cluster)):
            emb = tf.get_variable("emb", [ROWS, DIM], partitioner=fixed_size_partitioner(4))
        with tf.Session(cluster.target) as sess:
            np.testing.assert_array_equal(sess.run(emb.as_tensor()), expected)


@pytest.mark.parametrize("sharded", [False, True])
def test_saver_round_trip_of_parts_on_two_ps(cluster, tmp_path, sharded):
    from tensorweave.training.saver import Saver

    value = np.random.RandomState(0).rand(ROWS, DIM).astype(np.float32)
    with tf.Graph().as_default():
        with tf.device(replica_device_setter(cluster=cluster.server_def.cluster)):
            emb = tf.get_variable(
                "saved", initializer=tf.constant(value), partitioner=fixed_size_partitioner(4)
            )
            saver = Saver(sharded=sharded)
        with tf.Session(cluster.target) as sess:
            sess.run(tf.global_variables_initializer())
            prefix = saver.save(sess, str(tmp_path / "model"))
            sess.run(emb.assign(np.zeros_like(value)))
            saver.restore(sess, prefix)
            np.testing.assert_array_equal(sess.run(emb.as_tensor()), value)
    reader = tf.train.NewCheckpointReader(prefix)
    assert reader.get_variable_to_shape_map() == {"saved": [ROWS, DIM]}
    np.testing.assert_array_equal(reader.get_tensor("saved"), value)
    # Restored into another partitioning (3 parts: 4, 3, 3 rows) in a local session (on
    # the cluster, `saved/part_0` of another shape would clash with the ps's variable).
    with tf.Graph().as_default():
        other = tf.get_variable("saved", [ROWS, DIM], partitioner=fixed_size_partitioner(3))
        saver = Saver()
        with tf.Session() as sess:
            saver.restore(sess, prefix)
            np.testing.assert_array_equal(sess.run(other.as_tensor()), value)


def test_embedding_lookup_over_parts(cluster):
    initial = np.arange(ROWS * DIM, dtype=np.float32).reshape(ROWS, DIM)
    ids = np.array([1, 7, 2, 9], np.int64)
    with tf.Graph().as_default():
        with tf.device(replica_device_setter(cluster=cluster.server_def.cluster)):
            emb = tf.get_variable(
                "emb", initializer=tf.constant(initial), partitioner=fixed_size_partitioner(4)
            )
            # "div" gives the first ROWS % 4 parts one extra row, like the partitioner.
            rows = embedding_ops.embedding_lookup(emb, tf.constant(ids), partition_strategy="div")
        with tf.Session(cluster.target) as sess:
            sess.run(tf.global_variables_initializer())
            value, ran = _trace(sess, rows)
    np.testing.assert_array_equal(value, initial[ids])
    # Each part's gather runs on the part's ps (colocated), not on the worker.
    assert any("Gather" in n for n in ran[PS0]) and any("Gather" in n for n in ran[PS1])
