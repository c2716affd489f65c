"""Input pipeline throughput; prints JSON.

Workloads:
* `training`: the digits MLP of `examples/digits_mlp.py` (64-256-256-10, SGD 0.1, batch
  128) fed two ways, in interleaved chunks so that a change in the machine's load affects
  both alike: `feed_dict` (minibatches of a shuffled epoch order, gathered in NumPy and fed
  through placeholders, as `local_training.py` does) and `tf_data`, a pipeline
  `from_tensor_slices -> shuffle -> repeat -> map (uint8 pixels to float32 / 16) ->
  batch -> prefetch` read by `IteratorGetNext` in the same graph. `ratio` is
  tf_data / feed_dict steps/s (goal: >= 0.9).
* `tfrecord`: `--records` records of `--record-bytes` bytes (1 KiB by default): write with
  `tf.io.TFRecordWriter`, read with `tf.io.tf_record_iterator` and with
  `TFRecordDataset(...).batch(256)` through a session, in MB/s (10^6 bytes of payload) and
  records/s (goal: read >= 200 MB/s), and MB per second of this process's CPU time
  (`MB_per_cpu_s`, less sensitive to a busy machine than wall-clock rates).
* `machine`: CPU count and the 1-minute load average before and after.

Run: `python benchmarks/input_pipeline.py [--steps 800] [--records 100000]`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from typing import Any

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))

import digits_data  # noqa: E402
import digits_mlp  # noqa: E402

import tensorweave as tf  # noqa: E402

BATCH = 128


def _training_ops(images: Any, labels: Any) -> Any:
    logits = digits_mlp.build_model(images)
    loss = tf.reduce_mean(
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    return tf.train.GradientDescentOptimizer(0.1).minimize(loss)


def _feed_graph() -> tuple[Any, Any, Any, Any]:
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(0)
        images = tf.placeholder(tf.float32, [None, 64])
        labels = tf.placeholder(tf.int64, [None])
        train = _training_ops(images, labels)
        init = tf.global_variables_initializer()
    return g, init, train, (images, labels)


def _data_graph(pixels: np.ndarray, labels: np.ndarray) -> tuple[Any, Any, Any]:
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(0)
        ds = (tf.data.Dataset.from_tensor_slices((pixels, labels))
              .shuffle(len(labels), seed=1).repeat()
              .map(lambda x, y: (tf.cast(x, tf.float32) / 16.0, y))
              .batch(BATCH).prefetch(2))
        x, y = ds.make_one_shot_iterator().get_next()
        train = _training_ops(x, y)
        init = tf.global_variables_initializer()
    return g, init, train


def bench_training(steps: int, warmup: int, chunks: int = 4) -> dict:
    """Steps/s of the digits MLP fed by feed_dict and by a tf.data pipeline."""
    data = digits_data.load_digits_split(0)
    pixels = np.round(data.x_train * 16).astype(np.uint8)
    fg, finit, ftrain, (fx, fy) = _feed_graph()
    dg, dinit, dtrain = _data_graph(pixels, data.y_train)
    batches = digits_data.minibatches(pixels.astype(np.float32) / 16.0, data.y_train, BATCH, 0)
    elapsed = {"feed_dict": 0.0, "tf_data": 0.0}
    with digits_data.blas_threads(1), tf.Session(graph=fg) as fs, tf.Session(graph=dg) as ds:
        fs.run(finit)
        ds.run(dinit)
        for _ in range(warmup):
            x, y = next(batches)
            fs.run(ftrain, {fx: x, fy: y})
            ds.run(dtrain)
        per_chunk = steps // chunks
        for _ in range(chunks):
            t0 = time.perf_counter()
            for _ in range(per_chunk):
                x, y = next(batches)
                fs.run(ftrain, {fx: x, fy: y})
            elapsed["feed_dict"] += time.perf_counter() - t0
            t0 = time.perf_counter()
            for _ in range(per_chunk):
                ds.run(dtrain)
            elapsed["tf_data"] += time.perf_counter() - t0
    rates = {k: per_chunk * chunks / v for k, v in elapsed.items()}
    return {
        "steps": per_chunk * chunks,
        "steps_per_sec": {k: round(v, 1) for k, v in rates.items()},
        "ratio": round(rates["tf_data"] / rates["feed_dict"], 3),
    }


def bench_tfrecord(records: int, record_bytes: int) -> dict:
    """Write and read throughput of a TFRecord file of `records` random records."""
    rng = np.random.default_rng(0)
    payload = [rng.bytes(record_bytes) for _ in range(min(records, 1024))]
    total = records * record_bytes
    out: dict[str, Any] = {"records": records, "record_bytes": record_bytes}
    with tempfile.TemporaryDirectory(prefix="tw_bench_") as tmp:
        path = os.path.join(tmp, "bench.tfr")
        t0, c0 = time.perf_counter(), time.process_time()
        with tf.io.TFRecordWriter(path) as w:
            for i in range(records):
                w.write(payload[i % len(payload)])
        write_s, write_cpu = time.perf_counter() - t0, time.process_time() - c0
        t0, c0 = time.perf_counter(), time.process_time()
        count = sum(1 for _ in tf.io.tf_record_iterator(path))
        iter_s, iter_cpu = time.perf_counter() - t0, time.process_time() - c0
        assert count == records
        g = tf.Graph()
        with g.as_default():
            nxt = tf.data.TFRecordDataset(path).batch(256).make_one_shot_iterator().get_next()
        seen = 0
        with tf.Session(graph=g) as sess:
            t0, c0 = time.perf_counter(), time.process_time()
            while True:
                try:
                    seen += len(sess.run(nxt))
                except tf.errors.OutOfRangeError:
                    break
            dataset_s, dataset_cpu = time.perf_counter() - t0, time.process_time() - c0
        assert seen == records
    for key, secs, cpu in (("write", write_s, write_cpu), ("read_iterator", iter_s, iter_cpu),
                           ("read_dataset", dataset_s, dataset_cpu)):
        out[key] = {"MBps": round(total / secs / 1e6, 1), "records_per_sec": round(records / secs),
                    "MB_per_cpu_s": round(total / cpu / 1e6, 1)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=800)
    parser.add_argument("--warmup", type=int, default=100)
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--record-bytes", type=int, default=1024)
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    result = {
        "training": bench_training(args.steps, args.warmup),
        "tfrecord": bench_tfrecord(args.records, args.record_bytes),
    }
    result["machine"] = {"cpus": os.cpu_count(), "load_1min_before": round(load_before, 2),
                         "load_1min_after": round(os.getloadavg()[0], 2)}
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
