"""Kernels of the `tf.train.Example` parsing ops (`ParseExample`, `ParseSingleExample`,
`ParseSingleSequenceExample`), following TensorFlow's `core/util/example_proto_fast_parsing`.

Bad records and records that do not match the parse spec raise `InvalidArgumentError`
naming the feature key, as TensorFlow does.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from tensorweave import errors
from tensorweave.framework import dtypes, op_defs  # noqa: F401  (op definitions)
from tensorweave.kernels.registry import KernelNode, register_kernel
from tensorweave.protos import example_pb2

_KIND_OF = {dtypes.float32: "float_list", dtypes.int64: "int64_list", dtypes.string: "bytes_list"}
_NAME_OF = {"float_list": "float", "int64_list": "int64", "bytes_list": "string"}


def single(outputs: list[Any]) -> Any:
    """The kernel result: the value itself for an op with one output, else the list."""
    return outputs[0] if len(outputs) == 1 else outputs


def _type_name(dtype: Any) -> str:
    return _NAME_OF[_KIND_OF[dtypes.as_dtype(dtype)]]


def np_type(dtype: Any) -> Any:
    """The NumPy dtype of a parsed feature of `dtype`."""
    return np.object_ if dtype == dtypes.string else dtype.as_numpy_dtype


def parse_proto(message: Any, data: Any, what: str) -> Any:
    """Parses serialized bytes into `message`.

    Raises:
      InvalidArgumentError: if the bytes are not a valid message.
    """
    if isinstance(data, np.ndarray):
        data = data.item()
    try:
        message.ParseFromString(bytes(data))
    except Exception:  # noqa: BLE001  (protobuf raises DecodeError or RuntimeError)
        raise errors.InvalidArgumentError(
            None, None, f"Could not parse example input, value: '{bytes(data)[:80]!r}'"
        ) from None
    return message


def feature_values(feature: Any, dtype: Any, key: str, where: str) -> np.ndarray:
    """The values of one `Feature` as a 1-D array of `dtype`.

    Raises:
      InvalidArgumentError: if the feature holds another type than `dtype`, naming `key`.
    """
    kind = feature.WhichOneof("kind")
    want = _KIND_OF[dtypes.as_dtype(dtype)]
    if kind is None:
        return np.zeros([0], np_type(dtype))
    if kind != want:
        raise errors.InvalidArgumentError(
            None,
            None,
            f"{where}Key: {key}.  Data types don't match. Data type: {_NAME_OF[kind]} "
            f"but expected type: {_NAME_OF[want]}",
        )
    values = getattr(feature, kind).value
    if want == "bytes_list":
        out = np.empty(len(values), np.object_)
        out[:] = list(values)
        return out
    return np.asarray(values, np_type(dtype))


def dense_value(
    features: Any, key: str, dtype: Any, shape: list[int], default: np.ndarray, where: str
) -> np.ndarray:
    """One dense feature of one example, reshaped to `shape` (first dim may be None).

    Raises:
      InvalidArgumentError: missing without default, wrong type or wrong element count,
        naming `key`.
    """
    if key not in features.feature:
        if default.size == 0 and not (shape and shape[0] is None):
            raise errors.InvalidArgumentError(
                None,
                None,
                f"{where}Feature: {key} (data type: {dtypes.as_dtype(dtype).name}) is "
                "required but could not be found.",
            )
        if shape and shape[0] is None:
            return np.zeros([0] + shape[1:], np_type(dtype))
        return np.broadcast_to(default, shape).astype(np_type(dtype))
    values = feature_values(features.feature[key], dtype, key, where)
    if shape and shape[0] is None:
        stride = int(np.prod(shape[1:], dtype=np.int64))
        if stride and values.size % stride:
            raise errors.InvalidArgumentError(
                None,
                None,
                f"{where}Key: {key}, Index: 0. Number of values is not a multiple of stride. "
                f"values size: {values.size} but stride: {stride}",
            )
        return values.reshape([-1] + shape[1:])
    expected = int(np.prod(shape, dtype=np.int64))
    if values.size != expected:
        raise errors.InvalidArgumentError(
            None,
            None,
            f"{where}Key: {key}, Index: 0.  Number of {_type_name(dtype)} values "
            f"!= expected.  Values size: {values.size} but output shape: {shape}",
        )
    return values.reshape(shape)


def stack_dense(rows: list[np.ndarray], shape: list[Any], dtype: Any, default: Any) -> Any:
    """Stacks per-example dense values; a variable first dim is padded with `default`."""
    if not (shape and shape[0] is None):
        if not rows:
            return np.zeros([0] + list(shape), np_type(dtype))
        return np.stack(rows)
    longest = max((r.shape[0] for r in rows), default=0)
    pad = default.reshape(-1)[0] if default.size else np.zeros([], np_type(dtype))[()]
    out = np.full([len(rows), longest] + list(shape[1:]), pad, dtype=np_type(dtype))
    for i, r in enumerate(rows):
        out[i, : r.shape[0]] = r
    return out


def sparse_parts(rows: list[np.ndarray], dtype: Any, batched: bool) -> tuple[Any, Any, Any]:
    """(indices int64 [N, 1 or 2], values [N], dense_shape int64 [1 or 2]) of VarLen rows."""
    longest = max((r.size for r in rows), default=0)
    values = np.concatenate(rows) if rows else np.zeros([0], np_type(dtype))
    values = values.astype(np_type(dtype), copy=False)
    if not batched:
        idx = np.arange(values.size, dtype=np.int64).reshape(-1, 1)
        return idx, values, np.array([longest], np.int64)
    idx = np.array([(b, j) for b, r in enumerate(rows) for j in range(r.size)], np.int64).reshape(
        -1, 2
    )
    return idx, values, np.array([len(rows), longest], np.int64)


def _shapes(node: KernelNode, attr: str) -> list[list[Any]]:
    return [s.as_list() for s in node.attrs.get(attr) or []]


def _keys(values: list[Any]) -> list[str]:
    return [k.decode() if isinstance(k, bytes) else str(k) for k in values]


def _parse_batch(
    serialized: Any,
    names: Any,
    sparse: list[tuple[str, Any]],
    dense: list[tuple[str, Any, list[Any], np.ndarray]],
    batched: bool,
) -> list[Any]:
    flat = np.asarray(serialized, np.object_).reshape(-1)
    names = np.asarray(names, np.object_).reshape(-1)
    sparse_rows: list[list[np.ndarray]] = [[] for _ in sparse]
    dense_rows: list[list[np.ndarray]] = [[] for _ in dense]
    for i, data in enumerate(flat):
        where = f"Name: {_keys([names[i]])[0]}, " if names.size else ""
        features = parse_proto(example_pb2.Example(), data, "example").features
        for j, (key, dtype) in enumerate(sparse):
            feat = features.feature.get(key)
            rows = sparse_rows[j]
            rows.append(
                np.zeros([0], np_type(dtype))
                if feat is None
                else feature_values(feat, dtype, key, where)
            )
        for j, (key, dtype, shape, default) in enumerate(dense):
            dense_rows[j].append(dense_value(features, key, dtype, shape, default, where))
    parts = [sparse_parts(rows, dt, batched) for rows, (_, dt) in zip(sparse_rows, sparse)]
    dense_out = [
        stack_dense(rows, shape, dt, default)
        for rows, (_, dt, shape, default) in zip(dense_rows, dense)
    ]
    if not batched:
        dense_out = [d[0] for d in dense_out]
    return [p[0] for p in parts] + [p[1] for p in parts] + [p[2] for p in parts] + dense_out


@register_kernel("ParseExample")
def _parse_example(node: KernelNode) -> Any:
    n_sparse, n_dense = int(node.attrs["Nsparse"]), int(node.attrs["Ndense"])
    sparse_types = list(node.attrs.get("sparse_types") or [])
    dense_types = list(node.attrs.get("Tdense") or [])
    shapes = _shapes(node, "dense_shapes")

    def compute(ctx: Any, serialized: Any, names: Any, *rest: Any) -> list[Any]:
        sparse_keys = _keys([np.asarray(k).item() for k in rest[:n_sparse]])
        dense_keys = _keys([np.asarray(k).item() for k in rest[n_sparse : n_sparse + n_dense]])
        defaults = [np.asarray(d) for d in rest[n_sparse + n_dense :]]
        sparse = list(zip(sparse_keys, sparse_types))
        dense = list(zip(dense_keys, dense_types, shapes, defaults))
        return single(_parse_batch(serialized, names, sparse, dense, batched=True))

    return compute


@register_kernel("ParseSingleExample")
def _parse_single_example(node: KernelNode) -> Any:
    sparse = list(
        zip(_keys(node.attrs.get("sparse_keys") or []), node.attrs.get("sparse_types") or [])
    )
    dense_keys = _keys(node.attrs.get("dense_keys") or [])
    dense_types = list(node.attrs.get("Tdense") or [])
    shapes = _shapes(node, "dense_shapes")

    def compute(ctx: Any, serialized: Any, *defaults: Any) -> list[Any]:
        if np.ndim(serialized) != 0:
            raise errors.InvalidArgumentError(
                None,
                None,
                f"Expected `serialized` to be a scalar, got shape: {np.shape(serialized)}",
            )
        dense = list(zip(dense_keys, dense_types, shapes, [np.asarray(d) for d in defaults]))
        return single(
            _parse_batch(
                np.asarray(serialized, np.object_).reshape(1),
                np.zeros([0], np.object_),
                sparse,
                dense,
                batched=False,
            )
        )

    return compute


def _sequence_dense(flist: Any, key: str, dtype: Any, shape: list[int], where: str) -> Any:
    rows = [feature_values(f, dtype, key, where) for f in flist.feature]
    expected = int(np.prod(shape, dtype=np.int64))
    for t, r in enumerate(rows):
        if r.size != expected:
            raise errors.InvalidArgumentError(
                None,
                None,
                f"{where}Key: {key}, Index: {t}.  Number of {_type_name(dtype)} "
                f"values != expected.  values size: {r.size} but output shape: {shape}",
            )
    if not rows:
        return np.zeros([0] + shape, np_type(dtype))
    return np.stack([r.reshape(shape) for r in rows])


def _feature_lists(seq: Any, fs: list, fd: list, empty_ok: set, where: str) -> tuple[list, list]:
    """(sparse parts [(indices [N, 2], values, shape [2])], dense values [steps, ...]) of the
    feature lists of one `SequenceExample`."""
    lists = seq.feature_lists.feature_list
    fs_parts = []
    for key, dtype in fs:
        steps = lists[key].feature if key in lists else []
        rows = [feature_values(f, dtype, key, where) for f in steps]
        idx = np.array([(t, j) for t, r in enumerate(rows) for j in range(r.size)],
                       np.int64).reshape(-1, 2)
        vals = (np.concatenate(rows).astype(np_type(dtype), copy=False) if rows
                else np.zeros([0], np_type(dtype)))
        shape = np.array([len(rows), max((r.size for r in rows), default=0)], np.int64)
        fs_parts.append((idx, vals, shape))
    fd_out = []
    for key, dtype, shape in fd:
        if key not in lists and key not in empty_ok:
            raise errors.InvalidArgumentError(
                None, None, f"{where}Feature list: {key} is required but could not be found.  "
                "Did you mean to include it in feature_list_dense_missing_assumed_empty or "
                "feature_list_dense_defaults?")
        fd_out.append(_sequence_dense(lists[key], key, dtype, shape, where) if key in lists
                      else np.zeros([0] + shape, np_type(dtype)))
    return fs_parts, fd_out


class _SequenceSpec:
    """The keys, types and shapes of a sequence-example parse node."""

    def __init__(self, node: KernelNode, keys_from_attrs: bool):
        a = node.attrs
        self.ncs, self.ncd = int(a["Ncontext_sparse"]), int(a["Ncontext_dense"])
        self.nfs, self.nfd = int(a["Nfeature_list_sparse"]), int(a["Nfeature_list_dense"])
        self.cs_types = list(a.get("context_sparse_types") or [])
        self.cd_types = list(a.get("Tcontext_dense") or [])
        self.fs_types = list(a.get("feature_list_sparse_types") or [])
        self.fd_types = list(a.get("feature_list_dense_types") or [])
        self.cd_shapes = _shapes(node, "context_dense_shapes")
        self.fd_shapes = _shapes(node, "feature_list_dense_shapes")
        if keys_from_attrs:
            self.set_keys([*_keys(a.get("context_sparse_keys") or []),
                           *_keys(a.get("context_dense_keys") or []),
                           *_keys(a.get("feature_list_sparse_keys") or []),
                           *_keys(a.get("feature_list_dense_keys") or [])])
            self.empty_ok = set(_keys(a.get("feature_list_dense_missing_assumed_empty") or []))

    def set_keys(self, keys: list[str]) -> None:
        """Splits the four key lists."""
        n1, n2, n3 = self.ncs, self.ncs + self.ncd, self.ncs + self.ncd + self.nfs
        self.cs, self.fs = list(zip(keys[:n1], self.cs_types)), list(zip(keys[n2:n3],
                                                                          self.fs_types))
        self.cd_keys = keys[n1:n2]
        self.fd = list(zip(keys[n3:], self.fd_types, self.fd_shapes))

    def dense_specs(self, defaults: Any) -> list:
        """(key, type, shape, default) of the context dense features."""
        return [(k, t, s, np.asarray(d))
                for k, t, s, d in zip(self.cd_keys, self.cd_types, self.cd_shapes, defaults)]


@register_kernel("ParseSingleSequenceExample")
def _parse_single_sequence(node: KernelNode) -> Any:
    base = _SequenceSpec(node, keys_from_attrs=False)
    n_keys = base.ncs + base.ncd + base.nfs + base.nfd

    def compute(ctx: Any, serialized: Any, assumed_empty: Any, *rest: Any) -> list[Any]:
        spec = copy.copy(base)  # NOTE: the keys are inputs: a per-call copy holds them
        spec.set_keys(_keys([np.asarray(k).item() for k in rest[:n_keys]]))
        name = _keys([np.asarray(rest[-1]).item()])[0]
        where = f"Name: {name or '<unknown>'}, "
        empty_ok = set(_keys(list(np.asarray(assumed_empty, np.object_).reshape(-1))))
        seq = parse_proto(example_pb2.SequenceExample(), serialized, "sequence example")
        context = np.asarray([example_pb2.Example(features=seq.context).SerializeToString()],
                             np.object_)
        ctx_out = _parse_batch(context, np.zeros([0], np.object_), spec.cs,
                               spec.dense_specs(rest[n_keys:n_keys + spec.ncd]), batched=False)
        fs_parts, fd_out = _feature_lists(seq, spec.fs, spec.fd, empty_ok, where)
        return single(ctx_out + [p[0] for p in fs_parts] + [p[1] for p in fs_parts]
                      + [p[2] for p in fs_parts] + fd_out)

    return compute


def _pad_steps(values: list[np.ndarray], dtype: Any) -> np.ndarray:
    longest = max((v.shape[0] for v in values), default=0)
    inner = values[0].shape[1:] if values else ()
    out = np.zeros((len(values), longest) + tuple(inner), np_type(dtype))
    if np_type(dtype) == np.object_:
        out[...] = b""
    for b, v in enumerate(values):
        out[b, :v.shape[0]] = v
    return out


@register_kernel("ParseSequenceExample")
def _parse_sequence_batch(node: KernelNode) -> Any:
    spec = _SequenceSpec(node, keys_from_attrs=True)

    def compute(ctx: Any, serialized: Any, debug_name: Any, *defaults: Any) -> list[Any]:
        flat = np.asarray(serialized, np.object_).reshape(-1)
        names = _keys(list(np.asarray(debug_name, np.object_).reshape(-1)))
        seqs, contexts, per_example = [], [], []
        for i, data in enumerate(flat):
            where = f"Name: {names[i]}, " if i < len(names) and names[i] else ""
            seq = parse_proto(example_pb2.SequenceExample(), data, "sequence example")
            seqs.append(seq)
            contexts.append(example_pb2.Example(features=seq.context).SerializeToString())
            per_example.append(_feature_lists(seq, spec.fs, spec.fd, spec.empty_ok, where))
        ctx_out = _parse_batch(np.asarray(contexts, np.object_).reshape(-1), debug_name,
                               spec.cs, spec.dense_specs(defaults), batched=True)
        sparse = [[], [], []]
        for j, (_, dtype) in enumerate(spec.fs):
            parts = [ex[0][j] for ex in per_example]
            idx = [np.concatenate([np.full((len(p[0]), 1), b, np.int64), p[0]], axis=1)
                   for b, p in enumerate(parts)]
            sparse[0].append(np.concatenate(idx) if idx else np.zeros([0, 3], np.int64))
            sparse[1].append(np.concatenate([p[1] for p in parts]) if parts
                             else np.zeros([0], np_type(dtype)))
            dims = np.max([p[2] for p in parts], axis=0) if parts else np.zeros(2, np.int64)
            sparse[2].append(np.array([len(parts), *dims], np.int64))
        dense = [_pad_steps([ex[1][j] for ex in per_example], dtype)
                 for j, (_, dtype, _) in enumerate(spec.fd)]
        lengths = [np.array([ex[1][j].shape[0] for ex in per_example], np.int64)
                   for j in range(len(spec.fd))]
        return single(ctx_out + sparse[0] + sparse[1] + sparse[2] + dense + lengths)

    return compute
