"""`tf.contrib.tensorboard.plugins.projector` (TF 1.x): the embedding projector's config.

`ProjectorConfig` and friends are TensorBoard's own protos (the `tensorboard` package, a
dependency; its projector protos import no TensorFlow); `visualize_embeddings` writes them
where TensorBoard's projector plugin looks, as TF 1.x's contrib function does.
"""

from __future__ import annotations

import os
from typing import Any

from google.protobuf import text_format
from tensorboard.plugins.projector.projector_config_pb2 import (
    EmbeddingInfo,
    ProjectorConfig,
    SpriteMetadata,
)

PROJECTOR_FILENAME = "projector_config.pbtxt"


def visualize_embeddings(summary_writer: Any, config: ProjectorConfig) -> None:
    """Writes `config` as text to `<logdir>/projector_config.pbtxt`
    (`tf.contrib.tensorboard.plugins.projector.visualize_embeddings`).

    Args:
      summary_writer: a `tf.summary.FileWriter` (anything with `get_logdir()`).
      config: a `ProjectorConfig`.

    Raises:
      ValueError: the writer has no logdir.
    """
    logdir = summary_writer.get_logdir()
    if logdir is None:
        raise ValueError("Summary writer must have a logdir")
    with open(os.path.join(logdir, PROJECTOR_FILENAME), "w", encoding="utf-8") as f:
        f.write(text_format.MessageToString(config))


__all__ = [
    "PROJECTOR_FILENAME", "EmbeddingInfo", "ProjectorConfig", "SpriteMetadata",
    "visualize_embeddings",
]
