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
    add_security_flags(p)
    p.set_defaults(func=run)


def add_security_flags(p: argparse.ArgumentParser) -> None:
    """The flags that fill `ConfigProto.tensorweave.security` (docs/security.md)."""
    p.add_argument("--allowed-dir", action="append", default=[], metavar="DIR",
                   help="directory file ops may reach (repeatable; default: the working "
                   "directory and the system temp directory)")
    p.add_argument("--unrestricted-files", action="store_true",
                   help="no file sandbox (TensorFlow's behaviour)")
    p.add_argument("--auth-token-file", default="", metavar="FILE",
                   help="the cluster's shared secret (default: $TENSORWEAVE_AUTH_TOKEN_FILE)")
    p.add_argument("--tls-cert", default="", metavar="PEM", help="this task's certificate")
    p.add_argument("--tls-key", default="", metavar="PEM", help="its private key")
    p.add_argument("--tls-ca", default="", metavar="PEM",
                   help="CA of the cluster's certificates")
    p.add_argument("--mtls", action="store_true", help="require client certificates")
    p.add_argument("--insecure", action="store_true",
                   help="serve other interfaces without TLS or token, without the warning")


def security_config(args: argparse.Namespace) -> object:
    """A `ConfigProto` whose `tensorweave.security` holds the security flags."""
    from tensorweave.protos import config_pb2

    config = config_pb2.ConfigProto()
    sec = config.tensorweave.security
    sec.allowed_dir.extend(args.allowed_dir)
    sec.unrestricted_files = args.unrestricted_files
    sec.auth_token_file = args.auth_token_file
    sec.tls_cert_file, sec.tls_key_file, sec.tls_ca_file = args.tls_cert, args.tls_key, args.tls_ca
    sec.require_client_cert = args.mtls
    sec.insecure = args.insecure
    return config


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
        server = Server(cluster, job_name=job or None, task_index=task,
                        config=security_config(args))
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
