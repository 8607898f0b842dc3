"""Scalar codecs: text, ascii, blob, empty and unknown custom types (cqlcodec.codecs.strings)."""

from __future__ import annotations

import pytest
from scalar_checks import check, codec, dec, decode_error, enc, encode_error

import cqlcodec
from cqlcodec.codecs.builder import custom_codec, scalar_codec
from cqlcodec.errors import EncodeTypeError, EncodeValueError
from cqlcodec.runtime.buffers import BytesWriter

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
