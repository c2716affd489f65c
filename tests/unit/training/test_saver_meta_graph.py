"""Meta graphs: export/import round trips without the model code, wire checks, collections."""

from __future__ import annotations

import numpy as np
import pytest
from google.protobuf import text_format

import tensorweave as tf
from tensorweave.kernels import io_kernels  # noqa: F401  (registers the checkpoint kernels)
from tensorweave.ops.variables import GraphKeys
from tensorweave.protos import meta_graph_pb2, saver_pb2, variable_pb2
from tensorweave.training import meta_graph
from tensorweave.training.saver import (
    Saver,
    export_meta_graph,
    import_meta_graph,
    latest_checkpoint,
)


def _build_model():
    """A tiny train-like graph: w += delta, global_step += 1 (op in TRAIN_OP)."""
    step = tf.Variable(
        0,
        name="global_step",
        trainable=False,
        collections=[GraphKeys.GLOBAL_VARIABLES, GraphKeys.GLOBAL_STEP],
    )
    w = tf.Variable(np.array([1.0, 2.0], np.float32), name="w")
    local = tf.Variable(
        0.5, name="local_thing", trainable=False, collections=[GraphKeys.LOCAL_VARIABLES]
    )
    delta = tf.placeholder(tf.float32, [2], name="delta")
    with tf.control_dependencies([step.assign_add(1)]):
        train = w.assign_add(delta, name="train")
    tf.add_to_collection(GraphKeys.TRAIN_OP, train.op)
    tf.add_to_collection("ints", 3)
    tf.add_to_collection("floats", 1.5)
    tf.add_to_collection("names", "hello")
    tf.add_to_collection("tensors", delta)
    tf.add_to_collection("junk", object())
    return step, w, local, delta, train


def _train_and_save(tmp_path, **save_kwargs):
    with tf.Graph().as_default():
        step, w, local, delta, train = _build_model()
        saver = Saver()
        with tf.Session() as sess:
            sess.run([step.initializer, w.initializer, local.initializer])
            sess.run(train, {delta: [1.0, 1.0]})
            return saver.save(sess, str(tmp_path / "model"), global_step=step, **save_kwargs)


def test_meta_graph_wire_format(tmp_path):
    prefix = _train_and_save(tmp_path)
    meta = meta_graph_pb2.MetaGraphDef()
    with open(prefix + ".meta", "rb") as f:
        meta.ParseFromString(f.read())
    op_names = [op.name for op in meta.meta_info_def.stripped_op_list.op]
    assert op_names == sorted(op_names)
    for op_type in (
        "VariableV2",
        "Assign",
        "AssignAdd",
        "Placeholder",
        "SaveV2",
        "RestoreV2",
        "PlaceholderWithDefault",
        "Const",
        "Identity",
        "NoOp",
    ):
        assert op_type in op_names
    assert set(op_names) == {n.op for n in meta.graph_def.node}
    save_v2 = next(op for op in meta.meta_info_def.stripped_op_list.op if op.name == "SaveV2")
    assert save_v2.is_stateful and [a.name for a in save_v2.input_arg] == [
        "prefix",
        "tensor_names",
        "shape_and_slices",
        "tensors",
    ]
    assert meta.saver_def.restore_op_name == "save/restore_all"
    assert meta.saver_def.version == saver_pb2.SaverDef.V2
    assert {"w", "global_step", "save/SaveV2", "train"} <= {n.name for n in meta.graph_def.node}
    assert any("_output_shapes" in n.attr for n in meta.graph_def.node)
    cols = meta.collection_def
    assert cols["ints"].int64_list.value == [3]
    assert list(cols["floats"].float_list.value) == [1.5]
    assert list(cols["names"].bytes_list.value) == [b"hello"]
    assert list(cols[GraphKeys.TRAIN_OP].node_list.value) == ["train"]
    assert list(cols["tensors"].node_list.value) == ["delta:0"]
    assert "junk" not in cols
    defs = []
    for raw in cols[GraphKeys.GLOBAL_VARIABLES].bytes_list.value:
        vd = variable_pb2.VariableDef()
        vd.ParseFromString(raw)
        defs.append(vd)
    assert [d.variable_name for d in defs] == ["global_step:0", "w:0"]
    assert defs[1].snapshot_name == "w/read:0" and defs[1].initializer_name == "w/Assign"
    assert len(cols[GraphKeys.TRAINABLE_VARIABLES].bytes_list.value) == 1
    assert len(cols[GraphKeys.LOCAL_VARIABLES].bytes_list.value) == 1
    assert len(cols[GraphKeys.GLOBAL_STEP].bytes_list.value) == 1


def test_import_meta_graph_restore_and_train_without_model_code(tmp_path):
    prefix = _train_and_save(tmp_path)
    with tf.Graph().as_default() as g:
        saver = import_meta_graph(prefix + ".meta")
        assert isinstance(saver, Saver)
        assert saver.saver_def.restore_op_name == "save/restore_all"
        with tf.Session() as sess:
            saver.restore(sess, latest_checkpoint(str(tmp_path)))
            np.testing.assert_array_equal(sess.run("w:0"), [2.0, 3.0])
            train_op = tf.get_collection(GraphKeys.TRAIN_OP)[0]
            assert train_op.name == "train"
            sess.run(train_op, {"delta:0": [10.0, 10.0]})
            np.testing.assert_array_equal(sess.run("w:0"), [12.0, 13.0])
            step = tf.get_collection(GraphKeys.GLOBAL_STEP)[0]
            assert sess.run(step) == 2
            again = saver.save(sess, str(tmp_path / "model"), global_step=step)
        assert again.endswith("model-2")
        global_vars = tf.global_variables()
        assert [v.name for v in global_vars] == ["global_step:0", "w:0"]
        assert step is global_vars[0]  # one Variable object per VariableDef
        assert [v.name for v in tf.trainable_variables()] == ["w:0"]
        assert not global_vars[0].trainable
        assert [v.name for v in tf.local_variables()] == ["local_thing:0"]
        assert tf.get_collection("ints") == [3]
        assert tf.get_collection("floats") == [1.5]
        assert tf.get_collection("names") == [b"hello"]
        assert tf.get_collection("tensors") == [g.get_tensor_by_name("delta:0")]


def test_import_meta_graph_with_scope_and_text_format(tmp_path):
    prefix = _train_and_save(tmp_path)
    meta = export_meta_graph(
        str(tmp_path / "graph.pbtxt"), as_text=True, graph=_graph_from_meta(prefix + ".meta")
    )
    parsed = text_format.Parse(
        (tmp_path / "graph.pbtxt").read_text(), meta_graph_pb2.MetaGraphDef()
    )
    assert parsed.graph_def == meta.graph_def
    with tf.Graph().as_default():
        saver = import_meta_graph(prefix + ".meta", import_scope="imported", clear_devices=True)
        assert saver.saver_def.filename_tensor_name == "imported/save/Const:0"
        assert saver.saver_def.restore_op_name == "imported/save/restore_all"
        with tf.Session() as sess:
            saver.restore(sess, prefix)
            np.testing.assert_array_equal(sess.run("imported/w:0"), [2.0, 3.0])
        assert [v.name for v in tf.global_variables()] == ["imported/global_step:0", "imported/w:0"]


def _graph_from_meta(path):
    g = tf.Graph()
    with g.as_default():
        import_meta_graph(path)
    return g


def test_import_without_saver_def(tmp_path):
    with tf.Graph().as_default():
        tf.Variable(1.0, name="v")
        meta = export_meta_graph()
    assert not meta.HasField("saver_def")
    with tf.Graph().as_default():
        saver = import_meta_graph(meta)
        assert isinstance(saver, Saver) and saver.saver_def.restore_op_name == "save/restore_all"
    with tf.Graph().as_default():
        tf.constant(1.0, name="c")
        no_vars = export_meta_graph()
    with tf.Graph().as_default():
        assert import_meta_graph(no_vars) is None


def test_export_scope_clear_devices_and_default_attrs(tmp_path):
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"), tf.name_scope("tower"):
            v = tf.Variable(1.0, name="v")
        outside = tf.Variable(2.0, name="outside")
        del outside
        meta = export_meta_graph(export_scope="tower", clear_devices=True, strip_default_attrs=True)
        full = export_meta_graph()
    names = {n.name for n in meta.graph_def.node}
    assert "v" in names and "v/read" in names and "outside" not in names
    assert all(not n.device for n in meta.graph_def.node)
    assert any(n.device == "/job:ps/task:0" for n in full.graph_def.node)
    assert meta.meta_info_def.stripped_default_attrs
    var_node = next(n for n in meta.graph_def.node if n.name == "v")
    assert "container" not in var_node.attr and "shared_name" not in var_node.attr
    assert "container" in next(n for n in full.graph_def.node if n.name == "tower/v").attr
    vd = variable_pb2.VariableDef()
    vd.ParseFromString(meta.collection_def[GraphKeys.GLOBAL_VARIABLES].bytes_list.value[0])
    assert vd.variable_name == "v:0"
    del v


def test_clear_extraneous_savers():
    with tf.Graph().as_default():
        v = tf.Variable(1.0, name="v")
        first = Saver([v])
        second = Saver([v])
        tf.add_to_collection(GraphKeys.SAVERS, first)
        tf.add_to_collection(GraphKeys.SAVERS, second)
        meta = second.export_meta_graph(clear_extraneous_savers=True)
        both = second.export_meta_graph()
    names = {n.name for n in meta.graph_def.node}
    assert "save_1/SaveV2" in names and "save/SaveV2" not in names
    assert "save/SaveV2" in {n.name for n in both.graph_def.node}
    savers = meta.collection_def[GraphKeys.SAVERS].bytes_list.value
    assert len(savers) == 1 and len(both.collection_def[GraphKeys.SAVERS].bytes_list.value) == 2
    sd = saver_pb2.SaverDef()
    sd.ParseFromString(savers[0])
    assert sd.restore_op_name == "save_1/restore_all"


def test_proto_function_registry():
    assert meta_graph.get_collection_proto_type(GraphKeys.GLOBAL_VARIABLES) is (
        variable_pb2.VariableDef
    )
    assert meta_graph.get_to_proto_function(GraphKeys.SAVERS) is not None
    assert meta_graph.get_from_proto_function("no such collection") is None
    with pytest.raises(KeyError):
        meta_graph.register_proto_function(GraphKeys.GLOBAL_VARIABLES)
    with pytest.raises(TypeError, match="to_proto must be callable"):
        meta_graph.register_proto_function("test_saver_meta_graph.bad", to_proto=3)


def test_read_meta_graph_file_errors(tmp_path):
    with pytest.raises(OSError, match="does not exist"):
        meta_graph.read_meta_graph_file(str(tmp_path / "missing.meta"))
    (tmp_path / "bad.meta").write_bytes(b"\xff\xfe not a proto {")
    with pytest.raises(OSError, match="Cannot parse"):
        meta_graph.read_meta_graph_file(str(tmp_path / "bad.meta"))
    with pytest.raises(OSError):
        import_meta_graph(str(tmp_path / "missing.meta"))


def test_name_scope_helpers():
    assert meta_graph.prepend_name_scope("a/b:0", "s") == "s/a/b:0"
    assert meta_graph.prepend_name_scope("^a", "s/") == "^s/a"
    assert meta_graph.prepend_name_scope("loc:@a", "s") == "loc:@s/a"
    assert meta_graph.prepend_name_scope("a", "") == "a"
    assert meta_graph.strip_name_scope("s/a/b:0", "s") == "a/b:0"
    assert meta_graph.strip_name_scope("^s/a", "s") == "^a"
    assert meta_graph.strip_name_scope("other/a", "s") == "other/a"


def test_unbound_inputs_need_input_map():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [], name="x")
        with tf.name_scope("scope"):
            tf.identity(x, name="y")
        meta = export_meta_graph(export_scope="scope")
    assert list(meta.collection_def["unbound_inputs"].node_list.value) == ["$unbound_inputs_x"]
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="unbound inputs"):
            meta_graph.import_scoped_meta_graph(meta)
    with tf.Graph().as_default():
        feed = tf.constant(4.0, name="feed")
        meta_graph.import_scoped_meta_graph(
            meta, import_scope="new", input_map={"$unbound_inputs_x": feed}
        )
        with tf.Session() as sess:
            assert sess.run("new/y:0") == 4.0
