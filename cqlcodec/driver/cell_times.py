"""Write times and TTLs kept across an unload and a load.

A scan with ``writetime=True`` / ``ttl=True`` adds, for every regular or static column
``c`` it reads (counters excepted: the server has no write time for them), a column
named exactly ``writetime(c)`` (bigint, microseconds) and one named ``ttl(c)`` (int,
seconds left; null where the cell has no TTL). Cassandra 5.0 answers these functions
per element for non-frozen collections and non-frozen UDTs: ``writetime(c)`` is then a
``list<bigint>`` and ``ttl(c)`` a ``list<int>`` with one entry per element cell, in
the order the value is read (list order, set and map key order; for a UDT one entry
per field in field order, null for a field without a cell), and that is what is kept.

A load whose source has such columns (:func:`time_columns`) writes each cell with its
own time: the cells of a row are grouped by their (write time, TTL), each group one
``INSERT ... USING TIMESTAMP ? AND TTL ?`` of the primary key and the group's cells
(null cells are not written, or written as deletions with ``nulls_mode="delete"``);
a multi-cell value whose elements do not all share one
(write time, TTL) is written element run by element run (``SET c = c + ?``, or
``SET c.field = ?`` for a UDT), the runs of a row one after the other, so list
elements keep their order. A TTL column holding null (no TTL) writes TTL 0 (none).
The TTL written is the one the unload read: what was left then. Rows whose cells are all
set and share one (write time, TTL), most rows of most tables, are found column by
column in Arrow arrays and grouped at once; only the others are taken row by row. A non-frozen list
that may be there already is written as :mod:`cqlcodec.driver.list_repeats` plans, so
that writing it again never doubles it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from cassandra.cluster import Session

from cqlcodec.columnar.arrow_numbers import arrow_fixed_values, arrow_validity
from cqlcodec.driver.columns import InsertFailure, InsertResult, insert_columns
from cqlcodec.driver.list_repeats import ListPlan
from cqlcodec.driver.row_take import row_indices, take_rows
from cqlcodec.driver.sources import LoadError
from cqlcodec.errors import BindError
from cqlcodec.types.names import quote_name

__all__ = ["TimedColumns", "python_values", "select_list", "time_column_types", "time_columns",
           "timed_names", "write_timed_chunk"]

WRITETIME: Final = "writetime({})"
TTL: Final = "ttl({})"
_COLLECTIONS: Final = ("list<", "set<", "map<")


def timed_names(metadata: Any, columns: Sequence[str] | None) -> list[str]:
    """The columns of ``columns`` (all when None) that have a write time and a TTL: the
    regular and static ones that are not counters, in the table's order."""
    keys = {c.name for c in metadata.primary_key}
    wanted = set(columns) if columns is not None else None
    return [name for name, col in metadata.columns.items()
            if name not in keys and str(col.cql_type) != "counter"
            and (wanted is None or name in wanted)]


def select_list(metadata: Any, columns: Sequence[str] | None, writetime: bool,
                ttl: bool) -> str:
    """The select clause of a scan of ``columns`` (all when None) followed by
    ``writetime(c)`` and/or ``ttl(c)`` of each column of :func:`timed_names`."""
    names = list(columns) if columns is not None else list(metadata.columns)
    parts = [quote_name(n) for n in names]
    for name in timed_names(metadata, columns):
        if writetime:
            parts.append(f"writetime({quote_name(name)}) AS {quote_name(WRITETIME.format(name))}")
        if ttl:
            parts.append(f"ttl({quote_name(name)}) AS {quote_name(TTL.format(name))}")
    return ", ".join(parts)


def time_column_types(session: Session, metadata: Any) -> dict[str, str]:
    """The CQL type of every possible ``writetime(c)`` and ``ttl(c)`` column of the
    table (what a CSV reader needs to read them)."""
    keyspace = session.cluster.metadata.keyspaces.get(metadata.keyspace_name)
    user_types = set(keyspace.user_types) if keyspace is not None else set()
    types: dict[str, str] = {}
    for name in timed_names(metadata, None):
        cql_type = str(metadata.columns[name].cql_type)
        multi = cql_type.startswith(_COLLECTIONS) or cql_type in user_types
        types[WRITETIME.format(name)] = "list<bigint>" if multi else "bigint"
        types[TTL.format(name)] = "list<int>" if multi else "int"
    return types


@dataclass(frozen=True)
class TimedColumns:
    """The time columns a load source holds: for each table column that has one,
    the source column of its write time and of its TTL (None where absent)."""

    writetime: dict[str, str]
    ttl: dict[str, str]

    def __bool__(self) -> bool:
        return bool(self.writetime or self.ttl)

    @property
    def source_names(self) -> set[str]:
        """The source columns that are times, not values."""
        return set(self.writetime.values()) | set(self.ttl.values())


def time_columns(names: Sequence[str], metadata: Any) -> TimedColumns:
    """The ``writetime(c)`` / ``ttl(c)`` columns among the source's column ``names``
    (after renaming) whose ``c`` is a timed column of the table."""
    timed = set(timed_names(metadata, None))
    writetime: dict[str, str] = {}
    ttl: dict[str, str] = {}
    for name in names:
        for found, pattern in ((writetime, "writetime("), (ttl, "ttl(")):
            if name.startswith(pattern) and name.endswith(")"):
                column = name[len(pattern):-1]
                if column in timed:
                    found[column] = name
    return TimedColumns(writetime, ttl)


# --------------------------------------------------------------------------- writing

@dataclass(frozen=True)
class _Shape:
    """One statement: the key columns, then what it sets, and its USING clause."""

    keys: tuple[str, ...]
    cells: tuple[str, ...]       # whole cells (INSERT), or one column (element update)
    fields: tuple[str, ...]      # UDT fields of an element update, else ()
    element: bool                # SET c = c + ? (or c.f = ?) instead of INSERT
    timestamp: bool
    ttl: bool
    delete: bool = False         # DELETE c USING TIMESTAMP ? (before a list's element runs)


class _Pending:
    """Rows (chunk indices) of one shape with their values, times and TTLs."""

    def __init__(self) -> None:
        self.rows: list[int] = []
        self.values: list[list[Any]] = []   # element updates: per row, per field/column
        self.timestamps: list[int] = []
        self.ttls: list[int] = []


def _statement_text(table: str, shape: _Shape) -> tuple[str, list[str]]:
    """The CQL of ``shape`` with named markers p0, p1, ... and the marker per name."""
    markers: list[str] = []

    def marker() -> str:
        markers.append(f"p{len(markers)}")
        return f":{markers[-1]}"

    using = []
    if shape.timestamp:
        using.append(f"TIMESTAMP {marker()}")
    if shape.ttl:
        using.append(f"TTL {marker()}")
    clause = f" USING {' AND '.join(using)}" if using else ""
    if shape.delete:
        where = " AND ".join(f"{quote_name(k)} = {marker()}" for k in shape.keys)
        return f"DELETE {quote_name(shape.cells[0])} FROM {table}{clause} WHERE {where}", markers
    if not shape.element:
        names = [*shape.keys, *shape.cells]
        values = ", ".join(marker() for _ in names)
        text = (f"INSERT INTO {table} ({', '.join(map(quote_name, names))}) VALUES ({values})"
                f"{clause}")
        return text, markers
    column = shape.cells[0]
    if shape.fields:
        sets = ", ".join(f"{quote_name(column)}.{quote_name(f)} = {marker()}" for f in shape.fields)
    else:
        sets = f"{quote_name(column)} = {quote_name(column)} + {marker()}"
    where = " AND ".join(f"{quote_name(k)} = {marker()}" for k in shape.keys)
    return f"UPDATE {table}{clause} SET {sets} WHERE {where}", markers


def _runs(count: int, times: list[Any], ttls: list[Any]) -> list[tuple[int, int, Any, Any]]:
    """Consecutive elements sharing (write time, TTL): (first, stop, time, ttl); entries
    without either (the null fields of a UDT) are left out."""
    runs: list[tuple[int, int, Any, Any]] = []
    for i in range(count):
        t = times[i] if i < len(times) else None
        ttl = ttls[i] if i < len(ttls) else None
        if t is None and ttl is None:
            continue
        if runs and runs[-1][2] == t and runs[-1][3] == ttl and runs[-1][1] == i:
            first, _, _, _ = runs[-1]
            runs[-1] = (first, i + 1, t, ttl)
        else:
            runs.append((i, i + 1, t, ttl))
    return runs


def python_values(column: Any) -> list[Any]:
    """A column (an Arrow array or a list) as a list of Python values."""
    return column if isinstance(column, list) else list(column.to_pylist())


def write_timed_chunk(session: Session, pa: Any, table: str, metadata: Any,
                      batch: Mapping[str, Any], rows: int, timed: TimedColumns,
                      statements: dict[_Shape, Any], consistency_level: int | None, *,
                      batch_by_replica: bool, batch_bytes: int,
                      concurrency: int, nulls_mode: str = "unset",
                      lists: Mapping[tuple[int, str], ListPlan] | None = None) -> InsertResult:
    """Writes the ``rows`` rows of ``batch`` (columns by table column name, Arrow
    arrays or lists of Python values, plus the time columns of ``timed``) each cell
    with its own write time and TTL (see the module docstring); returns the rows'
    :class:`InsertResult` (failures by row index in ``batch``: a row fails when any of
    its statements does). ``nulls_mode="delete"`` writes null cells as deletions (at the
    server's time) instead of leaving them out. ``lists`` says how the list cells it
    names, by (row, column), are written (:mod:`cqlcodec.driver.list_repeats`)."""
    names = [n for n in batch if n not in timed.source_names]
    pk = [c.name for c in metadata.partition_key]
    ck = [c.name for c in metadata.clustering_key]
    keyset = set(pk) | set(ck)
    data = {n: batch[n] for n in names}
    cells_of = [n for n in names if n not in keyset]
    row_keys = tuple(k for k in names if k in keyset)
    phases: list[dict[_Shape, _Pending]] = [{}]
    slow = _add_one_time_rows(phases[0], batch, rows, timed, cells_of, ck, row_keys) \
        if not lists else list(range(rows))

    def rows_of(column: Any) -> list[Any]:  # the values of the rows taken one by one
        return python_values(column if len(slow) == rows else take_rows(pa, column, slow))
    values = {n: rows_of(data[n]) for n in names}
    nulls = {n: [v is None for v in values[n]] for n in names if n not in keyset}
    delete_nulls = nulls_mode == "delete"
    times = {c: rows_of(batch[s]) for c, s in timed.writetime.items()}
    ttls = {c: rows_of(batch[s]) for c, s in timed.ttl.items()}
    ck_null = [any(v is None for v in key) for key in zip(*(values[c] for c in ck))] \
        if ck else []
    for j, i in enumerate(slow):  # j: the row among those taken one by one, i: in the chunk
        keys = tuple(pk) if ck and ck_null[j] else row_keys
        groups: dict[tuple[Any, Any], list[str]] = {}
        element_phase = 1
        skipped = False
        for c in cells_of:
            if nulls[c][j]:
                if delete_nulls:
                    groups.setdefault((None, None), []).append(c)
                continue
            plan = lists.get((i, c)) if lists else None
            if plan is not None and plan.skip:
                skipped = True
                continue
            t = times[c][j] if c in times else None
            ttl = ttls[c][j] if c in ttls else None
            if plan is not None and plan.times is not None:
                t = list(plan.times) if isinstance(t, list) or isinstance(ttl, list) \
                    else plan.times[0]
            if isinstance(t, list) or isinstance(ttl, list):
                t_list = t if isinstance(t, list) else []
                ttl_list = ttl if isinstance(ttl, list) else []
                count = max(len(t_list), len(ttl_list))
                runs = _runs(count, t_list, ttl_list)
                if len(runs) <= 1:
                    t, ttl = (runs[0][2], runs[0][3]) if runs else (None, None)
                else:
                    if plan is not None and plan.delete_at is not None:
                        element_phase = _add_deletion(phases, element_phase, c, i, keys,
                                                      plan.delete_at)
                    kind = str(metadata.columns[c].cql_type)[:4]
                    element_phase = _add_elements(phases, element_phase, values[c][j], kind,
                                                  c, i, keys, runs, c in times, c in ttls)
                    continue
            groups.setdefault((t, ttl), []).append(c)
        if not groups and element_phase == 1 and not skipped:  # a row of its primary key alone
            groups[(None, None)] = []
        for (t, ttl), cells in groups.items():
            timed_group = t is not None or ttl is not None
            shape = _Shape(keys, tuple(cells), (), False, t is not None,
                           timed_group and bool(timed.ttl))
            pending = phases[0].setdefault(shape, _Pending())
            pending.rows.append(i)
            pending.timestamps.append(0 if t is None else int(t))
            pending.ttls.append(0 if ttl is None else int(ttl))
    result = InsertResult(rows)
    failed: dict[int, BaseException] = {}
    for phase in phases:
        for shape, pending in phase.items():
            statement = statements.get(shape)
            if statement is None:
                text, _ = _statement_text(table, shape)
                statement = session.prepare(text)
                if consistency_level is not None:
                    statement.consistency_level = consistency_level
                statements[shape] = statement
            columns = _bind_columns(pa, shape, pending, data)
            try:
                done = insert_columns(session, statement, columns, concurrency=concurrency,
                                      batch_by_replica=batch_by_replica,
                                      batch_bytes=batch_bytes,
                                      chunk_rows=max(1, len(pending.rows)), raise_on_error=False,
                                      nulls=nulls_mode)
            except BindError as exc:
                reason = re.sub(r"^row \d+: ", "", str(exc))
                marker = exc.column or ""
                for name in _marker_names(shape):
                    reason = reason.replace(f'"{name[0]}"', f'"{name[1]}"')
                    marker = name[1] if marker == name[0] else marker
                raise LoadError(reason, column=marker,
                                row=None if exc.row is None else pending.rows[exc.row]) from exc
            result.requests += done.requests
            for f in done.failures:
                failed.setdefault(pending.rows[f.row], f.error)
    result.failures.extend(InsertFailure(row, error) for row, error in sorted(failed.items()))
    return result


_NO_TIME: Final = -(2 ** 63)  # a null write time, among the others (never a real one)
_NO_TTL: Final = -1  # a null TTL (no TTL), among the others (never a real one)


def _add_one_time_rows(pending_of: dict[_Shape, _Pending], batch: Mapping[str, Any], rows: int,
                       timed: TimedColumns, cells: list[str], clustering: list[str],
                       keys: tuple[str, ...]) -> list[int]:
    """Adds to ``pending_of`` at once, column by column, the rows whose cells are all set
    and share one write time and one TTL (a row the unload read as one write): each is
    one ``INSERT`` of every cell, as row by row it would be. Returns the other rows, to
    be taken one by one (all of them when the columns are not Arrow arrays of scalar
    write times and TTLs)."""
    import numpy as np

    sources = [batch[c] for c in [*cells, *clustering]]
    time_sources = [timed.writetime.get(c) for c in cells]
    ttl_sources = [timed.ttl.get(c) for c in cells]
    if not cells or not rows or time_sources[0] is None:
        return list(range(rows))
    times = [batch[s] if s is not None else None for s in time_sources]
    ttls = [batch[s] if s is not None else None for s in ttl_sources]
    for column in [*sources, *times, *ttls]:
        if column is not None and (isinstance(column, list) or not hasattr(column, "null_count")):
            return list(range(rows))
    for column in [*times, *ttls]:
        if column is not None and str(column.type) not in ("int64", "int32"):
            return list(range(rows))  # per element times (lists), or not what an unload writes
    one = np.ones(rows, dtype=bool)
    for column in sources:
        if column.null_count:
            one &= arrow_validity(column)

    def filled(column: Any, empty: int) -> Any:
        return np.full(rows, empty, dtype=np.int64) if column is None else _ints(column, empty)
    first_time = filled(times[0], _NO_TIME)
    one &= first_time != _NO_TIME
    for column in times[1:]:
        one &= filled(column, _NO_TIME) == first_time
    first_ttl = filled(ttls[0], _NO_TTL)
    for column in ttls[1:]:
        one &= filled(column, _NO_TTL) == first_ttl
    taken = np.flatnonzero(one)
    if len(taken):
        shape = _Shape(keys, tuple(cells), (), False, True, bool(timed.ttl))
        pending = pending_of.setdefault(shape, _Pending())
        pending.rows.extend(taken.tolist())
        pending.timestamps.extend(first_time[taken].tolist())
        pending.ttls.extend(np.where(first_ttl[taken] == _NO_TTL, 0, first_ttl[taken]).tolist())
    return [int(i) for i in np.flatnonzero(~one)]


def _ints(column: Any, empty: int) -> Any:
    """An int32 or int64 Arrow array (or chunked array) as numpy int64, ``empty`` where
    null."""
    import numpy as np

    values = arrow_fixed_values(column).astype(np.int64)
    return np.where(arrow_validity(column), values, empty) if column.null_count else values


def _add_deletion(phases: list[dict[_Shape, _Pending]], phase: int, name: str, row: int,
                  keys: tuple[str, ...], at: int) -> int:
    """Queues the deletion of column ``name`` of ``row`` at time ``at`` (before its
    element runs); returns the phase after it."""
    while len(phases) <= phase:
        phases.append({})
    shape = _Shape(keys, (name,), (), True, True, False, delete=True)
    pending = phases[phase].setdefault(shape, _Pending())
    pending.rows.append(row)
    pending.values.append([])
    pending.timestamps.append(at)
    pending.ttls.append(0)
    return phase + 1


def _add_elements(phases: list[dict[_Shape, _Pending]], phase: int, value: Any, kind: str,
                  name: str, row: int, keys: tuple[str, ...],
                  runs: list[tuple[int, int, Any, Any]], has_time: bool,
                  has_ttl: bool) -> int:
    """Queues the element runs of one multi-cell value (``kind``: the first four
    letters of its CQL type), one phase per run; returns the phase after the last."""
    field_names: list[str] = []
    if kind == "map<":
        value = list(value.items()) if isinstance(value, dict) else list(value)
    elif kind == "set<":
        value = sorted(value) if isinstance(value, (set, frozenset)) else list(value)
    elif kind != "list" and isinstance(value, dict):  # a UDT: an entry per field, in order
        field_names = list(value)
    for first, stop, t, ttl in runs:
        while len(phases) <= phase:
            phases.append({})
        if field_names:
            fields = tuple(field_names[first:stop])
            part: list[Any] = [value[f] for f in fields]
        else:
            fields = ()
            part = [dict(value[first:stop]) if kind == "map<" else value[first:stop]]
        shape = _Shape(keys, (name,), fields, True, has_time, has_ttl)
        pending = phases[phase].setdefault(shape, _Pending())
        pending.rows.append(row)
        pending.values.append(part)
        pending.timestamps.append(0 if t is None else int(t))
        pending.ttls.append(0 if ttl is None else int(ttl))
        phase += 1
    return phase


def _marker_names(shape: _Shape) -> list[tuple[str, str]]:
    """(marker, what it binds) of a shape's statement, in marker order."""
    named = [n for n, on in (("writetime", shape.timestamp), ("ttl", shape.ttl)) if on]
    if shape.delete:
        named += list(shape.keys)
    elif not shape.element:
        named += [*shape.keys, *shape.cells]
    else:
        column = shape.cells[0]
        named += [f"{column}.{f}" for f in shape.fields] if shape.fields else [column]
        named += list(shape.keys)
    return [(f"p{i}", name) for i, name in enumerate(named)]


def _bind_columns(pa: Any, shape: _Shape, pending: _Pending, data: Mapping[str, Any]) -> dict[str, Any]:
    """The bind columns (by marker name) of ``pending``'s rows for ``shape``."""
    import numpy as np

    columns: dict[str, Any] = {}
    indices = row_indices(pa, pending.rows)
    n = 0
    if shape.timestamp:
        columns[f"p{n}"] = np.array(pending.timestamps, dtype=np.int64)
        n += 1
    if shape.ttl:
        columns[f"p{n}"] = np.array(pending.ttls, dtype=np.int32)
        n += 1
    if not shape.element or shape.delete:
        for name in [*shape.keys, *shape.cells] if not shape.delete else shape.keys:
            columns[f"p{n}"] = take_rows(pa, data[name], pending.rows, indices)
            n += 1
        return columns
    for j in range(max(1, len(shape.fields))):
        columns[f"p{n}"] = [v[j] for v in pending.values]
        n += 1
    for name in shape.keys:
        columns[f"p{n}"] = take_rows(pa, data[name], pending.rows, indices)
        n += 1
    return columns
