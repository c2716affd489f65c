"""Pooling layers (follows TF 1.x `layers/pooling.py`): `MaxPooling1D/2D/3D`,
`AveragePooling1D/2D/3D` and the functional `max_pooling1d/3d`, `average_pooling1d/3d`
(`max_pooling2d`/`average_pooling2d` are in `layers_impl`)."""

from __future__ import annotations

from typing import Any

from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.ops import array_ops, nn_conv_ops
from tensorweave.ops import nn_conv_nd_ops as nd
from tensorweave.ops.layers_base import InputSpec, Layer
from tensorweave.ops.layers_impl import _channels_first, _normalize_padding, _normalize_tuple

_POOLS = {
    ("max", 1): nd.max_pool1d,
    ("max", 2): nn_conv_ops.max_pool,
    ("max", 3): nd.max_pool3d,
    ("avg", 1): nd.avg_pool1d,
    ("avg", 2): nn_conv_ops.avg_pool,
    ("avg", 3): nd.avg_pool3d,
}


class _Pooling(Layer):
    kind = "max"
    rank = 2

    def __init__(
        self, pool_size, strides, padding="valid", data_format="channels_last", name=None, **kwargs
    ):
        super().__init__(name=name, **kwargs)
        self.pool_size = _normalize_tuple(pool_size, self.rank, "pool_size")
        self.strides = _normalize_tuple(strides, self.rank, "strides")
        self.padding = _normalize_padding(padding).lower()
        self.data_format = "channels_first" if _channels_first(data_format) else "channels_last"
        self.input_spec = InputSpec(ndim=self.rank + 2)

    def call(self, inputs: Any) -> Any:
        """Pools `inputs` in `data_format`."""
        n = self.rank
        first = self.data_format == "channels_first"
        x = array_ops.transpose(inputs, [0, *range(2, n + 2), 1]) if first else inputs
        pool = _POOLS[(self.kind, n)]
        if n == 1:
            out = pool(x, self.pool_size[0], self.strides[0], self.padding.upper())
        else:
            out = pool(x, [1, *self.pool_size, 1], [1, *self.strides, 1], self.padding.upper())
        return array_ops.transpose(out, [0, n + 1, *range(1, n + 1)]) if first else out

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        """The pooled shape."""
        dims = TensorShape(input_shape).as_list()
        first = self.data_format == "channels_first"
        spatial = dims[2:] if first else dims[1:-1]
        out = []
        for size, k, s in zip(spatial, self.pool_size, self.strides):
            if size is None:
                out.append(None)
            elif self.padding == "same":
                out.append((size + s - 1) // s)
            else:
                out.append((size - k + s) // s)
        c = dims[1] if first else dims[-1]
        return TensorShape([dims[0], c, *out] if first else [dims[0], *out, c])


def _pooling_class(name: str, kind: str, rank: int) -> type:
    what = "Max" if kind == "max" else "Average"
    doc = (
        f"{what} pooling over {rank}-D windows (follows `tf.layers.{name}`).\n\n"
        "Args:\n"
        "  pool_size: an int or a tuple of ints, the window size.\n"
        "  strides: an int or a tuple of ints.\n"
        '  padding: "valid" or "same".\n'
        '  data_format: "channels_last" or "channels_first".\n'
        "  name: the layer's name.\n"
    )
    return type(name, (_Pooling,), {"kind": kind, "rank": rank, "__doc__": doc})


MaxPooling1D = _pooling_class("MaxPooling1D", "max", 1)
MaxPooling2D = _pooling_class("MaxPooling2D", "max", 2)
MaxPooling3D = _pooling_class("MaxPooling3D", "max", 3)
AveragePooling1D = _pooling_class("AveragePooling1D", "avg", 1)
AveragePooling2D = _pooling_class("AveragePooling2D", "avg", 2)
AveragePooling3D = _pooling_class("AveragePooling3D", "avg", 3)


def max_pooling1d(
    inputs, pool_size, strides, padding="valid", data_format="channels_last", name=None
):
    """Max pooling over 1-D windows (follows `tf.layers.max_pooling1d`)."""
    return MaxPooling1D(pool_size, strides, padding, data_format, name=name)(inputs)


def max_pooling3d(
    inputs, pool_size, strides, padding="valid", data_format="channels_last", name=None
):
    """Max pooling over 3-D windows (follows `tf.layers.max_pooling3d`)."""
    return MaxPooling3D(pool_size, strides, padding, data_format, name=name)(inputs)


def average_pooling1d(
    inputs, pool_size, strides, padding="valid", data_format="channels_last", name=None
):
    """Average pooling over 1-D windows (follows `tf.layers.average_pooling1d`)."""
    return AveragePooling1D(pool_size, strides, padding, data_format, name=name)(inputs)


def average_pooling3d(
    inputs, pool_size, strides, padding="valid", data_format="channels_last", name=None
):
    """Average pooling over 3-D windows (follows `tf.layers.average_pooling3d`)."""
    return AveragePooling3D(pool_size, strides, padding, data_format, name=name)(inputs)


__all__ = [
    "AveragePooling1D",
    "AveragePooling2D",
    "AveragePooling3D",
    "MaxPooling1D",
    "MaxPooling2D",
    "MaxPooling3D",
    "average_pooling1d",
    "average_pooling3d",
    "max_pooling1d",
    "max_pooling3d",
]
