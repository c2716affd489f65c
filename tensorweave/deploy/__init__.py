"""Deployment: run a ps/worker trainer locally (`launch`) or on Kubernetes (`k8s_manifests`).

This is the launcher layer: like `cli/`, it may read environment variables.
"""

from __future__ import annotations

from tensorweave.deploy.k8s import K8sConfig, host_list_note, k8s_manifests, render_k8s
from tensorweave.deploy.launcher import LaunchResult, TaskResult, launch, run_plan
from tensorweave.deploy.plan import (
    PLACEHOLDERS,
    ClusterPlan,
    TaskSpec,
    format_dry_run,
    make_tf_config,
    plan_cluster,
)

__all__ = [
    "PLACEHOLDERS",
    "ClusterPlan",
    "K8sConfig",
    "LaunchResult",
    "TaskResult",
    "TaskSpec",
    "format_dry_run",
    "host_list_note",
    "k8s_manifests",
    "launch",
    "make_tf_config",
    "plan_cluster",
    "render_k8s",
    "run_plan",
]
