"""The splits of a counter copy that an earlier run left cut short, made equal to the
source on resume (:func:`cqlcodec.driver.copy_table` with ``resume=True``).

A counter is written as an increment, and an increment sent twice adds twice; a split
whose writes were cut short (a kill, a failure) has had an unknown part of its
increments applied. Sending them again would add that part twice. So such a split is
read again from both tables side by side (the diff's merge walk,
:mod:`cqlcodec.driver.diff_walk`) and each row gets the difference ``source - target``
of each counter (:class:`cqlcodec.driver.diff_counters.CounterIncrements`): a row whose
increments had arrived gets nothing, one whose had not gets them all. That is exact
when the target's counters of that split held nothing before the copy (a copy into an
empty table, which the command line checks and warns about otherwise) and no one else
increments them meanwhile. A settling cut short is itself settled again on the next
resume: it reads the counts again first.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from cassandra.cluster import Session

from cqlcodec.driver.copy_errors import CopyError
from cqlcodec.driver.diff_counters import CounterIncrements
from cqlcodec.driver.diff_read import DiffOptions, DiffTables
from cqlcodec.driver.diff_values import DiffError
from cqlcodec.driver.splits import TokenSplit

if TYPE_CHECKING:
    from cqlcodec.driver.copy import CopyResult, CopyState

__all__ = ["settle_counters"]


def settle_counters(source_session: Session, source: str, target_session: Session,
                    target: str, splits: Sequence[tuple[int, TokenSplit]], state: CopyState,
                    result: CopyResult, options: DiffOptions,
                    write_consistency: int | None) -> None:
    """Makes the counters of each ``(index, split)`` of ``target`` equal to
    ``source``'s (``options``: the columns, the source's condition, the reads'
    settings), recording each split in ``state`` and ``result`` once settled."""
    try:
        tables = DiffTables(source_session, source, target_session, target, options,
                            target_where=False)
    except DiffError as exc:
        raise CopyError(str(exc)) from None
    increments = CounterIncrements(target_session, target, tables.layout,
                                   tables.counter_names, write_consistency)
    for index, split in splits:
        sent = increments.rows
        walk = tables.walk(split, options)
        for found in walk:
            increments.add(found)
        try:
            increments.flush()
        except DiffError as exc:
            raise CopyError(f"split {index}: {exc}; resume again to settle it",
                            result) from None
        result.rows += walk.source_rows
        result.requests += increments.rows - sent
        result.splits_done += 1
        state.finished(index, walk.source_rows)
