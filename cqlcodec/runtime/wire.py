"""Native-protocol primitives: bounds-checked reads, vints, and error helpers.

Every reader takes the buffer, the position to read at and ``end``, the
position the read must not pass, and raises :class:`DecodeError` naming what
was being read and the offset, never ``IndexError``.
"""

from __future__ import annotations

from typing import Final

from mypy_extensions import i64

from cqlcodec.errors import (
    DecodeError,
    EncodeTypeError,
    EncodeValueError,
    ProtocolVersionError,
)
from cqlcodec.runtime.buffers import BytesWriter, read_i16_be, read_i32_be

MIN_PROTOCOL_VERSION: Final = 3
MAX_PROTOCOL_VERSION: Final = 5
INT64_MIN: Final = -(1 << 63)
INT64_MAX: Final = (1 << 63) - 1
UINT64_MAX: Final = (1 << 64) - 1
_REPR_LIMIT: Final = 80


def check_protocol_version(protocol_version: int) -> None:
    """Raise ProtocolVersionError unless the version is 3, 4 or 5."""
    if protocol_version < MIN_PROTOCOL_VERSION or protocol_version > MAX_PROTOCOL_VERSION:
        raise ProtocolVersionError(
            f"unsupported native protocol version {protocol_version!r}; "
            f"cqlcodec supports versions {MIN_PROTOCOL_VERSION} to {MAX_PROTOCOL_VERSION}"
        )


def short_repr(value: object) -> str:
    """repr() of a value, cut to a readable length for error messages."""
    try:
        text = repr(value)
    except Exception:  # a broken __repr__ must not hide the real error
        text = f"<{type(value).__name__} object>"
    if len(text) > _REPR_LIMIT:
        text = text[: _REPR_LIMIT - 3] + "..."
    return text


def wrong_type(cql_name: str, value: object, expected: str) -> EncodeTypeError:
    """The error for a value whose Python type cannot encode as ``cql_name``."""
    return EncodeTypeError(
        f"cannot encode {type(value).__name__} {short_repr(value)} as {cql_name}: "
        f"expected {expected}",
        cql_name,
    )


def out_of_range(cql_name: str, value: object, why: str) -> EncodeValueError:
    """The error for a value of an acceptable type that is out of range."""
    return EncodeValueError(
        f"cannot encode {short_repr(value)} as {cql_name}: {why}", cql_name
    )


def malformed(cql_name: str, offset: i64, why: str) -> DecodeError:
    """The error for malformed bytes of ``cql_name`` at ``offset``."""
    return DecodeError(f"malformed {cql_name} at offset {offset}: {why}", cql_name, offset)


def need(buf_end: i64, pos: i64, n: i64, cql_name: str) -> None:
    """Check that ``n`` bytes are available at ``pos`` before ``buf_end``."""
    if n < 0 or pos + n > buf_end:
        raise malformed(
            cql_name, pos, f"needs {n} bytes but only {buf_end - pos} remain"
        )


def read_int(buf: bytes, pos: i64, end: i64, what: str) -> i64:
    """A bounds-checked ``[int]`` (signed 32-bit big-endian)."""
    if pos + 4 > end:
        raise malformed(what, pos, f"needs 4 bytes for an [int] but only {end - pos} remain")
    v: int = read_i32_be(buf, pos)
    return v


def read_short(buf: bytes, pos: i64, end: i64, what: str) -> i64:
    """A bounds-checked ``[short]`` (unsigned 16-bit big-endian)."""
    if pos + 2 > end:
        raise malformed(what, pos, f"needs 2 bytes for a [short] but only {end - pos} remain")
    v: int = read_i16_be(buf, pos)
    return v & 0xFFFF


def read_string(buf: bytes, pos: i64, end: i64, what: str) -> tuple[str, i64]:
    """A ``[string]``: [short] length + UTF-8. Returns (text, next position)."""
    n = read_short(buf, pos, end, what)
    pos += 2
    if pos + n > end:
        raise malformed(what, pos, f"string of {n} bytes but only {end - pos} remain")
    try:
        text = buf[pos: pos + n].decode("utf-8")
    except UnicodeDecodeError as exc:
        raise malformed(what, pos, f"invalid UTF-8 in string: {exc.reason}") from None
    return text, pos + n


def skip_string(buf: bytes, pos: i64, end: i64, what: str) -> i64:
    """The position after the ``[string]`` at ``pos`` (bounds-checked, not decoded)."""
    n = read_short(buf, pos, end, what)
    need(end, pos + 2, n, what)
    return pos + 2 + n


def read_short_bytes(buf: bytes, pos: i64, end: i64, what: str) -> tuple[bytes, i64]:
    """``[short bytes]``: [short] length + bytes. Returns (bytes, next position)."""
    n = read_short(buf, pos, end, what)
    pos += 2
    if pos + n > end:
        raise malformed(what, pos, f"{n} bytes announced but only {end - pos} remain")
    return buf[pos: pos + n], pos + n


def read_uvint(buf: bytes, pos: i64, end: i64, what: str) -> tuple[int, i64]:
    """An ``[unsigned vint]``; returns (value, next position). Values are < 2**64."""
    if pos >= end:
        raise malformed(what, pos, "unsigned vint: no bytes remain")
    first: i64 = buf[pos]
    extra: i64 = 0
    mask: i64 = 0x80
    while extra < 8 and (first & mask) != 0:
        extra += 1
        mask >>= 1
    if pos + 1 + extra > end:
        raise malformed(
            what, pos, f"unsigned vint needs {extra + 1} bytes but only {end - pos} remain"
        )
    value: int = first & (0xFF >> extra)
    p = pos + 1
    stop = p + extra
    while p < stop:
        value = (value << 8) | buf[p]
        p += 1
    return value, p


def read_vint(buf: bytes, pos: i64, end: i64, what: str) -> tuple[int, i64]:
    """A signed (zigzag) ``[vint]``; returns (value, next position)."""
    raw, p = read_uvint(buf, pos, end, what)
    return (raw >> 1) ^ -(raw & 1), p


def write_uvint(w: BytesWriter, value: int) -> None:
    """Append ``value`` (0 <= value < 2**64) as an ``[unsigned vint]``."""
    if value < 0x80:
        w.append(value)
        return
    extra = 1
    while extra < 8 and value >= (1 << (7 * (extra + 1))):
        extra += 1
    if extra == 8:
        w.append(0xFF)
    else:
        w.append(((0xFF00 >> extra) & 0xFF) | (value >> (8 * extra)))
    shift = 8 * (extra - 1)
    while shift >= 0:
        w.append((value >> shift) & 0xFF)
        shift -= 8


def zigzag(value: int) -> int:
    """Zigzag-encode a signed 64-bit integer for a ``[vint]``."""
    return ((value << 1) ^ (value >> 63)) & UINT64_MAX


def uvint_size(value: int) -> int:
    """Number of bytes ``write_uvint`` emits for ``value``."""
    size = 1
    while size < 9 and value >= (1 << (7 * size)):
        size += 1
    return size
