"""Scalar codecs: varint and decimal (cqlcodec.codecs.numeric)."""

from __future__ import annotations

import sys
from decimal import Decimal

import numpy as np
import pytest
from scalar_checks import check, dec, decode_error, enc, encode_error

from cqlcodec import Date, Duration, Time
from cqlcodec.errors import EncodeTypeError, EncodeValueError

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
