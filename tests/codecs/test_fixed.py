"""Scalar codecs: tinyint, smallint, int, bigint, counter, float, double, boolean
(cqlcodec.codecs.fixed); fixed widths and empty values."""

from __future__ import annotations

import math
from decimal import Decimal

import numpy as np
import pytest
from scalar_checks import KIND, check, codec, dec, decode_error, enc, encode_error

from cqlcodec.errors import EncodeTypeError, EncodeValueError

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
