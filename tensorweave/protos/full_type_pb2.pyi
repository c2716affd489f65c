from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class FullTypeId(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TFT_UNSET: _ClassVar[FullTypeId]
    TFT_VAR: _ClassVar[FullTypeId]
    TFT_ANY: _ClassVar[FullTypeId]
    TFT_PRODUCT: _ClassVar[FullTypeId]
    TFT_NAMED: _ClassVar[FullTypeId]
    TFT_FOR_EACH: _ClassVar[FullTypeId]
    TFT_CALLABLE: _ClassVar[FullTypeId]
    TFT_TENSOR: _ClassVar[FullTypeId]
    TFT_ARRAY: _ClassVar[FullTypeId]
    TFT_OPTIONAL: _ClassVar[FullTypeId]
    TFT_LITERAL: _ClassVar[FullTypeId]
    TFT_ENCODED: _ClassVar[FullTypeId]
    TFT_SHAPE_TENSOR: _ClassVar[FullTypeId]
    TFT_BOOL: _ClassVar[FullTypeId]
    TFT_UINT8: _ClassVar[FullTypeId]
    TFT_UINT16: _ClassVar[FullTypeId]
    TFT_UINT32: _ClassVar[FullTypeId]
    TFT_UINT64: _ClassVar[FullTypeId]
    TFT_INT8: _ClassVar[FullTypeId]
    TFT_INT16: _ClassVar[FullTypeId]
    TFT_INT32: _ClassVar[FullTypeId]
    TFT_INT64: _ClassVar[FullTypeId]
    TFT_HALF: _ClassVar[FullTypeId]
    TFT_FLOAT: _ClassVar[FullTypeId]
    TFT_DOUBLE: _ClassVar[FullTypeId]
    TFT_BFLOAT16: _ClassVar[FullTypeId]
    TFT_COMPLEX64: _ClassVar[FullTypeId]
    TFT_COMPLEX128: _ClassVar[FullTypeId]
    TFT_STRING: _ClassVar[FullTypeId]
    TFT_DATASET: _ClassVar[FullTypeId]
    TFT_RAGGED: _ClassVar[FullTypeId]
    TFT_ITERATOR: _ClassVar[FullTypeId]
    TFT_MUTEX_LOCK: _ClassVar[FullTypeId]
    TFT_LEGACY_VARIANT: _ClassVar[FullTypeId]
TFT_UNSET: FullTypeId
TFT_VAR: FullTypeId
TFT_ANY: FullTypeId
TFT_PRODUCT: FullTypeId
TFT_NAMED: FullTypeId
TFT_FOR_EACH: FullTypeId
TFT_CALLABLE: FullTypeId
TFT_TENSOR: FullTypeId
TFT_ARRAY: FullTypeId
TFT_OPTIONAL: FullTypeId
TFT_LITERAL: FullTypeId
TFT_ENCODED: FullTypeId
TFT_SHAPE_TENSOR: FullTypeId
TFT_BOOL: FullTypeId
TFT_UINT8: FullTypeId
TFT_UINT16: FullTypeId
TFT_UINT32: FullTypeId
TFT_UINT64: FullTypeId
TFT_INT8: FullTypeId
TFT_INT16: FullTypeId
TFT_INT32: FullTypeId
TFT_INT64: FullTypeId
TFT_HALF: FullTypeId
TFT_FLOAT: FullTypeId
TFT_DOUBLE: FullTypeId
TFT_BFLOAT16: FullTypeId
TFT_COMPLEX64: FullTypeId
TFT_COMPLEX128: FullTypeId
TFT_STRING: FullTypeId
TFT_DATASET: FullTypeId
TFT_RAGGED: FullTypeId
TFT_ITERATOR: FullTypeId
TFT_MUTEX_LOCK: FullTypeId
TFT_LEGACY_VARIANT: FullTypeId

class FullTypeDef(_message.Message):
    __slots__ = ("type_id", "args", "s", "i")
    TYPE_ID_FIELD_NUMBER: _ClassVar[int]
    ARGS_FIELD_NUMBER: _ClassVar[int]
    S_FIELD_NUMBER: _ClassVar[int]
    I_FIELD_NUMBER: _ClassVar[int]
    type_id: FullTypeId
    args: _containers.RepeatedCompositeFieldContainer[FullTypeDef]
    s: str
    i: int
    def __init__(self, type_id: _Optional[_Union[FullTypeId, str]] = ..., args: _Optional[_Iterable[_Union[FullTypeDef, _Mapping]]] = ..., s: _Optional[str] = ..., i: _Optional[int] = ...) -> None: ...
