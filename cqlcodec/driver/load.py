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

import re
import time
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from cassandra import OperationTimedOut, Unavailable, WriteTimeout
from cassandra.cluster import NoHostAvailable, Session
from cassandra.connection import ConnectionException
from cassandra.query import PreparedStatement

from cqlcodec.driver.columns import InsertError, InsertFailure, InsertResult, insert_steps
from cqlcodec.driver.outage import DEFAULT_RETRY_TIMEOUT, Patience, check_retry_options
from cqlcodec.driver.sender import Outcomes, Sends, run_steps
from cqlcodec.driver.sources import (
    LoadError,
    SourcePart,
    arrow_module,
    open_source,
    peek_columns,
    source_parts,
)
from cqlcodec.driver.splits import SplitPlanError, table_ref
from cqlcodec.errors import BindError

__all__ = ["LoadProgress", "load_steps", "load_table", "resolve_table"]

RETRYABLE: Final = (WriteTimeout, OperationTimedOut, Unavailable, NoHostAvailable,
                    ConnectionException, OSError)


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


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def load_table(session: Session, table: str, source: object, *,
               columns: Sequence[str] | None = None,
               rename: Mapping[str, str] | None = None,
               chunk_rows: int = 20_000, batch_by_replica: bool = True,
               batch_bytes: int = 40_000, concurrency: int = 16,
               consistency_level: int | None = None, retries: int | None = None,
               retry_timeout: float | None = None, raise_on_error: bool = True,
               progress: Callable[[LoadProgress], None] | None = None) -> InsertResult:
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
    connection or no host available are sent again (inserts of whole values are
    idempotent: a row written twice holds the same values) until ``retry_timeout``
    seconds (default 120) pass without a row written, or, when ``retries`` is given,
    after ``retries`` rounds in a row that wrote nothing (the count bound of earlier
    versions; default ``None``: no count bound). While the driver holds every host
    down, the load waits for it to reconnect before sending (see
    :mod:`cqlcodec.driver.outage`). Counter updates are not idempotent and are never
    sent again: a counter row that failed is in ``failures`` (its increment may or may
    not have been applied). What still fails is in ``failures`` and, with
    ``raise_on_error``, raises :class:`InsertError` at the end. ``progress`` is called
    after every chunk with a :class:`LoadProgress`.
    """
    return run_steps(session, load_steps(
        session, table, source, columns=columns, rename=rename, chunk_rows=chunk_rows,
        batch_by_replica=batch_by_replica, batch_bytes=batch_bytes, concurrency=concurrency,
        consistency_level=consistency_level, retries=retries, retry_timeout=retry_timeout,
        raise_on_error=raise_on_error, progress=progress))


def load_steps(session: Session, table: str, source: object, *,
               columns: Sequence[str] | None = None,
               rename: Mapping[str, str] | None = None,
               chunk_rows: int = 20_000, batch_by_replica: bool = True,
               batch_bytes: int = 40_000, concurrency: int = 16,
               consistency_level: int | None = None, retries: int | None = None,
               retry_timeout: float | None = None, raise_on_error: bool = True,
               progress: Callable[[LoadProgress], None] | None = None,
               ) -> Generator[Sends, Outcomes, InsertResult]:
    """:func:`load_table` as a generator of the :class:`~cqlcodec.driver.sender.Sends` it
    needs (see :func:`cqlcodec.driver.columns.insert_steps`); it returns the
    :class:`InsertResult`."""
    if chunk_rows < 1:
        raise ValueError(f"chunk_rows must be at least 1, got {chunk_rows}")
    timeout = DEFAULT_RETRY_TIMEOUT if retry_timeout is None else float(retry_timeout)
    check_retry_options(timeout, retries)
    pa = arrow_module()
    meta = resolve_table(session, table)
    table_name = f"{meta.keyspace_name}.{meta.name}"
    cql_types = {name: str(col.cql_type) for name, col in meta.columns.items()}
    key_columns = [c.name for c in meta.primary_key]
    counter = "counter" in cql_types.values()
    renamed = dict(rename or {})
    parts = source_parts(source)
    for part in parts:  # every file is checked before anything is sent
        names = peek_columns(part)
        if names is not None:
            _check_columns(_target_names(names, columns, renamed), cql_types, key_columns,
                           table_name, part.name)
    result = InsertResult(0)
    statements: dict[tuple[str, ...], PreparedStatement] = {}
    rows_total = _total_rows(parts)
    bytes_total = sum(p.size for p in parts)
    bytes_done = 0
    done_parts = 0
    started = time.monotonic()
    patience = Patience(session, timeout, retries)  # the clock of the whole load: time without a write
    for part in parts:
        csv_types = {src: cql_types[renamed.get(src, src)] for src in
                     (peek_columns(part) or []) if renamed.get(src, src) in cql_types}
        batches = open_source(part, chunk_rows, csv_types)
        while True:
            first_row = result.rows
            try:
                batch = next(batches, None)
                if batch is None:
                    break
                yield from _load_chunk(session, pa, batch, part, first_row, columns, renamed,
                                       cql_types, key_columns, table_name, statements,
                                       consistency_level, result,
                                       batch_by_replica=batch_by_replica,
                                       batch_bytes=batch_bytes, concurrency=concurrency,
                                       patience=patience, counter=counter)
            except LoadError as exc:
                if exc.source:
                    raise
                row = None if exc.row is None else first_row + exc.row
                raise LoadError(exc.reason, source=part.name, column=exc.column,
                                row=row) from exc
            if progress is not None:
                progress(LoadProgress(result.rows, result.written, len(result.failures),
                                      rows_total, bytes_done, bytes_total,
                                      time.monotonic() - started, done_parts, len(parts)))
        bytes_done += part.size
        done_parts += 1
    patience.done()
    result.failures.sort(key=lambda f: f.row)
    if progress is not None:
        progress(LoadProgress(result.rows, result.written, len(result.failures), rows_total,
                              bytes_done, bytes_total, time.monotonic() - started,
                              done_parts, len(parts)))
    if result.failures and raise_on_error:
        raise InsertError(result)
    return result


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
                patience: Patience, counter: bool) -> Generator[Sends, Outcomes, None]:
    mapping = _as_mapping(pa, batch)
    keep = set(columns) if columns is not None else None
    chunk = {renamed.get(n, n): c for n, c in mapping.items() if keep is None or n in keep}
    _check_columns(list(chunk), cql_types, key_columns, table_name, part.name)
    rows = len(next(iter(chunk.values()))) if chunk else 0
    if rows == 0:
        return
    names = tuple(chunk)
    statement = statements.get(names)
    if statement is None:
        statement = _prepare_insert(session, table_name, names, patience)
        if consistency_level is not None:
            statement.consistency_level = consistency_level
        statements[names] = statement
    if patience.failures == 0:
        patience.progressed()  # the clock runs from the chunk's first send, not its reading
    unavailable = patience.wait_for_hosts()
    if unavailable is not None:
        raise LoadError(f"no host of {table_name} came back: {unavailable}", source=part.name)
    try:
        done = yield from insert_steps(session, statement, chunk, concurrency=concurrency,
                                       batch_by_replica=batch_by_replica,
                                       batch_bytes=batch_bytes, chunk_rows=rows,
                                       raise_on_error=False)
    except BindError as exc:
        reason = re.sub(r"^row \d+: ", "", str(exc))
        raise LoadError(reason, source=part.name, column=exc.column,
                        row=None if exc.row is None else first_row + exc.row) from exc
    failures = done.failures
    requests = done.requests
    if len(failures) < rows:
        patience.progressed()
    while not counter:  # counter updates are not idempotent: never sent twice
        again = [f.row for f in failures if isinstance(f.error, RETRYABLE)]
        if not again or patience.wait_to_retry() is not None:
            break
        kept = [f for f in failures if not isinstance(f.error, RETRYABLE)]
        retried = yield from insert_steps(session, statement, _take(pa, chunk, again),
                                          concurrency=max(1, concurrency // 4),
                                          batch_by_replica=batch_by_replica,
                                          batch_bytes=batch_bytes, chunk_rows=len(again),
                                          raise_on_error=False)
        requests += retried.requests
        if len(retried.failures) < len(again):
            patience.progressed()
        failures = kept + [InsertFailure(again[f.row], f.error) for f in retried.failures]
    result.rows += rows
    result.requests += requests
    result.failures.extend([InsertFailure(first_row + f.row, f.error) for f in failures])


def _prepare_insert(session: Session, table_name: str, names: tuple[str, ...],
                    patience: Patience) -> PreparedStatement:
    """The INSERT of ``names``, prepared again while the cluster is unreachable."""
    cql = (f"INSERT INTO {_quoted_table(table_name)} ({', '.join(map(_quoted, names))}) "
           f"VALUES ({', '.join('?' * len(names))})")
    while True:
        try:
            return session.prepare(cql)
        except RETRYABLE as exc:
            reason = patience.wait_to_retry()
            if reason is not None:
                raise LoadError(f"cannot prepare {cql!r}: {reason}, last: "
                                f"{type(exc).__name__}: {exc}") from exc


def _quoted_table(table_name: str) -> str:
    keyspace, _, name = table_name.partition(".")
    return f"{_quoted(keyspace)}.{_quoted(name)}"


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


def _take(pa: Any, chunk: Mapping[str, Any], rows: list[int]) -> dict[str, Any]:
    indices = pa.array(rows, type=pa.int64())
    taken: dict[str, Any] = {}
    for name, column in chunk.items():
        if isinstance(column, list):
            taken[name] = [column[i] for i in rows]
        else:
            taken[name] = column.take(indices)
    return taken
