"""A network partition: the ps runs in its own network namespace, joined to the workers by
a veth pair; the link is cut for 5 s during training and restored. Needs root and
`ip netns` (skipped otherwise)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time

import pytest
from trainer_procs import (
    READY_S,
    TRAINER,
    TrainerProcess,
    final_model_accuracy,
    global_step_at_least,
)

pytestmark = [pytest.mark.chaos, pytest.mark.slow, pytest.mark.timeout(240)]

_WAIT_S = 90.0


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=10)


def _netns_usable() -> bool:
    if os.geteuid() != 0 or shutil.which("ip") is None:
        return False
    probe = f"twprobe{os.getpid()}"
    try:
        _ip("netns", "add", probe)
        _ip("netns", "del", probe)
    except (subprocess.CalledProcessError, OSError):
        return False
    return True


@pytest.fixture
def partitioned_link():
    """(netns name, host-side link, host IP, ps IP) of a fresh namespace and veth pair."""
    if not _netns_usable():
        pytest.skip("needs root and network namespaces (ip netns)")
    tag = os.getpid() % 200 + 20
    ns, host_if, ns_if = f"twps{tag}", f"twh{tag}", f"twn{tag}"
    host_ip, ps_ip = f"10.231.{tag}.1", f"10.231.{tag}.2"
    _ip("netns", "add", ns)
    try:
        _ip("link", "add", host_if, "type", "veth", "peer", "name", ns_if)
        _ip("link", "set", ns_if, "netns", ns)
        _ip("addr", "add", f"{host_ip}/30", "dev", host_if)
        _ip("link", "set", host_if, "up")
        _ip("netns", "exec", ns, "ip", "addr", "add", f"{ps_ip}/30", "dev", ns_if)
        _ip("netns", "exec", ns, "ip", "link", "set", ns_if, "up")
        _ip("netns", "exec", ns, "ip", "link", "set", "lo", "up")
        # NOTE: while the link is down its connected route is gone; without this the
        # workers' packets to the ps would follow the default route off this machine.
        _ip("route", "add", "blackhole", f"10.231.{tag}.0/30", "metric", "1000")
        yield ns, host_if, host_ip, ps_ip
    finally:
        subprocess.run(["ip", "route", "del", "blackhole", f"10.231.{tag}.0/30", "metric", "1000"],
                       capture_output=True, timeout=10)
        subprocess.run(["ip", "link", "del", host_if], capture_output=True, timeout=10)
        subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=10)


def _free_port(host: str) -> int:
    import socket

    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def test_ps_partitioned_for_5s_training_recovers(partitioned_link):
    ns, host_if, host_ip, ps_ip = partitioned_link
    ps_hosts = f"{ps_ip}:2222"
    worker_hosts = ",".join(f"{host_ip}:{_free_port(host_ip)}" for _ in range(2))
    flags = [f"--ps_hosts={ps_hosts}", f"--worker_hosts={worker_hosts}"]
    procs = [TrainerProcess(["-c", "import os,sys; os.execvp('ip', ['ip', 'netns', 'exec', "
                             f"'{ns}', sys.executable, '{TRAINER}', *sys.argv[1:]])",
                             *flags, "--job_name=ps", "--task_index=0"], "ps 0")]
    try:
        procs[0].wait_for(lambda line: "ps 0: serving at" in line, READY_S)
        workers = [TrainerProcess([TRAINER, *flags, "--job_name=worker", f"--task_index={i}",
                                   "--train_steps", "1200", "--log_every", "5"],
                                  f"worker {i}") for i in range(2)]
        procs += workers
        workers[0].wait_for(global_step_at_least(100), _WAIT_S)
        _ip("link", "set", host_if, "down")
        cut_at = max(workers[0].global_steps())
        time.sleep(5.0)  # NOTE: the fault itself: the ps unreachable for 5 s
        during = max(workers[0].global_steps())
        _ip("link", "set", host_if, "up")
        assert during - cut_at <= 10, (cut_at, during)  # no progress without the ps
        for w in workers:
            assert w.wait(_WAIT_S) == 0, w.output
        records = {i: w.records()[i] for i, w in enumerate(workers)}
        assert final_model_accuracy(records) >= 0.95, records
    finally:
        for p in reversed(procs):
            p.kill()
