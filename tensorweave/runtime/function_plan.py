"""Function bodies as executor plans: the "plan" factory of `framework.function_runtime`.

A body `GraphDef` (arguments `args_<i>`/`captured_<j>` placeholders, results `output_<k>`)
becomes one pruned `Plan` on the calling kernel's device, built once per kernel; each call
runs it with a fresh `StepContext` on the caller's resource manager, so a function of a
dataset placed on a worker runs on that worker.
"""

from __future__ import annotations

import itertools
from typing import Any

from tensorweave.framework.function_runtime import function_runtimes
from tensorweave.kernels.context import StepContext
from tensorweave.runtime.executor import Plan
from tensorweave.runtime.node_spec import NodeSpec
from tensorweave.runtime.pruning import prune

_STEP_IDS = itertools.count(1 << 40)


def _plan_factory(graph_def: Any, num_args: int, num_outputs: int, device: str) -> Any:
    specs = {nd.name: NodeSpec.from_node_def(nd).copy(device=device) for nd in graph_def.node}
    args = [n for n in specs if n.startswith(("args_", "captured_"))
            and specs[n].op == "Placeholder"]
    args.sort(key=lambda n: (n.startswith("captured_"), int(n.rsplit("_", 1)[1])))
    feeds = [f"{n}:0" for n in args]
    fetches = [f"output_{k}:0" for k in range(num_outputs)]
    nodes = prune(specs, set(feeds), fetches, [])
    plan = Plan(nodes, feeds, fetches, device)

    key = ("function_plan", id(plan))

    def call(ctx: Any, values: list[Any]) -> list[Any]:
        # NOTE: one inner context per calling context (an iterator's), reused by every
        # element: creating one per call was a third of a small function's cost.
        inner = ctx.extra.get(key)
        if inner is None or inner.cancellation.is_cancelled:
            inner = StepContext(ctx.resource_mgr, next(_STEP_IDS), None, None, None, device)
            inner.file_sandbox = ctx.file_sandbox  # security: the caller's sandbox applies
            ctx.extra[key] = inner
        try:
            return plan.run(inner, values)
        finally:
            inner.undo_log.clear()

    return call


function_runtimes.register(_plan_factory, "plan")
