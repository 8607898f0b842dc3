"""Non-frozen lists written again with their source's write times, kept exact.

The server keeps a non-frozen list's elements under cell keys it makes at each write, and
a whole-list write at time ``t`` deletes only what is older than ``t``. So the same list
written twice at the same ``t`` (a load run again, a row sent again after a timeout whose
first write had landed) holds its elements twice. Sets, maps and UDT fields are keyed by
their content and need nothing of this.

Before a list is written with its source write times where a copy of it may already be
there, the target's ``writetime(c)`` (one entry per element, Cassandra 5.0) is read and
:func:`decide` says how to write it:

- nothing there: as the source has it;
- the same number of elements, none older than the source's: already there, not written;
- only elements older than the source's: written as the source has it, after a deletion
  just below its oldest element (what a whole-list write does by itself);
- elements more than :data:`OWN_WINDOW_US` newer than the source's latest: a write made
  after the copy, left as it is (the newer write wins, as it would on the source);
- else (a copy of ours, whole, doubled or in part): deleted at the latest time there and
  the list written whole 1 µs later. A list whose elements all share one write time keeps
  it exact or 1 µs later; elements with different times all take the later one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from cassandra.cluster import Session
from cassandra.concurrent import execute_concurrent_with_args

__all__ = ["OWN_WINDOW_US", "SKIP", "ListPlan", "ListRepeats", "decide", "list_columns",
           "plan_lists", "target_has_rows"]

OWN_WINDOW_US: Final = 1000
"""Elements at most this many microseconds newer than the source's latest are taken as
an earlier copy's (each rewrite adds 1 µs), anything newer as a later write."""


@dataclass(frozen=True)
class ListPlan:
    """How one list cell is written: ``skip`` it; else with element write times
    ``times`` instead of the source's (None: the source's), after a deletion of the
    column at ``delete_at`` (None: no deletion beyond a whole-list write's own)."""

    skip: bool = False
    times: tuple[int, ...] | None = None
    delete_at: int | None = None


SKIP: Final = ListPlan(skip=True)


def decide(target: Sequence[int] | None, source: Sequence[int]) -> ListPlan | None:
    """The plan for a list whose source elements have write times ``source`` where the
    target's elements have ``target`` (None or empty: no element); None: write it as
    the source has it."""
    if not target or not source:
        return None
    oldest, latest = min(source), max(source)
    if len(target) == len(source) and all(t >= s for t, s in zip(target, source)):
        return SKIP
    there = max(target)
    if there < oldest:
        return ListPlan(delete_at=oldest - 1)
    if there > latest + OWN_WINDOW_US:
        return SKIP
    at = max(there, latest) + 1
    return ListPlan(times=(at,) * len(source), delete_at=at - 1)


def list_columns(metadata: Any, names: Sequence[str]) -> tuple[list[str], list[str]]:
    """The non-frozen list columns among ``names``: (regular ones, static ones)."""
    regular: list[str] = []
    static: list[str] = []
    for name in names:
        column = metadata.columns.get(name)
        if column is None or not str(column.cql_type).startswith("list<"):
            continue
        (static if getattr(column, "is_static", False) else regular).append(name)
    return regular, static


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def target_has_rows(session: Session, table: str, metadata: Any) -> bool:
    """Whether ``table`` (quoted ``ks.t``) holds any row now."""
    key = _quoted(metadata.partition_key[0].name)
    return bool(list(session.execute(f"SELECT {key} FROM {table} LIMIT 1")))


def _source_times(times: Any, value: Any) -> list[int] | None:
    """A list's source element write times (a list, or one time for all elements)."""
    if value is None or times is None:
        return None
    if isinstance(times, (list, tuple)):
        return [int(t) for t in times if t is not None]
    return [int(times)] * len(value)


def plan_lists(session: Session, table: str, metadata: Any, values: Mapping[str, list[Any]],
               times: Mapping[str, list[Any]], rows: Sequence[int], *, concurrency: int,
               prepared: dict[str, Any] | None = None
               ) -> tuple[dict[tuple[int, str], ListPlan], dict[int, BaseException]]:
    """The :class:`ListPlan` of every list cell of ``rows`` (indices into the columns of
    ``values``, by table column name, with the source write times ``times`` of the list
    columns) that is not written as the source has it, keyed by (row, column), after
    reading the target's write times of those cells; and the rows whose read failed,
    with the error (they are not written this time). ``prepared`` caches the reads'
    statements by their text."""
    regular, static = list_columns(metadata, [c for c in times if c in values])
    pk = [c.name for c in metadata.partition_key]
    ck = [c.name for c in metadata.clustering_key]
    plans: dict[tuple[int, str], ListPlan] = {}
    failed: dict[int, BaseException] = {}
    for columns, keys in ((regular, [*pk, *ck]), (static, pk)):
        if not columns:
            continue
        asked = [i for i in rows
                 if any(values[c][i] is not None for c in columns)
                 and all(values[k][i] is not None for k in keys)]
        if not asked:
            continue
        selected = ", ".join(f"writetime({_quoted(c)})" for c in columns)
        where = " AND ".join(f"{_quoted(k)} = ?" for k in keys)
        limit = " LIMIT 1" if keys is pk and ck else ""
        text = f"SELECT {selected} FROM {table} WHERE {where}{limit}"
        statement = prepared.get(text) if prepared is not None else None
        if statement is None:
            statement = session.prepare(text)
            if prepared is not None:
                prepared[text] = statement
        params = [[values[k][i] for k in keys] for i in asked]
        outcomes = execute_concurrent_with_args(session, statement, params,
                                                concurrency=concurrency,
                                                raise_on_first_error=False)
        for i, (ok, found) in zip(asked, outcomes):
            if not ok:
                failed[i] = found if isinstance(found, BaseException) else \
                    RuntimeError(f"reading the list write times failed: {found!r}")
                continue
            first = next(iter(found), None)
            for j, column in enumerate(columns):
                source = _source_times(times[column][i], values[column][i])
                if source is None:
                    continue
                there = None if first is None else _cell(first, j)
                plan = decide(there, source)
                if plan is not None:
                    plans[(i, column)] = plan
    return plans, failed


def _cell(row: Any, index: int) -> Any:
    if isinstance(row, Mapping):
        return list(row.values())[index]
    return row[index]


class ListRepeats:
    """The list writes of one load with write times: plans them chunk by chunk.

    A first attempt reads the target only when the table held rows as the load began (a
    load into an empty table cannot meet an earlier copy); a row sent again after a
    failure always is read first (its first write may have landed). A static list is
    written with the first row of its partition only: later rows of the same partition,
    in this chunk or a later one, skip it.
    """

    def __init__(self, session: Session, table: str, metadata: Any) -> None:
        self.session = session
        self.table = table
        self.metadata = metadata
        self.had_rows: bool | None = None
        self.static_written: set[tuple[Any, ...]] = set()
        self.prepared: dict[str, Any] = {}

    def columns(self, names: Sequence[str]) -> list[str]:
        """The non-frozen list columns among ``names`` (regular and static)."""
        regular, static = list_columns(self.metadata, names)
        return regular + static

    def plan(self, values: Mapping[str, list[Any]], times: Mapping[str, list[Any]],
             rows: Sequence[int], *, again: bool, concurrency: int
             ) -> tuple[dict[tuple[int, str], ListPlan], dict[int, BaseException]]:
        """The plans of the list cells of ``rows`` (``again``: rows sent before) and the
        rows whose read failed (see :func:`plan_lists` for the arguments): every row of
        ``rows`` when the target could not be asked at all (the cluster unreachable)."""
        plans: dict[tuple[int, str], ListPlan] = {}
        failed: dict[int, BaseException] = {}
        try:
            if self.had_rows is None:
                self.had_rows = target_has_rows(self.session, self.table, self.metadata)
            if again or self.had_rows:
                plans, failed = plan_lists(self.session, self.table, self.metadata, values,
                                           times, rows, concurrency=concurrency,
                                           prepared=self.prepared)
        except Exception as exc:  # noqa: BLE001 - the rows wait for the next round, as a failed write would
            return {}, {i: exc for i in rows}
        _, static = list_columns(self.metadata, [c for c in times if c in values])
        if static:
            pk = [c.name for c in self.metadata.partition_key]
            seen: set[tuple[Any, ...]] = set()
            for i in rows:
                key = tuple(_hashable(values[k][i]) for k in pk)
                if key in seen or (not again and key in self.static_written):
                    for column in static:
                        plans[(i, column)] = SKIP
                seen.add(key)
            self.static_written |= seen
        return plans, failed


def _hashable(value: Any) -> Any:
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value
