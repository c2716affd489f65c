"""Wire-format spot checks of the session, cluster and RPC protos (`RunOptions`,
`RunMetadata`, `ClusterDef`, `ConfigProto`, `ServerDef`, worker and master messages,
`DeviceAttributes`, `StepStats`): hand-encoded bytes with field numbers taken from
TensorFlow's .proto sources must parse into the expected fields.
"""

from __future__ import annotations

import struct

from google.protobuf import any_pb2

from tensorweave.protos import (
    cluster_pb2,
    config_pb2,
    device_attributes_pb2,
    error_codes_pb2,
    master_pb2,
    step_stats_pb2,
    tensorflow_server_pb2,
    types_pb2,
    worker_pb2,
)


def _f64(x):
    return struct.pack("<d", x)


def test_run_options_wire():
    data = (
        b"\x08\x03"  # trace_level = 1 (FULL_TRACE)
        + b"\x10\xe8\x07"  # timeout_in_ms = 2
        + b"\x18\x01"  # inter_op_thread_pool = 3
        + b"\x28\x01"  # output_partition_graphs = 5
        + b"\x32\x02\x50\x07"  # debug_options = 6 {global_step = 10}
        + b"\x38\x01"  # report_tensor_allocations_upon_oom = 7
        + b"\x42\x02\x08\x05"  # experimental = 8 {collective_graph_key = 1}
    )
    ro = config_pb2.RunOptions.FromString(data)
    assert ro.trace_level == config_pb2.RunOptions.FULL_TRACE
    assert ro.timeout_in_ms == 1000
    assert ro.inter_op_thread_pool == 1
    assert ro.output_partition_graphs
    assert ro.debug_options.global_step == 7
    assert ro.report_tensor_allocations_upon_oom
    assert ro.experimental.collective_graph_key == 5
    assert ro.SerializeToString(deterministic=True) == data


def test_run_metadata_wire():
    md = config_pb2.RunMetadata.FromString(
        b"\x0a\x05\x0a\x03\x0a\x01d"  # step_stats = 1 {dev_stats {device}}
        + b"\x12\x04\x0a\x02\x0a\x00"  # cost_graph = 2 {node {}}
        + b"\x1a\x00"  # partition_graphs = 3
        + b"\x22\x02\x0a\x00"  # function_graphs = 4 {partition_graphs = 1}
    )
    assert md.step_stats.dev_stats[0].device == "d"
    assert len(md.cost_graph.node) == 1
    assert len(md.partition_graphs) == 1
    assert len(md.function_graphs[0].partition_graphs) == 1


def test_cluster_def_wire():
    task = b"\x08\x01\x12\x03h:1"  # map entry {key = 1 (int32), value = 2 (string)}
    job = b"\x0a\x06worker" + b"\x12" + bytes([len(task)]) + task
    data = b"\x0a" + bytes([len(job)]) + job
    cluster = cluster_pb2.ClusterDef.FromString(data)
    assert cluster.job[0].name == "worker"
    assert dict(cluster.job[0].tasks) == {1: "h:1"}
    assert cluster.SerializeToString(deterministic=True) == data


def test_config_proto_wire():
    data = (
        b"\x0a\x07\x0a\x03CPU\x10\x02"  # device_count = 1 {"CPU": 2}
        + b"\x10\x04"  # intra_op_parallelism_threads = 2
        + b"\x18\x03"  # placement_period = 3
        + b"\x22\x07/job:ps"  # device_filters = 4
        + b"\x28\x02"  # inter_op_parallelism_threads = 5
        + b"\x32\x02\x20\x01"  # gpu_options = 6 {allow_growth = 4}
        + b"\x38\x01"  # allow_soft_placement = 7
        + b"\x40\x01"  # log_device_placement = 8
        + b"\x48\x01"  # use_per_session_threads = 9
        + b"\x52\x02\x28\x01"  # graph_options = 10 {infer_shapes = 5}
        + b"\x58\x64"  # operation_timeout_in_ms = 11
        + b"\x62\x02\x08\x03"  # session_inter_op_thread_pool = 12 {num_threads = 1}
        + b"\x6a\x02\x08\x01"  # rpc_options = 13 {use_rpc_for_inprocess_master = 1}
        + b"\x72\x02\x0a\x00"  # cluster_def = 14 {job {}}
        + b"\x78\x01"  # isolate_session_state = 15
        # experimental = 16 {share_session_state_in_clusterspec_propagation = 8}
        + b"\x82\x01\x02\x40\x01"
        + b"\x88\x01\x01"  # share_cluster_devices_in_session = 17
        + b"\xc2\x3e\x02\x08\x01"  # tensorweave = 1000 {use_remote_master = 1}
    )
    c = config_pb2.ConfigProto.FromString(data)
    assert dict(c.device_count) == {"CPU": 2}
    assert c.intra_op_parallelism_threads == 4
    assert c.placement_period == 3
    assert list(c.device_filters) == ["/job:ps"]
    assert c.inter_op_parallelism_threads == 2
    assert c.gpu_options.allow_growth
    assert c.allow_soft_placement and c.log_device_placement and c.use_per_session_threads
    assert c.graph_options.infer_shapes
    assert c.operation_timeout_in_ms == 100
    assert c.session_inter_op_thread_pool[0].num_threads == 3
    assert c.rpc_options.use_rpc_for_inprocess_master
    assert len(c.cluster_def.job) == 1
    assert c.isolate_session_state
    assert c.experimental.share_session_state_in_clusterspec_propagation
    assert c.share_cluster_devices_in_session
    assert c.tensorweave.use_remote_master
    assert c.SerializeToString(deterministic=True) == data

    gpu = config_pb2.GPUOptions.FromString(
        b"\x09" + _f64(0.5) + b"\x12\x03BFC" + b"\x2a\x03" + b"0,1"
    )
    assert gpu.per_process_gpu_memory_fraction == 0.5
    assert gpu.allocator_type == "BFC"
    assert gpu.visible_device_list == "0,1"


def test_callable_options_and_tensor_connection_wire():
    co = config_pb2.CallableOptions.FromString(
        b"\x0a\x01a"  # feed = 1
        + b"\x12\x01b"  # fetch = 2
        + b"\x1a\x01c"  # target = 3
        + b"\x22\x02\x08\x01"  # run_options = 4
        + b"\x2a\x06\x0a\x01x\x12\x01y"  # tensor_connection = 5
        + b"\x32\x06\x0a\x01a\x12\x01d"  # feed_devices = 6
        + b"\x3a\x06\x0a\x01b\x12\x01e"  # fetch_devices = 7
        + b"\x40\x01"  # fetch_skip_sync = 8
    )
    assert (list(co.feed), list(co.fetch), list(co.target)) == (["a"], ["b"], ["c"])
    assert co.run_options.trace_level == 1
    assert (co.tensor_connection[0].from_tensor, co.tensor_connection[0].to_tensor) == ("x", "y")
    assert dict(co.feed_devices) == {"a": "d"}
    assert dict(co.fetch_devices) == {"b": "e"}
    assert co.fetch_skip_sync


def test_server_def_wire():
    data = (
        b"\x0a\x00"  # cluster = 1
        + b"\x12\x06worker"  # job_name = 2
        + b"\x18\x01"  # task_index = 3
        + b"\x22\x02\x10\x01"  # default_session_config = 4
        + b"\x2a\x04grpc"  # protocol = 5
        + b"\x30\x90\x4e"  # port = 6
        + b"\x40\x02"  # replica = 8
    )
    s = tensorflow_server_pb2.ServerDef.FromString(data)
    assert s.HasField("cluster")
    assert (s.job_name, s.task_index, s.protocol) == ("worker", 1, "grpc")
    assert (s.port, s.replica) == (10000, 2)
    assert s.default_session_config.intra_op_parallelism_threads == 1


def test_run_graph_request_wire():
    data = (
        b"\x0a\x01g"  # graph_handle = 1
        + b"\x10\x2a"  # step_id = 2
        + b"\x1a\x03\x0a\x01x"  # send = 3 {name}
        + b"\x22\x01k"  # recv_key = 4
        + b"\x2a\x02\x18\x01"  # exec_opts = 5 {record_timeline = 3}
        + b"\x30\x01"  # is_partial = 6
        + b"\x38\x01"  # is_last_partial_run = 7
        + b"\x42\x01s"  # session_handle = 8
        + b"\x48\x01"  # store_errors_in_response_body = 9
        + b"\x50\x01"  # create_worker_session_called = 10
        + b"\x58\x07"  # request_id = 11
    )
    r = worker_pb2.RunGraphRequest.FromString(data)
    assert r.graph_handle == "g"
    assert r.step_id == 42
    assert r.send[0].name == "x"
    assert list(r.recv_key) == ["k"]
    assert r.exec_opts.record_timeline
    assert r.is_partial and r.is_last_partial_run
    assert r.session_handle == "s"
    assert r.store_errors_in_response_body and r.create_worker_session_called
    assert r.request_id == 7
    assert r.SerializeToString(deterministic=True) == data

    resp = worker_pb2.RunGraphResponse.FromString(
        b"\x0a\x03\x0a\x01k"  # recv = 1
        + b"\x12\x00"  # step_stats = 2
        + b"\x1a\x00"  # cost_graph = 3
        + b"\x22\x00"  # partition_graph = 4
        + b"\x28\x05"  # status_code = 5
        + b"\x32\x02no"  # status_error_message = 6
    )
    assert resp.recv[0].name == "k"
    assert resp.HasField("step_stats") and resp.HasField("cost_graph")
    assert len(resp.partition_graph) == 1
    assert resp.status_code == error_codes_pb2.NOT_FOUND
    assert resp.status_error_message == "no"


def test_other_worker_messages_wire():
    reg = worker_pb2.RegisterGraphRequest.FromString(
        b"\x0a\x01s"  # session_handle = 1
        + b"\x12\x00"  # graph_def = 2
        + b"\x22\x00"  # graph_options = 4
        + b"\x2a\x00"  # debug_options = 5
        + b"\x30\x01"  # create_worker_session_called = 6
        + b"\x38\x03"  # collective_graph_key = 7
        + b"\x42\x00"  # config_proto = 8
    )
    assert reg.session_handle == "s" and reg.HasField("graph_def")
    assert reg.HasField("graph_options") and reg.HasField("debug_options")
    assert reg.create_worker_session_called and reg.collective_graph_key == 3
    assert reg.HasField("config_proto")

    dereg = worker_pb2.DeregisterGraphRequest.FromString(b"\x0a\x01g\x12\x01s\x18\x01")
    assert (dereg.graph_handle, dereg.session_handle) == ("g", "s")
    assert dereg.create_worker_session_called

    cws = worker_pb2.CreateWorkerSessionRequest.FromString(
        b"\x0a\x01s" + b"\x12\x02\x12\x00" + b"\x18\x01" + b"\x22\x00" + b"\x2a\x01m" + b"\x30\x09"
    )
    assert cws.session_handle == "s" and cws.HasField("server_def")
    assert cws.isolate_session_state and len(cws.cluster_device_attributes) == 1
    assert (cws.master_task, cws.master_incarnation) == ("m", 9)

    any_msg = any_pb2.Any(type_url="type.googleapis.com/x", value=b"v")
    req = worker_pb2.RecvTensorRequest(
        step_id=1, rendezvous_key="k", dma_ok=True, transport_options=any_msg, request_id=5
    )
    data = req.SerializeToString()
    assert data.startswith(b"\x08\x01\x12\x01k\x18\x01")
    assert b"\x32" + bytes([len(any_msg.SerializeToString())]) in data  # transport_options = 6
    assert data.endswith(b"\x38\x05")  # request_id = 7
    resp = worker_pb2.RecvTensorResponse.FromString(
        b"\x0a\x02\x08\x01" + b"\x10\x01" + b"\x18\x05" + b"\x22\x00" + b"\x28\x01"
    )
    assert resp.tensor.dtype == types_pb2.DT_FLOAT
    assert resp.is_dead and resp.send_start_micros == 5
    assert resp.HasField("transport_options") and resp.require_ack

    status = worker_pb2.GetStatusResponse.FromString(b"\x0a\x03\x0a\x01d")
    assert status.device_attributes[0].name == "d"
    cleanup = worker_pb2.CleanupGraphRequest.FromString(b"\x08\x03")
    assert cleanup.step_id == 3
    mark = worker_pb2.MarkRecvFinishedRequest.FromString(b"\x08\x04")
    assert mark.request_id == 4
    logging_req = worker_pb2.LoggingRequest.FromString(b"\x08\x01\x10\x01\x1a\x02\x01\x02\x20\x01")
    assert logging_req.enable_rpc_logging and logging_req.clear and logging_req.disable_rpc_logging
    assert list(logging_req.fetch_step_id) == [1, 2]
    ls = worker_pb2.LoggingResponse.FromString(b"\x0a\x04\x08\x02\x12\x00").step[0]
    assert ls.step_id == 2 and ls.HasField("step_stats")
    tr = worker_pb2.TracingRequest.FromString(b"\x0a\x09\x09" + _f64(2.0))
    assert tr.options.duration == 2.0


def test_master_messages_wire():
    cs = master_pb2.CreateSessionRequest.FromString(b"\x0a\x00\x12\x00\x1a\x01t")
    assert cs.HasField("graph_def") and cs.HasField("config") and cs.target == "t"
    csr = master_pb2.CreateSessionResponse.FromString(b"\x0a\x01h\x10\x02")
    assert (csr.session_handle, csr.graph_version) == ("h", 2)
    ext = master_pb2.ExtendSessionRequest.FromString(b"\x0a\x01h\x12\x00\x18\x03")
    assert ext.current_graph_version == 3 and ext.HasField("graph_def")
    assert master_pb2.ExtendSessionResponse.FromString(b"\x20\x04").new_graph_version == 4

    rs = master_pb2.RunStepRequest.FromString(
        b"\x0a\x01h"  # session_handle = 1
        + b"\x12\x03\x0a\x01a"  # feed = 2
        + b"\x1a\x01b"  # fetch = 3
        + b"\x22\x01c"  # target = 4
        + b"\x2a\x02\x08\x01"  # options = 5
        + b"\x32\x01p"  # partial_run_handle = 6
        + b"\x38\x01"  # store_errors_in_response_body = 7
        + b"\x40\x09"  # request_id = 8
    )
    assert rs.feed[0].name == "a" and list(rs.fetch) == ["b"] and list(rs.target) == ["c"]
    assert rs.options.trace_level == 1 and rs.partial_run_handle == "p"
    assert rs.store_errors_in_response_body and rs.request_id == 9
    rsr = master_pb2.RunStepResponse.FromString(b"\x0a\x00\x12\x00\x18\x05\x22\x01e")
    assert len(rsr.tensor) == 1 and rsr.HasField("metadata")
    assert rsr.status_code == error_codes_pb2.NOT_FOUND and rsr.status_error_message == "e"

    prs = master_pb2.PartialRunSetupRequest.FromString(
        b"\x0a\x01h\x12\x01a\x1a\x01b\x22\x01c\x28\x01"
    )
    assert (list(prs.feed), list(prs.fetch), list(prs.target)) == (["a"], ["b"], ["c"])
    assert prs.request_id == 1
    reset = master_pb2.ResetRequest.FromString(b"\x0a\x01c\x12\x07/job:ps")
    assert list(reset.container) == ["c"] and list(reset.device_filters) == ["/job:ps"]
    ld = master_pb2.ListDevicesResponse.FromString(b"\x0a\x00\x12\x00\x12\x00")
    assert len(ld.local_device) == 1 and len(ld.remote_device) == 2
    mk = master_pb2.MakeCallableRequest.FromString(b"\x0a\x01h\x12\x00\x18\x02")
    assert mk.HasField("options") and mk.request_id == 2
    assert master_pb2.MakeCallableResponse.FromString(b"\x08\x07").handle == 7
    rc = master_pb2.RunCallableRequest.FromString(b"\x0a\x01h\x10\x07\x1a\x00\x20\x03")
    assert (rc.handle, len(rc.feed), rc.request_id) == (7, 1, 3)
    rcr = master_pb2.RunCallableResponse.FromString(b"\x0a\x00\x12\x00")
    assert len(rcr.fetch) == 1 and rcr.HasField("metadata")
    rel = master_pb2.ReleaseCallableRequest.FromString(b"\x0a\x01h\x10\x07")
    assert (rel.session_handle, rel.handle) == ("h", 7)


def test_device_attributes_wire():
    da = device_attributes_pb2.DeviceAttributes.FromString(
        b"\x0a\x01n"  # name = 1
        + b"\x12\x03CPU"  # device_type = 2
        + b"\x20\x80\x08"  # memory_limit = 4
        + b"\x2a\x02\x10\x01"  # locality = 5 {numa_node = 2}
        + b"\x31"
        + struct.pack("<Q", 0xDEADBEEFCAFEF00D)  # incarnation = 6 (fixed64)
        + b"\x3a\x01p"  # physical_device_desc = 7
        + b"\x40\x01"  # xla_global_id = 8
    )
    assert (da.name, da.device_type, da.memory_limit) == ("n", "CPU", 1024)
    assert da.locality.numa_node == 1
    assert da.incarnation == 0xDEADBEEFCAFEF00D
    assert da.physical_device_desc == "p" and da.xla_global_id == 1


def test_step_stats_wire():
    nes = (
        b"\x0a\x01n"  # node_name = 1
        + b"\x10\x0a"  # all_start_micros = 2
        + b"\x18\x01"  # op_start_rel_micros = 3
        + b"\x20\x02"  # op_end_rel_micros = 4
        + b"\x28\x03"  # all_end_rel_micros = 5
        + b"\x32\x02\x18\x07"  # memory = 6 {peak_bytes = 3}
        + b"\x3a\x02\x08\x01"  # output = 7 {slot = 1}
        + b"\x42\x01l"  # timeline_label = 8
        + b"\x48\x09"  # scheduled_micros = 9
        + b"\x50\x04"  # thread_id = 10
        + b"\x68\x0b"  # all_start_nanos = 13
        + b"\x70\x0c"  # op_start_rel_nanos = 14
        + b"\x78\x0d"  # op_end_rel_nanos = 15
        + b"\x80\x01\x0e"  # all_end_rel_nanos = 16
        + b"\x88\x01\x0f"  # scheduled_nanos = 17
    )
    names = b"\x08\x04\x12\x01t"  # thread_names entry {key = 4 (uint32), value = "t"}
    dev = b"\x0a\x01d" + b"\x12" + bytes([len(nes)]) + nes + b"\x1a" + bytes([len(names)]) + names
    ss = step_stats_pb2.StepStats.FromString(b"\x0a" + bytes([len(dev)]) + dev)
    d = ss.dev_stats[0]
    assert d.device == "d" and dict(d.thread_names) == {4: "t"}
    n = d.node_stats[0]
    assert (n.node_name, n.all_start_micros, n.op_start_rel_micros) == ("n", 10, 1)
    assert (n.op_end_rel_micros, n.all_end_rel_micros, n.scheduled_micros) == (2, 3, 9)
    assert n.memory[0].peak_bytes == 7 and n.output[0].slot == 1
    assert n.timeline_label == "l" and n.thread_id == 4
    assert (n.all_start_nanos, n.op_start_rel_nanos, n.op_end_rel_nanos) == (11, 12, 13)
    assert (n.all_end_rel_nanos, n.scheduled_nanos) == (14, 15)
