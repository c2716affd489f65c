"""Service interfaces of a task: the worker service and the master service.

Each is a triple (design.md §1): this `Protocol`, an in-process implementation
(`worker.Worker`, `master.Master`) and a gRPC client (`transport.grpc_client`). Calls on the
hot path carry NumPy arrays in Python objects, so an in-process cluster never serializes;
the gRPC clients encode them as TensorFlow's protos (`RunGraphRequest`...).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, Protocol

from tensorweave.framework.cancellation import CancellationManager

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


@dataclasses.dataclass
class RunGraphResult:
    """The fetched values (by key) and, when traced, a `DeviceStepStats` proto."""

    recvs: dict[str, Any]
    step_stats: Any = None


class WorkerInterface(Protocol):
    """TensorFlow's `WorkerService`, plus batched tensor transfer."""

    task_name: str

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

    def run_graph_async(self, call: RunGraphCall, done: Done) -> Canceller:
        """Runs a partition for one step; `done(RunGraphResult, None)` or `done(None, err)`."""

    def recv_tensors_async(self, step_id: int, keys: list[str], done: Done,
                           timeout_s: float | None = None) -> Canceller:
        """Pulls the values of `keys` from this worker's step rendezvous, waiting until all
        were sent; `done(list_of_values, None)` or `done(None, err)`."""

    def cleanup_graph(self, step_id: int, rollback: bool = False) -> None:
        """Drops the step's rendezvous; with `rollback`, undoes its variable writes."""

    def cleanup_all(self, containers: list[str], master_task: str = "") -> None:
        """Clears resource containers (default: the job's) and the sessions created
        through `master_task`."""


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
