"""Generate cqlcodec/columnar/slots.py: the columnar page walk over groups of column slots.

    python tools/gen_slots.py          write the file
    python tools/gen_slots.py --check  exit 1 if the checked-in file differs

The compiled walk is fastest when each column's kind, width and buffers are plain
locals of the loop: then a cell costs its length word, a few predicted branches and
the write of its value, with no per-cell list, attribute or call. A group holds
SLOTS columns; the loop over a page of at most SLOTS columns is written out once
with every slot inline (a slot past the page's columns is skipped by one predicted
branch), and wider pages call a group's one-row method per group. Both are written
here from one cell template (CELL) and never by hand.
"""

from __future__ import annotations

import sys
from pathlib import Path

from codegen import write_or_check

SLOTS = 8
TARGET = Path(__file__).resolve().parent.parent / "cqlcodec" / "columnar" / "slots.py"

HEADER = '''\
# GENERATED FILE - DO NOT EDIT. Made by tools/gen_slots.py from its template;
# change the template and run `python tools/gen_slots.py` (a test checks this file).
"""The columnar page walk over groups of up to {slots} column slots (the compiled fast path).

Each column of a page is a slot of a :class:`SlotGroup`: its kind (an ``S_`` code
below), the width its length words must hold, and its builder's buffers.
:meth:`SlotGroup.walk` reads every row of a page of at most {slots} columns with
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

SLOTS: Final = {slots}
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
    """Up to {slots} consecutive columns of a page, as slots (see the module docstring).

    ``nodes`` are the columns' builders; ``kinds`` their ``S_`` codes; ``widths`` the
    value width of fixed-width kinds (``NO_WIDTH`` for others). Data, offsets and
    validity are the builders' own buffers; the null counts are kept here until
    :meth:`close`.
    """

    def __init__(self, nodes: list[Node], kinds: list[int], widths: list[int],
                 data: list[BytesWriter], offsets: list[BytesWriter]) -> None:
        count = len(nodes)
        none = SPENT  # the buffers of a slot past the columns: never written
'''

SLOT_FIELDS = '''\
        self.k{i}: Final[i64] = kinds[{i}] if count > {i} else S_NONE
        self.x{i}: Final[i64] = widths[{i}] if count > {i} else NO_WIDTH
        self.w{i}: Final = data[{i}] if count > {i} else none
        self.o{i}: Final = offsets[{i}] if count > {i} else none
        self.u{i}: Final = BytesWriter() if count > {i} else none
        self.b{i}: Final = nodes[{i}] if count > {i} else nodes[0]
'''

CLOSE = '''
    def close(self, nrows: i64) -> None:
        """Hand the row and null counts to the builders the walk wrote directly."""
'''

CLOSE_SLOT = '''\
        if self.k{i} > S_NODE:
            mark_nulls(self.b{i}, self.u{i}, nrows)
'''

WALK = '''
    def walk(self, buf: bytes, pos: i64, end: i64, nrows: i64) -> i64:
        """Every row of a page whose columns are all in this group; the end position."""
'''

ROW = '''
    def row(self, buf: bytes, pos: i64, end: i64, r: i64) -> i64:
        """Row ``r``'s cells of this group's columns; the position after them."""
        n0: int = 0
        n: i64 = 0
'''

# One cell of slot {i}: its [int] length, then a fixed-width value, null, another value or
# an empty one, or a stop (null before the rest: one mispredicted branch per null, not two).
# {a} is "" in walk() (the slot's fields are locals) and "self." in row().
CELL = '''\
{p}if {a}k{i} != S_NONE:
{p}    if pos + 4 > end:
{p}        raise SlotStop()
{p}    n0 = read_i32_be(buf, pos)
{p}    n = n0
{p}    pos += 4
{p}    if n == {a}x{i}:
{p}        if {a}k{i} == S_I64:
{p}            write_i64_le({a}w{i}, read_i64_be(buf, pos))
{p}        elif {a}k{i} == S_I32:
{p}            write_i32_le({a}w{i}, read_i32_be(buf, pos))
{p}        elif {a}k{i} == S_BOOL:
{p}            {a}w{i}.append(1 if buf[pos] != 0 else 0)
{p}        elif {a}k{i} == S_UUID:
{p}            write_i64_le({a}w{i}, read_i64_le(buf, pos))
{p}            write_i64_le({a}w{i}, read_i64_le(buf, pos + 8))
{p}        elif {a}k{i} == S_DATE:
{p}            d{i}: int = read_i32_be(buf, pos)
{p}            write_i32_le({a}w{i}, d{i} + _DATE_OFFSET if d{i} < 0 else d{i} - _DATE_OFFSET)
{p}        elif {a}k{i} == S_TIME:
{p}            t{i}: i64 = read_i64_be(buf, pos)
{p}            if t{i} < 0 or t{i} >= NANOS_PER_DAY:
{p}                raise SlotStop()
{p}            write_i64_le({a}w{i}, t{i})
{p}        elif {a}k{i} == S_I16:
{p}            write_i16_le({a}w{i}, read_i16_be(buf, pos))
{p}        else:
{p}            {a}w{i}.append(buf[pos])
{p}        pos += n
{p}    elif n == -1:
{p}        if {a}k{i} == S_NODE:
{p}            {a}b{i}.append_null()
{p}        else:
{p}            write_i32_le({a}u{i}, i32(r))
{p}            if {a}k{i} == S_BYTES:
{p}                write_i32_le({a}o{i}, i32(len({a}w{i})))
{p}            elif {a}x{i} == 8:
{p}                write_i64_le({a}w{i}, 0)
{p}            elif {a}x{i} == 4:
{p}                write_i32_le({a}w{i}, 0)
{p}            elif {a}x{i} == 1:
{p}                {a}w{i}.append(0)
{p}            else:
{p}                put_zeros({a}w{i}, {a}x{i})
{p}    elif n >= 0:
{p}        if n > end - pos:
{p}            raise SlotStop()
{p}        if {a}k{i} == S_BYTES:
{p}            if n <= 32 and pos + 32 <= end:  # four words and a truncate: no branch on n
{p}                write_i64_le({a}w{i}, read_i64_le(buf, pos))
{p}                write_i64_le({a}w{i}, read_i64_le(buf, pos + 8))
{p}                write_i64_le({a}w{i}, read_i64_le(buf, pos + 16))
{p}                write_i64_le({a}w{i}, read_i64_le(buf, pos + 24))
{p}                {a}w{i}.truncate(len({a}w{i}) - (32 - n))
{p}            else:
{p}                copy_value({a}w{i}, buf, pos, n)
{p}            write_i32_le({a}o{i}, i32(len({a}w{i})))
{p}        elif {a}k{i} == S_NODE:
{p}            {a}b{i}.append(buf, pos, n)
{p}        elif n == 0:  # an empty fixed-width value reads as null
{p}            write_i32_le({a}u{i}, i32(r))
{p}            put_zeros({a}w{i}, {a}x{i})
{p}        else:
{p}            raise SlotStop()
{p}        pos += n
{p}    else:
{p}        raise SlotStop()
'''


def walk_method() -> str:
    """SlotGroup.walk: the fields in locals, then the row loop with every slot inline."""
    out = [WALK]
    for i in range(SLOTS):
        out.append(f"        k{i} = self.k{i}\n        x{i} = self.x{i}\n        w{i} = self.w{i}\n"
                   f"        o{i} = self.o{i}\n        u{i} = self.u{i}\n        b{i} = self.b{i}\n")
    out.append("        n0: int = 0\n        n: i64 = 0\n        r: i64 = 0\n")
    out.append("        while r < nrows:\n")
    for i in range(SLOTS):
        out.append(CELL.format(i=i, a="", p=" " * 12))
    out.append("            r += 1\n")
    out.append("        return pos\n")
    return "".join(out)


def row_method() -> str:
    """SlotGroup.row: one row of this group, through the fields."""
    out = [ROW]
    for i in range(SLOTS):
        out.append(CELL.format(i=i, a="self.", p=" " * 8))
    out.append("        return pos\n")
    return "".join(out)


def render() -> str:
    """The whole module text."""
    fields = "".join(SLOT_FIELDS.format(i=i) for i in range(SLOTS))
    close = CLOSE + "".join(CLOSE_SLOT.format(i=i) for i in range(SLOTS))
    return (HEADER.format(slots=SLOTS) + fields + close + walk_method() + row_method())


def main(argv: list[str] | None = None) -> int:
    return write_or_check(argv, TARGET, render(), "gen_slots.py", __doc__.splitlines()[0])


if __name__ == "__main__":
    sys.exit(main())
