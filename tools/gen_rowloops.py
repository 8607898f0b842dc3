"""Generate cqlcodec/protocol/rowloops.py: one row loop per column count.

    python tools/gen_rowloops.py          write the file
    python tools/gen_rowloops.py --check  exit 1 if the checked-in file differs

mypyc compiles a loop that reads a fixed number of cells into locals and builds
the row tuple from them far faster than a loop over a per-row list, so the row
decoder has one branch per column count up to MAX_COLUMNS. Those branches are
written out here from a single template (CELL_TEMPLATE) and never by hand.
"""

from __future__ import annotations

import sys
from pathlib import Path

from codegen import write_or_check

MAX_COLUMNS = 8
TARGET = Path(__file__).resolve().parent.parent / "cqlcodec" / "protocol" / "rowloops.py"

HEADER = '''\
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

MAX_COLUMNS: Final = {max_columns}
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
'''

# One cell of a row: the [int] length, then null (-1), unset (-2, v4+) or content.
CELL_TEMPLATE = '''\
                if pos + 4 > end:
                    raise _Stop()
                n = read_i32_be(buf, pos)
                pos += 4
                if n >= 0:
                    if n > end - pos:
                        raise _Stop()
                    v{i} = c{i}.decode(buf, pos, n)
                    pos += n
                elif n == -1:
                    v{i} = None
                elif n == -2 and unset_ok:
                    v{i} = _UNSET
                else:
                    raise _Stop()
'''

FOOTER = '''\
    except Exception:
        return r, start
    return r, pos
'''


def branch(ncols: int) -> str:
    """The loop for rows of ``ncols`` columns."""
    keyword = "if" if ncols == 1 else "elif"
    out = [f"        {keyword} ncols == {ncols}:\n"]
    out += [f"            c{i} = cs[{i}]\n" for i in range(ncols)]
    out.append("            while r < nrows:\n")
    out.append("                start = pos\n")
    out += [CELL_TEMPLATE.format(i=i) for i in range(ncols)]
    items = ", ".join(f"v{i}" for i in range(ncols))
    if ncols == 1:
        items += ","
    out.append(f"                rows[r] = ({items})\n")
    out.append("                r += 1\n")
    return "".join(out)


def render() -> str:
    """The whole module text."""
    body = "".join(branch(n) for n in range(1, MAX_COLUMNS + 1))
    return HEADER.format(max_columns=MAX_COLUMNS) + body + FOOTER


def main(argv: list[str] | None = None) -> int:
    return write_or_check(argv, TARGET, render(), "gen_rowloops.py", __doc__.splitlines()[0])


if __name__ == "__main__":
    sys.exit(main())
