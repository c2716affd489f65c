"""A chief that restarts while its ps keeps the model does not rewind it to the last
checkpoint (nor re-initialize it): zero steps lost. `restore_over_ready_model=True` keeps
TensorFlow's behaviour (restore anyway)."""

import pytest

import tensorweave as tf
from tensorweave.testing.cluster import create_local_cluster


@pytest.fixture
def cluster():
    workers, ps = create_local_cluster(1, 1)
    yield workers[0]
    for s in workers + ps:
        s.stop()


def _chief_session(target, ckpt_dir, **kwargs):
    """A fresh graph and chief session, as a restarted chief process builds them."""
    graph = tf.Graph()
    with graph.as_default():
        with tf.device("/job:ps/task:0"):
            step = tf.train.get_or_create_global_step()
        with tf.device("/job:worker/task:0"):
            increment = tf.assign_add(step, 1)
        scaffold = tf.train.Scaffold(saver=tf.train.Saver())
        creator = tf.train.ChiefSessionCreator(scaffold, target, checkpoint_dir=ckpt_dir,
                                               **kwargs)
        sess = creator.create_session()
    return sess, scaffold.saver, step, increment


@pytest.mark.parametrize("tf_behaviour, expected", [(False, 25), (True, 20)])
def test_restarted_chief_keeps_the_trained_model(cluster, tmp_path, tf_behaviour, expected):
    ckpt = str(tmp_path)
    sess, saver, step, increment = _chief_session(cluster.target, ckpt)
    for i in range(25):
        sess.run(increment)
        if i + 1 == 20:
            saver.save(sess, f"{ckpt}/model.ckpt", global_step=20)
    sess.close()  # the chief "dies" after step 25; the ps still holds the model
    sess, _, step, _ = _chief_session(cluster.target, ckpt,
                                      restore_over_ready_model=tf_behaviour)
    assert sess.run(step) == expected
    sess.close()


def test_fresh_cluster_without_checkpoint_is_initialized(cluster, tmp_path):
    sess, _, step, increment = _chief_session(cluster.target, str(tmp_path))
    assert sess.run(increment) == 1
    sess.close()
