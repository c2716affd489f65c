"""`tensorweave k8s`: headless Services + Indexed Jobs, DNS names, TF_CONFIG templates."""

from __future__ import annotations

import json

import pytest
import yaml

from tensorweave.cli.main import main
from tensorweave.deploy.k8s import K8sConfig, host_list_note, k8s_manifests, render_k8s
from tensorweave.distributed.cluster_resolver import (
    HostListClusterResolver,
    TFConfigClusterResolver,
)
from tensorweave.distributed.cluster_spec import ClusterSpec

_ANNOTATION = "metadata.annotations['batch.kubernetes.io/job-completion-index']"


def _dns(job, i, name="trainer", ns="default", port=2222):
    return f"{name}-{job}-{i}.{name}-{job}.{ns}.svc:{port}"


def _docs(text):
    docs = list(yaml.safe_load_all(text))
    assert all(isinstance(doc, dict) for doc in docs)
    return docs


def _by_kind(docs, kind):
    return {doc["metadata"]["name"]: doc for doc in docs if doc["kind"] == kind}


def _env(container):
    return {e["name"]: e for e in container["env"]}


def _expand(text, env):
    """The kubelet's $(VAR) expansion, for the variables the manifests define."""
    for name, value in env.items():
        text = text.replace(f"$({name})", value)
    return text


@pytest.fixture
def rendered(capsys):
    argv = ["k8s", "--ps", "2", "--workers", "3", "--image", "reg.example/trainer:1"]
    assert main([*argv, "--", "python", "trainer.py", "--steps=10"]) == 0
    return capsys.readouterr().out


def test_kinds_names_and_order(rendered):
    docs = _docs(rendered)
    assert [(d["kind"], d["metadata"]["name"]) for d in docs] == [
        ("Secret", "trainer-cluster-token"),
        ("Service", "trainer-ps"),
        ("Job", "trainer-ps"),
        ("Service", "trainer-worker"),
        ("Job", "trainer-worker"),
    ]
    assert {d["apiVersion"] for d in docs if d["kind"] == "Job"} == {"batch/v1"}
    assert all(d["metadata"]["namespace"] == "default" for d in docs)


def test_headless_services_select_their_job(rendered):
    docs = _docs(rendered)
    services, jobs = _by_kind(docs, "Service"), _by_kind(docs, "Job")
    for job in ("ps", "worker"):
        spec = services[f"trainer-{job}"]["spec"]
        assert spec["clusterIP"] == "None"
        assert spec["publishNotReadyAddresses"] is True
        assert spec["ports"] == [{"name": "grpc", "port": 2222, "targetPort": 2222}]
        pod_labels = jobs[f"trainer-{job}"]["spec"]["template"]["metadata"]["labels"]
        assert spec["selector"].items() <= pod_labels.items()
        other = "worker" if job == "ps" else "ps"
        other_labels = jobs[f"trainer-{other}"]["spec"]["template"]["metadata"]["labels"]
        assert not spec["selector"].items() <= other_labels.items()


def test_indexed_jobs(rendered):
    jobs = _by_kind(_docs(rendered), "Job")
    for job, count in (("ps", 2), ("worker", 3)):
        spec = jobs[f"trainer-{job}"]["spec"]
        assert spec["completionMode"] == "Indexed"
        assert spec["completions"] == spec["parallelism"] == count
        assert spec["backoffLimit"] == 0
        pod = spec["template"]["spec"]
        assert pod["subdomain"] == f"trainer-{job}"  # hostnames trainer-<job>-<i> + subdomain
        assert pod["restartPolicy"] == "Never"
        (container,) = pod["containers"]
        assert container["image"] == "reg.example/trainer:1"
        assert container["command"] == ["python", "trainer.py", "--steps=10"]
        assert container["ports"] == [{"name": "grpc", "containerPort": 2222}]


def test_tf_config_lists_every_dns_name_and_is_json_per_index(rendered):
    jobs = _by_kind(_docs(rendered), "Job")
    expected = {
        "ps": [_dns("ps", i) for i in range(2)],
        "worker": [_dns("worker", i) for i in range(3)],
    }
    for job, count in (("ps", 2), ("worker", 3)):
        (container,) = jobs[f"trainer-{job}"]["spec"]["template"]["spec"]["containers"]
        env = _env(container)
        names = [e["name"] for e in container["env"]]
        # $(VAR) only expands variables defined earlier in the list.
        assert names.index("TF_TASK_INDEX") < names.index("TF_CONFIG")
        assert env["TF_TASK_INDEX"]["valueFrom"]["fieldRef"]["fieldPath"] == _ANNOTATION
        assert env["TF_JOB_NAME"]["value"] == job
        assert env["PYTHONUNBUFFERED"]["value"] == "1"
        template = env["TF_CONFIG"]["value"]
        for index in range(count):
            tf_config = json.loads(_expand(template, {"TF_TASK_INDEX": str(index)}))
            assert tf_config == {"cluster": expected, "task": {"type": job, "index": index}}
            resolver = TFConfigClusterResolver(tf_config=tf_config, rpc_layer="grpc")
            assert resolver.master() == f"grpc://{expected[job][index]}"


def test_placeholders_and_seed_flags_use_the_index_variable():
    config = K8sConfig(image="img", num_ps=1, num_workers=2, seed_flags=True, port=3333)
    command = ["python", "t.py", "--job={job_name}", "--i={task_index}", "{cluster_spec}"]
    docs = k8s_manifests(command, config)
    worker_job = _by_kind(docs, "Job")["trainer-worker"]
    (container,) = worker_job["spec"]["template"]["spec"]["containers"]
    ps_hosts = _dns("ps", 0, port=3333)
    worker_hosts = f"{_dns('worker', 0, port=3333)},{_dns('worker', 1, port=3333)}"
    assert container["command"] == [
        "python",
        "t.py",
        "--job=worker",
        "--i=$(TF_TASK_INDEX)",
        f"ps|{ps_hosts},worker|{worker_hosts.replace(',', ';')}",
        f"--ps_hosts={ps_hosts}",
        f"--worker_hosts={worker_hosts}",
        "--job_name=worker",
        "--task_index=$(TF_TASK_INDEX)",
    ]
    assert worker_job["spec"]["template"]["spec"]["containers"][0]["ports"] == [
        {"name": "grpc", "containerPort": 3333}
    ]


def test_name_namespace_and_no_ps():
    config = K8sConfig(image="img", num_ps=0, num_workers=2, name="mnist", namespace="ml")
    text = render_k8s("python t.py", config)
    docs = _docs(text)
    assert [(d["kind"], d["metadata"]["name"]) for d in docs] == [
        ("Service", "mnist-worker"),
        ("Job", "mnist-worker"),
    ]
    assert all(d["metadata"]["namespace"] == "ml" for d in docs)
    (container,) = docs[1]["spec"]["template"]["spec"]["containers"]
    tf_config = json.loads(_expand(_env(container)["TF_CONFIG"]["value"], {"TF_TASK_INDEX": "1"}))
    assert tf_config["cluster"] == {
        "worker": [_dns("worker", 0, "mnist", "ml"), _dns("worker", 1, "mnist", "ml")]
    }


def test_header_and_host_list_note_give_the_same_dns_names():
    config = K8sConfig(image="img", num_ps=1, num_workers=2)
    text = render_k8s(["python", "t.py"], config)
    header = text.split("---\n", 1)[0]
    assert all(line.startswith("#") for line in header.splitlines())
    for address in config.cluster()["worker"] + config.cluster()["ps"]:
        assert address in header
    assert ("kubectl -n default delete job,service,secret -l app.kubernetes.io/name=trainer"
            in header)
    note = host_list_note(config)
    namespace = {}
    env = {"TF_JOB_NAME": "worker", "TF_TASK_INDEX": "1"}
    code = note.replace("import os\n", "").replace("os.environ", "env")
    exec(code, {"env": env}, namespace)  # our own generated snippet
    resolver = namespace["resolver"]
    assert isinstance(resolver, HostListClusterResolver)
    assert namespace["cluster"] == ClusterSpec(config.cluster())
    assert resolver.master() == f"grpc://{_dns('worker', 1)}"


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"image": " "}, "--image"),
        ({"name": "Trainer"}, "DNS-1035"),
        ({"name": "1trainer"}, "DNS-1035"),
        ({"name": "a" * 60}, "over 63"),
        ({"namespace": "ML"}, "DNS-1123"),
        ({"port": 0}, "--port"),
        ({"port": 70000}, "--port"),
        ({"num_workers": 0}, "--workers"),
        ({"num_ps": -1}, "--ps"),
        ({"backoff_limit": -1}, "--backoff-limit"),
    ],
)
def test_config_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        K8sConfig(**{"image": "img", **kwargs})


def test_cli_errors_exit_2(capsys):
    assert main(["k8s", "--image", "img", "--name", "Bad", "--", "t"]) == 2
    assert "tensorweave k8s: --name 'Bad'" in capsys.readouterr().err
    assert main(["k8s", "--image", "img"]) == 2
    assert "No command" in capsys.readouterr().err


def test_generated_token_secret_is_mounted_by_every_pod(rendered):
    docs = _docs(rendered)
    secret = docs[0]
    token = secret["stringData"]["token"]
    assert len(token) >= 40 and secret["type"] == "Opaque"
    for job in (d for d in docs if d["kind"] == "Job"):
        pod = job["spec"]["template"]["spec"]
        assert pod["volumes"] == [{"name": "cluster-token", "secret": {
            "secretName": "trainer-cluster-token", "defaultMode": 0o400}}]
        container = pod["containers"][0]
        assert container["volumeMounts"][0]["mountPath"] == "/var/run/tensorweave"
        env = {e["name"]: e.get("value") for e in container["env"]}
        assert env["TENSORWEAVE_AUTH_TOKEN_FILE"] == "/var/run/tensorweave/token"
        assert token not in str(container)


def test_insecure_has_no_secret(capsys):
    argv = ["k8s", "--ps", "1", "--workers", "1", "--image", "img", "--insecure"]
    assert main([*argv, "--", "python", "trainer.py"]) == 0
    docs = _docs(capsys.readouterr().out)
    assert "Secret" not in [d["kind"] for d in docs]
