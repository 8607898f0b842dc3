"""struct-based stand-in for ``librt.strings`` where librt cannot be imported.

Same signatures and the same exception types as librt: a read past the end
of the buffer raises ``IndexError``, an integer outside the width raises
``ValueError``. Used only by the interpreted build (e.g. on PyPy); never compiled.
"""

from __future__ import annotations

import struct
from typing import Final

from mypy_extensions import i16, i32, i64, u8

_I16: Final = struct.Struct(">h")
_I32: Final = struct.Struct(">i")
_I64: Final = struct.Struct(">q")
_F32: Final = struct.Struct(">f")
_F64: Final = struct.Struct(">d")
_I16_LE: Final = struct.Struct("<h")
_I32_LE: Final = struct.Struct("<i")
_I64_LE: Final = struct.Struct("<q")


def _read_int(s: struct.Struct, b: bytes, index: int) -> int:
    if index < 0 or index + s.size > len(b):
        raise IndexError(f"index {index} out of range for bytes of length {len(b)}")
    value: int = s.unpack_from(b, index)[0]
    return value


def _read_float(s: struct.Struct, b: bytes, index: int) -> float:
    if index < 0 or index + s.size > len(b):
        raise IndexError(f"index {index} out of range for bytes of length {len(b)}")
    value: float = s.unpack_from(b, index)[0]
    return value


def _pack(s: struct.Struct, n: object) -> bytes:
    try:
        return s.pack(n)
    except (struct.error, OverflowError) as exc:
        raise ValueError(str(exc)) from None


class BytesWriter:
    """Growable byte buffer with the librt ``BytesWriter`` interface."""

    __slots__ = ("_buf",)

    def __init__(self) -> None:
        self._buf = bytearray()

    def append(self, x: int, /) -> None:
        self._buf.append(x)

    def write(self, b: bytes | bytearray, /) -> None:
        self._buf += b

    def getvalue(self) -> bytes:
        return bytes(self._buf)

    def truncate(self, size: i64, /) -> None:
        del self._buf[size:]

    def __len__(self) -> i64:
        return len(self._buf)

    def __getitem__(self, i: i64, /) -> u8:
        return self._buf[i]

    def __setitem__(self, i: i64, x: u8, /) -> None:
        self._buf[i] = x


def read_i16_be(b: bytes, index: i64, /) -> i16:
    return _read_int(_I16, b, index)


def read_i32_be(b: bytes, index: i64, /) -> i32:
    return _read_int(_I32, b, index)


def read_i64_be(b: bytes, index: i64, /) -> i64:
    return _read_int(_I64, b, index)


def read_i32_le(b: bytes, index: i64, /) -> i32:
    return _read_int(_I32_LE, b, index)


def read_i64_le(b: bytes, index: i64, /) -> i64:
    return _read_int(_I64_LE, b, index)


def read_f32_be(b: bytes, index: i64, /) -> float:
    return _read_float(_F32, b, index)


def read_f64_be(b: bytes, index: i64, /) -> float:
    return _read_float(_F64, b, index)


def write_i16_be(b: BytesWriter, n: i16, /) -> None:
    b.write(_pack(_I16, n))


def write_i32_be(b: BytesWriter, n: i32, /) -> None:
    b.write(_pack(_I32, n))


def write_i64_be(b: BytesWriter, n: i64, /) -> None:
    b.write(_pack(_I64, n))


def write_f32_be(b: BytesWriter, n: float, /) -> None:
    b.write(_pack(_F32, n))


def write_f64_be(b: BytesWriter, n: float, /) -> None:
    b.write(_pack(_F64, n))


def write_i16_le(b: BytesWriter, n: i16, /) -> None:
    b.write(_pack(_I16_LE, n))


def write_i32_le(b: BytesWriter, n: i32, /) -> None:
    b.write(_pack(_I32_LE, n))


def write_i64_le(b: BytesWriter, n: i64, /) -> None:
    b.write(_pack(_I64_LE, n))
