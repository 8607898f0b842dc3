"""Connection end points, connections and their exceptions."""

from typing import Any

class EndPoint: ...
class DefaultEndPoint(EndPoint):
    def __init__(self, address: str, port: int = 9042) -> None: ...

class ConnectionException(Exception):
    def __init__(self, message: str, endpoint: Any = None) -> None: ...
class CrcMismatchException(ConnectionException): ...
class ProtocolError(Exception): ...
class ProtocolVersion:
    SUPPORTED_VERSIONS: tuple[int, ...]
class _Frame:
    version: int
    flags: int
    stream: int
    opcode: int
    body_offset: int
    end_pos: int
    def __init__(self, version: int, flags: int, stream: int, opcode: int,
                 body_offset: int, end_pos: int) -> None: ...
class Connection:
    in_buffer_size: int
    endpoint: Any
    is_defunct: bool
    is_closed: bool
    def process_msg(self, header: _Frame, body: bytes) -> None: ...
    def defunct(self, exc: BaseException) -> None: ...
    def close(self) -> None: ...
