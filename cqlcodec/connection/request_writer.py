"""The frames of EXECUTE and QUERY requests, built by compiled code.

The drivers encode every request through ``BytesIO`` objects and a chain of small
interpreted writes (``encode_message``, ``send_body``, ``_write_query_params``; about
2.5 µs for a one-row EXECUTE). :func:`encode_request` builds the same frame (header
and body, byte for byte) for the requests a session sends most: the driver's
``ExecuteMessage`` (and :class:`~cqlcodec.connection.skip_metadata.SkipMetadataExecute`)
and ``QueryMessage``, on protocol v4 and v5. It refuses (returns None) anything else: other
messages, a custom payload, continuous paging, v4 frame compression, values that are not
``bytes``, None or the driver's unset value, and any field the driver itself would reject;
:class:`RequestEncoder` then hands the request to the driver's own encoder, which encodes
it (or raises its own error) as before.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Final

from cassandra.protocol import _UNSET_VALUE, ExecuteMessage, ProtocolHandler, QueryMessage

from cqlcodec.connection.skip_metadata import SkipMetadataExecute
from cqlcodec.runtime.buffers import BytesWriter, write_i16_be, write_i32_be, write_i64_be

EXECUTE: Final = 0x0A
QUERY: Final = 0x07
TRACING: Final = 0x02
BETA: Final = 0x10
VALUES: Final = 0x01
SKIP_METADATA: Final = 0x02
PAGE_SIZE: Final = 0x04
PAGING_STATE: Final = 0x08
SERIAL: Final = 0x10
TIMESTAMP: Final = 0x20
KEYSPACE: Final = 0x80
V4: Final = 4
V5: Final = 5

Encoder = Callable[..., bytes]


def _string(w: BytesWriter, value: object, width: int) -> bool:
    """A ``[string]`` (``width`` 2) or ``[long string]`` (``width`` 4)."""
    if type(value) is str:
        data = value.encode("utf8")
    elif type(value) is bytes:
        data = value
    else:
        return False
    size = len(data)
    if width == 2:
        if size > 0x7FFF:
            return False
        write_i16_be(w, size)
    elif size > 0x7FFFFFFF:
        return False
    else:
        write_i32_be(w, size)
    w.write(data)
    return True


def _short(w: BytesWriter, value: object) -> bool:
    if type(value) is not int or not 0 <= value <= 0xFFFF:
        return False
    n: int = value
    w.append((n >> 8) & 0xFF)
    w.append(n & 0xFF)
    return True


def _values(w: BytesWriter, params: object) -> bool:
    if type(params) is list:
        seq: list[Any] | tuple[Any, ...] = params
    elif type(params) is tuple:
        seq = params
    else:
        return False
    if len(seq) > 0x7FFF:
        return False
    write_i16_be(w, len(seq))
    for value in seq:
        if type(value) is bytes:
            data: bytes = value
            write_i32_be(w, len(data))
            w.write(data)
        elif value is None:
            write_i32_be(w, -1)
        elif value is _UNSET_VALUE:
            write_i32_be(w, -2)
        else:
            return False
    return True


def _query_parameters(w: BytesWriter, msg: Any, version: int, flags: int) -> bool:
    """The ``<query_parameters>`` of the driver's ``_write_query_params`` (v4, v5)."""
    if not _short(w, msg.consistency_level):
        return False
    params = msg.query_params
    if params is not None:
        flags |= VALUES
    serial = msg.serial_consistency_level
    if serial:
        flags |= SERIAL
    fetch_size = msg.fetch_size
    if fetch_size:
        if type(fetch_size) is not int or not -0x80000000 <= fetch_size <= 0x7FFFFFFF:
            return False
        flags |= PAGE_SIZE
    paging_state = msg.paging_state
    if paging_state:
        flags |= PAGING_STATE
    timestamp = msg.timestamp
    if timestamp is not None:
        if type(timestamp) is not int or not 0 <= timestamp <= 0xFFFFFFFFFFFFFFFF:
            return False
        flags |= TIMESTAMP
    keyspace = msg.keyspace
    if keyspace is not None:
        if version < V5:
            return False
        flags |= KEYSPACE
    if version >= V5:
        write_i32_be(w, flags)
    else:
        w.append(flags)
    if params is not None and not _values(w, params):
        return False
    if fetch_size:
        size: int = fetch_size
        write_i32_be(w, size)
    if paging_state and not _string(w, paging_state, 4):
        return False
    if serial and not _short(w, serial):
        return False
    if timestamp is not None:
        stamp: int = timestamp
        write_i64_be(w, stamp - (1 << 64) if stamp >= 1 << 63 else stamp)
    return keyspace is None or _string(w, keyspace, 2)


def _body(w: BytesWriter, msg: Any, version: int) -> int:
    """Write ``msg``'s body to ``w``: its opcode, or 0 for a refusal."""
    kind = type(msg)
    if kind is QueryMessage:
        if not _string(w, msg.query, 4):
            return 0
        return QUERY if _query_parameters(w, msg, version, 0) else 0
    if kind is not ExecuteMessage and kind is not SkipMetadataExecute:
        return 0
    if not _string(w, msg.query_id, 2):
        return 0
    flags = 0
    if version >= V5:
        if not _string(w, msg.result_metadata_id, 2):
            return 0
        if kind is SkipMetadataExecute:
            flags = SKIP_METADATA
    return EXECUTE if _query_parameters(w, msg, version, flags) else 0


def encode_request(msg: Any, stream_id: int, protocol_version: int,
                   compressor: object = None, allow_beta_protocol_version: bool = False) -> bytes | None:
    """The frame the driver's ``encode_message`` makes of ``msg`` (same arguments), or
    None for a request this module leaves to the driver."""
    if protocol_version != V4 and protocol_version != V5:
        return None
    if compressor is not None and protocol_version < V5:
        return None  # the frame body is compressed on v4: the driver's
    if getattr(msg, "custom_payload", None) or getattr(msg, "continuous_paging_options", None):
        return None
    if not -0x8000 <= stream_id <= 0x7FFF:
        return None
    w = BytesWriter()
    opcode = _body(w, msg, protocol_version)
    if not opcode:
        return None
    body = w.getvalue()
    flags = 0
    if msg.tracing:
        flags |= TRACING
    if allow_beta_protocol_version:
        flags |= BETA
    frame = BytesWriter()
    frame.append(protocol_version)
    frame.append(flags)
    write_i16_be(frame, stream_id)
    frame.append(opcode)
    write_i32_be(frame, len(body))
    frame.write(body)
    return frame.getvalue()


class RequestEncoder:
    """A connection's encoder: :func:`encode_request`, else the driver's ``encoder``
    (given every argument it was given)."""

    def __init__(self, encoder: Encoder) -> None:
        self.encoder = encoder

    def __call__(self, msg: Any, stream_id: int, protocol_version: int,
                 compressor: object = None, allow_beta_protocol_version: object = False,
                 **others: Any) -> bytes:
        if not others:
            frame = encode_request(msg, stream_id, protocol_version, compressor,
                                   bool(allow_beta_protocol_version))
            if frame is not None:
                return frame
        out: bytes = self.encoder(msg, stream_id, protocol_version, compressor=compressor,
                                  allow_beta_protocol_version=allow_beta_protocol_version,
                                  **others)
        return out


DRIVER_ENCODE: Final[object] = getattr(ProtocolHandler.encode_message, "__func__", None)
_encoders: dict[object, RequestEncoder] = {}
_encoders_lock: Final = threading.Lock()


def request_encoder(encoder: Any) -> Any:
    """The encoder a cqlcodec connection sends with in place of ``encoder``: a
    :class:`RequestEncoder` (one per protocol handler class) when ``encoder`` is the
    driver's own ``encode_message`` of a handler class, else ``encoder`` itself (a
    handler that encodes its own way keeps doing so)."""
    if getattr(encoder, "__func__", None) is not DRIVER_ENCODE:
        return encoder
    handler = getattr(encoder, "__self__", None)
    found = _encoders.get(handler)
    if found is None:
        with _encoders_lock:
            if len(_encoders) > 64:
                _encoders.clear()
            found = _encoders[handler] = RequestEncoder(encoder)
    return found
