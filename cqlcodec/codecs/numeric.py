"""Codecs of the arbitrary-precision number types varint and decimal.

* varint: big-endian two's complement of any length. Encoding writes the
  minimal form (0 -> 00, 128 -> 0080, -129 -> ff7f) from ``int`` or
  ``__index__`` objects (not bool); decoding accepts non-minimal input (0000 -> 0).
* decimal: ``[int] scale`` followed by a varint unscaled value, meaning
  unscaled * 10**-scale. Decodes to ``decimal.Decimal`` exactly (the exponent
  is kept: 00000002 00 -> Decimal('0.00')). An unscaled value with more digits
  than ``sys.get_int_max_str_digits()`` (4300 by default; 0 lifts the cap)
  raises DecodeError: binary to decimal conversion is quadratic, which is why
  Python caps int <-> str at that limit (the drivers fail on such values too). Encodes from ``Decimal`` and
  ``int``. **float is rejected** (EncodeTypeError): the drivers encode a
  float's exact binary expansion (100.1 -> 45 decimal places), which is rarely
  what anyone means; pass ``Decimal(str(x))`` or ``Decimal(x)`` explicitly.
  NaN and Infinity raise EncodeValueError, as does a scale outside int32.
  The sign of a negative zero is not representable and is lost, as in Cassandra.
"""

from __future__ import annotations

import sys
from decimal import MAX_EMAX, MAX_PREC, MIN_EMIN, Context, Decimal
from typing import Callable, Final, final

from mypy_extensions import i64

from cqlcodec.codecs.base import Codec
from cqlcodec.codecs.coerce import coerce_int
from cqlcodec.runtime.buffers import BytesWriter, read_i16_be, read_i32_be, read_i64_be
from cqlcodec.runtime.wire import malformed, out_of_range, wrong_type

# Enough precision and exponent range that scaleb never rounds or overflows.
_EXACT: Final = Context(prec=MAX_PREC, Emax=MAX_EMAX, Emin=MIN_EMIN)
# Unscaled values of at most this many bytes have at most 627 digits, under the
# lowest limit sys.set_int_max_str_digits() accepts (640): no digit check needed.
_UNCHECKED_MAX_BYTES: Final = 260
# Bound once: looking up the Decimal class and the method on every decode costs
# more than the conversion itself.
_new_decimal: Final[Callable[[int], Decimal]] = Decimal
_scaleb_exact: Final = _EXACT.scaleb
_INT32_MIN: Final = -2147483648
_INT32_MAX: Final = 2147483647


def read_varint(buf: bytes, pos: i64, n: i64) -> int:
    """The two's complement integer in ``buf[pos:pos+n]`` (n >= 1, bounds checked by the caller)."""
    if n == 8:
        return read_i64_be(buf, pos)
    if n == 4:
        return read_i32_be(buf, pos)
    if n == 2:
        return read_i16_be(buf, pos)
    if n < 8:
        # sign-extend the first byte, then accumulate; no shifts: mypyc 2.4 compiles
        # a constant i64 shifted left (``i64(1) << k``) as a 32-bit C int shift
        acc: i64 = buf[pos]
        if acc >= 128:
            acc -= 256
        p = pos + 1
        stop = pos + n
        while p < stop:
            acc = acc * 256 + buf[p]
            p += 1
        return acc
    return int.from_bytes(buf[pos: pos + n], "big", signed=True)


def varint_bytes(v: int) -> bytes:
    """The minimal two's complement bytes of ``v``."""
    if -128 <= v <= 127:
        return v.to_bytes(1, "big", signed=True)
    if v >= 0:
        size = v.bit_length() // 8 + 1
    else:
        size = (-v - 1).bit_length() // 8 + 1
    return v.to_bytes(size, "big", signed=True)


def varint_value(value: object, cql_name: str) -> int:
    """``value`` as an int for varint: int or ``__index__`` objects, not bool."""
    if isinstance(value, int) and not isinstance(value, bool):
        v: int = value
        return v
    return coerce_int(value, cql_name)


@final
class VarintCodec(Codec):
    """varint: arbitrary-precision integer."""

    def __init__(self) -> None:
        super().__init__("varint", -1)

    def encode(self, value: object) -> bytes:
        return varint_bytes(varint_value(value, "varint"))

    def encode_into(self, w: BytesWriter, value: object) -> None:
        w.write(varint_bytes(varint_value(value, "varint")))

    def decode(self, buf: bytes, pos: i64, n: i64) -> object:
        if n == 0:
            return None
        return read_varint(buf, pos, n)


def decimal_parts_from_text(value: Decimal) -> tuple[int, int]:
    """(exponent, unscaled) of a finite Decimal read from its str(), or (0, -1) to give up.

    Decimal's to-scientific-string form keeps every coefficient digit: either
    '[-]digits[.digits]' (exponent = -digits after the point) or
    '[-]d[.digits]E[+-]n' (exponent = n - digits after the point). Parsing it is
    several times faster than ``as_tuple()``.
    """
    text = str(value)
    e_at = text.find("E")
    if e_at < 0:
        e_at = text.find("e")  # a context with capitals=0
    exponent = 0
    if e_at >= 0:
        exponent = int(text[e_at + 1:])
        text = text[:e_at]
    dot = text.find(".")
    if dot >= 0:
        exponent -= len(text) - dot - 1
        text = text[:dot] + text[dot + 1:]
    try:
        return exponent, int(text)
    except ValueError:  # more digits than int() parses (sys.set_int_max_str_digits)
        return 0, -1


def decimal_parts(value: object) -> tuple[int, int]:
    """(scale, unscaled) of a Decimal or int for the decimal type."""
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise out_of_range("decimal", value, "NaN and Infinity cannot be encoded")
        unscaled = -1
        if type(value) is Decimal:
            exponent, unscaled = decimal_parts_from_text(value)
        if unscaled == -1:  # a subclass, a huge coefficient, or really -1
            raw = value.as_tuple().exponent
            assert isinstance(raw, int)
            exponent = raw
            unscaled = int(value.scaleb(-exponent, _EXACT))
        scale = -exponent
        if scale < _INT32_MIN or scale > _INT32_MAX:
            raise out_of_range("decimal", value, "the scale does not fit in 32 bits")
        return scale, unscaled
    if isinstance(value, float):
        raise wrong_type("decimal", value,
                         "a Decimal or an int (convert floats explicitly, e.g. Decimal(str(x)))")
    if isinstance(value, int) and not isinstance(value, bool):
        v: int = value
        return 0, v
    return 0, coerce_int(value, "decimal")


def check_digit_limit(unscaled: int, pos: i64) -> None:
    """Refuse a decimal with more digits than ``sys.get_int_max_str_digits()`` allows.

    Converting a binary integer to decimal digits takes quadratic time; Python
    caps int <-> str conversions for that reason (CVE-2020-10735), and the drivers
    fail on such decimals. cqlcodec applies the same cap with the same knob:
    ``sys.set_int_max_str_digits(0)`` lifts it.
    """
    get_limit = getattr(sys, "get_int_max_str_digits", None)
    if get_limit is None:
        return
    limit: int = get_limit()
    if limit > 0 and (abs(unscaled).bit_length() - 1) * 0.30102999566398120 > limit:
        raise malformed("decimal", pos,
                        f"the unscaled value has more than {limit} digits "
                        "(sys.get_int_max_str_digits(); raise it to decode such decimals)")


def decimal_bytes(value: object) -> bytes:
    """The content bytes of ``value`` as a decimal."""
    scale, unscaled = decimal_parts(value)
    return scale.to_bytes(4, "big", signed=True) + varint_bytes(unscaled)


@final
class DecimalCodec(Codec):
    """decimal: [int] scale + varint unscaled value."""

    def __init__(self) -> None:
        super().__init__("decimal", -1)

    def encode(self, value: object) -> bytes:
        return decimal_bytes(value)

    def encode_into(self, w: BytesWriter, value: object) -> None:
        w.write(decimal_bytes(value))

    def decode(self, buf: bytes, pos: i64, n: i64) -> object:
        if n == 0:
            return None
        if n <= 4:
            raise malformed("decimal", pos,
                            f"a decimal needs a 4-byte scale and at least 1 byte of "
                            f"unscaled value, got {n} bytes")
        scale: int = read_i32_be(buf, pos)
        unscaled = read_varint(buf, pos + 4, n - 4)
        if n > _UNCHECKED_MAX_BYTES:
            check_digit_limit(unscaled, pos)
        if scale == 0:
            return _new_decimal(unscaled)
        return _scaleb_exact(_new_decimal(unscaled), -scale)
