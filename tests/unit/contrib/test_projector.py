"""`tf.contrib.tensorboard.plugins.projector`: the config file TensorBoard's projector
plugin reads (TF 1.x contrib `visualize_embeddings`)."""

from __future__ import annotations

import sys

import pytest
from google.protobuf import text_format

import tensorweave as tf
from tensorweave.contrib.tensorboard.plugins import projector


def test_visualize_embeddings_writes_the_text_config(tmp_path):
    config = projector.ProjectorConfig()
    emb = config.embeddings.add()
    emb.tensor_name = "embeddings:0"
    emb.metadata_path = "metadata.tsv"
    with tf.Graph().as_default():
        writer = tf.summary.FileWriter(str(tmp_path))
        tf.contrib.tensorboard.plugins.projector.visualize_embeddings(writer, config)
        writer.close()
    text = (tmp_path / "projector_config.pbtxt").read_text()
    parsed = text_format.Parse(text, projector.ProjectorConfig())
    assert parsed == config
    assert parsed.embeddings[0].tensor_name == "embeddings:0"
    assert "tensorflow" not in sys.modules


def test_writer_without_logdir_is_rejected():
    class NoDir:
        def get_logdir(self):
            return None

    with pytest.raises(ValueError, match="must have a logdir"):
        projector.visualize_embeddings(NoDir(), projector.ProjectorConfig())
