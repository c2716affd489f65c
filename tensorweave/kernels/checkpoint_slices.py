"""Saved slices of one checkpoint key: the parts of a partitioned variable.

Used by `checkpoint_format` (writing, reading, merging) for `SaveV2` entries whose
`shape_and_slices` spec is not empty, e.g. `"10 4 0,5:-"` (TensorFlow's `TensorSlice`
syntax: `start,length` per dimension, `-` for the whole dimension). TensorFlow stores such
slices under the full variable's name; so does tensorweave. The index entry of a sliced
key is::

    {"dtype": "float32", "shape": [10, 4],           # of the full tensor
     "slices": [{"slice": "0,5:-", "shard": K, "key": "emb:slice(0,5:-)",
                 "shape": [5, 4], "storage": ..., "crc32": ...}, ...]}

where `key` is the name of the slice's data in the shard file (`<name>:slice(<slice>)`).
Restoring any slice (or the whole tensor) copies the overlapping parts of every saved
slice, so a variable can be restored with another partitioning, or unpartitioned; a
region that no saved slice covers is an `InvalidArgumentError`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tensorweave import errors
from tensorweave.framework import dtypes
from tensorweave.kernels import tensor_bundle

Region = tuple[tuple[int, int], ...]


def storage_key(name: str, slice_str: str) -> str:
    """The table key of slice `slice_str` of key `name` (TF's `EncodeTensorNameSlice`)."""
    return tensor_bundle.slice_key(name, slice_str)


def slice_str(spec: str) -> str:
    """The slice part of a `shape_and_slices` spec (`"10 4 0,5:-"` -> `"0,5:-"`)."""
    return spec.rsplit(" ", 1)[-1]


def region_of(full_shape: Sequence[int], index: Sequence[slice] | None) -> Region:
    """(start, stop) per dimension of `index` (None or `slice(None)`: everything)."""
    index = index or [slice(None)] * len(full_shape)
    return tuple(
        (0, int(d)) if s.start is None else (int(s.start), int(s.stop))
        for d, s in zip(full_shape, index)
    )


def _parse_region(full_shape: Sequence[int], text: str) -> Region:
    out = []
    for d, part in zip(full_shape, text.split(":")):
        if part == "-":
            out.append((0, int(d)))
        else:
            start, length = (int(x) for x in part.split(","))
            out.append((start, start + length))
    return tuple(out)


def add_slice(
    tensors: dict[str, Any], name: str, full_shape: Sequence[int], text: str, sub: dict
) -> None:
    """Adds the encoded slice `sub` (an entry of `checkpoint_format._encode`) of `name`.

    Raises:
      InvalidArgumentError: if `name` is also saved whole, or its slices disagree on the
        full shape or dtype, or the same slice is saved twice.
    """
    full = [int(d) for d in full_shape]
    entry = tensors.setdefault(name, {"dtype": sub["dtype"], "shape": full, "slices": []})
    if "slices" not in entry:
        raise errors.InvalidArgumentError(
            None, None, f"Tensor {name!r} is saved both whole and as slices"
        )
    if entry["shape"] != full or entry["dtype"] != sub["dtype"]:
        raise errors.InvalidArgumentError(
            None,
            None,
            f"Slices of tensor {name!r} disagree: {entry['dtype']} {entry['shape']} vs. "
            f"{sub['dtype']} {full}",
        )
    if any(s["slice"] == text for s in entry["slices"]):
        raise errors.InvalidArgumentError(
            None, None, f"Duplicate slice {text!r} of tensor {name!r} in the tensors to save"
        )
    entry["slices"].append(dict(sub, slice=text, key=storage_key(name, text)))


def merge_entry(tensors: dict[str, Any], name: str, entry: dict, shard_offset: int) -> None:
    """Adds a part checkpoint's index entry of `name` (whole or sliced) to `tensors`.

    Its shard numbers are moved by `shard_offset`.

    Raises:
      InvalidArgumentError: if `name` is already there whole, or the same slice is.
    """
    if "slices" not in entry:
        if name in tensors:
            raise errors.InvalidArgumentError(
                None, None, f"Duplicate tensor key {name!r} in the checkpoints to merge"
            )
        tensors[name] = dict(entry, shard=shard_offset + int(entry["shard"]))
        return
    for sub in entry["slices"]:
        moved = dict(sub, shard=shard_offset + int(sub["shard"]))
        fields = {k: v for k, v in moved.items() if k not in ("slice", "key")}
        add_slice(tensors, name, entry["shape"], sub["slice"], fields)


def plan(entry: dict, wanted: Region) -> list[tuple[str | None, dict]]:
    """The (data key, encoded entry) pairs to read for region `wanted` of `entry`.

    That is the entry itself (key None: the checkpoint key) when saved whole, else every
    saved slice overlapping `wanted`.
    """
    if "slices" not in entry:
        return [(None, entry)]
    out = []
    for sub in entry["slices"]:
        have = _parse_region(entry["shape"], sub["slice"])
        if all(max(a0, b0) < min(a1, b1) for (a0, a1), (b0, b1) in zip(have, wanted)):
            out.append((sub["key"], sub))
    return out


def assemble(
    name: str, entry: dict, wanted: Region, pieces: list[tuple[dict, np.ndarray]]
) -> np.ndarray:
    """Region `wanted` of key `name`, from the arrays read for `plan(entry, wanted)`.

    Raises:
      InvalidArgumentError: if the saved slices do not cover all of `wanted`.
    """
    if "slices" not in entry:
        value = pieces[0][1]
        index = tuple(slice(a, b) for a, b in wanted)
        if tuple(b - a for a, b in wanted) == value.shape:
            return value
        return np.array(value[index], order="C")
    out_shape = tuple(b - a for a, b in wanted)
    out = np.empty(out_shape, dtype=_numpy_dtype(entry["dtype"]))
    covered = np.zeros(out_shape, dtype=bool)
    for sub, value in pieces:
        have = _parse_region(entry["shape"], sub["slice"])
        both = [(max(a0, b0), min(a1, b1)) for (a0, a1), (b0, b1) in zip(have, wanted)]
        dst = tuple(slice(lo - w0, hi - w0) for (lo, hi), (w0, _) in zip(both, wanted))
        src = tuple(slice(lo - h0, hi - h0) for (lo, hi), (h0, _) in zip(both, have))
        out[dst] = value[src]
        covered[dst] = True
    if not covered.all():
        raise errors.InvalidArgumentError(
            None,
            None,
            f"tensor_name = {name}; the requested slice {_region_str(wanted)} is not fully "
            f"covered by the saved slices {[s['slice'] for s in entry['slices']]}",
        )
    return out


def read_regions(
    names: Sequence[str],
    entries: Sequence[dict],
    regions: Sequence[Region],
    read_encoded: Callable[[list[tuple[str, dict]]], list[np.ndarray]],
) -> list[np.ndarray]:
    """The requested regions of `names`.

    Every needed piece is read in one call of `read_encoded([(data key, entry), ...])`.
    """
    plans = [plan(e, r) for e, r in zip(entries, regions)]
    flat = [(key or name, sub) for name, p in zip(names, plans) for key, sub in p]
    arrays = iter(read_encoded(flat))
    out = []
    for name, entry, region, p in zip(names, entries, regions, plans):
        pieces = [(sub, next(arrays)) for _, sub in p]
        out.append(assemble(name, entry, region, pieces))
    return out


def _numpy_dtype(name: str) -> Any:
    return object if name == "string" else dtypes.as_dtype(name).as_numpy_dtype


def _region_str(region: Region) -> str:
    return ":".join(f"{a},{b - a}" for a, b in region)
