"""The `tf.layers` namespace (explicit re-exports of TF 1.x layers: classes and functions).

The logic lives in `tensorweave.ops.layers_impl` (functional dense/conv2d/pooling2d/
dropout/flatten), `layers_base` (`Layer`, `InputSpec`), `layers_core`, `layers_conv`,
`layers_pooling`, `layers_normalization` and `layers_functional`.
"""

from tensorweave.ops.layers_base import InputSpec, Layer
from tensorweave.ops.layers_conv import (
    Conv1D,
    Conv2D,
    Conv2DTranspose,
    Conv3D,
    Conv3DTranspose,
    SeparableConv1D,
    SeparableConv2D,
)
from tensorweave.ops.layers_core import Dense, Dropout, Flatten
from tensorweave.ops.layers_functional import (
    conv1d,
    conv2d_transpose,
    conv3d,
    conv3d_transpose,
    separable_conv1d,
    separable_conv2d,
)
from tensorweave.ops.layers_impl import (
    average_pooling2d,
    conv2d,
    dense,
    dropout,
    flatten,
    max_pooling2d,
)
from tensorweave.ops.layers_normalization import BatchNormalization, batch_normalization
from tensorweave.ops.layers_pooling import (
    AveragePooling1D,
    AveragePooling2D,
    AveragePooling3D,
    MaxPooling1D,
    MaxPooling2D,
    MaxPooling3D,
    average_pooling1d,
    average_pooling3d,
    max_pooling1d,
    max_pooling3d,
)

__all__ = [
    "AveragePooling1D",
    "AveragePooling2D",
    "AveragePooling3D",
    "BatchNormalization",
    "Conv1D",
    "Conv2D",
    "Conv2DTranspose",
    "Conv3D",
    "Conv3DTranspose",
    "Dense",
    "Dropout",
    "Flatten",
    "InputSpec",
    "Layer",
    "MaxPooling1D",
    "MaxPooling2D",
    "MaxPooling3D",
    "SeparableConv1D",
    "SeparableConv2D",
    "average_pooling1d",
    "average_pooling2d",
    "average_pooling3d",
    "batch_normalization",
    "conv1d",
    "conv2d",
    "conv2d_transpose",
    "conv3d",
    "conv3d_transpose",
    "dense",
    "dropout",
    "flatten",
    "max_pooling1d",
    "max_pooling2d",
    "max_pooling3d",
    "separable_conv1d",
    "separable_conv2d",
]
