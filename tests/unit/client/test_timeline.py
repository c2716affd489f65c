"""Chrome traces from StepStats (mirrors TF's timeline_test.py)."""

from __future__ import annotations

import json

import pytest

import tensorweave as tf
from tensorweave.client.timeline import Timeline, merge_step_stats
from tensorweave.protos import config_pb2, step_stats_pb2

LOCAL_CPU = "/job:localhost/replica:0/task:0/device:CPU:0"
PS = "/job:ps/replica:0/task:0/device:CPU:0"
WORKER = "/job:worker/replica:0/task:0/device:CPU:0"


def _trace(step_stats, **kwargs):
    return json.loads(Timeline(step_stats).generate_chrome_trace_format(**kwargs))["traceEvents"]


def _processes(events):
    return {e["args"]["name"]: e["pid"] for e in events if e["name"] == "process_name"}


def _ops(events):
    return [e for e in events if e["ph"] == "X"]


def _node(dev, name, label, start, dur, thread_id=1):
    ns = dev.node_stats.add(node_name=name, timeline_label=label, thread_id=thread_id)
    ns.all_start_micros = start
    ns.op_end_rel_micros = ns.all_end_rel_micros = dur
    return ns


def test_local_session_trace():
    g = tf.Graph()
    with g.as_default():
        x = tf.constant([1.0, 2.0], name="x")
        y = tf.identity(x, name="y")
        z = tf.identity(y, name="z")
    metadata = tf.RunMetadata()
    with tf.Session(graph=g) as sess:
        sess.run(
            z, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), run_metadata=metadata
        )
    (dev,) = metadata.step_stats.dev_stats
    events = _trace(metadata.step_stats)
    assert _processes(events) == {LOCAL_CPU + " Compute": 0}
    assert all(e["ph"] in "MX" for e in events)  # one thread: no flows, no memory
    ops = _ops(events)
    assert [e["args"]["name"] for e in ops] == [ns.node_name for ns in dev.node_stats]
    by_name = {e["args"]["name"]: e for e in ops}
    assert {"x", "y", "z"} <= set(by_name)
    assert by_name["y"]["name"] == "Identity"
    assert by_name["y"]["cat"] == "Op"
    assert by_name["y"]["args"] == {"name": "y", "op": "Identity", "input0": "x"}
    assert by_name["x"]["args"] == {"name": "x", "op": "Const"}
    for ns in dev.node_stats:
        event = by_name[ns.node_name]
        assert (event["ts"], event["dur"]) == (ns.all_start_micros, ns.all_end_rel_micros)
        assert event["pid"] == 0 and event["tid"] == 0
    threads = [e for e in events if e["name"] == "thread_name"]
    assert len(threads) == 1 and threads[0]["args"]["name"].startswith("Thread ")


def test_run_metadata_is_accepted_and_never_modified():
    metadata = config_pb2.RunMetadata()
    dev = metadata.step_stats.dev_stats.add(device=WORKER)
    _node(dev, "a", "a = Const()", 100, 5)
    _node(dev, "b", "b = Identity(a)", 102, 5)  # overlaps `a` on the same thread
    before = metadata.SerializeToString()
    events = _trace(metadata)
    assert metadata.SerializeToString() == before
    assert len(_ops(events)) == 2


def _two_task_step_stats(label_send, label_recv):
    stats = step_stats_pb2.StepStats()
    ps = stats.dev_stats.add(device=PS)
    _node(ps, "w", "w = VariableV2()", 1000, 2)
    _node(ps, "w/read", "w/read = Identity(w)", 1003, 2)
    _node(ps, "w/read/_0", label_send, 1006, 4)
    worker = stats.dev_stats.add(device=WORKER)
    _node(worker, "w/read/_1", label_recv, 990, 30)
    _node(worker, "y", "y = Identity(w/read/_1)", 1021, 3)
    return stats


def _flows(events):
    starts = {e["id"]: e for e in events if e["ph"] == "s"}
    ends = {e["id"]: e for e in events if e["ph"] == "t"}
    assert set(starts) == set(ends)
    return [(starts[i], ends[i]) for i in sorted(starts)]


def test_send_recv_pair_across_tasks_gets_a_flow():
    stats = _two_task_step_stats(
        f"w/read/_0 = _Send(edge_3_w/read @{WORKER})",
        f"w/read/_1 = _Recv(edge_3_w/read @{PS})",
    )
    events = _trace(stats)
    pids = _processes(events)
    assert set(pids) == {PS + " Compute", WORKER + " Compute"}
    ops = {e["args"]["name"]: e for e in _ops(events)}
    assert ops["w/read/_0"]["pid"] == pids[PS + " Compute"]
    assert ops["w/read/_1"]["pid"] == pids[WORKER + " Compute"]
    assert ops["w/read/_0"]["name"] == "_Send"
    assert ops["w/read/_0"]["args"]["input0"] == f"edge_3_w/read @{WORKER}"
    ((start, end),) = _flows(events)
    assert start["name"] == end["name"] == "edge_3_w/read"
    assert start["cat"] == end["cat"] == "DataFlow"
    assert (start["pid"], start["tid"]) == (ops["w/read/_0"]["pid"], ops["w/read/_0"]["tid"])
    assert (end["pid"], end["tid"]) == (ops["w/read/_1"]["pid"], ops["w/read/_1"]["tid"])
    assert start["ts"] == 1010  # the end of the send
    recv = ops["w/read/_1"]
    assert recv["ts"] <= end["ts"] <= recv["ts"] + recv["dur"]  # inside the _Recv slice
    assert _flows(_trace(stats, show_dataflow=False)) == []


def test_send_recv_matched_by_rendezvous_key():
    key = f"{PS};1234;{WORKER};edge_3_w/read;0:0"
    stats = _two_task_step_stats(f"s = _Send({key})", f"r = _Recv({key})")
    ((start, end),) = _flows(_trace(stats))
    assert start["name"] == "edge_3_w/read"
    pids = _processes(_trace(stats))
    assert (start["pid"], end["pid"]) == (pids[PS + " Compute"], pids[WORKER + " Compute"])


def test_unmatched_transfers_and_odd_labels_are_tolerated():
    stats = _two_task_step_stats("w/read/_0 = _Send(w/read)", "garbage label")
    events = _trace(stats)
    assert _flows(events) == []
    ops = {e["args"]["name"]: e for e in _ops(events)}
    assert ops["w/read/_1"]["name"] == "unknown"


def test_dataflow_between_lanes_and_partition_copies():
    stats = step_stats_pb2.StepStats()
    ps = stats.dev_stats.add(device=PS)
    _node(ps, "a", "a = Const()", 100, 10)
    worker = stats.dev_stats.add(device=WORKER)
    # `a/_5` is a partition's copy of `a`: the arrow comes from `a`, as in TensorFlow.
    _node(worker, "b", "b = Identity(a/_5)", 120, 5)
    ((start, end),) = _flows(_trace(stats))
    assert start["name"] == end["name"] == "a/_5"
    assert (start["ts"], end["ts"]) == (110, 120)


def test_overlapping_ops_of_one_thread_get_separate_lanes():
    stats = step_stats_pb2.StepStats()
    dev = stats.dev_stats.add(device=WORKER)
    dev.thread_names[7] = "executor"
    _node(dev, "recv", "recv = _Recv()", 100, 50, thread_id=7)
    _node(dev, "a", "a = Const()", 110, 5, thread_id=7)
    _node(dev, "b", "b = Identity(a)", 115, 5, thread_id=7)
    _node(dev, "c", "c = Const()", 112, 5, thread_id=9)
    events = _trace(stats)
    tids = {e["args"]["name"]: e["tid"] for e in _ops(events)}
    assert tids["a"] == tids["b"] != tids["recv"]
    assert len(set(tids.values())) == 3
    names = {e["tid"]: e["args"]["name"] for e in events if e["name"] == "thread_name"}
    assert names[tids["recv"]] == "executor"
    assert names[tids["a"]] == "executor (lane 1)"
    assert names[tids["c"]] == "Thread 9"
    assert _flows(events) == []  # a -> b stays on one lane


def test_show_memory_tracks_outputs_and_allocators():
    stats = step_stats_pb2.StepStats()
    dev = stats.dev_stats.add(device=WORKER)
    a = _node(dev, "a", "a = Const()", 100, 10)
    b = _node(dev, "b", "b = Identity(a)", 120, 10)
    for ns, size in ((a, 64), (b, 32)):
        desc = ns.output.add(slot=0).tensor_description.allocation_description
        desc.requested_bytes = size
        desc.allocator_name = "cpu"
    analysis = Timeline(stats).analyze_step_stats(show_memory=True)
    peak = analysis.allocator_maximums["cpu"]
    assert (peak.num_bytes, peak.timestamp, peak.tensors) == (96, 120, frozenset({"a", "b"}))
    events = json.loads(analysis.chrome_trace.format_to_string())["traceEvents"]
    pids = _processes(events)
    assert set(pids) == {"Allocators", WORKER + " Compute", WORKER + " Tensors"}
    counters = [e for e in events if e["ph"] == "C"]
    assert [c["args"]["cpu"] for c in counters] == [64, 96, 32, 0]
    assert {e["ph"] for e in events} >= {"N", "O", "D"}
    deletes = {e["name"]: e["ts"] for e in events if e["ph"] == "D"}
    assert deletes == {"a": 130, "b": 130}  # `a` lives until its consumer ends


def test_merge_step_stats_combines_workers():
    first, second = step_stats_pb2.StepStats(), step_stats_pb2.StepStats()
    _node(first.dev_stats.add(device=PS), "a", "a = Const()", 1, 1)
    _node(second.dev_stats.add(device=WORKER), "b", "b = Const()", 2, 1)
    again = second.dev_stats.add(device=PS)
    again.thread_names[3] = "t3"
    _node(again, "c", "c = Const()", 3, 1)
    metadata = config_pb2.RunMetadata()
    metadata.step_stats.CopyFrom(second)
    merged = merge_step_stats(first, metadata)
    assert [d.device for d in merged.dev_stats] == [PS, WORKER]
    assert [n.node_name for n in merged.dev_stats[0].node_stats] == ["a", "c"]
    assert dict(merged.dev_stats[0].thread_names) == {3: "t3"}
    assert len(first.dev_stats[0].node_stats) == 1  # inputs untouched
    assert len(_processes(_trace(merged))) == 2
    # Repeated devices inside one StepStats share a process as well.
    assert len(_processes(_trace(second))) == 2


def test_bad_arguments():
    with pytest.raises(TypeError):
        Timeline("not step stats")
    with pytest.raises(ValueError, match="op_time"):
        Timeline(step_stats_pb2.StepStats()).generate_chrome_trace_format(op_time="later")
    assert _trace(step_stats_pb2.StepStats()) == []
