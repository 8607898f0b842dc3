"""Bulk loads: a file, a directory, a table or a stream of record batches into a
Cassandra table, chunk by chunk, through :func:`cqlcodec.driver.insert_columns`::

    from cqlcodec.driver import load_table

    result = load_table(session, "ks.events", "events/")        # Parquet/CSV/Arrow files
    result = load_table(session, "ks.events", frame)            # pandas or polars
    print(result.written, len(result.failures))

Memory stays bounded by one chunk (``chunk_rows`` rows of the source, bound and sent
before the next one is read).
"""

from __future__ import annotations

import datetime
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cassandra.cluster import Session
from cassandra.query import PreparedStatement

from cqlcodec.driver.bad_rows import BadRow, BadRowsFile
from cqlcodec.driver.cell_times import (
    TimedColumns,
    python_values,
    time_column_types,
    time_columns,
    write_timed_chunk,
)
from cqlcodec.driver.columns import (
    InsertError,
    InsertFailure,
    InsertResult,
    bind_all,
    check_nulls,
    insert_columns,
)
from cqlcodec.driver.list_repeats import ListPlan, ListRepeats
from cqlcodec.driver.outage import DEFAULT_RETRY_TIMEOUT, Patience, check_retry_options
from cqlcodec.driver.resend import RETRYABLE, insert_until_written, prepare_patiently
from cqlcodec.driver.row_take import take_chunk_rows, take_rows
from cqlcodec.driver.sender import SendsStopped, stopped_by
from cqlcodec.driver.sources import (
    Chunk,
    LoadCancelled,
    LoadError,
    SourcePart,
    TooManyBadRows,
    arrow_module,
    open_source,
    peek_columns,
    source_parts,
)
from cqlcodec.driver.splits import SplitPlanError, table_ref
from cqlcodec.driver.throttle import RowRate, piece_rows
from cqlcodec.driver.time_text import time_zone_of
from cqlcodec.errors import BindError
from cqlcodec.types.names import cql_table_name, quote_name, split_table_name

__all__ = ["ChunkWriter", "LoadProgress", "load_table", "resolve_table"]


@dataclass(frozen=True)
class LoadProgress:
    """What a :func:`load_table` progress callback receives after each chunk: rows read
    so far, rows written, rows failed, the total rows when known (Parquet and in-memory
    sources) else None, bytes of the files read so far and in all, and seconds since
    the start, and the pieces (files) finished of all.
    """

    rows: int
    written: int
    failed: int
    rows_total: int | None
    bytes_done: int
    bytes_total: int
    elapsed: float
    parts_done: int = 0
    parts_total: int = 1


def resolve_table(session: Session, table: str) -> Any:
    """The driver's metadata of ``table`` ("ks.table", or "table" in the session's
    keyspace; quoted names keep their case), refreshed from the server once when it is
    not known yet; :class:`LoadError` for an unknown keyspace or table."""
    try:
        return table_ref(session, table).metadata
    except SplitPlanError as exc:
        raise LoadError(str(exc)) from None


def load_table(session: Session, table: str, source: object, *,
               columns: Sequence[str] | None = None,
               rename: Mapping[str, str] | None = None,
               chunk_rows: int = 20_000, batch_by_replica: bool = True,
               batch_bytes: int = 40_000, concurrency: int = 16,
               consistency_level: int | None = None, retries: int | None = None,
               retry_timeout: float | None = None, raise_on_error: bool = True,
               progress: Callable[[LoadProgress], None] | None = None,
               ignore_writetime: bool = False,
               stdin_format: str | None = None, max_errors: int | None = None,
               bad_rows: BadRowsFile | None = None, dry_run: bool = False,
               rate: float | None = None, stop: threading.Event | None = None,
               nulls: str = "unset",
               time_zone: str | datetime.tzinfo | None = None) -> InsertResult:
    """Write every row of ``source`` into ``table`` ("ks.table") and return the
    :class:`InsertResult` (``rows``, ``requests``, ``failures`` with each row's index in
    the whole load, counting from 0 across the files in order).

    ``source``: a Parquet, CSV or Arrow IPC file, a directory of them, a list of paths,
    a ``pyarrow`` Dataset, Table, RecordBatch or RecordBatchReader, a pandas or polars
    DataFrame, any Arrow stream, or an iterable of record batches (see
    :mod:`cqlcodec.driver.sources`). Source columns are matched to table columns by
    name (``rename`` maps source names to table names; ``columns`` keeps only those
    source columns); table columns the source lacks are left unset (the primary key
    must be there).

    Before anything is sent, every file is opened and its columns checked: an unknown
    table or keyspace, a source column the table does not have, a missing primary-key
    column or an unreadable file raise :class:`LoadError`. Each chunk of ``chunk_rows``
    rows is read and bound whole before any of it is sent, so a value that does not
    fit its column's CQL type raises :class:`LoadError` naming the column and the row
    with nothing of that chunk sent (the chunks before it were written).

    Rows go out through :func:`insert_columns` (``batch_by_replica`` and
    ``batch_bytes`` as there: batches of rows owned by the same replicas, sized by the
    server's measure), at most ``concurrency`` requests (batches) in flight, at
    ``consistency_level`` (a ``cassandra.ConsistencyLevel`` value; default the
    session's). Rows that failed with a timeout, an unavailable replica, a lost
    connection or no host available are sent again (a timeout is not a failure: the
    first write may have landed, and the row is written so that a second copy changes
    nothing; see below for lists) until ``retry_timeout``
    seconds (default 120) pass without a row written, or, when ``retries`` is given,
    after ``retries`` rounds in a row that wrote nothing (the count bound of earlier
    versions; default ``None``: no count bound). While the driver holds every host
    down, the load waits for it to reconnect before sending (see
    :mod:`cqlcodec.driver.outage`). Counter updates are not idempotent and are never
    sent again: a counter row that failed is in ``failures`` (its increment may or may
    not have been applied). What still fails is in ``failures`` and, with
    ``raise_on_error``, raises :class:`InsertError` at the end. ``progress`` is called
    after every chunk with a :class:`LoadProgress`.

    Source columns named ``writetime(c)`` and ``ttl(c)`` (what ``scan_table(...,
    writetime=True, ttl=True)`` and ``unload --writetime --ttl`` write) are the write
    time and TTL of column ``c``: each cell is written with its own, one statement per
    (write time, TTL) group of a row's cells, ``USING TIMESTAMP ? AND TTL ?``, still
    batched by replica (see :mod:`cqlcodec.driver.cell_times`).
    ``ignore_writetime=True`` leaves those columns out (the server's times of now).
    JSON lines files (``.jsonl``, see :mod:`cqlcodec.driver.json_values`) and
    compressed CSV or JSON lines (``.gz``, ``.zst``) are read too; the source ``"-"``
    is stdin, in ``stdin_format`` (``csv`` or ``jsonl``). Their timestamps and dates are
    read in every form of :mod:`cqlcodec.driver.time_text` (with or without a zone, ``T``
    or a space, any fraction, truncated to the millisecond; epoch milliseconds; a date
    as a midnight datetime); ``time_zone`` (an IANA name such as ``"Europe/Paris"``, an
    offset such as ``"+02:00"``, or a ``tzinfo``; default UTC, as dsbulk's
    ``codec.timeZone``) is the zone of timestamps written without one.
    A non-frozen list written with its write time where a copy of it may already be
    (a row sent again, or a load into a table that held rows when it began) is first
    looked up in the target (its ``writetime``) and written so that it never doubles:
    not at all when it is there already, else at most 1 µs after its source time (see
    :mod:`cqlcodec.driver.list_repeats`). A counter table is written with
    ``UPDATE ... SET c = c + ?`` batched by partition: loading the same rows twice adds
    them twice; a null counter cell adds nothing, and a row whose counters are all null
    writes nothing (counted in ``InsertResult.empty``).

    ``nulls``: ``"unset"`` (the default) writes no tombstone for a null cell: the cell
    is left as the target has it (a load never deletes, and a sparse table gains no
    tombstones); ``"delete"`` writes nulls as deletions, so that a null clears a value
    the target holds. Protocol v3, which has no unset, writes only each row's non-null
    columns.

    ``max_errors`` (or ``bad_rows``) makes bad rows part of the result instead of the
    end of the load: a CSV or JSON lines record that cannot be read or a CSV value that
    does not convert (see :mod:`cqlcodec.driver.text_records`) is set aside and reading
    goes on; a row whose value cannot be bound (wrong type, out of range) is left out
    of its chunk and the rest sent; a row the server refuses (rows of a refused batch
    are sent again one by one to find it) is bad too. Each bad row is in ``failures``
    and, with ``bad_rows`` (a :class:`BadRowsFile`), appended there with its error and
    its place in the source (``file:line`` for CSV and JSON lines, else
    ``source:row``). With ``max_errors`` or ``bad_rows`` the bad rows are part of the
    result: ``load_table`` returns it (``raise_on_error`` applies to loads without
    them only). More than ``max_errors`` bad rows (counted after each chunk; ``0``
    allows none) stop the load with :class:`TooManyBadRows`, a :class:`LoadError` that
    holds the result so far and says whether the source was read to its end.
    ``dry_run=True`` reads, converts and binds every row
    and sends nothing (``requests`` stays 0); its bad rows are its result, as with
    ``max_errors`` (without it, no budget). ``rate`` limits the load to that many
    rows per second (chunks of at most a tenth of a second of rows, see
    :mod:`cqlcodec.driver.throttle`).

    ``stop`` (a ``threading.Event``) stops the load from another thread: once it is
    set, no further request is sent (not even the rest of the chunk being written),
    the requests in flight are waited for, and :class:`LoadCancelled` is raised.
    :func:`cqlcodec.aio.load_table` sets it when its task is cancelled.
    """
    if chunk_rows < 1:
        raise ValueError(f"chunk_rows must be at least 1, got {chunk_rows}")
    check_nulls(nulls)
    zone = time_zone_of(time_zone)
    if max_errors is not None and max_errors < 0:
        raise ValueError(f"max_errors must be at least 0, got {max_errors}")
    timeout = DEFAULT_RETRY_TIMEOUT if retry_timeout is None else float(retry_timeout)
    check_retry_options(timeout, retries)
    pa = arrow_module()
    limiter = None
    if rate is not None:
        limiter = RowRate(rate)
        chunk_rows = piece_rows(rate, chunk_rows)
    meta = resolve_table(session, table)
    table_name = cql_table_name(meta.keyspace_name, meta.name)
    cql_types = {name: str(col.cql_type) for name, col in meta.columns.items()}
    key_columns = [c.name for c in meta.primary_key]
    counter = "counter" in cql_types.values()
    renamed = dict(rename or {})
    time_types = time_column_types(session, meta)
    parts = source_parts(source, stdin_format)
    tolerant = max_errors is not None or bad_rows is not None or dry_run
    json_types = _json_types(session, table_name, renamed, parts)
    for part in parts:  # every file is checked before anything is sent
        names = peek_columns(part)
        if names is not None:
            targets = _target_names(names, columns, renamed)
            _check_columns([n for n in targets if n not in time_types], cql_types,
                           key_columns, table_name, part.name)
    result = InsertResult(0)
    statements: dict[tuple[str, ...], PreparedStatement] = {}
    timed_statements: dict[Any, PreparedStatement] = {}
    rows_total = _total_rows(parts)
    bytes_total = sum(p.size for p in parts)
    bytes_done = 0
    done_parts = 0
    started = time.monotonic()
    patience = Patience(session, timeout, retries)  # the clock of the whole load: time without a write
    repeats = ListRepeats(session, _quoted_table(table_name), meta)
    try:
        with stopped_by(stop):
            for part in parts:
                part_first = result.rows
                all_types = {**time_types, **cql_types}
                csv_types = {src: all_types[renamed.get(src, src)] for src in
                             (peek_columns(part) or []) if renamed.get(src, src) in all_types}
                chunks = open_source(part, chunk_rows, csv_types, json_types, tolerant=tolerant,
                                     time_zone=zone)
                while True:
                    first_row = result.rows
                    piece: Chunk | None = None
                    try:
                        piece = next(chunks, None)
                        if piece is None:
                            break
                        batch = piece.data
                        if limiter is not None:
                            limiter.wait(_num_rows(batch))
                        keep = set(columns) if columns is not None else None
                        chosen = [n for n in (list(batch) if isinstance(batch, Mapping)
                                              else batch.schema.names) if keep is None or n in keep]
                        timed = time_columns([renamed.get(n, n) for n in chosen], meta)

                        def write(chunk: Any, start: int, into: InsertResult, grouped: bool,
                                  timed: TimedColumns = timed, chosen: list[str] = chosen,
                                  part: SourcePart = part) -> None:
                            if timed and not ignore_writetime and not dry_run:
                                _load_timed_chunk(session, pa, chunk, chosen, renamed, timed, meta,
                                                  table_name, timed_statements, consistency_level,
                                                  into, start, batch_by_replica=grouped,
                                                  batch_bytes=batch_bytes, concurrency=concurrency,
                                                  patience=patience, repeats=repeats,
                                                  nulls=nulls)
                            else:
                                _load_chunk(session, pa, chunk, part, start, columns, renamed,
                                            cql_types, key_columns, table_name, statements,
                                            consistency_level, into, batch_by_replica=grouped,
                                            batch_bytes=batch_bytes, concurrency=concurrency,
                                            patience=patience, counter=counter,
                                            dropped=frozenset(time_types), dry_run=dry_run,
                                            nulls=nulls)

                        if not tolerant:
                            write(batch, first_row, result, batch_by_replica)
                        else:
                            _write_tolerant(pa, write, piece, first_row, part_first, part.name,
                                            result, batch_by_replica, bad_rows)
                            if max_errors is not None and len(result.failures) > max_errors:
                                result.failures.sort(key=lambda f: f.row)
                                raise TooManyBadRows(result, max_errors,
                                                     _read_all(chunks, parts, part),
                                                     source=part.name)
                    except LoadError as exc:
                        located = _located_in(exc, part, piece, first_row)
                        if located is exc:
                            raise
                        raise located from exc
                    if progress is not None:
                        progress(LoadProgress(result.rows, result.written, len(result.failures),
                                              rows_total, bytes_done, bytes_total,
                                              time.monotonic() - started, done_parts, len(parts)))
                bytes_done += part.size
                done_parts += 1
    except SendsStopped:
        raise LoadCancelled(result) from None
    patience.done()
    result.failures.sort(key=lambda f: f.row)
    if progress is not None:
        progress(LoadProgress(result.rows, result.written, len(result.failures), rows_total,
                              bytes_done, bytes_total, time.monotonic() - started,
                              done_parts, len(parts)))
    if result.failures and raise_on_error and not tolerant:
        raise InsertError(result)
    return result


class ChunkWriter:
    """Writes record batches into one table chunk by chunk, as :func:`load_table` writes
    each chunk (what ``copy_table`` writes each page of its source through): the cells'
    own write times and TTLs when the batch holds ``writetime(c)``/``ttl(c)`` columns
    (non-frozen lists looked up where a copy may be there already, see
    :mod:`cqlcodec.driver.list_repeats`), counters as increments (never sent twice),
    other rows as plain inserts; rows that failed with a timeout or an unreachable
    cluster are sent again until ``patience`` gives up. Columns are matched to the
    table's by name. One thread at a time."""

    def __init__(self, session: Session, table: str, patience: Patience, *,
                 batch_by_replica: bool = True, batch_bytes: int = 40_000,
                 concurrency: int = 16, consistency_level: int | None = None,
                 nulls: str = "unset", source_name: str = "") -> None:
        check_nulls(nulls)
        self.session = session
        self.meta = resolve_table(session, table)
        self.table_name = cql_table_name(self.meta.keyspace_name, self.meta.name)
        self.cql_types = {name: str(col.cql_type) for name, col in self.meta.columns.items()}
        self.key_columns = [c.name for c in self.meta.primary_key]
        self.counter = "counter" in self.cql_types.values()
        self.patience = patience
        self.repeats = ListRepeats(session, _quoted_table(self.table_name), self.meta)
        self._grouped = batch_by_replica
        self._batch_bytes = batch_bytes
        self._concurrency = concurrency
        self._consistency_level = consistency_level
        self._nulls = nulls
        self._part = SourcePart(source_name or self.table_name, "object")
        self._statements: dict[tuple[str, ...], PreparedStatement] = {}
        self._timed_statements: dict[Any, PreparedStatement] = {}
        self._pa = arrow_module()

    def check_columns(self, names: Sequence[str]) -> None:
        """:class:`LoadError` unless the table has every column of ``names`` (time columns
        aside) and ``names`` hold its primary key."""
        timed = time_columns(names, self.meta).source_names
        _check_columns([n for n in names if n not in timed], self.cql_types, self.key_columns,
                       self.table_name, self._part.name)

    def write(self, batch: Any, first_row: int, result: InsertResult) -> None:
        """Writes every row of ``batch`` (an Arrow record batch); its rows count in
        ``result`` from ``first_row`` (failures by that numbering)."""
        names = list(batch.schema.names)
        timed = time_columns(names, self.meta)
        if timed and not self.counter:
            _load_timed_chunk(self.session, self._pa, batch, names, {}, timed, self.meta,
                              self.table_name, self._timed_statements,
                              self._consistency_level, result, first_row,
                              batch_by_replica=self._grouped, batch_bytes=self._batch_bytes,
                              concurrency=self._concurrency, patience=self.patience,
                              repeats=self.repeats, nulls=self._nulls)
        else:
            _load_chunk(self.session, self._pa, batch, self._part, first_row, None, {},
                        self.cql_types, self.key_columns, self.table_name, self._statements,
                        self._consistency_level, result, batch_by_replica=self._grouped,
                        batch_bytes=self._batch_bytes, concurrency=self._concurrency,
                        patience=self.patience, counter=self.counter,
                        dropped=frozenset(timed.source_names), nulls=self._nulls)


def _read_all(chunks: Any, parts: list[SourcePart], part: SourcePart) -> bool:
    """Whether nothing is left to read after the chunks read so far of ``part``: no row
    in the rest of its chunks and no part after it (reads at most one more chunk)."""
    if parts.index(part) < len(parts) - 1:
        return False
    try:
        following = next(chunks, None)
    except Exception:
        return False
    return following is None or (_num_rows(following.data) == 0 and not following.unreadable)


def _located_in(exc: LoadError, part: SourcePart, piece: Chunk | None,
                first_row: int) -> LoadError:
    """``exc`` (raised while reading or writing ``piece``, the chunk whose first row is
    the load's row ``first_row``) naming its source, its row in the whole load and, for
    text files, the line its record starts on; ``exc`` itself when it says all it can
    (or is a subclass with a meaning of its own, such as :class:`TooManyBadRows`)."""
    if type(exc) is not LoadError:
        return exc
    row = exc.row if exc.source or exc.row is None else first_row + exc.row
    line = exc.line
    if line is None and row is not None and piece is not None and piece.lines:
        if 0 <= row - first_row < len(piece.lines):
            line = piece.lines[row - first_row]
    if exc.source and line == exc.line:
        return exc
    return LoadError(exc.reason, source=exc.source or part.name, column=exc.column, row=row,
                     line=line)


def _write_tolerant(pa: Any, write: Callable[[Any, int, InsertResult, bool], None],
                    piece: Chunk, first_row: int, part_first: int, part_name: str,
                    result: InsertResult, grouped: bool, bad_rows: BadRowsFile | None) -> None:
    """One chunk, its bad rows left out and reported instead of stopping the load:
    the records the source could not read; a row that fails binding is taken out and
    the rest bound again; rows of requests the server refused are sent again one by
    one, and those refused again are bad. Rows are numbered in the source's order,
    unreadable records among them; a text file's rows are placed by their line."""
    current = piece.data
    total = _num_rows(current)
    lines = piece.lines
    if piece.unreadable and lines is not None:
        order = sorted([*lines, *(u.line for u in piece.unreadable)])
        record_of = {line: i for i, line in enumerate(order)}
        index = [record_of[line] for line in lines]
    else:
        record_of = {}
        index = list(range(total))
    where = list(lines) if lines is not None else None
    failures: dict[int, tuple[BaseException, dict[str, Any], str, str]] = {}

    def position(row: int) -> str:
        if where is not None:
            return str(where[row])
        return str(first_row + index[row] - part_first + 1)

    for u in piece.unreadable:
        unread = LoadError(u.reason, source=f"{part_name}:{u.line}")
        shown = f"{u.reason}; the line: {u.text}" if u.text else u.reason
        failures[record_of[u.line]] = (unread, u.values, str(u.line), shown)
    done = InsertResult(0)
    while index:
        done = InsertResult(0)
        try:
            write(current, 0, done, grouped)
            break
        except LoadError as exc:
            if exc.row is None:
                raise
            reason = f'column "{exc.column}": {exc.reason}' if exc.column else exc.reason
            failures[index[exc.row]] = (LoadError(reason), _row_values(current, exc.row),
                                        position(exc.row), reason)
            current = _drop_row(pa, current, exc.row)
            del index[exc.row]
            if where is not None:
                del where[exc.row]
    refused = [f for f in done.failures if not isinstance(f.error, RETRYABLE)]
    kept = [f for f in done.failures if isinstance(f.error, RETRYABLE)]
    if refused and grouped:  # find the rows the server refuses among their batch mates
        rows = [f.row for f in refused]
        alone = InsertResult(0)
        write(_take_rows(pa, current, rows), 0, alone, False)
        done.requests += alone.requests
        refused = [InsertFailure(rows[f.row], f.error) for f in alone.failures]
    for f in [*kept, *refused]:
        failures[index[f.row]] = (f.error, _row_values(current, f.row), position(f.row),
                                  str(f.error))
    result.rows += total + len(piece.unreadable)
    result.requests += done.requests
    for row in sorted(failures):
        error, values, place, shown = failures[row]
        result.failures.append(InsertFailure(first_row + row, error))
        if bad_rows is not None:
            bad_rows.add(BadRow(values, f"{type(error).__name__}: {shown}",
                                f"{part_name}:{place}", first_row + row))


def _num_rows(batch: Any) -> int:
    if isinstance(batch, Mapping):
        return len(next(iter(batch.values()))) if batch else 0
    return int(batch.num_rows)


def _row_values(batch: Any, row: int) -> dict[str, Any]:
    if isinstance(batch, Mapping):
        return {n: _python_value(c[row]) for n, c in batch.items()}
    return {n: batch.column(i)[row].as_py() for i, n in enumerate(batch.schema.names)}


def _python_value(value: Any) -> Any:
    as_py = getattr(value, "as_py", None)
    if as_py is not None:
        return as_py()
    item = getattr(value, "item", None)
    return item() if item is not None and getattr(value, "ndim", 1) == 0 else value


def _drop_row(pa: Any, batch: Any, row: int) -> Any:
    keep = [i for i in range(_num_rows(batch)) if i != row]
    return _take_rows(pa, batch, keep)


def _take_rows(pa: Any, batch: Any, rows: list[int]) -> Any:
    if isinstance(batch, Mapping):
        return take_chunk_rows(pa, {n: c if isinstance(c, list) or hasattr(c, "take") else list(c)
                                    for n, c in batch.items()}, rows)
    return take_rows(pa, batch, rows)


def _json_types(session: Session, table_name: str, renamed: Mapping[str, str],
                parts: list[SourcePart]) -> dict[str, Any]:
    """The CQL type of every column a JSON lines or CSV source may hold, by source
    name."""
    if not any(p.kind in ("jsonl", "csv") for p in parts):
        return {}
    from cqlcodec.driver.scan import table_schema_batch

    schema = table_schema_batch(session, _quoted_table(table_name), writetime=True,
                                ttl=True)
    source_of = {target: source for source, target in renamed.items()}
    return {source_of.get(n, n): t for n, t in zip(schema.names, schema.types)}


def _total_rows(parts: list[SourcePart]) -> int | None:
    total = 0
    for part in parts:
        if part.kind == "parquet":
            import pyarrow.parquet as pq

            part.rows = pq.ParquetFile(part.name).metadata.num_rows
        if part.rows is None:
            return None
        total += part.rows
    return total


def _target_names(names: Sequence[str], columns: Sequence[str] | None,
                  renamed: Mapping[str, str]) -> list[str]:
    keep = set(columns) if columns is not None else None
    return [renamed.get(n, n) for n in names if keep is None or n in keep]


def _check_columns(targets: Sequence[str], cql_types: Mapping[str, str],
                   key_columns: Sequence[str], table_name: str, source: str) -> None:
    for name in targets:
        if name not in cql_types:
            raise LoadError(f"table {table_name} has no such column (its columns: "
                            f"{', '.join(cql_types)})", source=source, column=name)
    missing = [k for k in key_columns if k not in targets]
    if missing:
        raise LoadError(f"the primary-key column(s) {', '.join(missing)} of {table_name} "
                        "are missing", source=source)


def _load_chunk(session: Session, pa: Any, batch: Any, part: SourcePart, first_row: int,
                columns: Sequence[str] | None, renamed: Mapping[str, str],
                cql_types: Mapping[str, str], key_columns: Sequence[str], table_name: str,
                statements: dict[tuple[str, ...], PreparedStatement],
                consistency_level: int | None, result: InsertResult, *,
                batch_by_replica: bool, batch_bytes: int, concurrency: int,
                patience: Patience, counter: bool, dropped: frozenset[str] = frozenset(),
                dry_run: bool = False, nulls: str = "unset") -> None:
    mapping = _as_mapping(pa, batch)
    keep = set(columns) if columns is not None else None
    chunk = {renamed.get(n, n): c for n, c in mapping.items()
             if (keep is None or n in keep) and renamed.get(n, n) not in dropped}
    _check_columns(list(chunk), cql_types, key_columns, table_name, part.name)
    rows = len(next(iter(chunk.values()))) if chunk else 0
    if rows == 0:
        return
    def statement_for(names: Sequence[str]) -> PreparedStatement:
        found = statements.get(tuple(names))
        if found is None:
            counters = [n for n in names if cql_types[n] == "counter"]
            found = _prepare(session, _write_cql(table_name, names, counters, key_columns),
                             patience)
            if consistency_level is not None:
                found.consistency_level = consistency_level
            statements[tuple(names)] = found
        return found

    statement = statement_for(tuple(chunk))
    counters = [n for n in chunk if cql_types[n] == "counter"]
    if patience.failures == 0:
        patience.progressed()  # the clock runs from the chunk's first send, not its reading
    unavailable = patience.wait_for_hosts()
    if unavailable is not None:
        raise LoadError(f"no host of {table_name} came back: {unavailable}", source=part.name)
    try:
        if dry_run:
            bind_all(statement, chunk, nulls=nulls)
            result.rows += rows
            return
        done = insert_columns(session, statement, chunk, concurrency=concurrency,
                              batch_by_replica=batch_by_replica and not counters,
                              batch_by_partition=batch_by_replica and bool(counters),
                              batch_bytes=batch_bytes, chunk_rows=rows, raise_on_error=False,
                              nulls=nulls, statement_for=statement_for)
    except BindError as exc:
        reason = re.sub(r"^row \d+: ", "", str(exc))
        raise LoadError(reason, source=part.name, column=exc.column,
                        row=None if exc.row is None else first_row + exc.row) from exc
    failures = done.failures
    requests = done.requests
    if len(failures) < rows:
        patience.progressed()
    if not counter:  # counter updates are not idempotent: never sent twice
        failures, resent = insert_until_written(session, pa, statement, chunk, failures,
                                                patience, concurrency=concurrency,
                                                batch_by_replica=batch_by_replica,
                                                batch_bytes=batch_bytes, nulls=nulls,
                                                statement_for=statement_for)
        requests += resent
    result.rows += rows
    result.requests += requests
    result.empty += done.empty
    result.failures.extend([InsertFailure(first_row + f.row, f.error) for f in failures])


def _write_cql(table_name: str, names: Sequence[str], counters: Sequence[str],
               key_columns: Sequence[str]) -> str:
    """The INSERT of ``names``; for a counter table the UPDATE adding ``counters``."""
    if not counters:
        return (f"INSERT INTO {_quoted_table(table_name)} ({', '.join(map(quote_name, names))}) "
                f"VALUES ({', '.join('?' * len(names))})")
    sets = ", ".join(f"{quote_name(c)} = {quote_name(c)} + ?" for c in counters)
    where = " AND ".join(f"{quote_name(k)} = ?" for k in key_columns)
    return f"UPDATE {_quoted_table(table_name)} SET {sets} WHERE {where}"


def _load_timed_chunk(session: Session, pa: Any, batch: Any, chosen: Sequence[str],
                      renamed: Mapping[str, str], timed: TimedColumns, meta: Any,
                      table_name: str, statements: dict[Any, PreparedStatement],
                      consistency_level: int | None, result: InsertResult, first_row: int,
                      *, batch_by_replica: bool, batch_bytes: int, concurrency: int,
                      patience: Patience, repeats: ListRepeats, nulls: str = "unset") -> None:
    """One chunk with its cells' own write times and TTLs; failed rows that timed out
    are written again (the same cells at the same times, their non-frozen lists as
    ``repeats`` plans them, so that a first write that landed is not doubled) until
    ``patience`` gives up."""
    mapping = dict(batch) if isinstance(batch, Mapping) else \
        {n: batch.column(i) for i, n in enumerate(batch.schema.names)}
    chunk = {renamed.get(n, n): mapping[n] for n in chosen}
    cql_types = {name: str(col.cql_type) for name, col in meta.columns.items()}
    _check_columns([n for n in chunk if n not in timed.source_names], cql_types,
                   [c.name for c in meta.primary_key], table_name, "")
    total = len(next(iter(chunk.values()))) if chunk else 0
    rows = list(range(total))
    target = _quoted_table(table_name)
    lists = repeats.columns([c for c in timed.writetime if c in chunk])
    keys = [c.name for c in meta.primary_key]
    values = {n: python_values(chunk[n]) for n in [*keys, *lists]} if lists else {}
    times = {c: python_values(chunk[timed.writetime[c]]) for c in lists}
    failures: list[InsertFailure] = []
    if patience.failures == 0:
        patience.progressed()  # the clock runs from the chunk's first send, not its reading
    attempt = 0
    while True:
        plans: dict[tuple[int, str], ListPlan] = {}
        unread: dict[int, BaseException] = {}
        if lists:
            plans, unread = repeats.plan({k: chunk[k] for k in keys}, values, times, rows,
                                         again=attempt > 0, concurrency=concurrency)
        sent = [r for r in rows if r not in unread]
        position = {r: j for j, r in enumerate(sent)}
        part = chunk if len(sent) == total else \
            take_chunk_rows(pa, chunk, sent)
        done = write_timed_chunk(session, pa, target, meta, part, len(sent), timed, statements,
                                 consistency_level, batch_by_replica=batch_by_replica,
                                 batch_bytes=batch_bytes, concurrency=concurrency,
                                 nulls_mode=nulls,
                                 lists={(position[r], c): p for (r, c), p in plans.items()
                                        if r in position})
        result.requests += done.requests
        if len(done.failures) < len(sent):
            patience.progressed()
        failures = sorted([InsertFailure(sent[f.row], f.error) for f in done.failures] +
                          [InsertFailure(r, e) for r, e in unread.items()], key=lambda f: f.row)
        rows = [f.row for f in failures if isinstance(f.error, RETRYABLE)]
        if not rows or patience.wait_to_retry() is not None:
            break
        attempt += 1
    result.rows += total
    result.failures.extend(InsertFailure(first_row + f.row, f.error) for f in failures)


def _prepare(session: Session, cql: str, patience: Patience) -> PreparedStatement:
    """``cql`` prepared, again while the cluster is unreachable."""
    found = prepare_patiently(session, cql, patience)
    if isinstance(found, tuple):
        exc, reason = found
        raise LoadError(f"cannot prepare {cql!r}: {reason}, last: "
                        f"{type(exc).__name__}: {exc}") from exc
    return found


def _quoted_table(table_name: str) -> str:
    keyspace, name = split_table_name(table_name)
    return f"{quote_name(keyspace)}.{quote_name(name)}"


def _as_mapping(pa: Any, batch: Any) -> dict[str, Any]:
    if isinstance(batch, Mapping):
        return dict(batch)
    return {name: _numpy_of(pa, batch.column(i)) for i, name in enumerate(batch.schema.names)}


def _numpy_of(pa: Any, column: Any) -> Any:
    """An Arrow integer, float or boolean column as a numpy (masked) array read from its
    buffers, else the column itself. (pyarrow's own ``to_numpy`` imports pandas when it
    is installed, seconds of start-up for a command-line load.)"""
    import numpy as np

    t = column.type
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    types = pa.types
    if not (types.is_integer(t) or types.is_floating(t) or types.is_boolean(t)) or \
            types.is_float16(t):
        return column
    n = len(column)
    validity, data = column.buffers()[:2]
    if types.is_boolean(t):
        bits = np.frombuffer(data, np.uint8)
        values = np.unpackbits(bits, bitorder="little")[column.offset:column.offset + n]
        values = values.astype(bool)
    else:
        kind = "f" if types.is_floating(t) else ("i" if types.is_signed_integer(t) else "u")
        dtype = np.dtype(f"<{kind}{t.bit_width // 8}")
        values = np.frombuffer(data, dtype, count=n, offset=column.offset * dtype.itemsize)
    if not column.null_count:
        return values
    valid = np.unpackbits(np.frombuffer(validity, np.uint8),
                          bitorder="little")[column.offset:column.offset + n].astype(bool)
    return np.ma.MaskedArray(values, mask=~valid)
