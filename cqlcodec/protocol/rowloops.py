# GENERATED FILE - DO NOT EDIT. Made by tools/gen_rowloops.py from its template;
# change the template and run `python tools/gen_rowloops.py` (a test checks this file).
"""Row loops specialised by column count, for the compiled build.

Each loop reads the cells of a row inline (``[int]`` length, then the column's
deserializer) and builds the row tuple directly, with no per-row list. A loop
stops at the first problem and returns the index and start offset of the row
that failed, so the caller can decode from there with the checked loop in
``cqlcodec.protocol.rows``, which names the column, row and offset. Measured on W5 (c),
1000 rows x 5 columns, compiled: about 100 ns per row, against 160 with a list
per row and ``tuple(list)`` and 110 with a cell-reading helper function.
"""

from __future__ import annotations

from typing import Final

from mypy_extensions import i64

from cqlcodec.codecs.base import Codec
from cqlcodec.protocol.shapes import Row
from cqlcodec.runtime.buffers import read_i32_be
from cqlcodec.values import UNSET

MAX_COLUMNS: Final = 8
"""Rows with more columns than this use the generic loop."""

_UNSET: Final = UNSET


class _Stop(Exception):
    """Internal: a cell the fast loops leave to the checked loop."""


def decode_rows_fixed(buf: bytes, pos: i64, end: i64, r: i64, nrows: i64, cs: list[Codec],
                      unset_ok: bool, rows: list[Row]) -> tuple[i64, i64]:
    """Decode rows ``r..nrows`` of ``1 <= len(cs) <= MAX_COLUMNS`` columns into ``rows``.

    Returns (rows decoded so far, position): ``nrows`` and the end position, or
    the index and start offset of the first row that could not be decoded.
    """
    ncols = len(cs)
    start = pos
    n: int = 0
    try:
        if ncols == 1:
            c0 = cs[0]
            while r < nrows:
                start = pos
                if pos + 4 > end:
                    raise _Stop()
                n = read_i32_be(buf, pos)
                pos += 4
                if n >= 0:
                    if n > end - pos:
                        raise _Stop()
                    v0 = c0.decode(buf, pos, n)
                    pos += n
                elif n == -1:
                    v0 = None
                elif n == -2 and unset_ok:
                    v0 = _UNSET
                else:
                    raise _Stop()
                rows[r] = (v0,)
                r += 1
        elif ncols == 2:
            c0 = cs[0]
            c1 = cs[1]
            while r < nrows:
                start = pos
                if pos + 4 > end:
                    raise _Stop()
                n = read_i32_be(buf, pos)
                pos += 4
                if n >= 0:
                    if n > end - pos:
                        raise _Stop()
                    v0 = c0.decode(buf, pos, n)
                    pos += n
                elif n == -1:
                    v0 = None
                elif n == -2 and unset_ok:
                    v0 = _UNSET
                else:
                    raise _Stop()
                if pos + 4 > end:
                    raise _Stop()
                n = read_i32_be(buf, pos)
                pos += 4
                if n >= 0:
                    if n > end - pos:
                        raise _Stop()
                    v1 = c1.decode(buf, pos, n)
                    pos += n
                elif n == -1:
                    v1 = None
                elif n == -2 and unset_ok:
                    v1 = _UNSET
                else:
                    raise _Stop()
                rows[r] = (v0, v1)
                r += 1
        elif ncols == 3:
            c0 = cs[0]
            c1 = cs[1]
            c2 = cs[2]
            while r < nrows:
                start = pos
                if pos + 4 > end:
                    raise _Stop()
                n = read_i32_be(buf, pos)
                pos += 4
                if n >= 0:
                    if n > end - pos:
                        raise _Stop()
                    v0 = c0.decode(buf, pos, n)
                    pos += n
                elif n == -1:
                    v0 = None
                elif n == -2 and unset_ok:
                    v0 = _UNSET
                else:
                    raise _Stop()
                if pos + 4 > end:
                    raise _Stop()
                n = read_i32_be(buf, pos)
                pos += 4
                if n >= 0:
                    if n > end - pos:
                        raise _Stop()
                    v1 = c1.decode(buf, pos, n)
                    pos += n
                elif n == -1:
                    v1 = None
                elif n == -2 and unset_ok:
                    v1 = _UNSET
                else:
                    raise _Stop()
                if pos + 4 > end:
                    raise _Stop()
                n = read_i32_be(buf, pos)
                pos += 4
                if n >= 0:
                    if n > end - pos:
                        raise _Stop()
                    v2 = c2.decode(buf, pos, n)
                    pos += n
                elif n == -1:
                    v2 = None
                elif n == -2 and unset_ok:
                    v2 = _UNSET
                else:
                    raise _Stop()
                rows[r] = (v0, v1, v2)
                r += 1
        elif ncols == 4:
            c0 = cs[0]
            c1 = cs[1]
            c2 = cs[2]
            c3 = cs[3]
            while r < nrows:
                start = pos
                if pos + 4 > end:
                    raise _Stop()
                n = read_i32_be(buf, pos)
                pos += 4
                if n >= 0:
                    if n > end - pos:
                        raise _Stop()
                    v0 = c0.decode(buf, pos, n)
                    pos += n
                elif n == -1:
                    v0 = None
                elif n == -2 and unset_ok:
                    v0 = _UNSET
                else:
                    raise _Stop()
                if pos + 4 > end:
                    raise _Stop()
                n = read_i32_be(buf, pos)
                pos += 4
                if n >= 0:
                    if n > end - pos:
                        raise _Stop()
                    v1 = c1.decode(buf, pos, n)
                    pos += n
                elif n == -1:
                    v1 = None
                elif n == -2 and unset_ok:
                    v1 = _UNSET
                else:
                    raise _Stop()
                if pos + 4 > end:
                    raise _Stop()
                n = read_i32_be(buf, pos)
                pos += 4
                if n >= 0:
                    if n > end - pos:
                        raise _Stop()
                    v2 = c2.decode(buf, pos, n)
                    pos += n
                elif n == -1:
                    v2 = None
                elif n == -2 and unset_ok:
                    v2 = _UNSET
                else:
                    raise _Stop()
                if pos + 4 > end:
                    raise _Stop()
                n = read_i32_be(buf, pos)
                pos += 4
                if n >= 0:
                    if n > end - pos:
                        raise _Stop()
                    v3 = c3.decode(buf, pos, n)
                    pos += n
                elif n == -1:
                    v3 = None
                elif n == -2 and unset_ok:
                    v3 = _UNSET
                else:
                    raise _Stop()
                rows[r] = (v0, v1, v2, v3)
                r += 1
        elif ncols == 5:
            c0 = cs[0]
            c1 = cs[1]
            c2 = cs[2]
            c3 = cs[3]
            c4 = cs[4]
            while r < nrows:
                start = pos
                if pos + 4 > end:
                    raise _Stop()
                n = read_i32_be(buf, pos)
                pos += 4
                if n >= 0:
                    if n > end - pos:
                        raise _Stop()
                    v0 = c0.decode(buf, pos, n)
                    pos += n
                elif n == -1:
                    v0 = None
                elif n == -2 and unset_ok:
                    v0 = _UNSET
                else:
                    raise _Stop()
                if pos + 4 > end:
                    raise _Stop()
                n = read_i32_be(buf, pos)
                pos += 4
                if n >= 0:
                    if n > end - pos:
                        raise _Stop()
                    v1 = c1.decode(buf, pos, n)
                    pos += n
                elif n == -1:
                    v1 = None
                elif n == -2 and unset_ok:
                    v1 = _UNSET
                else:
                    raise _Stop()
                if pos + 4 > end:
                    raise _Stop()
                n = read_i32_be(buf, pos)
                pos += 4
                if n >= 0:
                    if n > end - pos:
                        raise _Stop()
                    v2 = c2.decode(buf, pos, n)
                    pos += n
                elif n == -1:
                    v2 = None
                elif n == -2 and unset_ok:
                    v2 = _UNSET
                else:
                    raise _Stop()
                if pos + 4 > end:
                    raise _Stop()
                n = read_i32_be(buf, pos)
                pos += 4
                if n >= 0:
                    if n > end - pos:
                        raise _Stop()
                    v3 = c3.decode(buf, pos, n)
                    pos += n
                elif n == -1:
                    v3 = None
                elif n == -2 and unset_ok:
                    v3 = _UNSET
                else:
                    raise _Stop()
                if pos + 4 > end:
                    raise _Stop()
                n = read_i32_be(buf, pos)
                pos += 4
                if n >= 0:
                    if n > end - pos:
                        raise _Stop()
                    v4 = c4.decode(buf, pos, n)
                    pos += n
                elif n == -1:
                    v4 = None
                elif n == -2 and unset_ok:
                    v4 = _UNSET
                else:
                    raise _Stop()
                rows[r] = (v0, v1, v2, v3, v4)
                r += 1
        elif ncols == 6:
            c0 = cs[0]
            c1 = cs[1]
            c2 = cs[2]
            c3 = cs[3]
            c4 = cs[4]
            c5 = cs[5]
            while r < nrows:
                start = pos
                if pos + 4 > end:
                    raise _Stop()
                n = read_i32_be(buf, pos)
                pos += 4
                if n >= 0:
                    if n > end - pos:
                        raise _Stop()
                    v0 = c0.decode(buf, pos, n)
                    pos += n
                elif n == -1:
                    v0 = None
                elif n == -2 and unset_ok:
                    v0 = _UNSET
                else:
                    raise _Stop()
                if pos + 4 > end:
                    raise _Stop()
                n = read_i32_be(buf, pos)
                pos += 4
                if n >= 0:
                    if n > end - pos:
                        raise _Stop()
                    v1 = c1.decode(buf, pos, n)
                    pos += n
                elif n == -1:
                    v1 = None
                elif n == -2 and unset_ok:
                    v1 = _UNSET
                else:
                    raise _Stop()
                if pos + 4 > end:
                    raise _Stop()
                n = read_i32_be(buf, pos)
                pos += 4
                if n >= 0:
                    if n > end - pos:
                        raise _Stop()
                    v2 = c2.decode(buf, pos, n)
                    pos += n
                elif n == -1:
                    v2 = None
                elif n == -2 and unset_ok:
                    v2 = _UNSET
                else:
                    raise _Stop()
                if pos + 4 > end:
                    raise _Stop()
                n = read_i32_be(buf, pos)
                pos += 4
                if n >= 0:
                    if n > end - pos:
                        raise _Stop()
                    v3 = c3.decode(buf, pos, n)
                    pos += n
                elif n == -1:
                    v3 = None
                elif n == -2 and unset_ok:
                    v3 = _UNSET
                else:
                    raise _Stop()
                if pos + 4 > end:
                    raise _Stop()
                n = read_i32_be(buf, pos)
                pos += 4
                if n >= 0:
                    if n > end - pos:
                        raise _Stop()
                    v4 = c4.decode(buf, pos, n)
                    pos += n
                elif n == -1:
                    v4 = None
                elif n == -2 and unset_ok:
                    v4 = _UNSET
                else:
                    raise _Stop()
                if pos + 4 > end:
                    raise _Stop()
                n = read_i32_be(buf, pos)
                pos += 4
                if n >= 0:
                    if n > end - pos:
                        raise _Stop()
                    v5 = c5.decode(buf, pos, n)
                    pos += n
                elif n == -1:
                    v5 = None
                elif n == -2 and unset_ok:
                    v5 = _UNSET
                else:
                    raise _Stop()
                rows[r] = (v0, v1, v2, v3, v4, v5)
                r += 1
        elif ncols == 7:
            c0 = cs[0]
            c1 = cs[1]
            c2 = cs[2]
            c3 = cs[3]
            c4 = cs[4]
            c5 = cs[5]
            c6 = cs[6]
            while r < nrows:
                start = pos
                if pos + 4 > end:
                    raise _Stop()
                n = read_i32_be(buf, pos)
                pos += 4
                if n >= 0:
                    if n > end - pos:
                        raise _Stop()
                    v0 = c0.decode(buf, pos, n)
                    pos += n
                elif n == -1:
                    v0 = None
                elif n == -2 and unset_ok:
                    v0 = _UNSET
                else:
                    raise _Stop()
                if pos + 4 > end:
                    raise _Stop()
                n = read_i32_be(buf, pos)
                pos += 4
                if n >= 0:
                    if n > end - pos:
                        raise _Stop()
                    v1 = c1.decode(buf, pos, n)
                    pos += n
                elif n == -1:
                    v1 = None
                elif n == -2 and unset_ok:
                    v1 = _UNSET
                else:
                    raise _Stop()
                if pos + 4 > end:
                    raise _Stop()
                n = read_i32_be(buf, pos)
                pos += 4
                if n >= 0:
                    if n > end - pos:
                        raise _Stop()
                    v2 = c2.decode(buf, pos, n)
                    pos += n
                elif n == -1:
                    v2 = None
                elif n == -2 and unset_ok:
                    v2 = _UNSET
                else:
                    raise _Stop()
                if pos + 4 > end:
                    raise _Stop()
                n = read_i32_be(buf, pos)
                pos += 4
                if n >= 0:
                    if n > end - pos:
                        raise _Stop()
                    v3 = c3.decode(buf, pos, n)
                    pos += n
                elif n == -1:
                    v3 = None
                elif n == -2 and unset_ok:
                    v3 = _UNSET
                else:
                    raise _Stop()
                if pos + 4 > end:
                    raise _Stop()
                n = read_i32_be(buf, pos)
                pos += 4
                if n >= 0:
                    if n > end - pos:
                        raise _Stop()
                    v4 = c4.decode(buf, pos, n)
                    pos += n
                elif n == -1:
                    v4 = None
                elif n == -2 and unset_ok:
                    v4 = _UNSET
                else:
                    raise _Stop()
                if pos + 4 > end:
                    raise _Stop()
                n = read_i32_be(buf, pos)
                pos += 4
                if n >= 0:
                    if n > end - pos:
                        raise _Stop()
                    v5 = c5.decode(buf, pos, n)
                    pos += n
                elif n == -1:
                    v5 = None
                elif n == -2 and unset_ok:
                    v5 = _UNSET
                else:
                    raise _Stop()
                if pos + 4 > end:
                    raise _Stop()
                n = read_i32_be(buf, pos)
                pos += 4
                if n >= 0:
                    if n > end - pos:
                        raise _Stop()
                    v6 = c6.decode(buf, pos, n)
                    pos += n
                elif n == -1:
                    v6 = None
                elif n == -2 and unset_ok:
                    v6 = _UNSET
                else:
                    raise _Stop()
                rows[r] = (v0, v1, v2, v3, v4, v5, v6)
                r += 1
        elif ncols == 8:
            c0 = cs[0]
            c1 = cs[1]
            c2 = cs[2]
            c3 = cs[3]
            c4 = cs[4]
            c5 = cs[5]
            c6 = cs[6]
            c7 = cs[7]
            while r < nrows:
                start = pos
                if pos + 4 > end:
                    raise _Stop()
                n = read_i32_be(buf, pos)
                pos += 4
                if n >= 0:
                    if n > end - pos:
                        raise _Stop()
                    v0 = c0.decode(buf, pos, n)
                    pos += n
                elif n == -1:
                    v0 = None
                elif n == -2 and unset_ok:
                    v0 = _UNSET
                else:
                    raise _Stop()
                if pos + 4 > end:
                    raise _Stop()
                n = read_i32_be(buf, pos)
                pos += 4
                if n >= 0:
                    if n > end - pos:
                        raise _Stop()
                    v1 = c1.decode(buf, pos, n)
                    pos += n
                elif n == -1:
                    v1 = None
                elif n == -2 and unset_ok:
                    v1 = _UNSET
                else:
                    raise _Stop()
                if pos + 4 > end:
                    raise _Stop()
                n = read_i32_be(buf, pos)
                pos += 4
                if n >= 0:
                    if n > end - pos:
                        raise _Stop()
                    v2 = c2.decode(buf, pos, n)
                    pos += n
                elif n == -1:
                    v2 = None
                elif n == -2 and unset_ok:
                    v2 = _UNSET
                else:
                    raise _Stop()
                if pos + 4 > end:
                    raise _Stop()
                n = read_i32_be(buf, pos)
                pos += 4
                if n >= 0:
                    if n > end - pos:
                        raise _Stop()
                    v3 = c3.decode(buf, pos, n)
                    pos += n
                elif n == -1:
                    v3 = None
                elif n == -2 and unset_ok:
                    v3 = _UNSET
                else:
                    raise _Stop()
                if pos + 4 > end:
                    raise _Stop()
                n = read_i32_be(buf, pos)
                pos += 4
                if n >= 0:
                    if n > end - pos:
                        raise _Stop()
                    v4 = c4.decode(buf, pos, n)
                    pos += n
                elif n == -1:
                    v4 = None
                elif n == -2 and unset_ok:
                    v4 = _UNSET
                else:
                    raise _Stop()
                if pos + 4 > end:
                    raise _Stop()
                n = read_i32_be(buf, pos)
                pos += 4
                if n >= 0:
                    if n > end - pos:
                        raise _Stop()
                    v5 = c5.decode(buf, pos, n)
                    pos += n
                elif n == -1:
                    v5 = None
                elif n == -2 and unset_ok:
                    v5 = _UNSET
                else:
                    raise _Stop()
                if pos + 4 > end:
                    raise _Stop()
                n = read_i32_be(buf, pos)
                pos += 4
                if n >= 0:
                    if n > end - pos:
                        raise _Stop()
                    v6 = c6.decode(buf, pos, n)
                    pos += n
                elif n == -1:
                    v6 = None
                elif n == -2 and unset_ok:
                    v6 = _UNSET
                else:
                    raise _Stop()
                if pos + 4 > end:
                    raise _Stop()
                n = read_i32_be(buf, pos)
                pos += 4
                if n >= 0:
                    if n > end - pos:
                        raise _Stop()
                    v7 = c7.decode(buf, pos, n)
                    pos += n
                elif n == -1:
                    v7 = None
                elif n == -2 and unset_ok:
                    v7 = _UNSET
                else:
                    raise _Stop()
                rows[r] = (v0, v1, v2, v3, v4, v5, v6, v7)
                r += 1
    except Exception:
        return r, start
    return r, pos
