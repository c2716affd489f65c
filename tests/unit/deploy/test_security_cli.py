"""`tensorweave certs`, the security flags of `server`/`launch`/`demo`, and the settings
they hand to tasks."""

from __future__ import annotations

import argparse
import json
import os
import stat

import pytest
from cryptography import x509

from tensorweave.cli import server_cmd
from tensorweave.cli.main import build_parser, main
from tensorweave.deploy import cluster_security
from tensorweave.distributed.transport import security


def test_certs_writes_a_ca_task_certificates_and_a_token(tmp_path, capsys):
    out = tmp_path / "pki"
    assert main(["certs", "--cluster_spec", "ps|ps0.example:2222,worker|10.0.0.7:2222",
                 "--out", str(out), "--extra-host", "gateway"]) == 0
    files = json.loads(capsys.readouterr().out)
    assert set(files) == {"ca", "ps-0", "worker-0", "token"}
    for name in ("ca-key.pem", "ps-0-key.pem", "worker-0-key.pem", "cluster-token"):
        assert stat.S_IMODE(os.stat(out / name).st_mode) == 0o600
    ca = x509.load_pem_x509_certificate((out / "ca.pem").read_bytes())
    cert = x509.load_pem_x509_certificate((out / "worker-0.pem").read_bytes())
    assert cert.issuer == ca.subject
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    ips = [str(ip) for ip in san.get_values_for_type(x509.IPAddress)]
    assert ips == ["10.0.0.7", "127.0.0.1"]
    assert san.get_values_for_type(x509.DNSName) == ["localhost", "gateway"]
    ps = x509.load_pem_x509_certificate((out / "ps-0.pem").read_bytes())
    assert "ps0.example" in ps.extensions.get_extension_for_class(
        x509.SubjectAlternativeName).value.get_values_for_type(x509.DNSName)
    assert len(security.read_token(str(out / "cluster-token"))) >= 40


def test_certs_rejects_a_bad_cluster_spec(tmp_path, capsys):
    assert main(["certs", "--cluster_spec", "nonsense", "--out", str(tmp_path)]) == 2


def test_server_flags_fill_the_security_options():
    args = build_parser().parse_args([
        "server", "--cluster_spec", "w|localhost:0", "--allowed-dir", "/data",
        "--allowed-dir", "/ckpt", "--auth-token-file", "/t", "--tls-cert", "/c",
        "--tls-key", "/k", "--tls-ca", "/a", "--mtls", "--insecure"])
    sec = server_cmd.security_config(args).tensorweave.security
    assert list(sec.allowed_dir) == ["/data", "/ckpt"]
    assert (sec.auth_token_file, sec.tls_cert_file, sec.tls_key_file, sec.tls_ca_file) == (
        "/t", "/c", "/k", "/a")
    assert sec.require_client_cert and sec.insecure and not sec.unrestricted_files


def _launch_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    cluster_security.add_flags(parser)
    return parser.parse_args(argv)


def test_launch_generates_a_token_by_default():
    sec = cluster_security.prepare(_launch_args())
    try:
        path = sec.env[security.ENV_TOKEN_FILE]
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        assert security.from_options(None, sec.env).token is not None
        assert security.ENV_TLS_CERT not in sec.env
    finally:
        sec.cleanup()
    assert not os.path.exists(path)


def test_launch_tls_generates_certificates():
    sec = cluster_security.prepare(_launch_args("--tls", "--mtls"))
    try:
        settings = security.from_options(None, sec.env)
        assert settings.tls and settings.require_client_cert and settings.token
    finally:
        sec.cleanup()


def test_insecure_launch_has_no_token_and_contradictions_fail():
    sec = cluster_security.prepare(_launch_args("--insecure"))
    assert sec.env == {security.ENV_INSECURE: "1"} and sec.directory is None
    with pytest.raises(ValueError, match="contradict"):
        cluster_security.prepare(_launch_args("--insecure", "--auth-token-file", "/t"))


def test_generated_certificate_names_every_host():
    """`launch --netns --tls`: the tasks live on several namespace addresses."""
    sec = cluster_security.prepare(_launch_args("--tls"), "10.231.0.2", ["10.231.0.6"])
    try:
        with open(sec.env[security.ENV_TLS_CERT], "rb") as f:
            cert = x509.load_pem_x509_certificate(f.read())
        names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        ips = {str(ip) for ip in names.get_values_for_type(x509.IPAddress)}
        assert {"10.231.0.2", "10.231.0.6", "127.0.0.1"} <= ips
    finally:
        sec.cleanup()
