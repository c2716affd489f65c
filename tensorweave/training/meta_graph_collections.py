"""The collections of a `MetaGraphDef`: the serializer registry, export and import.

Follows TF's `ops.register_proto_function` and the collection parts of
`framework/meta_graph.py`. A collection is serialized by its registered `to_proto` function
when it has one (as a `bytes_list` of serialized protos, e.g. `VariableDef`s for the
variable collections); otherwise by the kind of its first item: strings/bytes ->
`bytes_list`, ints -> `int64_list`, floats -> `float_list`, ops and tensors -> `node_list`
of their names. Collections that cannot be serialized are skipped with a warning, as in
TensorFlow. The name-scope helpers used on both sides live here too.

`meta_graph` re-exports the public names; import them from there.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Callable
from typing import Any

from tensorweave.framework import graph as graph_mod
from tensorweave.framework.registry import Registry
from tensorweave.ops.variables import GraphKeys, Variable
from tensorweave.protos import variable_pb2

# NOTE: the logger keeps the name of `meta_graph`, where these functions were first written.
_log = logging.getLogger("tensorweave.training.meta_graph")
UNBOUND_INPUT_PREFIX = "$unbound_inputs_"


@dataclasses.dataclass(frozen=True)
class ProtoFunctions:
    """How one collection is (de)serialized in a `MetaGraphDef`."""

    proto_type: Any
    to_proto: Callable[..., Any] | None
    from_proto: Callable[..., Any] | None


_proto_functions = Registry("proto functions")


def register_proto_function(
    collection_name: str,
    proto_type: Any = None,
    to_proto: Callable[..., Any] | None = None,
    from_proto: Callable[..., Any] | None = None,
) -> None:
    """Registers how a collection is stored in meta graphs (`ops.register_proto_function`).

    Args:
      collection_name: the collection key.
      proto_type: the protobuf message class of one serialized item.
      to_proto: `fn(item, export_scope=None) -> proto or None` (None skips the item).
      from_proto: `fn(proto, import_scope=None) -> item`.

    Raises:
      TypeError: if `to_proto` or `from_proto` is given but not callable.
      KeyError: if the collection is already registered.
    """
    if to_proto is not None and not callable(to_proto):
        raise TypeError("to_proto must be callable.")
    if from_proto is not None and not callable(from_proto):
        raise TypeError("from_proto must be callable.")
    _proto_functions.register(ProtoFunctions(proto_type, to_proto, from_proto), collection_name)


def get_collection_proto_type(collection_name: str) -> Any:
    """The registered proto class of a collection, or None."""
    entry = _proto_functions.get(collection_name)
    return entry.proto_type if entry else None


def get_to_proto_function(collection_name: str) -> Callable[..., Any] | None:
    """The registered `to_proto` of a collection, or None."""
    entry = _proto_functions.get(collection_name)
    return entry.to_proto if entry else None


def get_from_proto_function(collection_name: str) -> Callable[..., Any] | None:
    """The registered `from_proto` of a collection, or None."""
    entry = _proto_functions.get(collection_name)
    return entry.from_proto if entry else None


class _VariableDefView:
    """A `VariableDef` whose `HasField` also answers for proto3 scalars without presence.

    `Variable._init_from_proto` asks `HasField("trainable")`, which proto3 refuses.
    """

    def __init__(self, proto: Any):
        self._proto = proto

    def __getattr__(self, name: str) -> Any:
        return getattr(self._proto, name)

    def HasField(self, name: str) -> bool:  # noqa: N802  (protobuf's method name)
        try:
            return self._proto.HasField(name)
        except ValueError:
            return True


def _variable_to_proto(v: Any, export_scope: str | None = None) -> Any:
    return v.to_proto(export_scope=export_scope) if hasattr(v, "to_proto") else None


def _variable_from_proto(proto: Any, import_scope: str | None = None) -> Variable:
    return Variable.from_proto(_VariableDefView(proto), import_scope=import_scope)


_VARIABLE_KEYS = (
    GraphKeys.GLOBAL_VARIABLES,
    GraphKeys.TRAINABLE_VARIABLES,
    GraphKeys.LOCAL_VARIABLES,
    GraphKeys.MODEL_VARIABLES,
    GraphKeys.MOVING_AVERAGE_VARIABLES,
    GraphKeys.METRIC_VARIABLES,
    GraphKeys.GLOBAL_STEP,
)
for _key in _VARIABLE_KEYS:
    register_proto_function(
        _key,
        proto_type=variable_pb2.VariableDef,
        to_proto=_variable_to_proto,
        from_proto=_variable_from_proto,
    )


# --------------------------------------------------------------------- names
def prepend_name_scope(name: str, import_scope: str | None) -> str:
    """`import_scope/name`, a leading `^` or `loc:@` kept (`ops.prepend_name_scope`)."""
    if not import_scope:
        return name
    scope = import_scope.rstrip("/")
    m = re.match(r"^(\^|loc:@)?(.*)$", name)
    return f"{m.group(1) or ''}{scope}/{m.group(2)}"


def strip_name_scope(name: str, export_scope: str | None) -> str:
    """`name` without a leading `export_scope/` after any `^`/`loc:@` (`ops.strip_name_scope`)."""
    if not export_scope:
        return name
    scope = export_scope.rstrip("/") + "/"
    m = re.match(r"^(\^|loc:@)?(.*)$", name)
    body = m.group(2)
    if body.startswith(scope):
        body = body[len(scope) :]
    return f"{m.group(1) or ''}{body}"


def _kind_name(item: Any) -> str:
    if isinstance(item, str | bytes):
        return "bytes_list"
    if isinstance(item, int):
        return "int64_list"
    if isinstance(item, float):
        return "float_list"
    return "node_list"


def _should_include(item: Any, export_scope: str | None, exclude: set[str]) -> bool:
    name = item if isinstance(item, str) else getattr(item, "name", None)
    if not isinstance(name, str):
        return True
    if name.split(":")[0] in exclude:
        return False
    return (
        name.startswith(UNBOUND_INPUT_PREFIX) or not export_scope or name.startswith(export_scope)
    )


def add_collection_def(
    meta_graph_def: Any,
    key: Any,
    graph: Any = None,
    export_scope: str | None = None,
    exclude_nodes: set[str] | None = None,
    override_contents: list[Any] | None = None,
) -> None:
    """Adds collection `key` of `graph` to a `MetaGraphDef` (`meta_graph.add_collection_def`).

    Collections that cannot be serialized are skipped with a warning.
    """
    if not isinstance(key, str | bytes):
        _log.warning(
            "Only collections with string type keys will be serialized. This key has %s", type(key)
        )
        return
    graph = graph or graph_mod.get_default_graph()
    items = override_contents if override_contents is not None else graph.get_collection(key)
    items = [x for x in items if _should_include(x, export_scope, exclude_nodes or set())]
    if not items:
        return
    try:
        col_def = meta_graph_def.collection_def[key]
        to_proto = get_to_proto_function(key)
        if to_proto is not None:
            for x in items:
                proto = to_proto(x, export_scope=export_scope)
                if proto is not None:
                    col_def.bytes_list.value.append(proto.SerializeToString())
            return
        kind = _kind_name(items[0])
        if kind == "node_list":
            col_def.node_list.value.extend(
                strip_name_scope(x.name, export_scope)
                for x in items
                if not export_scope or x.name.startswith(export_scope)
            )
        elif kind == "bytes_list":
            col_def.bytes_list.value.extend(
                x.encode("utf-8") if isinstance(x, str) else x for x in items
            )
        else:
            getattr(col_def, kind).value.extend(items)
    except Exception as e:  # noqa: BLE001  (TensorFlow skips what it cannot serialize)
        _log.warning("Issue encountered when serializing: %s.\n%s", key, e)
        if key in meta_graph_def.collection_def:
            del meta_graph_def.collection_def[key]


def restore_collections(
    graph: Any, meta: Any, scope: str, unbound_col: str, predicate: Callable[[str], bool]
) -> None:
    """Adds the collections of `meta` to `graph`, their names under import scope `scope`.

    Args:
      graph: the `Graph` to add to.
      meta: the `MetaGraphDef` whose `collection_def` is read.
      scope: the import scope prepended to node names ("" for none).
      unbound_col: the collection of unbound inputs, which is not restored.
      predicate: `fn(key) -> bool`; only collections it accepts are restored.
    """
    variables: dict[bytes, Any] = {}
    for key, col_def in sorted(meta.collection_def.items()):
        if key == unbound_col or not predicate(key):
            continue
        kind = col_def.WhichOneof("kind")
        if kind is None:
            _log.error("Cannot identify data type for collection %s. Skipping.", key)
            continue
        from_proto = get_from_proto_function(key)
        if from_proto is not None and kind == "bytes_list":
            proto_type = get_collection_proto_type(key)
            for value in col_def.bytes_list.value:
                item = variables.get(value) if proto_type is variable_pb2.VariableDef else None
                if item is None:
                    proto = proto_type()
                    proto.ParseFromString(value)
                    item = from_proto(proto, import_scope=scope)
                    if proto_type is variable_pb2.VariableDef:
                        variables[value] = item
                graph.add_to_collection(key, item)
        elif kind == "node_list":
            for value in col_def.node_list.value:
                try:
                    element = graph.as_graph_element(prepend_name_scope(value, scope))
                except (KeyError, ValueError) as e:
                    _log.warning("Skipping %r of collection %s: %s", value, key, e)
                    continue
                graph.add_to_collection(key, element)
        else:
            for value in getattr(col_def, kind).value:
                graph.add_to_collection(key, int(value) if kind == "int64_list" else value)
