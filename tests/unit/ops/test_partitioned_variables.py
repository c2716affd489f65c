"""Partitioners, `PartitionedVariable`, `get_variable(partitioner=...)`, and saving parts
as slices (follows TF's `partitioned_variables_test.py` and `variable_scope_test.py`)."""

from __future__ import annotations

import logging

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.device_spec import canonical_name
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.ops import variable_scope as vs
from tensorweave.ops.partitioned_variables import (
    PartitionedVariable,
    SaveSliceInfo,
    fixed_size_partitioner,
    min_max_variable_partitioner,
    variable_axis_size_partitioner,
)
from tensorweave.ops.variable_scope import create_partitioned_variables
from tensorweave.training import checkpoint_management as cm
from tensorweave.training.device_setter import replica_device_setter
from tensorweave.training.saver import Saver


@pytest.fixture(autouse=True)
def graph():
    with tf.Graph().as_default() as g:
        yield g


def _specs(parts):
    return [p._get_save_slice_info().spec for p in parts]


# ---------------------------------------------------------------------- partitioners
@pytest.mark.parametrize(
    "num_shards, axis, shape, expected",
    [(4, 0, [10, 3], [4, 1]), (4, 0, [2, 3], [2, 1]), (3, 1, [2, 7], [1, 3]), (1, 0, [5], [1])],
)
def test_fixed_size_partitioner(num_shards, axis, shape, expected):
    fn = fixed_size_partitioner(num_shards, axis)
    assert fn(shape=TensorShape(shape), dtype=tf.float32) == expected


@pytest.mark.parametrize(
    "max_partitions, axis, min_slice_size, shape, expected",
    [
        (100, 0, 2 << 10, [2048], [4]),  # 8 KiB / 2 KiB
        (100, 0, 256 << 10, [2048, 1024], [32, 1]),  # 8 MiB / 256 KiB
        (16, 0, 256 << 10, [2048, 1024], [16, 1]),  # capped by max_partitions
        (100, 1, 256 << 10, [1024, 1024], [1, 16]),
        (100, 1, 1, [1024, 3], [1, 3]),  # capped by the dimension
        (100, 0, 256 << 10, [10, 10], [1, 1]),  # small: one part
    ],
)
def test_min_max_variable_partitioner(max_partitions, axis, min_slice_size, shape, expected):
    fn = min_max_variable_partitioner(max_partitions, axis, min_slice_size)
    assert fn(shape=TensorShape(shape), dtype=tf.float32) == expected


def test_min_max_variable_partitioner_strings_and_errors():
    fn = min_max_variable_partitioner(100, 0, 1 << 10, bytes_per_string_element=8)
    assert fn(shape=TensorShape([512]), dtype=tf.string) == [4]  # 4 KiB / 1 KiB
    with pytest.raises(ValueError, match="Can not partition variable along axis 2"):
        min_max_variable_partitioner(2, axis=2)(shape=TensorShape([4, 4]), dtype=tf.float32)


@pytest.mark.parametrize(
    "axis, max_shard_bytes, max_shards, expected",
    [
        # float32 [4, 8, 16, 32]: a slice is 16384, 8192, 4096, 2048 bytes on axes 0..3.
        (0, 131072, None, [1, 1, 1, 1]),
        (1, 65536, None, [1, 1, 1, 1]),  # exactly fits
        (2, 32768, None, [1, 1, 2, 1]),  # 8 slices per shard
        (3, 2048, None, [1, 1, 1, 32]),
        (3, 1024, None, [1, 1, 1, 32]),  # a slice is bigger than the limit: one per shard
        (3, 1024, 2, [1, 1, 1, 2]),  # max_shards wins
    ],
)
def test_variable_axis_size_partitioner(axis, max_shard_bytes, max_shards, expected):
    fn = variable_axis_size_partitioner(max_shard_bytes, axis=axis, max_shards=max_shards)
    assert fn(shape=TensorShape([4, 8, 16, 32]), dtype=tf.float32) == expected


def test_variable_axis_size_partitioner_strings_and_errors():
    fn = variable_axis_size_partitioner(64, bytes_per_string_element=8)
    assert fn(shape=TensorShape([16, 2]), dtype=tf.string) == [4, 1]  # 16 B/slice, 4/shard
    with pytest.raises(ValueError, match="must be positive"):
        variable_axis_size_partitioner(0)
    with pytest.raises(ValueError, match="max_shards must be positive"):
        variable_axis_size_partitioner(10, max_shards=-1)
    with pytest.raises(ValueError, match="not a TensorShape"):
        fn(shape=[16, 2], dtype=tf.string)
    with pytest.raises(ValueError, match="not fully defined"):
        fn(shape=TensorShape([None, 2]), dtype=tf.string)
    with pytest.raises(ValueError, match="not a DType"):
        fn(shape=TensorShape([16, 2]), dtype="string")


# ---------------------------------------------------------------- get_variable parts
def test_parts_names_shapes_offsets_and_collections():
    with tf.variable_scope("scope", partitioner=fixed_size_partitioner(4)):
        v = tf.get_variable("v", [10, 3])
    assert isinstance(v, PartitionedVariable)
    assert v.name == "scope/v" and v.dtype == tf.float32
    assert v.get_shape().as_list() == [10, 3] and v.shape.as_list() == [10, 3]
    assert v._get_partitions() == [4, 1] and len(v) == 4
    assert [p.name for p in v] == [f"scope/v/part_{i}:0" for i in range(4)]
    assert [p.get_shape().as_list() for p in v] == [[3, 3], [3, 3], [2, 3], [2, 3]]
    assert _specs(v) == ["10 3 0,3:0,3", "10 3 3,3:0,3", "10 3 6,2:0,3", "10 3 8,2:0,3"]
    info = v._get_variable_list()[2]._get_save_slice_info()
    assert (info.full_name, info.full_shape, info.var_offset, info.var_shape) == (
        "scope/v",
        [10, 3],
        [6, 0],
        [2, 3],
    )
    parts = list(v)
    assert tf.global_variables() == parts and tf.trainable_variables() == parts
    w = tf.get_variable("w", [4], partitioner=fixed_size_partitioner(2), trainable=False)
    assert tf.trainable_variables() == parts and tf.global_variables() == parts + list(w)


def test_uneven_partitions_follow_tf_rule():
    # TF's partitioned_variables_test: 43 columns in 1..5 parts.
    expected = {
        2: ["20 43 0,20:0,22", "20 43 0,20:22,21"],
        3: ["20 43 0,20:0,15", "20 43 0,20:15,14", "20 43 0,20:29,14"],
        5: [
            "20 43 0,20:0,9",
            "20 43 0,20:9,9",
            "20 43 0,20:18,9",
            "20 43 0,20:27,8",
            "20 43 0,20:35,8",
        ],
    }
    for n, specs in expected.items():
        v = tf.get_variable(f"v{n}", [20, 43], partitioner=fixed_size_partitioner(n, axis=1))
        assert _specs(v) == specs


def test_value_initializer_reassembles_and_as_tensor():
    value = np.arange(30, dtype=np.float32).reshape(10, 3)
    v = tf.get_variable("v", initializer=tf.constant(value), partitioner=fixed_size_partitioner(3))
    a = tf.get_variable(
        "a",
        [5, 2],
        initializer=np.arange(10).reshape(5, 2),
        dtype=tf.int64,
        partitioner=fixed_size_partitioner(2),
    )
    t = v.as_tensor()
    assert t.name == "v:0" and t.shape.as_list() == [10, 3]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(t), value)
        np.testing.assert_array_equal(sess.run(tf.convert_to_tensor(v)), value)
        np.testing.assert_array_equal(sess.run(a.as_tensor()), np.arange(10).reshape(5, 2))
        np.testing.assert_array_equal(sess.run(tf.reduce_sum(v)), value.sum())
    assert a.dtype == tf.int64


def test_initializer_gets_partition_info_of_the_full_shape():
    seen = []

    def init(shape, dtype=None, partition_info=None):
        seen.append((shape, partition_info.full_shape, partition_info.var_offset))
        return tf.zeros(shape, dtype)

    tf.get_variable("v", [7, 2], initializer=init, partitioner=fixed_size_partitioner(3))
    assert seen == [([3, 2], [7, 2], [0, 0]), ([2, 2], [7, 2], [3, 0]), ([2, 2], [7, 2], [5, 0])]


def test_random_initializers_use_the_full_shape():
    # glorot_uniform's limit comes from the full [30, 100] fans (sqrt(6 / 130) ~ 0.215),
    # not the parts' [3, 100] ones (~ 0.241).
    v = tf.get_variable(
        "v",
        [30, 100],
        initializer=tf.glorot_uniform_initializer(),
        partitioner=fixed_size_partitioner(10),
    )
    d = tf.get_variable("d", [30, 100], partitioner=fixed_size_partitioner(10))  # default
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for value in sess.run([v.as_tensor(), d.as_tensor()]):
            limit = np.sqrt(6.0 / 130)
            assert np.abs(value).max() <= limit and np.abs(value).max() > 0.9 * limit
            assert len({value[3 * i, 0] for i in range(10)}) == 10  # parts differ


def test_constant_initializer_per_part():
    # As TF 1.x: an initializer object is called with each part's shape, so a scalar fills
    # every part, while a full-size array has too many elements for a part.
    v = tf.get_variable(
        "v", [4, 2], initializer=tf.constant_initializer(7.0), partitioner=fixed_size_partitioner(2)
    )
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(v.as_tensor()), np.full([4, 2], 7.0))
    with pytest.raises(ValueError, match="Too many elements"):
        tf.get_variable(
            "w",
            [4, 2],
            initializer=tf.constant_initializer(np.arange(8.0)),
            partitioner=fixed_size_partitioner(2),
        )


def test_partitioner_from_scope_and_scalars():
    with tf.variable_scope("s", partitioner=fixed_size_partitioner(2)):
        v = tf.get_variable("v", [4])
        s = tf.get_variable("s", [])
    assert isinstance(v, PartitionedVariable) and s.name == "s/s:0"


# -------------------------------------------------------------------------- reuse
def test_reuse_returns_the_same_partitioned_variable():
    part = fixed_size_partitioner(2)
    with tf.variable_scope("s", partitioner=part):
        v = tf.get_variable("v", [4, 2])
    with tf.variable_scope("s", reuse=True):
        assert tf.get_variable("v") is v  # no partitioner needed
        assert tf.get_variable("v", [4, 2], partitioner=part) is v
    with tf.variable_scope("s", reuse=tf.AUTO_REUSE, partitioner=part):
        assert tf.get_variable("v", [4, 2]) is v
        assert isinstance(tf.get_variable("new", [4, 2]), PartitionedVariable)


def test_reuse_errors():
    part = fixed_size_partitioner(2)
    v = tf.get_variable("v", [4, 2], partitioner=part)
    del v
    with pytest.raises(ValueError, match="Partitioned variable with name v already exists"):
        tf.get_variable("v", [4, 2], partitioner=part)
    with tf.variable_scope(tf.get_variable_scope(), reuse=True):
        with pytest.raises(ValueError, match="specified partitions \\[4, 1\\] and found"):
            tf.get_variable("v", [4, 2], partitioner=fixed_size_partitioner(4))
        with pytest.raises(ValueError, match="specified shape \\(5, 2\\)"):
            tf.get_variable("v", [5, 2], partitioner=part)
        with pytest.raises(ValueError, match="specified dtype int32"):
            tf.get_variable("v", [4, 2], dtype=tf.int32, partitioner=part)
        with pytest.raises(ValueError, match="PartitionedVariable missing does not exist"):
            tf.get_variable("missing", [4, 2], partitioner=part)
    with pytest.raises(ValueError, match="No partitioner was provided, but a partitioned"):
        tf.get_variable("v", [4, 2])
    tf.get_variable("plain", [4, 2])
    with pytest.raises(ValueError, match="A partitioner was provided, but an unpartitioned"):
        tf.get_variable("plain", [4, 2], partitioner=part)


def test_bad_partitioners():
    with pytest.raises(ValueError, match="must be fully defined"):
        tf.get_variable("a", initializer=np.zeros([4]), partitioner=fixed_size_partitioner(2))
    with pytest.raises(ValueError, match="zero partitions"):
        tf.get_variable("b", [4], partitioner=lambda shape, dtype: [0])
    with pytest.raises(ValueError, match="one dimension"):
        tf.get_variable("c", [4, 4], partitioner=lambda shape, dtype: [2, 2])
    with pytest.raises(ValueError, match="does not match the Variable's rank"):
        tf.get_variable("d", [4, 4], partitioner=lambda shape, dtype: [2])


# ----------------------------------------------------------------- PartitionedVariable
def test_assign_splits_the_full_value():
    v = tf.get_variable(
        "v", [5, 2], initializer=tf.zeros_initializer(), partitioner=fixed_size_partitioner(2)
    )
    new = np.arange(10, dtype=np.float32).reshape(5, 2)
    assigns = v.assign(new)
    adds = v.assign_add([np.ones([3, 2], np.float32), np.ones([2, 2], np.float32)])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(assigns)
        np.testing.assert_array_equal(sess.run(v.as_tensor()), new)
        sess.run(adds)
        np.testing.assert_array_equal(sess.run(v.as_tensor()), new + 1)
    assert len(v.assign(new, read_value=False)) == 2


def test_conversion_errors_and_iteration():
    v = tf.get_variable("v", [4], partitioner=fixed_size_partitioner(2))
    with pytest.raises(ValueError, match="Incompatible type conversion"):
        tf.convert_to_tensor(v, dtype=tf.int32)
    with pytest.raises(NotImplementedError, match="reference"):
        tf.convert_to_tensor(v, as_ref=True)
    assert [p.name for p in iter(v)] == ["v/part_0:0", "v/part_1:0"]
    with pytest.raises(TypeError, match="variable_list is not a list"):
        PartitionedVariable("x", [4], tf.float32, iter(v), [2])
    with pytest.raises(ValueError, match="save_slice_info"):
        PartitionedVariable("x", [4], tf.float32, [tf.Variable([1.0])], [1])


def test_create_partitioned_variables(caplog):
    value = tf.constant([[1, 2, 3, 4], [5, 6, 7, 8]])
    with caplog.at_level(logging.WARNING), tf.variable_scope("hi"):
        vs1 = create_partitioned_variables([2, 4], [1, 2], value)
        vs2 = create_partitioned_variables([2, 4], [1, 2], value)
    assert "deprecated" in caplog.text
    assert [v.name for v in vs1] == [
        "hi/PartitionedVariable/part_0:0",
        "hi/PartitionedVariable/part_1:0",
    ]
    assert vs2[0]._get_save_slice_info().full_name == "hi/PartitionedVariable_1"
    assert _specs(vs1) == ["2 4 0,2:0,2", "2 4 0,2:2,2"]
    assert [v.dtype.base_dtype for v in vs1] == [tf.int32, tf.int32]
    with pytest.raises(ValueError):
        create_partitioned_variables([10, 43], [11, 1], tf.zeros([10, 43]))
    with pytest.raises(ValueError, match="must have the length"):
        create_partitioned_variables([10], [1, 1], tf.zeros([10]))
    with tf.variable_scope("g", custom_getter=lambda getter, *a, **k: getter(*a, **k)):
        with pytest.raises(ValueError, match="custom getter"):
            vs._get_partitioned_variable("x", shape=[2], partitioner=fixed_size_partitioner(2))


# ----------------------------------------------------------------------- placement
def test_parts_spread_over_ps_tasks():
    cluster = {"ps": ["ps0:1", "ps1:1"], "worker": ["w0:1"]}
    with tf.device(replica_device_setter(cluster=cluster)):
        v = tf.get_variable("emb", [9, 4], partitioner=fixed_size_partitioner(3))
        w = tf.get_variable("w", [2])
        y = tf.reduce_sum(v.as_tensor())
    assert [canonical_name(p.device) for p in v] == [
        "/job:ps/task:0",
        "/job:ps/task:1",
        "/job:ps/task:0",
    ]
    assert [canonical_name(p.initializer.device) for p in v] == [
        canonical_name(p.device) for p in v
    ]
    assert canonical_name(w.device) == "/job:ps/task:1"
    assert canonical_name(y.device) == "/job:worker"


# ---------------------------------------------------------------------------- saving
@pytest.mark.parametrize("sharded", [False, True])
def test_saver_round_trip_and_repartitioned_restore(tmp_path, sharded):
    value = np.random.RandomState(1).rand(10, 3).astype(np.float32)
    v = tf.get_variable("v", initializer=tf.constant(value), partitioner=fixed_size_partitioner(4))
    tf.get_variable("b", [2], initializer=tf.ones_initializer())
    saver = Saver(sharded=sharded)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        prefix = saver.save(sess, str(tmp_path / "model"))
        sess.run(v.assign(np.zeros_like(value)))
        saver.restore(sess, prefix)
        np.testing.assert_array_equal(sess.run(v.as_tensor()), value)
    reader = cm.NewCheckpointReader(prefix)
    assert reader.get_variable_to_shape_map() == {"v": [10, 3], "b": [2]}
    np.testing.assert_array_equal(reader.get_tensor("v"), value)
    for partitioner in (fixed_size_partitioner(3), None):
        with tf.Graph().as_default():
            other = tf.get_variable("v", [10, 3], partitioner=partitioner)
            with tf.Session() as sess:
                Saver([*(other if partitioner else [other])]).restore(sess, prefix)
                t = other.as_tensor() if partitioner else other
                np.testing.assert_array_equal(sess.run(t), value)


def test_saver_var_list_forms_and_errors(tmp_path):
    v = tf.get_variable("v", [4, 2], partitioner=fixed_size_partitioner(2))
    w = tf.get_variable("w", [4, 2], partitioner=fixed_size_partitioner(2))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        expected = sess.run(v.as_tensor())
        for var_list in ([v], {"v": v}, {"v": list(v)}):
            prefix = Saver(var_list).save(sess, str(tmp_path / "m"), write_meta_graph=False)
            np.testing.assert_array_equal(cm.load_variable(prefix, "v"), expected)
    with pytest.raises(ValueError, match="Slices must all be from the same tensor"):
        Saver({"x": [list(v)[0], list(w)[0]]})
    plain = tf.Variable([1.0, 2.0], name="a")
    part = tf.Variable([1.0], name="q")
    part._set_save_slice_info(SaveSliceInfo("a", [2], [0], [1]))
    with pytest.raises(ValueError, match="Mixing slices and non-slices with the same name: a"):
        Saver([plain, part])
    with pytest.raises(ValueError, match="At least two variables have the same name: v"):
        Saver([v, v])
    with pytest.raises(ValueError, match="Slices must all be slices"):
        Saver({"x": [tf.Variable([1.0], name="plain")]})


def test_restore_uncovered_slice_fails(tmp_path):
    v = tf.get_variable("v", [4, 2], partitioner=fixed_size_partitioner(2))
    saver = Saver({"v": [list(v)[0]]})  # saves rows 0-1 only
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        prefix = saver.save(sess, str(tmp_path / "half"), write_meta_graph=False)
        with pytest.raises(tf.errors.InvalidArgumentError, match="not fully covered"):
            Saver({"v": v}).restore(sess, prefix)
