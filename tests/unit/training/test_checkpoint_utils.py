"""tf.train.init_from_checkpoint (one-to-one, scope-to-scope, root, partitioned, errors),
warm_start, VocabInfo and checkpoints_iterator (cases after TF's checkpoint_utils_test.py)."""

import numpy as np
import pytest

import tensorweave as tf


def _save(tmp_path):
    prefix = str(tmp_path / "model")
    with tf.Graph().as_default():
        with tf.variable_scope("some_scope"):
            tf.get_variable("my1", initializer=np.arange(6.0).reshape(2, 3))
            with tf.variable_scope("some_other_scope"):
                tf.get_variable("my2", initializer=np.full([4], 7.0))
        tf.get_variable("useful_scope/my4", initializer=np.ones([5, 2]) * 3.0)
        saver = tf.train.Saver()
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            return saver.save(s, prefix)


def _values(variables):
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        return s.run(variables)


def test_one_to_one_and_scope_mappings(tmp_path):
    path = _save(tmp_path)
    with tf.Graph().as_default():
        with tf.variable_scope("a"):
            v1 = tf.get_variable(
                "v1", shape=[2, 3], initializer=tf.zeros_initializer(), dtype=tf.float64
            )
        with tf.variable_scope("b"):
            v2 = tf.get_variable(
                "my2", shape=[4], initializer=tf.zeros_initializer(), dtype=tf.float64
            )
        v3 = tf.get_variable("my4", shape=[5, 2], dtype=tf.float64)
        untouched = tf.get_variable("other", initializer=1.5)
        tf.train.init_from_checkpoint(
            str(tmp_path),
            {
                "some_scope/my1": "a/v1",
                "some_scope/some_other_scope/": "b/",
                "useful_scope/my4": v3,
            },
        )
        got = _values([v1, v2, v3, untouched])
    np.testing.assert_array_equal(got[0], np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(got[1], np.full([4], 7.0))
    np.testing.assert_array_equal(got[2], np.ones([5, 2]) * 3.0)
    assert got[3] == 1.5
    assert path.endswith("model")


def test_root_mapping_and_partitioned(tmp_path):
    _save(tmp_path)
    with tf.Graph().as_default():
        with tf.variable_scope("useful_scope"):
            part = tf.get_variable(
                "my4", shape=[5, 2], dtype=tf.float64, partitioner=tf.fixed_size_partitioner(2)
            )
        with tf.variable_scope("some_scope"):
            my1 = tf.get_variable("my1", shape=[2, 3], dtype=tf.float64)
            my2 = tf.get_variable("some_other_scope/my2", shape=[4], dtype=tf.float64)
        tf.train.init_from_checkpoint(str(tmp_path), {"/": "/"})
        got = _values([tf.convert_to_tensor(part), my1, my2])
    np.testing.assert_array_equal(got[0], np.ones([5, 2]) * 3.0)
    np.testing.assert_array_equal(got[1], np.arange(6.0).reshape(2, 3))


def test_errors(tmp_path):
    _save(tmp_path)
    with tf.Graph().as_default():
        tf.get_variable("v", shape=[3], dtype=tf.float64)
        with pytest.raises(ValueError, match="Tensor missing is not found"):
            tf.train.init_from_checkpoint(str(tmp_path), {"missing": "v"})
        with pytest.raises(ValueError, match="doesn't match with shape"):
            tf.train.init_from_checkpoint(str(tmp_path), {"some_scope/my1": "v"})
        with pytest.raises(ValueError, match="should map to scope only"):
            tf.train.init_from_checkpoint(str(tmp_path), {"some_scope/my1": "nothing/"})
    with pytest.raises(ValueError, match="Couldn't find 'checkpoint' file"):
        tf.train.init_from_checkpoint(str(_empty(tmp_path)), {})


def _empty(tmp_path):
    d = tmp_path / "empty"
    d.mkdir()
    return d


def test_warm_start_and_vocab_info(tmp_path):
    _save(tmp_path)
    with tf.Graph().as_default():
        my1 = tf.get_variable("some_scope/my1", shape=[2, 3], dtype=tf.float64)
        new = tf.get_variable(
            "renamed", shape=[4], dtype=tf.float64, initializer=tf.zeros_initializer()
        )
        tf.train.warm_start(
            str(tmp_path),
            vars_to_warm_start=["some_scope.*", "renamed"],
            var_name_to_prev_var_name={"renamed": "some_scope/some_other_scope/my2"},
        )
        got = _values([my1, new])
        with pytest.raises(NotImplementedError, match="vocabulary"):
            tf.train.warm_start(str(tmp_path), var_name_to_vocab_info={"x": None})
    np.testing.assert_array_equal(got[0], np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(got[1], np.full([4], 7.0))
    info = tf.train.VocabInfo("new.txt", 10, 1, "old.txt")
    assert info.old_vocab_size == -1 and info.axis == 0
    with pytest.raises(ValueError, match="axis"):
        tf.train.VocabInfo("new.txt", 10, 1, "old.txt", axis=2)


def test_checkpoints_iterator(tmp_path):
    path = _save(tmp_path)
    seen = list(tf.train.checkpoints_iterator(str(tmp_path), timeout=0))
    assert seen == [path]
    calls = []
    assert (
        list(
            tf.train.checkpoints_iterator(
                str(_empty(tmp_path)), timeout=0, timeout_fn=lambda: calls.append(1) or True
            )
        )
        == []
    )
    assert calls == [1]
