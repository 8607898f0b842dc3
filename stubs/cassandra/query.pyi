"""Statements: prepared statements and their binding."""

from collections.abc import Mapping, Sequence
from typing import Any

from cassandra.cqltypes import _CassandraType
from cassandra.policies import ColumnEncryptionPolicy
from cassandra.protocol import ColumnMetadata

UNSET_VALUE: object
FETCH_SIZE_UNSET: object

def bind_params(query: str, params: Any, encoder: Any) -> str: ...

def tuple_factory(colnames: list[str], rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]: ...
def named_tuple_factory(colnames: list[str], rows: list[tuple[Any, ...]]) -> list[Any]: ...
def dict_factory(colnames: list[str], rows: list[tuple[Any, ...]]) -> list[dict[str, Any]]: ...
def ordered_dict_factory(colnames: list[str], rows: list[tuple[Any, ...]]) -> list[dict[str, Any]]: ...

class Statement:
    keyspace: str | None
    fetch_size: Any
    consistency_level: int | None
    _routing_key: bytes | None
    @property
    def routing_key(self) -> bytes | None: ...
    @routing_key.setter
    def routing_key(self, key: bytes | None) -> None: ...

class SimpleStatement(Statement):
    def __init__(self, query_string: str, retry_policy: Any = None, consistency_level: int | None = None,
                 routing_key: Any = None, serial_consistency_level: int | None = None,
                 fetch_size: Any = ..., keyspace: str | None = None,
                 custom_payload: Any = None, is_idempotent: bool = False) -> None: ...
    @property
    def query_string(self) -> str: ...

class PreparedStatement:
    # scylla-driver adds ``is_lwt`` before ``column_encryption_policy``: pass that by name
    def __init__(self, column_metadata: list[ColumnMetadata], query_id: bytes,
                 routing_key_indexes: list[int] | None, query: str, keyspace: str | None,
                 protocol_version: int, result_metadata: list[tuple[str, str, str, type[_CassandraType]]] | None,
                 result_metadata_id: bytes | None, *,
                 column_encryption_policy: ColumnEncryptionPolicy | None = None) -> None: ...
    column_metadata: list[ColumnMetadata]
    query_id: bytes
    routing_key_indexes: list[int] | None
    query_string: str
    keyspace: str | None
    protocol_version: int
    column_encryption_policy: ColumnEncryptionPolicy | None
    fetch_size: Any
    consistency_level: int | None
    is_idempotent: bool
    # a plain attribute in cassandra-driver, a read-only property in scylla-driver
    @property
    def result_metadata(self) -> list[tuple[str, str, str, type[_CassandraType]]] | None: ...
    @property
    def result_metadata_id(self) -> bytes | None: ...
    def bind(self, values: Sequence[Any] | Mapping[str, Any] | None) -> BoundStatement: ...
    def is_routing_key_index(self, i: int) -> bool: ...

class BoundStatement(Statement):
    prepared_statement: PreparedStatement
    values: list[bytes | None | object]
    raw_values: Any
    def __init__(self, prepared_statement: PreparedStatement, retry_policy: Any = None,
                 consistency_level: int | None = None, routing_key: Any = None,
                 serial_consistency_level: int | None = None, fetch_size: Any = ...,
                 keyspace: str | None = None, custom_payload: Any = None) -> None: ...
    def bind(self, values: Sequence[Any] | Mapping[str, Any] | None) -> BoundStatement: ...

class BatchType:
    LOGGED: BatchType
    UNLOGGED: BatchType
    COUNTER: BatchType

class BatchStatement(Statement):
    def __init__(self, batch_type: Any = ..., retry_policy: Any = None,
                 consistency_level: int | None = None, serial_consistency_level: int | None = None,
                 session: Any = None, custom_payload: Any = None) -> None: ...
    batch_type: Any
    def add(self, statement: Statement | PreparedStatement | str,
            parameters: Sequence[Any] | Mapping[str, Any] | None = None) -> BatchStatement: ...
