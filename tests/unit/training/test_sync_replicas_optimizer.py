"""SyncReplicasOptimizer without a cluster: API errors, the hook's preconditions, the
variables it reports, and the structure of the graph it builds (TensorFlow's
`SyncReplicasOptimizerHookTest` plus placement checks)."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.tensor_util import constant_value
from tensorweave.training.adam import AdamOptimizer
from tensorweave.training.gradient_descent import GradientDescentOptimizer
from tensorweave.training.queue_runner import QueueRunner
from tensorweave.training.sync_replicas_optimizer import SyncReplicasOptimizer


def _sync_opt(opt=None, replicas=1, total=1, **kwargs):
    return SyncReplicasOptimizer(
        opt=opt or GradientDescentOptimizer(1.0),
        replicas_to_aggregate=replicas,
        total_num_replicas=total,
        **kwargs,
    )


def _ps_model(worker=0):
    """TensorFlow's test model: global step and v0 on ps/0, v1 and v_sparse on ps/1."""
    with tf.device("/job:ps/task:0"):
        global_step = tf.Variable(0, name="global_step", trainable=False)
        v0 = tf.Variable(0.0, name="v0")
    with tf.device("/job:ps/task:1"):
        v1 = tf.Variable(1.0, name="v1")
        v_sparse = tf.Variable([[3.0], [4.0]], name="v_sparse")
    with tf.device(f"/job:worker/task:{worker}"):
        g0 = tf.constant(0.1 + worker * 0.2)
        g1 = tf.constant(0.9 + worker * 0.2)
        g_sparse = tf.IndexedSlices(
            tf.constant([0.1 + worker * 0.2], shape=[1, 1]), tf.constant([1]), tf.constant([2, 1])
        )
    return global_step, [(g0, v0), (g1, v1), (g_sparse, v_sparse)]


def _ancestors(op):
    """Every op `op` depends on, through data and control edges."""
    seen, stack = {}, [op]
    while stack:
        cur = stack.pop()
        for dep in [t.op for t in cur.inputs] + list(cur.control_inputs):
            if dep.name not in seen:
                seen[dep.name] = dep
                stack.append(dep)
    return list(seen.values())


# ------------------------------------------------------------- TensorFlow's hook tests
def test_error_if_hook_used_before_minimize_called():
    with tf.Graph().as_default():
        hook = _sync_opt().make_session_run_hook(True)
        with pytest.raises(ValueError, match="apply_gradient should be called"):
            hook.begin()


def test_hook_can_be_created_before_minimize_called():
    with tf.Graph().as_default():
        opt = _sync_opt()
        hook = opt.make_session_run_hook(True)
        v = tf.Variable([0.0])
        global_step = tf.Variable(0, name="global_step", trainable=False)
        opt.minimize(v, global_step=global_step)
        hook.begin()


def test_variables_include_adams_beta_powers():
    with tf.Graph().as_default():
        opt = _sync_opt(AdamOptimizer(0.01))
        v = tf.Variable([0.0], name="fetch_variable_test")
        global_step = tf.Variable(0, name="global_step", trainable=False)
        opt.minimize(v, global_step=global_step)
        opt_variables = opt.variables()
        beta1_power, beta2_power = opt._opt._get_beta_accumulators()
        assert any(x is beta1_power for x in opt_variables)
        assert any(x is beta2_power for x in opt_variables)
        assert all("sync_rep_local_step" not in x.name for x in opt_variables)
        assert opt.get_slot_names() == ["m", "v"]
        assert opt.get_slot(v, "m") is opt._opt.get_slot(v, "m")


# ------------------------------------------------------------------------ API errors
def test_apply_gradients_errors():
    with tf.Graph().as_default():
        opt = _sync_opt()
        with pytest.raises(ValueError, match="Must supply at least one variable"):
            opt.apply_gradients([])
        v = tf.Variable(1.0)
        with pytest.raises(ValueError, match="Global step is required to check staleness"):
            opt.apply_gradients([(tf.constant(1.0), v)])
        gstep = tf.Variable(0, name="global_step", trainable=False)
        with pytest.raises(ValueError, match="Unknown grad type!"):
            _sync_opt().apply_gradients([(np.float32(1.0), v)], global_step=gstep)


def test_chief_helpers_need_apply_gradients():
    with tf.Graph().as_default():
        opt = _sync_opt()
        with pytest.raises(ValueError, match="(?i)should be called after apply_gradients"):
            opt.get_chief_queue_runner()
        with pytest.raises(ValueError, match="(?i)should be called after apply_gradients"):
            opt.get_init_tokens_op()


def test_init_tokens_op():
    with tf.Graph().as_default():
        global_step, grads_and_vars = _ps_model()
        # Fewer replicas than gradients per update: the first step needs extra tokens.
        opt = _sync_opt(GradientDescentOptimizer(2.0), replicas=4, total=2)
        opt.apply_gradients(grads_and_vars, global_step=global_step)
        with pytest.raises(ValueError, match=r"Too few tokens .*: 1 \(given\) vs 2 \(needed\)"):
            opt.get_init_tokens_op(1)
        default = opt.get_init_tokens_op()  # -1: replicas_to_aggregate tokens
        assert default.type == "QueueEnqueueManyV2"
        assert default.device == "/job:ps/task:0"
        assert default.inputs[1].op.type == "Fill"
        assert constant_value(default.inputs[1].op.inputs[0]).tolist() == [4]


def test_zero_init_tokens_is_a_no_op():
    with tf.Graph().as_default():
        global_step, grads_and_vars = _ps_model()
        opt = _sync_opt(GradientDescentOptimizer(2.0), replicas=2, total=2)
        opt.apply_gradients(grads_and_vars, global_step=global_step)
        no_tokens = opt.get_init_tokens_op(0)
        assert no_tokens.type == "NoOp" and no_tokens.name == "no_init_tokens"


# --------------------------------------------------------------------- graph structure
def test_graph_structure_and_placement():
    with tf.Graph().as_default() as g:
        global_step, grads_and_vars = _ps_model(worker=1)
        with tf.device("/job:worker/task:1"):
            opt = _sync_opt(GradientDescentOptimizer(2.0), replicas=2, total=3)
            train_op = opt.apply_gradients(grads_and_vars, global_step=global_step)
        ops = {op.name: op for op in g.get_operations()}

        local_step = g.get_tensor_by_name("sync_rep_local_step:0")
        assert local_step.device == "/job:worker/task:1"
        assert [v.op.name for v in tf.local_variables()] == ["sync_rep_local_step"]
        assert "sync_rep_local_step" not in [v.op.name for v in tf.global_variables()]

        accums = {
            op.get_attr("shared_name"): op
            for op in ops.values()
            if op.type.endswith("ConditionalAccumulator")
        }
        assert {k: (v.type, v.device) for k, v in accums.items()} == {
            b"v0:0/grad_accum": ("ConditionalAccumulator", "/job:ps/task:0"),
            b"v1:0/grad_accum": ("ConditionalAccumulator", "/job:ps/task:1"),
            b"v_sparse:0/grad_accum": ("SparseConditionalAccumulator", "/job:ps/task:1"),
        }
        for op in ops.values():
            if op.type in (
                "AccumulatorApplyGradient",
                "AccumulatorTakeGradient",
                "SparseAccumulatorApplyGradient",
                "SparseAccumulatorTakeGradient",
            ):
                assert op.device == op.inputs[0].op.device, op.name
                if op.type.endswith("TakeGradient"):
                    assert op.inputs[1].op.type == "Const"

        token_q = ops["sync_token_q"]
        assert token_q.device == "/job:ps/task:0" == global_step.device
        assert token_q.get_attr("shared_name") == b"sync_token_q"
        assert token_q.get_attr("capacity") == -1
        assert ops["dummy_queue"].get_attr("shared_name") == b"dummy_queue"

        # The train op assigns the dequeued token to the local step, after every apply.
        assert train_op.op.type == "Assign"
        assert train_op.op.device == "/job:worker/task:1"
        dequeue = train_op.op.inputs[1].op
        assert dequeue.name == "sync_token_q_Dequeue"
        assert dequeue.device == "/job:ps/task:0"
        applies = {op.name for op in dequeue.control_inputs}
        assert applies == {
            op.name for op in ops.values() if op.type.endswith("AccumulatorApplyGradient")
        }
        assert len(applies) == 3

        # The chief's queue runner: sync_op enqueues max(total, replicas) = 3 tokens after
        # the update, which increments the global step.
        qr = opt.get_chief_queue_runner()
        assert isinstance(qr, QueueRunner)
        assert qr.queue.name == "dummy_queue"
        (sync_op,) = qr.enqueue_ops
        assert sync_op.type == "QueueEnqueueManyV2" and sync_op.device == "/job:ps/task:0"
        fill = sync_op.inputs[1].op
        assert constant_value(fill.inputs[0]).tolist() == [3]
        assert fill.inputs[1].op.inputs[0].op is global_step.op  # the global step's value
        update = [op for op in _ancestors(sync_op) if op.type == "AssignAdd"]
        assert [op.inputs[0].op for op in update] == [global_step.op]
        assert "GradientDescent/update_v0/ApplyGradientDescent" in {
            op.name for op in _ancestors(update[0])
        }
        assert tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS) == []

        chief_init = opt.chief_init_op
        set_steps = [
            op for op in chief_init.control_inputs if op.type == "AccumulatorSetGlobalStep"
        ]
        assert len(set_steps) == 3
        assert {op.device for op in set_steps} == {"/job:ps/task:0", "/job:ps/task:1"}
        assert opt.local_step_init_op.op in chief_init.control_inputs


def test_tokens_per_step_is_the_larger_replica_count():
    with tf.Graph().as_default():
        global_step, grads_and_vars = _ps_model()
        opt = _sync_opt(GradientDescentOptimizer(2.0), replicas=3, total=2)
        opt.apply_gradients(grads_and_vars, global_step=global_step)
        (sync_op,) = opt.get_chief_queue_runner().enqueue_ops
        assert constant_value(sync_op.inputs[1].op.inputs[0]).tolist() == [3]


def test_none_gradient_passes_through():
    with tf.Graph().as_default() as g:
        gstep = tf.Variable(0, name="global_step", trainable=False)
        a, b = tf.Variable(1.0, name="a"), tf.Variable(2.0, name="b")
        opt = _sync_opt()
        opt.apply_gradients([(None, a), (tf.constant(0.5), b)], global_step=gstep)
        names = [
            op.get_attr("shared_name")
            for op in g.get_operations()
            if op.type == "ConditionalAccumulator"
        ]
        assert names == [b"b:0/grad_accum"]


class _CountingAverages:
    """Stands in for ExponentialMovingAverage: `apply` returns an op counting its runs."""

    def __init__(self):
        self.applied_to = None
        self.count = None

    def apply(self, var_list):
        self.applied_to = var_list
        with tf.control_dependencies(None):  # as ExponentialMovingAverage's own variables
            self.count = tf.Variable(0, name="averages_applied", trainable=False)
        return tf.assign_add(self.count, 1).op


def test_single_process_step_with_variable_averages():
    """One replica, in one local session: the full cycle (tokens, sync_op, averages)."""
    with tf.Graph().as_default():
        gstep = tf.Variable(0, name="global_step", trainable=False)
        v = tf.Variable(1.0, name="v")
        averages = _CountingAverages()
        opt = _sync_opt(
            GradientDescentOptimizer(0.5), variable_averages=averages, variables_to_average=[v]
        )
        train_op = opt.apply_gradients([(tf.constant(2.0), v)], global_step=gstep)
        hook = opt.make_session_run_hook(is_chief=True, num_tokens=0)
        hook.begin()
        (sync_op,) = opt.get_chief_queue_runner().enqueue_ops
        assert averages.applied_to == [v]
        local_step = tf.local_variables()[0]
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
            sess.run(opt.chief_init_op)
            sess.run(opt.get_init_tokens_op(1))
            assert sess.run(train_op) == 0  # the initial token carries global step 0
            sess.run(sync_op)  # one gradient was enough: apply, step, tokens
            assert sess.run([gstep, v, averages.count]) == [1, 0.0, 1]
            assert sess.run(train_op) == 1  # stale gradient dropped, token of step 1
            # A fresh gradient is accumulated, but no token is left: the step would wait
            # for the next update; its deadline names the token queue's dequeue instead.
            options = tf.RunOptions(timeout_in_ms=200)
            with pytest.raises(tf.errors.DeadlineExceededError, match="sync_token_q_Dequeue"):
                sess.run(train_op, options=options)
            sess.run(sync_op)  # the gradient of the timed-out step was kept
            assert sess.run([gstep, v, local_step, averages.count]) == [2, -1.0, 1, 2]
            assert sess.run(train_op) == 2  # the token of that update was not lost


def test_after_create_session_requires_initialized_globals():
    with tf.Graph().as_default():
        gstep = tf.Variable(0, name="global_step", trainable=False)
        v = tf.Variable(1.0, name="v")
        opt = _sync_opt()
        opt.apply_gradients([(tf.constant(2.0), v)], global_step=gstep)
        hook = opt.make_session_run_hook(is_chief=False)
        hook.begin()
        with tf.Session() as sess:
            with pytest.raises(
                RuntimeError,
                match="Init operations did not make model ready "
                "for SyncReplicasOptimizer local_init",
            ):
                hook.after_create_session(sess, None)
            sess.run(tf.global_variables_initializer())
            sess.run(tf.local_variables_initializer())
            sess.run(gstep.assign(7))
            hook.after_create_session(sess, None)
            assert sess.run(tf.local_variables()[0]) == 7
