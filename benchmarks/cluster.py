"""Cluster benchmarks; prints JSON. Servers are `tensorweave server` subprocesses on
127.0.0.1; the client (this process) targets worker 0.

Workloads (median over `--reps` repetitions where a workload is repeated):
* `startup_s`: launch 1 ps + 2 workers until a first `run` (an op on the ps) succeeds.
* `raw_grpc_roundtrip_us`: a bare gRPC `GetStatus` round trip to the ps (the floor).
* `remote_scalar_read_us`: `sess.run(v)` of a float32 scalar variable on `/job:ps/task:0`.
* `fetch_MBps` / `push_MBps`: fetching a float32 variable of 1/16/128 MiB that lives on the
  ps, and assigning it from a fed array (MB = 10^6 bytes). The client and the ps share this
  host, so large tensors go through /dev/shm files (`shared_memory` says whether that path
  was available); with `--no-shm`, `fetch_MBps_no_shm` / `push_MBps_no_shm` repeat them with
  `ConfigProto.tensorweave.disable_shared_memory` (pure gRPC streams).
* Tasks make their per-step calls over the TCP step-call socket (`transport.tcp_stream`,
  loopback on one host); with `--grpc-only`, `remote_scalar_read_us_grpc_only` and
  `fetch_MBps_grpc_only` / `push_MBps_grpc_only` repeat the read and the transfers with
  `disable_local_rpc` and `disable_shared_memory` (every byte through gRPC).
* `training` (with `--training`): async between-graph training of the digits MLP
  (batch 128, SGD lr 0.1), 2 workers x `--train-steps` steps, with 1 and with 2 ps.

* `security` (with `--auth` and/or `--tls`): the read and a 16 MiB fetch on clusters with
  a token, and with TLS + token, against a plain one (see `cluster_security.py`); these
  clusters are on 127.0.0.1 even with `--netns`.

Run: `python benchmarks/cluster.py [--reps 3] [--reads 2000] [--no-shm] [--grpc-only]
[--training] [--netns] [--auth] [--tls]`.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

import tensorweave as tf
from tensorweave.testing.cluster import pick_unused_port
from tensorweave.testing.processes import ServerProcess, spec_string

# With `--netns`: the stand-in hosts (ps tasks on host 0, workers on host 1, this client in
# the root namespace), else None (everything on 127.0.0.1).
HOSTS: list = [None]


def _cluster(num_ps: int, num_workers: int) -> dict[str, list[str]]:
    hosts = HOSTS[0]
    if hosts is not None:
        return {
            "ps": [f"{hosts.address(0)}:{2222 + i}" for i in range(num_ps)],
            "worker": [f"{hosts.address(1)}:{2222 + i}" for i in range(num_workers)],
        }
    return _local_cluster(num_ps, num_workers)


def _local_cluster(num_ps: int, num_workers: int) -> dict[str, list[str]]:
    return {
        "ps": [f"localhost:{pick_unused_port()}" for _ in range(num_ps)],
        "worker": [f"localhost:{pick_unused_port()}" for _ in range(num_workers)],
    }


def _start(cluster: dict[str, list[str]]) -> list[ServerProcess]:
    spec = spec_string(cluster)
    hosts = HOSTS[0]

    def prefix(job: str) -> tuple[str, ...]:
        return () if hosts is None else tuple(hosts.command(0 if job == "ps" else 1, []))

    return [ServerProcess(spec, job, i, argv_prefix=prefix(job))
            for job, addrs in cluster.items() for i in range(len(addrs))]


def _stop(procs: list[ServerProcess]) -> None:
    # NOTE: SIGTERM (SIGKILL after 10 s): a stopped server removes its /dev/shm files.
    for p in procs:
        if p.proc.poll() is None:
            p.proc.terminate()
    for p in procs:
        p.terminate()


def bench_startup(reps: int) -> dict:
    times = []
    for _ in range(reps):
        cluster = _cluster(1, 2)
        g = tf.Graph()
        with g.as_default():
            with tf.device("/job:ps/task:0"):
                c = tf.constant(1.0)
        t0 = time.perf_counter()
        procs = _start(cluster)
        try:
            with tf.Session("grpc://" + cluster["worker"][0], graph=g) as sess:
                sess.run(c)
            times.append(time.perf_counter() - t0)
        finally:
            _stop(procs)
    return {"median_s": round(float(np.median(times)), 3), "reps": reps}


def _latency(fn, runs: int) -> dict:
    for _ in range(max(runs // 10, 50)):
        fn()
    samples = np.empty(runs)
    for i in range(runs):
        t0 = time.perf_counter()
        fn()
        samples[i] = time.perf_counter() - t0
    us = samples * 1e6
    return {"median_us": round(float(np.median(us)), 1),
            "p99_us": round(float(np.percentile(us, 99)), 1), "runs": runs}


def bench_read_grpc_only(worker: str, runs: int) -> dict:
    """The remote scalar read with the step-call socket off (gRPC only)."""
    config = tf.ConfigProto()
    config.tensorweave.disable_local_rpc = True
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(1.0, name="scalar_grpc")
    with tf.Session("grpc://" + worker, graph=g, config=config) as sess:
        sess.run(v.initializer)
        return {"remote_scalar_read_us_grpc_only": _latency(lambda: sess.run(v), runs)}


def bench_roundtrip_and_read(worker: str, ps: str, runs: int) -> dict:
    import grpc

    from tensorweave.protos import worker_pb2

    channel = grpc.insecure_channel(ps)
    get_status = channel.unary_unary("/tensorflow.WorkerService/GetStatus")
    request = worker_pb2.GetStatusRequest().SerializeToString()
    raw = _latency(lambda: get_status(request), runs)
    channel.close()
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(1.0, name="scalar")
    with tf.Session("grpc://" + worker, graph=g) as sess:
        sess.run(v.initializer)
        read = _latency(lambda: sess.run(v), runs)
    return {"raw_grpc_roundtrip_us": raw, "remote_scalar_read_us": read}


def bench_transfer(worker: str, sizes_mib: list[int], reps: int,
                   shared_memory: bool = True, suffix: str = "") -> dict:
    config = tf.ConfigProto()
    config.tensorweave.disable_shared_memory = not shared_memory
    config.tensorweave.disable_local_rpc = suffix == "_grpc_only"
    suffix = suffix or ("" if shared_memory else "_no_shm")
    fetch, push = {}, {}
    for mib in sizes_mib:
        n = mib * (1 << 20) // 4
        g = tf.Graph()
        with g.as_default():
            with tf.device("/job:ps/task:0"):
                v = tf.Variable(tf.zeros([n]), name=f"big_{mib}{suffix}")
                p = tf.placeholder(tf.float32, [n])
                assign = v.assign(p).op
        data = np.random.default_rng(0).random(n, dtype=np.float32)
        with tf.Session("grpc://" + worker, graph=g, config=config) as sess:
            sess.run(v.initializer)
            sess.run(assign, {p: data})
            fetch[f"{mib}MiB"] = _throughput(lambda s=sess, v=v: s.run(v), n * 4, reps)
            push[f"{mib}MiB"] = _throughput(
                lambda s=sess, a=assign, f={p: data}: s.run(a, f), n * 4, reps)
    return {f"fetch_MBps{suffix}": fetch, f"push_MBps{suffix}": push}


def _throughput(fn, nbytes: int, reps: int) -> float:
    fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return round(nbytes / float(np.median(times)) / 1e6, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--reads", type=int, default=2000)
    parser.add_argument("--sizes", default="1,16,128", help="MiB, comma separated")
    parser.add_argument("--no-shm", action="store_true",
                        help="also measure transfers with shared memory disabled (pure gRPC)")
    parser.add_argument("--grpc-only", action="store_true",
                        help="also measure the read and transfers through gRPC alone")
    parser.add_argument("--training", action="store_true", help="also run training workloads")
    parser.add_argument("--train-steps", type=int, default=1000)
    parser.add_argument("--netns", action="store_true",
                        help="cross-host: ps and workers in two network namespaces (root)")
    parser.add_argument("--auth", action="store_true", help="also measure the token check")
    parser.add_argument("--tls", action="store_true", help="also measure TLS (with a token)")
    args = parser.parse_args()
    if not args.netns:
        result = run(args)
        if args.training:
            result["training"] = _training(args.train_steps, None)
        if args.auth or args.tls:
            result["security"] = _security(args)
        print(json.dumps(result, indent=2))
        return
    from tensorweave.deploy import netns

    ok, why = netns.available()
    if not ok:
        raise SystemExit(f"--netns unavailable: {why}")
    with netns.Hosts(2) as hosts:
        HOSTS[0] = hosts
        result = run(args)
    if args.training:  # NOTE: its launches make their own namespaces (one set at a time)
        result["training"] = _training(args.train_steps, "per-job")
    if args.auth or args.tls:
        result["security"] = _security(args)
    print(json.dumps(result, indent=2))


def run(args: argparse.Namespace) -> dict:
    """Runs the workloads (training aside) and returns the JSON record."""
    result: dict = {"benchmark": "cluster", "cross_host": HOSTS[0] is not None,
                    "startup_s": bench_startup(args.reps)}
    cluster = _cluster(1, 2)
    procs = _start(cluster)
    try:
        for p in procs:
            p.wait_ready()
        result.update(bench_roundtrip_and_read(cluster["worker"][0], cluster["ps"][0],
                                               args.reads))
        sizes = [int(s) for s in args.sizes.split(",") if s]
        from tensorweave.distributed.transport import shm

        result["shared_memory"] = shm.available()
        result.update(bench_transfer(cluster["worker"][0], sizes, args.reps))
        if args.no_shm:
            result.update(bench_transfer(cluster["worker"][0], sizes, args.reps, False))
        if args.grpc_only:
            result.update(bench_read_grpc_only(cluster["worker"][0], args.reads))
            result.update(bench_transfer(cluster["worker"][0], sizes, args.reps, False,
                                         "_grpc_only"))
    finally:
        _stop(procs)
    return result


def _training(steps: int, netns: str | None) -> dict:
    from benchmarks.cluster_training import bench_training

    return {f"{n}ps": bench_training(n, 2, steps, netns=netns) for n in (1, 2)}


def _security(args: argparse.Namespace) -> dict:
    from benchmarks.cluster_security import bench_security

    modes = [m for m, on in (("auth", args.auth), ("tls", args.tls)) if on]
    # On 127.0.0.1 even with --netns (the certificates name localhost, and the modes'
    # clusters run side by side).
    return bench_security(modes, _local_cluster, args.reads, args.reps)


if __name__ == "__main__":
    main()
