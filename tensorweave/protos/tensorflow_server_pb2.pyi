from tensorweave.protos import cluster_pb2 as _cluster_pb2
from tensorweave.protos import config_pb2 as _config_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ServerDef(_message.Message):
    __slots__ = ("cluster", "job_name", "replica", "task_index", "default_session_config", "protocol", "port", "cluster_device_filters")
    CLUSTER_FIELD_NUMBER: _ClassVar[int]
    JOB_NAME_FIELD_NUMBER: _ClassVar[int]
    REPLICA_FIELD_NUMBER: _ClassVar[int]
    TASK_INDEX_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_SESSION_CONFIG_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_FIELD_NUMBER: _ClassVar[int]
    PORT_FIELD_NUMBER: _ClassVar[int]
    CLUSTER_DEVICE_FILTERS_FIELD_NUMBER: _ClassVar[int]
    cluster: _cluster_pb2.ClusterDef
    job_name: str
    replica: int
    task_index: int
    default_session_config: _config_pb2.ConfigProto
    protocol: str
    port: int
    cluster_device_filters: ClusterDeviceFilters
    def __init__(self, cluster: _Optional[_Union[_cluster_pb2.ClusterDef, _Mapping]] = ..., job_name: _Optional[str] = ..., replica: _Optional[int] = ..., task_index: _Optional[int] = ..., default_session_config: _Optional[_Union[_config_pb2.ConfigProto, _Mapping]] = ..., protocol: _Optional[str] = ..., port: _Optional[int] = ..., cluster_device_filters: _Optional[_Union[ClusterDeviceFilters, _Mapping]] = ...) -> None: ...

class TaskDeviceFilters(_message.Message):
    __slots__ = ("device_filters",)
    DEVICE_FILTERS_FIELD_NUMBER: _ClassVar[int]
    device_filters: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, device_filters: _Optional[_Iterable[str]] = ...) -> None: ...

class JobDeviceFilters(_message.Message):
    __slots__ = ("name", "tasks")
    class TasksEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: int
        value: TaskDeviceFilters
        def __init__(self, key: _Optional[int] = ..., value: _Optional[_Union[TaskDeviceFilters, _Mapping]] = ...) -> None: ...
    NAME_FIELD_NUMBER: _ClassVar[int]
    TASKS_FIELD_NUMBER: _ClassVar[int]
    name: str
    tasks: _containers.MessageMap[int, TaskDeviceFilters]
    def __init__(self, name: _Optional[str] = ..., tasks: _Optional[_Mapping[int, TaskDeviceFilters]] = ...) -> None: ...

class ClusterDeviceFilters(_message.Message):
    __slots__ = ("jobs",)
    JOBS_FIELD_NUMBER: _ClassVar[int]
    jobs: _containers.RepeatedCompositeFieldContainer[JobDeviceFilters]
    def __init__(self, jobs: _Optional[_Iterable[_Union[JobDeviceFilters, _Mapping]]] = ...) -> None: ...
