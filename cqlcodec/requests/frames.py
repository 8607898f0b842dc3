"""Request frames of the CQL native protocol v4 and v5, as bytes ready to write.

An envelope is the 9-byte header (version, flags, stream id, opcode, body length) and
its body. :func:`segments` wraps envelopes in protocol v5 segments (compressed or not): as
many whole envelopes as fit in one self-contained segment of at most 131,071 bytes,
and an envelope larger than that cut into slices that are not self-contained; each
segment carries the CRC24 of its header and the CRC32 of its payload.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from cqlcodec.connection.reassembler import MAX_PAYLOAD
from cqlcodec.connection.segment_writer import Compress, write_segment
from cqlcodec.errors import CodecError
from cqlcodec.runtime.buffers import BytesWriter, write_i16_be, write_i32_be, write_i64_be

OP_ERROR: Final = 0x00
OP_STARTUP: Final = 0x01
OP_READY: Final = 0x02
OP_AUTHENTICATE: Final = 0x03
OP_OPTIONS: Final = 0x05
OP_SUPPORTED: Final = 0x06
OP_QUERY: Final = 0x07
OP_RESULT: Final = 0x08
OP_PREPARE: Final = 0x09
OP_EXECUTE: Final = 0x0A
OP_BATCH: Final = 0x0D
OP_AUTH_CHALLENGE: Final = 0x0E
OP_AUTH_RESPONSE: Final = 0x0F
OP_AUTH_SUCCESS: Final = 0x10

FLAG_TRACING: Final = 0x02
FLAG_CUSTOM_PAYLOAD: Final = 0x04
FLAG_WARNING: Final = 0x08

# <query_parameters> flags
_VALUES: Final = 0x0001
_SKIP_METADATA: Final = 0x0002
_PAGE_SIZE: Final = 0x0004
_PAGING_STATE: Final = 0x0008
_SERIAL: Final = 0x0010
_TIMESTAMP: Final = 0x0020
_KEYSPACE: Final = 0x0080

MAX_BODY: Final = 256 * 1024 * 1024


class RequestTooLargeError(CodecError, ValueError):
    """A request body beyond what the server accepts (256 MiB) or a field beyond its
    protocol limit."""


def envelope(version: int, flags: int, stream: int, opcode: int, body: bytes) -> bytes:
    """The 9-byte header and ``body``: one request as it goes on the wire (before v5 segments)."""
    n = len(body)
    if n > MAX_BODY:
        raise RequestTooLargeError(f"a request body of {n} bytes is larger than the 256 MiB "
                                   "the server accepts")
    w = BytesWriter()
    w.append(version)
    w.append(flags)
    write_i16_be(w, stream)
    w.append(opcode)
    write_i32_be(w, n)
    w.write(body)
    return w.getvalue()


def _string(w: BytesWriter, text: str) -> None:
    data = text.encode("utf-8")
    if len(data) > 0xFFFF:
        raise RequestTooLargeError(f"a [string] of {len(data)} bytes (at most 65535)")
    write_i16_be(w, len(data))
    w.write(data)


def _long_string(w: BytesWriter, text: str) -> None:
    data = text.encode("utf-8")
    write_i32_be(w, len(data))
    w.write(data)


def _short_bytes(w: BytesWriter, data: bytes) -> None:
    if len(data) > 0xFFFF:
        raise RequestTooLargeError(f"a [short bytes] of {len(data)} bytes (at most 65535)")
    write_i16_be(w, len(data))
    w.write(data)


def string_map(entries: Mapping[str, str]) -> bytes:
    """A ``[string map]`` (the STARTUP body)."""
    w = BytesWriter()
    write_i16_be(w, len(entries))
    for key, value in entries.items():
        _string(w, key)
        _string(w, value)
    return w.getvalue()


def bytes_value(data: bytes | None) -> bytes:
    """A ``[bytes]`` (the AUTH_RESPONSE body); None is the null value."""
    w = BytesWriter()
    if data is None:
        write_i32_be(w, -1)
    else:
        write_i32_be(w, len(data))
        w.write(data)
    return w.getvalue()


class Parameters:
    """The ``<query_parameters>`` of one QUERY or EXECUTE, minus the values.

    ``consistency`` and ``serial`` are the protocol's consistency codes (``serial``
    None: not sent); ``page_size`` 0 or less: no paging; ``timestamp`` None: the
    server's clock; ``keyspace``: v5 only, None otherwise; ``skip_metadata``: the
    answer's rows come without their column specs."""


    def __init__(self, consistency: int, serial: int | None, page_size: int,
                 paging_state: bytes | None, timestamp: int | None, keyspace: str | None,
                 skip_metadata: bool) -> None:
        self.consistency = consistency
        self.serial = serial
        self.page_size = page_size
        self.paging_state = paging_state
        self.timestamp = timestamp
        self.keyspace = keyspace
        self.skip_metadata = skip_metadata


def _write_parameters(w: BytesWriter, version: int, p: Parameters,
                      values: Sequence[object] | None) -> None:
    flags = 0
    if values:
        flags |= _VALUES
    if p.skip_metadata:
        flags |= _SKIP_METADATA
    if p.page_size > 0:
        flags |= _PAGE_SIZE
    if p.paging_state is not None:
        flags |= _PAGING_STATE
    if p.serial is not None:
        flags |= _SERIAL
    if p.timestamp is not None:
        flags |= _TIMESTAMP
    keyspace = p.keyspace if version >= 5 else None
    if keyspace is not None:
        flags |= _KEYSPACE
    write_i16_be(w, p.consistency)
    if version >= 5:
        write_i32_be(w, flags)
    else:
        w.append(flags)
    if values:
        n = len(values)
        if n > 0xFFFF:
            raise RequestTooLargeError(f"{n} values cannot be sent in one request (max 65535)")
        write_i16_be(w, n)
        for v in values:
            if isinstance(v, bytes):
                write_i32_be(w, len(v))
                w.write(v)
            elif v is None:
                write_i32_be(w, -1)
            else:  # cqlcodec.UNSET or the driver's UNSET_VALUE
                write_i32_be(w, -2)
    if p.page_size > 0:
        write_i32_be(w, p.page_size)
    state = p.paging_state
    if state is not None:
        write_i32_be(w, len(state))
        w.write(state)
    serial = p.serial
    if serial is not None:
        write_i16_be(w, serial)
    timestamp = p.timestamp
    if timestamp is not None:
        write_i64_be(w, timestamp)
    if keyspace is not None:
        _string(w, keyspace)


def execute_body(version: int, query_id: bytes, metadata_id: bytes | None, p: Parameters,
                 values: Sequence[object] | None) -> bytes:
    """An EXECUTE body: the statement id (v5: and its result metadata id), the parameters."""
    w = BytesWriter()
    _short_bytes(w, query_id)
    if version >= 5:
        _short_bytes(w, metadata_id if metadata_id is not None else b"")
    _write_parameters(w, version, p, values)
    return w.getvalue()


def query_body(version: int, query: str, p: Parameters,
               values: Sequence[object] | None) -> bytes:
    """A QUERY body: the CQL text and the parameters."""
    w = BytesWriter()
    _long_string(w, query)
    _write_parameters(w, version, p, values)
    return w.getvalue()


def batch_body(version: int, batch_type: int, statements: bytes, consistency: int,
               serial: int | None, timestamp: int | None) -> bytes:
    """A BATCH body whose statements are already encoded (``statements``: ``[short] n``
    then the n statements, as :func:`cqlcodec.protocol.batch.batch_statements` makes
    them), then the consistency, flags, serial consistency and timestamp."""
    w = BytesWriter()
    w.append(batch_type)
    w.write(statements)
    write_i16_be(w, consistency)
    flags = (_SERIAL if serial is not None else 0) | (_TIMESTAMP if timestamp is not None else 0)
    if version >= 5:
        write_i32_be(w, flags)
    else:
        w.append(flags)
    if serial is not None:
        write_i16_be(w, serial)
    if timestamp is not None:
        write_i64_be(w, timestamp)
    return w.getvalue()


def prepare_body(version: int, query: str, keyspace: str | None) -> bytes:
    """A PREPARE body: the CQL text (v5: flags and the keyspace to prepare in)."""
    w = BytesWriter()
    _long_string(w, query)
    if version >= 5:
        write_i32_be(w, 1 if keyspace else 0)
        if keyspace:
            _string(w, keyspace)
    return w.getvalue()


def segments(frames: list[bytes], compress: Compress | None = None) -> bytes:
    """Protocol v5 segments carrying ``frames`` in order: whole frames share
    self-contained segments of at most 131,071 bytes; a larger frame goes alone, cut
    into slices that are not self-contained. ``compress`` (a raw LZ4 block of a
    payload): each payload is stored compressed when that makes it shorter."""
    w = BytesWriter()
    group: list[bytes] = []
    size = 0
    for frame in frames:
        n = len(frame)
        if size + n > MAX_PAYLOAD and group:
            write_segment(w, b"".join(group), compress, True)
            group = []
            size = 0
        if n > MAX_PAYLOAD:
            view = memoryview(frame)
            for start in range(0, n, MAX_PAYLOAD):
                write_segment(w, bytes(view[start:start + MAX_PAYLOAD]), compress, False)
            continue
        group.append(frame)
        size += n
    if group:
        write_segment(w, group[0] if len(group) == 1 else b"".join(group), compress, True)
    return w.getvalue()
