"""The cluster definitions of seeds 001 and 002 and the tasks each defines.

Seed 002 builds clusters from dicts with `tf.train.ClusterSpec`, including the trainer's
`--ps_hosts`/`--worker_hosts` flags; seed 001 gives the server's `--cluster_spec` flag as
`job|host:port;host:port,job2|...`. For each form this prints the form and then the
task names (`/job:<job>/task:<index>`) in the seed's order, e.g.

    tf.train.ClusterSpec({"local": ["localhost:2222", "localhost:2223"]})
      /job:local/task:0
      /job:local/task:1

The command-line forms go through `tensorweave.distributed.cluster_spec.parse_cluster_spec`
(what `tensorweave server --cluster_spec=...` uses). Nothing listens: the seeds' fixed
ports and host names are only parsed, so they are kept. The last block shows that the dict
and command-line spellings of seed 001's table define the same cluster.

Run: `python examples/cluster_spec_forms.py`.
"""

from __future__ import annotations

import json

import tensorweave as tf
from tensorweave.distributed.cluster_spec import parse_cluster_spec

# Seed 002, section 2.1: `tf.train.ClusterSpec` from a dict.
DICT_FORMS = [
    {"local": ["localhost:2222", "localhost:2223"]},
    {
        "worker": [
            "worker0.example.com:2222",
            "worker1.example.com:2222",
            "worker2.example.com:2222",
        ],
        "ps": ["ps0.example.com:2222", "ps1.example.com:2222"],
    },
]

# Seed 002, "putting it together": the trainer's flags.
PS_HOSTS = "ps0.example.com:2222,ps1.example.com:2222"
WORKER_HOSTS = "worker0.example.com:2222,worker1.example.com:2222"

# Seed 001, "Cluster definition": values of `--cluster_spec`.
COMMAND_LINE_FORMS = [
    "local|localhost:2222",
    "local|localhost:2222;localhost:2223",
    "worker|worker0:2222;worker1:2222;worker2:2222,ps|ps0:2222;ps1:2222",
]


def task_names(cluster: tf.train.ClusterSpec) -> list[str]:
    """`/job:<job>/task:<i>` of every task, jobs in definition order (as the seeds list)."""
    return [f"/job:{job}/task:{i}" for job in cluster.jobs for i in cluster.task_indices(job)]


def show(title: str, cluster: tf.train.ClusterSpec) -> None:
    """Prints `title`, then the cluster's task names indented."""
    print(title)
    for name in task_names(cluster):
        print("  " + name)


if __name__ == "__main__":
    for jobs in DICT_FORMS:
        show(f"tf.train.ClusterSpec({json.dumps(jobs)})", tf.train.ClusterSpec(jobs))

    ps_hosts = PS_HOSTS.split(",")
    worker_hosts = WORKER_HOSTS.split(",")
    show(
        f"--ps_hosts={PS_HOSTS} --worker_hosts={WORKER_HOSTS}",
        tf.train.ClusterSpec({"ps": ps_hosts, "worker": worker_hosts}),
    )

    for text in COMMAND_LINE_FORMS:
        show(f"--cluster_spec='{text}'", parse_cluster_spec(text))

    same = parse_cluster_spec(COMMAND_LINE_FORMS[2]) == tf.train.ClusterSpec(
        {
            "worker": ["worker0:2222", "worker1:2222", "worker2:2222"],
            "ps": ["ps0:2222", "ps1:2222"],
        }
    )
    print("dict and --cluster_spec forms define the same cluster:", same)
