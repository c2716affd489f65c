"""The `tf.bitwise` namespace (logic in `tensorweave.ops.bitwise_ops`)."""

from tensorweave.ops.bitwise_ops import (
    bitwise_and,
    bitwise_or,
    bitwise_xor,
    invert,
    left_shift,
    right_shift,
)

__all__ = ["bitwise_and", "bitwise_or", "bitwise_xor", "invert", "left_shift", "right_shift"]
