"""Descriptor-level comparison of `tensorweave.protos` with TensorBoard's and TensorFlow's
copies of the TensorFlow protos: where those are importable, every shared message and enum
is compared field by field, and bytes are exchanged both ways.
"""

from __future__ import annotations

import importlib
import pkgutil

import pytest
from google.protobuf import descriptor_pool

import tensorweave.protos as tw_protos
from tensorweave.protos import config_pb2, graph_pb2, summary_pb2, types_pb2


def _all_tw_modules():
    names = sorted(
        m.name for m in pkgutil.iter_modules(tw_protos.__path__) if m.name.endswith("_pb2")
    )
    return [importlib.import_module(f"tensorweave.protos.{n}") for n in names]


# ---------------------------------------------------------------------------
# (c) descriptor-level comparison with TensorBoard's / TensorFlow's copies
# ---------------------------------------------------------------------------


def _is_repeated(field):
    if hasattr(field, "is_repeated"):
        return field.is_repeated
    return field.label == field.LABEL_REPEATED


def _is_packed(field):
    if hasattr(field, "is_packed"):
        return field.is_packed
    if not _is_repeated(field) or field.type in (
        field.TYPE_STRING,
        field.TYPE_BYTES,
        field.TYPE_MESSAGE,
        field.TYPE_GROUP,
    ):
        return False
    opts = field.GetOptions()
    if opts.HasField("packed"):
        return opts.packed
    return True  # proto3 default


def _iter_messages(file_desc):
    stack = list(file_desc.message_types_by_name.values())
    while stack:
        msg = stack.pop()
        yield msg
        stack.extend(msg.nested_types)


def _iter_enums(file_desc):
    yield from file_desc.enum_types_by_name.values()
    for msg in _iter_messages(file_desc):
        yield from msg.enum_types


def _field_problems(msg, field, theirs, ours):
    """Differences between our ``field`` of ``msg`` and its twin in message ``theirs``.

    ``ours(desc)`` maps one of their message descriptors to our full name.
    """
    problems = []
    other = theirs.fields_by_number.get(field.number)
    by_name = theirs.fields_by_name.get(field.name)
    if by_name is not None and by_name.number != field.number:
        problems.append(f"{msg.full_name}.{field.name}: number {field.number} vs {by_name.number}")
    if other is None:
        return problems
    where = f"{msg.full_name}.{field.name} (#{field.number})"
    if other.name != field.name:
        problems.append(f"{where}: named {other.name!r} there")
    if other.type != field.type:
        problems.append(f"{where}: type {field.type} vs {other.type}")
    if _is_repeated(other) != _is_repeated(field):
        problems.append(f"{where}: repeated-ness differs")
    if _is_packed(other) != _is_packed(field):
        problems.append(f"{where}: packed-ness differs")
    mine_t = field.message_type.full_name if field.message_type else None
    if mine_t != (ours(other.message_type) if other.message_type else None):
        problems.append(
            f"{where}: message type {mine_t} vs "
            f"{other.message_type and other.message_type.full_name}"
        )
    mine_e = field.enum_type.full_name if field.enum_type else None
    their_e = other.enum_type.full_name if other.enum_type else None
    if (mine_e is None) != (their_e is None):
        problems.append(f"{where}: enum-ness differs")
    mine_o = field.containing_oneof.name if field.containing_oneof else None
    their_o = other.containing_oneof.name if other.containing_oneof else None
    if mine_o != their_o:
        problems.append(f"{where}: oneof {mine_o} vs {their_o}")
    return problems


def _enum_problems(enum, theirs):
    """Values of our ``enum`` numbered differently in their enum ``theirs``."""
    their_values = {v.name: v.number for v in theirs.values}
    return [
        f"{enum.full_name}.{value.name}: {value.number} vs {their_values[value.name]}"
        for value in enum.values
        if value.name in their_values and their_values[value.name] != value.number
    ]


def _compare_with(other_package, extra_names=None):
    """Compare every tensorweave message/enum with ``other_package``'s twin.

    Returns (number of shared messages, list of problems).
    """
    pool = descriptor_pool.Default()
    extra_names = extra_names or {}

    def twin(full_name):
        return extra_names.get(full_name, full_name.replace("tensorweave.", other_package + ".", 1))

    def ours(desc):
        return desc.full_name.replace(other_package + ".", "tensorweave.", 1) if desc else None

    problems = []
    shared = 0
    for module in _all_tw_modules():
        for msg in _iter_messages(module.DESCRIPTOR):
            try:
                theirs = pool.FindMessageTypeByName(twin(msg.full_name))
            except KeyError:
                continue
            shared += 1
            for field in msg.fields:
                problems.extend(_field_problems(msg, field, theirs, ours))
        for enum in _iter_enums(module.DESCRIPTOR):
            try:
                theirs = pool.FindEnumTypeByName(twin(enum.full_name))
            except KeyError:
                continue
            problems.extend(_enum_problems(enum, theirs))
    return shared, problems


_TENSORBOARD_MODULES = """
    types tensor_shape resource_handle tensor attr_value node_def versions op_def function
    graph allocation_description tensor_description step_stats cost_graph cluster debug
    rpc_options config histogram summary event saver variable meta_graph
""".split()

_TF_FRAMEWORK_MODULES = """
    types tensor_shape resource_handle tensor attr_value node_def versions op_def function
    graph allocation_description tensor_description step_stats cost_graph device_attributes
    summary variable
""".split()

_TF_PROTOBUF_MODULES = """
    cluster config debug master worker tensorflow_server named_tensor meta_graph saver
    queue_runner error_codes
""".split()


def test_descriptors_match_tensorboard_copies():
    pytest.importorskip("tensorboard.compat.proto.types_pb2")
    loaded = 0
    for name in _TENSORBOARD_MODULES:
        try:
            importlib.import_module(f"tensorboard.compat.proto.{name}_pb2")
            loaded += 1
        except Exception:  # noqa: BLE001  (tolerate older/newer tensorboard layouts)
            continue
    if not loaded:
        pytest.skip("tensorboard's compat protos could not be imported")
    shared, problems = _compare_with("tensorboard")
    assert shared >= 50, shared
    assert problems == []


def test_bytes_interoperate_with_tensorboard_copies():
    tb_graph = pytest.importorskip("tensorboard.compat.proto.graph_pb2")
    tb_config = pytest.importorskip("tensorboard.compat.proto.config_pb2")
    tb_summary = pytest.importorskip("tensorboard.compat.proto.summary_pb2")
    _interop_round_trip(tb_graph, tb_config, tb_summary)


@pytest.mark.interop
def test_descriptors_match_tensorflow():
    pytest.importorskip("tensorflow")
    module_names = [f"tensorflow.core.framework.{n}_pb2" for n in _TF_FRAMEWORK_MODULES]
    module_names += [f"tensorflow.core.protobuf.{n}_pb2" for n in _TF_PROTOBUF_MODULES]
    module_names += [
        "tensorflow.core.util.event_pb2",
        "tensorflow.python.training.checkpoint_state_pb2",
    ]
    for name in module_names:
        try:
            importlib.import_module(name)
        except ImportError:
            continue
    shared, problems = _compare_with(
        "tensorflow", extra_names={"tensorweave.Code": "tensorflow.error.Code"}
    )
    assert shared >= 50, shared
    assert problems == []


@pytest.mark.interop
def test_bytes_interoperate_with_tensorflow():
    pytest.importorskip("tensorflow")
    tf_graph = pytest.importorskip("tensorflow.core.framework.graph_pb2")
    tf_config = pytest.importorskip("tensorflow.core.protobuf.config_pb2")
    tf_summary = pytest.importorskip("tensorflow.core.framework.summary_pb2")
    _interop_round_trip(tf_graph, tf_config, tf_summary)


def _interop_round_trip(their_graph, their_config, their_summary):
    g = graph_pb2.GraphDef()
    n = g.node.add(name="a", op="Const", device="/cpu:0")
    n.attr["dtype"].type = types_pb2.DT_FLOAT
    n.attr["value"].tensor.dtype = types_pb2.DT_FLOAT
    n.attr["value"].tensor.float_val.extend([1.0, 2.5])
    n.attr["value"].tensor.tensor_shape.dim.add(size=2)
    g.node.add(name="b", op="Identity", input=["a", "^a"])
    g.versions.producer = 27
    theirs = their_graph.GraphDef.FromString(g.SerializeToString())
    assert [x.name for x in theirs.node] == ["a", "b"]
    assert list(theirs.node[0].attr["value"].tensor.float_val) == [1.0, 2.5]
    assert theirs.node[0].attr["dtype"].type == types_pb2.DT_FLOAT
    assert list(theirs.node[1].input) == ["a", "^a"]
    assert theirs.versions.producer == 27
    back = graph_pb2.GraphDef.FromString(theirs.SerializeToString())
    assert back == g

    c = config_pb2.ConfigProto(
        inter_op_parallelism_threads=3,
        operation_timeout_in_ms=5000,
        isolate_session_state=True,
        tensorweave=config_pb2.TensorweaveOptions(use_remote_master=True),
    )
    c.device_count["GPU"] = 0
    c.cluster_def.job.add(name="worker").tasks[1] = "h:2"
    c.experimental.share_session_state_in_clusterspec_propagation = True
    theirs_c = their_config.ConfigProto.FromString(c.SerializeToString())
    assert theirs_c.inter_op_parallelism_threads == 3
    assert theirs_c.operation_timeout_in_ms == 5000
    assert theirs_c.isolate_session_state
    assert dict(theirs_c.device_count) == {"GPU": 0}
    assert dict(theirs_c.cluster_def.job[0].tasks) == {1: "h:2"}
    assert theirs_c.experimental.share_session_state_in_clusterspec_propagation
    # Field 1000 is unknown to them but must be carried through.
    back_c = config_pb2.ConfigProto.FromString(theirs_c.SerializeToString())
    assert back_c == c

    s = summary_pb2.Summary()
    s.value.add(tag="loss", simple_value=0.25)
    h = s.value.add(tag="h").histo
    h.bucket_limit.extend([0.0, 1.0])
    h.bucket.extend([3.0, 4.0])
    theirs_s = their_summary.Summary.FromString(s.SerializeToString())
    assert theirs_s.value[0].simple_value == 0.25
    assert list(theirs_s.value[1].histo.bucket) == [3.0, 4.0]
    assert summary_pb2.Summary.FromString(theirs_s.SerializeToString()) == s
