"""Counter tables made equal to their source by increments: what ``diff --fix
--fix-counters`` and a resumed counter ``copy`` write.

A counter cannot be written with the source's value or write time: the server only
adds. So a row that is missing from the target or whose counts differ is corrected by
``UPDATE ... SET c = c + ?`` with the difference ``source - target`` of each counter
column (a null counter counts as 0). That is exact when no one else increments those
counters between the read and the write; a counter null in the source and set in the
target becomes 0 (only a deletion makes a counter null again, and the server does not
take a deleted counter's later increments reliably, so none is written). Rows only in
the target are never touched here.

Writing the difference is idempotent in the sense that matters for a resume: the
counts are read again before each correction, so correcting twice adds nothing the
second time.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Final

from cassandra.cluster import Session

from cqlcodec.driver.diff_values import DiffError, DiffLayout
from cqlcodec.driver.diff_walk import Found
from cqlcodec.types.names import quote_name

__all__ = ["CounterIncrements", "counter_columns"]

_IN_FLIGHT: Final = 64


def counter_columns(metadata: Any) -> set[str]:
    """The names of the counter columns of a table's metadata."""
    return {n for n, c in metadata.columns.items() if str(c.cql_type) == "counter"}


def _delta(source: Any, target: Any) -> int:
    return int(source or 0) - int(target or 0)


class CounterIncrements:
    """Writes ``source - target`` of each counter column of the rows found missing or
    differing (:class:`Found` with both rows, or the source's alone) into ``table``
    through ``session``; :attr:`rows` counts the rows (and partitions' static counters)
    written. Requests go ``_IN_FLIGHT`` at a time; a failed one raises
    :class:`DiffError` (a counter write that timed out may or may not have been
    applied: it is never sent again blindly; diff again to see)."""

    def __init__(self, session: Session, table: str, layout: DiffLayout,
                 counters: Iterable[str], consistency_level: int | None = None) -> None:
        self.session = session
        self.table = table
        self.layout = layout
        self.counters = set(counters)
        self.consistency_level = consistency_level
        self.rows = 0
        self._prepared: dict[str, Any] = {}
        self._futures: list[Any] = []

    def add(self, found: Found) -> None:
        """Queues the increments that make ``found``'s target row equal to its source row
        (nothing for an extra row or one whose counts are equal)."""
        if found.kind == "extra" or found.source is None:
            return
        layout = self.layout
        rules = layout.static if found.partition else layout.regular
        src, src_at = found.source, layout.source.position
        dst, dst_at = found.target, layout.target.position
        deltas: list[tuple[str, int]] = []
        for rule in rules:
            if rule.name not in self.counters:
                continue
            before = None if dst is None else dst[dst_at[rule.name]]
            now = src[src_at[rule.name]]
            delta = _delta(now, before)
            if delta or (before is None and now is not None):  # a count of 0 is a cell
                deltas.append((rule.name, delta))
        if not deltas:
            return
        names = layout.partition_key if found.partition else layout.keys
        keys = [src[src_at[n]] for n in names]
        self._send(_update_cql(self.table, [n for n, _ in deltas], names),
                   [*(d for _, d in deltas), *keys])
        self.rows += 1

    def _send(self, cql: str, values: Sequence[Any]) -> None:
        statement = self._prepared.get(cql)
        if statement is None:
            statement = self._prepared[cql] = self.session.prepare(cql)
            if self.consistency_level is not None:
                statement.consistency_level = self.consistency_level
        self._futures.append(self.session.execute_async(statement, list(values)))
        if len(self._futures) >= _IN_FLIGHT:
            self.flush()

    def flush(self) -> None:
        """Waits for every increment sent; :class:`DiffError` for the first that failed."""
        futures, self._futures = self._futures, []
        failed: list[BaseException] = []
        for future in futures:
            try:
                future.result()
            except Exception as exc:  # noqa: BLE001 - reported together below
                failed.append(exc)
        if failed:
            raise DiffError(f"{len(failed)} counter increments of {self.table} failed (each "
                            f"may or may not have been applied: diff again), first: "
                            f"{type(failed[0]).__name__}: {failed[0]}")


def _update_cql(table: str, counters: Sequence[str], keys: Sequence[str]) -> str:
    sets = ", ".join(f"{quote_name(c)} = {quote_name(c)} + ?" for c in counters)
    where = " AND ".join(f"{quote_name(k)} = ?" for k in keys)
    return f"UPDATE {table} SET {sets} WHERE {where}"

