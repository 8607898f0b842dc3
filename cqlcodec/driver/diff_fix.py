"""``fix`` and ``delete_extra`` of :func:`cqlcodec.driver.diff_tables`: the target made
equal to the source without undoing a later write.

The partition of every difference is read again from both sides with each cell's write
time and TTL. A row missing from the target or differing is written with
:func:`cqlcodec.driver.load_table` from the source's read: every cell with its own
write time and remaining TTL (:mod:`cqlcodec.driver.cell_times`; a non-frozen list as
:mod:`cqlcodec.driver.list_repeats` plans, so it never doubles), null cells left
unset. The server keeps the cell with the later write time, so a cell the target got
after the source's is kept. A cell null in the source but set in the target is deleted
at the source row's latest write time (a cell written after that survives); a row of
key columns alone has no write time and keeps such a cell. A partition's static cells
are written alone (partition key and static columns). ``delete_extra`` deletes a row
only the target has at the row's own latest write time (the time the diff started
for a row with no cell), so a write made after it survives; a partition holding only
static cells loses those cells the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from cqlcodec.driver.diff_counters import CounterIncrements
from cqlcodec.driver.diff_read import (
    Difference,
    DiffOptions,
    DiffTables,
    difference_of,
    token_split,
)
from cqlcodec.driver.diff_values import DiffLayout, Side
from cqlcodec.driver.diff_walk import Found
from cqlcodec.driver.load import load_table
from cqlcodec.driver.row_take import take_rows
from cqlcodec.types.names import quote_name

__all__ = ["fix_differences"]


def _latest_time(row: Sequence[Any], side: Side) -> int | None:
    """The latest write time among the row's ``writetime(c)`` cells, None without any."""
    times: list[int] = []
    for name, at in side.position.items():
        if name.startswith("writetime("):
            value = row[at]
            values = value if isinstance(value, list) else [value]
            times.extend(int(v) for v in values if v is not None)
    return max(times) if times else None


class _Rows:
    """Rows of source pages to write, grouped by page (row index lists)."""

    def __init__(self) -> None:
        self.pages: dict[int, tuple[Any, list[int]]] = {}

    def add(self, row: Sequence[Any]) -> None:
        page, index = row[-2], row[-1]
        self.pages.setdefault(id(page), (page, []))[1].append(index)

    def batches(self, pa: Any, keep: Iterable[str] | None,
                nulled: Sequence[str] = ()) -> list[Any]:
        """The rows as record batches of the columns ``keep`` (all when None), the
        columns ``nulled`` all null (a partition's static cells: no clustering row)."""
        chosen = None if keep is None else {*keep, *nulled}
        found = []
        for page, rows in self.pages.values():
            batch = pa.record_batch(page)
            names = [n for n in batch.schema.names[1:] if chosen is None or n in chosen]
            batch = take_rows(pa, batch.select(names), rows)
            for name in nulled:
                at = batch.schema.get_field_index(name)
                batch = batch.set_column(at, batch.schema.field(at),
                                         pa.nulls(len(rows), batch.schema.field(at).type))
            found.append(batch)
        return found


def fix_differences(found: DiffTables, options: DiffOptions, started_us: int,
                    differences: list[Difference]) -> tuple[int, int]:
    """Writes the fixes of ``differences`` between the tables of ``found`` (see the
    module docstring; ``started_us``: when the diff started, the deletion time of an
    extra row without a write time); returns (rows and partitions written, rows and
    partitions deleted)."""
    import pyarrow as pa

    todo = [d for d in differences
            if (options.fix and d.kind != "extra") or (options.delete_extra and d.kind == "extra")]
    if not todo:
        return 0, 0
    if found.counters:
        return _fix_counters(found, options, todo), 0
    # the target read whole within each partition: a row that a condition (where) kept
    # out of the target's read is known as it is, not taken for missing
    tables = DiffTables(found.source, str(found.source_query.table),
                        found.target, str(found.target_query.table), options, timed=True,
                        target_where=False)
    layout = tables.layout
    wanted = {d.identity for d in todo}
    target = str(tables.target_query.table)
    rows, partitions = _Rows(), _Rows()
    deletions: list[tuple[str, list[Any]]] = []
    fixed = deleted = 0
    for token in sorted({d.token for d in todo}):
        for item in tables.walk(token_split(token), options, keep_pages=True):
            if difference_of(item).identity not in wanted:
                continue
            if item.kind == "extra":
                deletions.append(_deletion(layout, target, item, started_us))
                deleted += 1
                continue
            assert item.source is not None
            (partitions if item.partition else rows).add(item.source)
            fixed += 1
            if item.kind == "differs" and item.target is not None:
                deletions.extend(_cleared(layout, target, item))
    static_names = [*layout.partition_key, *(r.name for r in layout.static)]
    static_names += [f"{kind}({r.name})" for r in layout.static for kind in ("writetime", "ttl")]
    groups = ((rows, None, ()), (partitions, static_names, layout.clustering_key))
    for group, keep, nulled in groups:
        by_schema: dict[Any, list[Any]] = {}
        for batch in group.batches(pa, keep, nulled):
            by_schema.setdefault(batch.schema, []).append(batch)
        for schema, batches in by_schema.items():
            load_table(tables.target, target, pa.Table.from_batches(batches, schema),
                       consistency_level=options.consistency_level, retries=options.retries,
                       retry_timeout=options.retry_timeout)
    prepared: dict[str, Any] = {}
    for cql, values in deletions:
        if cql not in prepared:
            prepared[cql] = tables.target.prepare(cql)
            if options.consistency_level is not None:
                prepared[cql].consistency_level = options.consistency_level
        tables.target.execute(prepared[cql], values)
    return fixed, deleted


def _fix_counters(found: DiffTables, options: DiffOptions, todo: list[Difference]) -> int:
    """Adds ``source - target`` to the counters of the missing and differing rows of
    ``todo`` (their partitions read again first); returns the rows written."""
    wanted = {d.identity for d in todo if d.kind != "extra"}
    if options.where is not None:  # as above: the target's rows as they are
        found = DiffTables(found.source, str(found.source_query.table), found.target,
                           str(found.target_query.table), options, target_where=False)
    increments = CounterIncrements(found.target, str(found.target_query.table), found.layout,
                                   found.counter_names, options.consistency_level)
    for token in sorted({d.token for d in todo}):
        for item in found.walk(token_split(token), options):
            if difference_of(item).identity in wanted:
                increments.add(item)
    increments.flush()
    return increments.rows


def _where(layout: DiffLayout, row: Sequence[Any], side: Side,
           partition: bool) -> tuple[str, list[Any]]:
    names = layout.partition_key if partition else layout.keys
    return (" AND ".join(f"{quote_name(n)} = ?" for n in names),
            [row[side.position[n]] for n in names])


def _deletion(layout: DiffLayout, table: str, found: Found, started_us: int) -> tuple[str, list[Any]]:
    """The DELETE of a row (or a static-only partition's static cells) only the target
    has, at its latest write time."""
    row = found.target
    assert row is not None
    side = layout.target
    at = _latest_time(row, side)
    at = started_us if at is None else at
    where, keys = _where(layout, row, side, found.partition)
    what = ", ".join(quote_name(r.name) for r in layout.static) if found.partition else ""
    return f"DELETE {what} FROM {table} USING TIMESTAMP ? WHERE {where}", [at, *keys]


def _cleared(layout: DiffLayout, table: str, found: Found) -> list[tuple[str, list[Any]]]:
    """The DELETEs of the target's cells that are null in the source (differs)."""
    src, dst = found.source, found.target
    assert src is not None and dst is not None
    at = _latest_time(src, layout.source)
    if at is None:
        return []
    rules = layout.static if found.partition else layout.regular
    names = [r.name for r in rules if r.name in found.columns
             and src[layout.source.position[r.name]] is None]
    if not names:
        return []
    where, keys = _where(layout, dst, layout.target, found.partition)
    return [(f"DELETE {', '.join(map(quote_name, names))} FROM {table} USING TIMESTAMP ? "
             f"WHERE {where}", [at, *keys])]

