"""The file sandbox: which paths ops that touch the file system may reach on a server.

TensorFlow lets any client that reaches a server's port read, write and delete any file
the server's user can (`SaveV2` to any directory, `RestoreV2` of another job's
checkpoint, `MergeV2Checkpoints` deleting files). A tensorweave server confines those ops
to its allowed roots: by default its working directory and the system temp directory
(`SecurityOptions.allowed_dir`, `tensorweave server --allowed-dir`). A path is allowed
when its real path (symlinks resolved, `..` collapsed, relative paths taken from the
working directory) lies under the real path of a root; everything else is
`PermissionDeniedError` naming the op and the path. In-process sessions are not
sandboxed unless their `ConfigProto` names allowed directories.

Kernels check every path they open, create or delete with `StepContext.checked_path`
(a context without a sandbox allows everything).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from typing import Any

from tensorweave import errors


def default_roots() -> tuple[str, ...]:
    """The working directory and the system temp directory."""
    return (os.getcwd(), tempfile.gettempdir())


class FileSandbox:
    """Allows paths under `roots` only.

    Args:
      roots: directories (str); relative ones are taken from the working directory.
    """

    def __init__(self, roots: Iterable[str]):
        self.roots = tuple(sorted({os.path.realpath(r) for r in roots if r}))
        if not self.roots:
            raise ValueError("A file sandbox needs at least one allowed directory")

    def allows(self, path: str) -> bool:
        """True when the real path of `path` is a root or lies under one."""
        real = os.path.realpath(path)
        return any(real == root or real.startswith(root.rstrip(os.sep) + os.sep)
                   for root in self.roots)

    def check(self, op: str, path: str) -> str:
        """Returns `path` when allowed.

        Raises:
          PermissionDeniedError: naming `op` and `path` (and the real path when it
            differs: a symlink or `..` leading out).
        """
        if "\0" in path:
            raise errors.PermissionDeniedError(None, None, f"{op}: path {path!r} contains NUL")
        if self.allows(path):
            return path
        real = os.path.realpath(path)
        via = f" (resolves to {real!r})" if real != os.path.abspath(path) else ""
        raise errors.PermissionDeniedError(
            None, None,
            f"{op}: access to {path!r}{via} is outside the server's allowed directories "
            f"{list(self.roots)} (tensorweave server --allowed-dir)")

    def __repr__(self) -> str:
        return f"FileSandbox({list(self.roots)!r})"


class _NoFiles:
    """Refuses every path: for kernels run outside a step (constant folding at graph
    registration), which must leave file access to the step and its sandbox."""

    def check(self, op: str, path: str) -> str:
        """Raises `PermissionDeniedError` for any `path`."""
        raise errors.PermissionDeniedError(
            None, None, f"{op}: no file access outside a step (path {path!r})")


NO_FILES = _NoFiles()


def sandbox_from_options(security: Any, server: bool) -> FileSandbox | None:
    """The sandbox a `SecurityOptions` asks for: servers get one unless
    `unrestricted_files` (default roots when `allowed_dir` is empty); in-process sessions
    only when `allowed_dir` is set."""
    if security is None:
        return FileSandbox(default_roots()) if server else None
    if security.unrestricted_files:
        return None
    if security.allowed_dir:
        return FileSandbox(security.allowed_dir)
    return FileSandbox(default_roots()) if server else None
