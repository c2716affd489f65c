from tensorweave.protos import error_codes_pb2 as _error_codes_pb2
from tensorweave.protos import named_tensor_pb2 as _named_tensor_pb2
from tensorweave.protos import tensor_shape_pb2 as _tensor_shape_pb2
from tensorweave.protos import types_pb2 as _types_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class RecvTensorsRequest(_message.Message):
    __slots__ = ("step_id", "rendezvous_key", "accept_shm")
    STEP_ID_FIELD_NUMBER: _ClassVar[int]
    RENDEZVOUS_KEY_FIELD_NUMBER: _ClassVar[int]
    ACCEPT_SHM_FIELD_NUMBER: _ClassVar[int]
    step_id: int
    rendezvous_key: _containers.RepeatedScalarFieldContainer[str]
    accept_shm: bool
    def __init__(self, step_id: _Optional[int] = ..., rendezvous_key: _Optional[_Iterable[str]] = ..., accept_shm: _Optional[bool] = ...) -> None: ...

class RecvTensorsResponse(_message.Message):
    __slots__ = ("tensor", "deferred_key", "status_code", "status_error_message", "shm_tensor", "dead_key")
    TENSOR_FIELD_NUMBER: _ClassVar[int]
    DEFERRED_KEY_FIELD_NUMBER: _ClassVar[int]
    STATUS_CODE_FIELD_NUMBER: _ClassVar[int]
    STATUS_ERROR_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    SHM_TENSOR_FIELD_NUMBER: _ClassVar[int]
    DEAD_KEY_FIELD_NUMBER: _ClassVar[int]
    tensor: _containers.RepeatedCompositeFieldContainer[_named_tensor_pb2.NamedTensorProto]
    deferred_key: _containers.RepeatedScalarFieldContainer[str]
    status_code: _error_codes_pb2.Code
    status_error_message: str
    shm_tensor: _containers.RepeatedCompositeFieldContainer[ShmTensor]
    dead_key: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, tensor: _Optional[_Iterable[_Union[_named_tensor_pb2.NamedTensorProto, _Mapping]]] = ..., deferred_key: _Optional[_Iterable[str]] = ..., status_code: _Optional[_Union[_error_codes_pb2.Code, str]] = ..., status_error_message: _Optional[str] = ..., shm_tensor: _Optional[_Iterable[_Union[ShmTensor, _Mapping]]] = ..., dead_key: _Optional[_Iterable[str]] = ...) -> None: ...

class ShmTensor(_message.Message):
    __slots__ = ("name", "path", "dtype", "tensor_shape", "nbytes", "recycle")
    NAME_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    DTYPE_FIELD_NUMBER: _ClassVar[int]
    TENSOR_SHAPE_FIELD_NUMBER: _ClassVar[int]
    NBYTES_FIELD_NUMBER: _ClassVar[int]
    RECYCLE_FIELD_NUMBER: _ClassVar[int]
    name: str
    path: str
    dtype: _types_pb2.DataType
    tensor_shape: _tensor_shape_pb2.TensorShapeProto
    nbytes: int
    recycle: bool
    def __init__(self, name: _Optional[str] = ..., path: _Optional[str] = ..., dtype: _Optional[_Union[_types_pb2.DataType, str]] = ..., tensor_shape: _Optional[_Union[_tensor_shape_pb2.TensorShapeProto, _Mapping]] = ..., nbytes: _Optional[int] = ..., recycle: _Optional[bool] = ...) -> None: ...

class TensorStreamHeader(_message.Message):
    __slots__ = ("step_id", "rendezvous_key", "dtype", "tensor_shape", "nbytes", "status_code", "status_error_message", "session_handle")
    STEP_ID_FIELD_NUMBER: _ClassVar[int]
    RENDEZVOUS_KEY_FIELD_NUMBER: _ClassVar[int]
    DTYPE_FIELD_NUMBER: _ClassVar[int]
    TENSOR_SHAPE_FIELD_NUMBER: _ClassVar[int]
    NBYTES_FIELD_NUMBER: _ClassVar[int]
    STATUS_CODE_FIELD_NUMBER: _ClassVar[int]
    STATUS_ERROR_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    SESSION_HANDLE_FIELD_NUMBER: _ClassVar[int]
    step_id: int
    rendezvous_key: str
    dtype: _types_pb2.DataType
    tensor_shape: _tensor_shape_pb2.TensorShapeProto
    nbytes: int
    status_code: _error_codes_pb2.Code
    status_error_message: str
    session_handle: str
    def __init__(self, step_id: _Optional[int] = ..., rendezvous_key: _Optional[str] = ..., dtype: _Optional[_Union[_types_pb2.DataType, str]] = ..., tensor_shape: _Optional[_Union[_tensor_shape_pb2.TensorShapeProto, _Mapping]] = ..., nbytes: _Optional[int] = ..., status_code: _Optional[_Union[_error_codes_pb2.Code, str]] = ..., status_error_message: _Optional[str] = ..., session_handle: _Optional[str] = ...) -> None: ...

class RecvTensorStreamRequest(_message.Message):
    __slots__ = ("step_id", "rendezvous_key")
    STEP_ID_FIELD_NUMBER: _ClassVar[int]
    RENDEZVOUS_KEY_FIELD_NUMBER: _ClassVar[int]
    step_id: int
    rendezvous_key: str
    def __init__(self, step_id: _Optional[int] = ..., rendezvous_key: _Optional[str] = ...) -> None: ...

class TensorStreamStatus(_message.Message):
    __slots__ = ("status_code", "status_error_message")
    STATUS_CODE_FIELD_NUMBER: _ClassVar[int]
    STATUS_ERROR_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    status_code: _error_codes_pb2.Code
    status_error_message: str
    def __init__(self, status_code: _Optional[_Union[_error_codes_pb2.Code, str]] = ..., status_error_message: _Optional[str] = ...) -> None: ...

class GetServerDefRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...
