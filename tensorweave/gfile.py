"""`tf.gfile`: TensorFlow 1.x's file API on local paths (follows `tf.compat.v1.gfile`, i.e.
`tensorflow/python/lib/io/file_io.py` and `platform/gfile.py`).

Paths are local file names (`str`, `bytes` or `os.PathLike`; a `file://` prefix is
accepted). Other file systems (`gs://`, `hdfs://`, `s3://`, ...) raise `UnimplementedError`
naming the scheme, as TensorFlow does for a scheme it has no file system for. OS errors
become TensorFlow's: missing paths `NotFoundError`, existing targets `AlreadyExistsError`,
permissions `PermissionDeniedError`, wrong kinds (a directory for a file)
`FailedPreconditionError`, anything else `UnknownError`.
"""

from __future__ import annotations

import dataclasses
import errno
import glob as _glob
import os
import shutil
from collections.abc import Iterator
from typing import Any

from tensorweave import errors

_ERRNO_ERRORS = {
    errno.ENOENT: errors.NotFoundError,
    errno.EEXIST: errors.AlreadyExistsError,
    errno.ENOTEMPTY: errors.FailedPreconditionError,
    errno.EACCES: errors.PermissionDeniedError,
    errno.EPERM: errors.PermissionDeniedError,
    errno.EROFS: errors.PermissionDeniedError,
    errno.EISDIR: errors.FailedPreconditionError,
    errno.ENOTDIR: errors.FailedPreconditionError,
}


def _path(name: Any) -> str:
    path = os.fsdecode(os.fspath(name))
    if path.startswith("file://"):
        return path[len("file://"):]
    scheme, sep, _ = path.partition("://")
    if sep and scheme.isidentifier():
        raise errors.UnimplementedError(
            None, None, f"File system scheme '{scheme}' not implemented (file: '{path}')")
    return path


def _op_error(e: OSError, path: str) -> errors.OpError:
    cls = _ERRNO_ERRORS.get(e.errno, errors.UnknownError)
    return cls(None, None, f"{path}; {e.strerror or e}")


@dataclasses.dataclass(frozen=True)
class FileStatistics:
    """What `Stat` returns: `length` (bytes), `mtime_nsec` (ns since the epoch) and
    `is_directory` (follows TensorFlow's `FileStatistics`)."""

    length: int
    mtime_nsec: int
    is_directory: bool


class GFile:
    """A file (follows `tf.gfile.GFile`): opened on first use; text in "r"/"w"/"a" modes,
    bytes in "rb"/"wb"/"ab".

    Args:
      name: the path.
      mode: "r", "w", "a", with "b" for bytes and "+" for update.

    Raises:
      NotFoundError: (on first read) if the file does not exist.
      PermissionDeniedError / FailedPreconditionError: as the OS reports.
    """

    def __init__(self, name: Any, mode: str = "r"):
        if not mode or mode[0] not in "rwa" or set(mode) - set("rwab+"):
            raise errors.InvalidArgumentError(None, None, f"Invalid mode {mode!r}")
        self._name = _path(name)
        self._mode = mode
        self._file: Any = None

    @property
    def name(self) -> str:
        """The path."""
        return self._name

    @property
    def mode(self) -> str:
        """The mode."""
        return self._mode

    def _f(self) -> Any:
        if self._file is None:
            try:
                self._file = open(self._name, self._mode)  # noqa: SIM115  (closed by close())
            except OSError as e:
                raise _op_error(e, self._name) from None
        return self._file

    def size(self) -> int:
        """The file's length in bytes."""
        if self._file is not None and not self._file.closed:
            self._file.flush()
        return Stat(self._name).length

    def read(self, n: int = -1) -> Any:
        """Reads `n` characters/bytes (all when `n` is -1)."""
        return self._f().read(n)

    def readline(self) -> Any:
        """The next line, with its newline ("" at the end)."""
        return self._f().readline()

    def readlines(self) -> list[Any]:
        """The remaining lines."""
        return self._f().readlines()

    def write(self, file_content: Any) -> None:
        """Writes `file_content` (str in text modes, bytes in binary modes)."""
        self._f().write(file_content)

    def seek(self, offset: int | None = None, whence: int = 0, position: int | None = None
             ) -> int:
        """Moves to `offset` (or the deprecated `position`) relative to `whence`."""
        if position is not None:
            offset = position
        return self._f().seek(offset or 0, whence)

    def tell(self) -> int:
        """The current position."""
        return self._f().tell()

    def seekable(self) -> bool:
        """True: local files seek."""
        return True

    def flush(self) -> None:
        """Flushes buffered writes."""
        if self._file is not None:
            self._file.flush()

    def close(self) -> None:
        """Closes the file (a second close does nothing)."""
        if self._file is not None:
            self._file.close()
            self._file = None

    def __iter__(self) -> Iterator[Any]:
        return self

    def __next__(self) -> Any:
        line = self.readline()
        if not line:
            raise StopIteration
        return line

    next = __next__

    def __enter__(self) -> GFile:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


FastGFile = GFile
Open = GFile


def Exists(filename: Any) -> bool:  # noqa: N802  (TensorFlow's names, here and below)
    """Whether the path exists."""
    return os.path.exists(_path(filename))


def IsDirectory(dirname: Any) -> bool:  # noqa: N802
    """Whether the path is a directory."""
    return os.path.isdir(_path(dirname))


def MakeDirs(dirname: Any) -> None:  # noqa: N802
    """Creates the directory and its missing parents (no error if it exists).

    Raises:
      FailedPreconditionError: if a file is in the way; PermissionDeniedError.
    """
    path = _path(dirname)
    try:
        os.makedirs(path, exist_ok=True)
    except FileExistsError:
        raise errors.FailedPreconditionError(None, None, f"{path} is not a directory") from None
    except OSError as e:
        raise _op_error(e, path) from None


def MkDir(dirname: Any) -> None:  # noqa: N802
    """Creates one directory (no error if it exists).

    Raises:
      NotFoundError: if its parent does not exist; FailedPreconditionError: a file is in
        the way.
    """
    path = _path(dirname)
    try:
        os.mkdir(path)
    except FileExistsError:
        if not os.path.isdir(path):
            raise errors.FailedPreconditionError(
                None, None, f"{path} is not a directory") from None
    except OSError as e:
        raise _op_error(e, path) from None


def ListDirectory(dirname: Any) -> list[str]:  # noqa: N802
    """The names in a directory (not "." or ".."), in no particular order.

    Raises:
      NotFoundError: if the directory does not exist.
    """
    path = _path(dirname)
    if not os.path.isdir(path):
        raise errors.NotFoundError(None, None, f"Could not find directory {path}")
    return os.listdir(path)


def Glob(filename: Any) -> list[str]:  # noqa: N802
    """The paths matching a pattern (`*`, `?`, `[...]`), or a list of patterns."""
    if isinstance(filename, (list, tuple)):
        return [m for pattern in filename for m in Glob(pattern)]
    return sorted(_glob.glob(_path(filename)))


def Walk(top: Any, in_order: bool = True) -> Iterator[tuple[str, list[str], list[str]]]:  # noqa: N802
    """(dirname, subdirectory names, file names) for `top` and every directory below it:
    parents first when `in_order`, else children first. Nothing when `top` is not a
    directory (follows `tf.gfile.Walk`)."""
    path = _path(top)
    if not os.path.isdir(path):
        return
    yield from os.walk(path, topdown=in_order)


def Remove(filename: Any) -> None:  # noqa: N802
    """Deletes a file.

    Raises:
      NotFoundError: if it does not exist.
    """
    path = _path(filename)
    try:
        os.remove(path)
    except OSError as e:
        raise _op_error(e, path) from None


def DeleteRecursively(dirname: Any) -> None:  # noqa: N802
    """Deletes a directory and everything in it (or a file).

    Raises:
      NotFoundError: if it does not exist.
    """
    path = _path(dirname)
    if not os.path.lexists(path):
        raise errors.NotFoundError(None, None, f"{path} not found")
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.remove(path)
    except OSError as e:
        raise _op_error(e, path) from None


def _check_target(newpath: str, overwrite: bool) -> None:
    if not overwrite and os.path.exists(newpath):
        raise errors.AlreadyExistsError(None, None, f"{newpath}; file already exists")


def Rename(oldname: Any, newname: Any, overwrite: bool = False) -> None:  # noqa: N802
    """Renames (moves) a file or directory.

    Raises:
      NotFoundError: if `oldname` does not exist; AlreadyExistsError: if `newname` exists
        and not `overwrite`.
    """
    old, new = _path(oldname), _path(newname)
    if not os.path.lexists(old):
        raise errors.NotFoundError(None, None, f"{old}; No such file or directory")
    _check_target(new, overwrite)
    try:
        os.replace(old, new)
    except OSError as e:
        raise _op_error(e, old) from None


def Copy(oldpath: Any, newpath: Any, overwrite: bool = False) -> None:  # noqa: N802
    """Copies a file.

    Raises:
      NotFoundError: if `oldpath` does not exist; AlreadyExistsError: if `newpath` exists
        and not `overwrite`.
    """
    old, new = _path(oldpath), _path(newpath)
    if not os.path.exists(old):
        raise errors.NotFoundError(None, None, f"{old}; No such file or directory")
    _check_target(new, overwrite)
    try:
        shutil.copyfile(old, new)
    except OSError as e:
        raise _op_error(e, new) from None


def Stat(filename: Any) -> FileStatistics:  # noqa: N802
    """The path's `FileStatistics`.

    Raises:
      NotFoundError: if it does not exist.
    """
    path = _path(filename)
    try:
        st = os.stat(path)
    except OSError as e:
        raise _op_error(e, path) from None
    return FileStatistics(st.st_size, st.st_mtime_ns, os.path.isdir(path))


__all__ = [
    "Copy", "DeleteRecursively", "Exists", "FastGFile", "GFile", "Glob", "IsDirectory",
    "ListDirectory", "MakeDirs", "MkDir", "Open", "Remove", "Rename", "Stat", "Walk",
]
