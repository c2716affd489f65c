"""`tensorweave demo`: train on a local cluster and show it (argparse only)."""

from __future__ import annotations

import argparse

from tensorweave.deploy import security_flags


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Registers the `demo` subcommand."""
    p = subparsers.add_parser(
        "demo", help="train an MLP on a local ps/worker cluster (the main job)",
        description="Launch a local cluster, train an MLP between-graph on real data "
        "(scikit-learn's digits by default, or MNIST IDX files), show per-worker progress, "
        "and write TensorBoard events and a Chrome trace to an output directory.",
    )
    p.add_argument("--ps", type=int, default=1, help="parameter server tasks (default 1)")
    p.add_argument("--workers", type=int, default=2, help="worker tasks (default 2)")
    p.add_argument("--steps", type=int, default=1500, help="global steps (default 1500)")
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--learning-rate", type=float, default=0.1, help="SGD learning rate")
    p.add_argument("--sync", action="store_true", help="SyncReplicasOptimizer (default async)")
    p.add_argument("--data", choices=["digits", "mnist"], default="digits")
    p.add_argument("--data-dir", default=None, help="directory of MNIST IDX files")
    p.add_argument("--output-dir", default=None, help="default: tw_output/demo-<time>")
    p.add_argument("--no-progress", dest="progress", action="store_false", default=None,
                   help="plain output even on a terminal")
    security_flags.add_flags(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Runs the demo with the parsed flags."""
    from tensorweave.deploy import cluster_security
    from tensorweave.deploy.demo import DemoOptions, run_demo

    try:
        security = cluster_security.prepare(args)
    except ValueError as e:
        print(f"tensorweave demo: {e}")
        return 2
    try:
        return run_demo(DemoOptions(
            ps=args.ps, workers=args.workers, steps=args.steps, batch_size=args.batch_size,
            learning_rate=args.learning_rate, sync=args.sync, data=args.data,
            data_dir=args.data_dir, output_dir=args.output_dir, progress=args.progress,
            env=security.env, security_summary=security.summary,
        ))
    finally:
        security.cleanup()
