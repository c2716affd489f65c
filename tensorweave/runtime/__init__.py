"""Single-process execution: devices, pruning, placement, partitioning, executor, DirectSession."""
