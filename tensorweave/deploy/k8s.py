"""Kubernetes manifests for a ps/worker trainer (`tensorweave k8s`).

TensorFlow 1.x left job setup to cluster managers (jhseu in #8344) and shipped only test
scripts (`tools/dist_test/scripts/k8s_tensorflow*.py`); the community settled on kubeflow's
TFJob, which injects `TF_CONFIG` (reference §4.9). This module writes plain manifests that
do the same with built-in kinds, per job (`ps`, `worker`):

* a headless `Service` `<name>-<job>` (`clusterIP: None`, selecting that job's pods, the
  gRPC port, `publishNotReadyAddresses: true` so that peers resolve while a pod starts,
  before it is Ready: TF's CreateSession waits for every task, §4.2);
* an **Indexed `Job`** `<name>-<job>` (`completionMode: Indexed`, completions =
  parallelism = task count, `subdomain` = the Service). Kubernetes names each pod's host
  `<name>-<job>-<index>`, so task i of a job is
  `<name>-<job>-<i>.<name>-<job>.<namespace>.svc:<port>` for as long as the Job lives.

Why an Indexed Job for the ps too, not a StatefulSet (whose `<sts>-<ordinal>` names behind
a headless Service would look the same):

* a StatefulSet forces `restartPolicy: Always`, so it silently restarts a crashed ps with
  its variables reset (TF #2461), and it would also restart a ps that exits 0 when told
  to (the shared-queue shutdown trick of §4.1), never letting the training end; a Job
  shows the failure and lets such a ps complete;
* both jobs then share one pod template and one index source: the Job controller's
  `batch.kubernetes.io/job-completion-index` annotation (what `JOB_COMPLETION_INDEX`
  holds), whereas a StatefulSet ordinal must be parsed from the host name (or read from
  the `apps.kubernetes.io/pod-index` label, Kubernetes >= 1.28).

The cost is the same with either kind: TensorFlow's ps never exit, so the ps Job never
completes; delete it once the worker Job has (the YAML header gives the commands).
`backoffLimit` defaults to 0 with `restartPolicy: Never`: one failed task fails its Job,
like `tensorweave launch`; recovery is the orchestrator's job (checkpoint and restart).

TF_CONFIG comes without a shell wrapper, so any image works (no `sh` needed): the
container's env first defines `TF_TASK_INDEX` from the completion-index annotation
(downward API), then `TF_CONFIG` as JSON text containing `$(TF_TASK_INDEX)`, which the
kubelet expands (dependent environment variables), and `TF_JOB_NAME`. The command's
placeholders are substituted as in `launch` (`{task_index}` becomes `$(TF_TASK_INDEX)`,
which the kubelet also expands in `command`), and `seed_flags=True` appends the seed
trainer's flags. Any other `$(VAR)` in the command is expanded by Kubernetes too
(`$$(VAR)` escapes it).

Code that does not read TF_CONFIG can use the same DNS names with
`tf.distribute.cluster_resolver.HostListClusterResolver` (see `host_list_note`).
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from tensorweave.deploy.plan import PS, WORKER, check_counts, parse_command, task_argv
from tensorweave.distributed.transport.security import ENV_TOKEN_FILE

INDEX_ENV = "TF_TASK_INDEX"
INDEX_REF = f"$({INDEX_ENV})"
JOB_ENV = "TF_JOB_NAME"
COMPLETION_INDEX_ANNOTATION = "batch.kubernetes.io/job-completion-index"
NAME_LABEL = "app.kubernetes.io/name"
JOB_LABEL = "app.kubernetes.io/component"
_DNS_1035_LABEL = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
_DNS_1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_MAX_LABEL = 63


@dataclass(frozen=True)
class K8sConfig:
    """What to deploy and where.

    Attributes:
      image: str, the container image with the trainer and tensorweave installed.
      num_ps: int >= 0, parameter server tasks.
      num_workers: int >= 1, worker tasks.
      name: str, DNS-1035 label prefixing every object (`<name>-ps`, `<name>-worker`).
      namespace: str, DNS-1123 label.
      port: int, the gRPC port of every task (each pod has its own IP).
      seed_flags: bool, append `--ps_hosts --worker_hosts --job_name --task_index`.
      backoff_limit: int >= 0, the Jobs' `backoffLimit`.

    Raises:
      ValueError: an empty image, bad counts, a name or namespace that is not a DNS label
        (or makes pod host names longer than 63 characters), a port outside 1..65535.
    """

    image: str
    num_ps: int = 1
    num_workers: int = 1
    name: str = "trainer"
    namespace: str = "default"
    port: int = 2222
    seed_flags: bool = False
    backoff_limit: int = 0
    auth_token: str | None = None  # security: the cluster secret (None: no Secret)

    def __post_init__(self) -> None:
        check_counts(self.num_ps, self.num_workers)
        if not self.image.strip():
            raise ValueError("--image must name a container image")
        if not _DNS_1035_LABEL.fullmatch(self.name):
            raise ValueError(f"--name {self.name!r} must be a DNS-1035 label, e.g. 'trainer'")
        if not _DNS_1123_LABEL.fullmatch(self.namespace) or len(self.namespace) > _MAX_LABEL:
            raise ValueError(f"--namespace {self.namespace!r} must be a DNS-1123 label")
        longest = max(
            len(f"{self.name}-{job}-{count - 1}") for job, count in self.job_counts().items()
        )
        if longest > _MAX_LABEL:
            raise ValueError(f"--name {self.name!r} makes pod host names over 63 characters")
        if not 0 < self.port < 65536:
            raise ValueError(f"--port must be in 1..65535, got {self.port}")
        if self.backoff_limit < 0:
            raise ValueError(f"--backoff-limit must be >= 0, got {self.backoff_limit}")

    def job_counts(self) -> dict[str, int]:
        """{job: task count} of the jobs that have tasks, ps first."""
        counts = {PS: self.num_ps, WORKER: self.num_workers}
        return {job: count for job, count in counts.items() if count}

    def object_name(self, job: str) -> str:
        """`<name>-<job>`: the Service, the Job and the pods' subdomain."""
        return f"{self.name}-{job}"

    def task_host(self, job: str, index: int) -> str:
        """`<name>-<job>-<i>.<name>-<job>.<namespace>.svc` (no port)."""
        service = self.object_name(job)
        return f"{service}-{index}.{service}.{self.namespace}.svc"

    def cluster(self) -> dict[str, list[str]]:
        """{job: ["<host>:<port>", ...]}: the TF_CONFIG cluster of every task."""
        return {
            job: [f"{self.task_host(job, i)}:{self.port}" for i in range(count)]
            for job, count in self.job_counts().items()
        }


def tf_config_template(config: K8sConfig, job: str) -> str:
    """TF_CONFIG JSON of `job` with `$(TF_TASK_INDEX)` for the index (JSON once expanded)."""
    marker = "__TF_TASK_INDEX__"
    text = json.dumps({"cluster": config.cluster(), "task": {"type": job, "index": marker}})
    return text.replace(json.dumps(marker), INDEX_REF)


def _labels(config: K8sConfig, job: str) -> dict[str, str]:
    return {NAME_LABEL: config.name, JOB_LABEL: job}


def _metadata(config: K8sConfig, job: str) -> dict[str, Any]:
    labels = {**_labels(config, job), "app.kubernetes.io/managed-by": "tensorweave"}
    return {"name": config.object_name(job), "namespace": config.namespace, "labels": labels}


def service_manifest(config: K8sConfig, job: str) -> dict[str, Any]:
    """The headless Service giving `job`'s pods their DNS names."""
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": _metadata(config, job),
        "spec": {
            "clusterIP": "None",
            "publishNotReadyAddresses": True,
            "selector": _labels(config, job),
            "ports": [{"name": "grpc", "port": config.port, "targetPort": config.port}],
        },
    }


def _container(config: K8sConfig, command: Sequence[str], job: str) -> dict[str, Any]:
    argv = task_argv(command, config.cluster(), job, INDEX_REF, config.seed_flags)
    index_source = f"metadata.annotations['{COMPLETION_INDEX_ANNOTATION}']"
    return {
        "name": job,
        "image": config.image,
        "command": argv,
        "ports": [{"name": "grpc", "containerPort": config.port}],
        "env": [
            # Defined before TF_CONFIG: the kubelet expands $(VAR) of earlier entries only.
            {"name": INDEX_ENV, "valueFrom": {"fieldRef": {"fieldPath": index_source}}},
            {"name": "TF_CONFIG", "value": tf_config_template(config, job)},
            {"name": JOB_ENV, "value": job},
            {"name": "PYTHONUNBUFFERED", "value": "1"},
            *_token_env(config),
        ],
        **_token_mount(config),
    }


SECRET_DIR = "/var/run/tensorweave"


def secret_name(config: K8sConfig) -> str:
    """The Secret holding the cluster token."""
    return f"{config.name}-cluster-token"


def secret_manifest(config: K8sConfig) -> dict[str, Any]:
    """An Opaque Secret with the cluster token (`kubectl apply` stores it; the pods mount
    it read-only and name it in `TENSORWEAVE_AUTH_TOKEN_FILE`)."""
    return {
        "apiVersion": "v1", "kind": "Secret", "type": "Opaque",
        "metadata": {"name": secret_name(config), "namespace": config.namespace,
                     "labels": {NAME_LABEL: config.name}},
        "stringData": {"token": config.auth_token},
    }


def _token_env(config: K8sConfig) -> list[dict[str, Any]]:
    if not config.auth_token:
        return []
    return [{"name": ENV_TOKEN_FILE, "value": f"{SECRET_DIR}/token"}]


def _token_mount(config: K8sConfig) -> dict[str, Any]:
    if not config.auth_token:
        return {}
    return {"volumeMounts": [{"name": "cluster-token", "mountPath": SECRET_DIR,
                              "readOnly": True}]}


def _token_volumes(config: K8sConfig) -> dict[str, Any]:
    if not config.auth_token:
        return {}
    return {"volumes": [{"name": "cluster-token", "secret": {
        "secretName": secret_name(config), "defaultMode": 0o400}}]}


def job_manifest(config: K8sConfig, command: Sequence[str], job: str) -> dict[str, Any]:
    """The Indexed Job running `job`'s tasks, one pod per index."""
    count = config.job_counts()[job]
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": _metadata(config, job),
        "spec": {
            "completionMode": "Indexed",
            "completions": count,
            "parallelism": count,
            "backoffLimit": config.backoff_limit,
            "template": {
                "metadata": {"labels": _labels(config, job)},
                "spec": {
                    "subdomain": config.object_name(job),
                    "restartPolicy": "Never",
                    "containers": [_container(config, command, job)],
                    **_token_volumes(config),
                },
            },
        },
    }


def k8s_manifests(command: str | Sequence[str], config: K8sConfig) -> list[dict[str, Any]]:
    """Every object, per job (ps first): its Service, then its Indexed Job.

    Args:
      command: str (split like a shell would) or list of str, run as the container's
        `command` (the image's `python`, not `sys.executable`).
      config: K8sConfig.

    Raises:
      ValueError: an empty command.
    """
    argv = parse_command(command)
    manifests = [secret_manifest(config)] if config.auth_token else []
    for job in config.job_counts():
        manifests += [service_manifest(config, job), job_manifest(config, argv, job)]
    return manifests


def host_list_note(config: K8sConfig) -> str:
    """Python that builds the same cluster with `HostListClusterResolver` (same DNS names)."""
    hosts = ";".join(
        f"{job}={','.join(config.task_host(job, i) for i in range(count))}"
        for job, count in config.job_counts().items()
    )
    return (
        "import os\n"
        "from tensorweave.distribute import cluster_resolver\n"
        "resolver = cluster_resolver.HostListClusterResolver(\n"
        f'    "{hosts}",\n'
        f"    port={config.port},\n"
        f'    task_type=os.environ["{JOB_ENV}"],\n'
        f'    task_id=int(os.environ["{INDEX_ENV}"]),\n'
        '    rpc_layer="grpc",\n'
        ")\n"
        "cluster = resolver.cluster_spec()  # == TF_CONFIG's cluster"
    )


def _header(command: Sequence[str], config: K8sConfig) -> str:
    ns, name = config.namespace, config.name
    lines = [
        f"tensorweave k8s: {config.num_ps} ps + {config.num_workers} workers running",
        f"  {shlex.join(command)}",
        "Task addresses (TF_CONFIG's cluster):",
        *(
            f"  {job} {i}: {address}"
            for job, addresses in config.cluster().items()
            for i, address in enumerate(addresses)
        ),
        "The ps never exit (as in TensorFlow); once the workers are done, delete everything:",
        f"  kubectl -n {ns} wait --for=condition=complete --timeout=-1s job/{name}-worker",
        f"  kubectl -n {ns} delete job,service,secret -l {NAME_LABEL}={name}",
        "Without TF_CONFIG, the same DNS names through a resolver:",
        *(f"  {line}" for line in host_list_note(config).splitlines()),
    ]
    return "".join(f"# {line}".rstrip() + "\n" for line in lines)


def render_k8s(command: str | Sequence[str], config: K8sConfig) -> str:
    """The multi-document YAML that `tensorweave k8s` prints, after a comment header.

    Raises:
      ValueError: an empty command.
    """
    manifests = k8s_manifests(command, config)
    body = yaml.safe_dump_all(manifests, sort_keys=False, default_flow_style=False, width=1000)
    return _header(parse_command(command), config) + "---\n" + body
