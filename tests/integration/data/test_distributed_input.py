"""Distributed input: a dataset placed on a worker runs there (its iterator is a resource of
that worker), and `Dataset.shard(num_workers, task_index)` splits a TFRecord file between
the workers of a between-graph cluster (1 ps + 2 workers, in-process servers over gRPC):
the union of what the workers read is the whole file, each record once."""

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.cluster import create_local_cluster

NUM_RECORDS = 50


@pytest.fixture
def cluster():
    workers, ps = create_local_cluster(num_workers=2, num_ps=1)
    yield workers, ps
    for s in workers + ps:
        s.stop()


@pytest.fixture
def record_file(tmp_path):
    path = str(tmp_path / "data.tfr")
    with tf.io.TFRecordWriter(path) as w:
        for i in range(NUM_RECORDS):
            ex = tf.train.Example(features=tf.train.Features(feature={
                "id": tf.train.Feature(int64_list=tf.train.Int64List(value=[i]))}))
            w.write(ex.SerializeToString())
    return path


def worker_graph(cluster_spec, task, path, one_shot):
    g = tf.Graph()
    with g.as_default():
        setter = tf.train.replica_device_setter(
            worker_device=f"/job:worker/task:{task}", cluster=cluster_spec)
        with tf.device(setter):
            total = tf.Variable(0, dtype=tf.int64, name="total")
            count = tf.Variable(0, dtype=tf.int64, name="count")
            ds = tf.data.TFRecordDataset(path).shard(2, task).map(
                lambda r: tf.parse_single_example(
                    r, {"id": tf.FixedLenFeature([], tf.int64)})["id"]).batch(4)
            it = ds.make_one_shot_iterator() if one_shot else ds.make_initializable_iterator()
            ids = it.get_next()
            train = tf.group(tf.assign_add(total, tf.reduce_sum(ids)),
                             tf.assign_add(count, tf.size(ids, out_type=tf.int64)))
        init = tf.global_variables_initializer()
    return g, it, ids, train, init, total, count


@pytest.mark.parametrize("one_shot", [True, False])
def test_shard_between_graph_reads_the_file_once(cluster, record_file, one_shot):
    workers, ps = cluster
    spec = tf.train.ClusterSpec({"ps": [ps[0].target[len("grpc://"):]],
                                 "worker": [w.target[len("grpc://"):] for w in workers]})
    seen = []
    for task in (0, 1):
        g, it, ids, train, init, total, count = worker_graph(spec, task, record_file, one_shot)
        assert ids.op.device == f"/job:worker/task:{task}"
        assert total.op.device.startswith("/job:ps")
        with tf.Session(workers[task].target, graph=g) as sess:
            if task == 0:
                sess.run(init)
            if not one_shot:
                sess.run(it.initializer)
            mine = []
            while True:
                try:
                    batch, _ = sess.run([ids, train])
                except tf.errors.OutOfRangeError:
                    break
                mine.extend(batch.tolist())
            assert mine == list(range(task, NUM_RECORDS, 2))
            seen.extend(mine)
            final_total, final_count = sess.run([total, count])
        # The iterator lives in the resource manager of the worker that ran the pipeline.
        name = it._iterator_resource.op.name
        assert workers[task].worker.resource_mgr.lookup("", name) is not None
        if task == 0:
            assert workers[1].worker.resource_mgr.lookup("", name) is None
        assert ps[0].worker.resource_mgr.lookup("", name) is None
    assert sorted(seen) == list(range(NUM_RECORDS))
    assert final_count == NUM_RECORDS
    assert final_total == sum(range(NUM_RECORDS))
    assert np.unique(seen).size == NUM_RECORDS


def test_pipeline_placed_on_another_worker_runs_there(cluster):
    workers, ps = cluster
    g = tf.Graph()
    with g.as_default():
        offset = tf.constant(100, tf.int64)
        with tf.device("/job:worker/task:1"):
            ds = tf.data.Dataset.range(6).map(lambda x: x + offset).filter(
                lambda x: tf.equal(x % 2, 0)).batch(2).prefetch(1)
            it = ds.make_initializable_iterator()
            nxt = it.get_next()
        with tf.device("/job:ps/task:0"):
            handle = it.string_handle()
    with tf.Session(workers[0].target, graph=g) as sess:
        sess.run(it.initializer)
        assert sess.run(nxt).tolist() == [100, 102]
        assert sess.run(nxt).tolist() == [104]
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(nxt)
        assert sess.run(handle)  # colocated with the iterator, whatever the device scope
    name = it._iterator_resource.op.name
    assert workers[1].worker.resource_mgr.lookup("", name) is not None
    assert workers[0].worker.resource_mgr.lookup("", name) is None
