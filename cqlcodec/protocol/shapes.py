"""Type aliases shared by the row decoders (a leaf: it imports nothing from cqlcodec)."""

from __future__ import annotations

from typing import Any, Callable

Row = tuple[object, ...]
"""One decoded row: a cell value per column, in column order."""

FastRows = Callable[[bytes, int, int, int, int, list[Row]], tuple[int, int]]
"""Interpreted fast path: (buf, pos, end, first row, nrows, rows) -> (next row, next pos).

It decodes rows from the first row on and stops at the end or at the first row it
cannot decode (returning that row's index and start offset, with nothing stored)."""

RowFactory = Callable[[tuple[str, ...], list[Row]], list[Any]]
"""Turns (column names, rows as tuples) into the rows a result returns."""
