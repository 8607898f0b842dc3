"""Per-column builders: the cells of one CQL type appended into Arrow-layout buffers.

One builder class per Arrow layout. During the walk of a RESULT page a builder
receives each cell's content bytes (``append``) or a null (``append_null``) and
writes the value once into growing buffers: fixed-width values as they are on
the wire (big-endian, byte-swapped in bulk by :meth:`Node.finish`), variable-width
values as offsets plus data, a validity byte per slot. Nested types own child
builders, so a null at any level is a null in that level's validity bitmap.

Validation follows the row codecs exactly: a fixed-width value of another width,
a time outside one day, a malformed collection, tuple, UDT or vector raises
DecodeError; text and ascii are validated in bulk when the builder finishes
(the caller re-runs the row path on any failure to report the first bad cell).

After :meth:`Node.finish` a builder is an immutable column: ``buffers()``,
``children()`` and ``arrow_format()`` describe it for the Arrow C data
interface, ``py_value(i, hashable)`` rebuilds the exact Python value the row
path gives (sets and maps through the same hash-flooding guard).
"""

from __future__ import annotations

import sys
from array import array
from typing import Any, Final, final

from mypy_extensions import i64

from cqlcodec import kinds as K
from cqlcodec.codecs.base import FLAG_HASHABLE, Codec
from cqlcodec.codecs.collections import (
    HASH_GROUP_LIMIT,
    bad_length,
    flooded,
    hash_flood,
    hash_guarded,
    read_count,
    trailing,
    truncated,
)
from cqlcodec.codecs.numeric import read_varint
from cqlcodec.codecs.temporal import date_from_days, datetime_from_ms
from cqlcodec.codecs.uuids import make_uuid
from cqlcodec.containers import FrozenMap, UdtValue, udt_class
from cqlcodec.runtime.buffers import (
    BytesWriter,
    read_i16_be,
    read_i32_be,
    read_i32_le,
    read_i64_be,
    read_i64_le,
    write_i16_le,
    write_i32_be,
    write_i32_le,
    write_i64_be,
    write_i64_le,
)
from cqlcodec.runtime.padding import spend_padding
from cqlcodec.runtime.wire import malformed, read_uvint
from cqlcodec.types.model import CqlType
from cqlcodec.values import Duration, Time

SWAP: Final = sys.byteorder == "little"
INT32_MAX: Final = 0x7FFFFFFF
NANOS_PER_DAY: Final = 86400 * 1000000000
_DATE_OFFSET: Final = 1 << 31
_DEC128_LIMIT: Final = 10 ** 38
_DEC256_LIMIT: Final = 10 ** 76
DEC256_VARINT: Final = "d:76,0,256"
"""The Arrow format of a varint page whose values need 39 to 76 digits."""
_EMPTY: Final = b""
SPENT: Final = BytesWriter()
"""A writer never written to: the buffers of a finished builder, and the validity
writer of one without nulls yet (each builder makes its own at the first null)."""
_frozen_map: Final = FrozenMap._wrap
_int_from_bytes: Final = int.from_bytes


def _find_typecode(size: int) -> str:
    for code in ("b", "h", "i", "l", "q"):
        if array(code).itemsize == size:
            return code
    raise RuntimeError(f"no array typecode of {size} bytes")


_INT_TYPECODES: Final = {size: _find_typecode(size) for size in (1, 2, 4, 8)}


def _typecode(size: int, floating: bool) -> str:
    if floating:
        return "f" if size == 4 else "d"
    code = _INT_TYPECODES.get(size)
    return code if code is not None else _find_typecode(size)


def native(data: bytes | bytearray, code: str) -> bytes:
    """Big-endian items of one array typecode in the machine's byte order (one bulk swap)."""
    if not SWAP or len(data) == 0 or code == "b":
        return bytes(data)
    a = array(code, data)
    a.byteswap()
    return a.tobytes()


def native_le(data: bytes, code: str) -> bytes:
    """Little-endian items of one array typecode in the machine's byte order."""
    if SWAP or len(data) == 0 or code == "b":
        return data
    a = array(code, data)
    a.byteswap()
    return a.tobytes()


def pack_bits(flags: bytes, n: i64) -> bytes:
    """One byte per slot (0 or not) to an Arrow bitmap (least significant bit first)."""
    out = BytesWriter()
    i: i64 = 0
    while i < n:
        byte: i64 = 0
        bit: i64 = 0
        while bit < 8 and i < n:
            if flags[i] != 0:
                byte |= 1 << bit
            bit += 1
            i += 1
        out.append(byte)
    return out.getvalue()


class Node:
    """A column (or child column) being built, then finished (see the module docstring)."""

    def __init__(self, t: CqlType, fmt: str) -> None:
        self.t: Final = t
        self.cql_name: Final = t.cql_name
        self.fmt = fmt
        self.length: i64 = 0
        self.nulls: i64 = 0
        self.valid = SPENT
        self.vbytes: bytes = _EMPTY
        self.packed: bytes | None = None

    # --- building ---

    def append(self, buf: bytes, pos: i64, n: i64) -> None:
        """Append the ``n`` content bytes at ``pos`` (bounds checked by the caller)."""
        raise NotImplementedError

    def append_null(self) -> None:
        """Append a null slot (validity bytes are kept from the first null on)."""
        if self.nulls == 0:
            self.first_null()
        self.valid.append(0)
        self.nulls += 1
        self.length += 1
        self.placeholder()

    def placeholder(self) -> None:
        """Write what a null slot occupies in the data buffers."""
        raise NotImplementedError

    def first_null(self) -> BytesWriter:
        """Start the validity bytes at the first null: ones for the slots before it."""
        v = BytesWriter()
        if self.length > 0:
            v.write(b"\x01" * self.length)
        self.valid = v
        return v

    def ok(self) -> None:
        if self.nulls > 0:
            self.valid.append(1)
        self.length += 1

    def finish(self) -> None:
        """Freeze the buffers: bulk byte swaps, bitmaps, page-wide type choices."""
        if self.nulls > 0:
            self.vbytes = self.valid.getvalue()
            self.valid = SPENT
        self.finish_data()
        for c in self.children():
            c.finish()

    def finish_data(self) -> None:
        raise NotImplementedError

    # --- finished ---

    def validity(self) -> bytes | None:
        """The Arrow validity bitmap (None without nulls), packed on first use."""
        if self.nulls == 0:
            return None
        packed = self.packed
        if packed is None:
            packed = pack_bits(self.vbytes, self.length)
            self.packed = packed
        return packed

    def is_valid(self, i: i64) -> bool:
        return self.nulls == 0 or self.vbytes[i] != 0

    def py_value(self, i: i64, hashable: bool) -> object:
        """The Python value of slot ``i``, as the row path decodes it."""
        raise NotImplementedError

    def buffers(self) -> list[bytes | None]:
        """The Arrow buffers after the validity bitmap."""
        return []

    def children(self) -> list[Node]:
        return []

    def child_names(self) -> list[str]:
        return []

    def extension(self) -> str:
        """The Arrow extension type name ('' for none)."""
        return ""


# --- fixed width ------------------------------------------------------------------------

_FIXED_SPECS: Final[dict[int, tuple[int, str, bool]]] = {
    # kind: (width on the wire, Arrow format, floating point)
    K.TINYINT: (1, "c", False),
    K.SMALLINT: (2, "s", False),
    K.INT: (4, "i", False),
    K.BIGINT: (8, "l", False),
    K.COUNTER: (8, "l", False),
    K.FLOAT: (4, "f", True),
    K.DOUBLE: (8, "g", True),
    K.TIMESTAMP: (8, "tsm:UTC", False),
    K.DATE: (4, "tdD", False),
    K.TIME: (8, "ttn", False),
}
_FIXED: Final[dict[int, tuple[int, str, bool, str]]] = {
    kind: (width, fmt, floating, _typecode(width, floating))
    for kind, (width, fmt, floating) in _FIXED_SPECS.items()
}
"""kind: (width on the wire, Arrow format, floating point, array typecode)"""


class FixedNode(Node):
    """tinyint, smallint, int, bigint, counter, float, double, timestamp, date, time.

    Values are written little-endian (dates already as int32 days from the Unix
    epoch), except in a ``wire_order`` node (the items of a fixed-layout vector),
    which receives only whole runs of big-endian values (:meth:`append_run`) and
    null runs (:meth:`null_run`). Such a node copies nothing during the walk: its
    :class:`Runs` record where each run starts in the body, and its values are read
    from the body on first use (``lazy``: :meth:`le_values`, or one strided numpy
    conversion in :mod:`cqlcodec.columnar.numpy_conv`)."""

    def __init__(self, t: CqlType) -> None:
        spec = _FIXED[t.kind]
        super().__init__(t, spec[1])
        self.kind: Final = t.kind
        self.width: Final[i64] = spec[0]
        self.code: Final = spec[3]
        self.data = BytesWriter()
        self.values: bytes = _EMPTY
        self.items: list[Any] | None = None
        self.wire_order = False
        self.runs: Runs | None = None  # wire_order: where the values are in the body
        self.lazy = False  # finished with its values still in the body

    def append(self, buf: bytes, pos: i64, n: i64) -> None:
        width = self.width
        if n != width:
            if n == 0:
                self.append_null()
                return
            raise malformed(self.cql_name, pos, f"a {self.cql_name} value is {width} bytes, "
                                                f"got {n}")
        w = self.data
        if width == 8:
            v: i64 = read_i64_be(buf, pos)
            if self.kind == K.TIME and (v < 0 or v >= NANOS_PER_DAY):
                raise malformed("time", pos,
                                f"{v} nanoseconds is outside [0, {NANOS_PER_DAY}) (one day)")
            write_i64_le(w, v)
        elif width == 4:
            raw: int = read_i32_be(buf, pos)
            if self.kind == K.DATE:  # uint32 days with the epoch at 2**31 -> int32 days
                raw = raw + _DATE_OFFSET if raw < 0 else raw - _DATE_OFFSET
            write_i32_le(w, raw)
        elif width == 2:
            write_i16_le(w, read_i16_be(buf, pos))
        else:
            w.append(buf[pos])
        self.ok()

    def append_run(self, runs: Runs, buf: bytes, pos: i64) -> None:
        """Append ``runs.run_len`` non-null values stored back to back at ``pos`` (a
        fixed-layout vector; ``wire_order`` nodes only): only the position is kept."""
        runs.add(buf, pos)
        count = runs.run_len
        if self.nulls > 0:
            self.valid.write(b"\x01" * count)
        self.length += count

    def null_run(self, runs: Runs) -> None:
        """Append ``runs.run_len`` null values (a null vector; ``wire_order`` nodes only)."""
        count = runs.run_len
        write_i64_le(runs.starts, -1)
        runs.stride = -1
        if self.nulls == 0:
            self.first_null()
        self.valid.write(bytes(count))
        self.nulls += count
        self.length += count

    def placeholder(self) -> None:
        w = self.data
        for _i in range(self.width):
            w.append(0)

    def finish_data(self) -> None:
        runs = self.runs
        if runs is not None:
            # values read from the body on first use when they are most of it; a few
            # small vectors are copied now rather than keep a large body alive
            if len(runs.starts) > 0:
                self.lazy = True
                if 2 * self.length * self.width < len(runs.src):
                    self.le_values()
            return
        self.values = native_le(self.data.getvalue(), self.code)
        self.data = SPENT

    def le_values(self) -> bytes:
        """The values in the machine's byte order (read from the body on first use)."""
        runs = self.runs
        if not self.lazy or runs is None:
            return self.values
        starts = runs.starts.getvalue()
        src = memoryview(runs.src)
        size = runs.run_len * self.width
        count: i64 = len(starts) >> 3
        out = bytearray(count * size)  # null runs stay zero
        dest = memoryview(out)
        o: i64 = 0
        for j in range(count):
            p = read_i64_le(starts, 8 * j)
            if p >= 0:
                dest[o: o + size] = src[p: p + size]
            o += size
        dest.release()
        src.release()
        self.values = native(out, self.code)
        self.lazy = False
        self.runs = None
        return self.values

    def take_values(self, values: bytes) -> None:
        """Hold ``values`` (what :meth:`le_values` would give, made another way: one
        numpy conversion) instead of the runs in the body."""
        self.values = values
        self.lazy = False
        self.runs = None

    def buffers(self) -> list[bytes | None]:
        return [self.le_values()]

    def py_value(self, i: i64, hashable: bool) -> object:
        if not self.is_valid(i):
            return None
        items = self.items
        if items is None or len(items) != self.length:
            items = array(self.code, self.le_values()).tolist()
            self.items = items
        v = items[i]
        kind = self.kind
        if kind == K.TIMESTAMP:
            ms: int = v
            return datetime_from_ms(ms, False)
        if kind == K.DATE:
            days: int = v
            return date_from_days(days)
        if kind == K.TIME:
            ns: int = v
            return Time(ns)
        return v


@final
class Runs:
    """Where the vectors of a fixed-layout vector column are in the body: the runs of
    ``run_len`` big-endian values of its items' :class:`FixedNode`."""

    def __init__(self, run_len: i64) -> None:
        self.run_len: Final = run_len
        self.src: bytes = _EMPTY  # the body the runs are in
        self.starts = BytesWriter()  # int64 little-endian run positions, -1 for null
        self.stride: i64 = 0  # the distance between consecutive runs, or -1 if uneven
        self.first: i64 = -1  # the first run's position
        self.last: i64 = -1

    def add(self, buf: bytes, pos: i64) -> None:
        """Record a run at ``pos`` in ``buf``."""
        self.src = buf
        write_i64_le(self.starts, pos)
        last = self.last
        if last < 0:
            self.first = pos
        elif self.stride != pos - last:
            self.stride = pos - last if self.stride == 0 else -1
        self.last = pos


class BoolNode(Node):
    """boolean: any non-zero byte is true; a bitmap in Arrow."""

    def __init__(self, t: CqlType) -> None:
        super().__init__(t, "b")
        self.data = BytesWriter()
        self.bits: bytes | None = None
        self.flags: bytes = _EMPTY

    def append(self, buf: bytes, pos: i64, n: i64) -> None:
        if n != 1:
            if n == 0:
                self.append_null()
                return
            raise malformed("boolean", pos, f"a boolean value is 1 bytes, got {n}")
        self.data.append(1 if buf[pos] != 0 else 0)
        self.ok()

    def placeholder(self) -> None:
        self.data.append(0)

    def finish_data(self) -> None:
        self.flags = self.data.getvalue()
        self.data = SPENT

    def buffers(self) -> list[bytes | None]:
        bits = self.bits
        if bits is None:  # packed on first use
            bits = pack_bits(self.flags, self.length)
            self.bits = bits
        return [bits]

    def py_value(self, i: i64, hashable: bool) -> object:
        if not self.is_valid(i):
            return None
        return self.flags[i] != 0


class UuidNode(Node):
    """uuid, timeuuid: 16 bytes as on the wire; Arrow ``arrow.uuid`` on fixed_size_binary(16)."""

    def __init__(self, t: CqlType) -> None:
        super().__init__(t, "w:16")
        self.data = BytesWriter()
        self.values: bytes = _EMPTY

    def append(self, buf: bytes, pos: i64, n: i64) -> None:
        if n != 16:
            if n == 0:
                self.append_null()
                return
            raise malformed(self.cql_name, pos, f"a {self.cql_name} value is 16 bytes, got {n}")
        w = self.data
        write_i64_be(w, read_i64_be(buf, pos))
        write_i64_be(w, read_i64_be(buf, pos + 8))
        self.ok()

    def placeholder(self) -> None:
        write_i64_be(self.data, 0)
        write_i64_be(self.data, 0)

    def finish_data(self) -> None:
        self.values = self.data.getvalue()
        self.data = SPENT

    def buffers(self) -> list[bytes | None]:
        return [self.values]

    def extension(self) -> str:
        return "arrow.uuid"

    def py_value(self, i: i64, hashable: bool) -> object:
        if not self.is_valid(i):
            return None
        return make_uuid(_int_from_bytes(self.values[i * 16: i * 16 + 16], "big"))


class DurationNode(Node):
    """duration -> month_day_nano interval (int32 months, int32 days, int64 nanoseconds)."""

    def __init__(self, t: CqlType, codec: Codec) -> None:
        super().__init__(t, "tin")
        self.codec: Final = codec
        self.months = BytesWriter()
        self.days = BytesWriter()
        self.nanos = BytesWriter()
        self.values: bytes = _EMPTY
        self.native_parts: list[bytes] = []

    def append(self, buf: bytes, pos: i64, n: i64) -> None:
        d = self.codec.decode(buf, pos, n)  # validates the three vints, ranges and signs
        if d is None:
            self.append_null()
            return
        assert isinstance(d, Duration)
        write_i32_be(self.months, d.months)
        write_i32_be(self.days, d.days)
        write_i64_be(self.nanos, d.nanoseconds)
        self.ok()

    def placeholder(self) -> None:
        write_i32_be(self.months, 0)
        write_i32_be(self.days, 0)
        write_i64_be(self.nanos, 0)

    def finish_data(self) -> None:
        months = self.months.getvalue()
        days = self.days.getvalue()
        nanos = self.nanos.getvalue()
        out = BytesWriter()
        order = sys.byteorder
        for i in range(self.length):
            m: int = read_i32_be(months, i * 4)
            d: int = read_i32_be(days, i * 4)
            ns: int = read_i64_be(nanos, i * 8)
            out.write(m.to_bytes(4, order, signed=True))
            out.write(d.to_bytes(4, order, signed=True))
            out.write(ns.to_bytes(8, order, signed=True))
        self.values = out.getvalue()
        self.native_parts = [native(months, _typecode(4, False)), native(days, _typecode(4, False)),
                             native(nanos, _typecode(8, False))]

    def parts(self) -> list[bytes]:
        """Months (int32), days (int32) and nanoseconds (int64) as three native arrays."""
        return self.native_parts

    def buffers(self) -> list[bytes | None]:
        return [self.values]

    def py_value(self, i: i64, hashable: bool) -> object:
        if not self.is_valid(i):
            return None
        order = sys.byteorder
        v = self.values
        p = i * 16
        return Duration(_int_from_bytes(v[p: p + 4], order, signed=True),
                        _int_from_bytes(v[p + 4: p + 8], order, signed=True),
                        _int_from_bytes(v[p + 8: p + 16], order, signed=True))


class NullNode(Node):
    """Cassandra's empty type: every value is null (Arrow null type)."""

    def __init__(self, t: CqlType) -> None:
        super().__init__(t, "n")

    def append(self, buf: bytes, pos: i64, n: i64) -> None:
        if n != 0:
            raise malformed(self.cql_name, pos, f"values of the empty type have no bytes, got {n}")
        self.append_null()

    def placeholder(self) -> None:
        pass

    def finish(self) -> None:
        if self.nulls > 0:
            self.vbytes = self.valid.getvalue()
            self.valid = SPENT

    def finish_data(self) -> None:
        pass

    def py_value(self, i: i64, hashable: bool) -> object:
        return None


# --- variable width ---------------------------------------------------------------------

BIN_TEXT: Final = 0
BIN_ASCII: Final = 1
BIN_BLOB: Final = 2
BIN_RAW: Final = 3
BIN_INET: Final = 4
BIN_COMPOSITE: Final = 5  # the raw value, checked by its codec; to_pylist decodes it


class BinaryNode(Node):
    """text, ascii, inet (as its text), blob and unknown custom types: offsets + data."""

    def __init__(self, t: CqlType, mode: int, large: bool, codec: Codec) -> None:
        super().__init__(t, _binary_format(mode, large))
        self.mode: Final = mode
        self.large: Final = large
        self.codec: Final = codec
        self.offsets = BytesWriter()
        self.data = BytesWriter()
        self.offs: bytes = _EMPTY
        self.blob: bytes = _EMPTY
        self.items: list[int] | None = None
        if large:
            write_i64_le(self.offsets, 0)
        else:
            write_i32_le(self.offsets, 0)

    def end_offset(self) -> None:
        if self.large:
            write_i64_le(self.offsets, len(self.data))
        else:
            size: int = len(self.data)
            if size > INT32_MAX:
                raise malformed(self.cql_name, 0, "more than 2 GiB of values in one column")
            write_i32_le(self.offsets, size)

    def append(self, buf: bytes, pos: i64, n: i64) -> None:
        mode = self.mode
        if mode == BIN_INET:
            v = self.codec.decode(buf, pos, n)  # 4 or 16 bytes (else DecodeError), 0 is null
            if v is None:
                self.append_null()
                return
            assert isinstance(v, str)
            self.data.write(v.encode("ascii"))
        elif n == 0 and (mode == BIN_RAW or mode == BIN_COMPOSITE):
            self.append_null()
            return
        elif mode == BIN_COMPOSITE:
            self.codec.decode(buf, pos, n)  # DecodeError for a malformed value, as the row path
            self.data.write(buf[pos: pos + n])
        elif n > 0:
            self.data.write(buf[pos: pos + n])
        self.end_offset()
        self.ok()

    def placeholder(self) -> None:
        self.end_offset()

    def finish_data(self) -> None:
        blob = self.data.getvalue()
        self.data = SPENT
        offs_le = self.offsets.getvalue()
        self.offsets = SPENT
        self.blob = blob
        self.offs = native_le(offs_le, _typecode(8 if self.large else 4, False))
        if self.mode == BIN_TEXT:
            check_utf8(blob, offs_le, self.length, self.large)
        elif self.mode == BIN_ASCII and not blob.isascii():
            raise malformed("ascii", 0, "a byte >= 0x80 in an ascii value")

    def offsets_list(self) -> list[int]:
        """The offsets as ints (made on first use: to_pylist and checks only)."""
        items = self.items
        if items is None or len(items) != self.length + 1:
            items = array(_typecode(8 if self.large else 4, False), self.offs).tolist()
            self.items = items
        return items

    def buffers(self) -> list[bytes | None]:
        return [self.offs, self.blob]

    def py_value(self, i: i64, hashable: bool) -> object:
        if not self.is_valid(i):
            return None
        items = self.offsets_list()
        part = self.blob[items[i]: items[i + 1]]
        if self.mode == BIN_BLOB or self.mode == BIN_RAW:
            return part
        if self.mode == BIN_COMPOSITE:  # in a set or a map key: the hashable decoding
            codec = self.t.codec(FLAG_HASHABLE) if hashable else self.codec
            return codec.decode(part, 0, len(part))
        return part.decode("utf-8")


def utf8_ascii(blob: bytes) -> bool:
    """True if ``blob`` is all ASCII; False if it is valid UTF-8 with other characters;
    DecodeError if it is not UTF-8."""
    if blob.isascii():
        return True
    try:
        blob.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise malformed("text", exc.start, f"invalid UTF-8 ({exc.reason})") from None
    return False


def check_utf8(blob: bytes, offs_le: bytes, n: i64, large: bool) -> None:
    """Every one of the ``n`` values of ``blob`` (little-endian int32 or int64
    ``offs_le``) is valid UTF-8: the whole data decodes and no non-empty value
    starts with a continuation byte (so no sequence crosses a value boundary)."""
    if utf8_ascii(blob):
        return
    start: int = 0
    for i in range(1, n + 1):
        stop: int = read_i64_le(offs_le, 8 * i) if large else read_i32_le(offs_le, 4 * i)
        if start < stop and (blob[start] & 0xC0) == 0x80:
            raise malformed("text", start, "invalid UTF-8 (a value starts inside a "
                                           "multi-byte sequence)")
        start = stop


def _binary_format(mode: int, large: bool) -> str:
    if mode == BIN_BLOB or mode == BIN_RAW or mode == BIN_COMPOSITE:
        return "Z" if large else "z"
    return "U" if large else "u"


class VarintNode(BinaryNode):
    """varint: int64 when every value of the page fits, else decimal128(38, 0) when every
    value has at most 38 digits, else decimal256(76, 0) when every value has at most 76
    digits, else (one value of 77 digits or more makes the whole page so) binary: the
    big-endian two's complement bytes as on the wire (exact, and free of int-to-text
    limits)."""

    def __init__(self, t: CqlType, large: bool, codec: Codec) -> None:
        super().__init__(t, BIN_RAW, large, codec)
        self.widest: i64 = 0
        self.converted: bytes = _EMPTY
        self.text_offs: bytes = _EMPTY
        self.text_data: bytes = _EMPTY

    def append(self, buf: bytes, pos: i64, n: i64) -> None:
        if n > self.widest:
            self.widest = n
        super().append(buf, pos, n)

    def finish_data(self) -> None:
        super().finish_data()
        if self.widest > 32:  # more than 76 digits (a minimal encoding)
            self.fmt = "Z" if self.large else "z"
            return
        if self.widest <= 8:
            self.fmt = "l"
            self.converted = self.small_values(0, False)
            return
        ints: list[int] = []
        for i in range(self.length):
            ints.append(self.int_at(i))
        if self.widest <= 8:
            self.fmt = "l"
            w = BytesWriter()
            for v in ints:
                write_i64_be(w, v)
            self.converted = native(w.getvalue(), _typecode(8, False))
            return
        if all([-_DEC128_LIMIT < v < _DEC128_LIMIT for v in ints]):
            self.fmt = "d:38,0"
            self.converted = _dec128(ints)
            return
        if all([-_DEC256_LIMIT < v < _DEC256_LIMIT for v in ints]):
            self.fmt = DEC256_VARINT
            self.converted = _decimal_words(ints, 32)
            return
        self.fmt = "Z" if self.large else "z"

    def small_values(self, skip: i64, wide: bool) -> bytes:
        """Each value's integer (its bytes after the first ``skip``, at most 8) in the
        machine's order: int64, or int128 when ``wide``; 0 for a null."""
        w = BytesWriter()
        blob = self.blob
        offs = self.offs
        large = self.large
        start: int = 0
        for i in range(1, self.length + 1):
            stop = _offset_at(offs, i, large)
            n = stop - start - skip
            v: i64 = read_varint(blob, start + skip, n) if n > 0 else 0
            high: i64 = -1 if v < 0 else 0
            if SWAP:
                write_i64_le(w, v)
                if wide:
                    write_i64_le(w, high)
            else:
                if wide:
                    write_i64_be(w, high)
                write_i64_be(w, v)
            start = stop
        return w.getvalue()

    def int_at(self, i: i64) -> int:
        items = self.offsets_list()
        start = items[i]
        n = items[i + 1] - start
        if n == 0:
            return 0
        return read_varint(self.blob, start, n)

    def text_form(self, texts: list[str]) -> None:
        offsets = BytesWriter()
        data = BytesWriter()
        if self.large:
            write_i64_be(offsets, 0)
        else:
            write_i32_be(offsets, 0)
        i: i64 = 0
        for s in texts:
            if self.is_valid(i):
                data.write(s.encode("ascii"))
            if self.large:
                write_i64_be(offsets, len(data))
            else:
                write_i32_be(offsets, len(data))
            i += 1
        self.converted = b""
        self.text_offs = native(offsets.getvalue(), _typecode(8 if self.large else 4, False))
        self.text_data = data.getvalue()

    def buffers(self) -> list[bytes | None]:
        fmt = self.fmt
        if fmt == "u" or fmt == "U":
            return [self.text_offs, self.text_data]
        if fmt == "z" or fmt == "Z":
            return [self.offs, self.blob]
        return [self.converted]

    def py_value(self, i: i64, hashable: bool) -> object:
        if not self.is_valid(i):
            return None
        items = self.offsets_list()
        return self.codec.decode(self.blob, items[i], items[i + 1] - items[i])


def _offset_at(offs: bytes, i: i64, large: bool) -> int:
    """Offset ``i`` of native int32 (int64 if ``large``) offsets."""
    if large:
        return read_i64_le(offs, 8 * i) if SWAP else read_i64_be(offs, 8 * i)
    return read_i32_le(offs, 4 * i) if SWAP else read_i32_be(offs, 4 * i)


def _dec128(ints: list[int]) -> bytes:
    return _decimal_words(ints, 16)


def _decimal_words(ints: list[int], width: int) -> bytes:
    """Arrow decimal values: each int as a ``width``-byte two's complement integer in
    the machine's order."""
    w = BytesWriter()
    order = sys.byteorder
    for v in ints:
        w.write(v.to_bytes(width, order, signed=True))
    return w.getvalue()


class DecimalNode(VarintNode):
    """decimal: decimal128(38, scale) when one scale in [0, 38] and 38 digits hold every
    value of the page, else the exact decimal text (utf8)."""

    def __init__(self, t: CqlType, large: bool, codec: Codec) -> None:
        super().__init__(t, large, codec)
        self.scale: i64 = -1
        self.scaled = False  # a value (and so a scale) seen
        self.one_scale = True

    def append(self, buf: bytes, pos: i64, n: i64) -> None:
        if n > 0:
            if n <= 4:
                raise malformed("decimal", pos, f"a decimal needs a 4-byte scale and at "
                                                f"least 1 byte of unscaled value, got {n} bytes")
            if n > 260:
                self.codec.decode(buf, pos, n)  # the digit limit of huge values
            scale: int = read_i32_be(buf, pos)
            if not self.scaled:
                self.scale = scale
                self.scaled = True
            elif scale != self.scale:
                self.one_scale = False
        super().append(buf, pos, n)

    def finish_data(self) -> None:
        BinaryNode.finish_data(self)
        scale = self.scale
        if self.one_scale and 0 <= scale <= 38 and self.widest <= 12:
            self.fmt = f"d:38,{scale}"
            self.converted = self.small_values(4, True)
            return
        if self.one_scale and 0 <= scale <= 38 and self.widest <= 20:
            ints: list[int] = []
            items = self.offsets_list()
            for i in range(self.length):
                start = items[i]
                n = items[i + 1] - start
                ints.append(read_varint(self.blob, start + 4, n - 4) if n > 0 else 0)
            if all([-_DEC128_LIMIT < v < _DEC128_LIMIT for v in ints]):
                self.fmt = f"d:38,{scale}" if scale >= 0 else "d:38,0"
                self.converted = _dec128(ints)
                return
        self.fmt = "U" if self.large else "u"
        texts: list[str] = []
        for i in range(self.length):
            v = self.py_value(i, False)
            texts.append(str(v) if v is not None else "")
        self.text_form(texts)


# --- nested -----------------------------------------------------------------------------

class ListNode(Node):
    """list and set -> Arrow list; map -> Arrow map (list of key/value entries)."""

    def __init__(self, t: CqlType, items: list[Node], large: bool) -> None:
        kind = t.kind
        fmt = "+m" if kind == K.MAP else ("+L" if large else "+l")
        super().__init__(t, fmt)
        self.kind: Final = kind
        self.items: Final = items
        self.large: Final = large and kind != K.MAP
        self.offsets = BytesWriter()
        self.offs: bytes = _EMPTY
        self.bounds: list[int] = []
        self.starts = BytesWriter()
        self.at: list[int] = []
        self.count: i64 = 0
        self.null_key = False
        self.guard: Final = kind != K.LIST and hash_guarded(t.subtypes[0].codec(FLAG_HASHABLE))
        if self.large:
            write_i64_be(self.offsets, 0)
        else:
            write_i32_be(self.offsets, 0)

    def end_offset(self) -> None:
        if self.large:
            write_i64_be(self.offsets, self.count)
        else:
            if self.count > INT32_MAX:
                raise malformed(self.cql_name, 0, "more than 2**31 elements in one column")
            count: int = self.count
            write_i32_be(self.offsets, count)

    def element(self, c: Node, buf: bytes, p: i64, end: i64) -> i64:
        cql_name = self.cql_name
        if end - p < 4:
            raise truncated(cql_name, p, end)
        ln: int = read_i32_be(buf, p)
        if ln < 0 or ln > end - p - 4:
            if ln != -1:
                raise bad_length(cql_name, p, ln, end)
            c.append_null()
            return p + 4
        c.append(buf, p + 4, ln)
        return p + 4 + ln

    def append(self, buf: bytes, pos: i64, n: i64) -> None:
        if n == 0:
            self.append_null()
            return
        is_map = self.kind == K.MAP
        end = pos + n
        count = read_count(buf, pos, end, self.cql_name, 8 if is_map else 4)
        p: i64 = pos + 4
        first = self.items[0]
        if is_map:
            second = self.items[1]
            for _i in range(count):
                before = first.nulls
                p = self.element(first, buf, p, end)
                if first.nulls != before:
                    self.null_key = True
                p = self.element(second, buf, p, end)
        else:
            for _i in range(count):
                p = self.element(first, buf, p, end)
        if p != end:
            raise trailing(self.cql_name, p, end)
        self.count += count
        self.end_offset()
        write_i64_be(self.starts, pos)
        self.ok()

    def placeholder(self) -> None:
        self.end_offset()
        write_i64_be(self.starts, -1)

    def finish_data(self) -> None:
        code = _typecode(8 if self.large else 4, False)
        self.offs = native(self.offsets.getvalue(), code)
        self.offsets = BytesWriter()
        if self.kind == K.MAP and self.null_key:
            self.fmt = "+l"  # Arrow map keys cannot be null: a list of key/value structs

    def buffers(self) -> list[bytes | None]:
        return [self.offs]

    def children(self) -> list[Node]:
        return self.items

    def py_value(self, i: i64, hashable: bool) -> object:
        if not self.is_valid(i):
            return None
        if len(self.bounds) != self.length + 1:  # made on first use
            self.bounds = array(_typecode(8 if self.large else 4, False), self.offs).tolist()
            self.at = array("q", native(self.starts.getvalue(), "q")).tolist()
        lo = self.bounds[i]
        hi = self.bounds[i + 1]
        first = self.items[0]
        kind = self.kind
        if kind == K.LIST:
            out = [first.py_value(j, hashable) for j in range(lo, hi)]
            return tuple(out) if hashable else out
        guard = self.guard and hi - lo > HASH_GROUP_LIMIT
        groups: dict[int, int] = {}
        if kind == K.SET:
            s: set[object] = set()
            for j in range(lo, hi):
                item = first.py_value(j, True)
                size = len(s)
                s.add(item)
                if guard and len(s) > size and flooded(groups, item):
                    raise hash_flood(self.cql_name, self.at[i], "elements")
            return frozenset(s) if hashable else s
        second = self.items[1]
        d: dict[object, object] = {}
        for j in range(lo, hi):
            k = first.py_value(j, True)
            size = len(d)
            d[k] = second.py_value(j, hashable)
            if guard and len(d) > size and flooded(groups, k):
                raise hash_flood(self.cql_name, self.at[i], "keys")
        return _frozen_map(d) if hashable else d


class StructNode(Node):
    """tuple -> struct<f0, f1, ...>; UDT -> struct with the field names."""

    def __init__(self, t: CqlType, fields: list[Node], codec: Codec) -> None:
        super().__init__(t, "+s")
        self.fields: Final = fields
        self.udt: Final = t.kind == K.UDT
        self.codec: Final = codec
        self.cls: type[UdtValue] | None = None
        if self.udt and len(t.field_names) == len(fields) and len(fields) > 0:
            self.cls = udt_class(t)

    def append(self, buf: bytes, pos: i64, n: i64) -> None:
        if self.udt and self.cls is None:
            self.codec.decode(buf, pos, n)  # raises: a UDT known only by name
        if n == 0:
            self.append_null()
            return
        cql_name = self.cql_name
        fields = self.fields
        end = pos + n
        p = pos
        done: i64 = 0
        total: i64 = len(fields)
        for c in fields:
            if p == end:
                spend_padding(cql_name, p, total - done, total, self.udt)
                for j in range(done, total):
                    fields[j].append_null()
                self.ok()
                return
            if end - p < 4:
                raise truncated(cql_name, p, end)
            ln: int = read_i32_be(buf, p)
            if ln < 0 or ln > end - p - 4:
                if ln != -1:
                    raise bad_length(cql_name, p, ln, end)
                c.append_null()
                p += 4
            else:
                c.append(buf, p + 4, ln)
                p += 4 + ln
            done += 1
        if p != end:
            raise malformed(cql_name, p, f"{end - p} bytes remain after the last of "
                                         f"{total} fields")
        self.ok()

    def placeholder(self) -> None:
        for c in self.fields:
            c.append_null()

    def finish_data(self) -> None:
        pass

    def children(self) -> list[Node]:
        return self.fields

    def child_names(self) -> list[str]:
        if self.udt:
            return list(self.t.field_names)
        return [f"f{i}" for i in range(len(self.fields))]

    def py_value(self, i: i64, hashable: bool) -> object:
        if not self.is_valid(i):
            return None
        values = [c.py_value(i, hashable) for c in self.fields]
        cls = self.cls
        if cls is not None:
            return tuple.__new__(cls, values)
        return tuple(values)


class VectorNode(Node):
    """vector<T, n> -> fixed_size_list<T, n>."""

    def __init__(self, t: CqlType, item: Node, codec: Codec) -> None:
        super().__init__(t, f"+w:{t.dimension}")
        self.item: Final = item
        self.dim: Final[i64] = t.dimension
        self.size: Final[i64] = t.subtypes[0].fixed_size
        self.codec: Final = codec
        self.run: Final = isinstance(item, FixedNode) and item.kind != K.DATE \
            and item.kind != K.TIME and item.width == self.size
        if self.run:
            assert isinstance(item, FixedNode)
            item.wire_order = True

    def append(self, buf: bytes, pos: i64, n: i64) -> None:
        if n == 0:
            self.append_null()
            return
        dim = self.dim
        size = self.size
        item = self.item
        cql_name = self.cql_name
        if size >= 0:
            if n != size * dim:
                raise malformed(cql_name, pos, f"expected {size * dim} bytes ({dim} elements "
                                               f"of {size}), observed {n}")
            if self.run:
                assert isinstance(item, FixedNode)
                runs = item.runs
                if runs is None:
                    runs = item.runs = Runs(dim)
                item.append_run(runs, buf, pos)
            else:
                p = pos
                for _i in range(dim):
                    item.append(buf, p, size)
                    p += size
            self.ok()
            return
        end = pos + n
        if dim > n:
            raise malformed(cql_name, pos, f"{n} bytes cannot hold {dim} length-prefixed "
                                           "elements")
        p = pos
        i: i64 = 0
        while i < dim:
            if p >= end:
                raise malformed(cql_name, p, f"ran out of bytes after {i} of {dim} elements")
            ln, q = read_uvint(buf, p, end, cql_name)
            if ln > end - q:
                raise malformed(cql_name, p, "element " + format(i, "d") + " length "
                                + format(ln, "d") + f" exceeds the {end - q} bytes that remain")
            item.append(buf, q, ln)
            p = q + ln
            i += 1
        if p != end:
            raise malformed(cql_name, p, f"{end - p} bytes remain after the last of {dim} "
                                         "elements")
        self.ok()

    def placeholder(self) -> None:
        item = self.item
        if self.run:
            assert isinstance(item, FixedNode)
            runs = item.runs
            if runs is None:
                runs = item.runs = Runs(self.dim)
            item.null_run(runs)
            return
        for _i in range(self.dim):
            item.append_null()

    def finish_data(self) -> None:
        pass

    def children(self) -> list[Node]:
        return [self.item]

    def py_value(self, i: i64, hashable: bool) -> object:
        if not self.is_valid(i):
            return None
        dim = self.dim
        item = self.item
        out = [item.py_value(j, hashable) for j in range(i * dim, i * dim + dim)]
        return tuple(out) if hashable else out


# --- the tree for a type ----------------------------------------------------------------

def make_node(t: CqlType, large: bool) -> Node:
    """A new empty builder for values of ``t`` (frozen and reversed map like their inner type).

    ``large`` selects 64-bit offsets (bodies of 2 GiB or more)."""
    t = t.unwrapped()
    kind = t.kind
    if kind in _FIXED:
        return FixedNode(t)
    if kind == K.BOOLEAN:
        return BoolNode(t)
    if kind == K.UUID or kind == K.TIMEUUID:
        return UuidNode(t)
    if kind == K.TEXT or kind == 0x000A:
        return BinaryNode(t, BIN_TEXT, large, t.codec())
    if kind == K.ASCII:
        return BinaryNode(t, BIN_ASCII, large, t.codec())
    if kind == K.BLOB:
        return BinaryNode(t, BIN_BLOB, large, t.codec())
    if kind == K.INET:
        return BinaryNode(t, BIN_INET, large, t.codec())
    if kind == K.VARINT:
        return VarintNode(t, large, t.codec())
    if kind == K.DECIMAL:
        return DecimalNode(t, large, t.codec())
    if kind == K.DURATION:
        return DurationNode(t, t.codec())
    if kind == K.EMPTY:
        return NullNode(t)
    subs = t.subtypes
    if kind == K.LIST or kind == K.SET:
        return ListNode(t, [make_node(subs[0], large)], large)
    if kind == K.MAP:
        return ListNode(t, [make_node(subs[0], large), make_node(subs[1], large)], large)
    if kind == K.TUPLE or kind == K.UDT:
        return StructNode(t, [make_node(s, large) for s in subs], t.codec())
    if kind == K.VECTOR:
        return VectorNode(t, make_node(subs[0], large), t.codec())
    if kind == K.COMPOSITE:
        return BinaryNode(t, BIN_COMPOSITE, large, t.codec())
    codec = t.codec()
    if codec.fixed_size == 0:  # a custom class name for the empty type
        return NullNode(t)
    return BinaryNode(t, BIN_RAW, large, codec)


def column_pylist(node: Node, unset: list[int], unset_value: object) -> list[object]:
    """The values of a finished top-level column; rows in ``unset`` are ``unset_value``."""
    out = [node.py_value(i, False) for i in range(node.length)]
    for r in unset:
        out[r] = unset_value
    return out

