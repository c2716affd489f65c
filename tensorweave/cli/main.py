"""`tensorweave` command dispatcher (argparse; the subcommands hold no runtime logic)."""

from __future__ import annotations

import argparse
import logging
import sys

from tensorweave.cli import certs_cmd, demo_cmd, k8s_cmd, launch_cmd, server_cmd


def build_parser() -> argparse.ArgumentParser:
    """The `tensorweave` parser with its subcommands (server, launch, k8s, demo, certs)."""
    parser = argparse.ArgumentParser(
        prog="tensorweave",
        description="tensorweave: TensorFlow 1.x's graph and distributed runtime in Python.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True)
    server_cmd.add_parser(sub)
    launch_cmd.add_parser(sub)
    k8s_cmd.add_parser(sub)
    demo_cmd.add_parser(sub)
    certs_cmd.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Parses `argv` (default `sys.argv[1:]`), runs the subcommand, returns its exit status."""
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    return args.func(args) or 0


if __name__ == "__main__":
    sys.exit(main())
