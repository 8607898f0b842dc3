"""Codecs of the fixed-width number types and boolean.

tinyint, smallint, int, bigint and counter are big-endian two's complement
integers of 1, 2, 4, 8 and 8 bytes; float and double are IEEE-754 binary32
and binary64; boolean is one byte (0 false, anything else true; written as 1).

Encoding: integer columns take ``int`` and ``__index__`` objects but never
bool; float/double take float, int and ``__float__`` objects (not bool); a
finite value too large for float32 raises EncodeValueError (values that round
to FLT_MAX, such as 3.4028235e38, are accepted, as ``struct`` does), while
inf and NaN encode as themselves. boolean takes ``bool`` and ``numpy.bool_``
only. Decoding demands the exact width (a longer or shorter value raises
DecodeError); a zero-length value decodes to ``None``.
"""

from __future__ import annotations

from typing import Final, final

from mypy_extensions import i64

from cqlcodec.codecs.base import Codec
from cqlcodec.codecs.coerce import coerce_float, coerce_int, is_bool_like
from cqlcodec.errors import DecodeError
from cqlcodec.runtime.buffers import (
    BytesWriter,
    read_f32_be,
    read_f64_be,
    read_i16_be,
    read_i32_be,
    read_i64_be,
    scratch_writer,
    write_f32_be,
    write_f64_be,
    write_i16_be,
    write_i32_be,
    write_i64_be,
)
from cqlcodec.runtime.build import COMPILED
from cqlcodec.runtime.wire import INT64_MAX, INT64_MIN, malformed, out_of_range, wrong_type

_INF: Final = float("inf")
# Halfway between FLT_MAX and 2**128: finite doubles at or beyond it round to
# infinity when narrowed to float32 (round half to even), i.e. they overflow.
F32_OVERFLOW: Final = 3.4028235677973366e38
_TRUE: Final = b"\x01"
_FALSE: Final = b"\x00"


def wrong_width(cql_name: str, pos: i64, width: i64, n: i64) -> DecodeError:
    """The error for a fixed-width value of the wrong length."""
    return malformed(cql_name, pos, f"a {cql_name} value is {width} bytes, got {n}")


def int_value(value: object, cql_name: str, lo: int, hi: int) -> int:
    """``value`` checked for an integer column whose range is [lo, hi]."""
    if isinstance(value, int) and not isinstance(value, bool):
        v: int = value
    else:
        v = coerce_int(value, cql_name)
    if v < lo or v > hi:
        raise out_of_range(cql_name, value, f"out of range [{lo}, {hi}]")
    return v


def double_value(value: object, cql_name: str) -> float:
    """``value`` as a float for a double column."""
    if isinstance(value, float):
        return value
    return coerce_float(value, cql_name)


def float32_value(value: object, cql_name: str) -> float:
    """``value`` as a float that narrows to float32 without overflow."""
    if isinstance(value, float):
        x: float = value
    else:
        x = coerce_float(value, cql_name)
    if (x >= F32_OVERFLOW or x <= -F32_OVERFLOW) and x != _INF and x != -_INF:
        raise out_of_range(cql_name, value, "too large for a 32-bit float")
    return x


@final
class TinyIntCodec(Codec):
    """tinyint: signed 8-bit."""

    def __init__(self) -> None:
        super().__init__("tinyint", -1)

    def encode(self, value: object) -> bytes:
        if type(value) is int and -128 <= value <= 127:  # the common case, inlined
            return value.to_bytes(1, "big", signed=True)
        return int_value(value, "tinyint", -128, 127).to_bytes(1, "big", signed=True)

    def encode_into(self, w: BytesWriter, value: object) -> None:
        w.append(int_value(value, "tinyint", -128, 127) & 0xFF)

    def decode(self, buf: bytes, pos: i64, n: i64) -> object:
        if n == 1:
            b: i64 = buf[pos]
            return b - 256 if b >= 128 else b
        if n == 0:
            return None
        raise wrong_width("tinyint", pos, 1, n)


@final
class SmallIntCodec(Codec):
    """smallint: signed 16-bit big-endian."""

    def __init__(self) -> None:
        super().__init__("smallint", -1)

    def encode(self, value: object) -> bytes:
        if type(value) is int and -32768 <= value <= 32767:  # the common case, inlined
            return value.to_bytes(2, "big", signed=True)
        return int_value(value, "smallint", -32768, 32767).to_bytes(2, "big", signed=True)

    def encode_into(self, w: BytesWriter, value: object) -> None:
        write_i16_be(w, int_value(value, "smallint", -32768, 32767))

    def decode(self, buf: bytes, pos: i64, n: i64) -> object:
        if n == 2:
            return read_i16_be(buf, pos)
        if n == 0:
            return None
        raise wrong_width("smallint", pos, 2, n)


@final
class IntCodec(Codec):
    """int: signed 32-bit big-endian."""

    def __init__(self) -> None:
        super().__init__("int", 4)

    def encode(self, value: object) -> bytes:
        if type(value) is int and -2147483648 <= value <= 2147483647:  # the common case, inlined
            if COMPILED:  # to_bytes would re-box the unboxed int first: a writer is faster
                w = scratch_writer()
                write_i32_be(w, value)
                return w.getvalue()
            return value.to_bytes(4, "big", signed=True)
        return int_value(value, "int", -2147483648, 2147483647).to_bytes(4, "big", signed=True)

    def encode_into(self, w: BytesWriter, value: object) -> None:
        write_i32_be(w, int_value(value, "int", -2147483648, 2147483647))

    def decode(self, buf: bytes, pos: i64, n: i64) -> object:
        if n == 4:
            return read_i32_be(buf, pos)
        if n == 0:
            return None
        raise wrong_width("int", pos, 4, n)


def exact_int(value: object, cql_name: str) -> int:
    """``value`` as an int (no range check) for an integer column."""
    if isinstance(value, int) and not isinstance(value, bool):
        v: int = value
        return v
    return coerce_int(value, cql_name)


@final
class BigIntCodec(Codec):
    """bigint and counter: signed 64-bit big-endian.

    The int64 range is checked by the conversion itself (to_bytes / the i64
    argument), which is cheaper than comparing with constants outside mypyc's
    tagged-int range.
    """

    def __init__(self, cql_name: str) -> None:
        super().__init__(cql_name, 8)

    def encode(self, value: object) -> bytes:
        v = value if type(value) is int else exact_int(value, self.cql_name)
        try:
            if COMPILED:  # see IntCodec.encode
                w = scratch_writer()
                write_i64_be(w, v)
                return w.getvalue()
            return v.to_bytes(8, "big", signed=True)
        except (OverflowError, ValueError):
            raise out_of_range(self.cql_name, value, f"out of range [{INT64_MIN}, {INT64_MAX}]") \
                from None

    def encode_into(self, w: BytesWriter, value: object) -> None:
        v = exact_int(value, self.cql_name)
        try:
            write_i64_be(w, v)
        except (OverflowError, ValueError):  # compiled: OverflowError; librt interpreted: ValueError
            raise out_of_range(self.cql_name, value, f"out of range [{INT64_MIN}, {INT64_MAX}]") \
                from None

    def decode(self, buf: bytes, pos: i64, n: i64) -> object:
        if n == 8:
            return read_i64_be(buf, pos)
        if n == 0:
            return None
        raise wrong_width(self.cql_name, pos, 8, n)


@final
class FloatCodec(Codec):
    """float: IEEE-754 binary32 big-endian; decodes to a Python float."""

    def __init__(self) -> None:
        super().__init__("float", 4)

    def encode(self, value: object) -> bytes:
        if type(value) is float and -F32_OVERFLOW < value < F32_OVERFLOW:  # common case, inlined
            x: float = value
        else:
            x = float32_value(value, "float")
        w = scratch_writer()  # nothing may run between this and getvalue()
        write_f32_be(w, x)
        return w.getvalue()

    def encode_into(self, w: BytesWriter, value: object) -> None:
        write_f32_be(w, float32_value(value, "float"))

    def decode(self, buf: bytes, pos: i64, n: i64) -> object:
        if n == 4:
            return read_f32_be(buf, pos)
        if n == 0:
            return None
        raise wrong_width("float", pos, 4, n)


@final
class DoubleCodec(Codec):
    """double: IEEE-754 binary64 big-endian."""

    def __init__(self) -> None:
        super().__init__("double", 8)

    def encode(self, value: object) -> bytes:
        x = value if type(value) is float else double_value(value, "double")
        w = scratch_writer()  # nothing may run between this and getvalue()
        write_f64_be(w, x)
        return w.getvalue()

    def encode_into(self, w: BytesWriter, value: object) -> None:
        write_f64_be(w, double_value(value, "double"))

    def decode(self, buf: bytes, pos: i64, n: i64) -> object:
        if n == 8:
            return read_f64_be(buf, pos)
        if n == 0:
            return None
        raise wrong_width("double", pos, 8, n)


def bool_value(value: object) -> bool:
    """``value`` as a bool for a boolean column: bool or numpy.bool_ only."""
    if value is True:
        return True
    if value is False:
        return False
    if is_bool_like(value):
        return bool(value)
    raise wrong_type("boolean", value, "a bool")


@final
class BooleanCodec(Codec):
    """boolean: one byte; 0 is false, any other byte true; True is written as 1."""

    def __init__(self) -> None:
        super().__init__("boolean", 1)

    def encode(self, value: object) -> bytes:
        return _TRUE if bool_value(value) else _FALSE

    def encode_into(self, w: BytesWriter, value: object) -> None:
        w.append(1 if bool_value(value) else 0)

    def decode(self, buf: bytes, pos: i64, n: i64) -> object:
        if n == 1:
            return buf[pos] != 0
        if n == 0:
            return None
        raise wrong_width("boolean", pos, 1, n)
