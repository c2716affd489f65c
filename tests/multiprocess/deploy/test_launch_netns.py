"""`tensorweave launch --netns`: the trainer runs with its ps and workers on separate stand-in
hosts (network namespaces), which are removed afterwards. Skipped without root."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tensorweave.deploy import netns

pytestmark = [pytest.mark.slow, pytest.mark.timeout(400)]

OK, WHY = netns.available()


@pytest.mark.skipif(not OK, reason=f"network namespaces unavailable: {WHY}")
@pytest.mark.parametrize("layout, flags", [("per-job", ()), ("per-task", ()),
                                           ("per-job", ("--tls",))])
def test_trainer_across_namespaces(layout, flags, tmp_path):
    """With the default generated token, and with TLS (a certificate naming the hosts)."""
    proc = subprocess.run(
        [sys.executable, "-m", "tensorweave", "launch", "--netns", layout, *flags, "--ps", "1",
         "--workers", "2", "--", sys.executable, "examples/trainer.py", "--train_steps", "300"],
        capture_output=True, text=True, timeout=360,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("test accuracy") == 2, proc.stdout
    net = re.search(r"started ps 0 at 10\.231\.(\d+)\.", proc.stdout)
    assert net, proc.stdout  # the task addresses are the namespaces'
    after = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert f"tw{net.group(1)}h" not in after  # this launch's hosts are removed
    links = subprocess.run(["ip", "link", "show"], capture_output=True, text=True).stdout
    assert f"tw{net.group(1)}br" not in links
