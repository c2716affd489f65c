"""Authentication and TLS for a cluster's gRPC calls and same-host socket.

TensorFlow's distributed runtime trusts whoever reaches a port. tensorweave offers two
independent protections (see docs/security.md):

* a shared cluster secret (a token): every gRPC call carries it in the
  `tensorweave-auth` metadata entry and a server interceptor checks it
  (`hmac.compare_digest`) before any handler runs; the same-host socket carries it in
  each request frame. A call without it, or with another, is `UNAUTHENTICATED`, naming
  the method and never the secret;
* TLS with grpcio's own credentials: servers present their certificate, clients verify
  it against the cluster CA; with `require_client_cert` servers verify clients too
  (mutual TLS).

Where the settings come from, first match wins:
  1. `ConfigProto.tensorweave.security` (`auth_token_file`, `tls_*_file`): a server's
     default session config (what `tensorweave server --auth-token-file ...` sets), a
     client session's config;
  2. the environment, next to `TF_CONFIG`: `TENSORWEAVE_AUTH_TOKEN_FILE`,
     `TENSORWEAVE_TLS_CERT`, `TENSORWEAVE_TLS_KEY`, `TENSORWEAVE_TLS_CA`,
     `TENSORWEAVE_TLS_MUTUAL=1`, `TENSORWEAVE_INSECURE=1` (how
     `tensorweave launch`/`demo`/`k8s` reach the servers that user programs create with a
     plain `tf.train.Server(...)`);
  3. nothing: no token, no TLS (TensorFlow's behaviour).
Deviation from the house rule "no environment below cli/": as with `TF_CONFIG`, a
program that builds its own servers has no other channel for these settings.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import grpc

log = logging.getLogger("tensorweave.security")

AUTH_METADATA_KEY = "tensorweave-auth"
TOKEN_MAX_BYTES = 1024
ENV_TOKEN_FILE = "TENSORWEAVE_AUTH_TOKEN_FILE"
ENV_TLS_CERT = "TENSORWEAVE_TLS_CERT"
ENV_TLS_KEY = "TENSORWEAVE_TLS_KEY"
ENV_TLS_CA = "TENSORWEAVE_TLS_CA"
ENV_TLS_MUTUAL = "TENSORWEAVE_TLS_MUTUAL"
ENV_INSECURE = "TENSORWEAVE_INSECURE"


def _read(path: str, what: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise ValueError(f"Cannot read the {what} file {path!r}: {e.strerror}") from None


def read_token(path: str) -> bytes:
    """The secret in `path` (surrounding whitespace stripped).

    Raises:
      ValueError: unreadable, empty or longer than `TOKEN_MAX_BYTES`.
    """
    token = _read(path, "auth token").strip()
    if not token or len(token) > TOKEN_MAX_BYTES:
        raise ValueError(f"The auth token file {path!r} must hold 1..{TOKEN_MAX_BYTES} bytes")
    return token


@dataclass(frozen=True, repr=False)
class TransportSecurity:
    """What a task presents and checks on the wire (an empty one: nothing)."""

    token: bytes | None = None
    cert_chain: bytes | None = None
    private_key: bytes | None = None
    root_certificates: bytes | None = None
    require_client_cert: bool = False
    insecure: bool = False

    def __repr__(self) -> str:  # NOTE: never print the secret or the key
        return (f"TransportSecurity(token={'set' if self.token else None}, "
                f"tls={self.tls}, mutual={self.require_client_cert})")

    @property
    def tls(self) -> bool:
        """True when this task serves (or connects) with TLS."""
        return self.root_certificates is not None or self.cert_chain is not None

    def check_token(self, presented: bytes | str | None) -> bool:
        """Constant-time check of a presented token (True when none is required)."""
        if self.token is None:
            return True
        if presented is None:
            return False
        if isinstance(presented, str):
            presented = presented.encode()
        return hmac.compare_digest(presented, self.token)


def from_options(options: Any = None, environ: Mapping[str, str] | None = None
                 ) -> TransportSecurity:
    """Builds the settings from `SecurityOptions` and the environment (see the module
    docstring for the precedence).

    Raises:
      ValueError: a named file cannot be read; a key without its certificate.
    """
    env = os.environ if environ is None else environ

    def pick(field: str, var: str) -> str:
        value = getattr(options, field, "") if options is not None else ""
        return value or env.get(var, "")

    token_file = pick("auth_token_file", ENV_TOKEN_FILE)
    cert, key, ca = (pick("tls_cert_file", ENV_TLS_CERT), pick("tls_key_file", ENV_TLS_KEY),
                     pick("tls_ca_file", ENV_TLS_CA))
    if bool(cert) != bool(key):
        raise ValueError("TLS needs both a certificate and its key (--tls-cert, --tls-key)")
    insecure = bool(getattr(options, "insecure", False)) or env.get(ENV_INSECURE, "") == "1"
    return TransportSecurity(
        token=read_token(token_file) if token_file else None,
        cert_chain=_read(cert, "TLS certificate") if cert else None,
        private_key=_read(key, "TLS key") if key else None,
        root_certificates=_read(ca, "TLS CA") if ca else None,
        require_client_cert=(bool(getattr(options, "require_client_cert", False))
                             or env.get(ENV_TLS_MUTUAL, "") == "1"),
        insecure=insecure,
    )


# ---------------------------------------------------------------------------- server
def _refusal(method: str) -> str:
    return (f"Unauthenticated call to {method}: missing or wrong cluster token "
            "(see --auth-token-file)")


def _refusing_handler(handler: Any, method: str) -> Any:
    """A handler of `handler`'s kind that aborts with UNAUTHENTICATED."""
    message = _refusal(method)

    def abort_unary(request: Any, context: Any) -> Any:
        context.abort(grpc.StatusCode.UNAUTHENTICATED, message)

    if handler is not None and handler.request_streaming and handler.response_streaming:
        return grpc.stream_stream_rpc_method_handler(abort_unary)
    if handler is not None and handler.request_streaming:
        return grpc.stream_unary_rpc_method_handler(abort_unary)
    if handler is not None and handler.response_streaming:
        return grpc.unary_stream_rpc_method_handler(abort_unary)
    return grpc.unary_unary_rpc_method_handler(abort_unary)


class TokenServerInterceptor(grpc.ServerInterceptor):
    """Refuses every call whose `tensorweave-auth` metadata is not the cluster token
    (unknown methods too, so that an anonymous caller learns nothing)."""

    def __init__(self, security: TransportSecurity):
        self._security = security

    def intercept_service(self, continuation: Callable[[Any], Any],
                          handler_call_details: Any) -> Any:
        """The method's handler, or one refusing the call."""
        presented = None
        for key, value in handler_call_details.invocation_metadata or ():
            if key == AUTH_METADATA_KEY:
                presented = value
        if self._security.check_token(presented):
            return continuation(handler_call_details)
        method = handler_call_details.method
        log.warning("Refused an unauthenticated call to %s", method)
        return _refusing_handler(continuation(handler_call_details), method)


def server_interceptors(security: TransportSecurity) -> list[Any]:
    """The interceptors a server needs (none without a token)."""
    return [TokenServerInterceptor(security)] if security.token else []


def server_credentials(security: TransportSecurity) -> Any:
    """`grpc.ssl_server_credentials` for a TLS task, else None.

    Raises:
      ValueError: TLS asked (a CA or client certificates required) without a
        certificate and key for this task.
    """
    if not security.tls:
        return None
    if security.cert_chain is None or security.private_key is None:
        raise ValueError("A TLS server needs --tls-cert and --tls-key")
    return grpc.ssl_server_credentials(
        [(security.private_key, security.cert_chain)],
        root_certificates=security.root_certificates,
        require_client_auth=security.require_client_cert,
    )


def is_loopback_host(host: str) -> bool:
    """True for `localhost` and loopback IPs (what only this machine can reach)."""
    host = host.strip("[]")
    if host in ("localhost", "") or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def warn_if_exposed(host: str, security: TransportSecurity, task: str) -> bool:
    """Logs a warning when `host` is reachable from other machines and neither TLS nor a
    token protects it (unless `insecure`); returns True when it warned."""
    if is_loopback_host(host) or security.token or security.tls or security.insecure:
        return False
    log.warning(
        "%s listens on %s without TLS or an auth token: anyone who reaches this port can "
        "run any graph as this user. Use --auth-token-file and/or --tls-cert/--tls-key/"
        "--tls-ca, or --insecure to acknowledge (docs/security.md).", task, host or "*")
    return True


# ---------------------------------------------------------------------------- client
class _WithToken:
    """A multicallable that adds the token to every call's metadata.

    NOTE: not a `grpc.intercept_channel` interceptor: those cost ~50 us of Python per call
    (measured +13% on a gRPC round trip); passing `metadata=` costs a few us.
    """

    __slots__ = ("_call", "_entry")

    def __init__(self, multicallable: Any, entry: tuple[str, str]):
        self._call = multicallable
        self._entry = entry

    def _metadata(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        kwargs["metadata"] = (*(kwargs.get("metadata") or ()), self._entry)
        return kwargs

    def __call__(self, request: Any, **kwargs: Any) -> Any:
        return self._call(request, **self._metadata(kwargs))

    def future(self, request: Any, **kwargs: Any) -> Any:
        """`future` with the token."""
        return self._call.future(request, **self._metadata(kwargs))

    def with_call(self, request: Any, **kwargs: Any) -> Any:
        """`with_call` with the token."""
        return self._call.with_call(request, **self._metadata(kwargs))


class TokenChannel:
    """A `grpc.Channel` whose calls all carry the cluster token."""

    def __init__(self, channel: grpc.Channel, token: bytes):
        self._channel = channel
        self._entry = (AUTH_METADATA_KEY, token.decode("utf-8", errors="surrogateescape"))

    def unary_unary(self, method: str, *args: Any, **kwargs: Any) -> _WithToken:
        """As `grpc.Channel.unary_unary`."""
        return _WithToken(self._channel.unary_unary(method, *args, **kwargs), self._entry)

    def unary_stream(self, method: str, *args: Any, **kwargs: Any) -> _WithToken:
        """As `grpc.Channel.unary_stream`."""
        return _WithToken(self._channel.unary_stream(method, *args, **kwargs), self._entry)

    def stream_unary(self, method: str, *args: Any, **kwargs: Any) -> _WithToken:
        """As `grpc.Channel.stream_unary`."""
        return _WithToken(self._channel.stream_unary(method, *args, **kwargs), self._entry)

    def stream_stream(self, method: str, *args: Any, **kwargs: Any) -> _WithToken:
        """As `grpc.Channel.stream_stream`."""
        return _WithToken(self._channel.stream_stream(method, *args, **kwargs), self._entry)

    def subscribe(self, *args: Any, **kwargs: Any) -> None:
        """As `grpc.Channel.subscribe`."""
        self._channel.subscribe(*args, **kwargs)

    def unsubscribe(self, *args: Any, **kwargs: Any) -> None:
        """As `grpc.Channel.unsubscribe`."""
        self._channel.unsubscribe(*args, **kwargs)

    def close(self) -> None:
        """Closes the underlying channel."""
        self._channel.close()

    def __enter__(self) -> TokenChannel:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def secure_channel(address: str, options: list[Any], security: TransportSecurity | None
                   ) -> grpc.Channel:
    """A channel to `address` with TLS and the token as `security` asks."""
    if security is not None and security.tls:
        creds = grpc.ssl_channel_credentials(
            root_certificates=security.root_certificates,
            private_key=security.private_key, certificate_chain=security.cert_chain)
        channel = grpc.secure_channel(address, creds, options=options)
    else:
        channel = grpc.insecure_channel(address, options=options)
    if security is not None and security.token:
        return TokenChannel(channel, security.token)  # type: ignore[return-value]
    return channel
