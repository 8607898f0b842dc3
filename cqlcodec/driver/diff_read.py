"""The reading side of :func:`cqlcodec.driver.diff_tables`: the options of a diff, the two
tables with their split queries and layout, the walk of one split, and the public form
of a difference."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from cassandra.cluster import Session

from cqlcodec.columnar.batch import ColumnBatch
from cqlcodec.driver.columns import send_columnar, wait_page
from cqlcodec.driver.diff_counters import counter_columns
from cqlcodec.driver.diff_values import DiffError, DiffLayout, Side
from cqlcodec.driver.diff_walk import Found, SplitWalk
from cqlcodec.driver.scan import ScanError, SplitReader, _SplitQuery
from cqlcodec.driver.splits import MAX_TOKEN, MIN_TOKEN, SplitPlanError, TokenSplit
from cqlcodec.driver.throttle import RowRate

__all__ = ["DiffOptions", "DiffTables", "Difference", "difference_of", "token_split"]


@dataclass(frozen=True)
class Difference:
    """One difference between the tables. ``kind``: ``"missing"`` (in the source, not
    in the target), ``"extra"`` (only in the target) or ``"differs"``; ``key``: the
    primary key as JSON values by column name (the partition key alone when
    ``partition``: a partition's static cells, or a partition that holds only static
    cells); ``columns``: for ``differs``, ``{column: (source value, target value)}`` in
    JSON form (write times and TTLs as columns ``writetime(c)`` and ``ttl(c)``);
    ``token``: the partition's token."""

    kind: str
    key: dict[str, Any]
    columns: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    token: int = 0
    partition: bool = False

    def as_json(self) -> dict[str, Any]:
        """The difference as one JSON object: ``kind``, ``key``, ``token``, ``partition``
        (only when true) and, for ``differs``, ``columns`` as ``{column: {"source": ...,
        "target": ...}}``."""
        found: dict[str, Any] = {"kind": self.kind, "key": self.key, "token": self.token}
        if self.partition:
            found["partition"] = True
        if self.kind == "differs":
            found["columns"] = {c: {"source": s, "target": t} for c, (s, t) in self.columns.items()}
        return found

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Difference:
        """The difference that :meth:`as_json` wrote."""
        columns = {c: (v["source"], v["target"]) for c, v in obj.get("columns", {}).items()}
        return cls(obj["kind"], obj["key"], columns, int(obj["token"]), bool(obj.get("partition")))

    @property
    def identity(self) -> str:
        """What names the row (or partition) differing, whatever the kind."""
        return json.dumps([self.token, self.partition, self.key], sort_keys=True)


def difference_of(found: Found) -> Difference:
    """The public form of a walk's :class:`Found`."""
    return Difference(found.kind, found.key, found.columns, found.token, found.partition)


@dataclass
class DiffOptions:
    """The options of one diff (see :func:`diff_tables`)."""

    columns: Sequence[str] | None
    writetime: bool
    ttl: bool
    float_tolerance: float
    ttl_tolerance: float
    concurrency: int
    fetch_size: int
    consistency_level: int | None
    retries: int | None
    retry_timeout: float
    recheck: bool
    recheck_after: float
    fix: bool
    delete_extra: bool
    where: str | None = None
    rate: float | None = None
    fix_counters: bool = False


class DiffTables:
    """The two tables of a diff, their queries and their layout. ``options.where``
    restricts both tables' reads alike (the target's too unless ``target_where`` is
    false); ``options.rate`` limits the rows read per second from each table."""

    def __init__(self, source: Session, source_table: str, target: Session, target_table: str,
                 options: DiffOptions, timed: bool = False, target_where: bool = True) -> None:
        self.source = source
        self.target = target
        writetime = options.writetime or timed
        ttl = options.ttl or timed
        try:
            self.source_query = _SplitQuery(source, source_table, self._selected(
                source, source_table, options.columns), options.where, writetime, ttl,
                key_token=True)
        except ScanError as exc:
            raise DiffError(str(exc)) from exc
        try:
            self.target_query = _SplitQuery(target, target_table, self._selected(
                target, target_table, options.columns), options.where if target_where else None,
                writetime, ttl, key_token=True)
        except ScanError as exc:
            raise DiffError(f"the target: {exc}") from exc
        self._rates = (RowRate(options.rate), RowRate(options.rate)) \
            if options.rate is not None else None
        src, dst = self.source_query.table.metadata, self.target_query.table.metadata
        keys = [c.name for c in src.primary_key]
        if keys != [c.name for c in dst.primary_key] or \
                len(src.partition_key) != len(dst.partition_key):
            raise DiffError(f"the tables have different primary keys: {self.source_query.table} "
                            f"({', '.join(keys)}), {self.target_query.table} "
                            f"({', '.join(c.name for c in dst.primary_key)})")
        wanted = set(options.columns) if options.columns is not None else None
        static = [n for n, c in src.columns.items() if n not in keys and c.is_static
                  and (wanted is None or n in wanted)]
        regular = [n for n, c in src.columns.items() if n not in keys and not c.is_static
                   and (wanted is None or n in wanted)]
        self.counter_names = counter_columns(src)
        self.counters = bool(self.counter_names)
        self.layout = DiffLayout([c.name for c in src.partition_key],
                                 [c.name for c in src.clustering_key], static, regular,
                                 self._side(source, self.source_query),
                                 self._side(target, self.target_query), writetime, ttl)

    @staticmethod
    def _selected(session: Session, table: str, columns: Sequence[str] | None) -> list[str] | None:
        if columns is None:
            return None
        from cqlcodec.driver.splits import table_ref

        try:
            metadata = table_ref(session, table).metadata
        except SplitPlanError as exc:
            raise DiffError(str(exc)) from exc
        keys = [c.name for c in metadata.primary_key]
        return keys + [c for c in columns if c not in keys]

    @staticmethod
    def _side(session: Session, query: _SplitQuery) -> Side:
        page = wait_page(send_columnar(session, query.statement, (MAX_TOKEN, MAX_TOKEN))).decode()
        return Side(page.names, page.types)

    def walk(self, split: TokenSplit, options: DiffOptions, keep_pages: bool = False) -> SplitWalk:
        """The merge walk of one split of both tables."""
        def reader(session: Session, query: _SplitQuery) -> SplitReader:
            return SplitReader(session, query, split, options.fetch_size,
                               options.consistency_level, options.retries, options.retry_timeout)

        source: Iterator[ColumnBatch] = reader(self.source, self.source_query)
        target: Iterator[ColumnBatch] = reader(self.target, self.target_query)
        if self._rates is not None:
            source, target = _paced(source, self._rates[0]), _paced(target, self._rates[1])
        return SplitWalk(self.layout, source, target, options.float_tolerance,
                         options.ttl_tolerance, keep_pages)


def _paced(pages: Iterator[ColumnBatch], rate: RowRate) -> Iterator[ColumnBatch]:
    """``pages``, each let through once ``rate`` allows its rows."""
    for page in pages:
        rate.wait(len(page))
        yield page


def token_split(token: int) -> TokenSplit:
    """The split of one token, ``(token - 1, token]``."""
    return TokenSplit(max(MIN_TOKEN, token - 1), token)
