"""`tensorweave certs`: a CA, per-task TLS certificates and a cluster token for a cluster
spec (argparse only; the logic lives in `tensorweave.deploy.certs`)."""

from __future__ import annotations

import argparse
import json
import sys

_EPILOG = """\
examples:
  tensorweave certs --cluster_spec 'ps|10.0.0.1:2222,worker|10.0.0.2:2222' --out pki/
  # then on each machine (its own pair; ca.pem everywhere; the token everywhere):
  tensorweave server --cluster_spec ... --job_name ps --task_index 0 \\
      --tls-cert pki/ps-0.pem --tls-key pki/ps-0-key.pem --tls-ca pki/ca.pem \\
      --auth-token-file pki/cluster-token
"""


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Registers `certs` on the `tensorweave` parser."""
    p = subparsers.add_parser(
        "certs", help="create a CA, per-task TLS certificates and a cluster token",
        description="Write ca.pem, ca-key.pem (keep it offline), <job>-<index>.pem and "
        "<job>-<index>-key.pem for every task of the cluster (the task's host, localhost and "
        "127.0.0.1 in each certificate), and cluster-token. Keys are mode 0600.",
        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--cluster_spec", required=True,
                   help="'job|host:port;host:port,job2|...' or JSON")
    p.add_argument("--out", required=True, metavar="DIR", help="output directory")
    p.add_argument("--days", type=int, default=365, help="validity (default 365)")
    p.add_argument("--extra-host", action="append", default=[], metavar="NAME",
                   help="another name or IP every task certificate covers (repeatable)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Writes the files; prints their paths as JSON. Returns the exit status."""
    from tensorweave.deploy.certs import make_cluster_certs, write_token
    from tensorweave.distributed.cluster_spec import cluster_spec_from_string

    try:
        cluster = cluster_spec_from_string(args.cluster_spec)
    except (ValueError, TypeError) as e:
        print(f"tensorweave certs: {e}", file=sys.stderr)
        return 2
    files = make_cluster_certs(cluster, args.out, args.days, args.extra_host)
    files["token"] = {"file": write_token(args.out)}
    print(json.dumps(files, indent=1))
    return 0
