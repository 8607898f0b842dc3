"""The page walk: a RESULT Rows body into one finished builder per column.

Metadata is read exactly as :func:`cqlcodec.decode_result` reads it (the parse
description of a no-metadata page is cached on the ``Prepared``). Then every
cell is visited once, in row order, and appended to its column's builder.
Columns of the common flat types (fixed-width numbers and times, boolean,
uuid, text, ascii, blob) are written by the loop itself, each value straight
into the builder's little-endian buffer without a call per cell; other columns
call their builder's ``append``.

Two loops do this. The slot walk (:func:`slot_walk`, generated code in
:mod:`cqlcodec.columnar.slots`) keeps each column's kind and buffers in locals
and takes every page whose cells are values or nulls; it leaves anything else
(not set, a wrong length, encrypted columns) to the checked walk
(:func:`checked_walk`), which reads each column through a :class:`Sink` chosen
once per page and names the first bad cell.
Any failure — a bad length, a malformed value, text that is not UTF-8 — stops
the walk; the body is then decoded once more through the row path, so the
DecodeError raised is exactly the one ``decode_result`` raises (the first bad
cell, naming its type, column, row and offset). Nothing is returned from a body
that failed half-way.
"""

from __future__ import annotations

from typing import Any, Final, final

from mypy_extensions import i32, i64

from cqlcodec import kinds as K
from cqlcodec.codecs.encryption import ColumnEncryptionPolicy, DecryptingCodec
from cqlcodec.columnar.builders import (
    BIN_BLOB,
    BIN_TEXT,
    NANOS_PER_DAY,
    BinaryNode,
    BoolNode,
    FixedNode,
    Node,
    UuidNode,
    make_node,
)
from cqlcodec.columnar.slots import (
    NO_WIDTH,
    S_BOOL,
    S_BYTES,
    S_DATE,
    S_I8,
    S_I16,
    S_I32,
    S_I64,
    S_NODE,
    S_TIME,
    S_UUID,
    SLOTS,
    SlotGroup,
    copy_value,
    put_zeros,
)
from cqlcodec.errors import DecodeError
from cqlcodec.protocol.columns import ColumnSpec
from cqlcodec.protocol.prepared import Prepared
from cqlcodec.protocol.results import RESULT_ROWS, decode_result, read_rows_header
from cqlcodec.protocol.rows import RowsDesc, _cell_error, _wrap_error
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
    write_i64_le,
)
from cqlcodec.runtime.build import COMPILED
from cqlcodec.runtime.padding import begin_message
from cqlcodec.runtime.wire import check_protocol_version, malformed, read_int

INT32_MAX: Final = 0x7FFFFFFF
# interpreted: pages of fewer cells go to the walk, not to numpy (measured on W5: numpy
# costs about 240 µs per page + 0.07 µs per cell, the slot walk 95 µs + 0.8 µs per cell)
NUMPY_MIN_CELLS: Final = 200
_DATE_OFFSET: Final = 1 << 31

_FIXED_SINKS: Final[dict[int, int]] = {
    K.TINYINT: S_I8, K.SMALLINT: S_I16, K.INT: S_I32, K.FLOAT: S_I32,
    K.BIGINT: S_I64, K.COUNTER: S_I64, K.DOUBLE: S_I64, K.TIMESTAMP: S_I64,
    K.DATE: S_DATE, K.TIME: S_TIME,
}


@final
class Sink:
    """How the walk writes one top-level column: ``kind`` (an ``S_`` code), the value
    width (-1 for variable width), and the builder's own buffers, shared with it."""

    def __init__(self, node: Node, kind: i64, width: i64, data: BytesWriter,
                 offsets: BytesWriter) -> None:
        self.node: Final = node
        self.kind: Final = kind
        self.width: Final = width
        self.data: Final = data
        self.offsets: Final = offsets
        self.valid = node.valid
        self.nulls: i64 = 0

    def null(self, r: i64) -> None:
        """A null in row ``r`` of a variable-width column."""
        if self.kind == S_NODE:
            self.node.append_null()
            return
        self.mark_null(r)
        write_i32_le(self.offsets, i32(len(self.data)))

    def mark_null(self, r: i64) -> None:
        """The validity byte of a null in row ``r`` (ones for the rows before the first)."""
        if self.nulls == 0:
            self.valid = self.node.first_null()  # the builder's length is still 0 here
            if r > 0:
                self.valid.write(b"\x01" * r)
        self.valid.append(0)
        self.nulls += 1

    def close(self, nrows: i64) -> None:
        """Hand the counts to the builder after the walk."""
        if self.kind != S_NODE:
            self.node.length = nrows
            self.node.nulls = self.nulls


@final
class Segment:
    """One step of the row walk: a run of consecutive fixed-width columns, or one other
    column.

    Per row the run's length words are checked 8 bytes at a time (the
    ``mask``/``pattern`` words say where they are and what they must be); when each
    holds its column's width, only the run's position in the body is recorded
    (``where``). Otherwise the row's cells are read one by one into a record of the
    same shape in ``stage`` (a null as length -1) and ``where`` records its place
    there as ``-1 - offset``. After the walk, :meth:`spread` moves each column's
    values into its builder. When a quarter of the rows so far needed the
    cell-by-cell read (many nulls), the run is spread at once and its later cells
    go straight to the builders (``direct``)."""

    def __init__(self, first: i64, sinks: list[Sink]) -> None:
        self.first: Final = first
        self.sinks: Final = sinks
        self.sink: Final = sinks[0]
        self.run: Final = sinks[0].width >= 0
        size: i64 = 0
        mask = BytesWriter()
        pattern = BytesWriter()
        for s in sinks:
            if s.width >= 0:
                write_i32_le(mask, -1)
                write_i32_be(pattern, i32(s.width))
                for _i in range(s.width):
                    mask.append(0)
                    pattern.append(0)
                size += 4 + s.width
        self.size: Final = size
        self.stride: Final = (size + 7) & -8
        while len(mask) < self.stride:
            mask.append(0)
            pattern.append(0)
        self.mask: Final = mask.getvalue()
        self.pattern: Final = pattern.getvalue()
        self.where: Final = BytesWriter()
        self.stage: Final = BytesWriter()
        self.slow: i64 = 0  # rows written cell by cell
        self.direct = False

    def cells(self, buf: bytes, pos: i64, end: i64, r: i64, desc: RowsDesc,
              unset: list[list[int]], unset_ok: bool) -> i64:
        """Read the run's cells of row ``r`` one by one into a record (kept only if a cell
        is null); the new position."""
        st = self.stage
        start = len(st)
        at = pos
        dense = True
        c = self.first
        for s in self.sinks:
            width = s.width
            if pos + 4 + width <= end and read_i32_be(buf, pos) == width:
                pos += 4
                write_i32_be(st, i32(width))
                if width == 8:
                    write_i64_le(st, read_i64_le(buf, pos))
                elif width == 4:
                    write_i32_le(st, read_i32_le(buf, pos))
                elif width == 16:
                    write_i64_le(st, read_i64_le(buf, pos))
                    write_i64_le(st, read_i64_le(buf, pos + 8))
                elif width == 2:
                    st.append(buf[pos])
                    st.append(buf[pos + 1])
                else:
                    st.append(buf[pos])
                pos += width
            else:
                run_cell(s, buf, pos, end, r, c, desc, unset, unset_ok)  # a null, or raises
                pos += 4
                write_i32_le(st, -1)
                put_zeros(st, width)
                dense = False
            c += 1
        if dense:  # the run's end is too near the body's end for the 8-byte check
            st.truncate(start)
            write_i64_le(self.where, at)
        else:
            write_i64_le(self.where, -1 - start)
            self.slow += 1
        return pos

    def go_direct(self, buf: bytes, r: i64) -> None:
        """Spread rows ``[0, r]`` now; later rows go straight to the builders."""
        if self.slow >= 8 and self.slow * 4 > r:
            self.spread(buf, r + 1)
            self.direct = True

    def direct_cells(self, buf: bytes, pos: i64, end: i64, r: i64, desc: RowsDesc,
                     unset: list[list[int]], unset_ok: bool) -> i64:
        """Read the run's cells of row ``r`` straight into the builders; the new position."""
        c = self.first
        for s in self.sinks:
            width = s.width
            if pos + 4 + width <= end and read_i32_be(buf, pos) == width:
                if s.nulls > 0:
                    s.valid.append(1)
                put_value(s.data, s.kind, buf, pos + 4)
                pos += 4 + width
            else:
                run_cell(s, buf, pos, end, r, c, desc, unset, unset_ok)  # a null, or raises
                pos += 4
                s.mark_null(r)
                put_zeros(s.data, width)
            c += 1
        return pos

    def spread(self, buf: bytes, nrows: i64) -> None:
        """Move every column of the run, rows ``[0, nrows)``, into its builder."""
        where = self.where.getvalue()
        records = self.stage.getvalue()
        self.where.truncate(0)
        self.stage.truncate(0)
        at: i64 = 0
        for s in self.sinks:
            if self.slow > 0:
                spread_mixed(s, buf, records, where, at, nrows)
            else:
                spread_dense(s, buf, where, at + 4, nrows)
            at += 4 + s.width


def run_cell(s: Sink, buf: bytes, pos: i64, end: i64, r: i64, c: i64, desc: RowsDesc,
             unset: list[list[int]], unset_ok: bool) -> bool:
    """The fixed-width cell at ``pos`` (row ``r``, column ``c``): True if it holds a value
    of its width, False if it is null (empty, null, or not set: then recorded in
    ``unset``); DecodeError for anything else. (The callers take a value of the right
    width themselves and call this for the others.)"""
    if pos + 4 > end:
        raise _cell_error(desc, r, c, pos, "truncated: no [int] length left")
    raw_n: int = read_i32_be(buf, pos)
    n: i64 = raw_n
    width = s.width
    if n > end - pos - 4:
        raise _cell_error(desc, r, c, pos, f"value of {n} bytes but only {end - pos - 4} remain")
    if n == width:
        return True
    if n == 0 or n == -1:
        return False
    if n == -2:
        if not unset_ok:
            raise _cell_error(desc, r, c, pos, "length -2 (not set) needs protocol v4 or later")
        unset[c].append(r)
        return False
    if n < 0:
        raise _cell_error(desc, r, c, pos, f"invalid value length {n}")
    cql = s.node.cql_name
    raise _cell_error(desc, r, c, pos, f"a {cql} value is {width} bytes, got {n}")


def spread_dense(s: Sink, buf: bytes, where: bytes, at: i64, nrows: i64) -> None:
    """The values of a run column found in the body only: at ``at`` past each position."""
    w = s.data
    kind = s.kind
    stop = 8 * nrows
    q: i64 = 0
    if kind == S_I64:
        while q < stop:
            write_i64_le(w, read_i64_be(buf, read_i64_le(where, q) + at))
            q += 8
    elif kind == S_I32:
        while q < stop:
            write_i32_le(w, read_i32_be(buf, read_i64_le(where, q) + at))
            q += 8
    elif kind == S_BOOL:
        while q < stop:
            w.append(1 if buf[read_i64_le(where, q) + at] != 0 else 0)
            q += 8
    elif kind == S_UUID:
        while q < stop:
            p = read_i64_le(where, q) + at
            write_i64_le(w, read_i64_le(buf, p))
            write_i64_le(w, read_i64_le(buf, p + 8))
            q += 8
    else:
        while q < stop:
            put_value(w, kind, buf, read_i64_le(where, q) + at)
            q += 8


def spread_mixed(s: Sink, buf: bytes, records: bytes, where: bytes, at: i64,
                 nrows: i64) -> None:
    """The values of a run column found in the body or in records (which may hold
    nulls: length -1)."""
    w = s.data
    kind = s.kind
    width = s.width
    for r in range(nrows):
        p = read_i64_le(where, 8 * r)
        if p >= 0:
            if s.nulls > 0:
                s.valid.append(1)
            put_value(w, kind, buf, p + at + 4)
            continue
        p = -1 - p + at
        raw_n: int = read_i32_be(records, p)
        if raw_n == width:
            if s.nulls > 0:
                s.valid.append(1)
            put_value(w, kind, records, p + 4)
        else:
            s.mark_null(r)
            put_zeros(w, width)


def put_value(w: BytesWriter, kind: i64, b: bytes, p: i64) -> None:
    """Write the fixed-width value at ``p`` little-endian (dates as int32 Unix days)."""
    if kind == S_I64:
        write_i64_le(w, read_i64_be(b, p))
    elif kind == S_I32:
        write_i32_le(w, read_i32_be(b, p))
    elif kind == S_BOOL:
        w.append(1 if b[p] != 0 else 0)
    elif kind == S_UUID:
        write_i64_le(w, read_i64_le(b, p))
        write_i64_le(w, read_i64_le(b, p + 8))
    elif kind == S_DATE:  # uint32 days with the epoch at 2**31 -> int32 days
        raw: int = read_i32_be(b, p)
        write_i32_le(w, raw + _DATE_OFFSET if raw < 0 else raw - _DATE_OFFSET)
    elif kind == S_TIME:
        v: i64 = read_i64_be(b, p)
        if v < 0 or v >= NANOS_PER_DAY:
            raise malformed("time", p, f"{v} nanoseconds is outside [0, {NANOS_PER_DAY}) "
                                       "(one day)")
        write_i64_le(w, v)
    elif kind == S_I16:
        write_i16_le(w, read_i16_be(b, p))
    else:
        w.append(b[p])


def segments(sinks: list[Sink]) -> list[Segment]:
    """The walk's steps: runs of consecutive fixed-width columns and single others."""
    out: list[Segment] = []
    run: list[Sink] = []
    first: i64 = 0
    c: i64 = 0
    for s in sinks:
        if s.width >= 0:
            if not run:
                first = c
            run.append(s)
        else:
            if run:
                out.append(Segment(first, run))
                run = []
            out.append(Segment(c, [s]))
        c += 1
    if run:
        out.append(Segment(first, run))
    return out


def make_sink(node: Node, encrypted: bool) -> Sink:
    """The sink of a top-level column (``S_NODE`` unless the walk writes its type itself)."""
    kind = S_NODE if encrypted else sink_kind(node)
    if kind == S_NODE:
        return Sink(node, S_NODE, -1, node.valid, node.valid)
    return Sink(node, kind, sink_width(node, kind), sink_data(node), sink_offsets(node))


def sink_kind(node: Node) -> i64:
    """How the walks write the cells of a top-level column: an ``S_`` code."""
    if isinstance(node, FixedNode) and not node.wire_order:
        return _FIXED_SINKS[node.kind]
    if isinstance(node, BoolNode):
        return S_BOOL
    if isinstance(node, UuidNode):
        return S_UUID
    if type(node) is BinaryNode and node.mode >= BIN_TEXT and node.mode <= BIN_BLOB \
            and not node.large:
        return S_BYTES
    return S_NODE


def sink_width(node: Node, kind: i64) -> i64:
    """The value width of a column of sink kind ``kind`` (-1: variable or a node's own)."""
    if isinstance(node, FixedNode):
        return node.width
    if kind == S_BOOL:
        return 1
    if kind == S_UUID:
        return 16
    return -1


def sink_data(node: Node) -> BytesWriter:
    """The data writer the walks fill for a column they write themselves."""
    if isinstance(node, FixedNode) or isinstance(node, BoolNode) or isinstance(node, UuidNode) \
            or isinstance(node, BinaryNode):
        return node.data
    return node.valid


def sink_offsets(node: Node) -> BytesWriter:
    """The offsets writer of a variable-width column the walks write themselves."""
    return node.offsets if isinstance(node, BinaryNode) else sink_data(node)


class Page:
    """A decoded Rows page in columns: finished builders plus the page's metadata."""

    def __init__(self, columns: tuple[ColumnSpec, ...], nodes: list[Node],
                 unset: list[list[int]], num_rows: int, paging_state: bytes | None,
                 flags: int, new_metadata_id: bytes | None) -> None:
        self.columns: Final = columns
        self.nodes: Final = nodes
        self.unset: Final = unset
        self.num_rows: Final = num_rows
        self.paging_state: Final = paging_state
        self.flags: Final = flags
        self.new_metadata_id: Final = new_metadata_id


def decode_page(body: bytes | bytearray | memoryview, protocol_version: int,
                prepared: Prepared | None,
                column_encryption_policy: ColumnEncryptionPolicy | None,
                large_threshold: int = INT32_MAX) -> Page:
    """Decode a RESULT body of kind Rows into a :class:`Page` (DecodeError otherwise).

    ``large_threshold``: bodies longer than this use 64-bit offsets (large_utf8,
    large_binary, large_list); the default keeps 32-bit offsets whenever they fit.
    """
    if protocol_version != 4:
        check_protocol_version(protocol_version)
    buf = body if isinstance(body, bytes) else bytes(body)
    end: i64 = len(buf)
    kind: int = read_i32_be(buf, 0) if end >= 4 else read_int(buf, 0, end, "RESULT kind")
    policy = column_encryption_policy
    if policy is None and prepared is not None:
        policy = prepared.column_encryption_policy
    if kind != RESULT_ROWS:
        other: Any = decode_result(buf, protocol_version, prepared,
                                   column_encryption_policy=policy)
        raise DecodeError(f"expected a RESULT of kind Rows (2), got kind {other.kind}",
                          "RESULT", 0)
    head = read_rows_header(buf, 4, end, protocol_version, prepared, 0, policy)
    desc = head.desc
    large = end > large_threshold
    try:
        begin_message(end)
        done = vectorised_rows(buf, head.rows_at, end, desc, large)
        if done is None:
            if not COMPILED:  # the numpy decoder may have spent some: the walk starts over
                begin_message(end)
            done = walk_rows(buf, head.rows_at, end, desc, large)
        nodes, unset, nrows = done
    except DecodeError as exc:
        raise row_path_error(buf, protocol_version, prepared, policy, exc) from None
    return Page(desc.columns, nodes, unset, nrows, head.paging_state, head.flags,
                head.new_metadata_id)


def vectorised_rows(buf: bytes, p: i64, end: i64, desc: RowsDesc,
                    large: bool) -> tuple[list[Node], list[list[int]], int] | None:
    """Interpreted with numpy: the rows decoded by ``cqlcodec.columnar.vectorised``
    (None for a page it leaves to :func:`walk_rows`). Compiled: None."""
    if COMPILED:
        return None
    if end - p >= 4 and read_i32_be(buf, p) * len(desc.codecs) < NUMPY_MIN_CELLS:
        return None  # numpy's fixed cost per page exceeds the walk's cost per cell
    try:
        from cqlcodec.columnar.vectorised import decode_rows
    except ImportError:  # no numpy
        return None
    try:
        return decode_rows(buf, p, end, desc, large)
    except DecodeError:
        raise
    except (ValueError, IndexError, TypeError, OverflowError, MemoryError):
        return None  # the walk decodes the page (or names what is wrong with it)


def row_path_error(buf: bytes, protocol_version: int, prepared: Prepared | None,
                   policy: ColumnEncryptionPolicy | None, exc: DecodeError) -> DecodeError:
    """The error the row path raises for this body (the first bad cell), else ``exc``."""
    try:
        decode_result(buf, protocol_version, prepared, column_encryption_policy=policy)
    except DecodeError as row_exc:
        return row_exc
    return exc


def walk_rows(buf: bytes, p: i64, end: i64, desc: RowsDesc,
              large: bool) -> tuple[list[Node], list[list[int]], int]:
    """Walk ``[int] rows_count`` and the cells at ``p``; every builder finished.

    The slot walk (:func:`slot_walk`) first; :func:`checked_walk` for a page it
    leaves (a cell it does not take, encrypted columns)."""
    nrows, pos = rows_count(buf, p, end, len(desc.codecs))
    if nrows > 0 and not encrypted_columns(desc):
        fast = slot_walk(buf, pos, end, nrows, desc, large)
        if fast is not None:
            return fast, [[] for _c in desc.codecs], nrows
    return checked_walk(buf, pos, end, nrows, desc, large)


def encrypted_columns(desc: RowsDesc) -> bool:
    """True if a column of ``desc`` is decrypted by a column encryption policy."""
    for codec in desc.codecs:
        if isinstance(codec, DecryptingCodec):
            return True
    return False


def rows_count(buf: bytes, p: i64, end: i64, ncols: i64) -> tuple[i64, i64]:
    """The ``[int] rows_count`` at ``p``, checked against the bytes that remain, and
    the position of the first cell."""
    if end - p < 4:
        read_int(buf, p, end, "RESULT rows_count")  # raises, naming what is missing
    raw_rows: int = read_i32_be(buf, p)
    nrows: i64 = raw_rows
    pos: i64 = p + 4
    if nrows < 0:
        raise malformed("rows", pos - 4, f"negative rows_count {nrows}")
    if nrows > 0:
        if ncols == 0:
            raise malformed("rows", pos - 4, f"rows_count {nrows} for a result with no columns")
        if nrows > (end - pos) // (4 * ncols):
            raise malformed("rows", pos - 4,
                            f"rows_count {nrows} x {ncols} columns cannot fit in the "
                            f"{end - pos} bytes that remain")
    return nrows, pos


def checked_walk(buf: bytes, pos: i64, end: i64, nrows: i64, desc: RowsDesc,
                 large: bool) -> tuple[list[Node], list[list[int]], int]:
    """The cells of ``nrows`` rows at ``pos``, every length checked as it is read: not
    set cells, encrypted columns, and the DecodeError of the first bad cell."""
    codecs = desc.codecs
    ncols: i64 = len(codecs)
    nodes: list[Node] = []
    sinks: list[Sink] = []
    decrypt: list[DecryptingCodec | None] = []
    encrypted = False
    for c in range(ncols):
        codec = codecs[c]
        if isinstance(codec, DecryptingCodec):
            policy: Any = codec.policy
            node = make_node(policy.column_type(codec.key), large)
            decrypt.append(codec)
            encrypted = True
        else:
            node = make_node(desc.columns[c].type, large)
            decrypt.append(None)
        nodes.append(node)
        sinks.append(make_sink(node, decrypt[c] is not None))
    unset: list[list[int]] = [[] for _c in range(ncols)]
    unset_ok = desc.protocol_version >= 4
    steps = segments(sinks)
    r: i64 = 0
    c2: i64 = 0
    cell: i64 = pos
    try:
        while r < nrows:
            for seg in steps:
                c2 = seg.first
                cell = pos
                if seg.run:
                    stride = seg.stride
                    if pos + stride <= end and not seg.direct:
                        same = True  # every length word of the run is its width
                        j: i64 = 0
                        while j < stride:
                            if (read_i64_le(buf, pos + j) & read_i64_le(seg.mask, j)) \
                                    != read_i64_le(seg.pattern, j):
                                same = False
                            j += 8
                        if same:
                            write_i64_le(seg.where, pos)
                            pos += seg.size
                            continue
                    if seg.direct:
                        pos = seg.direct_cells(buf, pos, end, r, desc, unset, unset_ok)
                    else:
                        pos = seg.cells(buf, pos, end, r, desc, unset, unset_ok)
                        seg.go_direct(buf, r)
                    continue
                s = seg.sink
                if pos + 4 > end:
                    raise _cell_error(desc, r, c2, cell, "truncated: no [int] length left")
                raw_n: int = read_i32_be(buf, pos)
                n: i64 = raw_n
                pos += 4
                if n >= 0:
                    if n > end - pos:
                        raise _cell_error(desc, r, c2, cell,
                                          f"value of {n} bytes but only {end - pos} remain")
                    if s.kind == S_BYTES:
                        w = s.data
                        copy_value(w, buf, pos, n)
                        write_i32_le(s.offsets, i32(len(w)))
                        if s.nulls > 0:
                            s.valid.append(1)
                    else:
                        dec = decrypt[c2] if encrypted else None
                        if dec is None:
                            s.node.append(buf, pos, n)
                        else:
                            plain = plaintext(dec, buf, pos, n)
                            s.node.append(plain, 0, len(plain))
                    pos += n
                elif n == -1:
                    s.null(r)
                elif n == -2:
                    if not unset_ok:
                        raise _cell_error(desc, r, c2, cell,
                                          "length -2 (not set) needs protocol v4 or later")
                    s.null(r)
                    unset[c2].append(r)
                else:
                    raise _cell_error(desc, r, c2, cell, f"invalid value length {n}")
            r += 1
        for seg in steps:
            if seg.run and not seg.direct:
                seg.spread(buf, nrows)
    except DecodeError as exc:
        if exc.column is not None:
            raise
        raise _wrap_error(desc, r, c2, cell, exc)
    except Exception as exc:
        raise _wrap_error(desc, r, c2, cell, exc)
    for c in range(ncols):
        sinks[c].close(nrows)
    if pos != end:
        raise malformed("RESULT rows", pos, f"{end - pos} trailing bytes after {nrows} rows")
    for c in range(ncols):
        try:
            nodes[c].finish()
        except DecodeError as exc:
            raise _wrap_error(desc, 0, c, 0, exc)
    return nodes, unset, nrows


def slot_walk(buf: bytes, pos: i64, end: i64, nrows: i64, desc: RowsDesc,
              large: bool) -> list[Node] | None:
    """The rows at ``pos`` through :mod:`cqlcodec.columnar.slots` (every builder
    finished), or None when a cell needs the checked walk: then nothing of this
    attempt is kept, and :func:`walk_rows` walks the page again from the start."""
    ncols: i64 = len(desc.columns)
    nodes = [make_node(desc.columns[c].type, large) for c in range(ncols)]
    groups: list[SlotGroup] = []
    for first in range(0, ncols, SLOTS):
        part = nodes[first: first + SLOTS]
        kinds: list[int] = []
        widths: list[int] = []
        data: list[BytesWriter] = []
        offsets: list[BytesWriter] = []
        for node in part:
            kind = sink_kind(node)
            width = sink_width(node, kind) if kind != S_NODE else -1
            kinds.append(kind)
            widths.append(width if width >= 0 else NO_WIDTH)
            data.append(sink_data(node) if kind != S_NODE else node.valid)
            offsets.append(sink_offsets(node) if kind != S_NODE else node.valid)
        groups.append(SlotGroup(part, kinds, widths, data, offsets))
    try:
        if len(groups) == 1:
            pos = groups[0].walk(buf, pos, end, nrows)
        else:
            r: i64 = 0
            while r < nrows:
                for g in groups:
                    pos = g.row(buf, pos, end, r)
                r += 1
    except Exception:  # SlotStop, or an error the checked walk names
        return None
    if pos != end:
        return None
    for g in groups:
        g.close(nrows)
    for c in range(ncols):
        try:
            nodes[c].finish()
        except DecodeError as exc:
            raise _wrap_error(desc, 0, c, 0, exc)
    return nodes


def plaintext(dec: DecryptingCodec, buf: bytes, pos: i64, n: i64) -> bytes:
    """The decrypted content of one non-null cell of an encrypted column."""
    policy: Any = dec.policy  # untyped call: a bytearray/memoryview result is accepted too
    plain: object = policy.decrypt(dec.key, buf[pos: pos + n])
    if isinstance(plain, bytes):
        return plain
    if isinstance(plain, (bytearray, memoryview)):
        return bytes(plain)
    raise TypeError(f"the column encryption policy's decrypt() returned "
                    f"{type(plain).__name__}, not bytes")
