"""Every gradient checked by central differences: one parametrised test over the
`GradientCase`s of `tensorweave.testing.gradient_cases_{array,math,nn}`, and meta-tests
that every gradient has a case and every differentiable op has a gradient (design.md
sections 6 and 7)."""

from __future__ import annotations

import importlib
import pkgutil
import zlib

import numpy as np
import pytest

import tensorweave  # registers the public ops
import tensorweave.ops
from tensorweave.framework.op_def import OpDef, op_def_registry, register_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.kernels.registry import register_compute
from tensorweave.ops import array_ops
from tensorweave.ops.gradients_impl import RegisterGradient, gradient_registry, no_gradient
from tensorweave.testing.gradient_case import GradientCase
from tensorweave.testing.gradient_checker import (
    check_gradients,
    compute_gradient,
    compute_gradient_error,
)

_CASE_MODULES = (
    "gradient_cases_array",
    "gradient_cases_control_flow",
    "gradient_cases_math",
    "gradient_cases_nn",
    "gradient_cases_nn_extra",
    "gradient_cases_ops",
)

# This module and test_gradients_impl.py register private `_Test*` ops and gradients.
_TEST_OP_PREFIX = "_Test"

# Ops that can take and produce float tensors but have no gradient, as in TensorFlow.
# (Ops whose inputs can never be float -- random ops, variables, placeholders, _Recv,
# RestoreV2, queue dequeues -- are never reached by backprop and need no entry.)
_NO_GRADIENT_ALLOWED = frozenset(
    {
        # state_grad.py declares these NoGradient: updates are not differentiable.
        "Assign",
        "AssignAdd",
        "AssignSub",
        "ScatterAdd",
        "ScatterSub",
        # TF registers nothing for these variable updates either.
        "ScatterUpdate",
        "ScatterMul",
        "ScatterDiv",
        "CountUpTo",
        # Optimizer kernels (training_ops): TF registers no gradients for them.
        "ApplyGradientDescent",
        "ApplyMomentum",
        "ApplyAdam",
        "ApplyAdagrad",
        "ApplyAdagradDA",
        "ApplyAdadelta",
        "ApplyRMSProp",
        "ApplyCenteredRMSProp",
        "ApplyFtrl",
        "ApplyFtrlV2",
        "ApplyProximalAdagrad",
        "ApplyProximalGradientDescent",
        "ApplyAddSign",
        "ApplyPowerSign",
        "SparseApplyMomentum",
        "SparseApplyAdagrad",
        "SparseApplyAdagradDA",
        "SparseApplyAdadelta",
        "SparseApplyRMSProp",
        "SparseApplyCenteredRMSProp",
        "SparseApplyFtrl",
        "SparseApplyFtrlV2",
        "SparseApplyProximalAdagrad",
        "SparseApplyProximalGradientDescent",
        # Random ops with float parameters: TF's random_grad.py leaves these out.
        "ParameterizedTruncatedNormal",
        "RandomPoisson",
        "RandomPoissonV2",
        # Queue/accumulator ops pass values through runtime state, not the graph.
        "QueueEnqueue",
        "QueueEnqueueV2",
        "QueueEnqueueMany",
        "QueueEnqueueManyV2",
        "AccumulatorApplyGradient",
        "SparseAccumulatorApplyGradient",
    }
)


# Gradients that central differences in float64 cannot check (stateful samplers draw new
# numbers every run; float32-only ops), each checked elsewhere, named here.
_CHECKED_ELSEWHERE = {
    # Gradients w.r.t. a resource handle: a placeholder cannot feed a variable's state.
    "ReadVariableOp": "test_resource_variables.py::test_gradients_by_central_differences",
    "ResourceGather": "test_resource_variables.py::test_gradients_by_central_differences",
    "RandomGamma": "test_api_ops_random.py::test_random_gamma_gradient_is_implicit_derivative",
    # float32-only ops (the checker differentiates in float64); straight-through gradients.
    "FakeQuantWithMinMaxArgs": "test_fake_quant.py::test_fake_quant_gradients_flow",
    "FakeQuantWithMinMaxVars": "test_fake_quant.py::test_fake_quant_gradients_flow",
    "FakeQuantWithMinMaxVarsPerChannel": "test_fake_quant.py::test_fake_quant_gradients_flow",
}


# ------------------------------------------------------------------- collection
def _import_all(package) -> dict[str, str]:
    """Imports every module of `package` (the `*_grad` modules register the gradients)."""
    failures = {}
    for info in pkgutil.iter_modules(package.__path__, package.__name__ + "."):
        try:
            importlib.import_module(info.name)
        except Exception as e:  # noqa: BLE001  (reported by test_case_modules_import)
            failures[info.name] = repr(e)
    return failures


def _cases_in(module) -> list[GradientCase]:
    """Module-level GradientCases, alone or in lists/tuples, without duplicates."""
    found: dict[int, GradientCase] = {}
    for value in vars(module).values():
        items = value if isinstance(value, list | tuple) else [value]
        for item in items:
            if isinstance(item, GradientCase):
                found.setdefault(id(item), item)
    return list(found.values())


def _collect() -> tuple[list[GradientCase], dict[str, str]]:
    failures = _import_all(tensorweave.ops)
    cases: list[GradientCase] = []
    for name in _CASE_MODULES:
        full = f"tensorweave.testing.{name}"
        try:
            module = importlib.import_module(full)
        except ModuleNotFoundError as e:
            if e.name == full:
                continue  # not written yet
            failures[full] = repr(e)
            continue
        except Exception as e:  # noqa: BLE001  (reported by test_case_modules_import)
            failures[full] = repr(e)
            continue
        cases.extend(_cases_in(module))
    return cases, failures


CASES, _IMPORT_FAILURES = _collect()


def _case_id(case: GradientCase) -> str:
    return f"{case.op_type}-{case.name}" if case.name else case.op_type


# ------------------------------------------------------------------------ tests
def test_case_modules_import():
    assert not _IMPORT_FAILURES, f"modules that fail to import: {_IMPORT_FAILURES}"


@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_gradient(case: GradientCase):
    rng = np.random.default_rng(zlib.crc32(_case_id(case).encode()))
    check_gradients(case, rng)


def test_every_gradient_has_a_case():
    from tensorweave.testing.gradient_cases_control_flow import REF_TWINS

    covered = {c.op_type for c in CASES}
    covered.update(ref for ref, twin in REF_TWINS.items() if twin in covered)
    missing = sorted(
        op_type
        for op_type in gradient_registry
        if gradient_registry.lookup(op_type) is not None
        and op_type not in covered
        and op_type not in _CHECKED_ELSEWHERE
        and not op_type.startswith(_TEST_OP_PREFIX)
        # tf.custom_gradient registers one gradient per decorated call (user code).
        and not op_type.startswith("CustomGradient-")
    )
    assert not missing, f"gradients without a GradientCase: {missing}"


def _can_be_float(op_def: OpDef, args) -> bool:
    for arg in args:
        if arg.type is not None:
            if arg.type.base_dtype.is_floating:
                return True
            continue
        attr = op_def.attrs[arg.type_attr or arg.type_list_attr]
        if attr.allowed_values is None or any(t.is_floating for t in attr.allowed_values):
            return True
    return False


def test_every_differentiable_op_has_a_gradient():
    missing = []
    for op_type in op_def_registry:
        op_def = op_def_registry.lookup(op_type)
        if op_type.startswith(_TEST_OP_PREFIX) or op_type in gradient_registry:
            continue
        if op_type in _NO_GRADIENT_ALLOWED:
            continue
        if _can_be_float(op_def, op_def.outputs) and _can_be_float(op_def, op_def.inputs):
            missing.append(op_type)
    assert not missing, (
        f"ops with float inputs and outputs but neither a gradient nor no_gradient(): "
        f"{sorted(missing)}"
    )


def test_allow_list_entries_have_no_gradient():
    both = sorted(op for op in _NO_GRADIENT_ALLOWED if gradient_registry.get(op) is not None)
    assert not both, f"remove from _NO_GRADIENT_ALLOWED (a gradient is registered): {both}"


# ------------------------------------------------------- the checker on known gradients
register_op(
    "_TestCube",
    inputs=["x: T"],
    outputs=["y: T"],
    attrs=["T: {float, double}"],
    shape_fn=lambda op: [op.inputs[0].shape],
)
register_op(
    "_TestCubeGrad",
    inputs=["x: T", "dy: T", "wrong: bool"],
    outputs=["dx: T"],
    attrs=["T: {float, double}"],
    shape_fn=lambda op: [op.inputs[0].shape],
)
no_gradient("_TestCubeGrad")


@register_compute("_TestCube")
def _cube_kernel(ctx, x):
    return x**3


@register_compute("_TestCubeGrad")
def _cube_grad_kernel(ctx, x, dy, wrong):
    if wrong:  # a plausible bug: the derivative of x**2 instead of x**3
        return (2 * x * dy).astype(x.dtype)
    return (3 * x * x * dy).astype(x.dtype)


@RegisterGradient("_TestCube")
def _cube_grad(op, grad):
    return apply_op("_TestCubeGrad", x=op.inputs[0], dy=grad, wrong=False)


@RegisterGradient("_TestCubeWrong")
def _cube_wrong_grad(op, grad):
    return apply_op("_TestCubeGrad", x=op.inputs[0], dy=grad, wrong=True)


def _cube(x):
    return apply_op("_TestCube", x=x, name="cube")


def _cube_wrong(x):
    with x.graph.gradient_override_map({"_TestCube": "_TestCubeWrong"}):
        return _cube(x)


def test_checker_accepts_a_correct_gradient():
    case = GradientCase("_TestCube", _cube, ((2, 3),), name="right")
    check_gradients(case, np.random.default_rng(0))


def test_checker_reports_op_input_and_element():
    case = GradientCase(
        "_TestCube", _second_cubed_wrong, ((2,), (3, 2)), name="wrong", input_range=(0.5, 1.0)
    )
    with pytest.raises(AssertionError) as info:
        check_gradients(case, np.random.default_rng(0))
    message = str(info.value)
    assert "op '_TestCube' (case 'wrong')" in message
    assert "input 1 (shape (3, 2)) element (" in message
    assert "theoretical" in message and "numerical" in message


def _second_cubed_wrong(a, b):
    del a  # unused input: its gradient is None and numerically zero
    return _cube_wrong(b)


def test_checker_wraps_build_errors():
    def build(x):
        raise ValueError("boom")

    with pytest.raises(AssertionError, match=r"op 'Foo' \(case 'bad'\).*boom"):
        check_gradients(GradientCase("Foo", build, ((2,),), name="bad"), np.random.default_rng(0))


def test_compute_gradient_error():
    g = tensorweave.Graph()
    with g.as_default():
        x = array_ops.placeholder(tensorweave.float64, shape=[2, 2])
        y = _cube(x)
        jt, jn = compute_gradient(x, [2, 2], y, [2, 2], x_init_value=np.full((2, 2), 0.5))
        np.testing.assert_allclose(jt, np.diag(np.full(4, 0.75)), atol=1e-12)
        np.testing.assert_allclose(jn, jt, atol=1e-5)
        assert compute_gradient_error(x, [2, 2], y, [2, 2]) < 1e-5
        y_wrong = _cube_wrong(x)
        assert compute_gradient_error(x, [2, 2], y_wrong, [2, 2], np.ones((2, 2))) > 0.9
