"""Cluster, Session and result sets."""

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from cassandra.policies import ColumnEncryptionPolicy, LoadBalancingPolicy
from cassandra.protocol import _ProtocolHandler
from cassandra.query import PreparedStatement, Statement

DefaultConnection: Any

class _Metadata:
    keyspaces: dict[str, Any]
    partitioner: str | None
    token_map: Any
    def get_replicas(self, keyspace: str | None, key: bytes | None) -> list[Any]: ...
    def all_hosts(self) -> list[Any]: ...

class Cluster:
    metadata: _Metadata
    protocol_version: int
    port: int
    column_encryption_policy: ColumnEncryptionPolicy | None
    sessions: Any
    auth_provider: Any
    connection_class: Any
    _prepared_statements: Any  # WeakValueDictionary of query id -> PreparedStatement
    _prepared_statement_lock: Any
    def __init__(self, contact_points: Sequence[str] = ..., port: int = 9042,
                 compression: bool | str = True, auth_provider: Any = None,
                 load_balancing_policy: LoadBalancingPolicy | None = None,
                 reconnection_policy: Any = None, default_retry_policy: Any = None,
                 conviction_policy_factory: Any = None, metrics_enabled: bool = False,
                 connection_class: Any = None, ssl_options: Any = None,
                 sockopts: Any = None, cql_version: str | None = None,
                 protocol_version: int = ..., executor_threads: int = 2,
                 max_schema_agreement_wait: int = 10, control_connection_timeout: float = 2.0,
                 idle_heartbeat_interval: int = 30, schema_event_refresh_window: int = 2,
                 topology_event_refresh_window: int = 10, connect_timeout: float = 5,
                 schema_metadata_enabled: bool = True, token_metadata_enabled: bool = True,
                 execution_profiles: dict[object, ExecutionProfile] | None = None,
                 column_encryption_policy: ColumnEncryptionPolicy | None = None,
                 **kwargs: Any) -> None: ...
    def connect(self, keyspace: str | None = None, wait_for_all_pools: bool = False) -> Session: ...
    def shutdown(self) -> None: ...
    def refresh_schema_metadata(self, max_schema_agreement_wait: int | None = None) -> None: ...
    def refresh_nodes(self, force_token_rebuild: bool = False) -> None: ...
    def register_user_type(self, keyspace: str, user_type: str, klass: type) -> None: ...
    def register_listener(self, listener: Any) -> None: ...
    def unregister_listener(self, listener: Any) -> None: ...
    @property
    def listeners(self) -> set[Any]: ...
    def add_prepared(self, query_id: bytes, prepared_statement: PreparedStatement) -> None: ...
    profile_manager: Any
    def add_execution_profile(self, name: object, profile: ExecutionProfile,
                              pool_wait_timeout: float = 5) -> None: ...

class ResultSet:
    column_names: list[str] | None
    column_types: list[Any] | None
    response_future: ResponseFuture
    @property
    def was_applied(self) -> bool: ...
    @property
    def current_rows(self) -> list[Any]: ...
    @property
    def has_more_pages(self) -> bool: ...
    @property
    def paging_state(self) -> bytes | None: ...
    def fetch_next_page(self) -> None: ...
    def one(self) -> Any: ...
    def all(self) -> list[Any]: ...
    def get_query_trace(self, max_wait_sec: float | None = None) -> Any: ...
    def __iter__(self) -> Iterator[Any]: ...
    def __getitem__(self, i: int) -> Any: ...

class ResponseFuture:
    message: Any
    prepared_statement: PreparedStatement | None
    row_factory: Callable[[Any, Any], Any]
    coordinator_host: Any
    _protocol_handler: type[_ProtocolHandler]
    @property
    def has_more_pages(self) -> bool: ...
    def result(self) -> ResultSet: ...
    def start_fetching_next_page(self) -> None: ...
    def send_request(self, error_no_hosts: bool = True) -> bool: ...
    def add_callbacks(self, callback: Callable[..., Any], errback: Callable[..., Any],
                      callback_args: tuple[Any, ...] = (), callback_kwargs: dict[str, Any] | None = None,
                      errback_args: tuple[Any, ...] = (), errback_kwargs: dict[str, Any] | None = None) -> None: ...
    def clear_callbacks(self) -> None: ...

_NOT_SET: object

class _ConfigMode:
    LEGACY: int
    PROFILES: int

class Session:
    cluster: Cluster
    is_shutdown: bool
    keyspace: str | None
    row_factory: Callable[[list[str], list[tuple[Any, ...]]], Any]
    default_fetch_size: int | None
    default_timeout: float
    client_protocol_handler: type[_ProtocolHandler]
    def execute(self, query: str | Statement | PreparedStatement,
                parameters: Sequence[Any] | Mapping[str, Any] | None = None,
                timeout: float = ..., trace: bool = False, custom_payload: Any = None,
                execution_profile: Any = ..., paging_state: bytes | None = None,
                host: Any = None, execute_as: str | None = None) -> ResultSet: ...
    def execute_async(self, query: str | Statement | PreparedStatement,
                      parameters: Sequence[Any] | Mapping[str, Any] | None = None,
                      trace: bool = False, custom_payload: Any = None, timeout: float = ...,
                      execution_profile: Any = ..., paging_state: bytes | None = None,
                      host: Any = None, execute_as: str | None = None) -> ResponseFuture: ...
    def prepare(self, query: str, custom_payload: Any = None,
                keyspace: str | None = None) -> PreparedStatement: ...
    def set_keyspace(self, keyspace: str) -> None: ...
    def shutdown(self) -> None: ...
    # the two halves of execute_async (the same in both drivers): build the future, then send it
    def _create_response_future(self, query: str | Statement | PreparedStatement,
                                parameters: Sequence[Any] | Mapping[str, Any] | None, trace: bool,
                                custom_payload: Any, timeout: object,
                                execution_profile: object = ..., paging_state: bytes | None = None,
                                host: Any = None) -> ResponseFuture: ...
    def _on_request(self, response_future: ResponseFuture) -> None: ...

EXEC_PROFILE_DEFAULT: object

class ExecutionProfile:
    def __init__(self, load_balancing_policy: LoadBalancingPolicy | None = None,
                 retry_policy: Any = None, consistency_level: int = ...,
                 serial_consistency_level: int | None = None, request_timeout: float = 10.0,
                 row_factory: Callable[[list[str], list[tuple[Any, ...]]], Any] = ...,
                 speculative_execution_policy: Any = None,
                 continuous_paging_options: Any = None) -> None: ...

class NoHostAvailable(Exception):
    errors: dict[Any, BaseException]
