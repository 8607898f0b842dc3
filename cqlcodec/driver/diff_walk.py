"""The merge walk of one split of a diff: the source's and the target's rows of the same
token range, both in the server's order (token, then clustering order), read side by
side and matched by primary key as they stream.

The side whose current row has the lower token is read next (on a tie, the side with
fewer unmatched rows). A row whose key the other side holds unmatched is compared with
it at once; otherwise it waits. Once both sides have passed a token, the rows still
waiting with a lower token are final: missing from the target (source rows) or extra in
the target (target rows). So what waits is the rows of the current token alone, plus
the differences: memory is bounded by the pages in flight, not the table. Partitions
are tracked the same way: their static cells are compared once, when both sides have
passed their token, and a partition that holds static cells but no row is one
difference of its own (keyed by its partition key).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import count, repeat
from typing import Any, Final

from cqlcodec.columnar.batch import ColumnBatch
from cqlcodec.driver.diff_values import DiffLayout

__all__ = ["END_TOKEN", "Found", "SplitWalk"]

END_TOKEN: Final = 2 ** 63
"""Beyond every token: where a side that has no more rows stands."""


@dataclass
class Found:
    """One difference found by a walk: ``kind`` (``missing``, ``extra``, ``differs``),
    the token, the key (JSON values by column name; the partition key alone for
    ``partition``, a partition's static cells), the differing cells (``{column:
    (source JSON, target JSON)}``) and the rows of each side that were compared
    (tuples as the walk read them, ``None`` on the side that lacks the row)."""

    kind: str
    token: int
    key: dict[str, Any]
    columns: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    source: tuple[Any, ...] | None = None
    target: tuple[Any, ...] | None = None
    partition: bool = False


class _Stream:
    """The rows of one side's pages, one at a time: ``row`` (None at the end) and its
    ``token`` (:data:`END_TOKEN` at the end). With ``keep_pages`` each row ends with its
    page and its index in the page."""

    def __init__(self, pages: Iterable[ColumnBatch], keep_pages: bool) -> None:
        self._pages = iter(pages)
        self._rows: Iterator[tuple[Any, ...]] = iter(())
        self._keep = keep_pages
        self.row: tuple[Any, ...] | None = None
        self.token = END_TOKEN
        self.count = 0
        self.advance()

    def advance(self) -> None:
        while True:
            row = next(self._rows, None)
            if row is not None:
                self.row = row
                self.token = row[0]
                self.count += 1
                return
            page = next(self._pages, None)
            if page is None:
                self.row = None
                self.token = END_TOKEN
                return
            if len(page):
                columns: list[Iterable[Any]] = [c.to_pylist() for c in page]
                if self._keep:
                    columns += [repeat(page), count()]
                self._rows = zip(*columns)


class SplitWalk:
    """Iterate it for the differences (:class:`Found`) between the source's ``pages``
    and the target's ``pages`` of one token range; ``source_rows`` and
    ``target_rows`` count the rows read (a partition's static-only row included)."""

    def __init__(self, layout: DiffLayout, source: Iterable[ColumnBatch],
                 target: Iterable[ColumnBatch], float_tolerance: float = 0.0,
                 ttl_tolerance: float = 0.0, keep_pages: bool = False) -> None:
        self._layout = layout
        self._a = _Stream(source, keep_pages)
        self._b = _Stream(target, keep_pages)
        self._float = float_tolerance
        self._ttl = ttl_tolerance
        self._rows: tuple[OrderedDict[tuple[Any, ...], tuple[Any, ...]], ...] = (
            OrderedDict(), OrderedDict())
        # partition key -> [first row, has clustering rows]
        self._parts: tuple[OrderedDict[tuple[Any, ...], list[Any]], ...] = (
            OrderedDict(), OrderedDict())

    @property
    def source_rows(self) -> int:
        """Rows read from the source so far."""
        return self._a.count

    @property
    def target_rows(self) -> int:
        """Rows read from the target so far."""
        return self._b.count

    def __iter__(self) -> Iterator[Found]:
        layout = self._layout
        a, b = self._a, self._b
        sides = (layout.source, layout.target)
        waiting = self._rows
        clustered = bool(layout.clustering_key)
        partition_end = 1 + len(layout.partition_key)
        passed = -END_TOKEN
        while a.row is not None or b.row is not None:
            i = 0 if a.token < b.token or (a.token == b.token
                                           and len(waiting[0]) <= len(waiting[1])) else 1
            stream = a if i == 0 else b
            row = stream.row
            assert row is not None
            side = sides[i]
            key = layout.key_of(row, side)
            if clustered:
                parts = self._parts[i]
                part = parts.get(key[:partition_end])
                if part is None:
                    parts[key[:partition_end]] = part = [row, False]
                if layout.static_only(row, side):
                    stream.advance()
                    continue
                part[1] = True
            other = waiting[1 - i].pop(key, None)
            if other is None:
                waiting[i][key] = row
            else:
                src, dst = (row, other) if i == 0 else (other, row)
                cells = layout.compare(src, dst, False, self._float, self._ttl)
                if cells:
                    yield Found("differs", key[0], layout.key_json(src, sides[0]), cells, src, dst)
            stream.advance()
            low = a.token if a.token < b.token else b.token
            if low != passed:  # a partition's token passed on both sides
                passed = low
                yield from self._flush(low)
        yield from self._flush(END_TOKEN + 1)

    def _flush(self, below: int) -> Iterator[Found]:
        """The rows and partitions waiting with a token below ``below``: final now."""
        layout = self._layout
        theirs = self._parts[1]
        for i, kind in ((0, "missing"), (1, "extra")):
            side = layout.source if i == 0 else layout.target
            for key, row in _due(self._rows[i], below):
                yield Found(kind, key[0], layout.key_json(row, side), {},
                            row if i == 0 else None, row if i == 1 else None)
        for i, kind in ((0, "missing"), (1, "extra")):
            side = layout.source if i == 0 else layout.target
            for key, (row, has_rows) in _due(self._parts[i], below):
                other = theirs.pop(key, None) if i == 0 else None
                if other is not None:
                    if layout.static:
                        cells = layout.compare(row, other[0], True, self._float, self._ttl)
                        if cells:
                            yield Found("differs", key[0], layout.key_json(row, side, True),
                                        cells, row, other[0], partition=True)
                elif not has_rows:
                    yield Found(kind, key[0], layout.key_json(row, side, True), {},
                                row if i == 0 else None, row if i == 1 else None,
                                partition=True)


def _due(waiting: OrderedDict[tuple[Any, ...], Any], below: int) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """Takes out the entries of ``waiting`` (in token order) whose token is below ``below``."""
    while waiting:
        key = next(iter(waiting))
        if key[0] >= below:
            return
        yield key, waiting.pop(key)
