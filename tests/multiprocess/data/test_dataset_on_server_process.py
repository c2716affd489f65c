"""A tf.data pipeline (TFRecord file, parse in a map function, batch) placed on a worker
that is a separate `tensorweave server` process: the function bodies travel inside the
partition graph and run there; a pipeline built on the client's task but iterated on the
worker fails with a clear error."""

import pytest

import tensorweave as tf
from tensorweave.testing.cluster import pick_unused_port
from tensorweave.testing.processes import ServerProcess, spec_string

pytestmark = pytest.mark.slow


@pytest.fixture
def cluster():
    jobs = {"worker": [f"localhost:{pick_unused_port()}" for _ in range(2)]}
    procs = [ServerProcess(spec_string(jobs), "worker", i) for i in range(2)]
    try:
        for p in procs:
            p.wait_ready()
        yield procs
    finally:
        for p in procs:
            p.terminate()


def test_pipeline_runs_in_the_worker_process(cluster, tmp_path):
    path = str(tmp_path / "d.tfr")
    with tf.io.TFRecordWriter(path) as w:
        for i in range(7):
            ex = tf.train.Example(features=tf.train.Features(feature={
                "x": tf.train.Feature(float_list=tf.train.FloatList(value=[i, 2 * i]))}))
            w.write(ex.SerializeToString())
    g = tf.Graph()
    with g.as_default():
        scale = tf.constant(10.0)
        with tf.device("/job:worker/task:1"):
            ds = tf.data.TFRecordDataset(path).map(
                lambda r: tf.parse_single_example(
                    r, {"x": tf.FixedLenFeature([2], tf.float32)})["x"] * scale).batch(3)
            nxt = ds.make_one_shot_iterator().get_next()
    with tf.Session(cluster[0].info["target"], graph=g) as sess:
        got = []
        while True:
            try:
                got.extend(sess.run(nxt).tolist())
            except tf.errors.OutOfRangeError:
                break
    assert got == [[10.0 * i, 20.0 * i] for i in range(7)]


def test_dataset_sent_between_tasks_is_refused(cluster):
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:worker/task:1"):
            ds = tf.data.Dataset.range(3)
        with tf.device("/job:worker/task:0"):
            it = tf.data.Iterator.from_structure(ds.output_types, ds.output_shapes)
            init = it.make_initializer(ds)
    with tf.Session(cluster[0].info["target"], graph=g) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="cannot be sent between"):
            sess.run(init)
