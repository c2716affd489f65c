"""`tensorweave k8s`: print Kubernetes manifests for a ps/worker trainer.

Argument parsing only; the logic lives in `tensorweave.deploy.k8s`.
"""

from __future__ import annotations

import argparse
import sys

_EPILOG = """\
examples:
  tensorweave k8s --ps 2 --workers 4 --image registry/trainer:1 -- python trainer.py \\
      | kubectl apply -f -
  tensorweave k8s --ps 1 --workers 2 --image img --seed-flags -- python trainer.py
"""


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Registers `k8s` on the `tensorweave` parser."""
    p = subparsers.add_parser(
        "k8s",
        help="print Kubernetes manifests for a ps/worker trainer",
        description="Print multi-document YAML: per job (ps, worker) a headless Service and\n"
        "an Indexed Job whose pods get stable DNS names and TF_CONFIG.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--ps", type=int, default=1, metavar="N", help="ps tasks (default 1)")
    p.add_argument("--workers", type=int, default=1, metavar="M", help="worker tasks (default 1)")
    p.add_argument("--image", required=True, help="container image with the trainer")
    p.add_argument("--name", default="trainer", help="object name prefix (default trainer)")
    p.add_argument("--namespace", default="default", help="namespace (default default)")
    p.add_argument("--port", type=int, default=2222, help="gRPC port of every task")
    p.add_argument(
        "--seed-flags", action="store_true",
        help="append --ps_hosts --worker_hosts --job_name --task_index to the command",
    )  # fmt: skip
    p.add_argument(
        "--backoff-limit", type=int, default=0, metavar="K",
        help="the Jobs' backoffLimit (default 0: one failed task fails its Job)",
    )  # fmt: skip
    p.add_argument(
        "--insecure", action="store_true",
        help="no cluster token (default: a generated one, in a Secret the pods mount)",
    )  # fmt: skip
    p.add_argument("argv", nargs=argparse.REMAINDER, metavar="COMMAND", help="-- COMMAND [ARGS...]")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Runs `tensorweave k8s`; returns the exit status."""
    from tensorweave.deploy.certs import new_token
    from tensorweave.deploy.k8s import K8sConfig, render_k8s

    try:
        config = K8sConfig(
            image=args.image, num_ps=args.ps, num_workers=args.workers, name=args.name,
            namespace=args.namespace, port=args.port, seed_flags=args.seed_flags,
            backoff_limit=args.backoff_limit,
            auth_token=None if args.insecure else new_token(),
        )  # fmt: skip
        sys.stdout.write(render_k8s(args.argv, config))
    except ValueError as e:
        print(f"tensorweave k8s: {e}", file=sys.stderr)
        return 2
    return 0
