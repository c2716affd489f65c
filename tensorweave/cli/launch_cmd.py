"""`tensorweave launch`: run N ps + M worker tasks of a trainer on this machine.

Argument parsing only; the logic lives in `tensorweave.deploy.launcher`.
"""

from __future__ import annotations

import argparse
import sys

from tensorweave.deploy import security_flags

_EPILOG = """\
Placeholders substituted in the command: {ps_hosts} {worker_hosts} {job_name} {task_index}
{cluster_spec}. Every task also gets TF_CONFIG.

examples:
  tensorweave launch --ps 2 --workers 2 --seed-flags -- python trainer.py --steps 100
  tensorweave launch --ps 1 --workers 2 -- python trainer.py --job_name={job_name} \\
      --task_index={task_index} --ps_hosts={ps_hosts} --worker_hosts={worker_hosts}
  tensorweave launch --ps 1 --workers 2 --port-base 2222 --dry-run -- python trainer.py
"""


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Registers `launch` on the `tensorweave` parser."""
    p = subparsers.add_parser(
        "launch",
        help="run a ps/worker trainer locally",
        description="Start N ps and M worker tasks of COMMAND on this machine, each with its\n"
        "cluster in TF_CONFIG, with prefixed output. Stops the ps once all workers have\n"
        "exited; exits non-zero naming any failed task, after stopping the others.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--ps", type=int, default=1, metavar="N", help="ps tasks (default 1)")
    p.add_argument("--workers", type=int, default=1, metavar="M", help="worker tasks (default 1)")
    p.add_argument(
        "--port-base", type=int, default=None, metavar="P",
        help="use ports P, P+1, ... (ps first); default: free ports",
    )  # fmt: skip
    p.add_argument("--host", default="127.0.0.1", help="host of the task addresses")
    p.add_argument(
        "--dry-run", action="store_true",
        help="print the cluster spec and each task's TF_CONFIG and command; start nothing",
    )  # fmt: skip
    p.add_argument(
        "--seed-flags", action="store_true",
        help="append --ps_hosts --worker_hosts --job_name --task_index to the command",
    )  # fmt: skip
    p.add_argument(
        "--grace-secs", type=float, default=10.0, metavar="S",
        help="seconds between SIGTERM and SIGKILL when stopping tasks (default 10)",
    )  # fmt: skip
    p.add_argument(
        "--color", choices=("auto", "always", "never"), default="auto",
        help="colour the task prefixes (auto: when stdout is a terminal)",
    )  # fmt: skip
    p.add_argument(
        "--netns", choices=("per-task", "per-job"), default=None,
        help="run the tasks in network namespaces as stand-in hosts (root only): a host "
        "per task, or the ps tasks on one host and the workers on another",
    )  # fmt: skip
    security_flags.add_flags(p)
    p.add_argument("argv", nargs=argparse.REMAINDER, metavar="COMMAND", help="-- COMMAND [ARGS...]")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Runs `tensorweave launch`; returns the exit status."""
    from tensorweave.deploy import cluster_security
    from tensorweave.deploy.launcher import launch
    from tensorweave.deploy.plan import format_dry_run, plan_cluster

    color = {"auto": None, "always": True, "never": False}[args.color]
    if args.netns:
        return _run_in_namespaces(args, color)
    try:
        if args.dry_run:
            plan = plan_cluster(
                args.argv, args.ps, args.workers, args.port_base, args.host, args.seed_flags
            )
            sys.stdout.write(format_dry_run(plan))
            return 0
        security = cluster_security.prepare(args, args.host)
        try:
            result = launch(
                args.argv, args.ps, args.workers, port_base=args.port_base, host=args.host,
                seed_flags=args.seed_flags, stream=sys.stdout, color=color,
                grace_secs=args.grace_secs, env=security.env,
            )  # fmt: skip
        finally:
            security.cleanup()
    except ValueError as e:
        print(f"tensorweave launch: {e}", file=sys.stderr)
        return 2
    return result.returncode


def _run_in_namespaces(args: argparse.Namespace, color: bool | None) -> int:
    """`tensorweave launch --netns LAYOUT`: the tasks in network namespaces (`deploy.netns`)."""
    from tensorweave.deploy import cluster_security, netns
    from tensorweave.deploy.launcher import run_plan
    from tensorweave.deploy.plan import format_dry_run

    ok, why = netns.available()
    if not ok:
        print(f"tensorweave launch: --netns is unavailable here: {why}", file=sys.stderr)
        return 2
    try:
        count = netns.host_count(args.netns, args.ps, args.workers)
        with netns.Hosts(count) as hosts:
            plan = netns.plan_in_hosts(
                args.argv, args.ps, args.workers, hosts, args.netns, args.seed_flags
            )
            if args.dry_run:
                sys.stdout.write(format_dry_run(plan))
                return 0
            addresses = [hosts.address(i) for i in range(count)]
            security = cluster_security.prepare(args, addresses[0], addresses[1:])
            try:
                result = run_plan(
                    plan, env=security.env, stream=sys.stdout, color=color,
                    grace_secs=args.grace_secs,
                )  # fmt: skip
            finally:
                security.cleanup()
    except (ValueError, OSError) as e:
        print(f"tensorweave launch: {e}", file=sys.stderr)
        return 2
    return result.returncode
