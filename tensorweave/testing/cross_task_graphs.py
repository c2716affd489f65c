"""Graphs that branch across tasks, shared by the tests of every transport that carries
them (in-process servers, processes, a TensorFlow peer).

`cond_across_tasks` builds, in the default graph, a `tf.cond` whose true branch updates a
variable on the ps task and whose false branch updates one on the worker;
`check_only_taken_branch_runs` runs it and checks the values and that only the taken
branch's update happened (the untaken branch's outputs cross tasks dead).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import tensorweave as tf


@dataclasses.dataclass(frozen=True)
class CondAcrossTasks:
    """The parts of `cond_across_tasks`' graph: variables `v` (ps) and `w` (worker),
    placeholders `x` (float32 scalar) and `p` (bool scalar), and the cond's output `out`
    (`2x + (v += 1)` when `p`, else `x - 1 + (w += 10)`)."""

    v: Any
    w: Any
    x: Any
    p: Any
    out: Any


def cond_across_tasks(ps: str, worker: str) -> CondAcrossTasks:
    """Builds the cond (see the module docstring) in the default graph; `ps` and `worker`
    are the two tasks' device names."""
    with tf.device(ps):
        v = tf.Variable(0.0, name="v")
    with tf.device(worker):
        w = tf.Variable(0.0, name="w")
        x = tf.placeholder(tf.float32, [])
        p = tf.placeholder(tf.bool, [])

        def on_ps():
            with tf.device(ps):
                return x * 2.0 + tf.assign_add(v, 1.0)

        def on_worker():
            return x - 1.0 + tf.assign_add(w, 10.0)

        out = tf.cond(p, on_ps, on_worker)
    return CondAcrossTasks(v, w, x, p, out)


def check_only_taken_branch_runs(sess: Any, parts: CondAcrossTasks) -> None:
    """Initializes the variables, then runs the cond three times (true, false, true).

    Raises:
      AssertionError: naming the run whose output or variables are wrong.
    """
    sess.run(tf.global_variables_initializer())
    runs = [((3.0, True), 7.0, [1.0, 0.0]), ((3.0, False), 12.0, [1.0, 10.0]),
            ((1.0, True), 4.0, [2.0, 10.0])]
    for (x, p), want_out, want_vars in runs:
        got = sess.run(parts.out, {parts.x: x, parts.p: p})
        if got != want_out:
            raise AssertionError(f"cond(p={p}, x={x}) gave {got}, expected {want_out}")
        got_vars = sess.run([parts.v, parts.w])
        if got_vars != want_vars:
            raise AssertionError(f"after cond(p={p}, x={x}): [v, w] = {got_vars}, expected "
                                 f"{want_vars} (only the taken branch may update)")
