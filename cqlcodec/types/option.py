"""Reading a binary ``[option]`` (a type in RESULT/PREPARED metadata) into a CqlType.

Layout (native protocol spec, section 4.2.5.2)::

    [short] id, then by id:
    0x0000 custom : [string] Java class name (vectors and other custom types)
    0x0001-0x0015 : a scalar, no payload (0x000A, the v1/v2 "text", reads as text)
    0x0020 list   : element [option]
    0x0021 map    : key [option] value [option]
    0x0022 set    : element [option]
    0x0030 UDT    : [string] keyspace [string] name [short] n, n x ([string] field, [option])
    0x0031 tuple  : [short] n, n x [option]

Every problem (unknown id, truncation, bad UTF-8, duplicate UDT fields, a tuple
without items) raises :class:`DecodeError` naming the offset; nesting deeper than
MAX_TYPE_DEPTH raises :class:`~cqlcodec.errors.TypeTooDeepError`, a DecodeError that
is also an UnsupportedTypeError. A custom class name that the Java-name parser cannot
read is not an error: it becomes an opaque ``custom_type(name)`` whose values are raw
bytes.
"""

from __future__ import annotations

from typing import Final

from mypy_extensions import i64

from cqlcodec import kinds as K
from cqlcodec.errors import DecodeError, TypeParseError, TypeTooDeepError
from cqlcodec.runtime.wire import malformed, read_short, read_string, skip_string
from cqlcodec.types.model import (
    CqlType,
    custom_type,
    list_of,
    map_of,
    scalar_type,
    set_of,
    tuple_of,
    user_type,
)
from cqlcodec.types.parse import MAX_TYPE_DEPTH, parse_class_name

_WHAT: Final = "type [option]"
_OPTION_TEXT_V2: Final = 0x000A
_LAST_SCALAR_ID: Final = 0x0015


def read_type_option(buf: bytes | bytearray | memoryview, offset: int = 0) -> tuple[CqlType, int]:
    """Decode the ``[option]`` at ``offset``; return the type and the offset after it.

    Raises :class:`DecodeError` (naming the byte offset) for truncated or malformed bytes.
    """
    if isinstance(buf, bytes):
        data = buf
    elif isinstance(buf, (bytearray, memoryview)):
        data = bytes(buf)
    else:
        raise TypeError(f"expected bytes, bytearray or memoryview, not {type(buf).__name__}")
    size = len(data)
    if offset < 0 or offset > size:
        raise DecodeError(f"offset {offset} is outside the buffer of {size} bytes",
                          _WHAT, offset)
    t, pos = read_option_at(data, offset, size, 0)
    return t, pos


def read_option_at(buf: bytes, pos: i64, end: i64, depth: i64 = 0) -> tuple[CqlType, i64]:
    """Decode the ``[option]`` at ``buf[pos:end]``; return the type and the position after it.

    For metadata parsers: never reads at or past ``end``. ``depth`` is the number of
    enclosing types (0 at the top); nesting of MAX_TYPE_DEPTH levels or more is rejected.
    """
    code = _option_id(buf, pos, end, depth)
    p = pos + 2
    if 0 < code <= _LAST_SCALAR_ID:
        return _SCALARS[code], p
    if code == K.CUSTOM:
        name, q = read_string(buf, p, end, "custom type class name")
        try:
            t = parse_class_name(name)
        except TypeParseError:
            # a class name we cannot read is an opaque custom type (raw bytes), as in the
            # drivers; only names that parse get structure (vectors, UDTs, ...)
            t = custom_type(name)
        return t, q
    if code == K.LIST or code == K.SET:
        element, p = read_option_at(buf, p, end, depth + 1)
        return (list_of(element) if code == K.LIST else set_of(element)), p
    if code == K.MAP:
        key, p = read_option_at(buf, p, end, depth + 1)
        value, p = read_option_at(buf, p, end, depth + 1)
        return map_of(key, value), p
    if code == K.TUPLE:
        n = read_short(buf, p, end, "tuple type item count")
        if n == 0:
            raise malformed(_WHAT, p, "a tuple type with no items")
        p += 2
        items: list[CqlType] = []
        for _i in range(n):
            item, p = read_option_at(buf, p, end, depth + 1)
            items.append(item)
        return tuple_of(*items), p
    if code == K.UDT:
        return _read_user_type(buf, p, end, depth)
    raise malformed(_WHAT, pos, f"unknown type id {code:#06x}")


def skip_option_at(buf: bytes, pos: i64, end: i64, depth: i64 = 0) -> tuple[i64, bool]:
    """The position after the ``[option]`` at ``buf[pos:end]`` and whether it holds a
    user type, its type not built: the ids, bounds and nesting are checked as
    :func:`read_option_at` checks them (names are not decoded)."""
    code = _option_id(buf, pos, end, depth)
    p = pos + 2
    if 0 < code <= _LAST_SCALAR_ID:
        return p, False
    if code == K.CUSTOM:
        return skip_string(buf, p, end, "custom type class name"), False
    if code == K.LIST or code == K.SET:
        return skip_option_at(buf, p, end, depth + 1)
    if code == K.MAP:
        p, key_udt = skip_option_at(buf, p, end, depth + 1)
        p, value_udt = skip_option_at(buf, p, end, depth + 1)
        return p, key_udt or value_udt
    if code == K.TUPLE:
        n = read_short(buf, p, end, "tuple type item count")
        if n == 0:
            raise malformed(_WHAT, p, "a tuple type with no items")
        p += 2
        udt = False
        for _i in range(n):
            p, inner = skip_option_at(buf, p, end, depth + 1)
            udt = udt or inner
        return p, udt
    if code == K.UDT:
        p = skip_string(buf, p, end, "user type keyspace")
        p = skip_string(buf, p, end, "user type name")
        n = read_short(buf, p, end, "user type field count")
        p += 2
        for _i in range(n):
            p = skip_string(buf, p, end, "user type field name")
            p, _inner = skip_option_at(buf, p, end, depth + 1)
        return p, True
    raise malformed(_WHAT, pos, f"unknown type id {code:#06x}")


def _option_id(buf: bytes, pos: i64, end: i64, depth: i64) -> i64:
    """The type id of the ``[option]`` at ``pos``, refusing nesting of MAX_TYPE_DEPTH."""
    if depth >= MAX_TYPE_DEPTH:
        raise TypeTooDeepError(
            f"unsupported {_WHAT} at offset {pos}: type nested more than {MAX_TYPE_DEPTH} "
            "levels deep (cqlcodec's bound)", _WHAT, pos)
    return read_short(buf, pos, end, _WHAT)


def _read_user_type(buf: bytes, pos: i64, end: i64, depth: i64) -> tuple[CqlType, i64]:
    keyspace, p = read_string(buf, pos, end, "user type keyspace")
    name, p = read_string(buf, p, end, "user type name")
    n = read_short(buf, p, end, "user type field count")
    p += 2
    fields: list[tuple[str, CqlType]] = []
    seen: set[str] = set()
    for _i in range(n):
        field_pos = p
        field, p = read_string(buf, p, end, "user type field name")
        if field in seen:
            raise malformed(_WHAT, field_pos,
                            f"duplicate field name {field!r} in user type {name!r}")
        seen.add(field)
        t, p = read_option_at(buf, p, end, depth + 1)
        fields.append((field, t))
    return user_type(keyspace, name, fields), p


def _scalar_table() -> list[CqlType]:
    table: list[CqlType] = []
    for code in range(_LAST_SCALAR_ID + 1):
        if code == 0:
            table.append(scalar_type(K.INT))  # never used: id 0 is custom
        elif code == _OPTION_TEXT_V2:
            table.append(scalar_type(K.TEXT))
        else:
            table.append(scalar_type(code))
    return table


_SCALARS: Final = _scalar_table()
