"""Meta-tests over the op, kernel and gradient registries (design.md section 6): every op
module and kernel module imports, every registered op has a CPU kernel (or is listed below
as graph-only), and every op has a gradient function or an explicit `no_gradient`."""

from __future__ import annotations

import importlib
import json
import pkgutil
import subprocess
import sys
from typing import Any

import pytest

import tensorweave  # registers the public ops and kernels
import tensorweave.framework.op_defs
import tensorweave.kernels
import tensorweave.ops
from tensorweave.framework.op_def import op_def_registry
from tensorweave.kernels.registry import has_kernel
from tensorweave.ops.gradient_registry import gradient_registry

# Ops that only ever appear in graphs that are rewritten before they run (none today). An
# op listed here must not have a CPU kernel, so the list cannot go stale.
GRAPH_ONLY_OPS: frozenset[str] = frozenset()

# What a fresh interpreter registers by `import tensorweave` alone (test modules register
# their own `_Test*` ops in this process, so the checks below use the fresh snapshot).
_SNAPSHOT = """
import json, tensorweave
from tensorweave.framework.op_def import op_def_registry
from tensorweave.kernels.registry import has_kernel
from tensorweave.ops.gradient_registry import gradient_registry
print(json.dumps({
    "ops": sorted(op_def_registry),
    "kernels": sorted(o for o in op_def_registry if has_kernel(o, "CPU")),
    "grads": sorted(gradient_registry),
}))
"""


@pytest.fixture(scope="module")
def fresh() -> dict[str, set[str]]:
    out = subprocess.run(
        [sys.executable, "-c", _SNAPSHOT], capture_output=True, text=True, timeout=120, check=True
    )
    return {k: set(v) for k, v in json.loads(out.stdout.strip().splitlines()[-1]).items()}


def _ours(names: Any) -> set[str]:
    # NOTE: `tf.custom_gradient` registers `CustomGradient-<n>` when a graph is built (as TF).
    return {n for n in names if not n.startswith(("_Test", "CustomGradient-"))}


def _import_all(package) -> dict[str, str]:
    """Imports every module of `package`; returns the ones that failed, with the error."""
    failures = {}
    for info in pkgutil.iter_modules(package.__path__, package.__name__ + "."):
        try:
            importlib.import_module(info.name)
        except Exception as e:  # noqa: BLE001  (reported by the test below)
            failures[info.name] = repr(e)
    return failures


_IMPORT_FAILURES = {
    **_import_all(tensorweave.ops),
    **_import_all(tensorweave.kernels),
    **_import_all(tensorweave.framework.op_defs),
}


def test_every_op_and_kernel_module_imports():
    assert not _IMPORT_FAILURES, f"modules that fail to import: {_IMPORT_FAILURES}"


def test_every_registered_op_has_a_cpu_kernel(fresh):
    missing = sorted(fresh["ops"] - fresh["kernels"] - GRAPH_ONLY_OPS)
    assert not missing, f"{len(missing)} registered ops have no CPU kernel: {missing}"


def test_graph_only_ops_are_registered_and_have_no_kernel(fresh):
    stale = sorted(GRAPH_ONLY_OPS - (fresh["ops"] - fresh["kernels"]))
    assert not stale, f"GRAPH_ONLY_OPS entries that are unknown or have a kernel: {stale}"


def test_every_registered_op_has_a_gradient_or_no_gradient(fresh):
    missing = sorted(fresh["ops"] - fresh["grads"])
    assert not missing, (
        f"{len(missing)} ops have neither a gradient function nor `no_gradient`: {missing}"
    )


def test_every_gradient_is_for_a_registered_op(fresh):
    unknown = sorted(fresh["grads"] - fresh["ops"])
    assert not unknown, f"gradients registered for unknown op types: {unknown}"


def test_import_tensorweave_alone_registers_everything(fresh):
    # Importing every module of ops/, kernels/ and framework/op_defs in this process must
    # register nothing that `import tensorweave` alone did not (no registration hides
    # behind a lazy namespace such as `tf.nn` or `tf.train`, or in an unlisted module).
    assert _ours(op_def_registry) == fresh["ops"]
    assert _ours(o for o in op_def_registry if has_kernel(o, "CPU")) == fresh["kernels"]
    assert _ours(gradient_registry) == fresh["grads"]


def test_every_op_definition_parses():
    # `register_op` parses specs on first use; every definition of the package must parse
    # and agree with its proto form (the check `register_op` made at import before).
    for name in sorted(_ours(op_def_registry)):
        op_def = op_def_registry.lookup(name)
        assert op_def.to_proto().name == name
        assert all(a.type_attr is None or a.type_attr in op_def.attrs
                   for a in op_def.inputs + op_def.outputs), name


def test_definition_from_specs_equals_the_parsed_one():
    from tensorweave.framework.op_def import OpDef, parse_arg, parse_attr

    attrs = ["T: {float, double} = DT_FLOAT", "N: int >= 1", "keep: bool = false"]
    lazy = OpDef.from_specs("_TestSpecs", ("x: N * T", "r: Ref(T)"), ("y: T",), tuple(attrs))
    attr_defs = {a.name: a for a in map(parse_attr, attrs)}
    eager = OpDef("_TestSpecs", [parse_arg("x: N * T", attr_defs),
                                 parse_arg("r: Ref(T)", attr_defs)],
                  [parse_arg("y: T", attr_defs)], attr_defs)
    assert lazy == eager
    assert lazy.input_dtypes({"T": tensorweave.float64, "N": 2}) == [
        tensorweave.float64, tensorweave.float64, tensorweave.float64._as_ref]
    with pytest.raises(AttributeError):
        lazy.no_such_field  # noqa: B018
    bad = OpDef.from_specs("_TestBad", ("x: T",), (), ())
    with pytest.raises(ValueError, match="Unknown type 'T'"):
        bad.inputs  # noqa: B018


def test_import_leaves_the_cyclic_collector_as_it_was():
    # `import tensorweave` pauses the collector while it registers everything (start-up).
    # (That a fresh process knows every op, kernel and gradient is checked above and, with
    # an imported training graph and a bare server, in
    # tests/multiprocess/framework/test_every_op_registered.py.)
    code = ("import gc, sys; gc.disable() if sys.argv[1] == 'off' else None; "
            "import tensorweave; print(gc.isenabled())")
    for state, expected in (("on", "True"), ("off", "False")):
        out = subprocess.run([sys.executable, "-c", code, state], capture_output=True,
                             text=True, timeout=120, check=True)
        assert out.stdout.strip() == expected
