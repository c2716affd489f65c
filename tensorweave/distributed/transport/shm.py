"""Shared-memory hand-over of large tensors between processes of one host.

Why: through gRPC Python a tensor is copied several times on each side (numpy -> `bytes`
chunk -> C-core slices -> HTTP/2 frames over loopback TCP -> slices -> `bytes` -> numpy),
which caps loopback transfers at a few hundred MB/s on small machines. When both peers
run on the same host, the sender instead writes the tensor's buffer into a file under
`/dev/shm` (a tmpfs: RAM, no disk) with one `os.write` of the array's memory, and the
message carries only (path, dtype, shape, nbytes); the receiver reads the file into a
freshly allocated array (`readv` into a memoryview, one copy) and unlinks it. That is one
memcpy on each side and no Python-level copies.

When it is used (see `grpc_client`/`grpc_server`): the peer's address is on this host
(`is_local_address`: loopback names, `unix:` targets, this host's own names and IPs),
`/dev/shm` is a writable directory (`available`), the tensor is not a string tensor and
has at least `MIN_BYTES` bytes, and the session did not set
`ConfigProto.tensorweave.disable_shared_memory` (servers: their default session config).
Every failure falls back to the gRPC stream path: a failed write (full or missing
`/dev/shm`, not enough free space) sends the tensor over gRPC; a receiver that cannot
read a file pulls the value over gRPC instead (the sender keeps the file registered under
its key and streams it from there), or, for feeds, the worker rejects them before running
anything and the client resends the step without shared memory. A peer whose files could
not be read is not offered shared memory again for `RETRY_AFTER_S` seconds (e.g. two
containers sharing the network but not `/dev/shm`).

Lifetime: readers unlink a file right after reading it. Writers record every file they
created in an `Outbox` and unlink the ones still there after `TTL_S` seconds (a receiver
that died or never asked), when their server stops, and at interpreter exit; a client
unlinks the feed files of a `RunGraph` as soon as the call returns. Files of processes
that died without cleaning up are swept (when older than `STALE_AGE_S`) the next time a
process of the same user starts writing.

Security: files are created with `O_CREAT | O_EXCL | O_NOFOLLOW` and mode 0600 under an
unguessable name `tw-<pid>-<128 random bits>`; a reader only opens names of that form
directly under `SHM_DIR`, without following links, and only regular files owned by its
own uid with no group/other permissions and exactly the announced size. So only processes
of the same user exchange tensors this way; a remote peer naming a path gets nothing.
"""

from __future__ import annotations

import atexit
import collections
import errno
import ipaddress
import logging
import mmap
import os
import re
import secrets
import socket
import stat
import threading
import time
import weakref
from typing import Any

import numpy as np

from tensorweave.framework import dtypes
from tensorweave.protos import transport_pb2

log = logging.getLogger("tensorweave.transport")

SHM_DIR = "/dev/shm"
# NOTE: below this, a tensor is cheaper inline in the message (file create/unlink and an
# extra round of syscalls cost ~0.1 ms); measured on a 2-core VM, see benchmarks/cluster.py.
MIN_BYTES = 256 << 10
TTL_S = 60.0
RETRY_AFTER_S = 300.0
STALE_AGE_S = 600.0
# NOTE: above this, `read` maps the file and copies with NumPy instead of read() (faster
# for large buffers, see `_copy_mapped`).
MMAP_READ_MIN_BYTES = 32 << 20
# NOTE: Linux transfers at most 0x7ffff000 bytes per read/write call; stay well below.
IO_MAX_BYTES = 1 << 30

PREFIX = "tw-"
_NAME = re.compile(r"tw-(\d+)-[0-9a-f]{32}")
_STRING = dtypes.string.as_datatype_enum
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


class ShmError(Exception):
    """A shared-memory hand-over failed; the caller falls back to gRPC."""


# ------------------------------------------------------------------ where it applies
def available() -> bool:
    """True when `SHM_DIR` is a directory this process can create files in."""
    try:
        return os.path.isdir(SHM_DIR) and os.access(SHM_DIR, os.W_OK | os.X_OK)
    except (OSError, ValueError):
        return False


_LOOPBACK_HOSTS = {"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback",
                   "0.0.0.0", "::", "::1", ""}
_local_cache: dict[str, bool] = {}
_own: set[str] | None = None
_cache_lock = threading.Lock()


def host_of(address: str) -> str | None:
    """The host part of a gRPC target (`host:port`, `[v6]:port`, `dns:///host:port`,
    `ipv4:a.b.c.d:port`, `ipv6:[..]:port`); None for `unix:` targets."""
    a = address.strip()
    if a.startswith(("unix:", "unix-abstract:")):
        return None
    for scheme in ("dns:///", "dns:", "ipv4:", "ipv6:"):
        if a.startswith(scheme):
            a = a[len(scheme):]
            break
    if a.startswith("["):
        return a[1:a.find("]")] if "]" in a else a[1:]
    if a.count(":") == 1:
        a = a.rpartition(":")[0]
    return a.lower()


def _own_addresses() -> set[str]:
    global _own
    if _own is None:
        names = {socket.gethostname().lower()}
        try:
            names.add(socket.getfqdn().lower())
        except OSError:
            pass
        ips: set[str] = set()
        for n in list(names):
            try:
                ips.update(str(ai[4][0]) for ai in socket.getaddrinfo(n, None))
            except OSError:
                pass
        _own = names | ips
    return _own


def _is_local_host(host: str) -> bool:
    if host in _LOOPBACK_HOSTS or host in _own_addresses():
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        pass
    else:
        return ip.is_loopback or ip.is_unspecified
    # NOTE: a name: resolve it (once per process, gRPC resolves it anyway).
    try:
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return False
    return bool(infos) and all(
        ipaddress.ip_address(str(ai[4][0]).split("%")[0]).is_loopback
        or str(ai[4][0]) in _own_addresses()
        for ai in infos
    )


def is_local_address(address: str) -> bool:
    """True when the gRPC target `address` is served on this host."""
    host = host_of(address)
    if host is None:
        return True
    with _cache_lock:
        hit = _local_cache.get(host)
    if hit is None:
        hit = _is_local_host(host)
        with _cache_lock:
            _local_cache[host] = hit
    return hit


def fits(value: Any) -> bool:
    """True when `value` (an ndarray) should travel through shared memory if possible."""
    return (type(value) is np.ndarray and value.dtype != object
            and value.nbytes >= MIN_BYTES)


# ------------------------------------------------------------------ files
def _new_path() -> str:
    return os.path.join(SHM_DIR, f"{PREFIX}{os.getpid()}-{secrets.token_hex(16)}")


def write(name: str, value: Any, outbox: Outbox | None = None, key: Any = None) -> Any:
    """Writes `value` into a new file under `SHM_DIR`; returns its `ShmTensor`.

    The file is registered in `outbox` (under `key`, for `Outbox.take`) so that it is
    removed when nobody reads it.

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
    try:
        st = os.statvfs(SHM_DIR)
    except OSError as e:
        raise ShmError(f"{SHM_DIR}: {e}") from None
    # NOTE: keep some headroom: a full tmpfs fails other users of /dev/shm too.
    if st.f_bavail * st.f_frsize < nbytes + (nbytes >> 3) + (1 << 20):
        raise ShmError(f"not enough space in {SHM_DIR} for {nbytes} bytes")
    path = _new_path()
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY | _O_CLOEXEC | _O_NOFOLLOW,
                     0o600)
    except OSError as e:
        raise ShmError(f"cannot create {path}: {e}") from None
    try:
        view = memoryview(arr.reshape(-1).view(np.uint8))
        offset = 0
        while offset < nbytes:
            n = os.write(fd, view[offset : offset + IO_MAX_BYTES])
            if n <= 0:
                raise OSError(errno.EIO, "short write")
            offset += n
    except BaseException as e:
        os.close(fd)
        _unlink(path)
        if isinstance(e, OSError):
            raise ShmError(f"cannot write {path}: {e}") from None
        raise
    os.close(fd)
    msg = transport_pb2.ShmTensor(name=name, path=path, dtype=dtype, nbytes=nbytes)
    for d in arr.shape:
        msg.tensor_shape.dim.add(size=d)
    if outbox is not None:
        outbox.add(path, msg, key)
    return msg


def _checked_path(path: str) -> str:
    directory, base = os.path.split(path)
    if directory != SHM_DIR or not _NAME.fullmatch(base):
        raise ShmError(f"not a tensorweave shared-memory file: {path!r}")
    return path


def read(msg: Any, writable: bool = False, unlink: bool = True) -> np.ndarray:
    """Reads the tensor of `ShmTensor` `msg` into a new array, then unlinks the file.

    Args:
      msg: the `ShmTensor`.
      writable: return a writable array (else read-only, the runtime's "owned" marker).
      unlink: remove the file after a successful read.

    Raises:
      ShmError: if the file is missing, is not ours, or does not match the announced dtype,
        shape and size. The file is left in place then (its writer still owns it).
    """
    path = _checked_path(msg.path)
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
        if nbytes >= MMAP_READ_MIN_BYTES:
            _copy_mapped(fd, buf)
        else:
            view = memoryview(buf)
            offset = 0
            while offset < nbytes:
                n = os.readv(fd, [view[offset : offset + IO_MAX_BYTES]])
                if n <= 0:
                    raise ShmError(f"{path} ended after {offset} of {nbytes} bytes")
                offset += n
    except OSError as e:
        raise ShmError(f"cannot read {path}: {e}") from None
    finally:
        os.close(fd)
    if unlink:
        _unlink(path)
    arr = buf.view(npt).reshape(shape)
    if not writable:
        arr.flags.writeable = False
    return arr


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


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def unlink(msg_or_path: Any) -> None:
    """Removes a file written by `write` (no error when it is gone)."""
    _unlink(msg_or_path if isinstance(msg_or_path, str) else msg_or_path.path)


# ------------------------------------------------------------------ lifetime
_outboxes: weakref.WeakSet = weakref.WeakSet()
_swept = False


class Outbox:
    """Files written by one owner (a worker, or this process's clients) that a receiver
    may not have consumed yet: unlinked `ttl_s` seconds after they were written, by a
    daemon thread, and by `close`.

    Args:
      ttl_s: lifetime of an unconsumed file (default `TTL_S`, read at each `add`).
    """

    def __init__(self, ttl_s: float | None = None):
        self.ttl_s = ttl_s
        self._files: collections.OrderedDict[str, tuple[float, Any, Any]] = (
            collections.OrderedDict())
        self._by_key: dict[Any, str] = {}
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closed = False
        _outboxes.add(self)

    def add(self, path: str, msg: Any, key: Any = None) -> None:
        """Records a file written for a receiver (`key` lets `take` find it)."""
        ttl = TTL_S if self.ttl_s is None else self.ttl_s
        with self._cond:
            if self._closed:
                _unlink(path)
                raise ShmError("the sender is shutting down")
            self._files[path] = (time.monotonic() + ttl, msg, key)
            if key is not None:
                self._by_key[key] = path
            if self._thread is None:
                _sweep_stale_once()
                self._thread = threading.Thread(target=self._reap_loop, daemon=True,
                                                name="tw-shm-reaper")
                self._thread.start()
            self._cond.notify()

    def take(self, key: Any) -> Any:
        """Forgets and returns the `ShmTensor` registered under `key` (the caller now owns
        the file), or None."""
        with self._cond:
            path = self._by_key.pop(key, None)
            if path is None:
                return None
            entry = self._files.pop(path, None)
        return entry[1] if entry is not None else None

    def discard(self, path: str) -> None:
        """Forgets and unlinks a file."""
        with self._cond:
            entry = self._files.pop(path, None)
            if entry is not None and entry[2] is not None:
                self._by_key.pop(entry[2], None)
        _unlink(path)

    def __len__(self) -> int:
        with self._cond:
            return len(self._files)

    def reap(self, now: float | None = None) -> int:
        """Unlinks the files whose TTL passed; returns how many."""
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
                doomed.append(path)
        for path in doomed:
            _unlink(path)
        return len(doomed)

    def _reap_loop(self) -> None:
        while True:
            with self._cond:
                if self._closed:
                    return
                if self._files:
                    wait = next(iter(self._files.values()))[0] - time.monotonic()
                else:
                    wait = None
                if wait is None or wait > 0:
                    self._cond.wait(wait)
                    continue
            self.reap()

    def close(self) -> None:
        """Unlinks every recorded file and stops the reaper (new `add`s are refused)."""
        with self._cond:
            self._closed = True
            paths = list(self._files)
            self._files.clear()
            self._by_key.clear()
            self._cond.notify()
        for path in paths:
            _unlink(path)


def _close_all() -> None:
    for box in list(_outboxes):
        box.close()


atexit.register(_close_all)


def _sweep_stale_once() -> None:
    global _swept
    if _swept:
        return
    _swept = True
    try:
        sweep_stale()
    except OSError:
        pass


def sweep_stale(max_age_s: float | None = None) -> int:
    """Unlinks `tw-<pid>-*` files of this user whose process is gone and that are older
    than `max_age_s` (default `STALE_AGE_S`); returns how many."""
    age = STALE_AGE_S if max_age_s is None else max_age_s
    if not available():
        return 0
    now = time.time()
    removed = 0
    uid = os.getuid()
    with os.scandir(SHM_DIR) as it:
        for entry in it:
            m = _NAME.fullmatch(entry.name)
            if m is None:
                continue
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if info.st_uid != uid or now - info.st_mtime < age or _alive(int(m.group(1))):
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


# ------------------------------------------------------------------ per-peer state
class PeerState:
    """Whether shared memory is worth offering to one peer (off for `RETRY_AFTER_S` after
    the peer could not read our files, or we could not read its files)."""

    def __init__(self, address: str, enabled: bool = True):
        self.address = address
        self.enabled = enabled
        self._local: bool | None = None
        self._off_until = 0.0

    def usable(self) -> bool:
        """True when tensors for this peer may go through shared memory now."""
        if not self.enabled or (self._off_until and time.monotonic() < self._off_until):
            return False
        if self._local is None:
            self._local = is_local_address(self.address)
        return self._local and available()

    def failed(self, why: Any) -> None:
        """Stops offering shared memory to this peer for a while."""
        if not self._off_until or time.monotonic() >= self._off_until:
            log.warning("Shared-memory transfer with %s failed (%s); using gRPC streams for "
                        "%.0f s", self.address, why, RETRY_AFTER_S)
        self._off_until = time.monotonic() + RETRY_AFTER_S


CLIENT_OUTBOX: Outbox | None = None
_client_lock = threading.Lock()


def client_outbox() -> Outbox:
    """The `Outbox` of files this process's clients write (feeds, pushed tensors)."""
    global CLIENT_OUTBOX
    with _client_lock:
        if CLIENT_OUTBOX is None:
            CLIENT_OUTBOX = Outbox()
        return CLIENT_OUTBOX
