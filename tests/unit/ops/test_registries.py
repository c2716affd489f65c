"""Meta-tests over the op and kernel registries (design.md section 6): every op module and
kernel module imports, and every registered op has a CPU kernel."""

from __future__ import annotations

import importlib
import pkgutil

import tensorweave  # registers the public ops and kernels
import tensorweave.kernels
import tensorweave.ops
from tensorweave.framework.op_def import op_def_registry
from tensorweave.kernels.registry import has_kernel


def _import_all(package) -> dict[str, str]:
    """Imports every module of `package`; returns the ones that failed, with the error."""
    failures = {}
    for info in pkgutil.iter_modules(package.__path__, package.__name__ + "."):
        try:
            importlib.import_module(info.name)
        except Exception as e:  # noqa: BLE001  (reported by the test below)
            failures[info.name] = repr(e)
    return failures


_IMPORT_FAILURES = {**_import_all(tensorweave.ops), **_import_all(tensorweave.kernels)}


def test_every_op_and_kernel_module_imports():
    assert not _IMPORT_FAILURES, f"modules that fail to import: {_IMPORT_FAILURES}"


def test_every_registered_op_has_a_cpu_kernel():
    missing = sorted(op for op in op_def_registry if not has_kernel(op, "CPU"))
    assert not missing, f"{len(missing)} registered ops have no CPU kernel: {missing}"
