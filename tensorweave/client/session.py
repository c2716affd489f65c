"""`tf.Session` and `tf.InteractiveSession`: feeds, fetches and target dispatch.

`Session("")` runs in process (`DirectSession`); `Session("grpc://host:port")` runs on a
cluster through a master (see `tensorweave.distributed`). Any other target is
`NotFoundError`, as in TensorFlow.
"""

from __future__ import annotations

import contextlib
import operator
import threading
from typing import Any

import numpy as np

from tensorweave import errors
from tensorweave.client.fetch_mapper import FetchPlan, to_user
from tensorweave.framework import graph as graph_mod
from tensorweave.framework import session_stack
from tensorweave.framework.operation import Tensor
from tensorweave.framework.sparse_tensor import SparseTensor, SparseTensorValue
from tensorweave.framework.tensor_util import to_numpy
from tensorweave.runtime import thread_budget


class DeviceAttributes:
    """One entry of `Session.list_devices()`."""

    def __init__(self, name: str, device_type: str, memory_limit_bytes: int, incarnation: int):
        self.name = name
        self.device_type = device_type
        self.memory_limit_bytes = memory_limit_bytes
        self.incarnation = incarnation

    def __repr__(self) -> str:
        return (f"_DeviceAttributes({self.name}, {self.device_type}, "
                f"{self.memory_limit_bytes}, {self.incarnation})")


def _make_backend(target: str, graph: Any, config: Any, runtime: Any = None) -> Any:
    if not target:
        from tensorweave.runtime.direct_session import DirectSession

        return DirectSession(graph, config)
    if target.startswith("grpc://"):
        from tensorweave.distributed.client_session import make_grpc_backend

        return make_grpc_backend(target, graph, config, runtime)
    raise errors.NotFoundError(
        None, None,
        f"No session factory registered for the given session options: {{target: {target!r}}} "
        "Registered factories are {DIRECT_SESSION, GRPC_SESSION}.",
    )


class BaseSession:
    """Common implementation of `Session` and `InteractiveSession` (follows TF 1.x
    `BaseSession`)."""

    def __init__(self, target: str = "", graph: Any = None, config: Any = None,
                 runtime: Any = None):
        if graph is None:
            graph = graph_mod.get_default_graph()
        elif not isinstance(graph, graph_mod.Graph):
            raise TypeError(f"graph must be a tf.Graph, but got {type(graph)}")
        if isinstance(target, bytes):
            target = target.decode()
        self._graph = graph
        self._target = target
        self._config = config
        self._closed = False
        self._lock = threading.Lock()
        self._fetch_cache: dict[Any, FetchPlan] = {}
        self._feed_cache: dict[Any, _Feed] = {}
        # NOTE: `intra_op_parallelism_threads` > 0 sizes this process's BLAS pool (where an
        # in-process target's kernels run); 0 leaves it as the servers set it.
        thread_budget.apply_config(config)
        self._backend = _make_backend(target, graph, config, runtime)

    @property
    def graph(self) -> Any:
        """The graph this session runs."""
        return self._graph

    @property
    def graph_def(self) -> Any:
        """The graph as a `GraphDef`."""
        return self._graph.as_graph_def()

    @property
    def sess_str(self) -> str:
        """The target string."""
        return self._target

    def as_default(self) -> Any:
        """Context manager making this the default session (for `Tensor.eval`)."""
        return session_stack.default_session(self)

    def list_devices(self) -> list[DeviceAttributes]:
        """The devices this session can use (follows `Session.list_devices`)."""
        return [DeviceAttributes(*d) for d in self._backend.list_devices()]

    def close(self) -> None:
        """Frees the session; steps still running fail with `CancelledError`."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._backend.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001  (interpreter shutdown)
            pass

    # --------------------------------------------------------------- running
    def run(self, fetches: Any, feed_dict: Any = None, options: Any = None,
            run_metadata: Any = None) -> Any:
        """Runs the ops and computes the tensors in `fetches` (follows `Session.run`).

        Args:
          fetches: a graph element (Tensor, Operation, Variable, or a name such as `"x:0"`)
            or a nested list/tuple/namedtuple/dict of them.
          feed_dict: maps Tensors (or their names) to values that replace them.
          options: a `RunOptions` proto (`timeout_in_ms`, `trace_level`...).
          run_metadata: a `RunMetadata` proto filled with step stats when tracing.

        Returns:
          `fetches` with every tensor replaced by its NumPy value and every op by None.

        Raises:
          RuntimeError: if the session is closed.
          TypeError: for fetches or feed keys of an invalid type, or a Tensor fed as a value.
          ValueError: for fetches not in the graph, feeds of a statically incompatible shape,
            or unfeedable tensors.
          OpError: for errors while the step runs (e.g. `InvalidArgumentError` for a missing
            feed, `FailedPreconditionError` for an uninitialized variable).
        """
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        fetch_plan = self._fetch_plan(fetches)
        feeds, values = self._process_feeds(feed_dict)
        results = self._backend.run(
            feeds, values, fetch_plan.tensors, fetch_plan.targets, options, run_metadata
        )
        return fetch_plan.build([to_user(v) for v in results])

    def _fetch_plan(self, fetches: Any) -> FetchPlan:
        key = _fetch_key(fetches)
        cached = self._fetch_cache.get(key) if key is not None else None
        if cached is None:
            cached = FetchPlan(self._graph, fetches)
            if key is not None and len(self._fetch_cache) < 1024:
                self._fetch_cache[key] = cached
        return cached

    def _process_feeds(self, feed_dict: Any) -> tuple[list[Tensor], list[Any]]:
        if not feed_dict:
            return [], []
        feeds, values = [], []
        for key, value in feed_dict.items():
            if isinstance(key, SparseTensor):
                # A sparse feed is its three tensors (a SparseTensorValue or a 3-tuple).
                for part_key, part in zip(_sparse_parts(key), _sparse_parts(value)):
                    feed = self._feed(part_key)
                    feeds.append(feed.tensor)
                    values.append(feed.value(part))
                continue
            feed = self._feed(key)
            feeds.append(feed.tensor)
            values.append(feed.value(value))
        return feeds, values

    def _feed(self, key: Any) -> _Feed:
        try:
            cached = self._feed_cache.get(key)
        except TypeError:
            raise TypeError(f"Cannot interpret feed_dict key as Tensor: {key!r}") from None
        if cached is not None:
            return cached
        try:
            el = self._graph.as_graph_element(key, allow_tensor=True, allow_operation=False)
        except TypeError as e:
            raise TypeError(f"Cannot interpret feed_dict key as Tensor: {e}") from None
        except (ValueError, KeyError) as e:
            raise ValueError(f"Cannot interpret feed_dict key as Tensor: {e}") from None
        if not self._graph.is_feedable(el):
            raise ValueError(f"Tensor {el.name} may not be fed.")
        feed = self._feed_cache[key] = _Feed(el)
        return feed

    def make_callable(self, fetches: Any, feed_list: Any = None,
                      accept_options: bool = False) -> Any:
        """A function `f(*feed_values)` that runs `fetches` with `feed_list` fed
        positionally, skipping per-call fetch mapping (follows `Session.make_callable`).

        Raises:
          TypeError/ValueError: as `run`, at creation time for fetches and feed keys.
        """
        fetch_plan = FetchPlan(self._graph, fetches)
        checks = [self._feed(k) for k in (feed_list or [])]
        feeds = [c.tensor for c in checks]
        backend = self._backend

        def call(*args: Any, options: Any = None, run_metadata: Any = None) -> Any:
            if self._closed:
                raise RuntimeError("Attempted to use a closed Session.")
            if len(args) != len(feeds):
                raise TypeError(f"Expected {len(feeds)} feed values, got {len(args)}")
            values = [c.value(v) for c, v in zip(checks, args)]
            results = backend.run(
                feeds, values, fetch_plan.tensors, fetch_plan.targets, options, run_metadata
            )
            return fetch_plan.build([to_user(v) for v in results])

        if not accept_options:
            return lambda *args: call(*args)
        return call

    def partial_run_setup(self, *args: Any, **kwargs: Any) -> Any:
        """Not supported: raises UnimplementedError."""
        raise errors.UnimplementedError(None, None, "partial_run is not supported by tensorweave")

    def partial_run(self, *args: Any, **kwargs: Any) -> Any:
        """Not supported: raises UnimplementedError."""
        raise errors.UnimplementedError(None, None, "partial_run is not supported by tensorweave")


_LIST = object()  # marks a list in a fetch key (no fetch can be this object)


def _fetch_key(fetches: Any) -> Any:
    """A hashable key naming `fetches` with its structure's types, or None when it has none.

    Lists (and tuples holding lists) get a key, so `sess.run([train_op], ...)` reuses its
    `FetchPlan`; a namedtuple's key differs from a plain tuple's with the same elements.
    """
    t = type(fetches)
    if t is list or t is tuple or isinstance(fetches, tuple):
        parts = [_LIST if t is list else t]
        for f in fetches:
            k = _fetch_key(f)
            if k is None:
                return None
            parts.append(k)
        return tuple(parts)
    try:
        hash(fetches)
    except TypeError:
        return None
    return fetches


class _Feed:
    """A fed tensor and the per-run conversion of its values (dtype, static shape, copy).

    The checks `Session.run` applies to a feed value are precomputed from the tensor's
    dtype and static shape; the shape part is recomputed when `set_shape` replaced the
    tensor's `TensorShape`.
    """

    __slots__ = ("tensor", "_np_dtype", "_shape", "_rank", "_dims_of", "_dims")

    def __init__(self, tensor: Tensor):
        self.tensor = tensor
        dtype = tensor.dtype.base_dtype
        np_dtype = np.dtype(dtype.as_numpy_dtype) if dtype.is_numpy_compatible else None
        # NOTE: only plain numeric dtypes take the fast path (strings are converted).
        self._np_dtype = np_dtype if np_dtype is not None and np_dtype.kind in "biufc" else None
        self._shape: Any = None
        self._set_shape(tensor.shape)

    def _set_shape(self, shape: Any) -> None:
        self._shape = shape
        dims = None if shape.ndims is None else shape.as_list()
        self._rank = -1 if dims is None else len(dims)
        known = [i for i, d in enumerate(dims or ()) if d is not None]
        # `_dims_of(array_shape)` picks the statically known dimensions, to compare with
        # `_dims` (a bare int when there is exactly one).
        self._dims_of = operator.itemgetter(*known) if known else None
        self._dims = self._dims_of(dims) if known else None

    def value(self, value: Any) -> Any:
        """`value` as the runtime takes it: a read-only ndarray of the tensor's dtype.

        It never aliases the caller's buffer.

        Raises:
          TypeError: for a Tensor, or a value not convertible to the tensor's dtype.
          ValueError: for a value whose shape the tensor's static shape excludes.
        """
        if type(value) is not np.ndarray or value.dtype != self._np_dtype:
            return self._convert(value)
        tensor = self.tensor
        if tensor.shape is not self._shape:
            self._set_shape(tensor.shape)
        shape = value.shape
        if self._rank >= 0 and (
            len(shape) != self._rank
            or (self._dims_of is not None and self._dims_of(shape) != self._dims)
        ):
            raise self._shape_error(shape)
        # NOTE: the runtime may keep a fed array (e.g. in a variable); never alias the
        # caller's buffer, and freeze it so kernels cannot change it either.
        arr = value.copy()
        arr.flags.writeable = False
        return arr

    def _shape_error(self, shape: Any) -> ValueError:
        return ValueError(
            f"Cannot feed value of shape {shape!r} for Tensor {self.tensor.name!r}, "
            f"which has shape {self.tensor.shape!s}"
        )

    def _convert(self, value: Any) -> Any:
        tensor = self.tensor
        if isinstance(value, Tensor) or hasattr(value, "_as_graph_element"):
            raise TypeError(
                "The value of a feed cannot be a tf.Tensor object. Acceptable feed values "
                "include Python scalars, strings, lists, numpy ndarrays, or TensorHandles. For "
                f"reference, the tensor object was {value!r} which was passed to the feed with "
                f"key {tensor!r}."
            )
        dtype = tensor.dtype.base_dtype
        try:
            arr = to_numpy(value, dtype) if dtype.is_numpy_compatible else value
        except (TypeError, ValueError) as e:
            raise TypeError(
                f"Type of feed value {value!r} is not compatible with Tensor type "
                f"{dtype.name} of {tensor.name!r}: {e}"
            ) from None
        if isinstance(arr, np.ndarray):
            if not tensor.shape.is_compatible_with(arr.shape):
                raise self._shape_error(arr.shape)
            if arr is value or arr.base is not None or not arr.flags.owndata:
                arr = arr.copy()
            arr.flags.writeable = False
        return arr


class Session(BaseSession):
    """A session: `with tf.Session(target, graph, config) as sess:` (follows `tf.Session`).

    Entering makes it the default session and its graph the default graph; leaving closes
    it. `runtime` (tensorweave only): the `ProcessRuntime` of a `grpc://` session (its
    server registry and transfer counters; default: the process's).
    A `config` with `intra_op_parallelism_threads` > 0 sizes this process's BLAS pool
    (`runtime.thread_budget`).

    Raises:
      NotFoundError: for targets other than `""` and `grpc://host:port`.
      DeadlineExceededError: (remote targets) if the cluster is not reachable within
        `config.operation_timeout_in_ms`.
    """

    def __init__(self, target: str = "", graph: Any = None, config: Any = None,
                 runtime: Any = None):
        super().__init__(target, graph, config, runtime)
        self._context_stack: contextlib.ExitStack | None = None

    def __enter__(self) -> Session:
        stack = contextlib.ExitStack()
        stack.enter_context(self._graph.as_default())
        stack.enter_context(self.as_default())
        self._context_stack = stack
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if self._context_stack is not None:
            self._context_stack.close()
            self._context_stack = None
        self.close()

    @staticmethod
    def reset(target: str, containers: list[str] | None = None, config: Any = None) -> None:
        """Clears resource containers on the cluster behind `target` and aborts its
        sessions (follows `tf.Session.reset`); an empty list clears each device's default
        container (its job name).

        Raises:
          NotFoundError: for targets that are not `grpc://`.
          DeadlineExceededError: if the master is unreachable within
            `config.operation_timeout_in_ms`.
        """
        if isinstance(target, bytes):
            target = target.decode()
        if not target.startswith("grpc://"):
            raise errors.NotFoundError(
                None, None,
                "No session factory registered for the given session options: "
                f"{{target: {target!r}}} Registered factories are "
                "{DIRECT_SESSION, GRPC_SESSION}.",
            )
        from tensorweave.distributed.client_session import reset

        reset(target, containers or [], config)


class InteractiveSession(BaseSession):
    """A session that installs itself (and its graph) as the default on creation, for
    shells and notebooks (follows `tf.InteractiveSession`)."""

    def __init__(self, target: str = "", graph: Any = None, config: Any = None,
                 runtime: Any = None):
        super().__init__(target, graph, config, runtime)
        self._graph_ctx = self._graph.as_default()
        self._graph_ctx.__enter__()
        session_stack.push(self)

    def close(self) -> None:
        """Closes the session and removes it from the defaults."""
        super().close()
        session_stack.remove(self)
        ctx, self._graph_ctx = getattr(self, "_graph_ctx", None), None
        if ctx is not None:
            with contextlib.suppress(Exception):
                ctx.__exit__(None, None, None)


def get_default_session() -> Any:
    """The default session of this thread, or None (follows `tf.get_default_session`)."""
    return session_stack.get_default_session()


def _sparse_parts(value: Any) -> tuple[Any, Any, Any]:
    """`(indices, values, dense_shape)` of a SparseTensor(Value) or a 3-tuple.

    Raises:
      TypeError: for anything else fed to a SparseTensor.
    """
    if isinstance(value, SparseTensor | SparseTensorValue):
        return value.indices, value.values, value.dense_shape
    if isinstance(value, tuple | list) and len(value) == 3:
        return value[0], value[1], value[2]
    raise TypeError(
        f"A SparseTensor must be fed a SparseTensorValue or an (indices, values, "
        f"dense_shape) tuple, got {type(value).__name__}"
    )
