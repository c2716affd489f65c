"""TLS with grpcio's credentials: a TLS server serves clients that trust its CA; a
plaintext client, or (with mutual TLS) a client without a certificate, is refused; token
and TLS combine. Certificates come from `deploy.certs` (the `tensorweave certs` code)."""

from __future__ import annotations

import pytest

import tensorweave as tf
from tensorweave import errors
from tensorweave.deploy import certs
from tensorweave.distributed.cluster_spec import ClusterSpec
from tensorweave.protos import config_pb2


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    out = tmp_path_factory.mktemp("pki")
    return certs.make_cluster_certs(ClusterSpec({"local": ["localhost:0"]}), str(out))


def _config(pki, cert=True, ca=True, mutual=False, token_file=None):
    config = config_pb2.ConfigProto()
    sec = config.tensorweave.security
    if cert:
        sec.tls_cert_file = pki["local-0"]["cert"]
        sec.tls_key_file = pki["local-0"]["key"]
    if ca:
        sec.tls_ca_file = pki["ca"]["cert"]
    sec.require_client_cert = mutual
    if token_file:
        sec.auth_token_file = token_file
    config.rpc_options.use_rpc_for_inprocess_master = True  # NOTE: really over gRPC
    config.operation_timeout_in_ms = 2500
    return config


def _run(target, config):
    with tf.Graph().as_default():
        v = tf.Variable(5.0)
        with tf.Session(target, config=config) as sess:
            sess.run(v.initializer)
            return sess.run(v + 1.0)


@pytest.mark.parametrize("mutual", [False, True])
def test_tls_cluster_serves_a_trusting_client(pki, mutual):
    with tf.train.Server.create_local_server(config=_config(pki, mutual=mutual)) as server:
        assert _run(server.target, _config(pki, mutual=mutual)) == 6.0


def test_plaintext_client_is_refused(pki):
    with tf.train.Server.create_local_server(config=_config(pki)) as server:
        plain = config_pb2.ConfigProto(operation_timeout_in_ms=2500)
        plain.rpc_options.use_rpc_for_inprocess_master = True
        with pytest.raises((errors.UnavailableError, errors.DeadlineExceededError)):
            _run(server.target, plain)


def test_mutual_tls_refuses_a_client_without_a_certificate(pki):
    with tf.train.Server.create_local_server(config=_config(pki, mutual=True)) as server:
        with pytest.raises((errors.UnavailableError, errors.DeadlineExceededError)):
            _run(server.target, _config(pki, cert=False))


def test_client_with_another_ca_is_refused(pki, tmp_path):
    other = certs.make_cluster_certs(ClusterSpec({"local": ["localhost:0"]}), str(tmp_path))
    with tf.train.Server.create_local_server(config=_config(pki)) as server:
        config = _config(pki, cert=False)
        config.tensorweave.security.tls_ca_file = other["ca"]["cert"]
        with pytest.raises((errors.UnavailableError, errors.DeadlineExceededError)):
            _run(server.target, config)


def test_token_and_tls_together(pki, tmp_path):
    token = certs.write_token(str(tmp_path))
    with tf.train.Server.create_local_server(config=_config(pki, token_file=token)) as server:
        assert _run(server.target, _config(pki, token_file=token)) == 6.0
        with pytest.raises(errors.UnauthenticatedError):
            _run(server.target, _config(pki))


def test_key_without_certificate_is_a_value_error(pki):
    config = _config(pki)
    config.tensorweave.security.tls_cert_file = ""
    with pytest.raises(ValueError, match="certificate and its key"):
        tf.train.Server.create_local_server(config=config)
