"""Checks shared by the scalar codec tests: encode/decode through every entry point."""

from __future__ import annotations

import datetime
import math
from typing import Any

import pytest

import cqlcodec
from cqlcodec import kinds
from cqlcodec.codecs.base import FLAG_TZ_AWARE, Codec
from cqlcodec.codecs.builder import scalar_codec
from cqlcodec.errors import CodecError, DecodeError
from cqlcodec.runtime.buffers import BytesWriter

KIND: dict[str, int] = {name: kind for kind, name in kinds.SCALAR_NAMES.items()}
UTC = datetime.timezone.utc
NANOS_PER_DAY = 86_400_000_000_000


def codec(name: str, flags: int = 0) -> Codec:
    return scalar_codec(KIND[name], flags)


def same(a: object, b: object) -> bool:
    """Equality that also holds for NaN and distinguishes -0.0, and checks the type."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    if isinstance(a, datetime.datetime) and isinstance(b, datetime.datetime):
        return a == b and a.tzinfo == b.tzinfo
    return a == b


def enc(name: str, value: object) -> bytes:
    """encode(), checked against encode_into, encode_value_into and CqlType.serialize."""
    c = codec(name)
    data = c.encode(value)
    assert type(data) is bytes
    w = BytesWriter()
    w.write(b"xyz")
    c.encode_into(w, value)
    assert w.getvalue() == b"xyz" + data
    w = BytesWriter()
    c.encode_value_into(w, value)
    assert w.getvalue() == len(data).to_bytes(4, "big") + data
    assert cqlcodec.scalar_type(KIND[name]).serialize(value) == data
    return data


def dec(name: str, data: bytes, flags: int = 0) -> Any:
    """decode() of the whole buffer, checked against a decode at an offset inside padding."""
    c = codec(name, flags)
    value = c.decode(data, 0, len(data))
    padded = b"\xa5" * 3 + data + b"\x5a" * 5
    assert same(c.decode(padded, 3, len(data)), value)
    assert same(cqlcodec.scalar_type(KIND[name]).deserialize(data, tz_aware=bool(flags & FLAG_TZ_AWARE)),
                value)
    return value


def check(name: str, value: object, hexed: str, decoded: object = None) -> None:
    """``value`` encodes to ``hexed``, which decodes to ``decoded`` (default: ``value``)."""
    data = bytes.fromhex(hexed)
    assert enc(name, value) == data
    expected = value if decoded is None else decoded
    assert same(dec(name, data), expected), (dec(name, data), expected)


def decode_error(name: str, data: bytes, match: str | None = None, flags: int = 0) -> DecodeError:
    """The DecodeError for ``data`` decoded at offset 7, checking type name and offset."""
    c = codec(name, flags)
    padded = b"\x00" * 7 + data + b"\x00" * 3
    with pytest.raises(DecodeError, match=match) as info:
        c.decode(padded, 7, len(data))
    err = info.value
    assert err.offset is not None and 7 <= err.offset <= 7 + len(data), err.offset
    assert c.cql_name in str(err)
    assert f"offset {err.offset}" in str(err)
    assert isinstance(err, ValueError) and isinstance(err, CodecError)
    return err


def encode_error(name: str, value: object, kind: type[Exception], match: str | None = None) -> None:
    c = codec(name)
    for attempt in (c.encode, lambda v: c.encode_into(BytesWriter(), v)):
        with pytest.raises(kind, match=match) as info:
            attempt(value)
        assert name in str(info.value), str(info.value)
        assert isinstance(info.value, CodecError)
