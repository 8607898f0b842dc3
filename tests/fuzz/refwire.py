"""Wire primitives for the fuzz reference, written independently of cqlcodec.

:class:`Writer` builds bytes and records where every length word, count and
vint sits (:class:`Slot`) so that mutations can aim at them.  :class:`Reader`
reads with bounds checks and raises :class:`Reject` on malformed input.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

_I16 = struct.Struct(">H")
_I32 = struct.Struct(">i")


class Reject(Exception):
    """The input is malformed: cqlcodec must raise DecodeError."""


class Unsure(Exception):
    """The reference cannot tell how the rest of the input is laid out (either outcome is fine)."""


class Slot(NamedTuple):
    """A length word, count or vint at ``offset`` (``width`` bytes) of kind int/short/uvint."""

    offset: int
    width: int
    kind: str


class Writer:
    """A growable buffer that remembers the positions of its length words."""

    def __init__(self) -> None:
        self.buf = bytearray()
        self.slots: list[Slot] = []

    def __len__(self) -> int:
        return len(self.buf)

    def raw(self, data: bytes) -> None:
        self.buf += data

    def byte(self, v: int) -> None:
        self.buf.append(v & 0xFF)

    def i32(self, v: int, slot: bool = True) -> None:
        if slot:
            self.slots.append(Slot(len(self.buf), 4, "int"))
        self.buf += _I32.pack(v)

    def short(self, v: int, slot: bool = True) -> None:
        if slot:
            self.slots.append(Slot(len(self.buf), 2, "short"))
        self.buf += _I16.pack(v)

    def uvint(self, v: int, slot: bool = True) -> None:
        data = uvint_bytes(v)
        if slot:
            self.slots.append(Slot(len(self.buf), len(data), "uvint"))
        self.buf += data

    def string(self, s: str) -> None:
        data = s.encode("utf-8")
        self.short(len(data))
        self.buf += data

    def short_bytes(self, data: bytes) -> None:
        self.short(len(data))
        self.buf += data

    def begin_i32_len(self) -> int:
        """Write a placeholder [int] length; returns its offset for :meth:`end_i32_len`."""
        at = len(self.buf)
        self.i32(0)
        return at

    def end_i32_len(self, at: int) -> None:
        self.buf[at:at + 4] = _I32.pack(len(self.buf) - at - 4)

    def getvalue(self) -> bytes:
        return bytes(self.buf)


def uvint_bytes(v: int) -> bytes:
    """Cassandra unsigned vint of 0 <= v < 2**64."""
    if not 0 <= v < 1 << 64:
        raise ValueError(v)
    if v < 0x80:
        return bytes([v])
    extra = 1
    while extra < 8 and v >= 1 << (7 * (extra + 1)):
        extra += 1
    if extra == 8:
        return b"\xff" + v.to_bytes(8, "big")
    first = ((0xFF00 >> extra) & 0xFF) | (v >> (8 * extra))
    return bytes([first]) + (v & ((1 << (8 * extra)) - 1)).to_bytes(extra, "big")


def vint_bytes(v: int) -> bytes:
    """Cassandra signed (zigzag) vint of a 64-bit integer."""
    return uvint_bytes(((v << 1) ^ (v >> 63)) & ((1 << 64) - 1))


class Reader:
    """Bounds-checked reads over ``data[pos:end]``; malformed input raises Reject."""

    def __init__(self, data: bytes, pos: int = 0, end: int = -1) -> None:
        self.data = data
        self.pos = pos
        self.end = len(data) if end < 0 else end

    def remaining(self) -> int:
        return self.end - self.pos

    def take(self, n: int, what: str) -> bytes:
        if n < 0 or self.pos + n > self.end:
            raise Reject(f"{what}: {n} bytes needed, {self.end - self.pos} remain at {self.pos}")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def i32(self, what: str) -> int:
        v: int = _I32.unpack(self.take(4, what))[0]
        return v

    def short(self, what: str) -> int:
        v: int = _I16.unpack(self.take(2, what))[0]
        return v

    def string(self, what: str) -> str:
        raw = self.take(self.short(what), what)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise Reject(f"{what}: invalid UTF-8") from exc

    def short_bytes(self, what: str) -> bytes:
        return self.take(self.short(what), what)

    def uvint(self, what: str) -> int:
        first = self.take(1, what)[0]
        extra = 0
        mask = 0x80
        while extra < 8 and first & mask:
            extra += 1
            mask >>= 1
        rest = self.take(extra, what)
        return ((first & (0xFF >> extra)) << (8 * extra)) | int.from_bytes(rest, "big")

    def vint(self, what: str) -> int:
        raw = self.uvint(what)
        return (raw >> 1) ^ -(raw & 1)
