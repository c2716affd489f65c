"""Security overhead for `benchmarks/cluster.py --auth --tls`; prints through cluster.py.

For each mode (`plain`, and `auth` with `--auth`, `tls` = TLS + token with `--tls`) a fresh
1 ps + 1 worker cluster of `tensorweave server` processes is started with the mode's
settings (environment variables, as `tensorweave launch` passes them) and measured:
* `remote_scalar_read_us`: `sess.run(v)` of a float32 scalar on the ps (per-step calls on
  the same-host socket: the token is checked in each frame, TLS does not apply);
* `remote_scalar_read_us_grpc_only`: the same through gRPC alone (interceptor, TLS);
* `fetch_16MiB_MBps_grpc_only`: fetching a 16 MiB float32 variable through gRPC streams
  (no shared memory, no same-host socket: every byte through TLS in the `tls` mode).
`overhead_pct` compares each mode's medians with `plain`.
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


def _median_us(fn, runs: int) -> float:
    for _ in range(max(runs // 10, 50)):
        fn()
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return round(float(np.median(samples)) * 1e6, 1)


def _measure(target: str, env: dict[str, str], runs: int, reps: int) -> dict:
    out = {}
    for grpc_only in (False, True):
        g = tf.Graph()
        with g.as_default(), tf.device("/job:ps/task:0"):
            v = tf.Variable(1.0, name=f"scalar_{grpc_only}")
        with tf.Session(target, graph=g, config=_client_config(env, grpc_only)) as sess:
            sess.run(v.initializer)
            key = "remote_scalar_read_us" + ("_grpc_only" if grpc_only else "")
            out[key] = _median_us(lambda s=sess, v=v: s.run(v), runs)
    n = 16 * (1 << 20) // 4
    g = tf.Graph()
    with g.as_default(), tf.device("/job:ps/task:0"):
        big = tf.Variable(tf.zeros([n]), name="big")
    with tf.Session(target, graph=g, config=_client_config(env, True)) as sess:
        sess.run(big.initializer)
        sess.run(big)
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            sess.run(big)
            times.append(time.perf_counter() - t0)
    out["fetch_16MiB_MBps_grpc_only"] = round(n * 4 / float(np.median(times)) / 1e6, 1)
    return out


def bench_security(modes: list[str], cluster_fn, runs: int, reps: int) -> dict:
    """{mode: figures} plus `overhead_pct` of each mode against `plain`."""
    result: dict = {}
    for mode in ["plain", *modes]:
        directory = tempfile.mkdtemp(prefix="tw-bench-secrets-")
        env = _env(mode, directory)
        cluster = cluster_fn(1, 1)
        spec = spec_string(cluster)
        procs = [ServerProcess(spec, job, i, env) for job, addrs in cluster.items()
                 for i in range(len(addrs))]
        try:
            for p in procs:
                p.wait_ready()
            result[mode] = _measure("grpc://" + cluster["worker"][0], env, runs, reps)
        finally:
            for p in procs:
                p.terminate()
            for name in os.listdir(directory):
                os.remove(os.path.join(directory, name))
            os.rmdir(directory)
    base = result["plain"]
    result["overhead_pct"] = {
        mode: {k: round(100.0 * (result[mode][k] - base[k]) / base[k], 1)
               for k in base if "_us" in k}
        for mode in modes
    }
    return result
