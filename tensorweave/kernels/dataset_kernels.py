"""Kernels of the dataset ops: each builds a `DatasetValue` (the `variant` output) from its
inputs; nothing is read until an iterator pulls elements (TensorFlow's
`core/kernels/data/*_dataset_op.cc`)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import numpy as np

from tensorweave import errors
from tensorweave.framework import (
    function_runtime,
    op_defs,  # noqa: F401  (op definitions)
)
from tensorweave.framework.py_funcs import py_funcs
from tensorweave.kernels import dataset_chunks, dataset_vectorize
from tensorweave.kernels import dataset_values as dv
from tensorweave.kernels.registry import KernelNode, register_kernel


def _np_types(node: KernelNode, attr: str = "output_types") -> list[Any]:
    return [np.dtype(t.as_numpy_dtype) for t in node.attrs[attr]]


def _int(x: Any) -> int:
    return int(np.asarray(x))


def _dataset(x: Any) -> dv.DatasetValue:
    if not isinstance(x, dv.DatasetValue):
        raise errors.InvalidArgumentError(None, None, f"Expected a dataset, got {type(x)}")
    return x


def _function(node: KernelNode, attr: str = "f") -> Any:
    body = node.attrs[f"{attr}_body"]
    n_out = len(node.attrs.get("output_types") or []) or 1
    return function_runtime.instantiate(body, 0, n_out, node.device)


@register_kernel("TensorDataset")
def _tensor_dataset(node: KernelNode) -> Any:
    types = _np_types(node, "Toutput_types")

    def compute(ctx: Any, *components: Any) -> dv.DatasetValue:
        element = tuple(np.asarray(c) for c in components)
        return dv.Generated(node.name, node.op, types, lambda ctx: iter([element]))

    return compute


@register_kernel("TensorSliceDataset")
def _tensor_slice_dataset(node: KernelNode) -> Any:
    types = _np_types(node, "Toutput_types")

    def compute(ctx: Any, *components: Any) -> dv.DatasetValue:
        arrays = [np.asarray(c) for c in components]
        n = arrays[0].shape[0] if arrays[0].ndim else None
        for a in arrays:
            if a.ndim == 0 or a.shape[0] != n:
                raise errors.InvalidArgumentError(
                    None, None, "All components must have the same size in the 0th dimension")

        if all(a.dtype != np.object_ for a in arrays):
            return dv.SliceValue(node.name, node.op, types, arrays)

        def run(ctx: Any) -> Iterator[dv.Element]:
            for i in range(n):
                yield tuple(a[i] if a.dtype != np.object_ else np.asarray(a[i], object)
                            for a in arrays)

        return dv.Generated(node.name, node.op, types, run)

    return compute


@register_kernel("RangeDataset")
def _range_dataset(node: KernelNode) -> Any:
    types = _np_types(node)

    def compute(ctx: Any, start: Any, stop: Any, step: Any) -> dv.DatasetValue:
        start, stop, step = _int(start), _int(stop), _int(step)
        if step == 0:
            raise errors.InvalidArgumentError(None, None, "step must be a non-zero integer.")
        dt = types[0].type

        def run(ctx: Any) -> Iterator[dv.Element]:
            for i in range(start, stop, step):
                yield (dt(i),)

        return dv.Generated(node.name, node.op, types, run)

    return compute


@register_kernel("ZipDataset")
def _zip_dataset(node: KernelNode) -> Any:
    types = _np_types(node)

    def compute(ctx: Any, *inputs: Any) -> dv.DatasetValue:
        inputs = [_dataset(x) for x in inputs]

        def run(ctx: Any) -> Iterator[dv.Element]:
            for parts in zip(*(x.iterate(ctx) for x in inputs)):
                yield tuple(c for p in parts for c in p)

        return dv.Generated(node.name, node.op, types, run)

    return compute


@register_kernel("ConcatenateDataset")
def _concatenate_dataset(node: KernelNode) -> Any:
    types = _np_types(node)

    def compute(ctx: Any, a: Any, b: Any) -> dv.DatasetValue:
        a, b = _dataset(a), _dataset(b)

        def run(ctx: Any) -> Iterator[dv.Element]:
            yield from a.iterate(ctx)
            yield from b.iterate(ctx)

        return dv.Generated(node.name, node.op, types, run)

    return compute


def _map_kernel(node: KernelNode) -> Any:
    types = _np_types(node)
    fn = _function(node)
    parallel_input = node.op == "ParallelMapDatasetV2"
    elementwise = dataset_vectorize.is_elementwise(
        function_runtime.parse_body(node.attrs["f_body"]), len(types))

    def compute(ctx: Any, inp: Any, *rest: Any) -> dv.DatasetValue:
        captured = list(rest[:-1] if parallel_input else rest)
        parallel = 1
        if parallel_input:
            parallel = _int(rest[-1])
            parallel = os.cpu_count() or 1 if parallel < 0 else parallel
        return dv.MapValue(node.name, node.op, types, _dataset(inp), fn, captured, parallel,
                           elementwise)

    return compute


register_kernel("MapDataset")(_map_kernel)
register_kernel("ParallelMapDatasetV2")(_map_kernel)


@register_kernel("FilterDataset")
def _filter_dataset(node: KernelNode) -> Any:
    types = _np_types(node)
    body = node.attrs["predicate_body"]
    fn = function_runtime.instantiate(body, 0, 1, node.device)

    def compute(ctx: Any, inp: Any, *captured: Any) -> dv.DatasetValue:
        inp = _dataset(inp)

        def run(ctx: Any) -> Iterator[dv.Element]:
            for e in inp.iterate(ctx):
                keep = dv.call_function(fn, ctx, [*e, *captured], node.op, node.name)[0]
                if np.shape(keep) != ():
                    raise errors.InvalidArgumentError(
                        None, None, "Filter predicate `f` must return a scalar bool.")
                if bool(keep):
                    yield e

        return dv.Generated(node.name, node.op, types, run)

    return compute


@register_kernel("FlatMapDataset")
def _flat_map_dataset(node: KernelNode) -> Any:
    types = _np_types(node)
    fn = function_runtime.instantiate(node.attrs["f_body"], 0, 1, node.device)

    def compute(ctx: Any, inp: Any, *captured: Any) -> dv.DatasetValue:
        inp = _dataset(inp)

        def run(ctx: Any) -> Iterator[dv.Element]:
            for e in inp.iterate(ctx):
                out = dv.call_function(fn, ctx, [*e, *captured], node.op, node.name)
                yield from _dataset(out[0]).iterate(ctx)

        return dv.Generated(node.name, node.op, types, run)

    return compute


def _interleave_kernel(node: KernelNode) -> Any:
    types = _np_types(node)
    fn = function_runtime.instantiate(node.attrs["f_body"], 0, 1, node.device)
    n_extra = 2 if node.op == "InterleaveDataset" else 5

    def compute(ctx: Any, inp: Any, *rest: Any) -> dv.DatasetValue:
        captured = list(rest[:-n_extra])
        cycle, block = _int(rest[-n_extra]), _int(rest[-n_extra + 1])
        cycle = os.cpu_count() or 1 if cycle <= 0 else cycle
        if block <= 0:
            raise errors.InvalidArgumentError(None, None, "block_length must be greater than zero.")
        run = dv.interleave_iter(_dataset(inp), fn, captured, cycle, block, node.op, node.name)
        return dv.Generated(node.name, node.op, types, run)

    return compute


register_kernel("InterleaveDataset")(_interleave_kernel)
register_kernel("ParallelInterleaveDatasetV4")(_interleave_kernel)


def _batches(elements: Iterator[dv.Element], size: int, drop: bool) -> Iterator[list]:
    buf: list[dv.Element] = []
    for e in elements:
        buf.append(e)
        if len(buf) == size:
            yield buf
            buf = []
    if buf and not drop:
        yield buf


def _fused_map_batch(inp: dv.MapValue, size: int, drop: bool) -> Any:
    """Batches the map's input, then runs its element-wise function once per batch."""
    in_types = inp.source.dtypes

    def run(ctx: Any) -> Iterator[dv.Element]:
        for batch in _batches(inp.source.iterate(ctx), size, drop):
            columns = [dv.stack(list(col), t, c)
                       for c, (col, t) in enumerate(zip(zip(*batch), in_types))]
            out = dv.call_function(inp.fn, ctx, [*columns, *inp.captured], inp.op, inp.name)
            yield tuple(out)

    return run


@register_kernel("BatchDatasetV2")
def _batch_dataset(node: KernelNode) -> Any:
    types = _np_types(node)

    def compute(ctx: Any, inp: Any, batch_size: Any, drop_remainder: Any) -> dv.DatasetValue:
        inp, size, drop = _dataset(inp), _int(batch_size), bool(np.asarray(drop_remainder))
        if size <= 0:
            raise errors.InvalidArgumentError(None, None, "Batch size must be greater than zero.")

        if inp.chunks is not None:
            def chunked(ctx: Any) -> Iterator[dv.Element]:
                return dataset_chunks.rebatch(inp.chunks(ctx), size, drop)

            batched = dv.Generated(node.name, node.op, types, chunked)
            batched.vectorized = True
            return batched
        if isinstance(inp, dv.MapValue) and inp.elementwise:
            return dv.Generated(node.name, node.op, types, _fused_map_batch(inp, size, drop))

        def run(ctx: Any) -> Iterator[dv.Element]:
            for batch in _batches(inp.iterate(ctx), size, drop):
                yield tuple(dv.stack(list(col), t, c)
                            for c, (col, t) in enumerate(zip(zip(*batch), types)))

        return dv.Generated(node.name, node.op, types, run)

    return compute


def _pad_batch(buf: list[dv.Element], shapes: list[Any], pads: list[Any],
               types: list[Any]) -> dv.Element:
    out = []
    for c, (shape, pad, t) in enumerate(zip(shapes, pads, types)):
        values = [np.asarray(x[c]) for x in buf]
        rank = values[0].ndim
        if any(v.ndim != rank for v in values) or len(shape) != rank:
            raise errors.InvalidArgumentError(
                None, None, f"All elements in a batch must have the same rank as the padded "
                f"shape for component{c}: expected rank {len(shape)} but got element with rank "
                f"{rank}")
        dims = [max(v.shape[d] for v in values) if s < 0 else s for d, s in enumerate(shape)]
        for v in values:
            if any(v.shape[d] > dims[d] for d in range(rank)):
                raise errors.InvalidArgumentError(
                    None, None, f"Attempted to pad to a smaller size than the input element. "
                    f"Component {c}: element shape {list(v.shape)}, padded shape {dims}")
        arr = np.full([len(values)] + dims, np.asarray(pad).item() if t != np.object_ else pad,
                      dtype=t)
        for i, v in enumerate(values):
            arr[(i,) + tuple(slice(0, n) for n in v.shape)] = v
        out.append(arr)
    return tuple(out)


@register_kernel("PaddedBatchDatasetV2")
def _padded_batch_dataset(node: KernelNode) -> Any:
    types = _np_types(node, "Toutput_types")
    n = int(node.attrs["N"])

    def compute(ctx: Any, inp: Any, batch_size: Any, *rest: Any) -> dv.DatasetValue:
        inp, size = _dataset(inp), _int(batch_size)
        shapes = [list(np.asarray(s).reshape(-1)) for s in rest[:n]]
        pads = [np.asarray(p).reshape(()) for p in rest[n:2 * n]]
        pads = [p.item() if p.dtype == np.object_ else p for p in pads]
        drop = bool(np.asarray(rest[2 * n]))
        if size <= 0:
            raise errors.InvalidArgumentError(None, None, "Batch size must be greater than zero.")

        def run(ctx: Any) -> Iterator[dv.Element]:
            buf: list[dv.Element] = []
            for e in inp.iterate(ctx):
                buf.append(e)
                if len(buf) == size:
                    yield _pad_batch(buf, shapes, pads, types)
                    buf = []
            if buf and not drop:
                yield _pad_batch(buf, shapes, pads, types)

        return dv.Generated(node.name, node.op, types, run)

    return compute


@register_kernel("ShuffleDataset")
def _shuffle_dataset(node: KernelNode) -> Any:
    types = _np_types(node)
    reshuffle = bool(node.attrs.get("reshuffle_each_iteration", True))

    def compute(ctx: Any, inp: Any, buffer_size: Any, seed: Any, seed2: Any) -> dv.DatasetValue:
        size, seeds = _int(buffer_size), (_int(seed), _int(seed2))
        if size <= 0:
            raise errors.InvalidArgumentError(
                None, None, "buffer_size must be greater than zero.")
        if seeds == (0, 0):
            seeds = tuple(int(x) for x in np.random.SeedSequence().generate_state(2))
        return _shuffled(node, types, _dataset(inp), size, seeds, reshuffle)

    return compute


def _shuffled(node: KernelNode, types: list[Any], inp: dv.DatasetValue, size: int,
              seeds: tuple[int, int], reshuffle: bool) -> dv.DatasetValue:
    """A shuffle: on indices (with chunks) over tensor slices, else over elements; both
    orders are the same for the same seeds."""
    epochs = dataset_chunks.Epochs(reshuffle)
    if isinstance(inp, dv.SliceValue):
        arrays, n = inp.arrays, len(inp.arrays[0])

        def order() -> np.ndarray:
            return dataset_chunks.shuffled_order(
                n, size, dataset_chunks.Draws(seeds, epochs.next()))

        def run(ctx: Any) -> Iterator[dv.Element]:
            rows = order().tolist()
            return zip(*(a[rows] for a in arrays))

        return dv.Generated(node.name, node.op, types, run,
                            lambda ctx: dataset_chunks.gathered_chunks(arrays, order()))

    def elements(ctx: Any) -> Iterator[dv.Element]:
        draws = dataset_chunks.Draws(seeds, epochs.next())
        return dataset_chunks.shuffle_elements(inp.iterate(ctx), size, draws)

    return dv.Generated(node.name, node.op, types, elements)


def _counted(node: KernelNode, make: Any) -> Any:
    types = _np_types(node)

    def compute(ctx: Any, inp: Any, count: Any) -> dv.DatasetValue:
        return dv.Generated(node.name, node.op, types, make(_dataset(inp), _int(count)))

    return compute


def _take(inp: dv.DatasetValue, count: int) -> Any:
    def run(ctx: Any) -> Iterator[dv.Element]:
        if count == 0:
            return
        for i, e in enumerate(inp.iterate(ctx), 1):
            yield e
            if i == count:
                return

    return run


def _skip(inp: dv.DatasetValue, count: int) -> Any:
    def run(ctx: Any) -> Iterator[dv.Element]:
        for i, e in enumerate(inp.iterate(ctx)):
            if count >= 0 and i >= count:
                yield e

    return run


@register_kernel("RepeatDataset")
def _repeat_dataset(node: KernelNode) -> Any:
    types = _np_types(node)

    def compute(ctx: Any, inp: Any, count: Any) -> dv.DatasetValue:
        inp, n = _dataset(inp), _int(count)
        return dv.Generated(node.name, node.op, types, dv.repeat_iter(inp, n),
                            dv.repeat_chunks(inp, n))

    return compute



register_kernel("TakeDataset")(lambda node: _counted(node, _take))
register_kernel("SkipDataset")(lambda node: _counted(node, _skip))
@register_kernel("PrefetchDataset")
def _prefetch_dataset(node: KernelNode) -> Any:
    types = _np_types(node)

    def compute(ctx: Any, inp: Any, buffer_size: Any) -> dv.DatasetValue:
        inp, n = _dataset(inp), _int(buffer_size)
        if inp.vectorized:
            # NOTE: batches cut from chunks cost tens of microseconds: a background thread's
            # hand-offs (the GIL, a busy machine's scheduler) cost more than they hide.
            return dv.Generated(node.name, node.op, types, inp.iterate, inp.chunks)
        return dv.Generated(node.name, node.op, types,
                            dv.prefetch_iter(inp, 2 if n < 0 else n))

    return compute


@register_kernel("CacheDataset")
def _cache_dataset(node: KernelNode) -> Any:
    types = _np_types(node)

    def compute(ctx: Any, inp: Any, filename: Any) -> dv.DatasetValue:
        return dv.Generated(node.name, node.op, types, dv.cache_iter(_dataset(inp)))

    return compute


@register_kernel("ShardDataset")
def _shard_dataset(node: KernelNode) -> Any:
    types = _np_types(node)

    def compute(ctx: Any, inp: Any, num_shards: Any, index: Any) -> dv.DatasetValue:
        n, k = _int(num_shards), _int(index)
        if n <= 0:
            raise errors.InvalidArgumentError(
                None, None, f"Number of shards must be greater than zero (currently num_shards "
                f"= {n}).")
        if not 0 <= k < n:
            raise errors.InvalidArgumentError(
                None, None, f"Index must be between 0 and {n - 1} (currently index = {k}).")
        inp = _dataset(inp)

        def run(ctx: Any) -> Iterator[dv.Element]:
            for i, e in enumerate(inp.iterate(ctx)):
                if i % n == k:
                    yield e

        return dv.Generated(node.name, node.op, types, run)

    return compute


@register_kernel("PyGeneratorDataset")
def _py_generator_dataset(node: KernelNode) -> Any:
    types = _np_types(node)
    shapes = [s.as_list() if s.ndims is not None else None for s in node.attrs["output_shapes"]]
    token = node.attrs["token"]

    def check(value: Any, c: int) -> np.ndarray:
        try:
            arr = dv.as_array(value, types[c])
        except (TypeError, ValueError) as e:
            raise errors.InvalidArgumentError(
                None, None, f"`generator` yielded an element that could not be converted to "
                f"the expected type {types[c]}: {e}") from None
        want = shapes[c]
        if want is not None and (arr.ndim != len(want) or any(
                w is not None and w != d for w, d in zip(want, arr.shape))):
            raise errors.InvalidArgumentError(
                None, None, f"`generator` yielded an element of shape {list(arr.shape)} where "
                f"an element of shape {want} was expected.")
        return arr

    def compute(ctx: Any) -> dv.DatasetValue:
        fn = py_funcs.get(token)
        if fn is None:
            raise errors.NotFoundError(
                None, None, f"Python callable {token} is not registered in this process "
                "(Dataset.from_generator runs only in the process that built the graph)")

        def run(ctx: Any) -> Iterator[dv.Element]:
            for parts in fn():  # NOTE: the Python side yields flat tuples
                if len(parts) != len(types):
                    raise errors.InvalidArgumentError(
                        None, None, f"`generator` yielded an element with {len(parts)} "
                        f"components where {len(types)} were expected.")
                yield tuple(check(v, c) for c, v in enumerate(parts))

        return dv.Generated(node.name, node.op, types, run)

    return compute
