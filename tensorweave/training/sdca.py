"""`tf.train.sdca_shrink_l1` (implemented), `sdca_fprint`, `sdca_optimizer` and
`do_quantize_training_on_graphdef` (not implemented: they raise NotImplementedError naming
the TensorFlow feature)."""

from __future__ import annotations

from typing import Any

from tensorweave.ops.training_ops_extra import sdca_shrink_l1


def sdca_fprint(input: Any, name: str | None = None) -> Any:  # noqa: A002
    """Not implemented: TensorFlow's `SdcaFprint` (farmhash Fingerprint128 of strings).

    Raises:
      NotImplementedError: always.
    """
    raise NotImplementedError(
        "tf.train.sdca_fprint (SdcaFprint, farmhash Fingerprint128) is "
        "not implemented in tensorweave"
    )


def sdca_optimizer(*args: Any, **kwargs: Any) -> Any:
    """Not implemented: TensorFlow's `SdcaOptimizer` op (stochastic dual coordinate ascent).

    Raises:
      NotImplementedError: always.
    """
    raise NotImplementedError(
        "tf.train.sdca_optimizer (the SdcaOptimizer op) is not implemented in tensorweave"
    )


def do_quantize_training_on_graphdef(input_graph: Any, num_bits: int) -> Any:
    """Not implemented: TensorFlow's deprecated GraphDef quantized-training rewriter.

    Raises:
      NotImplementedError: always.
    """
    raise NotImplementedError(
        "tf.train.do_quantize_training_on_graphdef (the deprecated "
        "quantized training graph rewriter) is not implemented"
    )


__all__ = ["do_quantize_training_on_graphdef", "sdca_fprint", "sdca_optimizer", "sdca_shrink_l1"]
