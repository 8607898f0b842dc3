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

import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from cassandra.cluster import EXEC_PROFILE_DEFAULT, Session
from cassandra.query import BoundStatement

from cqlcodec import kinds as K
from cqlcodec.codecs.cache import make_serializers
from cqlcodec.columnar.bind import ColumnarBinder
from cqlcodec.driver.columns import prepared_of
from cqlcodec.driver.sender import send_all
from cqlcodec.types.names import quote_name

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



def target_has_rows(session: Session, table: str, metadata: Any) -> bool:
    """Whether ``table`` (quoted ``ks.t``) holds any row now."""
    key = quote_name(metadata.partition_key[0].name)
    return bool(list(session.execute(f"SELECT {key} FROM {table} LIMIT 1")))


def _source_times(times: Any, value: Any) -> list[int] | None:
    """A list's source element write times (a list, or one time for all elements)."""
    if value is None or times is None:
        return None
    if isinstance(times, (list, tuple)):
        return [int(t) for t in times if t is not None]
    return [int(times)] * len(value)


# key kinds whose values, as the driver decodes them, cqlcodec encodes back to the very
# bytes the server sent: rows read by partition are matched to the chunk's rows by them
_MATCHABLE: Final = frozenset([K.ASCII, K.BIGINT, K.BLOB, K.BOOLEAN, K.INT, K.TEXT, K.UUID,
                               K.TIMEUUID, K.VARINT, K.INET, K.SMALLINT, K.TINYINT,
                               K.TIMESTAMP])
PARTITIONS_PER_READ: Final = 50
_I32: Final = struct.Struct(">i")


def plan_lists(session: Session, table: str, metadata: Any, keys: Mapping[str, Any],
               values: Mapping[str, list[Any]], times: Mapping[str, list[Any]],
               rows: Sequence[int], *, concurrency: int,
               prepared: dict[str, Any] | None = None
               ) -> tuple[dict[tuple[int, str], ListPlan], dict[int, BaseException]]:
    """The :class:`ListPlan` of every list cell of ``rows`` that is not written as the
    source has it, keyed by (row, column), after reading the target's write times of
    those cells; and the rows whose read failed, with the error (they are not written
    this time). ``keys`` holds the primary-key columns (as a load binds them), ``values``
    the list columns and ``times`` their source write times, by table column name; rows
    are indices into them. ``prepared`` caches the reads' statements by their text.

    Partitions are read many at a time (``IN``) where their keys can be matched byte
    for byte (a single partition-key column of a plain kind), else partition by partition,
    else row by row."""
    regular, static = list_columns(metadata, [c for c in times if c in values])
    columns = regular + static
    pk = [c.name for c in metadata.partition_key]
    ck = [c.name for c in metadata.clustering_key]
    plans: dict[tuple[int, str], ListPlan] = {}
    failed: dict[int, BaseException] = {}
    asked = [i for i in rows if any(values[c][i] is not None for c in columns)]
    if not asked:
        return plans, failed

    def statement(text: str) -> Any:
        found = prepared.get(text) if prepared is not None else None
        if found is None:
            found = session.prepare(text)
            if prepared is not None:
                prepared[text] = found
        return found

    key_names = [*pk, *ck]
    wanted = ", ".join(f"writetime({quote_name(c)})" for c in columns)
    by_row = statement(f"SELECT {wanted} FROM {table} WHERE "
                       + " AND ".join(f"{quote_name(k)} = ?" for k in key_names))
    key_prepared = prepared_of(by_row)
    encoded = ColumnarBinder(key_prepared, {k: _take(keys[k], asked) for k in key_names})
    bound = {i: b for i, b in zip(asked, encoded.bind_rows(0, encoded.num_rows))
             if all(v is not None for v in b.values[:len(pk)])}
    asked = [i for i in asked if i in bound]  # a null partition key fails when written
    kinds = [c.type.unwrapped().kind for c in key_prepared.bind_columns]
    found: dict[tuple[Any, ...], list[Any]] = {}
    result: Any
    sends: list[Any] = []
    sent_rows: list[list[int]] = []
    if all(k in _MATCHABLE for k in kinds):
        names = ", ".join(quote_name(k) for k in key_names)
        partitions: dict[tuple[Any, ...], list[int]] = {}
        for i in asked:
            partitions.setdefault(tuple(bound[i].values[:len(pk)]), []).append(i)
        groups = list(partitions.items())
        if len(pk) == 1:
            by_partitions = statement(f"SELECT {names}, {wanted} FROM {table} WHERE "
                                      f"{quote_name(pk[0])} IN ?")
            for at in range(0, len(groups), PARTITIONS_PER_READ):
                part = groups[at:at + PARTITIONS_PER_READ]
                sends.append(_bound(by_partitions, [_list_value([g[0][0] for g in part])]))
                sent_rows.append([i for _, members in part for i in members])
        else:
            by_partition = statement(f"SELECT {names}, {wanted} FROM {table} WHERE "
                                     + " AND ".join(f"{quote_name(k)} = ?" for k in pk))
            for key, members in groups:
                sends.append(_bound(by_partition, list(key)))
                sent_rows.append(members)
        serializers = make_serializers([c.type for c in key_prepared.bind_columns])
        width = len(key_names)
        for (ok, result), members in zip(send_all(session, sends, concurrency,
                                                  EXEC_PROFILE_DEFAULT), sent_rows):
            if not ok:
                failed.update((i, _error(result)) for i in members)
                continue
            for row in result:
                cells = _cells(row)
                key = tuple(None if v is None else serializers[j].encode(v)
                            for j, v in enumerate(cells[:width]))
                found[key] = cells[width:]
                found.setdefault(key[:len(pk)] + (None,) * len(ck), cells[width:])
        there: dict[int, list[Any] | None] = {
            i: found.get(tuple(bound[i].values)) for i in asked if i not in failed}
        static_there: dict[int, list[Any] | None] = {i: found.get(tuple(bound[i].values[:len(pk)]) + (None,) * len(ck))
                        for i in asked if i not in failed}
    else:
        there = {}
        static_there = {}
        by_key = [i for i in asked if all(v is not None for v in bound[i].values)]
        _read_first(session, [_bound(by_row, list(bound[i].values)) for i in by_key], by_key,
                    concurrency, there, failed)
        if static:
            by_static = statement(f"SELECT {wanted} FROM {table} WHERE "
                                  + " AND ".join(f"{quote_name(k)} = ?" for k in pk)
                                  + (" LIMIT 1" if ck else ""))
            asked_static = [i for i in asked if i not in failed]
            _read_first(session, [_bound(by_static, list(bound[i].values[:len(pk)]))
                                  for i in asked_static], asked_static, concurrency,
                        static_there, failed)
    for i in asked:
        if i in failed:
            continue
        for j, column in enumerate(columns):
            source = _source_times(times[column][i], values[column][i])
            if source is None:
                continue
            state = (static_there if column in static else there).get(i)
            plan = decide(None if state is None else state[j], source)
            if plan is not None:
                plans[(i, column)] = plan
    return plans, failed


def _read_first(session: Session, sends: list[Any], rows: list[int], concurrency: int,
                into: dict[int, list[Any] | None], failed: dict[int, BaseException]) -> None:
    """Sends one read per row of ``rows``: the first row each answers (its cells, or
    None) into ``into``, the error of a read that failed into ``failed``."""
    for i, (ok, result) in zip(rows, send_all(session, sends, concurrency,
                                              EXEC_PROFILE_DEFAULT)):
        if ok:
            first = next(iter(result), None)  # type: ignore[call-overload]
            into[i] = None if first is None else _cells(first)
        else:
            failed[i] = _error(result)


def _take(column: Any, rows: Sequence[int]) -> Any:
    """Rows ``rows`` of a column: a list of Python values or an Arrow array."""
    if isinstance(column, list):
        return [column[i] for i in rows]
    return column.take(list(rows))


def _bound(statement: Any, values: list[Any]) -> BoundStatement:
    """``statement`` with values already encoded (bytes), routed by the driver."""
    bound = BoundStatement(statement)
    bound.values = values
    return bound


def _list_value(items: Sequence[bytes | None]) -> bytes:
    """The encoded ``list<...>`` of already encoded elements (an ``IN ?`` value)."""
    out = [_I32.pack(len(items))]
    for item in items:
        if item is None:
            out.append(_I32.pack(-1))
        else:
            out.append(_I32.pack(len(item)))
            out.append(item)
    return b"".join(out)


def _error(outcome: object) -> BaseException:
    if isinstance(outcome, BaseException):
        return outcome
    return RuntimeError(f"reading the list write times failed: {outcome!r}")


def _cells(row: Any) -> list[Any]:
    if isinstance(row, Mapping):
        return list(row.values())
    return list(row)


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

    def plan(self, keys: Mapping[str, Any], values: Mapping[str, list[Any]],
             times: Mapping[str, list[Any]], rows: Sequence[int], *, again: bool,
             concurrency: int
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
                plans, failed = plan_lists(self.session, self.table, self.metadata, keys,
                                           values, times, rows, concurrency=concurrency,
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
