from google.protobuf import any_pb2 as _any_pb2
from tensorweave.protos import config_pb2 as _config_pb2
from tensorweave.protos import cost_graph_pb2 as _cost_graph_pb2
from tensorweave.protos import debug_pb2 as _debug_pb2
from tensorweave.protos import device_attributes_pb2 as _device_attributes_pb2
from tensorweave.protos import error_codes_pb2 as _error_codes_pb2
from tensorweave.protos import graph_pb2 as _graph_pb2
from tensorweave.protos import named_tensor_pb2 as _named_tensor_pb2
from tensorweave.protos import step_stats_pb2 as _step_stats_pb2
from tensorweave.protos import tensor_pb2 as _tensor_pb2
from tensorweave.protos import tensor_shape_pb2 as _tensor_shape_pb2
from tensorweave.protos import tensorflow_server_pb2 as _tensorflow_server_pb2
from tensorweave.protos import transport_pb2 as _transport_pb2
from tensorweave.protos import types_pb2 as _types_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class GetStatusRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetStatusResponse(_message.Message):
    __slots__ = ("device_attributes",)
    DEVICE_ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    device_attributes: _containers.RepeatedCompositeFieldContainer[_device_attributes_pb2.DeviceAttributes]
    def __init__(self, device_attributes: _Optional[_Iterable[_Union[_device_attributes_pb2.DeviceAttributes, _Mapping]]] = ...) -> None: ...

class CreateWorkerSessionRequest(_message.Message):
    __slots__ = ("session_handle", "server_def", "isolate_session_state", "cluster_device_attributes", "master_task", "master_incarnation")
    SESSION_HANDLE_FIELD_NUMBER: _ClassVar[int]
    SERVER_DEF_FIELD_NUMBER: _ClassVar[int]
    ISOLATE_SESSION_STATE_FIELD_NUMBER: _ClassVar[int]
    CLUSTER_DEVICE_ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    MASTER_TASK_FIELD_NUMBER: _ClassVar[int]
    MASTER_INCARNATION_FIELD_NUMBER: _ClassVar[int]
    session_handle: str
    server_def: _tensorflow_server_pb2.ServerDef
    isolate_session_state: bool
    cluster_device_attributes: _containers.RepeatedCompositeFieldContainer[_device_attributes_pb2.DeviceAttributes]
    master_task: str
    master_incarnation: int
    def __init__(self, session_handle: _Optional[str] = ..., server_def: _Optional[_Union[_tensorflow_server_pb2.ServerDef, _Mapping]] = ..., isolate_session_state: _Optional[bool] = ..., cluster_device_attributes: _Optional[_Iterable[_Union[_device_attributes_pb2.DeviceAttributes, _Mapping]]] = ..., master_task: _Optional[str] = ..., master_incarnation: _Optional[int] = ...) -> None: ...

class CreateWorkerSessionResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class DeleteWorkerSessionRequest(_message.Message):
    __slots__ = ("session_handle",)
    SESSION_HANDLE_FIELD_NUMBER: _ClassVar[int]
    session_handle: str
    def __init__(self, session_handle: _Optional[str] = ...) -> None: ...

class DeleteWorkerSessionResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class RegisterGraphRequest(_message.Message):
    __slots__ = ("session_handle", "create_worker_session_called", "graph_def", "has_control_flow", "graph_options", "debug_options", "collective_graph_key", "config_proto")
    SESSION_HANDLE_FIELD_NUMBER: _ClassVar[int]
    CREATE_WORKER_SESSION_CALLED_FIELD_NUMBER: _ClassVar[int]
    GRAPH_DEF_FIELD_NUMBER: _ClassVar[int]
    HAS_CONTROL_FLOW_FIELD_NUMBER: _ClassVar[int]
    GRAPH_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    DEBUG_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    COLLECTIVE_GRAPH_KEY_FIELD_NUMBER: _ClassVar[int]
    CONFIG_PROTO_FIELD_NUMBER: _ClassVar[int]
    session_handle: str
    create_worker_session_called: bool
    graph_def: _graph_pb2.GraphDef
    has_control_flow: bool
    graph_options: _config_pb2.GraphOptions
    debug_options: _debug_pb2.DebugOptions
    collective_graph_key: int
    config_proto: _config_pb2.ConfigProto
    def __init__(self, session_handle: _Optional[str] = ..., create_worker_session_called: _Optional[bool] = ..., graph_def: _Optional[_Union[_graph_pb2.GraphDef, _Mapping]] = ..., has_control_flow: _Optional[bool] = ..., graph_options: _Optional[_Union[_config_pb2.GraphOptions, _Mapping]] = ..., debug_options: _Optional[_Union[_debug_pb2.DebugOptions, _Mapping]] = ..., collective_graph_key: _Optional[int] = ..., config_proto: _Optional[_Union[_config_pb2.ConfigProto, _Mapping]] = ...) -> None: ...

class RegisterGraphResponse(_message.Message):
    __slots__ = ("graph_handle",)
    GRAPH_HANDLE_FIELD_NUMBER: _ClassVar[int]
    graph_handle: str
    def __init__(self, graph_handle: _Optional[str] = ...) -> None: ...

class DeregisterGraphRequest(_message.Message):
    __slots__ = ("session_handle", "create_worker_session_called", "graph_handle")
    SESSION_HANDLE_FIELD_NUMBER: _ClassVar[int]
    CREATE_WORKER_SESSION_CALLED_FIELD_NUMBER: _ClassVar[int]
    GRAPH_HANDLE_FIELD_NUMBER: _ClassVar[int]
    session_handle: str
    create_worker_session_called: bool
    graph_handle: str
    def __init__(self, session_handle: _Optional[str] = ..., create_worker_session_called: _Optional[bool] = ..., graph_handle: _Optional[str] = ...) -> None: ...

class DeregisterGraphResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class CleanupAllRequest(_message.Message):
    __slots__ = ("container", "tensorweave_master_task")
    CONTAINER_FIELD_NUMBER: _ClassVar[int]
    TENSORWEAVE_MASTER_TASK_FIELD_NUMBER: _ClassVar[int]
    container: _containers.RepeatedScalarFieldContainer[str]
    tensorweave_master_task: str
    def __init__(self, container: _Optional[_Iterable[str]] = ..., tensorweave_master_task: _Optional[str] = ...) -> None: ...

class CleanupAllResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ExecutorOpts(_message.Message):
    __slots__ = ("record_costs", "record_timeline", "record_partition_graphs", "report_tensor_allocations_upon_oom")
    RECORD_COSTS_FIELD_NUMBER: _ClassVar[int]
    RECORD_TIMELINE_FIELD_NUMBER: _ClassVar[int]
    RECORD_PARTITION_GRAPHS_FIELD_NUMBER: _ClassVar[int]
    REPORT_TENSOR_ALLOCATIONS_UPON_OOM_FIELD_NUMBER: _ClassVar[int]
    record_costs: bool
    record_timeline: bool
    record_partition_graphs: bool
    report_tensor_allocations_upon_oom: bool
    def __init__(self, record_costs: _Optional[bool] = ..., record_timeline: _Optional[bool] = ..., record_partition_graphs: _Optional[bool] = ..., report_tensor_allocations_upon_oom: _Optional[bool] = ...) -> None: ...

class RunGraphRequest(_message.Message):
    __slots__ = ("session_handle", "create_worker_session_called", "graph_handle", "step_id", "exec_opts", "send", "recv_key", "is_partial", "is_last_partial_run", "store_errors_in_response_body", "request_id", "tensorweave_accept_shm", "tensorweave_send_shm", "tensorweave_single_partition", "tensorweave_stream_task", "tensorweave_committed_step")
    SESSION_HANDLE_FIELD_NUMBER: _ClassVar[int]
    CREATE_WORKER_SESSION_CALLED_FIELD_NUMBER: _ClassVar[int]
    GRAPH_HANDLE_FIELD_NUMBER: _ClassVar[int]
    STEP_ID_FIELD_NUMBER: _ClassVar[int]
    EXEC_OPTS_FIELD_NUMBER: _ClassVar[int]
    SEND_FIELD_NUMBER: _ClassVar[int]
    RECV_KEY_FIELD_NUMBER: _ClassVar[int]
    IS_PARTIAL_FIELD_NUMBER: _ClassVar[int]
    IS_LAST_PARTIAL_RUN_FIELD_NUMBER: _ClassVar[int]
    STORE_ERRORS_IN_RESPONSE_BODY_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    TENSORWEAVE_ACCEPT_SHM_FIELD_NUMBER: _ClassVar[int]
    TENSORWEAVE_SEND_SHM_FIELD_NUMBER: _ClassVar[int]
    TENSORWEAVE_SINGLE_PARTITION_FIELD_NUMBER: _ClassVar[int]
    TENSORWEAVE_STREAM_TASK_FIELD_NUMBER: _ClassVar[int]
    TENSORWEAVE_COMMITTED_STEP_FIELD_NUMBER: _ClassVar[int]
    session_handle: str
    create_worker_session_called: bool
    graph_handle: str
    step_id: int
    exec_opts: ExecutorOpts
    send: _containers.RepeatedCompositeFieldContainer[_named_tensor_pb2.NamedTensorProto]
    recv_key: _containers.RepeatedScalarFieldContainer[str]
    is_partial: bool
    is_last_partial_run: bool
    store_errors_in_response_body: bool
    request_id: int
    tensorweave_accept_shm: bool
    tensorweave_send_shm: _containers.RepeatedCompositeFieldContainer[_transport_pb2.ShmTensor]
    tensorweave_single_partition: bool
    tensorweave_stream_task: str
    tensorweave_committed_step: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, session_handle: _Optional[str] = ..., create_worker_session_called: _Optional[bool] = ..., graph_handle: _Optional[str] = ..., step_id: _Optional[int] = ..., exec_opts: _Optional[_Union[ExecutorOpts, _Mapping]] = ..., send: _Optional[_Iterable[_Union[_named_tensor_pb2.NamedTensorProto, _Mapping]]] = ..., recv_key: _Optional[_Iterable[str]] = ..., is_partial: _Optional[bool] = ..., is_last_partial_run: _Optional[bool] = ..., store_errors_in_response_body: _Optional[bool] = ..., request_id: _Optional[int] = ..., tensorweave_accept_shm: _Optional[bool] = ..., tensorweave_send_shm: _Optional[_Iterable[_Union[_transport_pb2.ShmTensor, _Mapping]]] = ..., tensorweave_single_partition: _Optional[bool] = ..., tensorweave_stream_task: _Optional[str] = ..., tensorweave_committed_step: _Optional[_Iterable[int]] = ...) -> None: ...

class RunGraphResponse(_message.Message):
    __slots__ = ("recv", "step_stats", "cost_graph", "partition_graph", "status_code", "status_error_message", "tensorweave_deferred_key", "tensorweave_recv_shm", "tensorweave_send_shm_rejected", "tensorweave_derived")
    RECV_FIELD_NUMBER: _ClassVar[int]
    STEP_STATS_FIELD_NUMBER: _ClassVar[int]
    COST_GRAPH_FIELD_NUMBER: _ClassVar[int]
    PARTITION_GRAPH_FIELD_NUMBER: _ClassVar[int]
    STATUS_CODE_FIELD_NUMBER: _ClassVar[int]
    STATUS_ERROR_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    TENSORWEAVE_DEFERRED_KEY_FIELD_NUMBER: _ClassVar[int]
    TENSORWEAVE_RECV_SHM_FIELD_NUMBER: _ClassVar[int]
    TENSORWEAVE_SEND_SHM_REJECTED_FIELD_NUMBER: _ClassVar[int]
    TENSORWEAVE_DERIVED_FIELD_NUMBER: _ClassVar[int]
    recv: _containers.RepeatedCompositeFieldContainer[_named_tensor_pb2.NamedTensorProto]
    step_stats: _step_stats_pb2.StepStats
    cost_graph: _cost_graph_pb2.CostGraphDef
    partition_graph: _containers.RepeatedCompositeFieldContainer[_graph_pb2.GraphDef]
    status_code: _error_codes_pb2.Code
    status_error_message: str
    tensorweave_deferred_key: _containers.RepeatedScalarFieldContainer[str]
    tensorweave_recv_shm: _containers.RepeatedCompositeFieldContainer[_transport_pb2.ShmTensor]
    tensorweave_send_shm_rejected: bool
    tensorweave_derived: bool
    def __init__(self, recv: _Optional[_Iterable[_Union[_named_tensor_pb2.NamedTensorProto, _Mapping]]] = ..., step_stats: _Optional[_Union[_step_stats_pb2.StepStats, _Mapping]] = ..., cost_graph: _Optional[_Union[_cost_graph_pb2.CostGraphDef, _Mapping]] = ..., partition_graph: _Optional[_Iterable[_Union[_graph_pb2.GraphDef, _Mapping]]] = ..., status_code: _Optional[_Union[_error_codes_pb2.Code, str]] = ..., status_error_message: _Optional[str] = ..., tensorweave_deferred_key: _Optional[_Iterable[str]] = ..., tensorweave_recv_shm: _Optional[_Iterable[_Union[_transport_pb2.ShmTensor, _Mapping]]] = ..., tensorweave_send_shm_rejected: _Optional[bool] = ..., tensorweave_derived: _Optional[bool] = ...) -> None: ...

class CleanupGraphRequest(_message.Message):
    __slots__ = ("step_id", "tensorweave_rollback")
    STEP_ID_FIELD_NUMBER: _ClassVar[int]
    TENSORWEAVE_ROLLBACK_FIELD_NUMBER: _ClassVar[int]
    step_id: int
    tensorweave_rollback: bool
    def __init__(self, step_id: _Optional[int] = ..., tensorweave_rollback: _Optional[bool] = ...) -> None: ...

class CleanupGraphResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class RecvTensorRequest(_message.Message):
    __slots__ = ("step_id", "rendezvous_key", "dma_ok", "client_locality", "server_locality", "transport_options", "request_id")
    STEP_ID_FIELD_NUMBER: _ClassVar[int]
    RENDEZVOUS_KEY_FIELD_NUMBER: _ClassVar[int]
    DMA_OK_FIELD_NUMBER: _ClassVar[int]
    CLIENT_LOCALITY_FIELD_NUMBER: _ClassVar[int]
    SERVER_LOCALITY_FIELD_NUMBER: _ClassVar[int]
    TRANSPORT_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    step_id: int
    rendezvous_key: str
    dma_ok: bool
    client_locality: _device_attributes_pb2.DeviceLocality
    server_locality: _device_attributes_pb2.DeviceLocality
    transport_options: _any_pb2.Any
    request_id: int
    def __init__(self, step_id: _Optional[int] = ..., rendezvous_key: _Optional[str] = ..., dma_ok: _Optional[bool] = ..., client_locality: _Optional[_Union[_device_attributes_pb2.DeviceLocality, _Mapping]] = ..., server_locality: _Optional[_Union[_device_attributes_pb2.DeviceLocality, _Mapping]] = ..., transport_options: _Optional[_Union[_any_pb2.Any, _Mapping]] = ..., request_id: _Optional[int] = ...) -> None: ...

class RecvTensorResponse(_message.Message):
    __slots__ = ("tensor", "is_dead", "send_start_micros", "transport_options", "require_ack")
    TENSOR_FIELD_NUMBER: _ClassVar[int]
    IS_DEAD_FIELD_NUMBER: _ClassVar[int]
    SEND_START_MICROS_FIELD_NUMBER: _ClassVar[int]
    TRANSPORT_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    REQUIRE_ACK_FIELD_NUMBER: _ClassVar[int]
    tensor: _tensor_pb2.TensorProto
    is_dead: bool
    send_start_micros: int
    transport_options: _any_pb2.Any
    require_ack: bool
    def __init__(self, tensor: _Optional[_Union[_tensor_pb2.TensorProto, _Mapping]] = ..., is_dead: _Optional[bool] = ..., send_start_micros: _Optional[int] = ..., transport_options: _Optional[_Union[_any_pb2.Any, _Mapping]] = ..., require_ack: _Optional[bool] = ...) -> None: ...

class MarkRecvFinishedRequest(_message.Message):
    __slots__ = ("request_id",)
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    def __init__(self, request_id: _Optional[int] = ...) -> None: ...

class MarkRecvFinishedResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class LoggingRequest(_message.Message):
    __slots__ = ("enable_rpc_logging", "disable_rpc_logging", "clear", "fetch_step_id")
    ENABLE_RPC_LOGGING_FIELD_NUMBER: _ClassVar[int]
    DISABLE_RPC_LOGGING_FIELD_NUMBER: _ClassVar[int]
    CLEAR_FIELD_NUMBER: _ClassVar[int]
    FETCH_STEP_ID_FIELD_NUMBER: _ClassVar[int]
    enable_rpc_logging: bool
    disable_rpc_logging: bool
    clear: bool
    fetch_step_id: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, enable_rpc_logging: _Optional[bool] = ..., disable_rpc_logging: _Optional[bool] = ..., clear: _Optional[bool] = ..., fetch_step_id: _Optional[_Iterable[int]] = ...) -> None: ...

class LabeledStepStats(_message.Message):
    __slots__ = ("step_id", "step_stats")
    STEP_ID_FIELD_NUMBER: _ClassVar[int]
    STEP_STATS_FIELD_NUMBER: _ClassVar[int]
    step_id: int
    step_stats: _step_stats_pb2.StepStats
    def __init__(self, step_id: _Optional[int] = ..., step_stats: _Optional[_Union[_step_stats_pb2.StepStats, _Mapping]] = ...) -> None: ...

class LoggingResponse(_message.Message):
    __slots__ = ("step",)
    STEP_FIELD_NUMBER: _ClassVar[int]
    step: _containers.RepeatedCompositeFieldContainer[LabeledStepStats]
    def __init__(self, step: _Optional[_Iterable[_Union[LabeledStepStats, _Mapping]]] = ...) -> None: ...

class TraceOpts(_message.Message):
    __slots__ = ("duration", "use_step_profiler", "use_kernel_profiler", "use_extended_profiler", "use_gpu_profiler", "use_sample_profiler")
    DURATION_FIELD_NUMBER: _ClassVar[int]
    USE_STEP_PROFILER_FIELD_NUMBER: _ClassVar[int]
    USE_KERNEL_PROFILER_FIELD_NUMBER: _ClassVar[int]
    USE_EXTENDED_PROFILER_FIELD_NUMBER: _ClassVar[int]
    USE_GPU_PROFILER_FIELD_NUMBER: _ClassVar[int]
    USE_SAMPLE_PROFILER_FIELD_NUMBER: _ClassVar[int]
    duration: float
    use_step_profiler: bool
    use_kernel_profiler: bool
    use_extended_profiler: bool
    use_gpu_profiler: bool
    use_sample_profiler: bool
    def __init__(self, duration: _Optional[float] = ..., use_step_profiler: _Optional[bool] = ..., use_kernel_profiler: _Optional[bool] = ..., use_extended_profiler: _Optional[bool] = ..., use_gpu_profiler: _Optional[bool] = ..., use_sample_profiler: _Optional[bool] = ...) -> None: ...

class TracingRequest(_message.Message):
    __slots__ = ("options",)
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    options: TraceOpts
    def __init__(self, options: _Optional[_Union[TraceOpts, _Mapping]] = ...) -> None: ...

class TracingResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class RecvBufRequest(_message.Message):
    __slots__ = ("step_id", "buf_rendezvous_key", "num_bytes", "buf_ptr", "client_locality", "server_locality", "transport_options", "src_device", "dst_device", "request_id", "src_incarnation")
    STEP_ID_FIELD_NUMBER: _ClassVar[int]
    BUF_RENDEZVOUS_KEY_FIELD_NUMBER: _ClassVar[int]
    NUM_BYTES_FIELD_NUMBER: _ClassVar[int]
    BUF_PTR_FIELD_NUMBER: _ClassVar[int]
    CLIENT_LOCALITY_FIELD_NUMBER: _ClassVar[int]
    SERVER_LOCALITY_FIELD_NUMBER: _ClassVar[int]
    TRANSPORT_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    SRC_DEVICE_FIELD_NUMBER: _ClassVar[int]
    DST_DEVICE_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    SRC_INCARNATION_FIELD_NUMBER: _ClassVar[int]
    step_id: int
    buf_rendezvous_key: str
    num_bytes: int
    buf_ptr: int
    client_locality: _device_attributes_pb2.DeviceLocality
    server_locality: _device_attributes_pb2.DeviceLocality
    transport_options: _any_pb2.Any
    src_device: str
    dst_device: str
    request_id: int
    src_incarnation: int
    def __init__(self, step_id: _Optional[int] = ..., buf_rendezvous_key: _Optional[str] = ..., num_bytes: _Optional[int] = ..., buf_ptr: _Optional[int] = ..., client_locality: _Optional[_Union[_device_attributes_pb2.DeviceLocality, _Mapping]] = ..., server_locality: _Optional[_Union[_device_attributes_pb2.DeviceLocality, _Mapping]] = ..., transport_options: _Optional[_Union[_any_pb2.Any, _Mapping]] = ..., src_device: _Optional[str] = ..., dst_device: _Optional[str] = ..., request_id: _Optional[int] = ..., src_incarnation: _Optional[int] = ...) -> None: ...

class RecvBufResponse(_message.Message):
    __slots__ = ("buf_ptr", "num_bytes", "is_dead", "transport_options", "send_start_micros", "require_ack")
    BUF_PTR_FIELD_NUMBER: _ClassVar[int]
    NUM_BYTES_FIELD_NUMBER: _ClassVar[int]
    IS_DEAD_FIELD_NUMBER: _ClassVar[int]
    TRANSPORT_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    SEND_START_MICROS_FIELD_NUMBER: _ClassVar[int]
    REQUIRE_ACK_FIELD_NUMBER: _ClassVar[int]
    buf_ptr: int
    num_bytes: int
    is_dead: bool
    transport_options: _any_pb2.Any
    send_start_micros: int
    require_ack: bool
    def __init__(self, buf_ptr: _Optional[int] = ..., num_bytes: _Optional[int] = ..., is_dead: _Optional[bool] = ..., transport_options: _Optional[_Union[_any_pb2.Any, _Mapping]] = ..., send_start_micros: _Optional[int] = ..., require_ack: _Optional[bool] = ...) -> None: ...

class CompleteGroupRequest(_message.Message):
    __slots__ = ("group_key", "group_size", "device_type", "collective_type", "device_attributes")
    GROUP_KEY_FIELD_NUMBER: _ClassVar[int]
    GROUP_SIZE_FIELD_NUMBER: _ClassVar[int]
    DEVICE_TYPE_FIELD_NUMBER: _ClassVar[int]
    COLLECTIVE_TYPE_FIELD_NUMBER: _ClassVar[int]
    DEVICE_ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    group_key: int
    group_size: int
    device_type: str
    collective_type: int
    device_attributes: _device_attributes_pb2.DeviceAttributes
    def __init__(self, group_key: _Optional[int] = ..., group_size: _Optional[int] = ..., device_type: _Optional[str] = ..., collective_type: _Optional[int] = ..., device_attributes: _Optional[_Union[_device_attributes_pb2.DeviceAttributes, _Mapping]] = ...) -> None: ...

class CompleteGroupResponse(_message.Message):
    __slots__ = ("group_key", "group_size", "device_type", "num_tasks", "communicator_key", "device_attributes")
    GROUP_KEY_FIELD_NUMBER: _ClassVar[int]
    GROUP_SIZE_FIELD_NUMBER: _ClassVar[int]
    DEVICE_TYPE_FIELD_NUMBER: _ClassVar[int]
    NUM_TASKS_FIELD_NUMBER: _ClassVar[int]
    COMMUNICATOR_KEY_FIELD_NUMBER: _ClassVar[int]
    DEVICE_ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    group_key: int
    group_size: int
    device_type: str
    num_tasks: int
    communicator_key: bytes
    device_attributes: _containers.RepeatedCompositeFieldContainer[_device_attributes_pb2.DeviceAttributes]
    def __init__(self, group_key: _Optional[int] = ..., group_size: _Optional[int] = ..., device_type: _Optional[str] = ..., num_tasks: _Optional[int] = ..., communicator_key: _Optional[bytes] = ..., device_attributes: _Optional[_Iterable[_Union[_device_attributes_pb2.DeviceAttributes, _Mapping]]] = ...) -> None: ...

class CompleteInstanceRequest(_message.Message):
    __slots__ = ("name", "type", "data_type", "shape", "group_key", "group_size", "instance_key", "device_type", "subdiv_offset", "device", "is_source")
    NAME_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    DATA_TYPE_FIELD_NUMBER: _ClassVar[int]
    SHAPE_FIELD_NUMBER: _ClassVar[int]
    GROUP_KEY_FIELD_NUMBER: _ClassVar[int]
    GROUP_SIZE_FIELD_NUMBER: _ClassVar[int]
    INSTANCE_KEY_FIELD_NUMBER: _ClassVar[int]
    DEVICE_TYPE_FIELD_NUMBER: _ClassVar[int]
    SUBDIV_OFFSET_FIELD_NUMBER: _ClassVar[int]
    DEVICE_FIELD_NUMBER: _ClassVar[int]
    IS_SOURCE_FIELD_NUMBER: _ClassVar[int]
    name: str
    type: int
    data_type: _types_pb2.DataType
    shape: _tensor_shape_pb2.TensorShapeProto
    group_key: int
    group_size: int
    instance_key: int
    device_type: str
    subdiv_offset: _containers.RepeatedScalarFieldContainer[int]
    device: str
    is_source: bool
    def __init__(self, name: _Optional[str] = ..., type: _Optional[int] = ..., data_type: _Optional[_Union[_types_pb2.DataType, str]] = ..., shape: _Optional[_Union[_tensor_shape_pb2.TensorShapeProto, _Mapping]] = ..., group_key: _Optional[int] = ..., group_size: _Optional[int] = ..., instance_key: _Optional[int] = ..., device_type: _Optional[str] = ..., subdiv_offset: _Optional[_Iterable[int]] = ..., device: _Optional[str] = ..., is_source: _Optional[bool] = ...) -> None: ...

class CompleteInstanceResponse(_message.Message):
    __slots__ = ("instance_key", "source_rank")
    INSTANCE_KEY_FIELD_NUMBER: _ClassVar[int]
    SOURCE_RANK_FIELD_NUMBER: _ClassVar[int]
    instance_key: int
    source_rank: int
    def __init__(self, instance_key: _Optional[int] = ..., source_rank: _Optional[int] = ...) -> None: ...

class GetStepSequenceRequest(_message.Message):
    __slots__ = ("graph_key",)
    GRAPH_KEY_FIELD_NUMBER: _ClassVar[int]
    graph_key: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, graph_key: _Optional[_Iterable[int]] = ...) -> None: ...

class StepSequence(_message.Message):
    __slots__ = ("graph_key", "next_step_id")
    GRAPH_KEY_FIELD_NUMBER: _ClassVar[int]
    NEXT_STEP_ID_FIELD_NUMBER: _ClassVar[int]
    graph_key: int
    next_step_id: int
    def __init__(self, graph_key: _Optional[int] = ..., next_step_id: _Optional[int] = ...) -> None: ...

class GetStepSequenceResponse(_message.Message):
    __slots__ = ("step_sequence",)
    STEP_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    step_sequence: _containers.RepeatedCompositeFieldContainer[StepSequence]
    def __init__(self, step_sequence: _Optional[_Iterable[_Union[StepSequence, _Mapping]]] = ...) -> None: ...
