# GENERATED FILE - DO NOT EDIT. Made by tools/gen_slots.py from its template;
# change the template and run `python tools/gen_slots.py` (a test checks this file).
"""The columnar page walk over groups of up to 8 column slots (the compiled fast path).

Each column of a page is a slot of a :class:`SlotGroup`: its kind (an ``S_`` code
below), the width its length words must hold, and its builder's buffers.
:meth:`SlotGroup.walk` reads every row of a page of at most 8 columns with
every slot in locals; :meth:`SlotGroup.row` reads one row's cells of one group,
for wider pages. Values go straight into the builders' little-endian buffers; a
null writes the slot's placeholder and its row number, and :meth:`SlotGroup.close`
makes the validity bytes once.

Anything else (a length of the wrong width, "not set", a negative or truncated
length, a time out of range) raises :class:`SlotStop`: the caller then walks the
page with the checked walk, which names what is wrong or handles it.
"""

from __future__ import annotations

from typing import Final, final

from mypy_extensions import i32, i64

from cqlcodec.columnar.builders import NANOS_PER_DAY, SPENT, Node
from cqlcodec.runtime.buffers import (
    BytesWriter,
    read_i16_be,
    read_i32_be,
    read_i32_le,
    read_i64_be,
    read_i64_le,
    write_i16_le,
    write_i32_le,
    write_i64_le,
)

SLOTS: Final = 8
"""Columns per group."""

# how a walk writes a column's cells (a slot's kind here, Sink.kind in cqlcodec.columnar.walk)
S_NONE: Final = -1  # no column in this slot
S_NODE: Final = 0  # the builder's append (nested and rarer types, encrypted columns)
S_I8: Final = 1
S_I16: Final = 2
S_I32: Final = 3  # int, float (the bits)
S_I64: Final = 4  # bigint, counter, double, timestamp
S_DATE: Final = 5
S_TIME: Final = 6
S_BOOL: Final = 7
S_UUID: Final = 8
S_BYTES: Final = 9  # text, ascii, blob with 32-bit offsets
NO_WIDTH: Final = 1 << 40  # never a length word: the slot has no fixed width
_DATE_OFFSET: Final = 1 << 31


class SlotStop(Exception):
    """Internal: a cell the slot walk leaves to the checked walk."""


def copy_value(w: BytesWriter, buf: bytes, pos: i64, n: i64) -> None:
    """Append ``buf[pos:pos + n]`` (in bounds) to ``w`` without a slice object: 8 bytes
    at a time, or at once past 128 bytes. (Values of up to 32 bytes with room after
    them in the body are copied inline as four words and a truncate.)"""
    if n > 128:
        w.write(buf[pos: pos + n])
        return
    stop = pos + n
    while pos + 8 <= stop:
        write_i64_le(w, read_i64_le(buf, pos))
        pos += 8
    if pos + 4 <= stop:
        write_i32_le(w, read_i32_le(buf, pos))
        pos += 4
    while pos < stop:
        w.append(buf[pos])
        pos += 1


def mark_nulls(node: Node, null_rows: BytesWriter, nrows: i64) -> None:
    """Hand ``nrows`` to a builder the walk wrote directly, with its nulls: ``null_rows``
    holds their row numbers (int32 little-endian); the validity bytes are made here,
    once, instead of one per cell during the walk."""
    node.length = nrows
    nulls: i64 = len(null_rows) >> 2
    node.nulls = nulls
    if nulls > 0:
        rows = null_rows.getvalue()
        v = node.first_null()  # a one for each of the nrows slots
        for j in range(nulls):
            row: int = read_i32_le(rows, 4 * j)
            v[row] = 0


def put_zeros(w: BytesWriter, width: i64) -> None:
    """The placeholder of a null fixed-width value."""
    if width == 8:
        write_i64_le(w, 0)
    elif width == 4:
        write_i32_le(w, 0)
    else:
        for _i in range(width):
            w.append(0)


@final
class SlotGroup:
    """Up to 8 consecutive columns of a page, as slots (see the module docstring).

    ``nodes`` are the columns' builders; ``kinds`` their ``S_`` codes; ``widths`` the
    value width of fixed-width kinds (``NO_WIDTH`` for others). Data, offsets and
    validity are the builders' own buffers; the null counts are kept here until
    :meth:`close`.
    """

    def __init__(self, nodes: list[Node], kinds: list[int], widths: list[int],
                 data: list[BytesWriter], offsets: list[BytesWriter]) -> None:
        count = len(nodes)
        none = SPENT  # the buffers of a slot past the columns: never written
        self.k0: Final[i64] = kinds[0] if count > 0 else S_NONE
        self.x0: Final[i64] = widths[0] if count > 0 else NO_WIDTH
        self.w0: Final = data[0] if count > 0 else none
        self.o0: Final = offsets[0] if count > 0 else none
        self.u0: Final = BytesWriter() if count > 0 else none
        self.b0: Final = nodes[0] if count > 0 else nodes[0]
        self.k1: Final[i64] = kinds[1] if count > 1 else S_NONE
        self.x1: Final[i64] = widths[1] if count > 1 else NO_WIDTH
        self.w1: Final = data[1] if count > 1 else none
        self.o1: Final = offsets[1] if count > 1 else none
        self.u1: Final = BytesWriter() if count > 1 else none
        self.b1: Final = nodes[1] if count > 1 else nodes[0]
        self.k2: Final[i64] = kinds[2] if count > 2 else S_NONE
        self.x2: Final[i64] = widths[2] if count > 2 else NO_WIDTH
        self.w2: Final = data[2] if count > 2 else none
        self.o2: Final = offsets[2] if count > 2 else none
        self.u2: Final = BytesWriter() if count > 2 else none
        self.b2: Final = nodes[2] if count > 2 else nodes[0]
        self.k3: Final[i64] = kinds[3] if count > 3 else S_NONE
        self.x3: Final[i64] = widths[3] if count > 3 else NO_WIDTH
        self.w3: Final = data[3] if count > 3 else none
        self.o3: Final = offsets[3] if count > 3 else none
        self.u3: Final = BytesWriter() if count > 3 else none
        self.b3: Final = nodes[3] if count > 3 else nodes[0]
        self.k4: Final[i64] = kinds[4] if count > 4 else S_NONE
        self.x4: Final[i64] = widths[4] if count > 4 else NO_WIDTH
        self.w4: Final = data[4] if count > 4 else none
        self.o4: Final = offsets[4] if count > 4 else none
        self.u4: Final = BytesWriter() if count > 4 else none
        self.b4: Final = nodes[4] if count > 4 else nodes[0]
        self.k5: Final[i64] = kinds[5] if count > 5 else S_NONE
        self.x5: Final[i64] = widths[5] if count > 5 else NO_WIDTH
        self.w5: Final = data[5] if count > 5 else none
        self.o5: Final = offsets[5] if count > 5 else none
        self.u5: Final = BytesWriter() if count > 5 else none
        self.b5: Final = nodes[5] if count > 5 else nodes[0]
        self.k6: Final[i64] = kinds[6] if count > 6 else S_NONE
        self.x6: Final[i64] = widths[6] if count > 6 else NO_WIDTH
        self.w6: Final = data[6] if count > 6 else none
        self.o6: Final = offsets[6] if count > 6 else none
        self.u6: Final = BytesWriter() if count > 6 else none
        self.b6: Final = nodes[6] if count > 6 else nodes[0]
        self.k7: Final[i64] = kinds[7] if count > 7 else S_NONE
        self.x7: Final[i64] = widths[7] if count > 7 else NO_WIDTH
        self.w7: Final = data[7] if count > 7 else none
        self.o7: Final = offsets[7] if count > 7 else none
        self.u7: Final = BytesWriter() if count > 7 else none
        self.b7: Final = nodes[7] if count > 7 else nodes[0]

    def close(self, nrows: i64) -> None:
        """Hand the row and null counts to the builders the walk wrote directly."""
        if self.k0 > S_NODE:
            mark_nulls(self.b0, self.u0, nrows)
        if self.k1 > S_NODE:
            mark_nulls(self.b1, self.u1, nrows)
        if self.k2 > S_NODE:
            mark_nulls(self.b2, self.u2, nrows)
        if self.k3 > S_NODE:
            mark_nulls(self.b3, self.u3, nrows)
        if self.k4 > S_NODE:
            mark_nulls(self.b4, self.u4, nrows)
        if self.k5 > S_NODE:
            mark_nulls(self.b5, self.u5, nrows)
        if self.k6 > S_NODE:
            mark_nulls(self.b6, self.u6, nrows)
        if self.k7 > S_NODE:
            mark_nulls(self.b7, self.u7, nrows)

    def walk(self, buf: bytes, pos: i64, end: i64, nrows: i64) -> i64:
        """Every row of a page whose columns are all in this group; the end position."""
        k0 = self.k0
        x0 = self.x0
        w0 = self.w0
        o0 = self.o0
        u0 = self.u0
        b0 = self.b0
        k1 = self.k1
        x1 = self.x1
        w1 = self.w1
        o1 = self.o1
        u1 = self.u1
        b1 = self.b1
        k2 = self.k2
        x2 = self.x2
        w2 = self.w2
        o2 = self.o2
        u2 = self.u2
        b2 = self.b2
        k3 = self.k3
        x3 = self.x3
        w3 = self.w3
        o3 = self.o3
        u3 = self.u3
        b3 = self.b3
        k4 = self.k4
        x4 = self.x4
        w4 = self.w4
        o4 = self.o4
        u4 = self.u4
        b4 = self.b4
        k5 = self.k5
        x5 = self.x5
        w5 = self.w5
        o5 = self.o5
        u5 = self.u5
        b5 = self.b5
        k6 = self.k6
        x6 = self.x6
        w6 = self.w6
        o6 = self.o6
        u6 = self.u6
        b6 = self.b6
        k7 = self.k7
        x7 = self.x7
        w7 = self.w7
        o7 = self.o7
        u7 = self.u7
        b7 = self.b7
        n0: int = 0
        n: i64 = 0
        r: i64 = 0
        while r < nrows:
            if k0 != S_NONE:
                if pos + 4 > end:
                    raise SlotStop()
                n0 = read_i32_be(buf, pos)
                n = n0
                pos += 4
                if n == x0:
                    if k0 == S_I64:
                        write_i64_le(w0, read_i64_be(buf, pos))
                    elif k0 == S_I32:
                        write_i32_le(w0, read_i32_be(buf, pos))
                    elif k0 == S_BOOL:
                        w0.append(1 if buf[pos] != 0 else 0)
                    elif k0 == S_UUID:
                        write_i64_le(w0, read_i64_le(buf, pos))
                        write_i64_le(w0, read_i64_le(buf, pos + 8))
                    elif k0 == S_DATE:
                        d0: int = read_i32_be(buf, pos)
                        write_i32_le(w0, d0 + _DATE_OFFSET if d0 < 0 else d0 - _DATE_OFFSET)
                    elif k0 == S_TIME:
                        t0: i64 = read_i64_be(buf, pos)
                        if t0 < 0 or t0 >= NANOS_PER_DAY:
                            raise SlotStop()
                        write_i64_le(w0, t0)
                    elif k0 == S_I16:
                        write_i16_le(w0, read_i16_be(buf, pos))
                    else:
                        w0.append(buf[pos])
                    pos += n
                elif n == -1:
                    if k0 == S_NODE:
                        b0.append_null()
                    else:
                        write_i32_le(u0, i32(r))
                        if k0 == S_BYTES:
                            write_i32_le(o0, i32(len(w0)))
                        elif x0 == 8:
                            write_i64_le(w0, 0)
                        elif x0 == 4:
                            write_i32_le(w0, 0)
                        elif x0 == 1:
                            w0.append(0)
                        else:
                            put_zeros(w0, x0)
                elif n >= 0:
                    if n > end - pos:
                        raise SlotStop()
                    if k0 == S_BYTES:
                        if n <= 32 and pos + 32 <= end:  # four words and a truncate: no branch on n
                            write_i64_le(w0, read_i64_le(buf, pos))
                            write_i64_le(w0, read_i64_le(buf, pos + 8))
                            write_i64_le(w0, read_i64_le(buf, pos + 16))
                            write_i64_le(w0, read_i64_le(buf, pos + 24))
                            w0.truncate(len(w0) - (32 - n))
                        else:
                            copy_value(w0, buf, pos, n)
                        write_i32_le(o0, i32(len(w0)))
                    elif k0 == S_NODE:
                        b0.append(buf, pos, n)
                    elif n == 0:  # an empty fixed-width value reads as null
                        write_i32_le(u0, i32(r))
                        put_zeros(w0, x0)
                    else:
                        raise SlotStop()
                    pos += n
                else:
                    raise SlotStop()
            if k1 != S_NONE:
                if pos + 4 > end:
                    raise SlotStop()
                n0 = read_i32_be(buf, pos)
                n = n0
                pos += 4
                if n == x1:
                    if k1 == S_I64:
                        write_i64_le(w1, read_i64_be(buf, pos))
                    elif k1 == S_I32:
                        write_i32_le(w1, read_i32_be(buf, pos))
                    elif k1 == S_BOOL:
                        w1.append(1 if buf[pos] != 0 else 0)
                    elif k1 == S_UUID:
                        write_i64_le(w1, read_i64_le(buf, pos))
                        write_i64_le(w1, read_i64_le(buf, pos + 8))
                    elif k1 == S_DATE:
                        d1: int = read_i32_be(buf, pos)
                        write_i32_le(w1, d1 + _DATE_OFFSET if d1 < 0 else d1 - _DATE_OFFSET)
                    elif k1 == S_TIME:
                        t1: i64 = read_i64_be(buf, pos)
                        if t1 < 0 or t1 >= NANOS_PER_DAY:
                            raise SlotStop()
                        write_i64_le(w1, t1)
                    elif k1 == S_I16:
                        write_i16_le(w1, read_i16_be(buf, pos))
                    else:
                        w1.append(buf[pos])
                    pos += n
                elif n == -1:
                    if k1 == S_NODE:
                        b1.append_null()
                    else:
                        write_i32_le(u1, i32(r))
                        if k1 == S_BYTES:
                            write_i32_le(o1, i32(len(w1)))
                        elif x1 == 8:
                            write_i64_le(w1, 0)
                        elif x1 == 4:
                            write_i32_le(w1, 0)
                        elif x1 == 1:
                            w1.append(0)
                        else:
                            put_zeros(w1, x1)
                elif n >= 0:
                    if n > end - pos:
                        raise SlotStop()
                    if k1 == S_BYTES:
                        if n <= 32 and pos + 32 <= end:  # four words and a truncate: no branch on n
                            write_i64_le(w1, read_i64_le(buf, pos))
                            write_i64_le(w1, read_i64_le(buf, pos + 8))
                            write_i64_le(w1, read_i64_le(buf, pos + 16))
                            write_i64_le(w1, read_i64_le(buf, pos + 24))
                            w1.truncate(len(w1) - (32 - n))
                        else:
                            copy_value(w1, buf, pos, n)
                        write_i32_le(o1, i32(len(w1)))
                    elif k1 == S_NODE:
                        b1.append(buf, pos, n)
                    elif n == 0:  # an empty fixed-width value reads as null
                        write_i32_le(u1, i32(r))
                        put_zeros(w1, x1)
                    else:
                        raise SlotStop()
                    pos += n
                else:
                    raise SlotStop()
            if k2 != S_NONE:
                if pos + 4 > end:
                    raise SlotStop()
                n0 = read_i32_be(buf, pos)
                n = n0
                pos += 4
                if n == x2:
                    if k2 == S_I64:
                        write_i64_le(w2, read_i64_be(buf, pos))
                    elif k2 == S_I32:
                        write_i32_le(w2, read_i32_be(buf, pos))
                    elif k2 == S_BOOL:
                        w2.append(1 if buf[pos] != 0 else 0)
                    elif k2 == S_UUID:
                        write_i64_le(w2, read_i64_le(buf, pos))
                        write_i64_le(w2, read_i64_le(buf, pos + 8))
                    elif k2 == S_DATE:
                        d2: int = read_i32_be(buf, pos)
                        write_i32_le(w2, d2 + _DATE_OFFSET if d2 < 0 else d2 - _DATE_OFFSET)
                    elif k2 == S_TIME:
                        t2: i64 = read_i64_be(buf, pos)
                        if t2 < 0 or t2 >= NANOS_PER_DAY:
                            raise SlotStop()
                        write_i64_le(w2, t2)
                    elif k2 == S_I16:
                        write_i16_le(w2, read_i16_be(buf, pos))
                    else:
                        w2.append(buf[pos])
                    pos += n
                elif n == -1:
                    if k2 == S_NODE:
                        b2.append_null()
                    else:
                        write_i32_le(u2, i32(r))
                        if k2 == S_BYTES:
                            write_i32_le(o2, i32(len(w2)))
                        elif x2 == 8:
                            write_i64_le(w2, 0)
                        elif x2 == 4:
                            write_i32_le(w2, 0)
                        elif x2 == 1:
                            w2.append(0)
                        else:
                            put_zeros(w2, x2)
                elif n >= 0:
                    if n > end - pos:
                        raise SlotStop()
                    if k2 == S_BYTES:
                        if n <= 32 and pos + 32 <= end:  # four words and a truncate: no branch on n
                            write_i64_le(w2, read_i64_le(buf, pos))
                            write_i64_le(w2, read_i64_le(buf, pos + 8))
                            write_i64_le(w2, read_i64_le(buf, pos + 16))
                            write_i64_le(w2, read_i64_le(buf, pos + 24))
                            w2.truncate(len(w2) - (32 - n))
                        else:
                            copy_value(w2, buf, pos, n)
                        write_i32_le(o2, i32(len(w2)))
                    elif k2 == S_NODE:
                        b2.append(buf, pos, n)
                    elif n == 0:  # an empty fixed-width value reads as null
                        write_i32_le(u2, i32(r))
                        put_zeros(w2, x2)
                    else:
                        raise SlotStop()
                    pos += n
                else:
                    raise SlotStop()
            if k3 != S_NONE:
                if pos + 4 > end:
                    raise SlotStop()
                n0 = read_i32_be(buf, pos)
                n = n0
                pos += 4
                if n == x3:
                    if k3 == S_I64:
                        write_i64_le(w3, read_i64_be(buf, pos))
                    elif k3 == S_I32:
                        write_i32_le(w3, read_i32_be(buf, pos))
                    elif k3 == S_BOOL:
                        w3.append(1 if buf[pos] != 0 else 0)
                    elif k3 == S_UUID:
                        write_i64_le(w3, read_i64_le(buf, pos))
                        write_i64_le(w3, read_i64_le(buf, pos + 8))
                    elif k3 == S_DATE:
                        d3: int = read_i32_be(buf, pos)
                        write_i32_le(w3, d3 + _DATE_OFFSET if d3 < 0 else d3 - _DATE_OFFSET)
                    elif k3 == S_TIME:
                        t3: i64 = read_i64_be(buf, pos)
                        if t3 < 0 or t3 >= NANOS_PER_DAY:
                            raise SlotStop()
                        write_i64_le(w3, t3)
                    elif k3 == S_I16:
                        write_i16_le(w3, read_i16_be(buf, pos))
                    else:
                        w3.append(buf[pos])
                    pos += n
                elif n == -1:
                    if k3 == S_NODE:
                        b3.append_null()
                    else:
                        write_i32_le(u3, i32(r))
                        if k3 == S_BYTES:
                            write_i32_le(o3, i32(len(w3)))
                        elif x3 == 8:
                            write_i64_le(w3, 0)
                        elif x3 == 4:
                            write_i32_le(w3, 0)
                        elif x3 == 1:
                            w3.append(0)
                        else:
                            put_zeros(w3, x3)
                elif n >= 0:
                    if n > end - pos:
                        raise SlotStop()
                    if k3 == S_BYTES:
                        if n <= 32 and pos + 32 <= end:  # four words and a truncate: no branch on n
                            write_i64_le(w3, read_i64_le(buf, pos))
                            write_i64_le(w3, read_i64_le(buf, pos + 8))
                            write_i64_le(w3, read_i64_le(buf, pos + 16))
                            write_i64_le(w3, read_i64_le(buf, pos + 24))
                            w3.truncate(len(w3) - (32 - n))
                        else:
                            copy_value(w3, buf, pos, n)
                        write_i32_le(o3, i32(len(w3)))
                    elif k3 == S_NODE:
                        b3.append(buf, pos, n)
                    elif n == 0:  # an empty fixed-width value reads as null
                        write_i32_le(u3, i32(r))
                        put_zeros(w3, x3)
                    else:
                        raise SlotStop()
                    pos += n
                else:
                    raise SlotStop()
            if k4 != S_NONE:
                if pos + 4 > end:
                    raise SlotStop()
                n0 = read_i32_be(buf, pos)
                n = n0
                pos += 4
                if n == x4:
                    if k4 == S_I64:
                        write_i64_le(w4, read_i64_be(buf, pos))
                    elif k4 == S_I32:
                        write_i32_le(w4, read_i32_be(buf, pos))
                    elif k4 == S_BOOL:
                        w4.append(1 if buf[pos] != 0 else 0)
                    elif k4 == S_UUID:
                        write_i64_le(w4, read_i64_le(buf, pos))
                        write_i64_le(w4, read_i64_le(buf, pos + 8))
                    elif k4 == S_DATE:
                        d4: int = read_i32_be(buf, pos)
                        write_i32_le(w4, d4 + _DATE_OFFSET if d4 < 0 else d4 - _DATE_OFFSET)
                    elif k4 == S_TIME:
                        t4: i64 = read_i64_be(buf, pos)
                        if t4 < 0 or t4 >= NANOS_PER_DAY:
                            raise SlotStop()
                        write_i64_le(w4, t4)
                    elif k4 == S_I16:
                        write_i16_le(w4, read_i16_be(buf, pos))
                    else:
                        w4.append(buf[pos])
                    pos += n
                elif n == -1:
                    if k4 == S_NODE:
                        b4.append_null()
                    else:
                        write_i32_le(u4, i32(r))
                        if k4 == S_BYTES:
                            write_i32_le(o4, i32(len(w4)))
                        elif x4 == 8:
                            write_i64_le(w4, 0)
                        elif x4 == 4:
                            write_i32_le(w4, 0)
                        elif x4 == 1:
                            w4.append(0)
                        else:
                            put_zeros(w4, x4)
                elif n >= 0:
                    if n > end - pos:
                        raise SlotStop()
                    if k4 == S_BYTES:
                        if n <= 32 and pos + 32 <= end:  # four words and a truncate: no branch on n
                            write_i64_le(w4, read_i64_le(buf, pos))
                            write_i64_le(w4, read_i64_le(buf, pos + 8))
                            write_i64_le(w4, read_i64_le(buf, pos + 16))
                            write_i64_le(w4, read_i64_le(buf, pos + 24))
                            w4.truncate(len(w4) - (32 - n))
                        else:
                            copy_value(w4, buf, pos, n)
                        write_i32_le(o4, i32(len(w4)))
                    elif k4 == S_NODE:
                        b4.append(buf, pos, n)
                    elif n == 0:  # an empty fixed-width value reads as null
                        write_i32_le(u4, i32(r))
                        put_zeros(w4, x4)
                    else:
                        raise SlotStop()
                    pos += n
                else:
                    raise SlotStop()
            if k5 != S_NONE:
                if pos + 4 > end:
                    raise SlotStop()
                n0 = read_i32_be(buf, pos)
                n = n0
                pos += 4
                if n == x5:
                    if k5 == S_I64:
                        write_i64_le(w5, read_i64_be(buf, pos))
                    elif k5 == S_I32:
                        write_i32_le(w5, read_i32_be(buf, pos))
                    elif k5 == S_BOOL:
                        w5.append(1 if buf[pos] != 0 else 0)
                    elif k5 == S_UUID:
                        write_i64_le(w5, read_i64_le(buf, pos))
                        write_i64_le(w5, read_i64_le(buf, pos + 8))
                    elif k5 == S_DATE:
                        d5: int = read_i32_be(buf, pos)
                        write_i32_le(w5, d5 + _DATE_OFFSET if d5 < 0 else d5 - _DATE_OFFSET)
                    elif k5 == S_TIME:
                        t5: i64 = read_i64_be(buf, pos)
                        if t5 < 0 or t5 >= NANOS_PER_DAY:
                            raise SlotStop()
                        write_i64_le(w5, t5)
                    elif k5 == S_I16:
                        write_i16_le(w5, read_i16_be(buf, pos))
                    else:
                        w5.append(buf[pos])
                    pos += n
                elif n == -1:
                    if k5 == S_NODE:
                        b5.append_null()
                    else:
                        write_i32_le(u5, i32(r))
                        if k5 == S_BYTES:
                            write_i32_le(o5, i32(len(w5)))
                        elif x5 == 8:
                            write_i64_le(w5, 0)
                        elif x5 == 4:
                            write_i32_le(w5, 0)
                        elif x5 == 1:
                            w5.append(0)
                        else:
                            put_zeros(w5, x5)
                elif n >= 0:
                    if n > end - pos:
                        raise SlotStop()
                    if k5 == S_BYTES:
                        if n <= 32 and pos + 32 <= end:  # four words and a truncate: no branch on n
                            write_i64_le(w5, read_i64_le(buf, pos))
                            write_i64_le(w5, read_i64_le(buf, pos + 8))
                            write_i64_le(w5, read_i64_le(buf, pos + 16))
                            write_i64_le(w5, read_i64_le(buf, pos + 24))
                            w5.truncate(len(w5) - (32 - n))
                        else:
                            copy_value(w5, buf, pos, n)
                        write_i32_le(o5, i32(len(w5)))
                    elif k5 == S_NODE:
                        b5.append(buf, pos, n)
                    elif n == 0:  # an empty fixed-width value reads as null
                        write_i32_le(u5, i32(r))
                        put_zeros(w5, x5)
                    else:
                        raise SlotStop()
                    pos += n
                else:
                    raise SlotStop()
            if k6 != S_NONE:
                if pos + 4 > end:
                    raise SlotStop()
                n0 = read_i32_be(buf, pos)
                n = n0
                pos += 4
                if n == x6:
                    if k6 == S_I64:
                        write_i64_le(w6, read_i64_be(buf, pos))
                    elif k6 == S_I32:
                        write_i32_le(w6, read_i32_be(buf, pos))
                    elif k6 == S_BOOL:
                        w6.append(1 if buf[pos] != 0 else 0)
                    elif k6 == S_UUID:
                        write_i64_le(w6, read_i64_le(buf, pos))
                        write_i64_le(w6, read_i64_le(buf, pos + 8))
                    elif k6 == S_DATE:
                        d6: int = read_i32_be(buf, pos)
                        write_i32_le(w6, d6 + _DATE_OFFSET if d6 < 0 else d6 - _DATE_OFFSET)
                    elif k6 == S_TIME:
                        t6: i64 = read_i64_be(buf, pos)
                        if t6 < 0 or t6 >= NANOS_PER_DAY:
                            raise SlotStop()
                        write_i64_le(w6, t6)
                    elif k6 == S_I16:
                        write_i16_le(w6, read_i16_be(buf, pos))
                    else:
                        w6.append(buf[pos])
                    pos += n
                elif n == -1:
                    if k6 == S_NODE:
                        b6.append_null()
                    else:
                        write_i32_le(u6, i32(r))
                        if k6 == S_BYTES:
                            write_i32_le(o6, i32(len(w6)))
                        elif x6 == 8:
                            write_i64_le(w6, 0)
                        elif x6 == 4:
                            write_i32_le(w6, 0)
                        elif x6 == 1:
                            w6.append(0)
                        else:
                            put_zeros(w6, x6)
                elif n >= 0:
                    if n > end - pos:
                        raise SlotStop()
                    if k6 == S_BYTES:
                        if n <= 32 and pos + 32 <= end:  # four words and a truncate: no branch on n
                            write_i64_le(w6, read_i64_le(buf, pos))
                            write_i64_le(w6, read_i64_le(buf, pos + 8))
                            write_i64_le(w6, read_i64_le(buf, pos + 16))
                            write_i64_le(w6, read_i64_le(buf, pos + 24))
                            w6.truncate(len(w6) - (32 - n))
                        else:
                            copy_value(w6, buf, pos, n)
                        write_i32_le(o6, i32(len(w6)))
                    elif k6 == S_NODE:
                        b6.append(buf, pos, n)
                    elif n == 0:  # an empty fixed-width value reads as null
                        write_i32_le(u6, i32(r))
                        put_zeros(w6, x6)
                    else:
                        raise SlotStop()
                    pos += n
                else:
                    raise SlotStop()
            if k7 != S_NONE:
                if pos + 4 > end:
                    raise SlotStop()
                n0 = read_i32_be(buf, pos)
                n = n0
                pos += 4
                if n == x7:
                    if k7 == S_I64:
                        write_i64_le(w7, read_i64_be(buf, pos))
                    elif k7 == S_I32:
                        write_i32_le(w7, read_i32_be(buf, pos))
                    elif k7 == S_BOOL:
                        w7.append(1 if buf[pos] != 0 else 0)
                    elif k7 == S_UUID:
                        write_i64_le(w7, read_i64_le(buf, pos))
                        write_i64_le(w7, read_i64_le(buf, pos + 8))
                    elif k7 == S_DATE:
                        d7: int = read_i32_be(buf, pos)
                        write_i32_le(w7, d7 + _DATE_OFFSET if d7 < 0 else d7 - _DATE_OFFSET)
                    elif k7 == S_TIME:
                        t7: i64 = read_i64_be(buf, pos)
                        if t7 < 0 or t7 >= NANOS_PER_DAY:
                            raise SlotStop()
                        write_i64_le(w7, t7)
                    elif k7 == S_I16:
                        write_i16_le(w7, read_i16_be(buf, pos))
                    else:
                        w7.append(buf[pos])
                    pos += n
                elif n == -1:
                    if k7 == S_NODE:
                        b7.append_null()
                    else:
                        write_i32_le(u7, i32(r))
                        if k7 == S_BYTES:
                            write_i32_le(o7, i32(len(w7)))
                        elif x7 == 8:
                            write_i64_le(w7, 0)
                        elif x7 == 4:
                            write_i32_le(w7, 0)
                        elif x7 == 1:
                            w7.append(0)
                        else:
                            put_zeros(w7, x7)
                elif n >= 0:
                    if n > end - pos:
                        raise SlotStop()
                    if k7 == S_BYTES:
                        if n <= 32 and pos + 32 <= end:  # four words and a truncate: no branch on n
                            write_i64_le(w7, read_i64_le(buf, pos))
                            write_i64_le(w7, read_i64_le(buf, pos + 8))
                            write_i64_le(w7, read_i64_le(buf, pos + 16))
                            write_i64_le(w7, read_i64_le(buf, pos + 24))
                            w7.truncate(len(w7) - (32 - n))
                        else:
                            copy_value(w7, buf, pos, n)
                        write_i32_le(o7, i32(len(w7)))
                    elif k7 == S_NODE:
                        b7.append(buf, pos, n)
                    elif n == 0:  # an empty fixed-width value reads as null
                        write_i32_le(u7, i32(r))
                        put_zeros(w7, x7)
                    else:
                        raise SlotStop()
                    pos += n
                else:
                    raise SlotStop()
            r += 1
        return pos

    def row(self, buf: bytes, pos: i64, end: i64, r: i64) -> i64:
        """Row ``r``'s cells of this group's columns; the position after them."""
        n0: int = 0
        n: i64 = 0
        if self.k0 != S_NONE:
            if pos + 4 > end:
                raise SlotStop()
            n0 = read_i32_be(buf, pos)
            n = n0
            pos += 4
            if n == self.x0:
                if self.k0 == S_I64:
                    write_i64_le(self.w0, read_i64_be(buf, pos))
                elif self.k0 == S_I32:
                    write_i32_le(self.w0, read_i32_be(buf, pos))
                elif self.k0 == S_BOOL:
                    self.w0.append(1 if buf[pos] != 0 else 0)
                elif self.k0 == S_UUID:
                    write_i64_le(self.w0, read_i64_le(buf, pos))
                    write_i64_le(self.w0, read_i64_le(buf, pos + 8))
                elif self.k0 == S_DATE:
                    d0: int = read_i32_be(buf, pos)
                    write_i32_le(self.w0, d0 + _DATE_OFFSET if d0 < 0 else d0 - _DATE_OFFSET)
                elif self.k0 == S_TIME:
                    t0: i64 = read_i64_be(buf, pos)
                    if t0 < 0 or t0 >= NANOS_PER_DAY:
                        raise SlotStop()
                    write_i64_le(self.w0, t0)
                elif self.k0 == S_I16:
                    write_i16_le(self.w0, read_i16_be(buf, pos))
                else:
                    self.w0.append(buf[pos])
                pos += n
            elif n == -1:
                if self.k0 == S_NODE:
                    self.b0.append_null()
                else:
                    write_i32_le(self.u0, i32(r))
                    if self.k0 == S_BYTES:
                        write_i32_le(self.o0, i32(len(self.w0)))
                    elif self.x0 == 8:
                        write_i64_le(self.w0, 0)
                    elif self.x0 == 4:
                        write_i32_le(self.w0, 0)
                    elif self.x0 == 1:
                        self.w0.append(0)
                    else:
                        put_zeros(self.w0, self.x0)
            elif n >= 0:
                if n > end - pos:
                    raise SlotStop()
                if self.k0 == S_BYTES:
                    if n <= 32 and pos + 32 <= end:  # four words and a truncate: no branch on n
                        write_i64_le(self.w0, read_i64_le(buf, pos))
                        write_i64_le(self.w0, read_i64_le(buf, pos + 8))
                        write_i64_le(self.w0, read_i64_le(buf, pos + 16))
                        write_i64_le(self.w0, read_i64_le(buf, pos + 24))
                        self.w0.truncate(len(self.w0) - (32 - n))
                    else:
                        copy_value(self.w0, buf, pos, n)
                    write_i32_le(self.o0, i32(len(self.w0)))
                elif self.k0 == S_NODE:
                    self.b0.append(buf, pos, n)
                elif n == 0:  # an empty fixed-width value reads as null
                    write_i32_le(self.u0, i32(r))
                    put_zeros(self.w0, self.x0)
                else:
                    raise SlotStop()
                pos += n
            else:
                raise SlotStop()
        if self.k1 != S_NONE:
            if pos + 4 > end:
                raise SlotStop()
            n0 = read_i32_be(buf, pos)
            n = n0
            pos += 4
            if n == self.x1:
                if self.k1 == S_I64:
                    write_i64_le(self.w1, read_i64_be(buf, pos))
                elif self.k1 == S_I32:
                    write_i32_le(self.w1, read_i32_be(buf, pos))
                elif self.k1 == S_BOOL:
                    self.w1.append(1 if buf[pos] != 0 else 0)
                elif self.k1 == S_UUID:
                    write_i64_le(self.w1, read_i64_le(buf, pos))
                    write_i64_le(self.w1, read_i64_le(buf, pos + 8))
                elif self.k1 == S_DATE:
                    d1: int = read_i32_be(buf, pos)
                    write_i32_le(self.w1, d1 + _DATE_OFFSET if d1 < 0 else d1 - _DATE_OFFSET)
                elif self.k1 == S_TIME:
                    t1: i64 = read_i64_be(buf, pos)
                    if t1 < 0 or t1 >= NANOS_PER_DAY:
                        raise SlotStop()
                    write_i64_le(self.w1, t1)
                elif self.k1 == S_I16:
                    write_i16_le(self.w1, read_i16_be(buf, pos))
                else:
                    self.w1.append(buf[pos])
                pos += n
            elif n == -1:
                if self.k1 == S_NODE:
                    self.b1.append_null()
                else:
                    write_i32_le(self.u1, i32(r))
                    if self.k1 == S_BYTES:
                        write_i32_le(self.o1, i32(len(self.w1)))
                    elif self.x1 == 8:
                        write_i64_le(self.w1, 0)
                    elif self.x1 == 4:
                        write_i32_le(self.w1, 0)
                    elif self.x1 == 1:
                        self.w1.append(0)
                    else:
                        put_zeros(self.w1, self.x1)
            elif n >= 0:
                if n > end - pos:
                    raise SlotStop()
                if self.k1 == S_BYTES:
                    if n <= 32 and pos + 32 <= end:  # four words and a truncate: no branch on n
                        write_i64_le(self.w1, read_i64_le(buf, pos))
                        write_i64_le(self.w1, read_i64_le(buf, pos + 8))
                        write_i64_le(self.w1, read_i64_le(buf, pos + 16))
                        write_i64_le(self.w1, read_i64_le(buf, pos + 24))
                        self.w1.truncate(len(self.w1) - (32 - n))
                    else:
                        copy_value(self.w1, buf, pos, n)
                    write_i32_le(self.o1, i32(len(self.w1)))
                elif self.k1 == S_NODE:
                    self.b1.append(buf, pos, n)
                elif n == 0:  # an empty fixed-width value reads as null
                    write_i32_le(self.u1, i32(r))
                    put_zeros(self.w1, self.x1)
                else:
                    raise SlotStop()
                pos += n
            else:
                raise SlotStop()
        if self.k2 != S_NONE:
            if pos + 4 > end:
                raise SlotStop()
            n0 = read_i32_be(buf, pos)
            n = n0
            pos += 4
            if n == self.x2:
                if self.k2 == S_I64:
                    write_i64_le(self.w2, read_i64_be(buf, pos))
                elif self.k2 == S_I32:
                    write_i32_le(self.w2, read_i32_be(buf, pos))
                elif self.k2 == S_BOOL:
                    self.w2.append(1 if buf[pos] != 0 else 0)
                elif self.k2 == S_UUID:
                    write_i64_le(self.w2, read_i64_le(buf, pos))
                    write_i64_le(self.w2, read_i64_le(buf, pos + 8))
                elif self.k2 == S_DATE:
                    d2: int = read_i32_be(buf, pos)
                    write_i32_le(self.w2, d2 + _DATE_OFFSET if d2 < 0 else d2 - _DATE_OFFSET)
                elif self.k2 == S_TIME:
                    t2: i64 = read_i64_be(buf, pos)
                    if t2 < 0 or t2 >= NANOS_PER_DAY:
                        raise SlotStop()
                    write_i64_le(self.w2, t2)
                elif self.k2 == S_I16:
                    write_i16_le(self.w2, read_i16_be(buf, pos))
                else:
                    self.w2.append(buf[pos])
                pos += n
            elif n == -1:
                if self.k2 == S_NODE:
                    self.b2.append_null()
                else:
                    write_i32_le(self.u2, i32(r))
                    if self.k2 == S_BYTES:
                        write_i32_le(self.o2, i32(len(self.w2)))
                    elif self.x2 == 8:
                        write_i64_le(self.w2, 0)
                    elif self.x2 == 4:
                        write_i32_le(self.w2, 0)
                    elif self.x2 == 1:
                        self.w2.append(0)
                    else:
                        put_zeros(self.w2, self.x2)
            elif n >= 0:
                if n > end - pos:
                    raise SlotStop()
                if self.k2 == S_BYTES:
                    if n <= 32 and pos + 32 <= end:  # four words and a truncate: no branch on n
                        write_i64_le(self.w2, read_i64_le(buf, pos))
                        write_i64_le(self.w2, read_i64_le(buf, pos + 8))
                        write_i64_le(self.w2, read_i64_le(buf, pos + 16))
                        write_i64_le(self.w2, read_i64_le(buf, pos + 24))
                        self.w2.truncate(len(self.w2) - (32 - n))
                    else:
                        copy_value(self.w2, buf, pos, n)
                    write_i32_le(self.o2, i32(len(self.w2)))
                elif self.k2 == S_NODE:
                    self.b2.append(buf, pos, n)
                elif n == 0:  # an empty fixed-width value reads as null
                    write_i32_le(self.u2, i32(r))
                    put_zeros(self.w2, self.x2)
                else:
                    raise SlotStop()
                pos += n
            else:
                raise SlotStop()
        if self.k3 != S_NONE:
            if pos + 4 > end:
                raise SlotStop()
            n0 = read_i32_be(buf, pos)
            n = n0
            pos += 4
            if n == self.x3:
                if self.k3 == S_I64:
                    write_i64_le(self.w3, read_i64_be(buf, pos))
                elif self.k3 == S_I32:
                    write_i32_le(self.w3, read_i32_be(buf, pos))
                elif self.k3 == S_BOOL:
                    self.w3.append(1 if buf[pos] != 0 else 0)
                elif self.k3 == S_UUID:
                    write_i64_le(self.w3, read_i64_le(buf, pos))
                    write_i64_le(self.w3, read_i64_le(buf, pos + 8))
                elif self.k3 == S_DATE:
                    d3: int = read_i32_be(buf, pos)
                    write_i32_le(self.w3, d3 + _DATE_OFFSET if d3 < 0 else d3 - _DATE_OFFSET)
                elif self.k3 == S_TIME:
                    t3: i64 = read_i64_be(buf, pos)
                    if t3 < 0 or t3 >= NANOS_PER_DAY:
                        raise SlotStop()
                    write_i64_le(self.w3, t3)
                elif self.k3 == S_I16:
                    write_i16_le(self.w3, read_i16_be(buf, pos))
                else:
                    self.w3.append(buf[pos])
                pos += n
            elif n == -1:
                if self.k3 == S_NODE:
                    self.b3.append_null()
                else:
                    write_i32_le(self.u3, i32(r))
                    if self.k3 == S_BYTES:
                        write_i32_le(self.o3, i32(len(self.w3)))
                    elif self.x3 == 8:
                        write_i64_le(self.w3, 0)
                    elif self.x3 == 4:
                        write_i32_le(self.w3, 0)
                    elif self.x3 == 1:
                        self.w3.append(0)
                    else:
                        put_zeros(self.w3, self.x3)
            elif n >= 0:
                if n > end - pos:
                    raise SlotStop()
                if self.k3 == S_BYTES:
                    if n <= 32 and pos + 32 <= end:  # four words and a truncate: no branch on n
                        write_i64_le(self.w3, read_i64_le(buf, pos))
                        write_i64_le(self.w3, read_i64_le(buf, pos + 8))
                        write_i64_le(self.w3, read_i64_le(buf, pos + 16))
                        write_i64_le(self.w3, read_i64_le(buf, pos + 24))
                        self.w3.truncate(len(self.w3) - (32 - n))
                    else:
                        copy_value(self.w3, buf, pos, n)
                    write_i32_le(self.o3, i32(len(self.w3)))
                elif self.k3 == S_NODE:
                    self.b3.append(buf, pos, n)
                elif n == 0:  # an empty fixed-width value reads as null
                    write_i32_le(self.u3, i32(r))
                    put_zeros(self.w3, self.x3)
                else:
                    raise SlotStop()
                pos += n
            else:
                raise SlotStop()
        if self.k4 != S_NONE:
            if pos + 4 > end:
                raise SlotStop()
            n0 = read_i32_be(buf, pos)
            n = n0
            pos += 4
            if n == self.x4:
                if self.k4 == S_I64:
                    write_i64_le(self.w4, read_i64_be(buf, pos))
                elif self.k4 == S_I32:
                    write_i32_le(self.w4, read_i32_be(buf, pos))
                elif self.k4 == S_BOOL:
                    self.w4.append(1 if buf[pos] != 0 else 0)
                elif self.k4 == S_UUID:
                    write_i64_le(self.w4, read_i64_le(buf, pos))
                    write_i64_le(self.w4, read_i64_le(buf, pos + 8))
                elif self.k4 == S_DATE:
                    d4: int = read_i32_be(buf, pos)
                    write_i32_le(self.w4, d4 + _DATE_OFFSET if d4 < 0 else d4 - _DATE_OFFSET)
                elif self.k4 == S_TIME:
                    t4: i64 = read_i64_be(buf, pos)
                    if t4 < 0 or t4 >= NANOS_PER_DAY:
                        raise SlotStop()
                    write_i64_le(self.w4, t4)
                elif self.k4 == S_I16:
                    write_i16_le(self.w4, read_i16_be(buf, pos))
                else:
                    self.w4.append(buf[pos])
                pos += n
            elif n == -1:
                if self.k4 == S_NODE:
                    self.b4.append_null()
                else:
                    write_i32_le(self.u4, i32(r))
                    if self.k4 == S_BYTES:
                        write_i32_le(self.o4, i32(len(self.w4)))
                    elif self.x4 == 8:
                        write_i64_le(self.w4, 0)
                    elif self.x4 == 4:
                        write_i32_le(self.w4, 0)
                    elif self.x4 == 1:
                        self.w4.append(0)
                    else:
                        put_zeros(self.w4, self.x4)
            elif n >= 0:
                if n > end - pos:
                    raise SlotStop()
                if self.k4 == S_BYTES:
                    if n <= 32 and pos + 32 <= end:  # four words and a truncate: no branch on n
                        write_i64_le(self.w4, read_i64_le(buf, pos))
                        write_i64_le(self.w4, read_i64_le(buf, pos + 8))
                        write_i64_le(self.w4, read_i64_le(buf, pos + 16))
                        write_i64_le(self.w4, read_i64_le(buf, pos + 24))
                        self.w4.truncate(len(self.w4) - (32 - n))
                    else:
                        copy_value(self.w4, buf, pos, n)
                    write_i32_le(self.o4, i32(len(self.w4)))
                elif self.k4 == S_NODE:
                    self.b4.append(buf, pos, n)
                elif n == 0:  # an empty fixed-width value reads as null
                    write_i32_le(self.u4, i32(r))
                    put_zeros(self.w4, self.x4)
                else:
                    raise SlotStop()
                pos += n
            else:
                raise SlotStop()
        if self.k5 != S_NONE:
            if pos + 4 > end:
                raise SlotStop()
            n0 = read_i32_be(buf, pos)
            n = n0
            pos += 4
            if n == self.x5:
                if self.k5 == S_I64:
                    write_i64_le(self.w5, read_i64_be(buf, pos))
                elif self.k5 == S_I32:
                    write_i32_le(self.w5, read_i32_be(buf, pos))
                elif self.k5 == S_BOOL:
                    self.w5.append(1 if buf[pos] != 0 else 0)
                elif self.k5 == S_UUID:
                    write_i64_le(self.w5, read_i64_le(buf, pos))
                    write_i64_le(self.w5, read_i64_le(buf, pos + 8))
                elif self.k5 == S_DATE:
                    d5: int = read_i32_be(buf, pos)
                    write_i32_le(self.w5, d5 + _DATE_OFFSET if d5 < 0 else d5 - _DATE_OFFSET)
                elif self.k5 == S_TIME:
                    t5: i64 = read_i64_be(buf, pos)
                    if t5 < 0 or t5 >= NANOS_PER_DAY:
                        raise SlotStop()
                    write_i64_le(self.w5, t5)
                elif self.k5 == S_I16:
                    write_i16_le(self.w5, read_i16_be(buf, pos))
                else:
                    self.w5.append(buf[pos])
                pos += n
            elif n == -1:
                if self.k5 == S_NODE:
                    self.b5.append_null()
                else:
                    write_i32_le(self.u5, i32(r))
                    if self.k5 == S_BYTES:
                        write_i32_le(self.o5, i32(len(self.w5)))
                    elif self.x5 == 8:
                        write_i64_le(self.w5, 0)
                    elif self.x5 == 4:
                        write_i32_le(self.w5, 0)
                    elif self.x5 == 1:
                        self.w5.append(0)
                    else:
                        put_zeros(self.w5, self.x5)
            elif n >= 0:
                if n > end - pos:
                    raise SlotStop()
                if self.k5 == S_BYTES:
                    if n <= 32 and pos + 32 <= end:  # four words and a truncate: no branch on n
                        write_i64_le(self.w5, read_i64_le(buf, pos))
                        write_i64_le(self.w5, read_i64_le(buf, pos + 8))
                        write_i64_le(self.w5, read_i64_le(buf, pos + 16))
                        write_i64_le(self.w5, read_i64_le(buf, pos + 24))
                        self.w5.truncate(len(self.w5) - (32 - n))
                    else:
                        copy_value(self.w5, buf, pos, n)
                    write_i32_le(self.o5, i32(len(self.w5)))
                elif self.k5 == S_NODE:
                    self.b5.append(buf, pos, n)
                elif n == 0:  # an empty fixed-width value reads as null
                    write_i32_le(self.u5, i32(r))
                    put_zeros(self.w5, self.x5)
                else:
                    raise SlotStop()
                pos += n
            else:
                raise SlotStop()
        if self.k6 != S_NONE:
            if pos + 4 > end:
                raise SlotStop()
            n0 = read_i32_be(buf, pos)
            n = n0
            pos += 4
            if n == self.x6:
                if self.k6 == S_I64:
                    write_i64_le(self.w6, read_i64_be(buf, pos))
                elif self.k6 == S_I32:
                    write_i32_le(self.w6, read_i32_be(buf, pos))
                elif self.k6 == S_BOOL:
                    self.w6.append(1 if buf[pos] != 0 else 0)
                elif self.k6 == S_UUID:
                    write_i64_le(self.w6, read_i64_le(buf, pos))
                    write_i64_le(self.w6, read_i64_le(buf, pos + 8))
                elif self.k6 == S_DATE:
                    d6: int = read_i32_be(buf, pos)
                    write_i32_le(self.w6, d6 + _DATE_OFFSET if d6 < 0 else d6 - _DATE_OFFSET)
                elif self.k6 == S_TIME:
                    t6: i64 = read_i64_be(buf, pos)
                    if t6 < 0 or t6 >= NANOS_PER_DAY:
                        raise SlotStop()
                    write_i64_le(self.w6, t6)
                elif self.k6 == S_I16:
                    write_i16_le(self.w6, read_i16_be(buf, pos))
                else:
                    self.w6.append(buf[pos])
                pos += n
            elif n == -1:
                if self.k6 == S_NODE:
                    self.b6.append_null()
                else:
                    write_i32_le(self.u6, i32(r))
                    if self.k6 == S_BYTES:
                        write_i32_le(self.o6, i32(len(self.w6)))
                    elif self.x6 == 8:
                        write_i64_le(self.w6, 0)
                    elif self.x6 == 4:
                        write_i32_le(self.w6, 0)
                    elif self.x6 == 1:
                        self.w6.append(0)
                    else:
                        put_zeros(self.w6, self.x6)
            elif n >= 0:
                if n > end - pos:
                    raise SlotStop()
                if self.k6 == S_BYTES:
                    if n <= 32 and pos + 32 <= end:  # four words and a truncate: no branch on n
                        write_i64_le(self.w6, read_i64_le(buf, pos))
                        write_i64_le(self.w6, read_i64_le(buf, pos + 8))
                        write_i64_le(self.w6, read_i64_le(buf, pos + 16))
                        write_i64_le(self.w6, read_i64_le(buf, pos + 24))
                        self.w6.truncate(len(self.w6) - (32 - n))
                    else:
                        copy_value(self.w6, buf, pos, n)
                    write_i32_le(self.o6, i32(len(self.w6)))
                elif self.k6 == S_NODE:
                    self.b6.append(buf, pos, n)
                elif n == 0:  # an empty fixed-width value reads as null
                    write_i32_le(self.u6, i32(r))
                    put_zeros(self.w6, self.x6)
                else:
                    raise SlotStop()
                pos += n
            else:
                raise SlotStop()
        if self.k7 != S_NONE:
            if pos + 4 > end:
                raise SlotStop()
            n0 = read_i32_be(buf, pos)
            n = n0
            pos += 4
            if n == self.x7:
                if self.k7 == S_I64:
                    write_i64_le(self.w7, read_i64_be(buf, pos))
                elif self.k7 == S_I32:
                    write_i32_le(self.w7, read_i32_be(buf, pos))
                elif self.k7 == S_BOOL:
                    self.w7.append(1 if buf[pos] != 0 else 0)
                elif self.k7 == S_UUID:
                    write_i64_le(self.w7, read_i64_le(buf, pos))
                    write_i64_le(self.w7, read_i64_le(buf, pos + 8))
                elif self.k7 == S_DATE:
                    d7: int = read_i32_be(buf, pos)
                    write_i32_le(self.w7, d7 + _DATE_OFFSET if d7 < 0 else d7 - _DATE_OFFSET)
                elif self.k7 == S_TIME:
                    t7: i64 = read_i64_be(buf, pos)
                    if t7 < 0 or t7 >= NANOS_PER_DAY:
                        raise SlotStop()
                    write_i64_le(self.w7, t7)
                elif self.k7 == S_I16:
                    write_i16_le(self.w7, read_i16_be(buf, pos))
                else:
                    self.w7.append(buf[pos])
                pos += n
            elif n == -1:
                if self.k7 == S_NODE:
                    self.b7.append_null()
                else:
                    write_i32_le(self.u7, i32(r))
                    if self.k7 == S_BYTES:
                        write_i32_le(self.o7, i32(len(self.w7)))
                    elif self.x7 == 8:
                        write_i64_le(self.w7, 0)
                    elif self.x7 == 4:
                        write_i32_le(self.w7, 0)
                    elif self.x7 == 1:
                        self.w7.append(0)
                    else:
                        put_zeros(self.w7, self.x7)
            elif n >= 0:
                if n > end - pos:
                    raise SlotStop()
                if self.k7 == S_BYTES:
                    if n <= 32 and pos + 32 <= end:  # four words and a truncate: no branch on n
                        write_i64_le(self.w7, read_i64_le(buf, pos))
                        write_i64_le(self.w7, read_i64_le(buf, pos + 8))
                        write_i64_le(self.w7, read_i64_le(buf, pos + 16))
                        write_i64_le(self.w7, read_i64_le(buf, pos + 24))
                        self.w7.truncate(len(self.w7) - (32 - n))
                    else:
                        copy_value(self.w7, buf, pos, n)
                    write_i32_le(self.o7, i32(len(self.w7)))
                elif self.k7 == S_NODE:
                    self.b7.append(buf, pos, n)
                elif n == 0:  # an empty fixed-width value reads as null
                    write_i32_le(self.u7, i32(r))
                    put_zeros(self.w7, self.x7)
                else:
                    raise SlotStop()
                pos += n
            else:
                raise SlotStop()
        return pos
