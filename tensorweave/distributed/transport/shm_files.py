"""The files of the shared-memory hand-over (see `shm`): names, creation, checks, removal.

Files live in a directory, by default `SHM_DIR`, `/dev/shm` (a tmpfs: RAM, no disk; a
`ProcessRuntime` names its own through `shm.OutboxOptions.directory`); `available` says
whether this process can create files there. Creating a file fails with `ShmError` (the caller falls
back to gRPC) when the directory is missing or has not enough free space.

Security: files are created with `O_CREAT | O_EXCL | O_NOFOLLOW` and mode 0600 under an
unguessable name `tw-<pid>-<128 random bits>`; a reader only opens names of that form
directly under its directory (`_checked_path`), without following links. A file its reader
gives back for reuse is renamed to `<path>.free` (`FREE_SUFFIX`).

Reading and removing: large files are copied out of a read-only mapping by NumPy
(`_copy_mapped`, measured 2-3x faster than read()); freeing a file's pages costs (~3 ms
per 16 MiB), so a reader that unlinks a file closes it on a background thread (the
`FdCloser` of the reader's outbox).

Sweeping: files of processes that died without cleaning up are swept by the next process
of the same user that writes (`Sweeper`, at most every `SWEEP_INTERVAL_S`):
given-back files at once, others when older than `STALE_AGE_S`.
"""

from __future__ import annotations

import mmap
import os
import queue
import re
import secrets
import threading
import time
from typing import Any

import numpy as np

SHM_DIR = "/dev/shm"
STALE_AGE_S = 600.0
SWEEP_INTERVAL_S = 60.0

PREFIX = "tw-"
FREE_SUFFIX = ".free"
_NAME = re.compile(r"tw-(\d+)-[0-9a-f]{32}")
_ANY_NAME = re.compile(r"tw-(\d+)-[0-9a-f]{32}(?:\.free)?")
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


class ShmError(Exception):
    """A shared-memory hand-over failed; the caller falls back to gRPC."""


def available(directory: str = SHM_DIR) -> bool:
    """True when `directory` is a directory this process can create files in (two
    syscalls; `shm.PeerState` asks at most once a second)."""
    try:
        return os.path.isdir(directory) and os.access(directory, os.W_OK | os.X_OK)
    except (OSError, ValueError):
        return False


def _new_path(directory: str = SHM_DIR) -> str:
    return os.path.join(directory, f"{PREFIX}{os.getpid()}-{secrets.token_hex(16)}")


def _create(path: str, nbytes: int) -> int:
    directory = os.path.dirname(path)
    try:
        st = os.statvfs(directory)
    except OSError as e:
        raise ShmError(f"{directory}: {e}") from None
    # NOTE: keep some headroom: a full tmpfs fails other users of /dev/shm too.
    if st.f_bavail * st.f_frsize < nbytes + (nbytes >> 3) + (1 << 20):
        raise ShmError(f"not enough space in {directory} for {nbytes} bytes")
    try:
        return os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY | _O_CLOEXEC | _O_NOFOLLOW,
                       0o600)
    except OSError as e:
        raise ShmError(f"cannot create {path}: {e}") from None


def _checked_path(path: str, expected_dir: str = SHM_DIR) -> str:
    directory, base = os.path.split(path)
    if directory != expected_dir or not _NAME.fullmatch(base):
        raise ShmError(f"not a tensorweave shared-memory file: {path!r}")
    return path


def _copy_mapped(fd: int, buf: np.ndarray) -> None:
    # NOTE: for large tensors, mapping the file and copying with NumPy (libc memcpy, with
    # non-temporal stores) measured 2-3x faster than the kernel's copy in read().
    m = mmap.mmap(fd, buf.nbytes, flags=mmap.MAP_SHARED, prot=mmap.PROT_READ)
    try:
        src = np.frombuffer(m, dtype=np.uint8)
        np.copyto(buf, src)
        del src
    finally:
        m.close()


class FdCloser:
    """Closes file descriptors on its own daemon thread (started on first use), so a
    reader does not wait while the kernel frees an unlinked file's pages. One per
    `shm.Outbox`; `stop` closes what is queued and ends the thread."""

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[int | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._stopped = False

    def close_later(self, fd: int) -> None:
        """Queues `fd` to be closed (closed at once once stopped)."""
        with self._lock:
            if self._stopped:
                _close(fd)
                return
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, daemon=True,
                                                name="tw-shm-closer")
                self._thread.start()
            self._queue.put(fd)

    def stop(self) -> None:
        """Closes the queued descriptors and ends the thread (later ones close at once)."""
        with self._lock:
            self._stopped = True
            thread = self._thread
            if thread is not None:
                self._queue.put(None)
        if thread is None:
            return
        thread.join(10.0)

    def _loop(self) -> None:
        while True:
            fd = self._queue.get()
            if fd is None:
                return
            _close(fd)


def _close(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass


def _rename(src: str, dst: str) -> bool:
    try:
        os.rename(src, dst)
    except OSError:
        return False
    return True


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def unlink(msg_or_path: Any) -> None:
    """Removes a file written by `write` (no error when it is gone)."""
    _unlink(msg_or_path if isinstance(msg_or_path, str) else msg_or_path.path)


class Sweeper:
    """Runs `sweep_stale` on `directory` at most every `SWEEP_INTERVAL_S` seconds (one per
    outbox)."""

    def __init__(self, directory: str = SHM_DIR) -> None:
        self.directory = directory
        self._last = 0.0
        self._lock = threading.Lock()

    def maybe_sweep(self) -> None:
        """Sweeps unless it did less than `SWEEP_INTERVAL_S` seconds ago."""
        now = time.monotonic()
        if self._last and now - self._last < SWEEP_INTERVAL_S:
            return
        with self._lock:
            if self._last and now - self._last < SWEEP_INTERVAL_S:
                return
            self._last = now
        try:
            sweep_stale(directory=self.directory)
        except OSError:
            pass


def sweep_stale(max_age_s: float | None = None, directory: str = SHM_DIR) -> int:
    """Unlinks files of this user's dead processes in `directory`; returns how many.

    Given-back files (`*.free`) of a process that is gone go at once (nobody needs them);
    other `tw-<pid>-*` files only when older than `max_age_s` (default `STALE_AGE_S`: a
    reader may still be on its way).
    """
    age = STALE_AGE_S if max_age_s is None else max_age_s
    if not available(directory):
        return 0
    now = time.time()
    removed = 0
    uid = os.getuid()
    with os.scandir(directory) as it:
        for entry in it:
            m = _ANY_NAME.fullmatch(entry.name)
            if m is None:
                continue
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if info.st_uid != uid or _alive(int(m.group(1))):
                continue
            if not entry.name.endswith(FREE_SUFFIX) and now - info.st_mtime < age:
                continue
            _unlink(entry.path)
            removed += 1
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True
