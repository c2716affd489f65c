"""A plan's entries and the helpers both ways of running a plan share (see `executor`)."""

from __future__ import annotations

import queue
from typing import Any

from tensorweave import errors
from tensorweave.framework.resource_mgr import Var
from tensorweave.kernels.registry import AsyncKernel
from tensorweave.runtime.node_spec import NodeSpec

NO_DEREF = ()


class Entry:
    """One kernel call of a plan: its node, kernel, input slots and output slots."""

    __slots__ = ("node", "fn", "ins", "out", "nout", "deref", "is_async", "label", "dead")

    def __init__(self, node: NodeSpec, fn: Any, ins: tuple[int, ...], out: int, nout: int,
                 deref: tuple[int, ...]):
        self.node = node
        self.fn = fn
        self.ins = ins
        self.out = out
        self.nout = nout
        self.deref = deref
        self.is_async = isinstance(fn, AsyncKernel)
        self.label = ""
        self.dead = False


class Done:
    """The completion callback handed to an `AsyncKernel`."""

    __slots__ = ("_q", "_i", "_start", "_called")

    def __init__(self, q: queue.SimpleQueue, i: int, start: int):
        self._q, self._i, self._start, self._called = q, i, start, False

    def __call__(self, outputs: Any = None, error: BaseException | None = None) -> None:
        """Reports the kernel's outputs or error (only the first call counts)."""
        if self._called:
            return
        self._called = True
        self._q.put((self._i, outputs, error, self._start))


def gather_deref(vals: list[Any], entry: Entry) -> list[Any]:
    """The entry's arguments from the slot values, refs read where it takes values."""
    args = [vals[s] for s in entry.ins]
    for k in entry.deref:
        a = args[k]
        if type(a) is Var:
            args[k] = a.read()
    return args


def read(value: Any) -> Any:
    """The value of a `Var` reference (anything else as it is)."""
    return value.read() if type(value) is Var else value


def read_expr(expr: str, ref_slots: set[int]) -> str:
    """The generated-code expression fetching `expr` (a ref slot is read)."""
    # NOTE: aliases and constants are never refs.
    if expr.startswith("s") and int(expr[1:]) in ref_slots:
        return f"_read({expr})"
    return expr


def assignment(outs: list[str], call: str) -> str:
    """The generated-code statement binding `call`'s results to the names `outs` (a bare
    call without any; a one-element tuple target for a single-output list)."""
    if not outs:
        return call
    return f"{', '.join(outs)}{',' if len(outs) > 1 else ''} = {call}"


def raising_line(e: BaseException, code: Any) -> int | None:
    """The line of generated function `code` (a code object) that `e` passed through,
    or None when `e` was raised before entering it or outside it."""
    tb = e.__traceback__
    while tb is not None and tb.tb_frame.f_code is not code:
        tb = tb.tb_next
    return tb.tb_lineno if tb is not None else None


def wrap_error(e: BaseException, node: NodeSpec | None) -> errors.OpError:
    """`e` as an `OpError` naming `node` (NumPy's ValueError & co. become
    InvalidArgumentError, MemoryError ResourceExhaustedError, others UnknownError)."""
    name = node.name if node is not None else "<unknown>"
    if isinstance(e, errors.OpError):
        return errors.with_node(e, name)
    if isinstance(e, ValueError | IndexError | TypeError | ZeroDivisionError | OverflowError):
        cls: type[errors.OpError] = errors.InvalidArgumentError
    elif isinstance(e, MemoryError):
        cls = errors.ResourceExhaustedError
    else:
        cls = errors.UnknownError
    op = node.op if node is not None else "?"
    return cls(None, None, f"{op}: {e}\n\t [[{{{{node {name}}}}}]]")
