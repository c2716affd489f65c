"""Chrome trace (`chrome://tracing`, Perfetto) views of `StepStats`.

Follows TF 1.x `tensorflow/python/client/timeline.py`. Layout of the trace (all times in
microseconds since the epoch):

* one process per device, named `"<device> Compute"` by a `ph: "M"` metadata event;
* one complete event (`ph: "X"`, category `"Op"`, name = op type, `args` = `{name, op,
  input0, input1, ...}`) per `NodeExecStats`, with `ts = all_start_micros` and
  `dur = all_end_rel_micros`;
* threads: one lane per recorded `thread_id` (named from `DeviceStepStats.thread_names`
  when present); slices of one thread that overlap in time (an asynchronous `_Recv` that
  waits while its thread runs other ops) are split over extra lanes, so that every lane
  nests properly. TensorFlow instead re-derives lanes from the timings alone;
* with `show_dataflow`, flow arrows (`ph: "s"` / `"t"`, category `"DataFlow"`): from a
  producer to each consumer on another lane (inputs parsed from `timeline_label`
  `"name = Op(in0, in1)"`, as TensorFlow does), and from each `_Send` to its matching
  `_Recv`. Transfers are matched through their labels in TensorFlow's format,
  `"name = _Send(tensor_name @recv_device)"` / `"name = _Recv(tensor_name @send_device)"`,
  or through a full rendezvous key `"src;incarnation;dst;tensor_name;frame:iter"`;
* with `show_memory`, the tensors recorded in `NodeExecStats.output` (object events in a
  `"<device> Tensors"` process) and one memory counter per allocator (`"Allocators"`).

Distributed traces (one `DeviceStepStats` per task and device) work as they are; use
`merge_step_stats` to combine the `StepStats` of several runs or workers into one.
"""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

from tensorweave.protos import step_stats_pb2

_LABEL_RE = re.compile(r"(.*) = (.*)\((.*)\)")
_SEND_OPS = frozenset({"_Send", "_HostSend"})
_RECV_OPS = frozenset({"_Recv", "_HostRecv"})


@dataclasses.dataclass(frozen=True)
class AllocationMaximum:
    """The peak of one allocator: when (microseconds), how many bytes, which tensors."""

    timestamp: int
    num_bytes: int
    tensors: frozenset[str]


@dataclasses.dataclass(frozen=True)
class StepStatsAnalysis:
    """The result of `Timeline.analyze_step_stats`."""

    chrome_trace: _ChromeTrace
    allocator_maximums: dict[str, AllocationMaximum]


class _ChromeTrace:
    """Accumulates Chrome Trace Format events; metadata events are written first."""

    def __init__(self) -> None:
        self.metadata: list[dict[str, Any]] = []
        self.events: list[dict[str, Any]] = []

    def process(self, name: str, pid: int) -> None:
        """Names process `pid`."""
        event = {"name": "process_name", "ph": "M", "pid": pid, "args": {"name": name}}
        self.metadata.append(event)

    def thread(self, name: str, pid: int, tid: int) -> None:
        """Names thread `tid` of process `pid`."""
        self.metadata.append(
            {"name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "args": {"name": name}}
        )

    def event(self, ph: str, cat: str, name: str, pid: int, tid: int, ts: int, **extra: Any):
        """Adds one event; `extra` holds `dur`, `id`, `args`, `bp`..."""
        event = {"ph": ph, "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts}
        event.update(extra)
        self.events.append(event)

    def format_to_string(self, pretty: bool = False) -> str:
        """The trace as JSON: `{"traceEvents": [...]}`."""
        trace = {"traceEvents": self.metadata + self.events}
        if pretty:
            return json.dumps(trace, indent=4, separators=(",", ": "))
        return json.dumps(trace, separators=(",", ":"))


@dataclasses.dataclass
class _Node:
    stats: Any
    device: str
    op: str
    inputs: list[str]
    start: int
    end: int
    pid: int = 0
    tid: int = 0


@dataclasses.dataclass
class _TensorLife:
    name: str
    object_id: int
    pid: int
    tid: int
    create: int
    allocator: str
    num_bytes: int
    last_unref: int


def _as_step_stats(value: Any) -> Any:
    """Our `StepStats` from a `StepStats`, a `RunMetadata`, or a wire-compatible message.

    Messages of another package (TensorFlow's) are converted through bytes.

    Raises:
      TypeError: for anything else.
    """
    if hasattr(value, "step_stats") and not isinstance(value, step_stats_pb2.StepStats):
        value = value.step_stats
    if isinstance(value, step_stats_pb2.StepStats):
        return value
    descriptor = getattr(value, "DESCRIPTOR", None)
    if descriptor is not None and descriptor.name == "StepStats":
        return step_stats_pb2.StepStats.FromString(value.SerializeToString())
    raise TypeError(f"Expected a StepStats or RunMetadata proto, got {type(value).__name__}")


def merge_step_stats(*step_stats: Any) -> Any:
    """Combines several `StepStats` (e.g. one per worker, or one per step) into one.

    Stats of the same device are concatenated into one `DeviceStepStats` (and their
    `thread_names` merged); devices keep their order of first appearance. Inputs are not
    modified.

    Args:
      *step_stats: `StepStats` or `RunMetadata` protos.

    Returns:
      A new `StepStats`.

    Raises:
      TypeError: for arguments that are neither.
    """
    merged = step_stats_pb2.StepStats()
    by_device: dict[str, Any] = {}
    for stats in step_stats:
        for dev in _as_step_stats(stats).dev_stats:
            target = by_device.get(dev.device)
            if target is None:
                target = merged.dev_stats.add(device=dev.device)
                by_device[dev.device] = target
            target.node_stats.extend(dev.node_stats)
            for tid, name in dev.thread_names.items():
                target.thread_names[tid] = name
    return merged


def _parse_op_label(label: str) -> tuple[str, str, list[str]]:
    """Splits `"name = Op(a, b)"` into (name, op, inputs); "unknown"s for other forms."""
    match = _LABEL_RE.match(label)
    if match is None:
        return "unknown", "unknown", []
    name, op, inputs = match.groups()
    return name, op, inputs.split(", ") if inputs else []


def _times(ns: Any) -> tuple[int, int]:
    """(start, end) in microseconds, from the nanosecond fields when only those are set."""
    start, dur = ns.all_start_micros, ns.all_end_rel_micros
    if not start and ns.all_start_nanos:
        start = ns.all_start_nanos // 1000
        dur = ns.all_end_rel_nanos // 1000
    return start, start + dur


def _canonical_device(device: str) -> str:
    from tensorweave.framework.device_spec import canonical_name

    device = device.strip()
    try:
        return canonical_name(device)
    except ValueError:
        return device


def _names_transfer(node: _Node) -> bool:
    """True for a `_Send`/`_Recv` whose label arguments name the transfer, not inputs."""
    if node.op not in _SEND_OPS and node.op not in _RECV_OPS:
        return False
    text = ", ".join(node.inputs)
    return " @" in text or ";" in text


def _transfer_key(node: _Node) -> tuple[str, str, str] | None:
    """(tensor name, source device, destination device) of a `_Send`/`_Recv`, or None.

    Parsed from the node's label; None for other nodes and labels without a tensor name.
    """
    if node.op not in _SEND_OPS and node.op not in _RECV_OPS:
        return None
    text = ", ".join(node.inputs).strip()
    peer = ""
    if " @" in text:
        text, peer = text.rsplit(" @", 1)
    parts = text.split(";")
    if len(parts) >= 4:
        return parts[3], _canonical_device(parts[0]), _canonical_device(parts[2])
    if not text:
        return None
    here = _canonical_device(node.device)
    if node.op in _SEND_OPS:
        return text, here, _canonical_device(peer)
    return text, _canonical_device(peer), here


class Timeline:
    """Turns the `StepStats` of a traced step into a Chrome trace.

    Follows TF 1.x `tensorflow.python.client.timeline.Timeline`. Typical use::

        options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
        run_metadata = tf.RunMetadata()
        sess.run(train_op, options=options, run_metadata=run_metadata)
        trace = Timeline(run_metadata.step_stats).generate_chrome_trace_format()
        open("timeline.json", "w").write(trace)   # load in chrome://tracing

    Args:
      step_stats: a `StepStats` (or a `RunMetadata`); it is never modified.
      graph: the `Graph` that ran (optional; kept for API compatibility).

    Raises:
      TypeError: if `step_stats` is neither a `StepStats` nor a `RunMetadata`.
    """

    def __init__(self, step_stats: Any, graph: Any = None) -> None:
        self._step_stats = merge_step_stats(_as_step_stats(step_stats))
        self._graph = graph

    def analyze_step_stats(
        self, show_dataflow: bool = True, show_memory: bool = True
    ) -> StepStatsAnalysis:
        """Builds the trace and the peak memory of every allocator.

        Args:
          show_dataflow: add flow arrows between producers and consumers on different
            lanes, and from each `_Send` to its `_Recv`.
          show_memory: add tensor lifetimes and allocator memory counters (from
            `NodeExecStats.output`).

        Returns:
          A `StepStatsAnalysis(chrome_trace, allocator_maximums)`; `allocator_maximums` maps
          allocator names to `AllocationMaximum` (empty unless `show_memory`).
        """
        return _TraceBuilder(self._step_stats, show_dataflow, show_memory).build()

    def generate_chrome_trace_format(
        self, show_dataflow: bool = True, show_memory: bool = False, op_time: str = "schedule"
    ) -> str:
        """The trace as a JSON string in Chrome Trace Format (`{"traceEvents": [...]}`).

        Args:
          show_dataflow: add flow arrows (see `analyze_step_stats`).
          show_memory: add tensor and allocator memory events.
          op_time: TensorFlow's choice between scheduling and GPU-kernel times; without GPU
            tracer streams all of `"schedule"`, `"gpu"` and `"all"` give the same trace.

        Returns:
          The JSON text.

        Raises:
          ValueError: for an unknown `op_time`.
        """
        if op_time not in ("schedule", "gpu", "all"):
            raise ValueError(f"op_time must be 'schedule', 'gpu' or 'all', got {op_time!r}")
        analysis = self.analyze_step_stats(show_dataflow, show_memory)
        return analysis.chrome_trace.format_to_string(pretty=True)


class _TraceBuilder:
    """One analysis pass over a `StepStats` whose devices are unique."""

    def __init__(self, step_stats: Any, show_dataflow: bool, show_memory: bool) -> None:
        self._stats = step_stats
        self._show_dataflow = show_dataflow
        self._show_memory = show_memory
        self._trace = _ChromeTrace()
        self._nodes: list[_Node] = []
        self._producers: dict[str, _Node] = {}
        self._tensors: dict[str, _TensorLife] = {}
        self._next_flow_id = 0
        self._pids: dict[str, int] = {}
        self._tensor_pids: dict[str, int] = {}
        self._allocators_pid = -1

    def build(self) -> StepStatsAnalysis:
        """Emits every event and returns the analysis."""
        self._allocate_pids()
        for dev in self._stats.dev_stats:
            self._collect_nodes(dev)
        if self._show_memory:
            self._track_outputs()
        for node in self._nodes:
            self._emit_op(node)
            self._link_inputs(node)
        if self._show_dataflow:
            self._link_transfers()
        maximums = self._emit_memory_counters() if self._show_memory else {}
        return StepStatsAnalysis(self._trace, maximums)

    def _allocate_pids(self) -> None:
        next_pid = 0
        if self._show_memory:
            self._allocators_pid, next_pid = 0, 1
            self._trace.process("Allocators", 0)
        for dev in self._stats.dev_stats:
            self._pids[dev.device] = next_pid
            self._trace.process(dev.device + " Compute", next_pid)
            next_pid += 1
            if self._show_memory:
                self._tensor_pids[dev.device] = next_pid
                self._trace.process(dev.device + " Tensors", next_pid)
                next_pid += 1

    def _collect_nodes(self, dev: Any) -> None:
        """Parses the nodes of one device and assigns each a lane (tid)."""
        pid = self._pids[dev.device]
        nodes = []
        for ns in dev.node_stats:
            start, end = _times(ns)
            if ns.node_name == "RecvTensor":
                op, inputs = "RecvTensor", []
            else:
                _, op, inputs = _parse_op_label(ns.timeline_label)
            nodes.append(_Node(ns, dev.device, op, inputs, start, end, pid))
        lanes: dict[tuple[int, int], int] = {}
        ends: dict[int, list[int]] = {}
        for node in sorted(nodes, key=lambda n: (n.start, -n.end)):
            thread = node.stats.thread_id
            lane_ends = ends.setdefault(thread, [])
            lane = next((i for i, e in enumerate(lane_ends) if e <= node.start), len(lane_ends))
            if lane == len(lane_ends):
                lane_ends.append(node.end)
            lane_ends[lane] = node.end
            if (thread, lane) not in lanes:
                lanes[(thread, lane)] = len(lanes)
            node.tid = lanes[(thread, lane)]
        for (thread, lane), tid in sorted(lanes.items(), key=lambda kv: kv[1]):
            name = dev.thread_names.get(thread) or f"Thread {thread}"
            self._trace.thread(name if lane == 0 else f"{name} (lane {lane})", pid, tid)
        for node in nodes:
            self._producers[node.stats.node_name] = node
        self._nodes.extend(nodes)

    def _emit_op(self, node: _Node) -> None:
        args: dict[str, Any] = {"name": node.stats.node_name, "op": node.op}
        for i, name in enumerate(node.inputs):
            args[f"input{i}"] = name
        self._trace.event(
            "X",
            "Op",
            node.op,
            node.pid,
            node.tid,
            node.start,
            dur=node.end - node.start,
            args=args,
        )

    def _producer_of(self, input_name: str) -> tuple[str, _Node] | None:
        """(name, producer) of a label input `x`, `x:1`, or a partition's copy `x/_3`.

        A partition's copy maps back to `x`, as TensorFlow does; None when not found.
        """
        name = input_name.lstrip("^")
        candidates = [name, name.rsplit(":", 1)[0]]
        if "/_" in name:
            candidates.append(name[: name.rfind("/_")])
        for candidate in candidates:
            node = self._producers.get(candidate)
            if node is not None:
                return candidate, node
        return None

    def _link_inputs(self, node: _Node) -> None:
        if node.op == "RecvTensor" or _names_transfer(node):
            return
        for input_name in node.inputs:
            found = self._producer_of(input_name)
            if found is None:
                continue
            name, producer = found
            tensor = self._tensors.get(input_name) or self._tensors.get(name)
            if tensor is not None:
                tensor.last_unref = max(tensor.last_unref, node.end)
            if self._show_dataflow and (producer.pid, producer.tid) != (node.pid, node.tid):
                self._flow(input_name, producer, producer.end, node, node.start)

    def _flow(self, name: str, src: _Node, src_ts: int, dst: _Node, dst_ts: int) -> None:
        flow_id = self._next_flow_id
        self._next_flow_id += 1
        self._trace.event("s", "DataFlow", name, src.pid, src.tid, src_ts, id=flow_id)
        self._trace.event("t", "DataFlow", name, dst.pid, dst.tid, dst_ts, id=flow_id, bp="e")

    def _link_transfers(self) -> None:
        """Flow arrows from each `_Send` to the `_Recv` of the same transfer."""
        sends: dict[str, list[tuple[tuple[str, str, str], _Node]]] = {}
        for node in self._nodes:
            key = _transfer_key(node)
            if key is not None and node.op in _SEND_OPS:
                sends.setdefault(key[0], []).append((key, node))
        for node in self._nodes:
            key = _transfer_key(node)
            if key is None or node.op not in _RECV_OPS or not sends.get(key[0]):
                continue
            candidates = sends[key[0]]
            index = next((i for i, (k, _) in enumerate(candidates) if k == key), 0)
            _, send = candidates.pop(index)
            # The data reaches the receiver when the send ends, at the latest when the
            # receive completes; the arrow ends inside the `_Recv` slice.
            arrival = min(max(send.end, node.start), node.end)
            self._flow(key[0], send, send.end, node, arrival)

    def _track_outputs(self) -> None:
        for node in self._nodes:
            tensors_pid = self._tensor_pids[node.device]
            for index, output in enumerate(node.stats.output):
                base = node.stats.node_name
                name = f"{base}:{index}" if index else base
                allocation = output.tensor_description.allocation_description
                life = _TensorLife(
                    name,
                    len(self._tensors),
                    tensors_pid,
                    node.tid,
                    node.start,
                    allocation.allocator_name,
                    allocation.requested_bytes,
                    node.end,
                )
                self._tensors[name] = life
                self._trace.event(
                    "N", "Tensor", name, tensors_pid, node.tid, node.start, id=life.object_id
                )
                snapshot = {"tensor_description": str(output.tensor_description).replace('"', "")}
                self._trace.event(
                    "O",
                    "Tensor",
                    name,
                    tensors_pid,
                    node.tid,
                    max(node.end - 1, node.start),
                    id=life.object_id,
                    args={"snapshot": snapshot},
                )

    def _emit_memory_counters(self) -> dict[str, AllocationMaximum]:
        """Emits tensor deletions and per-allocator totals; returns each allocator's peak."""
        changes: dict[str, list[tuple[int, int, str]]] = {}
        for t in self._tensors.values():
            self._trace.event("D", "Tensor", t.name, t.pid, 0, t.last_unref, id=t.object_id)
            changes.setdefault(t.allocator, []).append((t.create, t.num_bytes, t.name))
            changes[t.allocator].append((t.last_unref, -t.num_bytes, t.name))
        maximums: dict[str, AllocationMaximum] = {}
        for allocator, items in changes.items():
            total, live = 0, set()
            peak = AllocationMaximum(0, 0, frozenset())
            for ts, num_bytes, name in sorted(items, key=lambda item: item[0]):
                total += num_bytes
                if num_bytes < 0:
                    live.discard(name)
                else:
                    live.add(name)
                if total > peak.num_bytes:
                    peak = AllocationMaximum(ts, total, frozenset(live))
                self._trace.event(
                    "C", "Memory", allocator, self._allocators_pid, 0, ts, args={allocator: total}
                )
            maximums[allocator] = peak
        return maximums


__all__ = ["AllocationMaximum", "StepStatsAnalysis", "Timeline", "merge_step_stats"]
