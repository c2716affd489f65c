"""TensorFlow 2 behaviour switches, for TF1 programs that call them (follows
`tf.compat.v1.disable_eager_execution`, `disable_v2_behavior`, ...).

tensorweave has one behaviour: TF1 graph mode with reference variables, TF1 control flow,
`Tensor`s compared by identity and `Dimension`-valued shapes. Switches that ask for it are
no-ops; switches that ask for TensorFlow 2 behaviour raise `NotImplementedError` naming the
feature; the queries answer for graph mode. The loaders of C++ libraries and
`GradientTape` raise `NotImplementedError` too; `function` returns the Python function,
whose calls build graph ops.
"""

from __future__ import annotations


def _unsupported(feature: str) -> NotImplementedError:
    return NotImplementedError(
        f"{feature} is not supported: tensorweave runs TensorFlow 1.x graphs only")


def disable_eager_execution() -> None:
    """No-op: graph mode is the only mode (follows `tf.compat.v1.disable_eager_execution`)."""


def enable_eager_execution(config=None, device_policy=None, execution_mode=None) -> None:
    """Raises NotImplementedError: TensorFlow's eager execution is not supported."""
    raise _unsupported("Eager execution (tf.enable_eager_execution)")


def executing_eagerly() -> bool:
    """False: ops build graphs (follows `tf.executing_eagerly`)."""
    return False


def executing_eagerly_outside_functions() -> bool:
    """False: graph mode everywhere (follows `tf.executing_eagerly_outside_functions`)."""
    return False


def disable_v2_behavior() -> None:
    """No-op: TF1 behaviour is the only behaviour (follows `tf.compat.v1.disable_v2_behavior`)."""


def enable_v2_behavior() -> None:
    """Raises NotImplementedError: TensorFlow 2 behaviour is not supported."""
    raise _unsupported("TensorFlow 2 behavior (tf.enable_v2_behavior)")


def control_flow_v2_enabled() -> bool:
    """False: TF1 control flow (follows `tf.control_flow_v2_enabled`)."""
    return False


def disable_control_flow_v2() -> None:
    """No-op: control flow is TF1's (follows `tf.compat.v1.disable_control_flow_v2`)."""


def enable_control_flow_v2() -> None:
    """Raises NotImplementedError: TensorFlow 2 control flow is not supported."""
    raise _unsupported("Control flow v2 (tf.enable_control_flow_v2)")


def disable_tensor_equality() -> None:
    """No-op: tensors compare by identity (follows `tf.compat.v1.disable_tensor_equality`)."""


def enable_tensor_equality() -> None:
    """Raises NotImplementedError: element-wise `Tensor.__eq__` is not supported."""
    raise _unsupported("Tensor equality (tf.enable_tensor_equality)")


def disable_v2_tensorshape() -> None:
    """No-op: shapes hold `Dimension`s (follows `tf.compat.v1.disable_v2_tensorshape`)."""


def enable_v2_tensorshape() -> None:
    """Raises NotImplementedError: int-valued TensorShape (TF2) is not supported."""
    raise _unsupported("V2 TensorShape (tf.enable_v2_tensorshape)")


def load_op_library(library_filename: str) -> None:
    """Raises NotImplementedError: custom C++ op libraries cannot load into NumPy kernels."""
    raise _unsupported("Custom op libraries (tf.load_op_library)")


def load_library(library_location: str) -> None:
    """Raises NotImplementedError: custom C++ kernel libraries are not supported."""
    raise _unsupported("Custom kernel libraries (tf.load_library)")


def load_file_system_library(library_filename: str) -> None:
    """Raises NotImplementedError: file-system plugins are not supported."""
    raise _unsupported("File system libraries (tf.load_file_system_library)")


class GradientTape:
    """Raises NotImplementedError when built: `tf.GradientTape` records eager operations;
    graphs use `tf.gradients`."""

    def __init__(self, persistent: bool = False, watch_accessed_variables: bool = True):
        raise _unsupported("Eager gradient tapes (tf.GradientTape; use tf.gradients)")


def function(func=None, input_signature=None, autograph=True, experimental_autograph_options=None,
             experimental_relax_shapes=False, experimental_compile=None, **kwargs):
    """`tf.function` in graph mode: the Python function itself, so a call adds its ops to
    the current graph (TensorFlow would add a call to a traced function; no retracing,
    signatures or autograph here). Usable as `@tf.function` and `@tf.function(...)`."""
    if func is None:
        return lambda f: f
    return func


__all__ = [
    "control_flow_v2_enabled", "disable_control_flow_v2", "disable_eager_execution",
    "disable_tensor_equality", "disable_v2_behavior",
    "disable_v2_tensorshape", "enable_control_flow_v2", "enable_eager_execution",
    "enable_tensor_equality", "enable_v2_behavior",
    "enable_v2_tensorshape", "executing_eagerly", "executing_eagerly_outside_functions",
    "GradientTape", "function", "load_file_system_library",
    "load_library", "load_op_library",
]
