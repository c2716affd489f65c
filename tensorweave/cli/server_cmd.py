"""`tensorweave server`: run one task of a cluster until SIGTERM/SIGINT (the seeds'
`grpc_tensorflow_server`)."""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
import threading

log = logging.getLogger("tensorweave.server")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Adds `tensorweave server` (flags of the seeds' `grpc_tensorflow_server`)."""
    p = subparsers.add_parser(
        "server", help="run one task of a cluster",
        description="Start a TensorFlow-style server (master + worker service) for one task. "
        "The cluster comes from --cluster_spec (`job|host:port;host:port,job2|...` or JSON) "
        "or from the TF_CONFIG environment variable.",
    )
    p.add_argument("--cluster_spec", default="",
                   help="e.g. 'worker|localhost:2222;localhost:2223,ps|localhost:2224' or JSON")
    p.add_argument("--job_name", default="", help="this task's job, e.g. ps or worker")
    p.add_argument("--task_index", type=int, default=None, help="this task's index in its job")
    p.set_defaults(func=run)


def _cluster_and_task(args: argparse.Namespace) -> tuple[object, str, int | None]:
    from tensorweave.distributed.cluster_resolver import tf_config_from_env
    from tensorweave.distributed.cluster_spec import ClusterSpec, cluster_spec_from_string

    if args.cluster_spec:
        return cluster_spec_from_string(args.cluster_spec), args.job_name, args.task_index
    tf_config = tf_config_from_env(os.environ)
    if not tf_config or "cluster" not in tf_config:
        raise SystemExit("tensorweave server: give --cluster_spec or set TF_CONFIG")
    task = tf_config.get("task", {})
    return (ClusterSpec(tf_config["cluster"]), args.job_name or str(task.get("type", "")),
            args.task_index if args.task_index is not None else task.get("index"))


def run(args: argparse.Namespace) -> int:
    """Serves one task until SIGTERM/SIGINT; returns the exit code (2: bad cluster)."""
    from tensorweave import errors
    from tensorweave.distributed.server import Server

    try:
        cluster, job, task = _cluster_and_task(args)
        server = Server(cluster, job_name=job or None, task_index=task)
    except (ValueError, TypeError, errors.OpError) as e:
        print(f"tensorweave server: {e}", file=sys.stderr)
        return 2
    stop = threading.Event()

    def on_signal(signum: int, frame: object) -> None:
        log.info("Received signal %d, stopping %s", signum, server.worker.task_name)
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    print(json.dumps({"task": server.worker.task_name, "target": server.target,
                      "address": server.address, "devices": [server.worker.device_name]}),
          flush=True)
    stop.wait()
    server.stop()
    return 0
