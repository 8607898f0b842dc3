"""How a table's rows spread over the token ring, from the server's ``system.size_estimates``.

Each node keeps, per table and per token range it owns as primary replica, an estimate
of the partitions in the range and their mean size (refreshed every few minutes).
:class:`DensityProfile` turns those rows into estimated partitions per token over the
whole ring, so that :func:`cqlcodec.driver.plan_splits` can cut the ring into pieces of
equal estimated size rather than of equal token width (they differ for tables with a few
big partitions, or loaded by token ranges). Stretches of the ring with no estimate (the
ranges of other nodes) get the mean density of the estimated ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from cqlcodec.columnar.batch import ColumnBatch

__all__ = ["DensityProfile", "RowEstimate", "SizeEstimate", "partitions_in", "sample_page"]

RING_MIN: Final = -(2**63)
RING_MAX: Final = 2**63 - 1
# share of the mean density every stretch keeps when planning cuts: an estimate of 0 that
# has gone stale (rows written since) still gets cut, only more coarsely
STALE_FLOOR: Final = 0.1


@dataclass(frozen=True)
class SizeEstimate:
    """One row of ``system.size_estimates``: ``partitions`` partitions of ``mean_bytes``
    bytes each in the token range ``(start, end]`` (which wraps around when start >= end)."""

    start: int
    end: int
    partitions: int
    mean_bytes: int


@dataclass(frozen=True)
class _Stretch:
    lo: int
    hi: int
    density: float  # partitions per token
    mean_bytes: float


class DensityProfile:
    """Estimated partitions (and bytes) per token over ``(-2**63, 2**63 - 1]``."""

    def __init__(self, estimates: Sequence[SizeEstimate]) -> None:
        pieces: list[_Stretch] = []
        for e in estimates:
            count, size = max(0, e.partitions), max(0, e.mean_bytes)
            if e.start < e.end:
                pieces.append(_Stretch(e.start, e.end, count / (e.end - e.start), size))
            else:  # wraps around: (start, max] and (min, end], the partitions shared by width
                width = (RING_MAX - e.start) + (e.end - RING_MIN)
                if width <= 0:
                    continue
                if e.start < RING_MAX:
                    pieces.append(_Stretch(e.start, RING_MAX, count / width, size))
                if e.end > RING_MIN:
                    pieces.append(_Stretch(RING_MIN, e.end, count / width, size))
        pieces.sort(key=lambda s: s.lo)
        known: list[_Stretch] = []
        for piece in pieces:  # overlapping rows (several nodes' views): the first one counts
            lo = max(piece.lo, known[-1].hi) if known else piece.lo
            if lo < piece.hi:
                known.append(_Stretch(lo, piece.hi, piece.density, piece.mean_bytes))
        width = sum([s.hi - s.lo for s in known])
        partitions = sum([s.density * (s.hi - s.lo) for s in known], 0.0)
        self.has_estimates: bool = width > 0 and partitions > 0
        """Whether the server estimated any partitions for the table."""
        self.mean_density: float = partitions / width if self.has_estimates else 0.0
        self.mean_bytes: float = (sum([s.density * (s.hi - s.lo) * s.mean_bytes for s in known], 0.0)
                                  / partitions if self.has_estimates else 0.0)
        self._stretches: list[_Stretch] = []
        at = RING_MIN
        for s in known:  # fill the gaps with the mean density
            if s.lo > at:
                self._stretches.append(_Stretch(at, s.lo, self.mean_density, self.mean_bytes))
            self._stretches.append(s)
            at = s.hi
        if at < RING_MAX:
            self._stretches.append(_Stretch(at, RING_MAX, self.mean_density, self.mean_bytes))

    def rows(self, start: int, end: int) -> float:
        """Estimated partitions in ``(start, end]``."""
        return sum([s.density * w for s, w in self._overlaps(start, end)], 0.0)

    def bytes(self, start: int, end: int) -> float:
        """Estimated bytes in ``(start, end]``."""
        return sum([s.density * w * s.mean_bytes for s, w in self._overlaps(start, end)], 0.0)

    def cuts(self, pieces: int) -> list[int]:
        """Sorted tokens strictly inside the ring that cut it into ``pieces`` parts of
        equal estimated partitions (equal token widths when there is no estimate)."""
        ring = RING_MAX - RING_MIN
        if not self.has_estimates:
            return sorted({RING_MIN + ring * k // pieces for k in range(1, pieces)})
        floor = STALE_FLOOR * self.mean_density
        weights = [(s, (1 - STALE_FLOOR) * s.density + floor) for s in self._stretches]
        total = sum([d * (s.hi - s.lo) for s, d in weights], 0.0)
        cuts: set[int] = set()
        k, done = 1, 0.0
        for s, density in weights:
            share = density * (s.hi - s.lo)
            while k < pieces and done + share >= total * k / pieces:
                offset = int((total * k / pieces - done) / density)
                cut = min(max(s.lo + offset, s.lo), s.hi)
                if RING_MIN < cut < RING_MAX:
                    cuts.add(cut)
                k += 1
            done += share
        return sorted(cuts)

    def _overlaps(self, start: int, end: int) -> list[tuple[_Stretch, int]]:
        return [(s, min(end, s.hi) - max(start, s.lo)) for s in self._stretches
                if s.lo < end and start < s.hi]


SAMPLE_ROWS: Final = 20_000
"""Rows of the first pages :class:`RowEstimate` counts partitions in."""


def partitions_in(keys: Sequence[Sequence[object]]) -> int:
    """The partitions among rows whose partition-key columns are ``keys`` (one sequence
    of values per key column, rows in token order, so a partition's rows are
    contiguous): the number of runs of equal keys."""
    if not keys or not keys[0]:
        return 0
    runs = 1
    columns = list(keys)
    for row in range(1, len(columns[0])):
        if any(c[row] != c[row - 1] for c in columns):
            runs += 1
    return runs


class RowEstimate:
    """A table's estimated rows from its estimated partitions (``system.size_estimates``
    counts partitions). Without clustering columns a partition is a row. With them the
    partitions are scaled by the rows per partition seen: in the first pages read
    (:meth:`page`, up to :data:`SAMPLE_ROWS` rows), else in the splits finished
    (:meth:`split_done`: their rows over their estimated partitions). :attr:`rows` is
    None while nothing has been seen. Thread-safe enough for progress: the counts
    only grow."""

    def __init__(self, partitions: int, clustered: bool) -> None:
        self.partitions = max(0, partitions)
        self.clustered = clustered
        self._page_rows = 0
        self._page_partitions = 0
        self._split_rows = 0
        self._split_partitions = 0

    @property
    def sampling(self) -> bool:
        """Whether :meth:`page` still wants pages."""
        return self.clustered and self._page_rows < SAMPLE_ROWS

    def page(self, rows: int, partitions: int) -> None:
        """A page of ``rows`` rows held ``partitions`` partitions (a partition cut by
        the page's end counts in both pages: a small underestimate of rows per partition)."""
        if self.sampling and rows > 0 and partitions > 0:
            self._page_rows += rows
            self._page_partitions += partitions

    def split_done(self, rows: int, estimated_partitions: int) -> None:
        """A split estimated at ``estimated_partitions`` partitions held ``rows`` rows."""
        if estimated_partitions > 0:
            self._split_rows += rows
            self._split_partitions += estimated_partitions

    @property
    def rows(self) -> int | None:
        """The estimated rows of the table; None when the table has clustering columns
        and no page or finished split has shown its rows per partition yet."""
        if not self.clustered:
            return self.partitions
        if self._page_partitions:
            return round(self.partitions * self._page_rows / self._page_partitions)
        if self._split_partitions:
            return round(self.partitions * self._split_rows / self._split_partitions)
        return None


def sample_page(estimate: RowEstimate, batch: ColumnBatch, keys: Sequence[str]) -> None:
    """Counts the partitions of ``batch`` (a page, rows in token order) into
    ``estimate`` while it samples, when the page holds every partition-key column."""
    if not estimate.sampling or not len(batch):
        return
    names = batch.names
    if keys and all(k in names for k in keys):
        estimate.page(len(batch), partitions_in([batch.column(k).to_pylist() for k in keys]))
