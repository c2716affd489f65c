"""Deployment: run a ps/worker trainer locally (`launch`) or on Kubernetes (`k8s_manifests`).

This is the launcher layer: like `cli/`, it may read environment variables.

The names below load with their module on first use (PEP 562), so `tensorweave --help`
and `tensorweave server` do not import yaml, cryptography or the launcher.
"""

from __future__ import annotations

import importlib

# NOTE: name -> the submodule defining it; `from tensorweave.deploy import launch` still works.
_EXPORTS = {
    "K8sConfig": "k8s", "host_list_note": "k8s", "k8s_manifests": "k8s", "render_k8s": "k8s",
    "LaunchResult": "launcher", "TaskResult": "launcher", "launch": "launcher",
    "run_plan": "launcher",
    "PLACEHOLDERS": "plan", "ClusterPlan": "plan", "TaskSpec": "plan",
    "format_dry_run": "plan", "make_tf_config": "plan", "plan_cluster": "plan",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'tensorweave.deploy' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"tensorweave.deploy.{module}"), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(list(globals()) + __all__)
