"""Asynchronous advantage actor-critic (A3C) on CartPole, sharing one network between processes.

The use case of seed 004 ("sharing variables between processes"): one ps task holds the
policy/value network and the Adam optimizer's slots; each worker process plays its own
`gymnasium` CartPole-v1 and, every `--n_steps` moves (or at the end of an episode), applies
the gradient of the n-step actor-critic loss to the shared variables, without waiting for
the others (Mnih et al., 2016, with the parameter server as the shared memory). Workers act
with the shared network directly (no local copies), so every move sees the latest update.

* network: 4 -> 128 (ReLU) -> policy logits (2) and value (1);
* loss: `-log pi(a|s) * A - beta * H(pi) + 0.5 * (R - V(s))^2` with n-step returns `R`
  bootstrapped from `V`, advantages `A = R - V(s)` held constant, global-norm clipping 40;
* the layout TF1 A3C programs use: each worker starts its own `tf.train.Server`, opens a
  plain `tf.Session(server.target)`; the chief initializes, the others wait until
  `report_uninitialized_variables` is empty;
* shared counters on the ps: `global_step` (updates), `episodes` (finished episodes) and
  `solved`, set by the first worker whose last `--window` episodes average
  `--target_return` or more; every worker stops when it is set, or after `--max_episodes`
  of its own or `--max_seconds`.

Each worker prints `worker I: episode E return R avg100 A` every `--log_every` episodes and
ends with one JSON line: its episode count, the average return of its first and last 20
episodes and of its last `--window`, whether the target was reached, and its wall time.

    tensorweave launch --ps 1 --workers 2 -- python examples/a3c_cartpole.py

Cluster: `TF_CONFIG` (set by the launcher), or the seed's `--ps_hosts --worker_hosts
--job_name --task_index`.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import time
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np

import tensorweave as tf

HIDDEN = 128


def build_network(lr: float, entropy_beta: float, clip_norm: float) -> dict[str, Any]:
    """The shared actor-critic graph (variables placed by the caller's device function)."""
    obs = tf.placeholder(tf.float32, [None, 4], name="obs")
    actions = tf.placeholder(tf.int32, [None], name="actions")
    returns = tf.placeholder(tf.float32, [None], name="returns")
    hidden = tf.layers.dense(obs, HIDDEN, tf.nn.relu, name="hidden")
    logits = tf.layers.dense(hidden, 2, name="policy")
    value = tf.squeeze(tf.layers.dense(hidden, 1, name="value"), 1)
    probs = tf.nn.softmax(logits)
    neg_log_pi = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=actions, logits=logits)
    advantage = tf.stop_gradient(returns - value)
    entropy = -tf.reduce_sum(probs * tf.log(probs + 1e-8), axis=1)
    loss = (tf.reduce_mean(neg_log_pi * advantage) - entropy_beta * tf.reduce_mean(entropy)
            + 0.5 * tf.reduce_mean(tf.square(returns - value)))
    global_step = tf.train.get_or_create_global_step()
    params = tf.trainable_variables()
    grads, _ = tf.clip_by_global_norm(tf.gradients(loss, params), clip_norm)
    train = tf.train.AdamOptimizer(lr).apply_gradients(zip(grads, params), global_step)
    episodes = tf.Variable(0, trainable=False, name="episodes", dtype=tf.int64)
    solved = tf.Variable(False, trainable=False, name="solved")
    return {
        "obs": obs, "actions": actions, "returns": returns, "probs": probs, "value": value,
        "train": train, "global_step": global_step, "count_episode": episodes.assign_add(1),
        "solved": solved, "set_solved": solved.assign(True),
    }


def n_step_returns(rewards: Sequence[float], bootstrap: float, gamma: float) -> np.ndarray:
    """float32 [n]: `R_t = r_t + gamma * R_{t+1}`, starting from `bootstrap` after the last."""
    out = np.empty(len(rewards), dtype=np.float32)
    running = bootstrap
    for t in range(len(rewards) - 1, -1, -1):
        running = rewards[t] + gamma * running
        out[t] = running
    return out


def wait_for_model(sess: Any, timeout_s: float) -> None:
    """Waits until the chief initialized the shared variables.

    Raises:
      TimeoutError: after `timeout_s` seconds.
    """
    deadline = time.monotonic() + timeout_s
    pending = tf.report_uninitialized_variables()
    while sess.run(pending).size:
        if time.monotonic() > deadline:
            raise TimeoutError("the chief did not initialize the model in time")
        time.sleep(0.1)  # NOTE: polling the ps, as TF's SessionManager does.


class Player:
    """One worker's environment, action sampler and episode statistics."""

    def __init__(self, net: dict[str, Any], task_index: int, flags: argparse.Namespace):
        self.net, self.flags = net, flags
        self.env = gym.make("CartPole-v1")
        self.rng = np.random.default_rng(1000 + task_index)
        self.state, _ = self.env.reset(seed=int(flags.seed) + 97 * task_index)
        self.episode_return = 0.0
        self.returns: list[float] = []

    def rollout(self, sess: Any) -> bool:
        """Plays up to `n_steps` moves and trains on them; True when an episode ended."""
        states, actions, rewards = [], [], []
        ended = truncated = False
        for _ in range(self.flags.n_steps):
            probs = sess.run(self.net["probs"], {self.net["obs"]: self.state[None]})[0]
            action = int(self.rng.random() < probs[1])
            nxt, reward, ended, truncated, _ = self.env.step(action)
            states.append(self.state)
            actions.append(action)
            rewards.append(float(reward))
            self.episode_return += reward
            self.state = nxt
            if ended or truncated:
                break
        bootstrap = 0.0
        if not ended:
            bootstrap = float(sess.run(self.net["value"], {self.net["obs"]: self.state[None]})[0])
        feed = {
            self.net["obs"]: np.asarray(states, np.float32),
            self.net["actions"]: np.asarray(actions, np.int32),
            self.net["returns"]: n_step_returns(rewards, bootstrap, self.flags.gamma),
        }
        sess.run(self.net["train"], feed)
        if ended or truncated:
            self.returns.append(self.episode_return)
            self.episode_return = 0.0
            self.state, _ = self.env.reset()
            return True
        return False


def run_worker(server: Any, cluster: Any, task_index: int, flags: argparse.Namespace):
    """Trains until solved (by any worker) or out of episodes/time; returns the record."""
    num_workers = cluster.num_tasks("worker")
    device_fn = tf.train.replica_device_setter(
        worker_device=f"/job:worker/task:{task_index}", cluster=cluster
    )
    with tf.device(device_fn):
        net = build_network(flags.learning_rate, flags.entropy_beta, flags.clip_norm)
    init = tf.global_variables_initializer()
    config = tf.ConfigProto(device_filters=["/job:ps", f"/job:worker/task:{task_index}"])
    start = time.monotonic()
    with tf.Session(server.target, config=config) as sess:
        if task_index == 0:
            sess.run(init)
        else:
            wait_for_model(sess, timeout_s=120)
        player = Player(net, task_index, flags)
        window: collections.deque = collections.deque(maxlen=flags.window)
        while len(player.returns) < flags.max_episodes:
            if time.monotonic() - start > flags.max_seconds:
                break
            if not player.rollout(sess):
                continue
            window.append(player.returns[-1])
            episodes = sess.run(net["count_episode"])
            average = float(np.mean(window))
            if len(player.returns) % flags.log_every == 0:
                print(f"worker {task_index}: episode {len(player.returns)} (all {episodes}) "
                      f"return {player.returns[-1]:.0f} avg{flags.window} {average:.1f}",
                      flush=True)
            if len(window) == flags.window and average >= flags.target_return:
                sess.run(net["set_solved"])
            if sess.run(net["solved"]):
                break
        solved = bool(sess.run(net["solved"]))
        global_step = int(sess.run(net["global_step"]))
    returns = player.returns
    return {
        "job": "worker", "task_index": task_index, "episodes": len(returns),
        "first_20_avg": float(np.mean(returns[:20])) if returns else 0.0,
        "last_20_avg": float(np.mean(returns[-20:])) if returns else 0.0,
        f"last_{flags.window}_avg": float(np.mean(returns[-flags.window:])) if returns else 0.0,
        "solved": solved, "global_step": global_step, "num_workers": num_workers,
        "seconds": round(time.monotonic() - start, 2),
    }


def cluster_from(flags: argparse.Namespace) -> tuple[dict[str, list[str]], str, int]:
    """(cluster, job, index) from the seed's flags or `TF_CONFIG`.

    Raises:
      SystemExit: when neither names a task.
    """
    if flags.job_name:
        cluster = {"ps": flags.ps_hosts.split(","), "worker": flags.worker_hosts.split(",")}
        return cluster, flags.job_name, flags.task_index
    text = os.environ.get("TF_CONFIG", "")
    if not text.strip():
        raise SystemExit("a3c_cartpole: give --ps_hosts/--worker_hosts/--job_name or TF_CONFIG")
    config = json.loads(text)
    return config["cluster"], config["task"]["type"], int(config["task"]["index"])


def build_parser() -> argparse.ArgumentParser:
    """The command-line flags."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name in ("ps_hosts", "worker_hosts", "job_name"):
        p.add_argument(f"--{name}", default="")
    p.add_argument("--task_index", type=int, default=0)
    p.add_argument("--learning_rate", type=float, default=2e-3)
    p.add_argument("--entropy_beta", type=float, default=0.01)
    p.add_argument("--clip_norm", type=float, default=40.0)
    p.add_argument("--gamma", type=float, default=0.99)
    p.add_argument("--n_steps", type=int, default=20)
    p.add_argument("--window", type=int, default=100)
    p.add_argument("--target_return", type=float, default=195.0)
    p.add_argument("--max_episodes", type=int, default=5000)
    p.add_argument("--max_seconds", type=float, default=600.0)
    p.add_argument("--log_every", type=int, default=20)
    p.add_argument("--seed", type=int, default=0)
    return p


def main(argv: Sequence[str] | None = None) -> dict[str, Any] | None:
    """Runs this task: a ps serves until stopped; a worker trains and prints its record."""
    flags = build_parser().parse_args(argv)
    cluster, job, index = cluster_from(flags)
    tf.set_random_seed(flags.seed)
    spec = tf.train.ClusterSpec(cluster)
    server = tf.train.Server(spec, job_name=job, task_index=index)
    if job == "ps":
        print(f"ps {index}: serving at {server.target}", flush=True)
        server.join()
        return None
    try:
        record = run_worker(server, spec, index, flags)
    finally:
        server.stop()
    print(json.dumps(record), flush=True)
    return record


if __name__ == "__main__":
    main()
