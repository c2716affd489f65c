"""Network namespaces as stand-in hosts: cross-host figures on one machine (`--netns`).

Tasks in separate Linux network namespaces share nothing a same-host fast path could use:
peers' addresses are not the namespace's own (no /dev/shm handoff), so traffic between them
is TCP through the kernel's network stack, as between hosts (without a physical link's
latency and bandwidth limits).

`Hosts(n)` creates namespaces `tw<N>h<i>` (i < n), each with a veth pair whose inner end
`eth0` has the address `10.231.<N>.<i+1>/24` and whose outer end is attached to the bridge
`tw<N>br` in the root namespace; the bridge has `10.231.<N>.254`, so processes of the root
namespace (a benchmark's client) reach every host. `N` (1..250) is derived from the process
ID so that concurrent runs do not collide; the range `10.231.0.0/16` is private and never
routed off this machine. Everything is created on entry and removed on exit (deleting a
namespace deletes its veth pair). It needs root (CAP_NET_ADMIN) and iproute2's `ip`;
`available()` says whether they are there.

Layouts for the launcher: `per-task` (a host per task) and `per-job` (the ps tasks on one
host, the workers on another: the layout of issue 15's cross-host figures).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence

from tensorweave.deploy.plan import (
    PS,
    WORKER,
    ClusterPlan,
    TaskSpec,
    check_counts,
    make_tf_config,
    parse_command,
    resolve_python,
    task_argv,
)

SUBNET_PREFIX = "10.231"
BASE_PORT = 2222
LAYOUTS = ("per-task", "per-job")


def available() -> tuple[bool, str]:
    """(True, "") when namespaces can be made here, else (False, the reason)."""
    if shutil.which("ip") is None:
        return False, "iproute2's `ip` is not installed"
    if os.geteuid() != 0:
        return False, "creating network namespaces needs root"
    probe = f"tw{os.getpid() % 250 + 1}probe"
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if made.returncode != 0:
        return False, f"`ip netns add` failed: {made.stderr.strip()}"
    subprocess.run(["ip", "netns", "delete", probe], capture_output=True)
    return True, ""


def _ip(*args: str, netns: str | None = None) -> None:
    argv = ["ip", *args] if netns is None else ["ip", "netns", "exec", netns, "ip", *args]
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode != 0:
        raise OSError(f"`{' '.join(argv)}` failed: {done.stderr.strip()}")


class Hosts:
    """`count` network namespaces joined by a bridge (see the module docstring).

    Raises:
      OSError: on entry, if a namespace, link or address cannot be created (the partial
        set-up is removed).
    """

    def __init__(self, count: int):
        if count < 1:
            raise ValueError(f"need at least one host, got {count}")
        self.count = count
        self.net = os.getpid() % 250 + 1
        self.bridge = f"tw{self.net}br"
        self.names = [f"tw{self.net}h{i}" for i in range(count)]

    def address(self, i: int) -> str:
        """The IPv4 address of host `i`."""
        return f"{SUBNET_PREFIX}.{self.net}.{i + 1}"

    @property
    def root_address(self) -> str:
        """The root namespace's address on the bridge."""
        return f"{SUBNET_PREFIX}.{self.net}.254"

    def command(self, i: int, argv: Sequence[str]) -> list[str]:
        """`argv` run inside host `i`."""
        return ["ip", "netns", "exec", self.names[i], *argv]

    def __enter__(self) -> Hosts:
        try:
            self._create()
        except BaseException:
            self.remove()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()

    def _create(self) -> None:
        # NOTE: a blackhole behind the bridge's route: should the bridge go away first, no
        # packet for these addresses may follow the default route off this machine.
        _ip("route", "add", "blackhole", f"{SUBNET_PREFIX}.{self.net}.0/24", "metric", "1000")
        _ip("link", "add", self.bridge, "type", "bridge")
        _ip("addr", "add", f"{self.root_address}/24", "dev", self.bridge)
        _ip("link", "set", self.bridge, "up")
        for i, name in enumerate(self.names):
            outer = f"tw{self.net}v{i}"
            _ip("netns", "add", name)
            _ip("link", "add", outer, "type", "veth", "peer", "name", "eth0", "netns", name)
            _ip("link", "set", outer, "master", self.bridge)
            _ip("link", "set", outer, "up")
            _ip("addr", "add", f"{self.address(i)}/24", "dev", "eth0", netns=name)
            _ip("link", "set", "eth0", "up", netns=name)
            _ip("link", "set", "lo", "up", netns=name)

    def remove(self) -> None:
        """Deletes the veth pairs, the namespaces and the bridge (missing ones are skipped).

        The pairs go first and explicitly: a namespace's deletion frees its links only once
        the kernel drops its last reference, so a `Hosts` made right after (same names)
        could find them still there. The blackhole route goes last."""
        for i, name in enumerate(self.names):
            subprocess.run(["ip", "link", "delete", f"tw{self.net}v{i}"], capture_output=True)
            subprocess.run(["ip", "netns", "delete", name], capture_output=True)
        subprocess.run(["ip", "link", "delete", self.bridge], capture_output=True)
        subprocess.run(["ip", "route", "delete", "blackhole", f"{SUBNET_PREFIX}.{self.net}.0/24",
                        "metric", "1000"], capture_output=True)


def host_count(layout: str, num_ps: int, num_workers: int) -> int:
    """How many hosts `layout` needs.

    Raises:
      ValueError: for an unknown layout.
    """
    if layout == "per-task":
        return num_ps + num_workers
    if layout == "per-job":
        return (1 if num_ps else 0) + 1
    raise ValueError(f"unknown --netns layout {layout!r}; choose from {', '.join(LAYOUTS)}")


def plan_in_hosts(
    command: str | Sequence[str],
    num_ps: int,
    num_workers: int,
    hosts: Hosts,
    layout: str,
    with_seed_flags: bool = False,
) -> ClusterPlan:
    """A cluster plan whose tasks run in `hosts` (see `plan.plan_cluster` for the rest).

    Tasks on one host get consecutive ports from 2222.

    Raises:
      ValueError: bad counts, an unknown layout or too few hosts.
    """
    check_counts(num_ps, num_workers)
    if hosts.count < host_count(layout, num_ps, num_workers):
        raise ValueError(f"layout {layout} needs {host_count(layout, num_ps, num_workers)} hosts")
    argv = resolve_python(parse_command(command))
    jobs = [(PS, i) for i in range(num_ps)] + [(WORKER, i) for i in range(num_workers)]
    placement: dict[tuple[str, int], tuple[int, int]] = {}  # task -> (host, port)
    next_port: dict[int, int] = {}
    for n, (job, index) in enumerate(jobs):
        host = n if layout == "per-task" else (0 if job == PS or not num_ps else 1)
        next_port[host] = next_port.get(host, BASE_PORT - 1) + 1
        placement[(job, index)] = (host, next_port[host])
    cluster = {
        job: tuple(f"{hosts.address(placement[(job, i)][0])}:{placement[(job, i)][1]}"
                   for i in range(count))
        for job, count in ((PS, num_ps), (WORKER, num_workers)) if count
    }
    tasks = tuple(
        TaskSpec(
            job=job, index=index, address=cluster[job][index],
            argv=tuple(hosts.command(placement[(job, index)][0],
                                     task_argv(argv, cluster, job, index, with_seed_flags))),
            tf_config=make_tf_config(cluster, job, index),
        )
        for job, index in jobs
    )
    return ClusterPlan(cluster=cluster, tasks=tasks)
