"""Single-process execution: devices, pruning, placement, partitioning, executor, DirectSession."""

from tensorweave.runtime import function_plan  # noqa: F401  (runs dataset functions)
