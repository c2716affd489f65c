"""tensorweave's protos carry every field TensorFlow's have (same numbers and types), so
text and binary protos written by either side parse in the other."""

from __future__ import annotations

import importlib

import pytest

from tests.interop.conftest import run_tf

pytestmark = pytest.mark.interop

# (TensorFlow module, tensorweave module) pairs whose messages are compared.
MODULES = [
    ("framework.graph_pb2", "graph_pb2"),
    ("framework.node_def_pb2", "node_def_pb2"),
    ("framework.attr_value_pb2", "attr_value_pb2"),
    ("framework.tensor_pb2", "tensor_pb2"),
    ("framework.tensor_shape_pb2", "tensor_shape_pb2"),
    ("framework.op_def_pb2", "op_def_pb2"),
    ("framework.function_pb2", "function_pb2"),
    ("framework.versions_pb2", "versions_pb2"),
    ("framework.full_type_pb2", "full_type_pb2"),
    ("framework.graph_debug_info_pb2", "graph_debug_info_pb2"),
    ("protobuf.meta_graph_pb2", "meta_graph_pb2"),
    ("protobuf.config_pb2", "config_pb2"),
    ("protobuf.cluster_pb2", "cluster_pb2"),
    ("protobuf.tensorflow_server_pb2", "tensorflow_server_pb2"),
    ("framework.step_stats_pb2", "step_stats_pb2"),
    ("framework.cost_graph_pb2", "cost_graph_pb2"),
    ("framework.summary_pb2", "summary_pb2"),
    ("util.event_pb2", "event_pb2"),
    ("framework.device_attributes_pb2", "device_attributes_pb2"),
    ("protobuf.saver_pb2", "saver_pb2"),
    ("framework.variable_pb2", "variable_pb2"),
    ("protobuf.queue_runner_pb2", "queue_runner_pb2"),
    ("framework.resource_handle_pb2", "resource_handle_pb2"),
    ("protobuf.tensor_bundle_pb2", "tensor_bundle_pb2"),
    ("framework.tensor_slice_pb2", "tensor_slice_pb2"),
]

# Fields of SavedModel / Grappler machinery that tensorweave does not model; in binary protos
# they are kept as unknown fields.
NOT_MODELLED = {
    "GraphOptions.rewrite_options",
    "MetaGraphDef.object_graph_def",
    "TensorInfo.composite_tensor",
    "ConfigProto.Experimental.coordination_config",
}

DUMP = """
import importlib
out = {}
def walk(d, prefix):
    name = prefix + d.name
    out[name] = {f.name: [f.number, f.type] for f in d.fields}
    for n in d.nested_types:
        walk(n, name + ".")
for m in sys.argv[1].split(","):
    mod = importlib.import_module("tensorflow.core." + m)
    for d in mod.DESCRIPTOR.message_types_by_name.values():
        walk(d, "")
print(json.dumps(out))
"""


def _ours() -> dict[str, dict[str, list[int]]]:
    out: dict[str, dict[str, list[int]]] = {}

    def walk(d, prefix):
        name = prefix + d.name
        out[name] = {f.name: [f.number, f.type] for f in d.fields}
        for n in d.nested_types:
            walk(n, name + ".")

    for _, ours in MODULES:
        mod = importlib.import_module("tensorweave.protos." + ours)
        for d in mod.DESCRIPTOR.message_types_by_name.values():
            walk(d, "")
    return out


def test_every_tensorflow_field_exists_with_the_same_number_and_type(tf_python):
    theirs = run_tf(tf_python, DUMP, ",".join(m for m, _ in MODULES))
    ours = _ours()
    problems = []
    for message, fields in theirs.items():
        if message not in ours:
            continue  # a message tensorweave does not use (listed by its parent's field)
        by_number = {num: (name, typ) for name, (num, typ) in ours[message].items()}
        for name, (num, typ) in fields.items():
            if f"{message}.{name}" in NOT_MODELLED:
                continue
            if num not in by_number:
                problems.append(f"{message}.{name} = {num} is missing")
            elif by_number[num][1] != typ:
                problems.append(f"{message}.{name} = {num}: type {by_number[num][1]} != {typ}")
    assert not problems, "\n".join(problems)
