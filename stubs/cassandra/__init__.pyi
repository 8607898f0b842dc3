"""Stubs for the parts of cassandra-driver / scylla-driver (package ``cassandra``) that
cqlcodec.driver and tests/integration use. Both drivers install the same package."""

from typing import Any

__version__: str
__version_info__: tuple[Any, ...]

class DriverException(Exception): ...
class RequestValidationException(DriverException): ...
class InvalidRequest(RequestValidationException): ...
class Unauthorized(RequestValidationException): ...
class AuthenticationFailed(DriverException): ...
class OperationTimedOut(DriverException):
    def __init__(self, errors: Any = None, last_host: Any = None) -> None: ...
class DependencyException(Exception): ...

class ConsistencyLevel:
    ONE: int
    QUORUM: int
    LOCAL_ONE: int
    ANY: int
    TWO: int
    THREE: int
    EACH_QUORUM: int
    LOCAL_QUORUM: int
    ALL: int

class ProtocolVersion:
    V3: int
    V4: int
    V5: int
    V6: int
    SUPPORTED_VERSIONS: tuple[int, ...]
    BETA_VERSIONS: tuple[int, ...]

class RequestExecutionException(DriverException): ...
class Unavailable(RequestExecutionException): ...
class Timeout(RequestExecutionException): ...
class ReadTimeout(Timeout): ...
class WriteTimeout(Timeout):
    def __init__(self, summary_message: str, consistency: int | None = None,
                 required_responses: int | None = None, received_responses: int | None = None,
                 write_type: int = ...) -> None: ...
