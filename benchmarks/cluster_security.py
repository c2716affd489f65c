"""Security overhead for `benchmarks/cluster.py --auth --tls`; prints through cluster.py.

For each mode (`plain`, and `auth` with `--auth`, `tls` = TLS + token with `--tls`) a fresh
1 ps + 1 worker cluster of `tensorweave server` processes is started with the mode's
settings (environment variables, as `tensorweave launch` passes them) and measured:
* `remote_scalar_read_us`: `sess.run(v)` of a float32 scalar on the ps (per-step calls on
  the same-host socket: the token is checked in each frame, TLS does not apply);
* `remote_scalar_read_us_grpc_only`: the same through gRPC alone (interceptor, TLS);
* `fetch_16MiB_MBps_grpc_only`: fetching a 16 MiB float32 variable through gRPC streams
  (no shared memory, no same-host socket: every byte through TLS in the `tls` mode).
`overhead_pct` compares each mode's medians with `plain`; the clusters run side by side and
are measured in 10 interleaved rounds (machine load drifts alike for every mode).
"""

from __future__ import annotations

import os
import tempfile
import time

import numpy as np

import tensorweave as tf
from tensorweave.deploy import certs
from tensorweave.distributed.transport import security
from tensorweave.testing.processes import ServerProcess, spec_string


def _env(mode: str, directory: str) -> dict[str, str]:
    if mode == "plain":
        return {}
    env = {security.ENV_TOKEN_FILE: certs.write_token(directory)}
    if mode == "tls":
        paths = certs.make_local_certs(directory, ["localhost"])
        env.update({security.ENV_TLS_CERT: paths["cert"], security.ENV_TLS_KEY: paths["key"],
                    security.ENV_TLS_CA: paths["ca"]})
    return env


def _client_config(env: dict[str, str], grpc_only: bool) -> tf.ConfigProto:
    config = tf.ConfigProto()
    sec = config.tensorweave.security
    sec.auth_token_file = env.get(security.ENV_TOKEN_FILE, "")
    sec.tls_cert_file = env.get(security.ENV_TLS_CERT, "")
    sec.tls_key_file = env.get(security.ENV_TLS_KEY, "")
    sec.tls_ca_file = env.get(security.ENV_TLS_CA, "")
    config.tensorweave.disable_local_rpc = grpc_only
    config.tensorweave.disable_shared_memory = grpc_only
    return config


def _timed(fn, runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return samples


class _Mode:
    """One mode's cluster and its open sessions (scalar reads both ways, a 16 MiB fetch)."""

    def __init__(self, mode: str, cluster_fn) -> None:
        self.directory = tempfile.mkdtemp(prefix="tw-bench-secrets-")
        self.env = _env(mode, self.directory)
        cluster = cluster_fn(1, 1)
        spec = spec_string(cluster)
        self.procs = [ServerProcess(spec, job, i, self.env) for job, addrs in cluster.items()
                      for i in range(len(addrs))]
        for p in self.procs:
            p.wait_ready()
        target = "grpc://" + cluster["worker"][0]
        self.sessions, self.calls = [], {}
        for grpc_only in (False, True):
            g = tf.Graph()
            with g.as_default(), tf.device("/job:ps/task:0"):
                v = tf.Variable(1.0, name="scalar")
            sess = tf.Session(target, graph=g, config=_client_config(self.env, grpc_only))
            sess.run(v.initializer)
            self.sessions.append(sess)
            key = "remote_scalar_read_us" + ("_grpc_only" if grpc_only else "")
            self.calls[key] = lambda s=sess, v=v: s.run(v)
        n = 16 * (1 << 20) // 4
        g = tf.Graph()
        with g.as_default(), tf.device("/job:ps/task:0"):
            big = tf.Variable(tf.zeros([n]), name="big")
        sess = tf.Session(target, graph=g, config=_client_config(self.env, True))
        sess.run(big.initializer)
        self.sessions.append(sess)
        self.fetch = lambda s=sess, b=big: s.run(b)
        self.samples: dict[str, list[float]] = {k: [] for k in self.calls}
        self.fetch_s: list[float] = []

    def round(self, runs: int, reps: int) -> None:
        for key, fn in self.calls.items():
            fn()
            self.samples[key] += _timed(fn, runs)
        self.fetch()
        self.fetch_s += _timed(self.fetch, reps)

    def figures(self) -> dict:
        out = {k: round(float(np.median(v)) * 1e6, 1) for k, v in self.samples.items()}
        out["fetch_16MiB_MBps_grpc_only"] = round(
            16 * (1 << 20) / float(np.median(self.fetch_s)) / 1e6, 1)
        return out

    def close(self) -> None:
        for sess in self.sessions:
            sess.close()
        for p in self.procs:
            p.terminate()
        for name in os.listdir(self.directory):
            os.remove(os.path.join(self.directory, name))
        os.rmdir(self.directory)


def bench_security(modes: list[str], cluster_fn, runs: int, reps: int,
                   rounds: int = 10) -> dict:
    """{mode: figures} plus `overhead_pct` of each mode against `plain`. The modes'
    clusters run side by side and are measured in interleaved rounds, so that drift in the
    machine's load hits every mode alike."""
    started: dict[str, _Mode] = {}
    try:
        for mode in ["plain", *modes]:
            started[mode] = _Mode(mode, cluster_fn)
        for _ in range(rounds):
            for m in started.values():
                m.round(max(runs // rounds, 10), max(reps // rounds, 1))
        result: dict = {mode: m.figures() for mode, m in started.items()}
    finally:
        for m in started.values():
            m.close()
    base = result["plain"]
    result["overhead_pct"] = {
        mode: {k: round(100.0 * (result[mode][k] - base[k]) / base[k], 1)
               for k in base if "_us" in k}
        for mode in modes
    }
    return result
