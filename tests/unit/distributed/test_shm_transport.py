"""Shared-memory hand-over of large tensors (tensorweave.distributed.transport.shm)."""

import errno
import os
import socket
import stat
import time

import numpy as np
import pytest

from tensorweave.distributed.transport import codec, shm, shm_files
from tensorweave.distributed.transport.host_locality import HostLocality
from tensorweave.framework import dtypes
from tensorweave.protos import transport_pb2

pytestmark = pytest.mark.skipif(not shm.available(), reason="/dev/shm is not writable here")


def _mine() -> list[str]:
    prefix = f"tw-{os.getpid()}-"
    return sorted(n for n in os.listdir(shm.SHM_DIR) if n.startswith(prefix))


@pytest.fixture(autouse=True)
def _no_leaks():
    before = set(_mine())
    yield
    assert set(_mine()) - before == set()


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int8, np.uint16,
                                   np.bool_, np.complex64, np.float16])
def test_roundtrip_dtypes(dtype):
    rng = np.random.default_rng(1)
    value = (rng.random((64, 1024)) * 100).astype(dtype)
    msg = shm.write("k", value)
    assert msg.name == "k"
    assert msg.nbytes == value.nbytes
    assert msg.dtype == dtypes.as_dtype(value.dtype).as_datatype_enum
    assert [d.size for d in msg.tensor_shape.dim] == [64, 1024]
    assert os.path.exists(msg.path)
    out = shm.read(msg)
    assert not os.path.exists(msg.path), "the reader unlinks the file"
    assert out.dtype == value.dtype and out.shape == value.shape
    np.testing.assert_array_equal(out, value)
    assert not out.flags.writeable


def test_read_writable_and_owned():
    value = np.arange(1 << 18, dtype=np.float32)
    out = shm.read(shm.write("k", value), writable=True)
    assert out.flags.writeable
    out[0] = 42.0
    assert value[0] == 0.0


def test_non_contiguous_and_scalar_shapes():
    value = np.arange(512 * 1024, dtype=np.int32).reshape(1024, 512)[:, ::2]
    np.testing.assert_array_equal(shm.read(shm.write("k", value)), value)
    empty_shape = np.zeros((0, 3), np.float32)
    np.testing.assert_array_equal(shm.read(shm.write("k", empty_shape)), empty_shape)


def _outbox(**options):
    return shm.Outbox(options=shm.OutboxOptions(**options))


def test_large_read_through_mapping(monkeypatch):
    box = _outbox(mmap_read_min_bytes=1 << 20)
    mapped = []
    real = shm._copy_mapped
    monkeypatch.setattr(shm, "_copy_mapped", lambda fd, buf: (mapped.append(buf.nbytes),
                                                               real(fd, buf)))
    try:
        value = np.random.default_rng(0).random(1 << 19)  # 4 MiB
        np.testing.assert_array_equal(shm.read(shm.write("k", value, box), outbox=box), value)
        assert mapped == [value.nbytes]
        small = np.arange(1 << 16, dtype=np.float64)  # 512 KiB: read()
        np.testing.assert_array_equal(shm.read(shm.write("k", small, box), outbox=box), small)
        assert mapped == [value.nbytes]
    finally:
        box.close()


def test_io_in_pieces(monkeypatch):
    """Reads and writes loop (Linux moves at most ~2 GiB per call)."""
    box = _outbox(io_max_bytes=4096 + 8)
    sizes = []
    real_write = shm.os.write
    monkeypatch.setattr(shm.os, "write", lambda fd, data: (sizes.append(len(data)),
                                                           real_write(fd, data))[1])
    try:
        value = np.random.default_rng(0).random(100_000)
        np.testing.assert_array_equal(shm.read(shm.write("k", value, box), outbox=box), value)
        assert max(sizes) == 4096 + 8 and sum(sizes) == value.nbytes
    finally:
        box.close()


def test_outbox_directory_is_where_files_go_and_come_from(tmp_path):
    box = _outbox(directory=str(tmp_path))
    try:
        msg = shm.write("k", np.arange(1 << 16, dtype=np.float32), box)
        assert os.path.dirname(msg.path) == str(tmp_path)
        with pytest.raises(shm.ShmError, match="not a tensorweave shared-memory file"):
            shm.read(msg)  # NOTE: the default directory is /dev/shm
        np.testing.assert_array_equal(shm.read(msg, outbox=box),
                                      np.arange(1 << 16, dtype=np.float32))
    finally:
        box.close()
    assert os.listdir(tmp_path) == []  # NOTE: the given-back file went with the outbox


def test_fd_closer_closes_later_then_at_once_after_stop(tmp_path):
    closer = shm_files.FdCloser()
    first = os.open(tmp_path / "a", os.O_CREAT | os.O_WRONLY, 0o600)
    closer.close_later(first)
    closer.stop()  # NOTE: closes what is queued before its thread ends
    with pytest.raises(OSError):
        os.fstat(first)
    second = os.open(tmp_path / "b", os.O_CREAT | os.O_WRONLY, 0o600)
    closer.close_later(second)
    with pytest.raises(OSError):
        os.fstat(second)


def test_file_is_private():
    msg = shm.write("k", np.ones(1 << 16, np.float32))
    try:
        info = os.stat(msg.path)
        assert stat.S_IMODE(info.st_mode) == 0o600
        assert info.st_uid == os.getuid()
        base = os.path.basename(msg.path)
        assert os.path.dirname(msg.path) == shm.SHM_DIR
        assert base.startswith(f"tw-{os.getpid()}-") and len(base.rsplit("-", 1)[1]) == 32
    finally:
        shm.unlink(msg)


def test_names_are_unique():
    msgs = [shm.write("k", np.ones(8, np.float32)) for _ in range(20)]
    assert len({m.path for m in msgs}) == 20
    for m in msgs:
        shm.unlink(m)


@pytest.mark.parametrize("path", [
    "/etc/passwd", "/dev/shm/other-file", "/dev/shm/tw-1-xyz", "/dev/shm/../shm/tw-1-" + "0" * 32,
    "/tmp/tw-1-" + "0" * 32, "relative/tw-1-" + "0" * 32,
])
def test_read_refuses_foreign_paths(path):
    msg = transport_pb2.ShmTensor(name="k", path=path, dtype=dtypes.float32.as_datatype_enum,
                                  nbytes=4)
    msg.tensor_shape.dim.add(size=1)
    with pytest.raises(shm.ShmError, match="not a tensorweave"):
        shm.read(msg)


def test_read_refuses_symlinks(tmp_path):
    target = tmp_path / "secret"
    target.write_bytes(b"\0" * 4)
    link = os.path.join(shm.SHM_DIR, f"tw-{os.getpid()}-" + "ab" * 16)
    os.symlink(target, link)
    try:
        msg = transport_pb2.ShmTensor(name="k", path=link,
                                      dtype=dtypes.float32.as_datatype_enum, nbytes=4)
        msg.tensor_shape.dim.add(size=1)
        with pytest.raises(shm.ShmError):
            shm.read(msg)
        assert target.exists()
    finally:
        os.unlink(link)


def test_read_refuses_group_readable_files():
    msg = shm.write("k", np.ones(16, np.float32))
    os.chmod(msg.path, 0o644)
    with pytest.raises(shm.ShmError, match="private"):
        shm.read(msg)
    assert os.path.exists(msg.path), "a refused file is left to its writer"
    shm.unlink(msg)


def test_read_checks_size_and_metadata():
    msg = shm.write("k", np.ones(16, np.float32))
    bad = transport_pb2.ShmTensor()
    bad.CopyFrom(msg)
    bad.nbytes = 32
    with pytest.raises(shm.ShmError, match="do not match"):
        shm.read(bad)
    bad.CopyFrom(msg)
    bad.tensor_shape.dim[0].size = 8
    bad.nbytes = 32
    with pytest.raises(shm.ShmError, match="holds 64 bytes"):
        shm.read(bad)
    bad.CopyFrom(msg)
    bad.dtype = dtypes.string.as_datatype_enum
    with pytest.raises(shm.ShmError, match="dtype"):
        shm.read(bad)
    shm.read(msg)


def test_missing_file():
    msg = shm.write("k", np.ones(16, np.float32))
    shm.unlink(msg)
    with pytest.raises(shm.ShmError, match="cannot open"):
        shm.read(msg)


def test_write_failure_leaves_nothing(monkeypatch):
    def no_space(fd, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(shm.os, "write", no_space)
    with pytest.raises(shm.ShmError, match="No space"):
        shm.write("k", np.ones(1 << 16, np.float32))


def test_write_refuses_when_space_is_short(monkeypatch):
    class Tiny:
        f_bavail = 10
        f_frsize = 4096

    monkeypatch.setattr(shm.os, "statvfs", lambda path: Tiny())
    with pytest.raises(shm.ShmError, match="not enough space"):
        shm.write("k", np.ones(1 << 16, np.float32))


def test_write_refuses_strings():
    with pytest.raises(shm.ShmError):
        shm.write("k", np.array([b"a", b"b"], dtype=object))


def test_available(tmp_path):
    assert shm.available()
    assert not shm.available(str(tmp_path / "missing"))
    f = tmp_path / "file"
    f.write_text("x")
    assert not shm.available(str(f))
    assert shm.available(str(tmp_path))


def test_fits():
    assert shm.fits(np.zeros(shm.MIN_BYTES, np.uint8))
    assert not shm.fits(np.zeros(shm.MIN_BYTES - 1, np.uint8))
    assert not shm.fits(np.array([b"x"] * shm.MIN_BYTES, dtype=object))
    assert not shm.fits(3.0)


def test_answers_over_the_step_call_socket_inline_more():
    from tensorweave.distributed.transport import local_rpc
    from tensorweave.distributed.transport.grpc_server import _shm_min_bytes

    assert _shm_min_bytes(local_rpc._Context(-1)) == shm.MIN_BYTES_STEP_CALL
    assert _shm_min_bytes(object()) == shm.MIN_BYTES  # a gRPC context
    weight = np.zeros((256, 256), np.float32)  # 256 KiB
    assert shm.fits(weight) and not shm.fits(weight, shm.MIN_BYTES_STEP_CALL)
    assert shm.fits(np.zeros(shm.MIN_BYTES_STEP_CALL, np.uint8), shm.MIN_BYTES_STEP_CALL)


@pytest.mark.parametrize("address, local", [
    ("localhost:2222", True), ("127.0.0.1:2222", True), ("127.3.4.5:1", True),
    ("[::1]:2222", True), ("::1", True), ("ipv6:[::1]:5", True), ("ipv4:127.0.0.1:5", True),
    ("dns:///localhost:5", True), ("unix:/tmp/sock", True), ("0.0.0.0:1", True),
    ("LOCALHOST:1", True),
    ("10.255.255.1:2222", False), ("192.0.2.7:1", False), ("[2001:db8::1]:1", False),
    ("no-such-host.invalid:2222", False),
])
def test_is_local_address(address, local):
    assert HostLocality().is_local_address(address) is local


def test_own_hostname_is_local():
    assert HostLocality().is_local_address(f"{socket.gethostname()}:2222")


def test_host_of():
    assert shm.host_of("localhost:1") == "localhost"
    assert shm.host_of("[::1]:1") == "::1"
    assert shm.host_of("dns:///example.com:443") == "example.com"
    assert shm.host_of("unix:/x") is None
    assert shm.host_of("host") == "host"


# ------------------------------------------------------------------ lifetime
def test_outbox_ttl_reaps_unread_files():
    box = shm.Outbox(ttl_s=0.2)
    try:
        msg = shm.write("k", np.ones(64, np.float32), box, key=(1, "k"))
        assert os.path.exists(msg.path) and len(box) == 1
        deadline = time.monotonic() + 10
        while os.path.exists(msg.path) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not os.path.exists(msg.path), "the reaper thread unlinks expired files"
        assert len(box) == 0 and box.take((1, "k")) is None
    finally:
        box.close()


def test_outbox_reap_is_explicit_too():
    box = shm.Outbox(ttl_s=100.0)
    try:
        msg = shm.write("k", np.ones(64, np.float32), box)
        assert box.reap() == 0 and os.path.exists(msg.path)
        assert box.reap(now=time.monotonic() + 101) == 1
        assert not os.path.exists(msg.path)
    finally:
        box.close()


def test_outbox_take_hands_over_the_file():
    box = shm.Outbox(ttl_s=100.0)
    try:
        value = np.arange(64, dtype=np.float32)
        shm.write("k", value, box, key=(7, "k"))
        msg = box.take((7, "k"))
        assert msg is not None and len(box) == 0 and box.take((7, "k")) is None
        np.testing.assert_array_equal(shm.read(msg), value)
    finally:
        box.close()


def test_outbox_close_unlinks_everything_and_refuses_more():
    box = shm.Outbox(ttl_s=100.0)
    paths = [shm.write("k", np.ones(64, np.float32), box).path for _ in range(3)]
    box.close()
    assert not any(os.path.exists(p) for p in paths)
    with pytest.raises(shm.ShmError):
        shm.write("k", np.ones(64, np.float32), box)


def test_outbox_discard_after_consumption():
    box = shm.Outbox(ttl_s=100.0)
    try:
        msg = shm.write("k", np.ones(64, np.float32), box)
        shm.read(msg)
        box.discard(msg.path)  # already gone: no error
        assert len(box) == 0
    finally:
        box.close()


def test_sweep_stale_removes_files_of_dead_processes():
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    dead = os.path.join(shm.SHM_DIR, f"tw-{pid}-" + "cd" * 16)
    live = os.path.join(shm.SHM_DIR, f"tw-{os.getpid()}-" + "ef" * 16)
    for p in (dead, live):
        fd = os.open(p, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        os.close(fd)
        old = time.time() - 3600
        os.utime(p, (old, old))
    try:
        assert shm.sweep_stale(max_age_s=60.0) >= 1
        assert not os.path.exists(dead)
        assert os.path.exists(live)
    finally:
        for p in (dead, live):
            shm.unlink(p)


def test_peer_state_backs_off_after_failure(monkeypatch):
    peer = shm.PeerState("localhost:1")
    assert peer.usable()
    peer.failed("test")
    assert not peer.usable()
    retrying = shm.PeerState("localhost:1", retry_after_s=0.0)
    retrying.failed("test")
    assert retrying.usable()
    assert not shm.PeerState("localhost:1", enabled=False).usable()
    assert not shm.PeerState("192.0.2.7:1").usable()


# ------------------------------------------------------------------ codec
def test_assemble_writable_has_no_extra_copy():
    value = np.random.default_rng(0).random(300_000).astype(np.float32)
    msgs = list(codec.stream_messages(1, "k", value))
    _, ro = codec.assemble(msgs)
    assert not ro.flags.writeable
    _, rw = codec.assemble(msgs, writable=True)
    assert rw.flags.writeable and rw.base is not None and rw.base.flags.owndata
    np.testing.assert_array_equal(rw, value)


# ------------------------------------------------------------------ recycling
def _free(path):
    return path + shm.FREE_SUFFIX


def test_recycled_file_is_reused_under_a_new_name():
    box = shm.Outbox(ttl_s=100.0)
    try:
        first = shm.write("k", np.arange(1 << 16, dtype=np.float32), box)
        assert first.recycle
        np.testing.assert_array_equal(shm.read(first), np.arange(1 << 16))
        assert not os.path.exists(first.path) and os.path.exists(_free(first.path))
        value = np.arange(1 << 16, dtype=np.float32)[::-1].copy()
        second = shm.write("k", value, box)
        assert second.path != first.path
        assert not os.path.exists(_free(first.path)), "the given-back file was reused"
        np.testing.assert_array_equal(shm.read(second), value)
        assert len(box) == 1  # the first file's entry went with its reuse
    finally:
        box.close()
    assert not os.path.exists(_free(second.path))


@pytest.mark.parametrize("before, after", [(1 << 18, 1 << 17), (1 << 17, 1 << 18)])
def test_recycled_file_changes_size(before, after):
    box = shm.Outbox(ttl_s=100.0)
    try:
        shm.read(shm.write("k", np.ones(before, np.uint8), box))
        value = np.random.default_rng(0).integers(0, 255, after, dtype=np.uint8)
        msg = shm.write("k", value, box)
        assert os.path.getsize(msg.path) == after
        np.testing.assert_array_equal(shm.read(msg), value)
    finally:
        box.close()


def test_given_back_files_expire():
    box = shm.Outbox(options=shm.OutboxOptions(ttl_s=100.0, recycle_ttl_s=0.1))
    try:
        msg = shm.write("k", np.ones(64, np.float32), box)
        shm.read(msg)
        assert os.path.exists(_free(msg.path))
        box.discard(msg.path)  # the reader is done: reusable for RECYCLE_TTL_S from now
        assert _wait_gone(_free(msg.path))
        assert box.reclaim(shm._new_path(), 256) == (None, 0)
    finally:
        box.close()


def test_pool_is_bounded():
    box = shm.Outbox(options=shm.OutboxOptions(ttl_s=100.0, pool_files=2))
    try:
        msgs = []
        for i in range(4):  # NOTE: each 4x larger: none is reused for the next
            msgs.append(shm.write("k", np.ones(64 * 4**i, np.float32), box))
            shm.read(msgs[-1])
        kept = [os.path.exists(_free(m.path)) for m in msgs]
        assert kept == [False, False, True, True]
    finally:
        box.close()
    assert not any(os.path.exists(_free(m.path)) for m in msgs)


def test_discard_of_an_untracked_file_removes_what_was_given_back():
    box = shm.Outbox(ttl_s=100.0)
    msg = shm.write("k", np.ones(64, np.float32), box)
    box.close()  # forgets it (and unlinks it)
    fd = os.open(_free(msg.path), os.O_CREAT | os.O_WRONLY, 0o600)
    os.close(fd)
    box.discard(msg.path)
    assert not os.path.exists(_free(msg.path))


def test_take_hands_over_without_recycling():
    box = shm.Outbox(ttl_s=100.0)
    try:
        shm.write("k", np.ones(64, np.float32), box, key=(1, "k"))
        msg = box.take((1, "k"))
        assert not msg.recycle
        shm.read(msg)
        assert not os.path.exists(msg.path) and not os.path.exists(_free(msg.path))
    finally:
        box.close()


def test_reader_without_recycling_unlinks():
    msg = shm.write("k", np.ones(64, np.float32))
    assert not msg.recycle
    shm.read(msg)
    assert not os.path.exists(msg.path) and not os.path.exists(_free(msg.path))


def test_sweep_removes_given_back_files_of_dead_processes_at_once():
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    free = os.path.join(shm.SHM_DIR, f"tw-{pid}-" + "12" * 16 + shm.FREE_SUFFIX)
    pending = os.path.join(shm.SHM_DIR, f"tw-{pid}-" + "34" * 16)
    for p in (free, pending):
        os.close(os.open(p, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    try:
        shm.sweep_stale()
        assert not os.path.exists(free)
        assert os.path.exists(pending), "a fresh unconsumed file may still be read"
    finally:
        shm.unlink(free)
        shm.unlink(pending)


def _wait_gone(path, timeout_s=10.0):
    deadline = time.monotonic() + timeout_s
    while os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.02)
    return not os.path.exists(path)


def test_large_tensors_are_not_recycled():
    box = shm.Outbox(options=shm.OutboxOptions(ttl_s=100.0, recycle_max_bytes=1024))
    try:
        msg = shm.write("k", np.ones(1024, np.float32), box)
        assert not msg.recycle
        shm.read(msg)
        assert not os.path.exists(msg.path) and not os.path.exists(_free(msg.path))
    finally:
        box.close()


def test_worker_serves_its_own_unread_file():
    """A receiver that could not read a file pulls the value as a stream: the worker's
    stash finds it by (step_id, key) in its outbox and reads it itself."""
    from tensorweave import errors
    from tensorweave.distributed.transport.stash import Stash

    outbox = shm.Outbox()
    stash = Stash(outbox, "/job:ps/replica:0/task:0")
    try:
        value = np.arange(1 << 16, dtype=np.float32)
        msg = shm.write("k", value, outbox, key=(5, "k"))
        out = stash.take(5, "k")
        np.testing.assert_array_equal(out, value)
        assert not out.flags.writeable
        assert not os.path.exists(msg.path) and not os.path.exists(_free(msg.path))
        gone = shm.write("g", value, outbox, key=(5, "g"))
        shm.unlink(gone)
        with pytest.raises(errors.DataLossError, match="lost"):
            stash.take(5, "g")
        assert stash.take(5, "g") is None
    finally:
        outbox.close()
