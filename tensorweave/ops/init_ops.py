"""Variable initializers (follows TF 1.x `init_ops`).

An initializer is a callable object `init(shape, dtype=None, partition_info=None)` that
builds the ops computing an initial value of `shape` and returns that `Tensor`. They are
what `tf.get_variable(initializer=...)` and `tf.Variable(lambda: init(shape, dtype))`
expect. `get_config()` / `from_config(config)` round-trip the constructor arguments.

Top-level names (`tf.zeros_initializer`, ...) are the classes themselves, as in TF 1.15;
`tensorweave.initializers` holds the `tf.initializers.*` spellings.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.framework.tensor_shape import TensorShape, dimension_value
from tensorweave.framework.tensor_util import to_numpy
from tensorweave.ops import array_ops, constant_op, linalg_ops, math_ops, matrix_ops, random_ops

# scipy.stats.truncnorm.std(a=-2, b=2, loc=0., scale=1.): the standard deviation of a
# unit normal truncated at two standard deviations (TensorFlow's constant).
_TRUNCATED_STDDEV = 0.87962566103423978


def _dims(shape: Any) -> list[int]:
    """`shape` (list, tuple or fully defined TensorShape) as a list of ints.

    Raises:
      ValueError: if the shape is not fully defined.
    """
    if isinstance(shape, TensorShape):
        shape = shape.as_list()
    dims = [dimension_value(d) for d in shape]
    if any(d is None for d in dims):
        raise ValueError(f"Initializer shape must be fully defined, got {shape}")
    return [int(d) for d in dims]


def _assert_float_dtype(dtype: dtypes.DType) -> dtypes.DType:
    """Raises ValueError unless `dtype` is floating (TensorFlow's `_assert_float_dtype`)."""
    if not dtype.is_floating:
        raise ValueError(f"Expected floating point type, got {dtype}.")
    return dtype


def _compute_fans(shape: list[int]) -> tuple[int, int]:
    """(fan_in, fan_out) of a weight shape (TensorFlow's `_compute_fans`).

    Kernels `[..., in, out]` multiply both by the receptive field size.
    """
    if len(shape) < 1:
        fan_in = fan_out = 1
    elif len(shape) == 1:
        fan_in = fan_out = shape[0]
    elif len(shape) == 2:
        fan_in, fan_out = shape
    else:
        receptive_field = 1.0
        for dim in shape[:-2]:
            receptive_field *= dim
        fan_in = shape[-2] * receptive_field
        fan_out = shape[-1] * receptive_field
    return int(fan_in), int(fan_out)


class Initializer:
    """Base class of initializers (follows `tf.keras.initializers.Initializer` in TF 1.x)."""

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Any:
        """Builds the initial-value tensor of `shape` and `dtype`."""
        raise NotImplementedError

    def get_config(self) -> dict[str, Any]:
        """The constructor arguments as a JSON-serializable dict."""
        return {}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Initializer:
        """An initializer built from `get_config()`'s output."""
        return cls(**config)


class Zeros(Initializer):
    """Zeros of any dtype, `""` for strings and False for bools (`tf.zeros_initializer`)."""

    def __init__(self, dtype: Any = dtypes.float32):
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Any:
        """A `Tensor` of `shape` filled with zeros."""
        return array_ops.zeros(_dims(shape), dtypes.as_dtype(dtype or self.dtype))

    def get_config(self) -> dict[str, Any]:
        """`{"dtype": name}`."""
        return {"dtype": self.dtype.name}


class Ones(Zeros):
    """Ones (True for bools) (follows `tf.ones_initializer`).

    Raises:
      TypeError: when called with dtype string.
    """

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Any:
        """A `Tensor` of `shape` filled with ones."""
        return array_ops.ones(_dims(shape), dtypes.as_dtype(dtype or self.dtype))


class Constant(Initializer):
    """A constant value in the requested shape (follows TF 1.x `tf.constant_initializer`).

    A scalar fills the shape; a list/array with fewer elements than the shape is padded
    with its last element; more elements is an error.

    Args:
      value: Python scalar, list/tuple or ndarray.
      dtype: default dtype.
      verify_shape: require `value` to have exactly the requested shape.

    Raises:
      TypeError: for other kinds of `value`, or (when called) a shape that fails
        `verify_shape`.
      ValueError: (when called) if `value` has more elements than the shape.
    """

    def __init__(self, value: Any = 0, dtype: Any = dtypes.float32, verify_shape: bool = False):
        if not (np.isscalar(value) or isinstance(value, list | tuple | np.ndarray)):
            raise TypeError(
                f"Invalid type for initial value: {type(value)} (expected Python scalar, list "
                "or tuple of values, or numpy.ndarray)."
            )
        self.value = value
        self.dtype = dtypes.as_dtype(dtype)
        self._verify_shape = verify_shape

    def __call__(
        self,
        shape: Any,
        dtype: Any = None,
        partition_info: Any = None,
        verify_shape: bool | None = None,
    ) -> Any:
        """A `Const` of `shape` holding the value."""
        dtype = dtypes.as_dtype(dtype or self.dtype).base_dtype
        verify = self._verify_shape if verify_shape is None else verify_shape
        dims = _dims(shape)
        arr = to_numpy(self.value, dtype)
        if verify and list(arr.shape) != dims:
            raise TypeError(f"Expected Tensor's shape: {tuple(dims)}, got {arr.shape}.")
        size = int(np.prod(dims))
        if arr.size > size:
            raise ValueError(
                f"Too many elements provided. Needed at most {size}, but received {arr.size}"
            )
        if 1 < arr.size < size:
            flat = arr.reshape(-1)
            arr = np.concatenate([flat, np.repeat(flat[-1:], size - arr.size)])
        if arr.size == size:
            arr = arr.reshape(dims)
        return constant_op.constant(arr, dtype=dtype, shape=dims)

    def get_config(self) -> dict[str, Any]:
        """`{"value", "dtype"}` (`verify_shape` is left out, as in TensorFlow)."""
        return {"value": self.value, "dtype": self.dtype.name}


class RandomUniform(Initializer):
    """Uniform values in `[minval, maxval)` (follows `tf.random_uniform_initializer`).

    Args:
      minval: lower bound.
      maxval: upper bound (default 1 for floats; required for integer dtypes).
      seed: op-level seed (see `tf.set_random_seed`).
      dtype: default dtype (floating or int32/int64).
    """

    def __init__(
        self,
        minval: Any = 0,
        maxval: Any = None,
        seed: int | None = None,
        dtype: Any = dtypes.float32,
    ):
        self.minval = minval
        self.maxval = maxval
        self.seed = seed
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Any:
        """A `random_uniform` tensor of `shape`."""
        return random_ops.random_uniform(
            shape, self.minval, self.maxval, dtype or self.dtype, seed=self.seed
        )

    def get_config(self) -> dict[str, Any]:
        """`{"minval", "maxval", "seed", "dtype"}`."""
        return {
            "minval": self.minval,
            "maxval": self.maxval,
            "seed": self.seed,
            "dtype": self.dtype.name,
        }


class RandomNormal(Initializer):
    """Normal values (follows `tf.random_normal_initializer`).

    Args:
      mean: mean of the values.
      stddev: standard deviation of the values.
      seed: op-level seed.
      dtype: default dtype (floating).

    Raises:
      ValueError: for a non-floating dtype.
    """

    _op = staticmethod(random_ops.random_normal)

    def __init__(
        self,
        mean: Any = 0.0,
        stddev: Any = 1.0,
        seed: int | None = None,
        dtype: Any = dtypes.float32,
    ):
        self.mean = mean
        self.stddev = stddev
        self.seed = seed
        self.dtype = _assert_float_dtype(dtypes.as_dtype(dtype))

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Any:
        """A tensor of `shape` with the distribution."""
        return self._op(shape, self.mean, self.stddev, dtype or self.dtype, seed=self.seed)

    def get_config(self) -> dict[str, Any]:
        """`{"mean", "stddev", "seed", "dtype"}`."""
        return {
            "mean": self.mean,
            "stddev": self.stddev,
            "seed": self.seed,
            "dtype": self.dtype.name,
        }


class TruncatedNormal(RandomNormal):
    """Normal values re-drawn beyond two stddevs (`tf.truncated_normal_initializer`).

    Same arguments as `RandomNormal`.
    """

    _op = staticmethod(random_ops.truncated_normal)


class UniformUnitScaling(Initializer):
    """Uniform values that keep the input scale (`tf.uniform_unit_scaling_initializer`).

    The range is `[-sqrt(3 / in) * factor, sqrt(3 / in) * factor]`, with `in` the product
    of all dimensions but the last. Deprecated in TensorFlow in favour of `VarianceScaling`.

    Args:
      factor: multiplicative factor.
      seed: op-level seed.
      dtype: default dtype (floating).
    """

    def __init__(self, factor: float = 1.0, seed: int | None = None, dtype: Any = dtypes.float32):
        self.factor = factor
        self.seed = seed
        self.dtype = _assert_float_dtype(dtypes.as_dtype(dtype))

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Any:
        """A uniform tensor of `shape`."""
        scale_shape = _dims(partition_info.full_shape if partition_info else shape)
        input_size = 1.0
        for dim in scale_shape[:-1]:
            input_size *= float(dim)
        max_val = math.sqrt(3 / max(input_size, 1.0)) * self.factor
        return random_ops.random_uniform(
            shape, -max_val, max_val, dtype or self.dtype, seed=self.seed
        )

    def get_config(self) -> dict[str, Any]:
        """`{"factor", "seed", "dtype"}`."""
        return {"factor": self.factor, "seed": self.seed, "dtype": self.dtype.name}


class VarianceScaling(Initializer):
    """Scale-adaptive initialization (follows TF 1.15 `tf.variance_scaling_initializer`).

    With `n` the fan-in, fan-out or their mean (`mode`), values are drawn from
    * `"truncated_normal"` / `"normal"`: a normal truncated at two standard deviations,
      with `stddev = sqrt(scale / n) / 0.8796...` so the result's variance is `scale / n`;
    * `"untruncated_normal"`: a normal with `stddev = sqrt(scale / n)`;
    * `"uniform"`: uniform in `[-sqrt(3 scale / n), sqrt(3 scale / n)]`.

    Args:
      scale: positive scaling factor.
      mode: "fan_in", "fan_out" or "fan_avg".
      distribution: see above (case-insensitive).
      seed: op-level seed.
      dtype: default dtype (floating).

    Raises:
      ValueError: for a non-positive scale, an unknown mode or distribution, or a
        non-floating dtype.
    """

    def __init__(
        self,
        scale: float = 1.0,
        mode: str = "fan_in",
        distribution: str = "truncated_normal",
        seed: int | None = None,
        dtype: Any = dtypes.float32,
    ):
        if scale <= 0.0:
            raise ValueError("`scale` must be positive float.")
        if mode not in {"fan_in", "fan_out", "fan_avg"}:
            raise ValueError("Invalid `mode` argument:", mode)
        distribution = distribution.lower()
        if distribution not in {"normal", "uniform", "truncated_normal", "untruncated_normal"}:
            raise ValueError("Invalid `distribution` argument:", distribution)
        self.scale = scale
        self.mode = mode
        self.distribution = distribution
        self.seed = seed
        self.dtype = _assert_float_dtype(dtypes.as_dtype(dtype))

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Any:
        """A tensor of `shape` with the scaled distribution."""
        dtype = dtype or self.dtype
        fan_in, fan_out = _compute_fans(
            _dims(partition_info.full_shape if partition_info else shape)
        )
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}
        scale = self.scale / max(1.0, n[self.mode])
        if self.distribution in ("normal", "truncated_normal"):
            stddev = math.sqrt(scale) / _TRUNCATED_STDDEV
            return random_ops.truncated_normal(shape, 0.0, stddev, dtype, seed=self.seed)
        if self.distribution == "untruncated_normal":
            return random_ops.random_normal(shape, 0.0, math.sqrt(scale), dtype, seed=self.seed)
        limit = math.sqrt(3.0 * scale)
        return random_ops.random_uniform(shape, -limit, limit, dtype, seed=self.seed)

    def get_config(self) -> dict[str, Any]:
        """`{"scale", "mode", "distribution", "seed", "dtype"}`."""
        return {
            "scale": self.scale,
            "mode": self.mode,
            "distribution": self.distribution,
            "seed": self.seed,
            "dtype": self.dtype.name,
        }


class GlorotUniform(VarianceScaling):
    """Glorot/Xavier uniform (follows `tf.glorot_uniform_initializer`).

    Values are `U(-limit, limit)` with `limit = sqrt(6 / (fan_in + fan_out))`.
    """

    def __init__(self, seed: int | None = None, dtype: Any = dtypes.float32):
        super().__init__(scale=1.0, mode="fan_avg", distribution="uniform", seed=seed, dtype=dtype)

    def get_config(self) -> dict[str, Any]:
        """`{"seed", "dtype"}`."""
        return {"seed": self.seed, "dtype": self.dtype.name}


class GlorotNormal(GlorotUniform):
    """Glorot/Xavier normal (follows `tf.glorot_normal_initializer`).

    A truncated normal with variance `2 / (fan_in + fan_out)`.
    """

    def __init__(self, seed: int | None = None, dtype: Any = dtypes.float32):
        VarianceScaling.__init__(
            self, scale=1.0, mode="fan_avg", distribution="truncated_normal", seed=seed, dtype=dtype
        )


class Orthogonal(Initializer):
    """A (semi-)orthogonal matrix times `gain` (follows `tf.orthogonal_initializer`).

    The Q factor of a normal matrix's QR decomposition, column signs fixed by R's
    diagonal, reshaped to `shape`.

    Args:
      gain: multiplicative factor.
      seed: op-level seed.
      dtype: default dtype (floating).

    Raises:
      ValueError: (when called) for shapes of rank < 2.
    """

    def __init__(self, gain: float = 1.0, seed: int | None = None, dtype: Any = dtypes.float32):
        self.gain = gain
        self.seed = seed
        self.dtype = _assert_float_dtype(dtypes.as_dtype(dtype))

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Any:
        """A tensor of `shape`; as a `[prod(shape[:-1]), shape[-1]]` matrix, orthonormal."""
        dims = _dims(shape)
        if len(dims) < 2:
            raise ValueError("The tensor to initialize must be at least two-dimensional")
        rows, cols = int(np.prod(dims[:-1])), dims[-1]
        flat_shape = (cols, rows) if rows < cols else (rows, cols)
        a = random_ops.random_normal(flat_shape, dtype=dtype or self.dtype, seed=self.seed)
        q, r = linalg_ops.qr(a, full_matrices=False)
        q = q * math_ops.sign(matrix_ops.matrix_diag_part(r))
        if rows < cols:
            q = matrix_ops.matrix_transpose(q)
        return self.gain * array_ops.reshape(q, dims)

    def get_config(self) -> dict[str, Any]:
        """`{"gain", "seed", "dtype"}`."""
        return {"gain": self.gain, "seed": self.seed, "dtype": self.dtype.name}


class Identity(Initializer):
    """`gain` times the identity matrix (follows `tf.initializers.identity`).

    A partition gets its slice of the full matrix. Built as one `Const`.

    Args:
      gain: multiplicative factor.
      dtype: default dtype (floating).
    """

    def __init__(self, gain: float = 1.0, dtype: Any = dtypes.float32):
        self.gain = gain
        self.dtype = _assert_float_dtype(dtypes.as_dtype(dtype))

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Any:
        """A `Const` of `shape` holding (a slice of) `gain * eye`.

        Raises:
          ValueError: unless the full shape is 2-D.
        """
        full = _dims(partition_info.full_shape if partition_info else shape)
        if len(full) != 2:
            raise ValueError("Identity matrix initializer can only be used for 2D matrices.")
        dtype = dtypes.as_dtype(dtype or self.dtype)
        value = self.gain * np.eye(*full)
        if partition_info is not None:
            dims = _dims(shape)
            index = tuple(slice(o, o + d) for o, d in zip(partition_info.var_offset, dims))
            value = value[index]
        return constant_op.constant(value.astype(dtype.as_numpy_dtype), dtype=dtype)

    def get_config(self) -> dict[str, Any]:
        """`{"gain", "dtype"}`."""
        return {"gain": self.gain, "dtype": self.dtype.name}


def _variance_scaling_fn(scale: float, mode: str, distribution: str, doc: str) -> Any:
    def make(seed: int | None = None) -> VarianceScaling:
        return VarianceScaling(scale=scale, mode=mode, distribution=distribution, seed=seed)

    make.__doc__ = doc
    return make


he_normal = _variance_scaling_fn(
    2.0,
    "fan_in",
    "truncated_normal",
    "He normal: truncated normal, variance `2 / fan_in` (follows `tf.initializers.he_normal`).",
)
he_uniform = _variance_scaling_fn(
    2.0,
    "fan_in",
    "uniform",
    "He uniform: limit `sqrt(6 / fan_in)` (follows `tf.initializers.he_uniform`).",
)
lecun_normal = _variance_scaling_fn(
    1.0,
    "fan_in",
    "truncated_normal",
    "LeCun normal: truncated normal, variance `1 / fan_in` (`tf.initializers.lecun_normal`).",
)
lecun_uniform = _variance_scaling_fn(
    1.0,
    "fan_in",
    "uniform",
    "LeCun uniform: limit `sqrt(3 / fan_in)` (follows `tf.initializers.lecun_uniform`).",
)
he_normal.__name__, he_uniform.__name__ = "he_normal", "he_uniform"
lecun_normal.__name__, lecun_uniform.__name__ = "lecun_normal", "lecun_uniform"

zeros_initializer = Zeros
ones_initializer = Ones
constant_initializer = Constant
random_uniform_initializer = RandomUniform
random_normal_initializer = RandomNormal
truncated_normal_initializer = TruncatedNormal
uniform_unit_scaling_initializer = UniformUnitScaling
variance_scaling_initializer = VarianceScaling
glorot_uniform_initializer = GlorotUniform
glorot_normal_initializer = GlorotNormal
orthogonal_initializer = Orthogonal

__all__ = [
    "zeros_initializer",
    "ones_initializer",
    "constant_initializer",
    "random_uniform_initializer",
    "random_normal_initializer",
    "truncated_normal_initializer",
    "uniform_unit_scaling_initializer",
    "variance_scaling_initializer",
    "glorot_uniform_initializer",
    "glorot_normal_initializer",
    "orthogonal_initializer",
]
