"""The master service of a task (TensorFlow's `MasterService`): sessions over GraphDefs for
clients that do not run their own master, `ListDevices`, and `Reset`."""

from __future__ import annotations

import threading
from typing import Any

from tensorweave import errors
from tensorweave.distributed.master_session import MasterSession, filtered_tasks, find_devices
from tensorweave.runtime.node_spec import NodeSpec


class Master:
    """The master of one server.

    Args:
      task_name: the server's task (the client device of its sessions).
      cache: the server's `WorkerCache`.
      default_config: the server's default `ConfigProto`, used when a request has none.
    """

    def __init__(self, task_name: str, cache: Any, default_config: Any = None):
        self.task_name = task_name
        self._cache = cache
        self._default_config = default_config
        self._sessions: dict[str, MasterSession] = {}
        self._lock = threading.Lock()

    def _session(self, handle: str) -> MasterSession:
        with self._lock:
            sess = self._sessions.get(handle)
        if sess is None:
            raise errors.AbortedError(
                None, None,
                f"Session {handle} is not found. Possibly, this master has restarted.",
            )
        return sess

    def create_session(self, graph_def: Any, config: Any,
                       timeout_s: float | None = None) -> tuple[str, int]:
        """Creates a session holding `graph_def`; returns (handle, graph version)."""
        if config is None or not config.ByteSize():
            config = self._default_config
        if timeout_s is None and config is not None and config.operation_timeout_in_ms > 0:
            timeout_s = config.operation_timeout_in_ms / 1000.0
        sess = MasterSession.create(self._cache, self.task_name, config, timeout_s)
        version = sess.extend([NodeSpec.from_node_def(nd) for nd in graph_def.node])
        with self._lock:
            self._sessions[sess.handle] = sess
        return sess.handle, version

    def extend_session(self, handle: str, graph_def: Any, current_version: int) -> int:
        """Adds nodes; returns the new version.

        Raises:
          AbortedError: unknown handle, or `current_version` is stale.
          InvalidArgumentError: duplicate node names.
        """
        sess = self._session(handle)
        if current_version != sess.version:
            raise errors.AbortedError(
                None, None,
                f"Current version is {sess.version} but caller expected {current_version}.",
            )
        return sess.extend([NodeSpec.from_node_def(nd) for nd in graph_def.node])

    def run_step(self, handle: str, feeds: dict[str, Any], fetches: list[str],
                 targets: list[str], options: Any = None, run_metadata: Any = None) -> list:
        """Runs one step of session `handle`."""
        return self._session(handle).run(feeds, fetches, targets, options, run_metadata)

    def close_session(self, handle: str) -> None:
        """Closes session `handle`.

        Raises:
          AbortedError: if the handle is unknown.
        """
        with self._lock:
            sess = self._sessions.pop(handle, None)
        if sess is None:
            raise errors.AbortedError(
                None, None,
                f"Session {handle} is not found. Possibly, this master has restarted.",
            )
        sess.close()

    def list_devices(self, timeout_s: float | None = None) -> tuple[list, list]:
        """(devices of this task, devices of the other tasks)."""
        found = find_devices(self._cache, self._cache.tasks(), timeout_s)
        local = found.pop(self.task_name, [])
        return local, [d for lst in found.values() for d in lst]

    def reset(self, containers: list[str], device_filters: list[str],
              timeout_s: float | None = None) -> None:
        """Closes every session of this master, and on every (filtered) worker clears
        `containers` and drops the sessions created through this task (follows
        `Session.reset`)."""
        with self._lock:
            sessions, self._sessions = list(self._sessions.values()), {}
        for sess in sessions:
            sess.close()
        tasks = filtered_tasks(self._cache.tasks(), device_filters, self.task_name)
        find_devices(self._cache, tasks, timeout_s)
        for task in tasks:
            self._cache.get(task).cleanup_all(containers, self.task_name)
