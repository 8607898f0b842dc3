"""Scalar codecs: text, ascii, blob, empty and unknown custom types (cqlcodec.codecs.strings)."""

from __future__ import annotations

import datetime
import math
from typing import Any

import pytest

import cqlcodec
from cqlcodec import kinds
from cqlcodec.codecs.base import FLAG_TZ_AWARE, Codec
from cqlcodec.codecs.builder import custom_codec, scalar_codec
from cqlcodec.errors import CodecError, DecodeError, EncodeTypeError, EncodeValueError
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


# --- text, ascii, blob ------------------------------------------------------------------------

@pytest.mark.parametrize(("value", "hexed"), [
    ("hello world", "68656c6c6f20776f726c64"), ("é", "c3a9"), ("€", "e282ac"),
    ("😀", "f09f9880"), ("\x00", "00"), ("a\u0301", "61cc81"), ("\uffff", "efbfbf"),
])
def test_text_vectors(value: str, hexed: str) -> None:
    check("text", value, hexed)


def test_text_errors() -> None:
    encode_error("text", "\ud800", EncodeValueError, "surrogate")
    encode_error("text", "ok\udfffok", EncodeValueError)
    for bad in (b"abc", bytearray(b"a"), 1, None, ["a"]):
        encode_error("text", bad, EncodeTypeError)
    for raw, at in ((b"\xff", 0), (b"ab\xc3", 2), (b"\xc0\x80", 0), (b"\xed\xa0\x80", 0),
                    (b"ok\xf4\x90\x80\x80", 2)):
        err = decode_error("text", raw, "UTF-8")
        assert err.offset == 7 + at


def test_varchar_option_id_decodes_like_text() -> None:
    assert scalar_codec(0x000A).decode(b"hi", 0, 2) == "hi"


def test_ascii() -> None:
    check("ascii", "abc ~\x7f\x00", "616263207e7f00")
    encode_error("ascii", "é", EncodeValueError, "non-ASCII")
    encode_error("ascii", "ab\udc80", EncodeValueError)
    for bad in (b"abc", 5, None):
        encode_error("ascii", bad, EncodeTypeError)
    err = decode_error("ascii", b"ab\x80", "ASCII")
    assert err.offset == 9


def test_blob() -> None:
    check("blob", b"\x00\xff", "00ff")
    assert enc("blob", bytearray(b"\x01\x02")) == b"\x01\x02"
    assert enc("blob", memoryview(b"\x00\x01\x02\x03")[1:3]) == b"\x01\x02"
    assert enc("blob", memoryview(b"\x00\x00\x00\x01").cast("i")) == b"\x00\x00\x00\x01"
    for bad in (3, "abc", None, [1, 2], 1.0):
        encode_error("blob", bad, EncodeTypeError)
    assert type(dec("blob", b"ab")) is bytes


# --- empty and custom -------------------------------------------------------------------------

def test_empty_type() -> None:
    c = codec("empty")
    assert c.encode(b"") == b""
    assert c.decode(b"abc", 1, 0) is None
    decode_error("empty", b"\x00")
    with pytest.raises(EncodeValueError):
        c.encode(b"\x00")
    with pytest.raises(EncodeTypeError):
        c.encode(5)
    w = BytesWriter()
    c.encode_value_into(w, b"")
    assert w.getvalue() == b"\x00\x00\x00\x00"


def test_unknown_custom_type_is_raw_bytes() -> None:
    name = "'org.example.Foo'"
    c = custom_codec(name)
    assert c.cql_name == name and c.fixed_size == -1
    assert c.encode(b"\x01\x02") == b"\x01\x02"
    assert c.encode(bytearray(b"\x01")) == b"\x01"
    assert c.decode(b"xx\x01\x02", 2, 2) == b"\x01\x02"
    assert c.decode(b"xx", 2, 0) is None
    with pytest.raises(EncodeTypeError, match="org.example.Foo"):
        c.encode("text")
    t = cqlcodec.custom_type("org.example.Foo")
    assert t.serialize(b"\xff") == b"\xff"
    assert t.deserialize(b"\xff") == b"\xff"


def test_unknown_kind_is_rejected() -> None:
    with pytest.raises(ValueError):
        scalar_codec(0x0020)
