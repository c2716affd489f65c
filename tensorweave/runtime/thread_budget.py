"""Thread budgets for the kernels (follows `ConfigProto.intra_op_parallelism_threads`).

tensorweave's kernels are NumPy calls; the only intra-op parallelism they have is the BLAS
library's thread pool (OpenBLAS/MKL under `np.dot`). TensorFlow sizes its intra-op pool
from `ConfigProto.intra_op_parallelism_threads` (0: one thread per core); here that number
sizes the BLAS pool, set through `threadpoolctl` for the whole process (TensorFlow's pools
are also shared by the sessions of a process unless `use_per_session_threads`).

The default differs from TensorFlow's on purpose. The tasks of a cluster that share a host
each get `max(1, cores // tasks of the cluster on this host)` BLAS threads, so together
they never ask for more threads than the host has cores: with OpenBLAS's default (all
cores per process), three tasks on two cores spun against each other and the digits MLP
trained at 17 steps/s per worker instead of ~270 (issue 15). The default only lowers the
pool, never raises it, so a user's `OPENBLAS_NUM_THREADS` (which sizes the pool when the
library loads) or `threadpoolctl` limit below it is kept. A session or server whose config
sets `intra_op_parallelism_threads` gets exactly that many.

`inter_op_parallelism_threads` is accepted and has nothing to size: the executor runs a
step's kernels in the thread that runs the step (the GIL makes more threads per step a
loss for NumPy kernels), and concurrent steps each have their own thread.
"""

from __future__ import annotations

import os
from typing import Any

from threadpoolctl import ThreadpoolController


def host_cores() -> int:
    """The cores this process may run on (its CPU affinity; `os.cpu_count()` elsewhere)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # NOTE: not every platform has sched_getaffinity (macOS).
        return max(1, os.cpu_count() or 1)


def default_threads(cores: int, tasks_on_host: int) -> int:
    """The default BLAS threads of a task: `max(1, cores // tasks_on_host)`."""
    return max(1, cores // max(1, tasks_on_host))


def blas_threads() -> int | None:
    """The smallest BLAS pool among the loaded BLAS libraries (None: none loaded)."""
    pools = [lib.num_threads for lib in ThreadpoolController().select(user_api="blas")
             .lib_controllers]
    return min(pools) if pools else None


def set_blas_threads(threads: int) -> None:
    """Sizes every loaded BLAS library's pool to `threads` for the whole process.

    Raises:
      ValueError: if `threads` < 1.
    """
    if threads < 1:
        raise ValueError(f"BLAS threads must be >= 1, got {threads}")
    ThreadpoolController().select(user_api="blas").limit(limits=threads)


def apply_config(config: Any, tasks_on_host: int | None = None) -> int | None:
    """Applies `config`'s thread budget to the BLAS pool; returns the pool size set.

    Args:
      config: a `ConfigProto` or None.
      tasks_on_host: the tasks of the cluster on this host, for a server's task (its
        default lowers the pool to its share of the cores); None for a session without a
        cluster (the pool is left alone unless the config sets a size).

    Returns:
      The BLAS threads now in use, or None when nothing was changed.
    """
    explicit = int(config.intra_op_parallelism_threads) if config is not None else 0
    if explicit > 0:
        set_blas_threads(explicit)
        return explicit
    if tasks_on_host is None:
        return None
    current = blas_threads()
    if current is None:
        return None
    threads = min(current, default_threads(host_cores(), tasks_on_host))
    if threads != current:
        set_blas_threads(threads)
    return threads
