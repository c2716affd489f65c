"""The security flags of `tensorweave launch` and `demo` (argparse only, so building the
CLI's parser imports neither cryptography nor the launcher; `cluster_security.prepare`
reads them)."""

from __future__ import annotations

import argparse


def add_flags(parser: argparse.ArgumentParser, generated: bool = True) -> None:
    """`--auth-token-file --insecure --tls --tls-cert --tls-key --tls-ca --mtls`."""
    parser.add_argument(
        "--auth-token-file", default=None, metavar="FILE",
        help="the cluster's shared secret" + (" (default: a new random one)" if generated
                                              else ""))
    parser.add_argument("--insecure", action="store_true",
                        help="no token (and no warning when binding other interfaces)")
    parser.add_argument("--tls", action="store_true",
                        help="TLS with a CA and certificate generated for this run")
    parser.add_argument("--tls-cert", default=None, metavar="PEM", help="task certificate")
    parser.add_argument("--tls-key", default=None, metavar="PEM", help="its private key")
    parser.add_argument("--tls-ca", default=None, metavar="PEM",
                        help="CA that signed the cluster's certificates")
    parser.add_argument("--mtls", action="store_true",
                        help="servers also require client certificates (mutual TLS)")
