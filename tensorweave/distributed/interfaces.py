"""Service interfaces of a task: the worker service and the master service.

Each is a triple (design.md §1): this `Protocol`, an in-process implementation
(`worker.Worker`, `master.Master`) and a gRPC client (`transport.grpc_client`). Calls on the
hot path carry NumPy arrays in Python objects, so an in-process cluster never serializes;
the gRPC clients encode them as TensorFlow's protos (`RunGraphRequest`...).

`WorkerInterface` is everything a master (`master_session`) and a peer worker call; a
transport that can also stream a step's tensors on the `RunGraph` call itself declares it
with `streaming` (a `StepStreaming`, or None). `WorkerTransfers` is the transport-owned
state a `Worker` is given by its server (stash of large tensors, /dev/shm outbox, step
stream pumps) instead of creating it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, Protocol

from tensorweave.framework.cancellation import CancellationManager

# `DeviceAttributes.physical_device_desc` of a tensorweave task's devices (`GetStatus`): a
# device without it belongs to a plain TensorFlow server, whose feeds and fetches a master
# relays through its own task (TensorFlow's rendezvous takes only keys local to itself).
TENSORWEAVE_DEVICE_DESC = "tensorweave"

# done(result, error): exactly one of them is None.
Done = Callable[[Any, Any], None]
# cancel(error): abandons an asynchronous call.
Canceller = Callable[[Any], None]


@dataclasses.dataclass
class RunGraphCall:
    """One `RunGraph`: run a registered partition for one step."""

    session_handle: str
    graph_handle: str
    step_id: int
    sends: dict[str, Any]  # client-terminated feed key -> value
    recv_keys: list[str]  # client-terminated fetch keys
    record_timeline: bool = False
    timeout_s: float | None = None
    cancellation: CancellationManager | None = None
    # NOTE: True when the step has no other partition: nothing can ask for a rollback.
    single_partition: bool = False
    # Same-host step streams (`transport.step_stream.StreamConn`) by peer task: the values
    # this partition exchanges with that task travel on it instead of through pulls.
    streams: dict[str, Any] | None = None
    # True on the partition's own task (the stream's server end), False at the caller.
    stream_server: bool = False
    # Earlier multi-partition steps of the session that succeeded everywhere: the worker
    # drops their undo logs (the master's "commit"; a failed step gets a rollback instead).
    committed: list[int] | None = None


@dataclasses.dataclass
class RunGraphResult:
    """The fetched values (by key) and, when traced, a `DeviceStepStats` proto."""

    recvs: dict[str, Any]
    step_stats: Any = None


class StreamedRun(Protocol):
    """A partition's `RunGraph` started with `StepStreaming.start_streamed`."""

    # The connection the caller's own partition exchanges the step's values on (it goes
    # into that partition's `RunGraphCall.streams`).
    conn: Any

    def finish(self, deadline: float | None) -> RunGraphResult:
        """Waits for the partition's answer (after the caller's own partition ended).

        Raises:
          OpError: the partition's error; DeadlineExceededError once `deadline`
            (time.monotonic seconds) passes; UnavailableError when the connection broke.
        """

    def abandon(self) -> None:
        """Closes the call unless `finish` settled it (an interrupted step)."""


class StepStreaming(Protocol):
    """Optional capability of a transport: `RunGraph` calls whose step values travel on
    the call itself (see `transport.step_stream`)."""

    def start_streamed(self, call: RunGraphCall, stream_task: str) -> StreamedRun | None:
        """Starts `call` streaming the values between its partition and `stream_task`
        (the caller's task); None where it does not apply this time (use
        `run_graph_async`)."""


class WorkerInterface(Protocol):
    """TensorFlow's `WorkerService`, plus batched tensor transfer.

    Attributes:
      task_name: `/job:<job>/replica:0/task:<index>`.
      in_process: True for the worker object itself (calls are plain Python calls, values
        are not copied, cancellation reaches it through `RunGraphCall.cancellation`);
        False for a client of a remote task (cancelled through `cleanup_graph`).
      streaming: the transport's `StepStreaming`, or None when it cannot stream.
    """

    task_name: str
    in_process: bool
    streaming: StepStreaming | None

    def get_status(self, timeout_s: float | None = None) -> list[Any]:
        """`DeviceAttributes` protos of the worker's devices."""

    def create_worker_session(self, session_handle: str, server_def: Any,
                              isolate_session_state: bool, master_task: str) -> None:
        """Creates per-session state (a private resource manager when isolated)."""

    def delete_worker_session(self, session_handle: str) -> None:
        """Drops a session and its registered graphs."""

    def register_graph(self, session_handle: str, graph_def: Any) -> str:
        """Installs a partition; returns its graph handle."""

    def deregister_graph(self, session_handle: str, graph_handle: str) -> None:
        """Removes a partition."""

    def run_graph(self, call: RunGraphCall) -> RunGraphResult:
        """Runs a partition for one step in the calling thread and waits for it.

        Raises:
          OpError: the step's error, or the transport's naming the task.
        """

    def run_graph_async(self, call: RunGraphCall, done: Done) -> Canceller:
        """Runs a partition for one step; `done(RunGraphResult, None)` or `done(None, err)`."""

    def recv_tensors_async(self, step_id: int, keys: list[str], done: Done,
                           timeout_s: float | None = None) -> Canceller:
        """Pulls the values of `keys` from this worker's step rendezvous, waiting until all
        were sent; `done(list_of_values, None)` or `done(None, err)`."""

    def cleanup_graph(self, step_id: int, rollback: bool = False) -> None:
        """Ends a step here: drops its rendezvous and its undo log; with `rollback`, first
        undoes its variable writes (the step failed elsewhere)."""

    def cleanup_all(self, containers: list[str], master_task: str = "") -> None:
        """Clears resource containers (default: the job's) and the sessions created
        through `master_task`."""

    def close(self) -> None:
        """Releases the caller's connections to the task (its `WorkerCache` closed)."""


class TensorStash(Protocol):
    """Large tensors parked for a later pull or feed, by (step id, rendezvous key)."""

    def put(self, step_id: int, key: str, value: Any, what: str = "stash") -> None:
        """Keeps `value` until `take` (or until it expires).

        Raises:
          ResourceExhaustedError: naming `what`, when the stash's byte cap would be exceeded.
        """

    def reserve_check(self, what: str, nbytes: int) -> None:
        """Raises `ResourceExhaustedError` naming `what` when `nbytes` more would not fit."""

    def take(self, step_id: int, key: str) -> Any:
        """Removes and returns a value, or None when there is none.

        Raises:
          DataLossError: the value was handed over as a file that cannot be read.
        """


class StepStreamPump(Protocol):
    """One partition run's end of its step streams (`transport.step_stream.StreamPump`);
    it is the step rendezvous's `ReceiveSource` for the values it carries."""

    def attach(self, conn: Any, task: str, recv_keys: list[str], send_keys: list[str],
               batch: bool = True) -> None:
        """Streams `recv_keys` in from `conn`, this partition's `send_keys` out to it."""

    def poll_in_waiting_thread(self) -> None:
        """Has the thread waiting for the step's values read the streams (polled by the
        step rendezvous)."""

    def start_background(self, pool: Any) -> None:
        """Reads the streams on a `pool` thread (for plans that do not read them)."""

    def flush(self, final: bool = False) -> None:
        """Sends the batched values."""

    def close(self) -> None:
        """Ends the partition's side of its streams."""


@dataclasses.dataclass
class WorkerTransfers:
    """Transport-owned state of a worker, given to `Worker` by its server.

    Attributes:
      stash: large tensors pushed before a `RunGraph` or parked for a stream pull.
      outbox: tensors handed to same-host peers as /dev/shm files not read yet
        (`transport.shm.Outbox`), or None without shared memory.
      open_pump: `open_pump(rdv, cancellation, deadline, server)` -> a `StepStreamPump`
        for a `RunGraphCall` with `streams`, or None when no transport streams.
    """

    stash: TensorStash
    outbox: Any = None
    open_pump: Callable[..., StepStreamPump] | None = None

    def close(self) -> None:
        """Frees the transport state (the worker stopped)."""
        if self.outbox is not None:
            self.outbox.close()


class MasterInterface(Protocol):
    """TensorFlow's `MasterService` (session lifecycle over a GraphDef)."""

    def create_session(self, graph_def: Any, config: Any) -> tuple[str, int]:
        """Returns (session handle, graph version)."""

    def extend_session(self, handle: str, graph_def: Any, current_version: int) -> int:
        """Adds nodes; returns the new graph version."""

    def run_step(self, handle: str, feeds: dict[str, Any], fetches: list[str],
                 targets: list[str], options: Any, run_metadata: Any) -> list[Any]:
        """Runs one step; returns fetched values."""

    def close_session(self, handle: str) -> None:
        """Frees a session; its running steps are cancelled."""

    def list_devices(self) -> list[Any]:
        """`DeviceAttributes` of the cluster's devices."""

    def reset(self, containers: list[str], device_filters: list[str]) -> None:
        """Closes every session of this master and clears containers on the workers."""
