"""In-graph replication from one client (the seeds' "Replicated training", first approach).

One client builds one `tf.Graph`: the parameters of a digits MLP (64-256-256-10) live on
`/job:ps/task:0`; two copies of the compute-intensive part (forward pass, loss, gradients)
are pinned to `/job:worker/task:0` and `/job:worker/task:1`, each on one half of a batch.
Per variable the two gradients are averaged on the ps (`tf.add_n([g0, g1]) / 2`) and
applied once with plain SGD; so one step equals an SGD step on the whole (doubled) batch,
which `run_single_process` computes in a local session for comparison.

Without `--ps_hosts/--worker_hosts` the program starts its own in-process cluster
(`tensorweave.testing.cluster.create_local_cluster(2, 1)`); with them it connects to
running servers (e.g. `tensorweave server` tasks) through worker 0.

Run: `python examples/in_graph.py [--steps 20] [--batch_size 64] [--learning_rate 0.1]
[--ps_hosts h:p --worker_hosts h:p,h:p]`. It prints the loss of each step, the test
accuracy, and the largest parameter difference from the single-process run.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import digits_data  # noqa: E402

import tensorweave as tf  # noqa: E402

LAYER_SIZES = (64, 256, 256, 10)


def init_params(seed: int = 0, sizes: Sequence[int] = LAYER_SIZES) -> list[np.ndarray]:
    """Glorot-uniform float32 kernels and zero biases: `[w0, b0, w1, b1, ...]`.

    Both runs start from these exact arrays, so their results can be compared elementwise.
    """
    rng = np.random.default_rng(seed)
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        limit = np.sqrt(6.0 / (fan_in + fan_out))
        params.append(rng.uniform(-limit, limit, (fan_in, fan_out)).astype(np.float32))
        params.append(np.zeros(fan_out, np.float32))
    return params


def mlp_logits(images: Any, variables: Sequence[Any]) -> Any:
    """`relu(x @ w + b)` per hidden layer, then linear logits (float32 `[batch, 10]`)."""
    net = images
    pairs = list(zip(variables[0::2], variables[1::2]))
    for i, (w, b) in enumerate(pairs):
        net = tf.matmul(net, w) + b
        if i < len(pairs) - 1:
            net = tf.nn.relu(net)
    return net


def _loss(logits: Any, labels: Any) -> Any:
    return tf.reduce_mean(
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    )


@dataclasses.dataclass(frozen=True)
class Model:
    """A training graph: per-replica placeholders, the step, the mean loss, accuracy.

    Attributes:
      images, labels: lists of placeholders, one per replica (float32 `[b, 64]`, int64
        `[b]`).
      variables: the parameters, in `init_params` order.
      train_op: one SGD update with the (averaged) gradients.
      loss: float32 scalar, the mean of the replicas' losses.
      accuracy: float32 scalar on replica 0's placeholders.
    """

    images: list[Any]
    labels: list[Any]
    variables: list[Any]
    train_op: Any
    loss: Any
    accuracy: Any


def _variables(params: Sequence[np.ndarray]) -> list[Any]:
    names = [f"{kind}{i // 2}" for i, kind in enumerate(["w", "b"] * (len(params) // 2))]
    return [tf.Variable(p, name=n) for p, n in zip(params, names)]


def build_in_graph(
    params: Sequence[np.ndarray],
    learning_rate: float,
    ps_device: str = "/job:ps/task:0",
    worker_devices: Sequence[str] = ("/job:worker/task:0", "/job:worker/task:1"),
) -> Model:
    """Variables on `ps_device`, one model replica per worker device, averaged gradients.

    Each replica gets its own placeholders (feed it its share of the batch); its forward
    pass, loss and `tf.gradients` run on its worker. The average `tf.add_n(grads) / n` of
    each variable is computed on the variable's device and applied by one
    `GradientDescentOptimizer(learning_rate)` update.
    """
    with tf.device(ps_device):
        variables = _variables(params)
        global_step = tf.train.get_or_create_global_step()
    images, labels, losses, tower_grads = [], [], [], []
    for i, device in enumerate(worker_devices):
        with tf.device(device), tf.name_scope(f"replica_{i}"):
            x = tf.placeholder(tf.float32, [None, LAYER_SIZES[0]], name="images")
            y = tf.placeholder(tf.int64, [None], name="labels")
            logits = mlp_logits(x, variables)
            loss = _loss(logits, y)
            tower_grads.append(tf.gradients(loss, variables))
            if i == 0:
                correct = tf.nn.in_top_k(logits, y, 1)
                accuracy = tf.reduce_mean(tf.cast(correct, tf.float32), name="accuracy")
        images.append(x)
        labels.append(y)
        losses.append(loss)
    n = float(len(worker_devices))
    averaged = []
    for var, grads in zip(variables, zip(*tower_grads)):
        with tf.device(var.device), tf.name_scope("average"):
            averaged.append((tf.add_n(list(grads)) / n, var))
    with tf.device(ps_device):
        opt = tf.train.GradientDescentOptimizer(learning_rate)
        train_op = opt.apply_gradients(averaged, global_step=global_step)
        mean_loss = tf.add_n(losses) / n
    return Model(images, labels, variables, train_op, mean_loss, accuracy)


def build_single(params: Sequence[np.ndarray], learning_rate: float) -> Model:
    """The same model and SGD step with one replica on the whole batch (no devices)."""
    variables = _variables(params)
    global_step = tf.train.get_or_create_global_step()
    x = tf.placeholder(tf.float32, [None, LAYER_SIZES[0]], name="images")
    y = tf.placeholder(tf.int64, [None], name="labels")
    logits = mlp_logits(x, variables)
    loss = _loss(logits, y)
    grads = tf.gradients(loss, variables)
    opt = tf.train.GradientDescentOptimizer(learning_rate)
    train_op = opt.apply_gradients(list(zip(grads, variables)), global_step=global_step)
    accuracy = tf.reduce_mean(tf.cast(tf.nn.in_top_k(logits, y, 1), tf.float32))
    return Model([x], [y], variables, train_op, loss, accuracy)


@dataclasses.dataclass(frozen=True)
class RunResult:
    """What a run produced: final parameters, per-step losses, test accuracy, and the
    devices of the partitions that ran the first step (sorted)."""

    params: list[np.ndarray]
    losses: list[float]
    test_accuracy: float
    partition_devices: list[str]


def _train(sess: Any, model: Model, steps: int, batch_size: int, seed: int, data: Any) -> RunResult:
    """Runs `steps` steps; each full batch of `2 * batch_size` rows is split evenly."""
    sess.run(tf.global_variables_initializer())
    batches = digits_data.minibatches(data.x_train, data.y_train, 2 * batch_size, seed)
    n = len(model.images)
    losses, metadata = [], tf.RunMetadata()
    for step in range(steps):
        x, y = next(batches)
        feeds = {}
        for i, (xs, ys) in enumerate(zip(np.split(x, n), np.split(y, n))):
            feeds[model.images[i]] = xs
            feeds[model.labels[i]] = ys
        if step == 0:
            options = tf.RunOptions(output_partition_graphs=True)
            _, loss = sess.run([model.train_op, model.loss], feeds, options, metadata)
        else:
            _, loss = sess.run([model.train_op, model.loss], feeds)
        losses.append(float(loss))
    accuracy = sess.run(
        model.accuracy, {model.images[0]: data.x_test, model.labels[0]: data.y_test}
    )
    devices = sorted({nd.device for gd in metadata.partition_graphs for nd in gd.node})
    params = [np.asarray(v) for v in sess.run(model.variables)]
    return RunResult(params, losses, float(accuracy), devices)


def run_in_graph(
    target: str,
    steps: int = 20,
    batch_size: int = 64,
    learning_rate: float = 0.1,
    seed: int = 0,
    config: Any = None,
) -> RunResult:
    """In-graph replication on the cluster behind `target` (it needs ps task 0 and worker
    tasks 0 and 1); each replica gets `batch_size` rows per step."""
    data = digits_data.load_digits_split(seed)
    graph = tf.Graph()
    with graph.as_default():
        model = build_in_graph(init_params(seed), learning_rate)
    with tf.Session(target, graph=graph, config=config) as sess:
        return _train(sess, model, steps, batch_size, seed, data)


def run_single_process(
    steps: int = 20, batch_size: int = 64, learning_rate: float = 0.1, seed: int = 0
) -> RunResult:
    """The same `steps` in one local session on the doubled batch (`2 * batch_size` rows)."""
    data = digits_data.load_digits_split(seed)
    graph = tf.Graph()
    with graph.as_default():
        model = build_single(init_params(seed), learning_rate)
    with tf.Session(graph=graph) as sess:
        return _train(sess, model, steps, batch_size, seed, data)


def max_param_diff(a: RunResult, b: RunResult) -> float:
    """The largest absolute elementwise difference between two runs' parameters."""
    return max(float(np.max(np.abs(x - y))) for x, y in zip(a.params, b.params))


def main(argv: Sequence[str] | None = None) -> float:
    """Runs in-graph replication and the single-process reference; returns the max diff."""
    parser = argparse.ArgumentParser(description="In-graph replication (2 worker replicas).")
    parser.add_argument("--ps_hosts", default="", help="ps host:port (default: in-process)")
    parser.add_argument("--worker_hosts", default="", help="two worker host:port, comma-separated")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch_size", type=int, default=64, help="rows per replica")
    parser.add_argument("--learning_rate", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    servers: list[Any] = []
    if args.worker_hosts:
        target = "grpc://" + args.worker_hosts.split(",")[0]
    else:
        from tensorweave.testing.cluster import create_local_cluster

        workers, ps = create_local_cluster(2, 1)
        servers = workers + ps
        target = workers[0].target
    try:
        result = run_in_graph(target, args.steps, args.batch_size, args.learning_rate, args.seed)
    finally:
        for server in servers:
            server.stop()
    for step, loss in enumerate(result.losses, 1):
        print(f"step {step}: loss {loss:.4f}")
    reference = run_single_process(args.steps, args.batch_size, args.learning_rate, args.seed)
    diff = max_param_diff(result, reference)
    print(f"test accuracy: {result.test_accuracy:.3f}")
    print(f"max |in-graph - single process| after {args.steps} steps: {diff:.2e}")
    return diff


if __name__ == "__main__":
    main()
