"""numpy page decoding for the interpreted build (this module is never compiled).

Interpreted, the cell-by-cell walk of ``cqlcodec.columnar.walk`` costs a few
microseconds per cell. Here a RESULT Rows page becomes columns with a few
numpy operations per column instead, in three steps:

1. **Row starts.** Each row's first byte, found by the first of these that
   works (the one that worked last time for this column layout, on a page with or
   without a null length word, is tried first):
   a page whose cells all have their type's width is *regular* (rows of one
   size, no Python per row); a generated loop that takes every fixed-width cell
   to have its width and reads only the variable-width cells' lengths (one byte
   of the length word, then the whole word); a regular expression whose every
   alternative consumes exactly the bytes a cell's length word announces (nulls
   and values under 256 bytes); last, a loop over every cell's length word.
   Only the last is exact by construction; the others are guesses.
2. **The column walk**, which checks the guess: from the row starts, every
   column's length words are gathered at once and the next cell's position
   computed from them; the starts are right only if each row's cells end
   exactly where the next row starts (the last at the end of the body). So
   whichever way the starts were found, every cell's position and length come
   from the body's own length words.
3. **Columns.** Fixed-width values, booleans, uuids, numeric vectors, text,
   ascii, blob, and varint and decimal values of at most 8 bytes are gathered
   and converted per column (UTF-8 checked per cell); other types call their
   builder's ``append`` per cell, as the walk does.

Any failure raises DecodeError, and the caller decodes the body once more
through the row path for the exact error. A page this module does not take
(encrypted columns, bodies over 2 GiB, no numpy) returns None and goes to the
walk.
"""

from __future__ import annotations

import re
import struct
import sys
import threading
from array import array
from typing import Any

import numpy as np

from cqlcodec import kinds as K
from cqlcodec.codecs.encryption import DecryptingCodec
from cqlcodec.columnar.builders import (
    BIN_ASCII,
    BIN_BLOB,
    BIN_TEXT,
    NANOS_PER_DAY,
    BinaryNode,
    BoolNode,
    DecimalNode,
    FixedNode,
    Node,
    UuidNode,
    VarintNode,
    VectorNode,
    make_node,
    utf8_ascii,
)
from cqlcodec.errors import DecodeError
from cqlcodec.protocol.rows import RowsDesc
from cqlcodec.runtime.wire import malformed

_I32 = struct.Struct(">i")
_NATIVE = "<" if np.little_endian else ">"

# how a column's values are gathered (per kind of builder)
_FIXED_DTYPES: dict[int, str] = {
    K.TINYINT: "i1", K.SMALLINT: "i2", K.INT: "i4", K.BIGINT: "i8", K.COUNTER: "i8",
    K.FLOAT: "f4", K.DOUBLE: "f8", K.TIMESTAMP: "i8", K.DATE: "u4", K.TIME: "i8",
}

# the row pattern needs atomic groups (Python 3.11+); without them that way is skipped
ATOMIC_GROUPS = sys.version_info >= (3, 11)

# ways to find the row starts, in the order they are tried (see the module docstring)
REGULAR = 0
LOW_BYTE = 1
WHOLE_WORD = 2
PATTERN = 3
EXACT = 4
WAYS = (REGULAR, LOW_BYTE, WHOLE_WORD, PATTERN, EXACT)


_NULL_WORD = b"\xff\xff\xff\xff"  # the length word of a null cell


class _Stop(Exception):
    """A guess at the row starts that cannot be right."""


class Layout:
    """What finding the row starts needs for one sequence of column widths (-1 for
    variable width): the generated loops, the pattern, and the way that worked last."""

    def __init__(self, widths: tuple[int, ...]) -> None:
        self.widths = widths
        self.fixed = all(w >= 0 for w in widths)
        self.row_size = sum(4 + w for w in widths) if self.fixed else -1
        self.low_byte = _scan_loop(widths, True)
        self.whole_word = _scan_loop(widths, False)
        self.pattern = _row_pattern(widths) if ATOMIC_GROUPS else None
        # the way that worked last, for pages without and with a null length word
        # (pages of one table differ in nulls: the ways that guess fixed-width cells
        # fail on nulls, and a page without them is faster the first way)
        self.first = [REGULAR if self.fixed else LOW_BYTE] * 2


_LAYOUT_LIMIT = 128
_layouts: dict[tuple[int, ...], Layout] = {}
_layouts_lock = threading.Lock()


def layout_of(widths: tuple[int, ...]) -> Layout:
    """The cached :class:`Layout` of these column widths."""
    found = _layouts.get(widths)
    if found is not None:
        return found
    made = Layout(widths)
    with _layouts_lock:
        if len(_layouts) >= _LAYOUT_LIMIT:
            for old in list(_layouts)[: _LAYOUT_LIMIT // 4]:
                del _layouts[old]
        _layouts[widths] = made
    return made


def _scan_loop(widths: tuple[int, ...], low_byte: bool) -> Any:
    """A generated loop giving the row starts when every fixed-width cell has its width
    (the variable-width cells' lengths read as the last byte of the length word, or as
    the whole word), or None without variable-width columns."""
    if all(w >= 0 for w in widths):
        return None
    # (fixed bytes before, fixed bytes after) each variable-width cell; the bytes after
    # the last one are added to its step
    skips: list[list[int]] = []
    skip = 0
    for w in widths:
        if w >= 0:
            skip += 4 + w
        else:
            skips.append([skip, 0])
            skip = 0
    skips[-1][1] = skip
    steps = []
    for before, after in skips:
        if low_byte:
            steps.append(f"pos += {before + 4 + after} + buf[pos + {before + 3}]")
        else:
            steps.append(f"pos += {before + 4 + after} + I32(buf, pos + {before})[0]")
    lines = ["def scan(buf, pos, nrows):",
             "    starts = array('q', bytes(8 * nrows))",
             "    for r in range(nrows):",
             "        starts[r] = pos"]
    lines += ["        " + s for s in steps]
    lines.append("    return starts")
    env: dict[str, Any] = {"I32": _I32.unpack_from, "array": array}
    exec(compile("\n".join(lines) + "\n", "<cqlcodec generated row scan>", "exec"), env)
    return env["scan"]


def _row_pattern(widths: tuple[int, ...]) -> re.Pattern[bytes]:
    """A pattern matching exactly one row whose variable-width values are under 256
    bytes: every alternative consumes what its length word announces."""
    null = rb"\xff\xff\xff[\xfe\xff]"
    short = b"|".join(re.escape(bytes([n])) + (b".{%d}" % n if n else b"") for n in range(256))
    var = rb"(?>\x00\x00\x00(?:" + short + rb")|" + null + b")"
    cells = []
    for w in widths:
        if w < 0:
            cells.append(var)
        else:
            word = re.escape(w.to_bytes(4, "big"))
            cells.append(b"(?>" + word + (b".{%d}" % w if w else b"") + rb"|\x00\x00\x00\x00|"
                         + null + b")")
    return re.compile(b"(?>" + b"".join(cells) + b")", re.S)


# --- step 1: row starts --------------------------------------------------------------------

def _regular(layout: Layout, buf: bytes, pos: int, end: int, nrows: int) -> Any:
    if not layout.fixed or end - pos != nrows * layout.row_size:
        raise _Stop
    return pos + layout.row_size * np.arange(nrows, dtype=np.int64)


def _scanned(scan: Any, buf: bytes, pos: int, nrows: int) -> Any:
    if scan is None:
        raise _Stop
    try:
        starts = scan(buf, pos, nrows)
    except (IndexError, struct.error, OverflowError):
        raise _Stop from None
    return np.frombuffer(starts, dtype=np.int64)


def _matched(layout: Layout, buf: bytes, pos: int, end: int, nrows: int) -> Any:
    if layout.pattern is None:
        raise _Stop
    rows = layout.pattern.findall(buf, pos)
    if len(rows) != nrows:
        raise _Stop
    sizes = np.fromiter(map(len, rows), np.int64, nrows)
    starts = np.empty(nrows, dtype=np.int64)
    starts[0] = pos
    np.cumsum(sizes[:-1], out=starts[1:])
    starts[1:] += pos
    return starts


def _exact(ncols: int, buf: bytes, pos: int, end: int, nrows: int) -> Any:
    unpack = _I32.unpack_from
    starts = array("q", bytes(8 * nrows))
    for r in range(nrows):
        starts[r] = pos
        for _c in range(ncols):
            if pos + 4 > end:
                raise malformed("rows", pos, "truncated: no [int] length left")
            n = unpack(buf, pos)[0]
            pos += 4
            if n > 0:
                pos += n
            elif n < -2:
                raise malformed("rows", pos - 4, f"invalid value length {n}")
    return np.frombuffer(starts, dtype=np.int64)


def _starts(layout: Layout, way: int, buf: bytes, pos: int, end: int, nrows: int) -> Any:
    if way == REGULAR:
        return _regular(layout, buf, pos, end, nrows)
    if way == LOW_BYTE:
        return _scanned(layout.low_byte, buf, pos, nrows)
    if way == WHOLE_WORD:
        return _scanned(layout.whole_word, buf, pos, nrows)
    if way == PATTERN:
        return _matched(layout, buf, pos, end, nrows)
    return _exact(len(layout.widths), buf, pos, end, nrows)


# --- step 2: the column walk ---------------------------------------------------------------

def _cells(layout: Layout, words: Any, starts: Any,
           end: int) -> tuple[list[Any], list[Any | None]] | None:
    """Per column, each row's value position and length word (None when every cell of
    a fixed-width column has its width), or None if the row starts are not the ones
    the length words give."""
    cur = starts
    offs: list[Any] = []
    lens: list[Any | None] = []
    try:
        for w in layout.widths:
            n = words[cur]
            if w >= 0 and (n == w).all():
                offs.append(cur + 4)
                lens.append(None)
                cur = cur + (4 + w)
                continue
            n = n.astype(np.int64)
            if int(n.min()) < -2:
                return None
            cur = cur + 4
            offs.append(cur)
            lens.append(n)
            cur = cur + np.maximum(n, 0)
    except IndexError:  # a guess past the end
        return None
    # Row 0 starts where the rows do, so its length words are the real ones; if each
    # row ends where the next starts, by induction every start and cell is the real one
    # (a wrong guess read through a negative index never gets here).
    if int(cur[-1]) != end or not np.array_equal(cur[:-1], starts[1:]):
        return None
    return offs, lens


# --- step 3: columns -----------------------------------------------------------------------

def _validity(node: Node, nrows: int, null: Any) -> Any:
    """Set length, null count and validity bytes; True where valid (or None: all are)."""
    node.length = nrows
    if null is None:
        node.nulls = 0
        node.vbytes = b""
        return None
    nulls = int(np.count_nonzero(null))
    node.nulls = nulls
    if nulls == 0:
        node.vbytes = b""
        return None
    valid = ~null
    node.vbytes = valid.view(np.uint8).tobytes()
    return valid


def _bad(node: Node, why: str) -> DecodeError:
    return malformed(node.cql_name, 0, why)


def _fixed_cells(node: Node, width: int, n: Any | None) -> Any:
    """The null mask of a fixed-width column (empty values are null, as in the row path),
    None for a column without nulls."""
    if n is None:
        return None
    null = n != width
    if (null & (n > 0)).any():  # lengths below -2 never get here
        raise _bad(node, f"a {node.cql_name} value of another width than {width} bytes")
    return null


def _gather(buf: bytes, end: int, offs: Any, width: int, dtype: str, valid: Any) -> Any:
    """The ``width``-byte values at ``offs`` as ``dtype`` (any bytes where not valid)."""
    if width > end:  # no value fits: every cell is null
        return np.zeros(len(offs), dtype=dtype)
    at = offs if valid is None else np.minimum(offs, end - width)
    view = np.ndarray((end - width + 1,), dtype=dtype, buffer=buf, strides=(1,))
    return view[at]


def _fill_fixed(node: FixedNode, buf: bytes, end: int, offs: Any, n: Any | None) -> None:
    valid = _validity(node, len(offs), _fixed_cells(node, int(node.width), n))
    kind = node.kind
    code = _FIXED_DTYPES[kind]
    values = _gather(buf, end, offs, int(node.width), ">" + code, valid)
    if kind == K.DATE:  # uint32 days with the epoch at 2**31 -> int32 days
        values = (values.astype(_NATIVE + "u4") ^ np.uint32(0x80000000)).view(_NATIVE + "i4")
        code = "i4"
    elif kind == K.TIME:
        bad = (values < 0) | (values >= NANOS_PER_DAY)
        if valid is not None:
            bad &= valid
        if bad.any():
            raise _bad(node, "a time outside one day")
    values = values.astype(_NATIVE + code)
    if valid is not None:
        values[~valid] = 0
    node.values = values.tobytes()


def _fill_bool(node: BoolNode, buf: bytes, end: int, offs: Any, n: Any | None) -> None:
    valid = _validity(node, len(offs), _fixed_cells(node, 1, n))
    flags = _gather(buf, end, offs, 1, "u1", valid) != 0
    if valid is not None:
        flags &= valid
    node.flags = flags.view(np.uint8).tobytes()


def _fill_uuid(node: UuidNode, buf: bytes, end: int, offs: Any, n: Any | None) -> None:
    valid = _validity(node, len(offs), _fixed_cells(node, 16, n))
    values = _gather(buf, end, offs, 16, "V16", valid)
    if valid is not None:
        values[~valid] = b"\x00" * 16
    node.values = values.tobytes()


def _fill_vector(node: VectorNode, buf: bytes, end: int, offs: Any, n: Any | None) -> None:
    item = node.item
    assert isinstance(item, FixedNode)
    dim = int(node.dim)
    width = dim * int(node.size)
    nrows = len(offs)
    valid = _validity(node, nrows, _fixed_cells(node, width, n))
    code = _FIXED_DTYPES[item.kind]
    raw = _gather(buf, end, offs, width, f"V{width}", valid)
    values = raw.view(">" + code).astype(_NATIVE + code).reshape(nrows, dim)
    item.length = nrows * dim
    if valid is None:
        item.nulls = 0
        item.vbytes = b""
    else:
        values[~valid] = 0
        item.nulls = int(node.nulls) * dim
        item.vbytes = np.repeat(valid, dim).view(np.uint8).tobytes()
    item.values = values.tobytes()


def _joined(buf: bytes, offs: Any, n: Any) -> tuple[bytes, Any]:
    """The values at ``offs`` (lengths ``n``, negative for none) back to back, and the
    ``len(n) + 1`` offsets into the result."""
    sizes = np.maximum(n, 0)
    bounds = np.zeros(len(n) + 1, dtype=np.int64)
    np.cumsum(sizes, out=bounds[1:])
    total = int(bounds[-1])
    if total == 0:
        return b"", bounds
    u8 = np.frombuffer(buf, dtype=np.uint8)
    index = np.repeat(offs - bounds[:-1], sizes)
    index += _counting(total)
    return u8.take(index).tobytes(), bounds


_count: Any = np.arange(1 << 16, dtype=np.int64)


def _counting(n: int) -> Any:
    """``arange(n)`` (a view of a cached, growing one)."""
    global _count
    count = _count
    if len(count) < n:
        count = np.arange(max(n, 2 * len(count)), dtype=np.int64)
        _count = count
    return count[:n]


def _check_utf8(node: Node, blob: bytes, bounds: Any, sizes: Any) -> None:
    """Every value is valid UTF-8: the whole decodes and no value starts with a
    continuation byte."""
    if utf8_ascii(blob):
        return
    starts = bounds[:-1][sizes > 0]
    if ((np.frombuffer(blob, dtype=np.uint8)[starts] & 0xC0) == 0x80).any():
        raise _bad(node, "invalid UTF-8 (a value starts inside a multi-byte sequence)")


def _fill_binary(node: BinaryNode, buf: bytes, offs: Any, n: Any) -> None:
    _validity(node, len(n), n < 0)
    blob, bounds = _joined(buf, offs, n)
    if node.mode == BIN_TEXT:
        _check_utf8(node, blob, bounds, n)
    elif node.mode == BIN_ASCII and not blob.isascii():
        raise _bad(node, "a byte >= 0x80 in an ascii value")
    node.blob = blob
    node.offs = bounds.astype(_NATIVE + "i4").tobytes()


def _small_ints(buf: bytes, end: int, offs: Any, n: Any) -> Any:
    """The big-endian two's complement values of 1 to 8 bytes at ``offs`` (0 where
    ``n`` is not in [1, 8]) as int64."""
    some = (n > 0) & (n <= 8)
    size = np.where(some, n, 8)
    at = np.where(some, offs + size - 8, 8)
    view = np.ndarray((end - 7,), dtype=">i8", buffer=buf, strides=(1,))
    shift = (8 * (8 - size)).astype(np.int64)
    values = (view[at].astype(np.int64) << shift) >> shift
    values[~some] = 0
    return values


def _fill_varint(node: VarintNode, buf: bytes, end: int, offs: Any, n: Any) -> bool:
    """varint values of at most 8 bytes (int64); False to leave the column to ``append``."""
    if int(n.max()) > 8:
        return False
    _validity(node, len(n), n <= 0)  # an empty varint is null, as in the row path
    node.widest = max(int(n.max()), 0)
    blob, bounds = _joined(buf, offs, n)
    node.blob = blob
    node.offs = bounds.astype(_NATIVE + "i4").tobytes()
    node.fmt = "l"
    node.converted = _small_ints(buf, end, offs, n).astype(_NATIVE + "i8").tobytes()
    return True


def _fill_decimal(node: DecimalNode, buf: bytes, end: int, offs: Any, n: Any) -> bool:
    """decimal values with one scale in [0, 38] and at most 8 bytes unscaled
    (decimal128); False to leave the column to ``append``."""
    present = n > 0
    if not present.any() or int(n.max()) > 12 or int(n[present].min()) <= 4:
        return False
    words = np.ndarray((end - 3,), dtype=">i4", buffer=buf, strides=(1,))
    scales = words[offs[present]]
    scale = int(scales[0])
    if not 0 <= scale <= 38 or not (scales == scale).all():
        return False
    _validity(node, len(n), n <= 0)
    node.widest = int(n.max())
    node.scale = scale
    node.scaled = True
    blob, bounds = _joined(buf, offs, n)
    node.blob = blob
    node.offs = bounds.astype(_NATIVE + "i4").tobytes()
    unscaled = _small_ints(buf, end, offs + 4, np.where(present, n - 4, 0))
    wide = np.empty((len(n), 2), dtype=_NATIVE + "i8")
    low, high = (0, 1) if np.little_endian else (1, 0)
    wide[:, low] = unscaled
    wide[:, high] = unscaled >> 63
    node.fmt = f"d:38,{scale}"
    node.converted = wide.tobytes()
    return True


def _fill_cells(node: Node, buf: bytes, offs: Any, n: Any) -> None:
    """Any other column: its builder's ``append`` per cell, then ``finish``."""
    for at, size in zip(offs.tolist(), n.tolist()):
        if size >= 0:
            node.append(buf, at, size)
        else:
            node.append_null()
    node.finish()


def _fill(node: Node, buf: bytes, end: int, offs: Any, n: Any | None) -> None:
    """Fill a column's builder (``n`` None: fixed-width values without nulls)."""
    if isinstance(node, FixedNode):
        _fill_fixed(node, buf, end, offs, n)
    elif isinstance(node, BoolNode):
        _fill_bool(node, buf, end, offs, n)
    elif isinstance(node, UuidNode):
        _fill_uuid(node, buf, end, offs, n)
    elif isinstance(node, VectorNode) and node.run:
        _fill_vector(node, buf, end, offs, n)
    elif n is None:
        raise AssertionError(f"{node.cql_name} is not fixed-width")
    elif type(node) is BinaryNode and BIN_TEXT <= node.mode <= BIN_BLOB:
        _fill_binary(node, buf, offs, n)
    elif type(node) is VarintNode and _fill_varint(node, buf, end, offs, n):
        pass
    elif type(node) is DecimalNode and _fill_decimal(node, buf, end, offs, n):
        pass
    else:
        _fill_cells(node, buf, offs, n)


def _width(node: Node) -> int:
    if isinstance(node, FixedNode):
        return int(node.width)
    if isinstance(node, BoolNode):
        return 1
    if isinstance(node, UuidNode):
        return 16
    if isinstance(node, VectorNode) and node.run:
        return int(node.dim) * int(node.size)
    return -1


def decode_rows(buf: bytes, p: int, end: int, desc: RowsDesc, large: bool,
                ways: tuple[int, ...] | None = None
                ) -> tuple[list[Node], list[list[int]], int] | None:
    """The finished builders, not-set rows and row count of the rows at ``p`` (the
    ``[int] rows_count``), or None for a page left to the walk; DecodeError if the
    rows are malformed. ``ways`` limits how the row starts are looked for (tests:
    None if none of them finds them)."""
    if large or end - p < 8:
        return None
    nrows = _I32.unpack_from(buf, p)[0]
    ncols = len(desc.codecs)
    if nrows <= 0 or ncols == 0 or nrows > (end - p - 4) // (4 * ncols):
        return None
    if any(isinstance(codec, DecryptingCodec) for codec in desc.codecs):
        return None
    nodes = [make_node(col.type, False) for col in desc.columns]
    layout = layout_of(tuple(_width(node) for node in nodes))
    pos = p + 4
    words = np.ndarray((end - 3,), dtype=">i4", buffer=buf, strides=(1,))
    found = None
    nulls = int(buf.find(_NULL_WORD, pos, end) >= 0)  # at least a byte pattern like one
    if ways is None:
        first = layout.first[nulls]
        ways = (first,) + tuple(w for w in WAYS if w != first)
    for way in ways:
        try:
            starts = _starts(layout, way, buf, pos, end, nrows)
        except _Stop:
            continue
        found = _cells(layout, words, starts, end)
        if found is not None:
            layout.first[nulls] = way
            break
        if way == EXACT:
            raise malformed("rows", pos, "the cells do not end where the body ends")
    if found is None:
        if EXACT not in ways:
            return None
        raise malformed("rows", pos, "the cells do not end where the body ends")
    offs, lens = found
    unset: list[list[int]] = []
    unset_ok = desc.protocol_version >= 4
    for node, at, n in zip(nodes, offs, lens):
        if n is None:
            unset.append([])
        else:
            unset_rows = np.flatnonzero(n == -2)
            if len(unset_rows) and not unset_ok:
                raise malformed("rows", 0, "length -2 (not set) needs protocol v4 or later")
            unset.append(unset_rows.tolist())
        _fill(node, buf, end, at, n)
    return nodes, unset, nrows
