"""Shared-memory hand-over of large tensors between processes of one host.

Why: through gRPC Python a tensor is copied several times on each side (numpy -> `bytes`
chunk -> C-core slices -> HTTP/2 frames over loopback TCP -> slices -> `bytes` -> numpy),
which caps loopback transfers at a few hundred MB/s on small machines. When both peers
run on the same host, the sender instead writes the tensor's buffer into a file under
`/dev/shm` (a tmpfs: RAM, no disk) with one `os.write` of the array's memory, and the
message carries only (path, dtype, shape, nbytes); the receiver reads the file into a
freshly allocated array (`readv` into a memoryview, or NumPy's copy from a read-only
mapping for large files, which measured 2-3x faster) and removes it. That is one memcpy
on each side and no Python-level copies.

When it is used (see `grpc_client`/`grpc_server`): the peer's address is on this host
(`HostLocality.is_local_address`: loopback names, `unix:` targets, this host's
own names and IPs), `/dev/shm` is a writable directory (`available`, from `shm_files`),
the tensor is not a string tensor and has at least `MIN_BYTES` bytes, and the session did
not set `ConfigProto.tensorweave.disable_shared_memory` (servers: their default session
config). Every failure falls back to the gRPC stream path: a failed write (full or missing
`/dev/shm`, not enough free space) sends the tensor over gRPC; a receiver that cannot
read a file pulls the value over gRPC instead (the sender keeps the file registered under
its key and streams it from there), or, for feeds, the worker rejects them before running
anything and the client resends the step without shared memory. A peer whose files could
not be read is not offered shared memory again for `RETRY_AFTER_S` seconds (e.g. two
containers sharing the network but not `/dev/shm`).

Lifetime: a reader removes a file right after reading it: it unlinks it, or, when the
writer asked for it (`ShmTensor.recycle`, set by writers with an `Outbox`), renames it to
`<path>.free`, giving it back: the writer's next `write` overwrites it under a new name.
Writing into tmpfs pages that already exist measured ~2x faster than into new ones (new
pages must be allocated, and on a VM that returns freed memory to its host, faulted in
again), and freeing pages costs too (~3 ms per 16 MiB; a reader that does unlink frees
them on a background thread). Writers record every file they created in an `Outbox` and
unlink the ones still there after `TTL_S` seconds (a receiver that died or never asked),
given-back files not reused within `RECYCLE_TTL_S` (at most `POOL_FILES`, each at most
`RECYCLE_MAX_BYTES`), and
everything when their server stops and at interpreter exit; a client unlinks the feed
files of a `RunGraph` as soon as the call returns. Files of processes that died without
cleaning up are swept by the next process of the same user that writes (see `shm_files`).

Security: files are created private to their user under unguessable names, and a reader
only opens names of that form directly under its directory (`OutboxOptions.directory`,
default `SHM_DIR`), without following links (see
`shm_files`); `read` only reads regular files owned by its own uid with no group/other
permissions and exactly the announced size. So only processes of the same user exchange
tensors this way; a remote peer naming a path gets nothing. A given-back file is reused
only if it is a regular file of this uid (in the sticky `/dev/shm`, another user can
neither replace nor rename our files).

Layout: whether an address is on this host is `host_locality`; the files themselves
(`SHM_DIR`, names, creation, checks, removal, `available`, sweeping) are `shm_files`. This
module re-exports their public names and is the one to import. The constants below are
defaults: a `ProcessRuntime`'s frozen `OutboxOptions` (directory, I/O sizes, lifetimes)
is what its readers and writers use, so a test builds a runtime (or an `Outbox`) with
its own options instead of changing a module.
"""

from __future__ import annotations

import collections
import dataclasses
import errno
import logging
import os
import stat
import threading
import time
from typing import Any

import numpy as np

# NOTE: `X as X`: re-exported, this is the module to import (see Layout above).
from tensorweave.distributed.transport.host_locality import HostLocality
from tensorweave.distributed.transport.host_locality import host_of as host_of
from tensorweave.distributed.transport.shm_files import (
    _O_CLOEXEC,
    _O_NOFOLLOW,
    FREE_SUFFIX,
    FdCloser,
    ShmError,
    Sweeper,
    _checked_path,
    _copy_mapped,
    _create,
    _new_path,
    _rename,
    _unlink,
    available,
)
from tensorweave.distributed.transport.shm_files import PREFIX as PREFIX
from tensorweave.distributed.transport.shm_files import SHM_DIR as SHM_DIR
from tensorweave.distributed.transport.shm_files import STALE_AGE_S as STALE_AGE_S
from tensorweave.distributed.transport.shm_files import SWEEP_INTERVAL_S as SWEEP_INTERVAL_S
from tensorweave.distributed.transport.shm_files import sweep_stale as sweep_stale
from tensorweave.distributed.transport.shm_files import unlink as unlink
from tensorweave.framework import dtypes
from tensorweave.protos import transport_pb2

log = logging.getLogger("tensorweave.transport")

# NOTE: below this, a tensor is cheaper inline in the message (a file costs a few
# syscalls). Measured between two processes on a 2-core VM: inline won at 128 KiB (~20%),
# shm won from 256 KiB (~35%) and by ~3x at 1 MiB.
MIN_BYTES = 256 << 10
# NOTE: the same for answers (`RunGraph` fetches, `RecvTensors`) over the step-call socket
# (`local_rpc`), where an inline byte costs much less than through gRPC. Measured there:
# a 256 KiB tensor pulled every step (the 256x256 weight and its gradient, between a ps
# and a worker other than the master in in-graph replication) cost more CPU as a file
# (create, write, read, rename, reap: system time on both ends) than inline (see
# docs/scaling.md, "Synchronous layouts"); 512 KiB and up keep the gRPC rule's files.
MIN_BYTES_STEP_CALL = 512 << 10
TTL_S = 60.0
RETRY_AFTER_S = 300.0
AVAILABLE_TTL_S = 1.0
# NOTE: above this, `read` maps the file and copies with NumPy instead of read() (faster
# for large buffers, see `shm_files._copy_mapped`).
MMAP_READ_MIN_BYTES = 32 << 20
# NOTE: Linux transfers at most 0x7ffff000 bytes per read/write call; stay well below.
IO_MAX_BYTES = 1 << 30

# NOTE: a file given back by its reader for reuse (see `ShmTensor.recycle`) is at most
# this old, a writer keeps at most this many, and larger tensors are not recycled.
RECYCLE_TTL_S = 5.0
POOL_FILES = 4
RECYCLE_MAX_BYTES = 256 << 20

_STRING = dtypes.string.as_datatype_enum


# ------------------------------------------------------------------ where it applies
def fits(value: Any, min_bytes: int = MIN_BYTES) -> bool:
    """True when `value` (an ndarray) should travel through shared memory if possible
    (`min_bytes`: the path's threshold, `MIN_BYTES` or `MIN_BYTES_STEP_CALL`)."""
    return (type(value) is np.ndarray and value.dtype != object
            and value.nbytes >= min_bytes)


# ------------------------------------------------------------------ files
def write(name: str, value: Any, outbox: Outbox | None = None, key: Any = None) -> Any:
    """Writes `value` into a file in the outbox's directory (`OutboxOptions.directory`,
    default `SHM_DIR`); returns its `ShmTensor`.

    With an `outbox`, the file is registered there (under `key`, for `Outbox.take`) so
    that it is removed when nobody reads it, and it may be a file the outbox handed out
    before and its reader gave back (`recycle`): overwriting tmpfs pages is ~2x cheaper
    than getting new ones.

    Raises:
      ShmError: if the file cannot be written (no space, no directory, ...); nothing is
        left behind then.
    """
    arr = value if type(value) is np.ndarray else np.asarray(value)
    if arr.dtype == object:
        raise ShmError("string tensors do not go through shared memory")
    try:
        dtype = dtypes.as_dtype(arr.dtype).as_datatype_enum
    except (TypeError, ValueError) as e:
        raise ShmError(str(e)) from None
    arr = np.ascontiguousarray(arr)
    nbytes = arr.nbytes
    opts = outbox.options if outbox is not None else _DEFAULT_OPTIONS
    path = _new_path(opts.directory)
    fd, old_size = outbox.reclaim(path, nbytes) if outbox is not None else (None, 0)
    if fd is None:
        fd = _create(path, nbytes)
    try:
        view = memoryview(arr.reshape(-1).view(np.uint8))
        offset = 0
        while offset < nbytes:
            n = os.write(fd, view[offset : offset + opts.io_max_bytes])
            if n <= 0:
                raise OSError(errno.EIO, "short write")
            offset += n
        if old_size > nbytes:
            os.ftruncate(fd, nbytes)
    except BaseException as e:
        os.close(fd)
        _unlink(path)
        if isinstance(e, OSError):
            raise ShmError(f"cannot write {path}: {e}") from None
        raise
    os.close(fd)
    msg = transport_pb2.ShmTensor(name=name, path=path, dtype=dtype, nbytes=nbytes,
                                  recycle=outbox is not None
                                  and nbytes <= outbox.options.recycle_max_bytes)
    for d in arr.shape:
        msg.tensor_shape.dim.add(size=d)
    if outbox is not None:
        outbox.add(path, msg, key)
    return msg


def read(msg: Any, writable: bool = False, unlink: bool = True,
         outbox: Outbox | None = None) -> np.ndarray:
    """Reads the tensor of `ShmTensor` `msg` into a new array, then removes the file.

    The file is unlinked, or given back to its writer as `<path>.free` when
    `msg.recycle`.

    Args:
      msg: the `ShmTensor`.
      writable: return a writable array (else read-only, the runtime's "owned" marker).
      unlink: remove (or give back) the file after a successful read.
      outbox: the reader's `Outbox`: its options (directory, I/O sizes) apply and its
        `FdCloser` closes a removed file (default: the module's constants, closed at once).

    Raises:
      ShmError: if the file is missing, is not ours, or does not match the announced dtype,
        shape and size. The file is left in place then (its writer still owns it).
    """
    opts = outbox.options if outbox is not None else _DEFAULT_OPTIONS
    path = _checked_path(msg.path, opts.directory)
    shape = tuple(d.size for d in msg.tensor_shape.dim)
    try:
        if msg.dtype == _STRING:
            raise ValueError("string tensors do not go through shared memory")
        npt = np.dtype(dtypes.as_dtype(msg.dtype).as_numpy_dtype)
    except (TypeError, ValueError, KeyError) as e:
        raise ShmError(f"{path}: bad dtype: {e}") from None
    nbytes = int(np.prod(shape, dtype=np.int64)) * npt.itemsize
    if nbytes != msg.nbytes or any(d < 0 for d in shape):
        raise ShmError(f"{path}: {msg.nbytes} bytes do not match shape {shape} of {npt}")
    try:
        fd = os.open(path, os.O_RDONLY | _O_CLOEXEC | _O_NOFOLLOW)
    except OSError as e:
        raise ShmError(f"cannot open {path}: {e}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or (
                info.st_mode & 0o077):
            raise ShmError(f"{path} is not a private file of this user")
        if info.st_size != nbytes:
            raise ShmError(f"{path} holds {info.st_size} bytes, expected {nbytes}")
        buf = np.empty(nbytes, dtype=np.uint8)
        if nbytes >= opts.mmap_read_min_bytes:
            _copy_mapped(fd, buf)
        else:
            view = memoryview(buf)
            offset = 0
            while offset < nbytes:
                n = os.readv(fd, [view[offset : offset + opts.io_max_bytes]])
                if n <= 0:
                    raise ShmError(f"{path} ended after {offset} of {nbytes} bytes")
                offset += n
    except BaseException as e:
        os.close(fd)
        if isinstance(e, OSError):
            raise ShmError(f"cannot read {path}: {e}") from None
        raise
    if unlink and msg.recycle and _rename(path, path + FREE_SUFFIX):
        os.close(fd)  # NOTE: back to its writer, pages and all
    elif unlink:
        # NOTE: removing the name is cheap while the file is open; freeing its pages (the
        # last close, ~3 ms per 16 MiB here) happens on a background thread.
        _unlink(path)
        if outbox is not None:
            outbox.close_later(fd)
        else:
            os.close(fd)
    else:
        os.close(fd)
    arr = buf.view(npt).reshape(shape)
    if not writable:
        arr.flags.writeable = False
    return arr


# ------------------------------------------------------------------ lifetime
@dataclasses.dataclass(frozen=True)
class OutboxOptions:
    """The shared-memory settings of a `ProcessRuntime` and its outboxes: where files go,
    how they are read and written, how long an `Outbox` keeps them and which it recycles
    (defaults: this module's constants).

    Attributes:
      ttl_s: lifetime of an unconsumed file, seconds.
      recycle_ttl_s: how long a file given back stays reusable, seconds.
      pool_files: the most given-back files kept.
      recycle_max_bytes: larger tensors are not recycled.
      directory: where files are created and the only place files are read from
        (default `SHM_DIR`).
      mmap_read_min_bytes: from this size on, `read` maps the file and copies with NumPy.
      io_max_bytes: the most bytes one read()/write() call moves.
    """

    ttl_s: float = TTL_S
    recycle_ttl_s: float = RECYCLE_TTL_S
    pool_files: int = POOL_FILES
    recycle_max_bytes: int = RECYCLE_MAX_BYTES
    directory: str = SHM_DIR
    mmap_read_min_bytes: int = MMAP_READ_MIN_BYTES
    io_max_bytes: int = IO_MAX_BYTES


_DEFAULT_OPTIONS = OutboxOptions()


class Outbox:
    """Files an owner wrote that a receiver may not have consumed yet, or gave back.

    The owner is a worker, or this process's clients. A file is unlinked `ttl_s` seconds
    after it was written if still there (by a daemon thread), and by `close`. A file given
    back (`<path>.free`) is reused by the next `write` through this outbox (`reclaim`);
    at most `options.pool_files` of them are kept, each for `options.recycle_ttl_s`.

    Args:
      ttl_s: lifetime of an unconsumed file (default `options.ttl_s`, read at each `add`).
      options: `OutboxOptions` (default: the module's constants).
    """

    def __init__(self, ttl_s: float | None = None, options: OutboxOptions | None = None):
        self.options = options or OutboxOptions()
        self.ttl_s = ttl_s
        self._files: collections.OrderedDict[str, tuple[float, Any, Any]] = (
            collections.OrderedDict())
        self._by_key: dict[Any, str] = {}
        # NOTE: path -> (deadline to reuse it, size): files handed out with `recycle`.
        self._lent: collections.OrderedDict[str, tuple[float, int]] = (
            collections.OrderedDict())
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closed = False
        self._sweeper = Sweeper(self.options.directory)
        self._closer = FdCloser()

    def close_later(self, fd: int) -> None:
        """Closes `fd` (a removed file's) on this outbox's closer thread."""
        self._closer.close_later(fd)

    def add(self, path: str, msg: Any, key: Any = None) -> None:
        """Records a file written for a receiver (`key` lets `take` find it)."""
        opts = self.options
        ttl = opts.ttl_s if self.ttl_s is None else self.ttl_s
        now = time.monotonic()
        doomed = []
        with self._cond:
            if self._closed:
                _unlink(path)
                raise ShmError("the sender is shutting down")
            self._files[path] = (now + ttl, msg, key)
            if key is not None:
                self._by_key[key] = path
            if msg.recycle:
                self._lent[path] = (now + min(opts.recycle_ttl_s, ttl), msg.nbytes)
                while len(self._lent) > opts.pool_files:
                    doomed.append(self._lent.popitem(last=False)[0] + FREE_SUFFIX)
            if self._thread is None:
                self._thread = threading.Thread(target=self._reap_loop, daemon=True,
                                                name="tw-shm-reaper")
                self._thread.start()
            self._cond.notify()
        for p in doomed:
            _unlink(p)
        self._sweeper.maybe_sweep()

    def reclaim(self, path: str, nbytes: int) -> tuple[int | None, int]:
        """Moves a file given back by its reader to `path` and opens it for writing.

        Returns:
          (fd, its current size), or (None, 0) when no file was given back (or none is
          close to `nbytes`).
        """
        with self._cond:
            if self._closed or not self._lent:
                return None, 0
            lent = list(self._lent.items())
            # NOTE: same size first (the common case: one tensor sent again and again);
            # else one within 2x (growing a file allocates, shrinking one frees pages).
            candidates = [p for p, (_, n) in reversed(lent) if n == nbytes] + [
                p for p, (_, n) in reversed(lent)
                if n != nbytes and nbytes // 2 <= n <= 2 * nbytes]
            for old in candidates[:self.options.pool_files]:
                if not _rename(old + FREE_SUFFIX, path):
                    continue
                del self._lent[old]
                entry = self._files.pop(old, None)
                if entry is not None and entry[2] is not None:
                    if self._by_key.get(entry[2]) == old:
                        del self._by_key[entry[2]]
                break
            else:
                return None, 0
        try:
            fd = os.open(path, os.O_WRONLY | _O_CLOEXEC | _O_NOFOLLOW)
            info = os.fstat(fd)
        except OSError:
            _unlink(path)
            return None, 0
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
            os.close(fd)
            _unlink(path)
            return None, 0
        return fd, info.st_size

    def take(self, key: Any) -> Any:
        """Forgets and returns the `ShmTensor` registered under `key`, or None.

        The caller now owns the file (the returned message does not ask for recycling).
        """
        with self._cond:
            path = self._by_key.pop(key, None)
            if path is None:
                return None
            entry = self._files.pop(path, None)
            self._lent.pop(path, None)
        if entry is None:
            return None
        msg = transport_pb2.ShmTensor()
        msg.CopyFrom(entry[1])
        msg.recycle = False
        return msg

    def discard(self, path: str) -> None:
        """Forgets and unlinks a file once its reader is done.

        A file the reader gave back stays available to `reclaim`.
        """
        with self._cond:
            entry = self._files.pop(path, None)
            if entry is not None and entry[2] is not None:
                self._by_key.pop(entry[2], None)
            lent = self._lent.pop(path, None)
            if lent is not None and not self._closed:
                # NOTE: the reader is done now: the file is reusable for RECYCLE_TTL_S.
                self._lent[path] = (time.monotonic() + self.options.recycle_ttl_s, lent[1])
                self._cond.notify()
        _unlink(path)
        if lent is None:
            _unlink(path + FREE_SUFFIX)

    def __len__(self) -> int:
        with self._cond:
            return len(self._files)

    def reap(self, now: float | None = None) -> int:
        """Unlinks expired files; returns how many unconsumed ones were due.

        Expired: files whose TTL passed, and given-back files not reused in time.
        """
        now = time.monotonic() if now is None else now
        doomed = []
        with self._cond:
            while self._files:
                path, (deadline, _, key) = next(iter(self._files.items()))
                if deadline > now:
                    break
                self._files.popitem(last=False)
                if key is not None and self._by_key.get(key) == path:
                    del self._by_key[key]
                self._lent.pop(path, None)
                doomed += [path, path + FREE_SUFFIX]
            while self._lent:
                path, (deadline, _) = next(iter(self._lent.items()))
                if deadline > now:
                    break
                self._lent.popitem(last=False)
                doomed.append(path + FREE_SUFFIX)
        for path in doomed:
            _unlink(path)
        return sum(1 for p in doomed if not p.endswith(FREE_SUFFIX))

    def _next_deadline(self) -> float | None:
        deadlines = [next(iter(d.values()))[0] for d in (self._files, self._lent) if d]
        return min(deadlines) if deadlines else None

    def _reap_loop(self) -> None:
        while True:
            with self._cond:
                if self._closed:
                    return
                deadline = self._next_deadline()
                wait = None if deadline is None else deadline - time.monotonic()
                if wait is None or wait > 0:
                    self._cond.wait(wait)
                    continue
            self.reap()

    @property
    def closed(self) -> bool:
        """True once `close` ran."""
        return self._closed

    def close(self) -> None:
        """Unlinks every recorded file and stops the reaper (new `add`s are refused)."""
        with self._cond:
            self._closed = True
            paths = list(self._files) + list(self._lent)
            self._files.clear()
            self._by_key.clear()
            self._lent.clear()
            self._cond.notify()
        for path in paths:
            _unlink(path)
            _unlink(path + FREE_SUFFIX)
        self._closer.stop()


# ------------------------------------------------------------------ per-peer state
class PeerState:
    """Whether shared memory is worth offering to one peer.

    Off for `retry_after_s` seconds (default `RETRY_AFTER_S`) after the peer could not read
    our files, or we could not read its files.
    """

    def __init__(self, address: str, enabled: bool = True,
                 locality: HostLocality | None = None, retry_after_s: float = RETRY_AFTER_S,
                 directory: str = SHM_DIR):
        self.directory = directory
        self.retry_after_s = retry_after_s
        self.address = address
        self.enabled = enabled
        self._locality = locality or HostLocality()
        self._local: bool | None = None
        self._off_until = 0.0
        self._available = (0.0, False)  # (when checked, answer)

    def usable(self) -> bool:
        """True when tensors for this peer may go through shared memory now (whether
        /dev/shm is usable is checked at most once a second: it is asked every step)."""
        now = time.monotonic()
        if not self.enabled or (self._off_until and now < self._off_until):
            return False
        if self._local is None:
            self._local = self._locality.is_local_address(self.address)
        if not self._local:
            return False
        checked, ok = self._available
        if now - checked >= AVAILABLE_TTL_S:
            ok = available(self.directory)
            self._available = (now, ok)
        return ok

    def failed(self, why: Any) -> None:
        """Stops offering shared memory to this peer for a while."""
        if not self._off_until or time.monotonic() >= self._off_until:
            log.warning("Shared-memory transfer with %s failed (%s); using gRPC streams for "
                        "%.0f s", self.address, why, self.retry_after_s)
        self._off_until = time.monotonic() + self.retry_after_s
