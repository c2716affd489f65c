"""Whether a gRPC target is served on this host: where shared memory can apply (see `shm`).

A target is local when it is a `unix:` target, names a loopback host or address (also the
unspecified ones, `0.0.0.0` and `::`), is one of this host's own names and IPs, or is an IP
assigned to an interface of this network namespace (a socket can be bound to it: addresses
of secondary interfaces, and of a network namespace standing in for a host, which the
host name does not resolve to); another name is resolved (once per `HostLocality`: gRPC
resolves it anyway) and is local when all its addresses are. Answers are cached per host
in the `HostLocality` (one per `ProcessRuntime`).
"""

from __future__ import annotations

import ipaddress
import socket
import threading

_LOOPBACK_HOSTS = {"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback",
                   "0.0.0.0", "::", "::1", ""}


def host_of(address: str) -> str | None:
    """The host part of a gRPC target; None for `unix:` targets.

    Understands `host:port`, `[v6]:port`, `dns:///host:port`, `ipv4:a.b.c.d:port` and
    `ipv6:[..]:port`.
    """
    a = address.strip()
    if a.startswith(("unix:", "unix-abstract:")):
        return None
    for scheme in ("dns:///", "dns:", "ipv4:", "ipv6:"):
        if a.startswith(scheme):
            a = a[len(scheme):]
            break
    if a.startswith("["):
        return a[1:a.find("]")] if "]" in a else a[1:]
    if a.count(":") == 1:
        a = a.rpartition(":")[0]
    return a.lower()


def _own_addresses() -> set[str]:
    """This host's names and their IPs."""
    names = {socket.gethostname().lower()}
    try:
        names.add(socket.getfqdn().lower())
    except OSError:
        pass
    ips: set[str] = set()
    for n in list(names):
        try:
            ips.update(str(ai[4][0]) for ai in socket.getaddrinfo(n, None))
        except OSError:
            pass
    return names | ips


def _assigned_here(ip: str) -> bool:
    """Whether `ip` belongs to an interface of this network namespace: binding a socket to
    it succeeds (EADDRNOTAVAIL otherwise)."""
    family = socket.AF_INET6 if ":" in ip else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_DGRAM) as probe:
            probe.bind((ip, 0))
    except OSError:
        return False
    return True


class HostLocality:
    """Answers `is_local_address`, caching this host's own addresses and each answer."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._answers: dict[str, bool] = {}
        self._own: set[str] | None = None

    def _own_addresses(self) -> set[str]:
        if self._own is None:
            self._own = _own_addresses()
        return self._own

    def _is_local_host(self, host: str) -> bool:
        own = self._own_addresses()
        if host in _LOOPBACK_HOSTS or host in own:
            return True
        try:
            ip = ipaddress.ip_address(host)
        except ValueError:
            pass
        else:
            return ip.is_loopback or ip.is_unspecified or _assigned_here(str(ip))
        # NOTE: a name: resolve it (once, gRPC resolves it anyway).
        try:
            infos = socket.getaddrinfo(host, None)
        except OSError:
            return False
        return bool(infos) and all(
            ipaddress.ip_address(str(ai[4][0]).split("%")[0]).is_loopback
            or str(ai[4][0]) in own or _assigned_here(str(ai[4][0]).split("%")[0])
            for ai in infos
        )

    def is_local_address(self, address: str) -> bool:
        """True when the gRPC target `address` is served on this host."""
        host = host_of(address)
        if host is None:
            return True
        with self._lock:
            hit = self._answers.get(host)
        if hit is None:
            hit = self._is_local_host(host)
            with self._lock:
                self._answers[host] = hit
        return hit
