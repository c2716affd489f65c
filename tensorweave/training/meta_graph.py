"""`MetaGraphDef` export and import, and the registry of collection serializers.

Follows TF's `framework/meta_graph.py` and `ops.register_proto_function`.

A meta graph holds the `GraphDef`, the `OpDef`s of the op types it uses
(`meta_info_def.stripped_op_list`), an optional `SaverDef` and the graph's collections.
A collection is serialized by its registered `to_proto` function when it has one (as a
`bytes_list` of serialized protos, e.g. `VariableDef`s for the variable collections);
otherwise by the kind of its first item: strings/bytes -> `bytes_list`, ints ->
`int64_list`, floats -> `float_list`, ops and tensors -> `node_list` of their names.
Collections that cannot be serialized are skipped with a warning, as in TensorFlow.

Other modules register their collections at import time with `register_proto_function`
(the variable collections are registered in `meta_graph_collections`; `SAVERS` by
`training.saver`). The collection serialization lives in `meta_graph_collections`; this
module re-exports its public names.
"""

from __future__ import annotations

import copy
import os
import re
import sys
from collections.abc import Callable
from typing import Any

from google.protobuf import text_format
from google.protobuf.message import DecodeError

from tensorweave.framework import graph as graph_mod
from tensorweave.framework.graph_io import import_graph_def, parse_input
from tensorweave.framework.op_def import get_op_def
from tensorweave.kernels.checkpoint_format import atomic_write
from tensorweave.ops.variables import GraphKeys
from tensorweave.protos import graph_pb2, meta_graph_pb2, op_def_pb2, saver_pb2
from tensorweave.training.meta_graph_collections import (  # noqa: F401  (ProtoFunctions: API)
    UNBOUND_INPUT_PREFIX,
    ProtoFunctions,
    add_collection_def,
    get_collection_proto_type,
    get_from_proto_function,
    get_to_proto_function,
    prepend_name_scope,
    register_proto_function,
    restore_collections,
    strip_name_scope,
)

_SAVE_OPS = ("SaveV2", "RestoreV2", "MergeV2Checkpoints", "Save", "SaveSlices", "Restore")


# ------------------------------------------------------------------- exporting
def stripped_op_list_for_graph(graph_def: Any) -> Any:
    """An `OpList` with the `OpDef` of every op type used by `graph_def`, sorted by name.

    Raises:
      ValueError: for an op type that is not registered.
    """
    op_list = op_def_pb2.OpList()
    for op_type in sorted({n.op for n in graph_def.node}):
        try:
            op_list.op.append(get_op_def(op_type).to_proto())
        except LookupError:
            raise ValueError(f"Op {op_type} is used by the graph but is not registered") from None
    return op_list


def strip_graph_default_valued_attrs(meta_graph_def: Any) -> None:
    """Removes node attrs equal to their `OpDef` default, in place.

    Follows `meta_graph.strip_graph_default_valued_attrs`.
    """
    defaults = {
        op.name: {a.name: a.default_value for a in op.attr if a.HasField("default_value")}
        for op in meta_graph_def.meta_info_def.stripped_op_list.op
    }
    for node in meta_graph_def.graph_def.node:
        for name, default in defaults.get(node.op, {}).items():
            if name in node.attr and node.attr[name] == default:
                del node.attr[name]
    meta_graph_def.meta_info_def.stripped_default_attrs = True


def _extraneous_saver_nodes(graph_def: Any, saver_def: Any) -> set[str]:
    """Nodes of savers other than `saver_def`'s (their whole name scopes)."""
    keep = saver_def.save_tensor_name.rsplit("/", 1)[0] if saver_def is not None else None
    scopes = {
        n.name.rsplit("/", 1)[0] for n in graph_def.node if n.op in _SAVE_OPS and "/" in n.name
    }
    scopes.discard(keep)
    return {n.name for n in graph_def.node if any(n.name.startswith(s + "/") for s in scopes)}


def _scoped_node_def(
    node: Any, export_scope: str | None, unbound: list[str], clear_devices: bool
) -> Any:
    out = copy.deepcopy(node)
    del out.input[:]
    for inp in node.input:
        src, _, _ = parse_input(inp)
        if export_scope and not src.startswith(export_scope):
            bound = re.sub(r"([\^]|^)(.*)", r"\1" + UNBOUND_INPUT_PREFIX + r"\2", inp)
            unbound.append(bound)
            out.input.append(bound)
        else:
            out.input.append(strip_name_scope(inp, export_scope))
    out.name = strip_name_scope(node.name, export_scope)
    if "_class" in node.attr and export_scope:
        groups = [
            s
            for s in node.attr["_class"].list.s
            if s.decode().split("@", 1)[-1].startswith(export_scope)
        ]
        del out.attr["_class"].list.s[:]
        out.attr["_class"].list.s.extend(
            strip_name_scope(s.decode(), export_scope).encode() for s in groups
        )
    if clear_devices:
        out.device = ""
    return out


def _export_graph_def(
    graph_def: Any, export_scope: str | None, clear_devices: bool, exclude: set[str]
) -> tuple[Any, list[str]]:
    out = graph_pb2.GraphDef()
    out.versions.CopyFrom(graph_def.versions)
    out.library.CopyFrom(graph_def.library)
    unbound: list[str] = []
    for node in graph_def.node:
        if node.name in exclude:
            continue
        if export_scope and not node.name.startswith(export_scope + "/"):
            continue
        out.node.append(_scoped_node_def(node, export_scope, unbound, clear_devices))
    return out, unbound


# NOTE: TensorFlow parses `tensorflow_version` as a version number; tensorweave follows the
# TF 1.15 graph API, and records its own version in `tensorflow_git_version`.
TF_API_VERSION = "1.15.0"


def _version_strings() -> tuple[str, str]:
    version = getattr(sys.modules.get("tensorweave"), "__version__", "")
    return TF_API_VERSION, (f"tensorweave-{version}" if version else "tensorweave")


def create_meta_graph_def(
    meta_info_def: Any = None,
    graph_def: Any = None,
    saver_def: Any = None,
    collection_list: list[str] | None = None,
    graph: Any = None,
    export_scope: str | None = None,
    exclude_nodes: set[str] | None = None,
    clear_extraneous_savers: bool = False,
    strip_default_attrs: bool = False,
) -> Any:
    """Builds a `MetaGraphDef` from its parts (follows `meta_graph.create_meta_graph_def`).

    Raises:
      TypeError: for arguments of the wrong proto type.
      ValueError: if the graph uses an unregistered op type.
    """
    if graph is not None and not isinstance(graph, graph_mod.Graph):
        raise TypeError(f"graph must be of type Graph, not {type(graph)}")
    for value, cls, what in (
        (meta_info_def, meta_graph_pb2.MetaGraphDef.MetaInfoDef, "meta_info_def"),
        (graph_def, graph_pb2.GraphDef, "graph_def"),
        (saver_def, saver_pb2.SaverDef, "saver_def"),
    ):
        if value is not None and not isinstance(value, cls):
            raise TypeError(f"{what} must be of type {cls.__name__}, not {type(value)}")
    graph = graph or graph_mod.get_default_graph()
    meta_graph_def = meta_graph_pb2.MetaGraphDef()
    if meta_info_def is not None:
        meta_graph_def.meta_info_def.MergeFrom(meta_info_def)
    info = meta_graph_def.meta_info_def
    info.tensorflow_version, info.tensorflow_git_version = _version_strings()
    if graph_def is None:
        graph_def = graph.as_graph_def(add_shapes=True)
    meta_graph_def.graph_def.MergeFrom(graph_def)
    if not info.stripped_op_list.op:
        info.stripped_op_list.MergeFrom(stripped_op_list_for_graph(meta_graph_def.graph_def))
    if strip_default_attrs:
        strip_graph_default_valued_attrs(meta_graph_def)
    if saver_def is not None:
        meta_graph_def.saver_def.MergeFrom(saver_def)
    keys = collection_list if collection_list is not None else graph.get_all_collection_keys()
    for key in keys:
        override = None
        if clear_extraneous_savers and key == GraphKeys.SAVERS:
            from_proto = get_from_proto_function(key)
            override = [from_proto(saver_def)] if from_proto and saver_def is not None else []
        add_collection_def(
            meta_graph_def,
            key,
            graph=graph,
            export_scope=export_scope,
            exclude_nodes=exclude_nodes,
            override_contents=override,
        )
    return meta_graph_def


def export_scoped_meta_graph(
    filename: str | None = None,
    graph_def: Any = None,
    graph: Any = None,
    export_scope: str | None = None,
    as_text: bool = False,
    unbound_inputs_col_name: str = "unbound_inputs",
    clear_devices: bool = False,
    saver_def: Any = None,
    clear_extraneous_savers: bool = False,
    strip_default_attrs: bool = False,
    save_debug_info: bool = False,
    meta_info_def: Any = None,
    collection_list: list[str] | None = None,
) -> tuple[Any, dict]:
    """Exports a graph as a `MetaGraphDef` (follows `meta_graph.export_scoped_meta_graph`).

    With `export_scope`, only that part is exported, names stripped. The result is written
    to `filename` when given.

    Inputs from outside `export_scope` become `$unbound_inputs_<name>` and are listed in
    collection `unbound_inputs_col_name`; importing then needs them in `input_map`.
    `save_debug_info` is accepted and ignored (no stack traces are recorded).

    Returns:
      `(meta_graph_def, var_list)`, var_list mapping the exported names of the global
      variables to the Variables.

    Raises:
      OSError: if `filename` cannot be written.
      TypeError, ValueError: as `create_meta_graph_def`.
    """
    del save_debug_info
    graph = graph or graph_mod.get_default_graph()
    if graph_def is None:
        graph_def = graph.as_graph_def(add_shapes=True)
    exclude = _extraneous_saver_nodes(graph_def, saver_def) if clear_extraneous_savers else set()
    scoped, unbound = _export_graph_def(graph_def, export_scope, clear_devices, exclude)
    var_list = {
        strip_name_scope(v.name, export_scope): v
        for v in graph.get_collection(GraphKeys.GLOBAL_VARIABLES)
        if not export_scope or v.name.startswith(export_scope)
    }
    if saver_def is not None and export_scope:
        saver_def = _scoped_saver_def(saver_def, export_scope, strip_name_scope)
    meta = create_meta_graph_def(
        meta_info_def=meta_info_def,
        graph_def=scoped,
        saver_def=saver_def,
        collection_list=collection_list,
        graph=graph,
        export_scope=export_scope,
        exclude_nodes=exclude,
        clear_extraneous_savers=clear_extraneous_savers,
        strip_default_attrs=strip_default_attrs,
    )
    if unbound and unbound_inputs_col_name:
        col = meta.collection_def[unbound_inputs_col_name]
        col.node_list.value.extend(sorted(set(u.lstrip("^") for u in unbound)))
    if filename:
        write_meta_graph_file(meta, filename, as_text=as_text)
    return meta, var_list


def _scoped_saver_def(saver_def: Any, scope: str, fn: Callable[[str, str], str]) -> Any:
    out = saver_pb2.SaverDef()
    out.CopyFrom(saver_def)
    out.filename_tensor_name = fn(saver_def.filename_tensor_name, scope)
    out.save_tensor_name = fn(saver_def.save_tensor_name, scope)
    out.restore_op_name = fn(saver_def.restore_op_name, scope)
    return out


def write_meta_graph_file(meta_graph_def: Any, filename: str, as_text: bool = False) -> str:
    """Atomically writes a `MetaGraphDef` (binary, or text format when `as_text`).

    Raises:
      OSError: if the file cannot be written.
    """
    parent = os.path.dirname(filename)
    if parent:
        os.makedirs(parent, exist_ok=True)
    data = (
        text_format.MessageToString(meta_graph_def).encode()
        if as_text
        else (meta_graph_def.SerializeToString())
    )

    def write(tmp: str) -> None:
        with open(tmp, "wb") as f:
            f.write(data)

    atomic_write(filename, write)
    return filename


def read_meta_graph_file(filename: str) -> Any:
    """Reads a binary or text `MetaGraphDef` file (`meta_graph.read_meta_graph_file`).

    Raises:
      OSError: "File ... does not exist." or "Cannot parse file ...".
    """
    if not os.path.exists(filename):
        raise OSError(f"File {filename} does not exist.")
    with open(filename, "rb") as f:
        content = f.read()
    meta = meta_graph_pb2.MetaGraphDef()
    try:
        meta.ParseFromString(content)
        return meta
    except DecodeError:
        pass
    try:
        text_format.Merge(content.decode("utf-8"), meta)
    except (text_format.ParseError, UnicodeDecodeError) as e:
        raise OSError(f"Cannot parse file {filename}: {e}.") from e
    return meta


# ------------------------------------------------------------------- importing
def import_scoped_meta_graph(
    meta_graph_or_file: Any,
    clear_devices: bool = False,
    graph: Any = None,
    import_scope: str | None = None,
    input_map: dict[str, Any] | None = None,
    unbound_inputs_col_name: str = "unbound_inputs",
    restore_collections_predicate: Callable[[str], bool] = (lambda key: True),
    return_elements: list[str] | None = None,
) -> Any:
    """Recreates a graph and its collections (`meta_graph.import_scoped_meta_graph`).

    `meta_graph_or_file` is a `MetaGraphDef` or the path of a meta graph file.

    Returns:
      var_list: the imported global variables by name without the import scope; with
      `return_elements`, `(var_list, elements)`.

    Raises:
      ValueError: for unbound inputs missing from `input_map`, or from `import_graph_def`.
      OSError: for an unreadable file.
    """
    meta = meta_graph_or_file
    if not isinstance(meta, meta_graph_pb2.MetaGraphDef):
        meta = read_meta_graph_file(meta_graph_or_file)
    graph = graph or graph_mod.get_default_graph()
    input_map = dict(input_map or {})
    _check_unbound(meta, unbound_inputs_col_name, input_map)
    graph_def = meta.graph_def
    if clear_devices:
        graph_def = copy.deepcopy(graph_def)
        for node in graph_def.node:
            node.device = ""
    with graph.as_default():
        scope = graph.unique_name(import_scope, mark_as_used=False) if import_scope else ""
        elements = import_graph_def(
            graph_def, input_map=input_map or None, return_elements=return_elements, name=scope
        )
        restore_collections(
            graph, meta, scope, unbound_inputs_col_name, restore_collections_predicate
        )
    var_list = {
        strip_name_scope(v.name, scope): v
        for v in graph.get_collection(GraphKeys.GLOBAL_VARIABLES, scope=scope or None)
    }
    return (var_list, elements) if return_elements is not None else var_list


def _check_unbound(meta: Any, col_name: str, input_map: dict[str, Any]) -> None:
    col = meta.collection_def.get(col_name) if col_name else None
    if col is None or col.WhichOneof("kind") is None:
        return
    names = list(getattr(col, col.WhichOneof("kind")).value)
    names = [n.decode() if isinstance(n, bytes) else n for n in names]
    missing = [n for n in names if n not in input_map and n + ":0" not in input_map]
    if missing:
        raise ValueError(
            f"Graph contains unbound inputs: {','.join(missing)}. Must provide "
            "these inputs through input_map."
        )


__all__ = [
    "add_collection_def",
    "create_meta_graph_def",
    "export_scoped_meta_graph",
    "get_collection_proto_type",
    "get_from_proto_function",
    "get_to_proto_function",
    "import_scoped_meta_graph",
    "prepend_name_scope",
    "read_meta_graph_file",
    "register_proto_function",
    "strip_name_scope",
    "stripped_op_list_for_graph",
]
