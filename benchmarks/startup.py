"""Start-up benchmarks; prints JSON. Each figure is the median wall-clock time of fresh
Python processes (the interpreter's own start included):

* `import_s`: `python -c "import tensorweave"` (registers every op, kernel and gradient).
* `import_train_s`: the same and `tf.train.GradientDescentOptimizer` (what a one-process
  training program loads before it builds its graph).
* `cli_help_s`: `python -m tensorweave --help` (the CLI's parser, no subcommand run).
* `server_ready_s`: `python -m tensorweave server` of a one-task cluster until it prints its
  ready line (what every task of a cluster pays before it serves).

Each also has a `*_cpu_s` figure: the user + system CPU time of the child process (for the
server, until it exits after SIGTERM). On a loaded machine compare those: wall-clock time
moves with whatever else runs, CPU time much less.

With several `--trees` (source trees to put first on PYTHONPATH, e.g. a checkout of the
commit before a change and the current one), the trees take turns sample by sample in each
of `--rounds` rounds, so both see the same machine load; the load average before
and after is printed too. Compile the trees' bytecode first (`make bytecode`, or
`python -m compileall -q <tree>/tensorweave`): with PYTHONDONTWRITEBYTECODE set, a tree
without `.pyc` files recompiles every module in every process.

With `--instructions`, each tree's `server_ready` is also counted in instructions
(`server_ready_minstr`, millions, under `valgrind --tool=callgrind` with PYTHONHASHSEED=0
and one BLAS thread): the same for every run, whatever else loads the machine, so small
changes show up that wall-clock and CPU time bury (~30-60 s per tree).

Run: `python benchmarks/startup.py [--trees A B] [--rounds 3] [--reps 5] [--instructions]`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import socket
import subprocess
import sys
import time

import numpy as np


def _env(tree: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = tree + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed(cmd: list[str], tree: str) -> tuple[float, float]:
    """(wall-clock seconds, CPU seconds) of running `cmd` to its end."""
    cpu0, t0 = _children_cpu(), time.perf_counter()
    subprocess.run(cmd, env=_env(tree), cwd=tree, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0, _children_cpu() - cpu0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _server_ready(tree: str, timeout_s: float = 60.0) -> tuple[float, float]:
    """(seconds until the ready line, CPU seconds of the process until it exited)."""
    port = _free_port()
    cmd = [sys.executable, "-m", "tensorweave", "server",
           f"--cluster_spec=worker|localhost:{port}", "--job_name=worker", "--task_index=0"]
    cpu0, t0 = _children_cpu(), time.perf_counter()
    proc = subprocess.Popen(cmd, env=_env(tree), cwd=tree, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    ready = None
    try:
        deadline = t0 + timeout_s
        for line in proc.stdout:
            if line.startswith("{"):
                ready = time.perf_counter() - t0
                break
            if time.perf_counter() > deadline:
                break
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
        proc.stdout.close()
    if ready is None:
        raise RuntimeError(f"server of {tree} did not become ready")
    return ready, _children_cpu() - cpu0


# A one-task server, started as `python -m tensorweave server` does, that exits as soon as
# it prints its ready line (argv[1]: the port).
_SERVER_TO_READY = """
import builtins, os, runpy, sys
sys.argv = ["tensorweave", "server", "--cluster_spec=worker|localhost:" + sys.argv[1],
            "--job_name=worker", "--task_index=0"]
_print = builtins.print
def _exit_when_ready(*args, **kwargs):
    _print(*args, **kwargs)
    if args and str(args[0]).startswith("{"):
        sys.stdout.flush()
        os._exit(0)
builtins.print = _exit_when_ready
runpy.run_module("tensorweave", run_name="__main__", alter_sys=True)
"""


def _server_instructions(tree: str) -> float:
    """Millions of instructions a server process runs until it is ready (callgrind)."""
    env = dict(_env(tree), PYTHONHASHSEED="0", OPENBLAS_NUM_THREADS="1")
    out = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
         "-c", _SERVER_TO_READY, str(_free_port())],
        env=env, cwd=tree, capture_output=True, text=True, timeout=600)
    m = re.search(r"Collected : (\d+)", out.stderr)
    if m is None:
        raise RuntimeError(f"callgrind gave no count for {tree}: {out.stderr[-500:]}")
    return round(int(m.group(1)) / 1e6, 1)


def measure_once(tree: str) -> dict[str, float]:
    """One sample of each workload for `tree`: {name_s: wall seconds, name_cpu_s: CPU}."""
    py = sys.executable
    train = "import tensorweave as tf; tf.train.GradientDescentOptimizer"
    runs = {
        "import": lambda: _timed([py, "-c", "import tensorweave"], tree),
        "import_train": lambda: _timed([py, "-c", train], tree),
        "cli_help": lambda: _timed([py, "-m", "tensorweave", "--help"], tree),
        "server_ready": lambda: _server_ready(tree),
    }
    out: dict[str, float] = {}
    for name, run in runs.items():
        out[f"{name}_s"], out[f"{name}_cpu_s"] = run()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser.add_argument("--trees", nargs="+", default=[here],
                        help="source trees to compare (default: this checkout)")
    parser.add_argument("--rounds", type=int, default=3, help="alternated rounds")
    parser.add_argument("--reps", type=int, default=5, help="samples per tree and round")
    parser.add_argument("--instructions", action="store_true",
                        help="also count a server's start-up instructions (valgrind)")
    args = parser.parse_args()
    trees = [os.path.abspath(t) for t in args.trees]
    load_before = os.getloadavg()
    samples: dict[str, dict[str, list[float]]] = {t: {} for t in trees}
    rounds: dict[str, list[dict[str, float]]] = {t: [] for t in trees}
    for _ in range(args.rounds):
        got: dict[str, dict[str, list[float]]] = {t: {} for t in trees}
        for rep in range(args.reps):
            # NOTE: the trees take turns sample by sample (in alternating order), so a
            # change of load hits them alike.
            for tree in (trees if rep % 2 == 0 else trees[::-1]):
                for k, v in measure_once(tree).items():
                    got[tree].setdefault(k, []).append(v)
                    samples[tree].setdefault(k, []).append(v)
        for tree in trees:
            rounds[tree].append({k: round(float(np.median(v)), 3)
                                 for k, v in got[tree].items()})
    result = {
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "rounds": args.rounds, "reps": args.reps,
        "trees": {
            t: {"median": {k: round(float(np.median(v)), 3) for k, v in samples[t].items()},
                "per_round_median": rounds[t]}
            for t in trees
        },
    }
    for t in trees if args.instructions else ():
        result["trees"][t]["server_ready_minstr"] = _server_instructions(t)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
