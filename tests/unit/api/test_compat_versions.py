"""`tf.compat` (v1/v2 namespaces, text helpers), the version constants and the TF2
behaviour switches."""

from __future__ import annotations

import numbers
import pathlib
import platform

import numpy as np
import pytest

import tensorweave as tf


def test_compat_v1_resolves_tensorweaves_names():
    assert tf.compat.v1.Session is tf.Session
    assert tf.compat.v1.placeholder is tf.placeholder
    assert tf.compat.v1.train is tf.train and tf.compat.v1.train.Server is tf.train.Server
    assert tf.compat.v2.constant is tf.constant
    assert "Session" in dir(tf.compat.v1) and "Session" in dir(tf.compat.v2)
    with pytest.raises(AttributeError):
        tf.compat.v1.no_such_name  # noqa: B018
    import tensorweave.compat.v1 as tf1

    tf1.disable_v2_behavior()
    with tf1.Graph().as_default(), tf1.Session() as sess:
        assert sess.run(tf1.constant(2) * 3) == 6


def test_as_bytes_text_str():
    assert tf.compat.as_bytes("é") == "é".encode()
    assert tf.compat.as_bytes(b"x") == b"x" and tf.compat.as_bytes(bytearray(b"y")) == b"y"
    assert tf.compat.as_bytes("é", encoding="latin-1") == b"\xe9"
    assert tf.compat.as_text(b"\xc3\xa9") == "é" and tf.compat.as_text("s") == "s"
    assert tf.compat.as_str(b"x") == "x"
    assert tf.compat.as_str_any(3) == "3" and tf.compat.as_str_any(b"b") == "b"
    for fn in (tf.compat.as_bytes, tf.compat.as_text):
        with pytest.raises(TypeError, match="Expected binary or unicode string"):
            fn(1)
    assert tf.compat.path_to_str(pathlib.Path("/a/b")) == "/a/b"
    assert tf.compat.path_to_str(5) == 5


def test_type_tuples():
    assert isinstance(np.int32(1), tf.compat.integral_types)
    assert isinstance(3, tf.compat.integral_types)
    assert not isinstance(1.5, tf.compat.integral_types)
    assert isinstance(np.float16(1), tf.compat.real_types)
    assert isinstance(1j, tf.compat.complex_types)
    assert isinstance(b"", tf.compat.bytes_or_text_types)
    assert numbers.Real in tf.compat.real_types


def test_forward_compatible_and_horizon():
    assert tf.compat.forward_compatible(2019, 1, 1)
    assert not tf.compat.forward_compatible(2030, 1, 1)
    with tf.compat.forward_compatibility_horizon(2031, 1, 1):
        assert tf.compat.forward_compatible(2030, 1, 1)
    assert not tf.compat.forward_compatible(2030, 1, 1)


def test_dimension_helpers():
    shape = tf.TensorShape([None, 3])
    assert tf.compat.dimension_value(shape[1]) == 3 and tf.dimension_value(shape[0]) is None
    assert tf.dimension_value(4) == 4
    assert tf.compat.dimension_at_index(shape, 1).value == 3
    assert tf.dimension_at_index(tf.TensorShape(None), 5).value is None
    assert tf.dimension_at_index([2, 5], 0).value == 2
    with pytest.raises(IndexError):
        tf.dimension_at_index(shape, 2)


def test_version_constants():
    assert tf.VERSION == "1.15.0" and tf.GIT_VERSION.startswith("tensorweave-")
    assert tf.COMPILER_VERSION == platform.python_compiler()
    assert (tf.CXX11_ABI_FLAG, tf.CXX_VERSION, tf.MONOLITHIC_BUILD) == (0, 0, 0)
    assert tf.GRAPH_DEF_VERSION == tf.Graph().graph_def_versions.producer
    assert tf.GRAPH_DEF_VERSION_MIN_CONSUMER == 0 and tf.GRAPH_DEF_VERSION_MIN_PRODUCER == 0


def test_graph_mode_switches_are_no_ops():
    for switch in (tf.disable_eager_execution, tf.disable_v2_behavior,
                   tf.disable_control_flow_v2, tf.disable_resource_variables,
                   tf.disable_tensor_equality, tf.disable_v2_tensorshape):
        assert switch() is None
    assert not tf.executing_eagerly() and not tf.executing_eagerly_outside_functions()
    assert not tf.control_flow_v2_enabled() and not tf.resource_variables_enabled()


@pytest.mark.parametrize("switch, feature", [
    (tf.enable_eager_execution, "Eager execution"),
    (tf.enable_v2_behavior, "TensorFlow 2 behavior"),
    (tf.enable_control_flow_v2, "Control flow v2"),
    (tf.enable_tensor_equality, "Tensor equality"),
    (tf.enable_v2_tensorshape, "V2 TensorShape"),
    (lambda: tf.load_op_library("x.so"), "tf.load_op_library"),
    (lambda: tf.load_library("x.so"), "tf.load_library"),
    (lambda: tf.load_file_system_library("x.so"), "tf.load_file_system_library"),
    (tf.GradientTape, "tf.GradientTape"),
])
def test_tf2_switches_name_the_feature(switch, feature):
    with pytest.raises(NotImplementedError, match=feature):
        switch()


def test_function_builds_ops_in_the_graph():
    @tf.function
    def double(x):
        return x * 2

    @tf.function(input_signature=None)
    def triple(x):
        return x * 3

    with tf.Graph().as_default(), tf.Session() as sess:
        assert sess.run([double(tf.constant(2)), triple(tf.constant(2))]) == [4, 6]
