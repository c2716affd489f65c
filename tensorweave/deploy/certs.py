"""Cluster secrets and certificates: what `tensorweave certs`, `launch`, `demo` and `k8s`
hand to their tasks (see docs/security.md).

* `new_token` / `write_token`: a random cluster secret (256 bits, URL-safe text) in a file
  only its owner can read.
* `make_cluster_certs`: a private CA and, per task of a cluster spec, a key and a
  certificate for the task's host (plus `localhost` and 127.0.0.1, the addresses a task's
  own clients use), valid for both server and client authentication so one pair serves
  mutual TLS. Files: `ca.pem`, `ca-key.pem` (keep it offline), `<job>-<index>.pem`,
  `<job>-<index>-key.pem`; keys are written with mode 0600.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import secrets
from collections.abc import Iterable
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

TOKEN_FILE_NAME = "cluster-token"


def new_token() -> str:
    """A random cluster secret (43 URL-safe characters)."""
    return secrets.token_urlsafe(32)


def _write_private(path: str, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.chmod(path, 0o600)


def write_token(directory: str, token: str | None = None) -> str:
    """Writes a (new) token to `<directory>/cluster-token` with mode 0600; returns the
    path."""
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, TOKEN_FILE_NAME)
    _write_private(path, ((token or new_token()) + "\n").encode())
    return path


def _name(common_name: str) -> Any:

    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _san(hosts: Iterable[str]) -> Any:

    names: list[Any] = []
    for host in dict.fromkeys(h.strip("[]") for h in hosts if h):
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    return x509.SubjectAlternativeName(names)


def _key() -> Any:

    return ec.generate_private_key(ec.SECP256R1())


def _pem_key(key: Any) -> bytes:

    return key.private_bytes(serialization.Encoding.PEM,
                             serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _pem_cert(cert: Any) -> bytes:

    return cert.public_bytes(serialization.Encoding.PEM)


def _builder(subject: Any, issuer: Any, public_key: Any, days: int) -> Any:

    now = datetime.datetime.now(datetime.timezone.utc)
    return (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer)
            .public_key(public_key).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=days)))


def make_ca(days: int = 365) -> tuple[Any, Any]:
    """A new self-signed CA: (key, certificate)."""
    key = _key()
    name = _name("tensorweave cluster CA")
    cert = (_builder(name, name, key.public_key(), days)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(
                digital_signature=True, key_cert_sign=True, crl_sign=True,
                content_commitment=False, key_encipherment=False, data_encipherment=False,
                key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
            .sign(key, hashes.SHA256()))
    return key, cert


def make_task_cert(ca_key: Any, ca_cert: Any, common_name: str, hosts: Iterable[str],
                   days: int = 365) -> tuple[bytes, bytes]:
    """A key and certificate (PEM) for `hosts`, signed by the CA, for server and client
    authentication."""
    key = _key()
    cert = (_builder(_name(common_name), ca_cert.subject, key.public_key(), days)
            .add_extension(_san(hosts), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH,
                                                  ExtendedKeyUsageOID.CLIENT_AUTH]),
                           critical=False)
            .sign(ca_key, hashes.SHA256()))
    return _pem_key(key), _pem_cert(cert)


def make_cluster_certs(cluster: Any, out_dir: str, days: int = 365,
                       extra_hosts: Iterable[str] = ()) -> dict[str, dict[str, str]]:
    """Writes a CA and one certificate per task of `cluster` (a `ClusterSpec`).

    Returns:
      {"ca": {"cert": path, "key": path}, "<job>-<index>": {"cert": path, "key": path}}.
    """
    os.makedirs(out_dir, exist_ok=True)
    ca_key, ca_cert = make_ca(days)
    files = {"ca": {"cert": os.path.join(out_dir, "ca.pem"),
                    "key": os.path.join(out_dir, "ca-key.pem")}}
    with open(files["ca"]["cert"], "wb") as f:
        f.write(_pem_cert(ca_cert))
    _write_private(files["ca"]["key"], _pem_key(ca_key))
    for job in cluster.jobs:
        for index in cluster.task_indices(job):
            host = cluster.task_address(job, index).rpartition(":")[0]
            name = f"{job}-{index}"
            key_pem, cert_pem = make_task_cert(
                ca_key, ca_cert, f"/job:{job}/task:{index}",
                [host, "localhost", "127.0.0.1", *extra_hosts], days)
            files[name] = {"cert": os.path.join(out_dir, f"{name}.pem"),
                           "key": os.path.join(out_dir, f"{name}-key.pem")}
            with open(files[name]["cert"], "wb") as f:
                f.write(cert_pem)
            _write_private(files[name]["key"], key_pem)
    return files


def make_local_certs(out_dir: str, hosts: Iterable[str], days: int = 30) -> dict[str, str]:
    """A CA and one certificate shared by every task of a single-machine cluster
    (`launch --tls`, `demo --tls`). Returns {"ca", "cert", "key"} paths."""
    os.makedirs(out_dir, exist_ok=True)
    ca_key, ca_cert = make_ca(days)
    key_pem, cert_pem = make_task_cert(ca_key, ca_cert, "tensorweave local cluster",
                                       [*hosts, "localhost", "127.0.0.1"], days)
    paths = {"ca": os.path.join(out_dir, "ca.pem"), "cert": os.path.join(out_dir, "task.pem"),
             "key": os.path.join(out_dir, "task-key.pem")}
    with open(paths["ca"], "wb") as f:
        f.write(_pem_cert(ca_cert))
    with open(paths["cert"], "wb") as f:
        f.write(cert_pem)
    _write_private(paths["key"], key_pem)
    return paths
