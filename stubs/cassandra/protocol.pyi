"""Native-protocol messages and the protocol handler (the RESULT decoding hook)."""

import io
from typing import Any, ClassVar, NamedTuple

from cassandra.cqltypes import _CassandraType
from cassandra.policies import ColumnEncryptionPolicy

_UserTypeMap = dict[str, dict[str, Any]]
_RowMetadata = tuple[str, str, str, type[_CassandraType]]

class ColumnMetadata(NamedTuple):
    keyspace_name: str
    table_name: str
    name: str
    type: type[_CassandraType]

_UNSET_VALUE: object

RESULT_KIND_VOID: int
RESULT_KIND_ROWS: int
RESULT_KIND_SET_KEYSPACE: int
RESULT_KIND_PREPARED: int
RESULT_KIND_SCHEMA_CHANGE: int

class _MessageType:
    opcode: ClassVar[int]
    name: ClassVar[str]

class BatchMessage(_MessageType):
    batch_type: Any
    queries: Any
    consistency_level: int | None
    serial_consistency_level: int | None
    timestamp: int | None
    keyspace: str | None
    def __init__(self, batch_type: Any, queries: Any, consistency_level: int | None,
                 serial_consistency_level: int | None = None, timestamp: int | None = None,
                 keyspace: str | None = None) -> None: ...
    def send_body(self, f: Any, protocol_version: int, *more: Any, **options: Any) -> None: ...

class ExecuteMessage(_MessageType):
    query_id: bytes
    result_metadata_id: bytes | None
    def send_body(self, f: io.BytesIO, protocol_version: int) -> None: ...

class QueryMessage(_MessageType):
    query: str | bytes
    def __init__(self, query: str, consistency_level: int | None, *more: Any, **options: Any) -> None: ...

class ResultMessage(_MessageType):
    kind: int | None
    paging_state: bytes | None
    column_names: list[str] | None
    column_types: list[type[_CassandraType]] | None
    column_metadata: list[_RowMetadata] | None
    parsed_rows: Any
    result_metadata_id: bytes | None
    def __init__(self, kind: int) -> None: ...
    # the arguments differ between the drivers (scylla-driver adds protocol_features)
    @classmethod
    def recv_body(cls, *args: Any) -> ResultMessage: ...
    def recv(self, *args: Any) -> None: ...
    def recv_results_metadata(self, f: io.BytesIO, user_type_map: _UserTypeMap) -> None: ...
    def recv_results_rows(self, f: io.BytesIO, protocol_version: int, user_type_map: _UserTypeMap,
                          result_metadata: list[_RowMetadata] | None,
                          column_encryption_policy: ColumnEncryptionPolicy | None) -> None: ...

class _ProtocolHandler:
    message_types_by_opcode: ClassVar[dict[int, type[_MessageType]]]
    column_encryption_policy: ClassVar[ColumnEncryptionPolicy | None]
    # encode_message / decode_message differ between the drivers (scylla-driver adds
    # protocol_features); cqlcodec.driver never calls or overrides them.
    encode_message: ClassVar[Any]
    decode_message: ClassVar[Any]

ProtocolHandler: type[_ProtocolHandler]

class ErrorMessage(Exception):
    info: Any
    def to_exception(self) -> BaseException: ...
class RequestValidationException(ErrorMessage): ...
class PreparedQueryNotFound(RequestValidationException): ...
class ReadTimeoutErrorMessage(ErrorMessage): ...
class WriteTimeoutErrorMessage(ErrorMessage): ...
class UnavailableErrorMessage(ErrorMessage): ...
class SyntaxException(RequestValidationException): ...
