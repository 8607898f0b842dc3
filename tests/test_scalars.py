"""Scalar codecs against hand-written byte vectors, edge values and malformed input."""

from __future__ import annotations

import datetime
import ipaddress
import math
import sys
import uuid
from decimal import Decimal
from typing import Any

import numpy as np
import pytest

import cqlcodec
from cqlcodec import Date, Duration, Time, kinds
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


# --- integers ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("name", "value", "hexed"), [
    ("tinyint", 0, "00"), ("tinyint", 1, "01"), ("tinyint", -1, "ff"),
    ("tinyint", 127, "7f"), ("tinyint", -128, "80"),
    ("smallint", 0, "0000"), ("smallint", 258, "0102"), ("smallint", -2, "fffe"),
    ("smallint", 32767, "7fff"), ("smallint", -32768, "8000"),
    ("int", 0, "00000000"), ("int", -123456789, "f8a432eb"), ("int", 2**31 - 1, "7fffffff"),
    ("int", -(2**31), "80000000"), ("int", -1, "ffffffff"),
    ("bigint", 1234567890123456789, "112210f47de98115"), ("bigint", 0, "0000000000000000"),
    ("bigint", 2**63 - 1, "7fffffffffffffff"), ("bigint", -(2**63), "8000000000000000"),
    ("counter", -1, "ffffffffffffffff"), ("counter", 2**63 - 1, "7fffffffffffffff"),
])
def test_integer_vectors(name: str, value: int, hexed: str) -> None:
    check(name, value, hexed)


@pytest.mark.parametrize(("name", "low", "high"), [
    ("tinyint", -128, 127), ("smallint", -32768, 32767), ("int", -(2**31), 2**31 - 1),
    ("bigint", -(2**63), 2**63 - 1), ("counter", -(2**63), 2**63 - 1),
    ("varint", None, None),
])
def test_integer_range_and_types(name: str, low: int | None, high: int | None) -> None:
    if low is not None and high is not None:
        encode_error(name, high + 1, EncodeValueError, "out of range")
        encode_error(name, low - 1, EncodeValueError, "out of range")
        encode_error(name, 2**100, EncodeValueError)
    for bad in (True, False, np.bool_(True), 1.0, "1", b"\x01", None, Decimal(1)):
        encode_error(name, bad, EncodeTypeError)
    # __index__ objects: numpy integers
    assert enc(name, np.int8(-5)) == enc(name, -5)
    assert enc(name, np.uint8(7)) == enc(name, 7)


def test_int_subclasses_are_ints() -> None:
    import enum

    class Color(enum.IntEnum):
        RED = 3

    assert enc("int", Color.RED) == b"\x00\x00\x00\x03"


def test_bigint_accepts_numpy_int64() -> None:
    assert enc("bigint", np.int64(-(2**63))) == bytes.fromhex("8000000000000000")
    encode_error("bigint", np.uint64(2**63), EncodeValueError)


# --- floats -----------------------------------------------------------------------------------

@pytest.mark.parametrize(("value", "hexed"), [
    (1.0, "3f800000"), (0.0, "00000000"), (-0.0, "80000000"), (math.inf, "7f800000"),
    (-math.inf, "ff800000"), (3.4028234663852886e38, "7f7fffff"), (-2.0, "c0000000"),
    (1.401298464324817e-45, "00000001"), (1.1754943508222875e-38, "00800000"),
])
def test_float_vectors(value: float, hexed: str) -> None:
    check("float", value, hexed)


def test_float_nan_and_rounding() -> None:
    assert enc("float", math.nan) == bytes.fromhex("7fc00000")
    assert math.isnan(dec("float", bytes.fromhex("7fc00000")))
    assert math.isnan(dec("float", bytes.fromhex("ffc00001")))
    # narrowing rounds like struct: 3.4028235e38 rounds down to FLT_MAX, 1e-46 to zero
    assert enc("float", 3.4028235e38) == bytes.fromhex("7f7fffff")
    assert enc("float", 3.4028235677973362e38) == bytes.fromhex("7f7fffff")
    assert enc("float", 1e-46) == bytes.fromhex("00000000")
    assert enc("float", 0.1) == bytes.fromhex("3dcccccd")
    assert dec("float", bytes.fromhex("3dcccccd")) == 0.10000000149011612
    assert enc("float", 3) == bytes.fromhex("40400000")  # int accepted


@pytest.mark.parametrize("value", [3.4028235677973366e38, 3.4028236e38, 1e39, -1e39,
                                   1.7976931348623157e308, 2**128])
def test_float_overflow(value: float) -> None:
    encode_error("float", value, EncodeValueError, "32-bit float")


@pytest.mark.parametrize(("value", "hexed"), [
    (12345.6789, "40c81cd6e631f8a1"), (1.0, "3ff0000000000000"), (-0.0, "8000000000000000"),
    (math.inf, "7ff0000000000000"), (-math.inf, "fff0000000000000"),
    (5e-324, "0000000000000001"), (1.7976931348623157e308, "7fefffffffffffff"),
])
def test_double_vectors(value: float, hexed: str) -> None:
    check("double", value, hexed)


def test_double_nan_and_conversions() -> None:
    assert enc("double", math.nan) == bytes.fromhex("7ff8000000000000")
    assert math.isnan(dec("double", bytes.fromhex("7ff8000000000001")))
    assert enc("double", 2) == bytes.fromhex("4000000000000000")
    assert enc("double", 2**53 + 1) == enc("double", float(2**53))
    assert enc("double", np.float32(0.5)) == enc("double", 0.5)
    assert enc("double", np.float64(-1.5)) == enc("double", -1.5)
    assert enc("double", Decimal("0.25")) == enc("double", 0.25)
    assert enc("double", np.int32(7)) == enc("double", 7.0)
    assert enc("float", np.float64(0.5)) == enc("float", 0.5)
    encode_error("double", 2**1024, EncodeValueError, "too large")
    encode_error("double", Decimal("sNaN"), EncodeValueError)


@pytest.mark.parametrize("name", ["float", "double"])
@pytest.mark.parametrize("bad", [True, np.bool_(False), "1.5", b"1", None, [1.0], 1j])
def test_float_wrong_types(name: str, bad: object) -> None:
    encode_error(name, bad, EncodeTypeError)


# --- boolean ----------------------------------------------------------------------------------

def test_boolean() -> None:
    check("boolean", True, "01")
    check("boolean", False, "00")
    assert enc("boolean", np.bool_(True)) == b"\x01"
    assert enc("boolean", np.bool_(False)) == b"\x00"
    # any non-zero byte is true (Cassandra's reading)
    assert dec("boolean", b"\x02") is True
    assert dec("boolean", b"\xff") is True
    for bad in (1, 0, 2, "true", None, 1.0, np.int8(1)):
        encode_error("boolean", bad, EncodeTypeError)


# --- fixed widths, empty values ---------------------------------------------------------------

FIXED_WIDTH = {"tinyint": 1, "smallint": 2, "int": 4, "bigint": 8, "counter": 8, "float": 4,
               "double": 8, "boolean": 1, "uuid": 16, "timeuuid": 16, "timestamp": 8,
               "date": 4, "time": 8}


@pytest.mark.parametrize("name", sorted(FIXED_WIDTH))
def test_fixed_width_is_enforced(name: str) -> None:
    width = FIXED_WIDTH[name]
    for n in {1, width - 1, width + 1, width * 2} - {0, width}:
        err = decode_error(name, b"\x00" * n, f"{width} bytes")
        assert err.offset == 7
        assert err.cql_type == codec(name).cql_name


@pytest.mark.parametrize("name", sorted(set(KIND) - {"text", "ascii", "blob"}))
def test_zero_length_decodes_to_none(name: str) -> None:
    assert dec(name, b"") is None


def test_zero_length_strings() -> None:
    check("text", "", "")
    check("ascii", "", "")
    check("blob", b"", "")
    assert dec("text", b"") == ""
    assert dec("blob", b"") == b""


def test_fixed_sizes_follow_cassandra() -> None:
    expected = {"bigint": 8, "boolean": 1, "counter": 8, "double": 8, "float": 4, "int": 4,
                "timestamp": 8, "uuid": 16, "timeuuid": 16, "empty": 0}
    for name in KIND:
        assert codec(name).fixed_size == expected.get(name, -1), name


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


# --- uuid, timeuuid ---------------------------------------------------------------------------

def test_uuid_vectors() -> None:
    u = uuid.UUID("3f2504e0-4f89-11d3-9a0c-0305e82c3301")
    check("uuid", u, "3f2504e04f8911d39a0c0305e82c3301")
    check("uuid", uuid.UUID(int=0), "00" * 16)
    check("uuid", uuid.UUID(int=2**128 - 1), "ff" * 16)
    v4 = uuid.UUID("c2cd1d8e-6a7a-4c8e-9f5e-3d3b1c2f8a77")
    check("uuid", v4, "c2cd1d8e6a7a4c8e9f5e3d3b1c2f8a77")


def test_decoded_uuid_is_a_complete_uuid() -> None:
    import copy
    import pickle

    data = bytes.fromhex("3f2504e04f8911d39a0c0305e82c3301")
    got = dec("uuid", data)
    ref = uuid.UUID(bytes=data)
    assert type(got) is uuid.UUID
    assert got == ref and hash(got) == hash(ref) and str(got) == str(ref)
    assert got.is_safe is ref.is_safe
    assert got.version == 1 and got.time == ref.time
    assert pickle.loads(pickle.dumps(got)) == ref
    assert copy.deepcopy(got) == ref
    with pytest.raises(TypeError):
        got.int = 5  # type: ignore[misc]


def test_uuid_errors() -> None:
    for name in ("uuid", "timeuuid"):
        for bad in ("3f2504e0-4f89-11d3-9a0c-0305e82c3301", b"\x00" * 16, 5, None):
            encode_error(name, bad, EncodeTypeError)


def test_timeuuid_requires_version_1() -> None:
    v1 = uuid.UUID("3f2504e0-4f89-11d3-9a0c-0305e82c3301")
    check("timeuuid", v1, "3f2504e04f8911d39a0c0305e82c3301")
    t = uuid.uuid1()
    assert enc("timeuuid", t) == t.bytes
    encode_error("timeuuid", uuid.uuid4(), EncodeValueError, "version 1")
    encode_error("timeuuid", uuid.UUID(int=0), EncodeValueError, "version 1")
    # version nibble 1 but not the RFC 4122 variant
    encode_error("timeuuid", uuid.UUID("3f2504e0-4f89-11d3-1a0c-0305e82c3301"), EncodeValueError)
    # decoding does not judge what the server stored
    assert dec("timeuuid", uuid.UUID(int=5).bytes) == uuid.UUID(int=5)


# --- inet -------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "hexed"), [
    ("127.0.0.1", "7f000001"), ("0.0.0.0", "00000000"), ("255.255.255.255", "ffffffff"),
    ("::1", "00000000000000000000000000000001"), ("::", "00" * 16),
    ("2001:db8::1", "20010db8000000000000000000000001"),
    ("2001:db8:0:1::1", "20010db8000000010000000000000001"),
    ("::ffff:1.2.3.4", "00000000000000000000ffff01020304"),
    ("1::", "00010000000000000000000000000000"),
    ("fe80::1:2:3:4", "fe800000000000000001000200030004"),
])
def test_inet_vectors(text: str, hexed: str) -> None:
    check("inet", text, hexed)


def test_inet_accepts_ipaddress_and_other_spellings() -> None:
    assert enc("inet", ipaddress.IPv4Address("10.1.2.3")) == bytes.fromhex("0a010203")
    assert enc("inet", ipaddress.IPv6Address("2001:db8::1")) == bytes.fromhex(
        "20010db8000000000000000000000001")
    assert enc("inet", ipaddress.ip_interface("10.1.2.3/8")) == bytes.fromhex("0a010203")
    assert enc("inet", "2001:DB8:0:0:0:0:0:1") == bytes.fromhex("20010db8000000000000000000000001")
    assert dec("inet", bytes.fromhex("20010DB8000000000000000000000001")) == "2001:db8::1"


@pytest.mark.parametrize("text", ["127.1", "1", "0x7f.0.0.1", "1.2.3", "1.2.3.4.5", "256.1.1.1",
                                  " 1.2.3.4", "1.2.3.4 ", "1.2.3.4:80", "01.2.3.4",
                                  "fe80::1%eth0", "1:2:3:4:5:6:7:8:9", ":::", "localhost",
                                  "", "1.2.3.4\x00", "１.2.3.4"])
def test_inet_rejects_non_addresses(text: str) -> None:
    encode_error("inet", text, EncodeValueError, "address")


def test_inet_wrong_types_and_lengths() -> None:
    for bad in (b"\x7f\x00\x00\x01", 2130706433, None, ("127.0.0.1",)):
        encode_error("inet", bad, EncodeTypeError)
    for n in (1, 3, 5, 8, 15, 17):
        decode_error("inet", b"\x01" * n, "4 or 16 bytes")


# --- varint -----------------------------------------------------------------------------------

@pytest.mark.parametrize(("value", "hexed"), [
    (0, "00"), (1, "01"), (-1, "ff"), (127, "7f"), (128, "0080"), (-128, "80"), (-129, "ff7f"),
    (255, "00ff"), (256, "0100"), (32767, "7fff"), (32768, "008000"), (-32768, "8000"),
    (-32769, "ff7fff"), (2**31 - 1, "7fffffff"), (2**31, "0080000000"),
    (0x7123456789ABCDEF, "7123456789abcdef"), (2**63, "008000000000000000"),
    (-(2**63), "8000000000000000"), (-(2**63) - 1, "ff7fffffffffffffff"),
    (2**64, "010000000000000000"), (2**55, "0080000000000000"), (-(2**55), "80000000000000"),
    (-(2**55) - 1, "ff7fffffffffffff"), (2**100, "10" + "00" * 12),
    (-(2**100), "f0" + "00" * 12),
])
def test_varint_vectors(value: int, hexed: str) -> None:
    check("varint", value, hexed)


@pytest.mark.parametrize(("hexed", "value"), [
    ("0000", 0), ("ffff", -1), ("00007f", 127), ("ffffff80", -128), ("000000000000000001", 1),
    ("ffffffffffffffffff", -1), ("ff" * 3, -1), ("ff" * 5, -1), ("ff" * 6, -1), ("ff" * 7, -1),
    ("80" + "00" * 6, -(2**55)), ("00" * 20 + "05", 5), ("80" + "00" * 8, -(2**71)),
])
def test_varint_accepts_non_minimal_input(hexed: str, value: int) -> None:
    assert dec("varint", bytes.fromhex(hexed)) == value


@pytest.mark.parametrize("size", range(1, 19))
def test_varint_every_length(size: int) -> None:
    for value in (2 ** (8 * size - 1) - 1, -(2 ** (8 * size - 1)), 2 ** (8 * size - 2)):
        data = enc("varint", value)
        assert len(data) == size
        assert data == value.to_bytes(size, "big", signed=True)
        assert dec("varint", data) == value


# --- decimal ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("value", "hexed", "decoded"), [
    (Decimal("12345.6789"), "00000004075bcd15", None),
    (Decimal("0.00"), "0000000200", None),
    (Decimal("0"), "0000000000", None),
    (Decimal("-0"), "0000000000", Decimal("0")),
    (Decimal("-0.000"), "0000000300", Decimal("0.000")),
    (Decimal("1E+3"), "fffffffd01", None),
    (Decimal("-1.5"), "00000001f1", None),
    (Decimal("1.28"), "000000020080", None),
    (Decimal("-1.28"), "0000000280", None),
    (Decimal("1E-2147483647"), "7fffffff01", None),
    (Decimal("1E+2147483648"), "8000000001", None),
    (Decimal("123456789012345678901234567890.123456789"),
     "00000009" + (123456789012345678901234567890123456789).to_bytes(16, "big").hex(), None),
    (5, "0000000005", Decimal(5)),
    (-(2**70), "00000000" + (-(2**70)).to_bytes(9, "big", signed=True).hex(), Decimal(-(2**70))),
    (np.int64(7), "0000000007", Decimal(7)),
])
def test_decimal_vectors(value: object, hexed: str, decoded: Decimal | None) -> None:
    check("decimal", value, hexed, decoded)


def test_decimal_keeps_exponent_and_digits() -> None:
    got = dec("decimal", bytes.fromhex("0000000200"))
    assert str(got) == "0.00"
    got = dec("decimal", bytes.fromhex("fffffffd01"))
    assert got.as_tuple() == Decimal("1E+3").as_tuple()
    many = Decimal("9" * 60 + "." + "1" * 40)  # more digits than the default context's 28
    assert dec("decimal", enc("decimal", many)).as_tuple() == many.as_tuple()
    assert dec("decimal", bytes.fromhex("00000002" + "0000ff")) == Decimal("2.55")


def test_decimal_errors() -> None:
    for bad in (Decimal("NaN"), Decimal("-NaN"), Decimal("sNaN"), Decimal("Infinity"),
                Decimal("-Infinity"), Decimal("1E-2147483648"), Decimal("1E+2147483649")):
        encode_error("decimal", bad, EncodeValueError)
    for wrong in (1.5, 0.1, "1.5", True, None, (0, (1,), 0)):
        encode_error("decimal", wrong, EncodeTypeError)
    encode_error("decimal", 1.5, EncodeTypeError, "float")
    for n in (1, 3, 4):
        decode_error("decimal", b"\x00" * n, "decimal needs")


# --- timestamp --------------------------------------------------------------------------------

@pytest.mark.parametrize(("value", "ms"), [
    (datetime.datetime(1970, 1, 1), 0),
    (datetime.datetime(2024, 5, 17, 12, 34, 56, 789000), 1715949296789),
    (datetime.datetime(1969, 12, 31, 23, 59, 59, 999000), -1),
    (datetime.datetime(2300, 1, 1, 0, 0, 0, 1000), 10413792000001),
    (datetime.datetime(1, 1, 1), -62135596800000),
    (datetime.datetime(9999, 12, 31, 23, 59, 59, 999000), 253402300799999),
    (datetime.datetime(1900, 3, 1, 0, 0, 0, 1000), -2203891199999),
    (datetime.datetime(2000, 2, 29, 23, 59, 59, 999000), 951868799999),
    (datetime.datetime(1600, 2, 29), -11670998400000),
])
def test_timestamp_vectors(value: datetime.datetime, ms: int) -> None:
    check("timestamp", value, ms.to_bytes(8, "big", signed=True).hex())
    aware = dec("timestamp", ms.to_bytes(8, "big", signed=True), FLAG_TZ_AWARE)
    assert same(aware, value.replace(tzinfo=UTC))
    assert enc("timestamp", ms) == ms.to_bytes(8, "big", signed=True)


def test_timestamp_sub_millisecond_truncates_toward_earlier() -> None:
    assert enc("timestamp", datetime.datetime(1970, 1, 1, 0, 0, 0, 999)) == (0).to_bytes(8, "big")
    assert enc("timestamp", datetime.datetime(1969, 12, 31, 23, 59, 59, 999999)) == \
        (-1).to_bytes(8, "big", signed=True)
    assert enc("timestamp", datetime.datetime(1969, 12, 31, 23, 59, 59, 998001)) == \
        (-2).to_bytes(8, "big", signed=True)
    aware = datetime.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)
    assert enc("timestamp", aware) == (-1).to_bytes(8, "big", signed=True)


def test_timestamp_aware_values_are_converted() -> None:
    plus2 = datetime.timezone(datetime.timedelta(hours=2))
    local = datetime.datetime(2024, 5, 17, 14, 34, 56, 789000, tzinfo=plus2)
    assert enc("timestamp", local) == (1715949296789).to_bytes(8, "big")
    odd = datetime.timezone(datetime.timedelta(hours=-5, minutes=-30, microseconds=-1500))
    value = datetime.datetime(2000, 1, 1, tzinfo=odd)
    expected = (value - datetime.datetime(1970, 1, 1, tzinfo=UTC)) // datetime.timedelta(milliseconds=1)
    assert enc("timestamp", value) == expected.to_bytes(8, "big", signed=True)
    # an aware value just before year 1 in UTC still encodes
    early = datetime.datetime(1, 1, 1, tzinfo=datetime.timezone(datetime.timedelta(hours=1)))
    assert enc("timestamp", early) == (-62135596800000 - 3600000).to_bytes(8, "big", signed=True)


def test_timestamp_from_date_is_midnight_utc() -> None:
    assert enc("timestamp", datetime.date(2024, 5, 17)) == (1715904000000).to_bytes(8, "big")
    assert enc("timestamp", datetime.date(1, 1, 1)) == (-62135596800000).to_bytes(8, "big", signed=True)


def test_timestamp_outside_datetime_range_decodes_to_int_ms() -> None:
    for ms in (-62135596800001, 253402300800000, 2**63 - 1, -(2**63)):
        data = ms.to_bytes(8, "big", signed=True)
        assert dec("timestamp", data) == ms
        assert type(dec("timestamp", data)) is int
        assert dec("timestamp", data, FLAG_TZ_AWARE) == ms
        assert enc("timestamp", ms) == data  # and it round-trips


def test_timestamp_decodes_naive_utc_by_default() -> None:
    got = dec("timestamp", (1715949296789).to_bytes(8, "big"))
    assert got.tzinfo is None
    got = dec("timestamp", (1715949296789).to_bytes(8, "big"), FLAG_TZ_AWARE)
    assert got.tzinfo is UTC


def test_timestamp_errors() -> None:
    for bad in (True, 1.5, 0.0, "2024-01-01", None, datetime.time(1, 2), np.float64(3)):
        encode_error("timestamp", bad, EncodeTypeError)
    encode_error("timestamp", 2**63, EncodeValueError)
    encode_error("timestamp", -(2**63) - 1, EncodeValueError)
    assert enc("timestamp", np.int64(5)) == (5).to_bytes(8, "big")


# --- date -------------------------------------------------------------------------------------

@pytest.mark.parametrize(("value", "hexed"), [
    (datetime.date(1970, 1, 1), "80000000"), (datetime.date(1969, 12, 31), "7fffffff"),
    (datetime.date(2024, 5, 17), "80004d94"), (datetime.date(1, 1, 1), "7ff506c6"),
    (datetime.date(9999, 12, 31), "802cc0a0"), (datetime.date(2000, 2, 29), "80002b08"),
])
def test_date_vectors(value: datetime.date, hexed: str) -> None:
    check("date", value, hexed)
    assert enc("date", Date.from_date(value)) == bytes.fromhex(hexed)


def test_date_outside_python_range() -> None:
    check("date", Date(-(2**31)), "00000000")
    check("date", Date(2**31 - 1), "ffffffff")
    check("date", Date(-719163), "7ff506c5")  # the day before 0001-01-01
    check("date", Date(2932897), "802cc0a1")  # the day after 9999-12-31
    assert str(dec("date", bytes.fromhex("00000000"))) == "-5877641-06-23"


def test_date_inputs_and_errors() -> None:
    assert enc("date", datetime.datetime(2024, 5, 17, 23, 59)) == bytes.fromhex("80004d94")
    aware = datetime.datetime(2024, 5, 17, 23, 59, tzinfo=datetime.timezone(datetime.timedelta(hours=-9)))
    assert enc("date", aware) == bytes.fromhex("80004d94")  # the calendar date; tz ignored
    assert enc("date", Date(0)) == bytes.fromhex("80000000")
    encode_error("date", 19860, EncodeTypeError, "Date")
    encode_error("date", 2**31, EncodeTypeError, "Date")
    for bad in (True, "2024-05-17", 1.0, None, datetime.time(1)):
        encode_error("date", bad, EncodeTypeError)


# --- time -------------------------------------------------------------------------------------

@pytest.mark.parametrize(("value", "nanos"), [
    (Time(0), 0), (Time(NANOS_PER_DAY - 1), NANOS_PER_DAY - 1),
    (Time(45_296_000_789_000), 45_296_000_789_000),
])
def test_time_vectors(value: Time, nanos: int) -> None:
    check("time", value, nanos.to_bytes(8, "big").hex())
    assert enc("time", nanos) == nanos.to_bytes(8, "big")


def test_time_inputs_and_errors() -> None:
    assert enc("time", datetime.time(12, 34, 56, 789)) == (45_296_000_789_000).to_bytes(8, "big")
    assert enc("time", datetime.time(23, 59, 59, 999999)) == (NANOS_PER_DAY - 1000).to_bytes(8, "big")
    assert enc("time", np.int64(5)) == (5).to_bytes(8, "big")
    assert type(dec("time", (5).to_bytes(8, "big"))) is Time
    encode_error("time", NANOS_PER_DAY, EncodeValueError, "nanoseconds since midnight")
    encode_error("time", -1, EncodeValueError)
    encode_error("time", 2**64, EncodeValueError)
    for bad in (True, 1.5, "12:00:00", None, datetime.timedelta(1), datetime.datetime(2020, 1, 1)):
        encode_error("time", bad, EncodeTypeError)
    decode_error("time", (NANOS_PER_DAY).to_bytes(8, "big"), "one day")
    decode_error("time", (-1).to_bytes(8, "big", signed=True), "one day")
    decode_error("time", (2**63 - 1).to_bytes(8, "big"), "one day")


# --- duration ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("value", "hexed"), [
    (Duration(1, 2, 3), "020406"), (Duration(-1, -2, -3), "010305"), (Duration(), "000000"),
    (Duration(0, 0, -(2**63)), "0000ffffffffffffffffff"),
    (Duration(0, 0, 2**63 - 1), "0000fffffffffffffffffe"),
    (Duration(2**31 - 1, 2**31 - 1, 0), "f0fffffffef0fffffffe00"),
    (Duration(-(2**31), -(2**31), 0), "f0fffffffff0ffffffff00"),
    (Duration(12, 0, 3_600_000_000_000), "1800" "fc068c61714000"),
    (Duration(0, 64, 0), "00808000"),
])
def test_duration_vectors(value: Duration, hexed: str) -> None:
    check("duration", value, hexed)


def test_duration_duck_typing_and_errors() -> None:
    class Like:
        def __init__(self, months: object, days: object, nanoseconds: object) -> None:
            self.months, self.days, self.nanoseconds = months, days, nanoseconds

    assert enc("duration", Like(1, 2, 3)) == bytes.fromhex("020406")
    assert enc("duration", Like(np.int32(1), 2, np.int64(3))) == bytes.fromhex("020406")
    encode_error("duration", Like(1, -2, 3), EncodeValueError, "all be")
    encode_error("duration", Like(2**31, 0, 0), EncodeValueError, "32-bit")
    encode_error("duration", Like(0, 0, 2**63), EncodeValueError, "64-bit")
    encode_error("duration", Like(1.5, 0, 0), EncodeTypeError)
    encode_error("duration", Like(True, 0, 0), EncodeTypeError)
    for bad in (datetime.timedelta(days=1), (1, 2, 3), 5, "1d", None):
        encode_error("duration", bad, EncodeTypeError)


@pytest.mark.parametrize(("hexed", "match"), [
    ("02", "vint"), ("0204", "vint"), ("02040600", "after the three vints"),
    ("c0", "vint"), ("0204ff00", "vint"),
    ("f1000000000000", "months"),  # zigzag 2**32 -> months 2**31
    ("00f100000000" + "00", "days"),
    ("020106", "mixed signs"), ("000102", "mixed signs"),
])
def test_duration_decode_errors(hexed: str, match: str) -> None:
    decode_error("duration", bytes.fromhex(hexed), match)


def test_duration_decode_accepts_non_minimal_vints() -> None:
    assert dec("duration", bytes.fromhex("8002" "04" "c00006")) == Duration(1, 2, 3)
    assert type(dec("duration", bytes.fromhex("020406"))) is Duration


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


# --- huge numbers and unusual Decimal spellings -----------------------------------------------

HUGE = 10**5000  # more digits than int <-> str converts by default (Python >= 3.11)


def test_huge_ints_give_codec_errors() -> None:
    for name in ("tinyint", "smallint", "int", "bigint", "counter", "time"):
        encode_error(name, HUGE, EncodeValueError)
        encode_error(name, -HUGE, EncodeValueError)
    encode_error("timestamp", HUGE, EncodeValueError, "64 bits")
    encode_error("double", HUGE, EncodeValueError)
    encode_error("float", HUGE, EncodeValueError)
    with pytest.raises(EncodeValueError):
        Duration(HUGE)
    with pytest.raises(EncodeValueError):
        Date(-HUGE)
    with pytest.raises(EncodeValueError):
        Time(HUGE)


def test_huge_varint_and_decimal() -> None:
    data = enc("varint", -HUGE)
    assert data == (-HUGE).to_bytes(len(data), "big", signed=True)
    assert dec("varint", data) == -HUGE
    big = Decimal((0, (1,) + (0,) * 5000, -3))
    encoded = enc("decimal", big)
    assert encoded[:4] == (3).to_bytes(4, "big")
    assert encoded[4:] == (10**5000).to_bytes(len(encoded) - 4, "big", signed=True)
    # more digits than sys.get_int_max_str_digits(): refused like Python's int/str (quadratic)
    err = decode_error("decimal", encoded, "get_int_max_str_digits")
    assert err.offset == 7
    old_limit = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        assert dec("decimal", encoded).as_tuple() == big.as_tuple()
    finally:
        sys.set_int_max_str_digits(old_limit)
    # up to the limit, on both decode paths (text form up to ~600 digits, scaleb above)
    for digits in (500, 1000, 4300):
        value = Decimal((1, (9,) * digits, -250))
        assert dec("decimal", enc("decimal", value)).as_tuple() == value.as_tuple()


@pytest.mark.parametrize("text", ["-0.1", "-1", "-1E+5", "-1E-9", "1.23E-7", "-0.00000", "0E+10",
                                  "123456789E+30", "1.000000000000000000000000000000001"])
def test_decimal_spellings(text: str) -> None:
    value = Decimal(text)
    sign, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)
    unscaled = int("".join(map(str, digits))) * (-1 if sign else 1)
    expected = (-exponent).to_bytes(4, "big", signed=True) + enc("varint", unscaled)
    assert enc("decimal", value) == expected
    assert dec("decimal", expected) == value


def test_decimal_ignores_context_capitals_and_subclasses() -> None:
    import decimal

    class MyDecimal(Decimal):
        def __str__(self) -> str:
            return "garbage"

    with decimal.localcontext() as ctx:
        ctx.capitals = 0
        ctx.prec = 3
        assert enc("decimal", Decimal("1.5E+7")) == bytes.fromhex("fffffffa0f")
        assert enc("decimal", Decimal("123456.789")) == bytes.fromhex("00000003075bcd15")
        assert dec("decimal", bytes.fromhex("00000003075bcd15")) == Decimal("123456.789")
    assert enc("decimal", MyDecimal("12345.6789")) == bytes.fromhex("00000004075bcd15")
