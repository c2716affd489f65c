"""The protos and tensor-proto helpers of the top-level namespace (`tf.GraphDef`,
`tf.make_tensor_proto`, ...): TensorFlow's message types and field numbers."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf


def test_graph_protos_round_trip():
    with tf.Graph().as_default() as g:
        tf.constant([1.0, 2.0], name="c")
        graph_def = g.as_graph_def()
    assert isinstance(graph_def, tf.GraphDef)
    parsed = tf.GraphDef.FromString(graph_def.SerializeToString())
    node = parsed.node[0]
    assert isinstance(node, tf.NodeDef) and node.op == "Const" and node.name == "c"
    assert isinstance(node.attr["value"], tf.AttrValue)
    func = tf.NameAttrList(name="f", attr={"T": tf.AttrValue(i=3)})
    assert func.attr["T"].i == 3


def test_meta_graph_and_tensor_info():
    meta = tf.MetaGraphDef()
    meta.meta_info_def.tags.append("serve")
    info = tf.TensorInfo(name="x:0", dtype=tf.float32.as_datatype_enum)
    meta.signature_def["s"].inputs["x"].CopyFrom(info)
    again = tf.MetaGraphDef.FromString(meta.SerializeToString())
    assert again.signature_def["s"].inputs["x"].name == "x:0"


def test_summary_event_protos():
    summary = tf.Summary(value=[tf.Summary.Value(tag="a", simple_value=1.5)])
    histo = tf.HistogramProto(min=0.0, max=1.0, num=2, bucket_limit=[1.0], bucket=[2.0])
    summary.value.add(tag="h", histo=histo)
    summary.value[0].metadata.CopyFrom(tf.SummaryMetadata(display_name="A"))
    event = tf.Event(step=3, summary=summary)
    event2 = tf.Event(session_log=tf.SessionLog(status=tf.SessionLog.START))
    log = tf.Event(log_message=tf.LogMessage(level=tf.LogMessage.INFO, message="m"))
    parsed = tf.Event.FromString(event.SerializeToString())
    assert parsed.summary.value[1].histo.num == 2 and parsed.step == 3
    assert event2.session_log.status == tf.SessionLog.START == 1
    assert log.log_message.message == "m"
    assert tf.Summary is tf.summary.Summary and tf.SessionLog is tf.summary.SessionLog


def test_optimizer_options():
    config = tf.ConfigProto()
    config.graph_options.optimizer_options.CopyFrom(
        tf.OptimizerOptions(opt_level=tf.OptimizerOptions.L1))
    assert tf.ConfigProto.FromString(config.SerializeToString()) == config


@pytest.mark.parametrize("value", [
    np.arange(6, dtype=np.float32).reshape(2, 3),
    np.array([1, -2], np.int64),
    np.array([b"a", b"bc"], dtype=object),
    np.array(True),
])
def test_make_tensor_proto_and_ndarray_round_trip(value):
    proto = tf.make_tensor_proto(value)
    out = tf.make_ndarray(proto)
    np.testing.assert_array_equal(out, value)
    assert out.shape == value.shape


def test_make_tensor_proto_with_dtype_and_shape():
    proto = tf.make_tensor_proto(1.5, dtype=tf.float64, shape=[2, 2])
    assert proto.dtype == tf.float64.as_datatype_enum
    np.testing.assert_array_equal(tf.make_ndarray(proto), np.full((2, 2), 1.5))
