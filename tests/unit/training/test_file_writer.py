"""FileWriter / FileWriterCache / summary_iterator, read back with TensorBoard's own reader
(mirrors TF's writer_test.py)."""

from __future__ import annotations

import glob
import os

import numpy as np
import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

import tensorweave as tf
import tensorweave.kernels.summary_kernels  # registers them (until wired in kernels/__init__)
from tensorweave import summary
from tensorweave.protos import graph_pb2, meta_graph_pb2, summary_pb2
from tensorweave.training.summary_io import FileWriter, FileWriterCache, summary_iterator


@pytest.fixture(autouse=True)
def _clear_writer_cache():
    yield
    FileWriterCache.clear()


def _event_files(logdir):
    return sorted(glob.glob(os.path.join(str(logdir), "events.out.tfevents.*")))


def _events(logdir):
    (path,) = _event_files(logdir)
    return list(summary_iterator(path))


def _accumulator(logdir):
    acc = EventAccumulator(str(logdir))
    acc.Reload()
    return acc


def _build_model():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None], name="x")
        w = tf.constant(2.0, name="w")
        y = tf.identity(x, name="y")
        with tf.name_scope("train"):
            summary.scalar("loss", tf.identity(w))
            summary.histogram("activations", y)
        summary.text("notes", tf.constant("**step** done"))
        merged = summary.merge_all()
    return g, x, merged


def test_scalars_histogram_text_graph_and_run_metadata_reach_tensorboard(tmp_path):
    g, x, merged = _build_model()
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    with tf.Session(graph=g) as sess, FileWriter(tmp_path, graph=g) as writer:
        for step in range(3):
            metadata = tf.RunMetadata()
            out = sess.run(merged, {x: [0.5, 1.0, 1.5 * step]}, options, metadata)
            writer.add_summary(out, global_step=step)
        writer.add_run_metadata(metadata, "step_2", global_step=2)
    acc = _accumulator(tmp_path)
    tags = acc.Tags()
    assert tags["scalars"] == ["train/loss"]
    assert tags["histograms"] == ["train/activations"]
    assert tags["tensors"] == ["notes"]
    assert tags["graph"] is True and tags["meta_graph"] is True
    assert tags["run_metadata"] == ["step_2"]
    assert [(e.step, e.value) for e in acc.Scalars("train/loss")] == [(0, 2.0), (1, 2.0), (2, 2.0)]
    last = max(acc.Histograms("train/activations"), key=lambda e: e.step).histogram_value
    assert (last.min, last.max, last.num, last.sum) == (0.5, 3.0, 3.0, 4.5)
    assert acc.SummaryMetadata("notes").plugin_data.plugin_name == "text"
    assert list(acc.Tensors("notes")[0].tensor_proto.string_val) == [b"**step** done"]
    node_names = {node.name for node in acc.Graph().node}
    assert {"x", "w", "y", "train/loss", "train/activations", "notes"} <= node_names
    assert "Merge/MergeSummary" in node_names
    shapes = {n.name: n.attr["_output_shapes"] for n in acc.Graph().node}
    assert len(shapes["x"].list.shape) == 1  # written with add_shapes, as TensorFlow does
    stats = acc.RunMetadata("step_2").step_stats
    assert stats.dev_stats[0].device.endswith("device:CPU:0")
    ran = {ns.node_name for ns in stats.dev_stats[0].node_stats}
    assert "Merge/MergeSummary" in ran


def test_event_file_layout(tmp_path):
    with FileWriter(tmp_path, filename_suffix=".v1") as writer:
        assert writer.get_logdir() == str(tmp_path)
        writer.add_summary(summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag="a")]), 7)
    (path,) = _event_files(tmp_path)
    assert path.endswith(".v1")
    events = list(summary_iterator(path))
    assert events[0].file_version == "brain.Event:2"
    assert events[0].step == 0
    assert events[1].step == 7 and events[1].summary.value[0].tag == "a"
    assert events[1].wall_time >= events[0].wall_time > 0


def test_add_summary_accepts_bytes_and_protos_and_strips_repeated_metadata(tmp_path):
    value = summary_pb2.Summary.Value(tag="t", simple_value=1.0)
    value.metadata.plugin_data.plugin_name = "scalars"
    proto = summary_pb2.Summary(value=[value])
    with FileWriter(tmp_path) as writer:
        writer.add_summary(proto, 1)
        writer.add_summary(proto.SerializeToString(), 2)
        writer.add_summary(np.array(proto.SerializeToString(), dtype=object), 3)
        with pytest.raises(TypeError):
            writer.add_summary(42)
    assert proto.value[0].HasField("metadata")  # the caller's proto is left alone
    written = [e for e in _events(tmp_path) if e.HasField("summary")]
    assert [e.step for e in written] == [1, 2, 3]
    assert [e.summary.value[0].HasField("metadata") for e in written] == [True, False, False]


def test_add_graph_accepts_graph_def_and_rejects_other_types(tmp_path):
    g = tf.Graph()
    with g.as_default():
        tf.constant(1.0, name="c")
    graph_def = g.as_graph_def()
    with FileWriter(tmp_path) as writer:
        writer.add_graph(None, graph_def=graph_def)
        with pytest.raises(TypeError, match="must be an instance of `Graph`"):
            writer.add_graph("not a graph")
        with pytest.raises(TypeError):
            writer.add_meta_graph(graph_def)
    graph_events = [e for e in _events(tmp_path) if e.HasField("graph_def")]
    assert len(graph_events) == 1
    assert graph_pb2.GraphDef.FromString(graph_events[0].graph_def).node[0].name == "c"


def test_meta_graph_written_with_the_graph(tmp_path):
    g, *_ = _build_model()
    FileWriter(tmp_path, graph=g).close()
    assert _accumulator(tmp_path).Tags()["meta_graph"] is True
    events = _events(tmp_path)
    meta = meta_graph_pb2.MetaGraphDef.FromString(
        next(e.meta_graph_def for e in events if e.HasField("meta_graph_def"))
    )
    ops = {op.name for op in meta.meta_info_def.stripped_op_list.op}
    assert {"Placeholder", "Const", "ScalarSummary", "MergeSummary"} <= ops
    assert {n.name for n in meta.graph_def.node} >= {"x", "w"}


def test_run_metadata_tags_must_be_unique(tmp_path):
    with FileWriter(tmp_path) as writer:
        writer.add_run_metadata(tf.RunMetadata(), "step1")
        with pytest.raises(ValueError, match="already used"):
            writer.add_run_metadata(tf.RunMetadata(), "step1")
        with pytest.raises(TypeError):
            writer.add_run_metadata(summary_pb2.Summary(), "step2")


def test_session_log_and_raw_events(tmp_path):
    with FileWriter(tmp_path) as writer:
        writer.add_session_log(summary.SessionLog(status=summary.SessionLog.START), 0)
        writer.add_event(summary.Event(wall_time=123.0, step=5, file_version="custom"))
    events = _events(tmp_path)
    assert events[1].session_log.status == summary.SessionLog.START
    assert (events[2].wall_time, events[2].step, events[2].file_version) == (123.0, 5, "custom")


def test_close_drops_writes_until_reopen(tmp_path):
    writer = FileWriter(tmp_path)
    writer.add_summary(summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag="a")]), 1)
    writer.close()
    writer.close()  # idempotent
    with pytest.warns(UserWarning, match="closed FileWriter"):
        writer.add_summary(summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag="b")]), 2)
    with pytest.warns(UserWarning):
        writer.flush()
    assert len(_event_files(tmp_path)) == 1
    writer.reopen()
    writer.add_summary(summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag="c")]), 3)
    writer.close()
    files = _event_files(tmp_path)
    assert len(files) == 2
    tags = [
        [v.tag for e in summary_iterator(f) if e.HasField("summary") for v in e.summary.value]
        for f in files
    ]
    assert sorted(tags) == [["a"], ["c"]]


def test_flush_makes_events_visible_without_close(tmp_path):
    writer = FileWriter(tmp_path, flush_secs=3600)
    writer.add_summary(summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag="a")]), 1)
    writer.flush()
    assert any(e.HasField("summary") for e in _events(tmp_path))
    writer.close()


def test_file_writer_cache(tmp_path):
    g = tf.Graph()
    with g.as_default():
        tf.constant(1.0, name="cached_const")
        first = FileWriterCache.get(tmp_path / "a")
        assert FileWriterCache.get(str(tmp_path / "a")) is first
        other = FileWriterCache.get(tmp_path / "b")
        assert other is not first
    FileWriterCache.clear()
    assert FileWriterCache.get(tmp_path / "a") is not first
    FileWriterCache.clear()
    with pytest.warns(UserWarning):
        first.flush()  # cleared writers are closed
    graphs = [e for e in _events(tmp_path / "b") if e.HasField("graph_def")]
    assert graph_pb2.GraphDef.FromString(graphs[0].graph_def).node[0].name == "cached_const"


def test_summary_namespace_reexports_writer():
    assert summary.FileWriter is FileWriter
    assert summary.FileWriterCache is FileWriterCache
    assert summary.summary_iterator is summary_iterator


def test_summary_iterator_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        next(summary_iterator(tmp_path / "events.out.tfevents.missing"))


def test_constructor_accepts_a_graph_def_and_rejects_other_graphs(tmp_path):
    g = tf.Graph()
    with g.as_default():
        tf.constant(1.0, name="c")
    FileWriter(tmp_path / "ok", graph_def=g.as_graph_def()).close()
    kinds = [e.WhichOneof("what") for e in _events(tmp_path / "ok")]
    assert kinds == ["file_version", "graph_def", "meta_graph_def"]
    with pytest.raises(TypeError, match="must be an instance of `Graph`"):
        FileWriter(tmp_path / "bad", graph="not a graph")
