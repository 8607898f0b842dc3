"""Server errors as the driver raises them, and what the request path refuses.

An ERROR frame is read by the driver's own message decoder (errors are rare, and this
gives the driver's ``ErrorMessage`` subclass per error code, with its ``info`` for the
retry policy and ``to_exception()`` for the exception the driver would raise).
"""

from __future__ import annotations

from typing import Any

from cassandra.protocol import ProtocolHandler

from cqlcodec.errors import CodecError, UnsupportedRequestError
from cqlcodec.requests.connection import Frame

__all__ = ["UnsupportedRequestError", "error_message", "error_of"]


def error_message(frame: Frame, version: int) -> Any:
    """The driver's ``ErrorMessage`` of an ERROR frame (the subclass of its code)."""
    handler: Any = ProtocolHandler
    return handler.decode_message(version, {}, frame.stream, frame.flags, frame.opcode,
                                  frame.body, None, None)


def error_of(frame: Frame, version: int, host: object) -> BaseException:
    """The exception the driver raises for an ERROR frame."""
    msg = error_message(frame, version)
    made = msg.to_exception() if hasattr(msg, "to_exception") else msg
    if isinstance(made, BaseException):
        return made
    return CodecError(f"server error from {host}: {made!r}")
