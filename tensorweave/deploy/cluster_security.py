"""The security settings `tensorweave launch` and `demo` give their tasks: a generated
cluster token by default, TLS on request; all passed through the environment variables
of `distributed.transport.security` (the tasks build their servers themselves)."""

from __future__ import annotations

import argparse
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field

from tensorweave.deploy import certs
from tensorweave.deploy.security_flags import add_flags  # noqa: F401  (re-exported)
from tensorweave.distributed.transport import security


@dataclass
class TaskSecurity:
    """The environment for the tasks, and the private directory holding generated files
    (removed by `cleanup`)."""

    env: dict[str, str] = field(default_factory=dict)
    directory: str | None = None
    summary: str = "no authentication, no TLS"

    def cleanup(self) -> None:
        """Removes the generated secrets."""
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)
            self.directory = None


def prepare(
    args: argparse.Namespace, host: str = "127.0.0.1", more_hosts: Sequence[str] = ()
) -> TaskSecurity:
    """Builds the tasks' settings from the flags of `add_flags`; a generated certificate
    names `host` and `more_hosts` (the tasks' addresses, e.g. `launch --netns` hosts).

    Raises:
      ValueError: contradictory flags (`--insecure` with a token file).
    """
    if args.insecure and args.auth_token_file:
        raise ValueError("--insecure and --auth-token-file contradict each other")
    result = TaskSecurity()
    parts = []
    if not args.insecure or args.tls:
        result.directory = tempfile.mkdtemp(prefix="tensorweave-secrets-")
    if args.insecure:
        result.env[security.ENV_INSECURE] = "1"
    else:
        token_file = args.auth_token_file or certs.write_token(result.directory)
        result.env[security.ENV_TOKEN_FILE] = token_file
        parts.append("cluster token" + ("" if args.auth_token_file else " (generated)"))
    if args.tls_cert or args.tls_key or args.tls_ca:
        result.env.update({security.ENV_TLS_CERT: args.tls_cert or "",
                           security.ENV_TLS_KEY: args.tls_key or "",
                           security.ENV_TLS_CA: args.tls_ca or ""})
        parts.append("TLS")
    elif args.tls:
        paths = certs.make_local_certs(result.directory, [host, *more_hosts])
        result.env.update({security.ENV_TLS_CERT: paths["cert"],
                           security.ENV_TLS_KEY: paths["key"],
                           security.ENV_TLS_CA: paths["ca"]})
        parts.append("TLS (generated CA)")
    if args.mtls:
        result.env[security.ENV_TLS_MUTUAL] = "1"
        parts.append("mutual TLS")
    result.summary = ", ".join(parts) or result.summary
    return result
