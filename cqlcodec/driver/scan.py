"""Whole tables into columns: parallel token-range scans, exact under faults.

::

    from cqlcodec.driver import scan_table

    scan = scan_table(session, "ks.events", ["id", "ts", "payload"])
    table = scan.to_arrow()                   # or to_pandas(), to_polars(), to_parquet(dir)
    for batch in scan_table(session, "ks.events"):   # ColumnBatches as they arrive
        ...

Each split of :func:`cqlcodec.driver.plan_splits` is read by one prepared query,
``SELECT cols FROM ks.t WHERE token(pk) > ? AND token(pk) <= ?``, sent to a replica of
the split (host targeting), page by page, each page's RESULT body decoded by
:func:`cqlcodec.decode_columns` without building rows. Several splits are read at once
(worker threads; memory is bounded by the pages in flight). A page is the unit of
delivery: when a request fails part-way (a timeout, a cut connection, a coordinator
that went down) the split resumes from the paging state of the last page it delivered,
on another replica if need be and after the token map was read again, so no row is lost
and none is delivered twice. While every node is down the split waits for the driver to
reconnect (:mod:`cqlcodec.driver.outage`); it gives up only after ``retry_timeout``
seconds (120) without a page read.
"""

from __future__ import annotations

import os
import queue
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final

import cassandra
from cassandra.cluster import ResponseFuture, Session
from cassandra.protocol import RequestValidationException as ServerValidationError
from cassandra.query import BoundStatement, PreparedStatement

from cqlcodec.columnar.batch import ColumnBatch
from cqlcodec.columnar.stream import stream_capsule_of
from cqlcodec.columnar.unify import arrow_table_of, pandas_frame_of
from cqlcodec.driver.cell_times import select_list
from cqlcodec.driver.columnar_files import ColumnarFile
from cqlcodec.driver.columns import RawPage, send_columnar, wait_page
from cqlcodec.driver.estimates import RowEstimate, sample_page
from cqlcodec.driver.outage import (
    DEFAULT_RETRY_TIMEOUT,
    HostWatch,
    Patience,
    address_of,
    check_retry_options,
    host_watch,
)
from cqlcodec.driver.splits import (
    MAX_TOKEN,
    SplitPlanError,
    TableRef,
    TokenSplit,
    check_coverage,
    plan_splits,
    replicas_of,
    table_ref,
)
from cqlcodec.errors import CodecError
from cqlcodec.types.names import CqlNameError, column_of, cql_name, quote_name

__all__ = ["ScanError", "ScanProgress", "SplitReader", "TableScan", "read_split", "scan_table",
           "table_schema_batch"]

# failures that a retry cannot mend: the query or the data is wrong, not the path to it
_FINAL: Final = (CodecError, cassandra.RequestValidationException, cassandra.AuthenticationFailed,
                 ServerValidationError, ValueError, TypeError)


class ScanError(CodecError):
    """A table scan failed: an unknown table or column, a query the server refuses, or a
    split whose reads kept failing for ``retry_timeout`` seconds without a page read
    (or more than ``retries`` times in a row, when given). ``split`` is the
    :class:`TokenSplit` that failed (``None`` before any split was read) and
    ``__cause__`` the last failure."""

    def __init__(self, message: str, split: TokenSplit | None = None) -> None:
        super().__init__(message)
        self.split = split


@dataclass(frozen=True)
class ScanProgress:
    """Where a scan stands, given to the ``progress`` callback after each page: rows
    delivered, splits finished of all splits, the planner's row estimate (0 when the
    server had none; its partitions scaled by the rows per partition of the first pages
    when the table has clustering columns, 0 until a page held the partition key) and
    the seconds since the scan started. ``waiting`` is ``""`` while the reads go on,
    else what they wait for, ``"waiting for 127.0.0.1 (down 12 s)"`` (then the callback
    is also called about once a second while nothing arrives)."""

    rows: int
    splits_done: int
    splits_total: int
    estimated_rows: int
    elapsed: float
    waiting: str = ""


# --------------------------------------------------------------------------- one query

def protect_name(name: str) -> str:
    """``name`` as a quoted CQL identifier (exact case, inner quotes doubled)."""
    return quote_name(name)


class _SplitQuery:
    """The prepared token-range query of one table, column list and filter."""

    def __init__(self, session: Session, table: str, columns: Sequence[str] | None,
                 where: str | None, writetime: bool = False, ttl: bool = False,
                 key_token: bool = False) -> None:
        try:
            self.table: TableRef = table_ref(session, table)
        except SplitPlanError as exc:
            raise ScanError(str(exc)) from exc
        known = self.table.column_names
        if columns is not None:
            if isinstance(columns, str):
                raise ScanError(f"columns is a sequence of column names, not the string {columns!r}")
            if not columns:
                raise ScanError("columns is empty: name at least one column (or None for all)")
            columns = resolved_columns(columns, known, str(self.table), ScanError)
        selected = "*" if columns is None else ", ".join(protect_name(c) for c in columns)
        if writetime or ttl:
            selected = select_list(self.table.metadata, columns, writetime, ttl)
        key = ", ".join(protect_name(c) for c in self.table.partition_key)
        if key_token:  # the partition's token first (cqlcodec.driver.diff walks by it)
            if selected == "*":
                selected = select_list(self.table.metadata, None, False, False)
            selected = f"token({key}), {selected}"
        self.cql = (f"SELECT {selected} FROM {protect_name(self.table.keyspace)}."
                    f"{protect_name(self.table.name)} WHERE token({key}) > ? AND token({key}) <= ?")
        if where:
            self.cql += f" AND {where}"
            if not where.rstrip().upper().endswith("ALLOW FILTERING"):
                self.cql += " ALLOW FILTERING"
        self.statement = _prepare(session, self.cql)


def resolved_columns(given: Sequence[str], known: Sequence[str], table: str,
                     error: type[Exception]) -> list[str]:
    """The table's exact column names that the user-given names ``given`` name by CQL's
    rule (:func:`cqlcodec.types.names.column_of`); ``error`` naming the unknown ones,
    as CQL writes them, otherwise."""
    found: list[str] = []
    unknown: list[str] = []
    for name in given:
        try:
            column = column_of(name, known)
        except CqlNameError as exc:
            raise error(str(exc)) from None
        if column is None:
            unknown.append(name)
        else:
            found.append(column)
    if unknown:
        raise error(f"unknown column(s) {', '.join(unknown)} in table {table}; its columns "
                    f"are {', '.join(cql_name(c) for c in known)}")
    return found


_prepared: weakref.WeakKeyDictionary[Session, dict[str, PreparedStatement]] = \
    weakref.WeakKeyDictionary()
_prepared_lock: Final = threading.Lock()


def _prepare(session: Session, cql: str) -> PreparedStatement:
    with _prepared_lock:
        found = _prepared.get(session, {}).get(cql)
    if found is not None:
        return found
    try:
        statement: PreparedStatement = session.prepare(cql)
    except _FINAL as exc:
        raise ScanError(f"the server refuses the scan query {cql!r}: {exc}") from exc
    with _prepared_lock:
        _prepared.setdefault(session, {})[cql] = statement
    return statement


def _retry_options(retry_timeout: float | None, retries: int | None) -> float:
    timeout = DEFAULT_RETRY_TIMEOUT if retry_timeout is None else float(retry_timeout)
    check_retry_options(timeout, retries)
    return timeout


def _hosts_to_try(session: Session, query: _SplitQuery, split: TokenSplit) -> list[Any]:
    """The split's replicas that are up, preferred first, then ``None`` (any coordinator
    the load-balancing policy picks)."""
    current = replicas_of(session, query.table.keyspace, split.end)
    by_address = {str(getattr(h, "address", h.endpoint)): h for h in current}
    ordered = [by_address.pop(a) for a in split.replicas if a in by_address]
    ordered += list(by_address.values())
    return [h for h in ordered if h.is_up is not False] + [None]


_refreshing: weakref.WeakSet[Any] = weakref.WeakSet()
_refreshing_lock: Final = threading.Lock()


def _reread_token_map(session: Session) -> None:
    """Ask the driver to read the node list and token map again, in the background (one
    refresh per cluster at a time): the control connection may itself be down, and a
    retry must not wait for it; the next attempt uses whatever map the driver has."""
    cluster = session.cluster
    with _refreshing_lock:
        if cluster in _refreshing:
            return
        _refreshing.add(cluster)

    def refresh() -> None:
        try:
            cluster.refresh_nodes(force_token_rebuild=True)
        except Exception:  # noqa: BLE001 - a refresh is a hint; the driver retries on its own
            pass
        finally:
            with _refreshing_lock:
                _refreshing.discard(cluster)

    threading.Thread(target=refresh, name="cqlcodec-token-map", daemon=True).start()


class SplitCursor:
    """Where the reading of one split stands, and what to do next: the request to send
    (from the paging state of the last page delivered, to the next replica), what a
    delivered page changes, and what a failure means (a final :class:`ScanError`, or
    the seconds to wait before trying again). The synchronous :class:`SplitReader` and
    ``cqlcodec.aio``'s scan drive one each, waiting in their own way."""

    def __init__(self, session: Session, query: _SplitQuery, split: TokenSplit,
                 fetch_size: int, consistency_level: int | None, retries: int | None,
                 retry_timeout: float = DEFAULT_RETRY_TIMEOUT) -> None:
        if not isinstance(split, TokenSplit):
            raise ScanError(f"a split is a TokenSplit, got {type(split).__name__}")
        self.split = split
        self.coordinators: list[str] = []
        self.failures: list[BaseException] = []
        self._session = session
        self._query = query
        self._fetch_size = fetch_size
        self.patience = Patience(session, retry_timeout, retries)
        self._bound = query.statement.bind((split.start, split.end))
        if consistency_level is not None:
            self._bound.consistency_level = consistency_level
        self._state: bytes | None = None
        self._hosts: list[Any] | None = None
        self._attempt = 0

    def next_request(self) -> tuple[BoundStatement, int, bytes | None, Any]:
        """What :meth:`send` sends: the split's bound statement, the page size, the
        paging state of the last page delivered and the next host to try (None: any
        coordinator the load-balancing policy picks); ``cqlcodec.aio`` sends the same on
        cqlcodec's request path."""
        if self._hosts is None:
            self._hosts = _hosts_to_try(self._session, self._query, self.split)
        host = self._hosts[self._attempt % len(self._hosts)]
        return self._bound, self._fetch_size, self._state, host

    def send(self) -> ResponseFuture:
        """A request for the split's rows from the last page delivered on, to the next
        host to try (its later pages come through ``start_fetching_next_page``)."""
        bound, fetch_size, state, host = self.next_request()
        return send_columnar(self._session, bound, fetch_size=fetch_size, paging_state=state,
                             host=host)

    def delivered(self, page: RawPage, coordinator: Any) -> None:
        """``page`` (coordinated by ``coordinator``) was decoded and is handed out."""
        self.patience.progressed()
        self.coordinators.append(address_of(coordinator))
        self._state = page.paging_state

    def failed(self, exc: Exception) -> float:
        """A request, a page or its decoding failed with ``exc``: raises
        :class:`ScanError` when a retry cannot help or the split gave up (``retry_timeout``
        seconds without a page, or ``retries`` failures in a row), else returns the
        seconds to wait before :meth:`send` (the token map is read again meanwhile and
        the next replica is tried). The split's replicas show as waited for in the
        progress text until a page arrives."""
        split, table = self.split, self._query.table
        if isinstance(exc, _FINAL):
            raise ScanError(f"reading {table} {split} failed: {type(exc).__name__}: {exc}",
                            split) from exc
        self.failures.append(exc)
        reason = self.patience.failed()
        if reason is not None:
            raise ScanError(f"reading {table} {split} gave up: {reason}, "
                            f"last: {type(exc).__name__}: {exc}", split) from exc
        delay = self.patience.delay(split.replicas)
        _reread_token_map(self._session)
        self._hosts = None
        self._attempt += 1
        return delay

    def done(self) -> None:
        """The split was read to its end or given up: it waits for nothing any more."""
        self.patience.done()


class SplitReader:
    """The pages of one split as :class:`~cqlcodec.ColumnBatch` es (what :func:`read_split`
    returns; iterate it once). ``coordinators`` lists, per page delivered, the address of
    the node that coordinated it; ``failures`` the failures that were retried."""

    def __init__(self, session: Session, query: _SplitQuery, split: TokenSplit, fetch_size: int,
                 consistency_level: int | None, retries: int | None,
                 retry_timeout: float = DEFAULT_RETRY_TIMEOUT) -> None:
        self._cursor = SplitCursor(session, query, split, fetch_size, consistency_level,
                                   retries, retry_timeout)
        self.split = split
        self.coordinators = self._cursor.coordinators
        self.failures = self._cursor.failures
        self._pages = self._read()

    def __iter__(self) -> Iterator[ColumnBatch]:
        return self

    def __next__(self) -> ColumnBatch:
        return next(self._pages)

    def _read(self) -> Iterator[ColumnBatch]:
        cursor = self._cursor
        try:
            while True:
                try:
                    future = cursor.send()
                    page = wait_page(future)
                    while True:
                        more = page.paging_state is not None
                        if more:  # the next page travels while this one is decoded
                            future.start_fetching_next_page()
                        batch = page.decode()
                        cursor.delivered(page, future.coordinator_host)
                        yield batch
                        if not more:
                            return
                        page = wait_page(future)
                except Exception as exc:  # noqa: BLE001 - timeouts, cut connections, nodes down
                    cursor.patience.pause(cursor.failed(exc))
        finally:
            cursor.done()


def read_split(session: Session, table: str, split: TokenSplit,
               columns: Sequence[str] | None = None, *, where: str | None = None,
               fetch_size: int = 5000, consistency_level: int | None = None,
               retries: int | None = None, retry_timeout: float | None = None,
               writetime: bool = False, ttl: bool = False) -> SplitReader:
    """Every row of ``table`` whose token lies in ``split``, exactly once, page by page,
    as :class:`~cqlcodec.ColumnBatch` es (a split without rows gives one empty batch
    that still carries the columns' types).

    ``columns`` selects columns by name (default: all, in ``SELECT *`` order); ``where``
    is a further CQL condition (``"v > 3"``, sent with ``ALLOW FILTERING``). Reads go to
    a replica of the split. When a read fails (timeout, cut connection, coordinator
    down) the split resumes from the paging state of the last page delivered, on the
    next replica, after the token map was read again, so no row is lost or given
    twice. While every host is down it waits for the driver to reconnect (see
    :mod:`cqlcodec.driver.outage`). It gives up with a :class:`ScanError` naming the
    split and the cause after ``retry_timeout`` seconds without a page read (default
    120), or, when ``retries`` is given, after ``retries`` failures in a row (the
    count bound of earlier versions; default ``None``: no count bound). A permanent
    failure (an invalid query, an unauthorized user) fails at once. An unknown table
    or column raises :class:`ScanError` here, before any row. Idempotent: reading the
    same split again yields the same rows (as of that read). ``writetime`` and ``ttl``
    add the columns ``writetime(c)`` and ``ttl(c)`` of every regular and static column
    read (see :mod:`cqlcodec.driver.cell_times`).
    """
    if fetch_size < 1:
        raise ValueError(f"fetch_size must be at least 1, got {fetch_size}")
    timeout = _retry_options(retry_timeout, retries)
    query = _SplitQuery(session, table, columns, where, writetime, ttl)
    return SplitReader(session, query, split, fetch_size, consistency_level, retries, timeout)


def table_schema_batch(session: Session, table: str,
                       columns: Sequence[str] | None = None, *, writetime: bool = False,
                       ttl: bool = False, where: str | None = None) -> ColumnBatch:
    """An empty :class:`~cqlcodec.ColumnBatch` with the columns (names and types) that
    :func:`read_split` gives for ``table``, ``columns``, ``writetime`` and ``ttl`` (a
    Dask ``meta``, a schema). ``where`` is prepared with the query, so a condition the
    server refuses raises :class:`ScanError` here."""
    query = _SplitQuery(session, table, columns, where, writetime, ttl)
    future = send_columnar(session, query.statement, (MAX_TOKEN, MAX_TOKEN))
    return wait_page(future).decode()


# --------------------------------------------------------------------------- many splits

_DONE: Final = object()


class ScanTally:
    """What a scan has handed out (rows, splits finished), the ``progress`` reports, and
    the empty batch kept for a scan that finds no row (it still carries the columns'
    types): the bookkeeping of :class:`TableScan` and of ``cqlcodec.aio``'s scan."""

    def __init__(self, splits: list[TokenSplit],
                 progress: Callable[[ScanProgress], None] | None, watch: HostWatch,
                 table: TableRef | None = None) -> None:
        self.rows = 0
        self.splits_done = 0
        self.done_splits: set[int] = set()
        self._splits_total = len(splits)
        partitions = sum(s.estimated_rows for s in splits)
        clustered = table is not None and bool(table.metadata.clustering_key)
        self._estimate = RowEstimate(partitions, clustered)
        self._keys = table.partition_key if table is not None else []
        self._progress = progress
        self._watch = watch
        self._started = time.monotonic()
        self._empty: ColumnBatch | None = None
        self._delivered = False

    def start(self) -> None:
        """The reads begin now (``elapsed`` counts from here)."""
        self._started = time.monotonic()

    def split_done(self, index: int) -> None:
        """Split ``index`` was read to its end."""
        self.splits_done += 1
        self.done_splits.add(index)
        self._report()

    def take(self, batch: ColumnBatch) -> bool:
        """Whether ``batch`` is handed out (an empty one is kept for :meth:`last`)."""
        if len(batch) == 0:
            if self._empty is None:
                self._empty = batch
            return False
        self.rows += len(batch)
        self._delivered = True
        sample_page(self._estimate, batch, self._keys)
        self._report()
        return True

    def last(self) -> ColumnBatch | None:
        """At the end of the scan: the empty batch, once, when no row was handed out."""
        if self._delivered or self._empty is None:
            return None
        self._delivered = True
        return self._empty

    def waiting(self) -> None:
        """Nothing arrived for a while: reports what the reads wait for, if anything."""
        if self._watch.waiting_text():
            self._report()

    def _report(self) -> None:
        if self._progress is not None:
            self._progress(ScanProgress(self.rows, self.splits_done, self._splits_total,
                                        self._estimate.rows or 0,
                                        time.monotonic() - self._started,
                                        self._watch.waiting_text()))


class ParquetSink:
    """Writes the batches of a scan to Parquet as they come (see :meth:`TableScan.to_parquet`
    for the files): :meth:`write` each batch, then :meth:`finish`; :meth:`abort` closes
    and removes what is unfinished (nothing after :meth:`finish`). Each file's schema
    widens where pages typed a varint or decimal column differently
    (:mod:`cqlcodec.driver.columnar_files`); durations are written as
    :mod:`cqlcodec.driver.parquet_durations` says (Parquet has no interval type)."""

    def __init__(self, path: str | os.PathLike[str], options: dict[str, Any]) -> None:
        self._options = options
        self._target = os.fspath(path)
        self._per_split = self._target.endswith(os.sep) or os.path.isdir(self._target)
        self._written: list[str] = []
        self._files: dict[int, tuple[ColumnarFile, str]] = {}
        if self._per_split:
            os.makedirs(self._target, exist_ok=True)

    def write(self, index: int, batch: ColumnBatch, done_splits: set[int]) -> None:
        """Writes ``batch`` of split ``index``; the files of the splits in ``done_splits``
        are complete and renamed into place."""
        key = index if self._per_split else -1
        if key not in self._files:
            final = (os.path.join(self._target, f"split-{index:05d}.parquet")
                     if self._per_split else self._target)
            self._files[key] = (ColumnarFile(f"{final}.tmp", "parquet", options=self._options),
                                final)
        self._files[key][0].write(batch)
        if self._per_split:
            for done in [i for i in self._files if i in done_splits]:
                file, final = self._files.pop(done)
                os.replace(file.close(), final)
                self._written.append(final)

    def finish(self) -> list[str]:
        """Closes every file, renames it into place and returns the files written."""
        for file, final in self._files.values():
            os.replace(file.close(), final)
            self._written.append(final)
        self._files.clear()
        return sorted(self._written)

    def abort(self) -> None:
        """Closes and removes the files not finished."""
        for file, _ in self._files.values():
            file.abort()
        self._files.clear()


class TableScan:
    """The rows of a table as a one-shot stream of :class:`~cqlcodec.ColumnBatch` es
    (see :func:`scan_table`), like :class:`~cqlcodec.driver.ColumnPages`.

    Iterating gives the batches as they arrive (one per page; the order across splits
    is not specified); the splits are read once the first batch is asked for.
    ``__arrow_c_stream__`` exports them as one Arrow stream; :meth:`to_arrow`,
    :meth:`to_pandas` and :meth:`to_polars` collect them; :meth:`to_parquet` writes
    them while reading. :meth:`close` (or leaving a ``with`` block) stops the reads.
    ``splits`` are the splits read; ``readers`` maps the index of each split begun to
    its :class:`SplitReader` (coordinators of its pages, failures retried).
    """

    def __init__(self, session: Session, query: _SplitQuery, splits: list[TokenSplit],
                 concurrency: int, fetch_size: int, consistency_level: int | None,
                 retries: int | None, progress: Callable[[ScanProgress], None] | None,
                 retry_timeout: float = DEFAULT_RETRY_TIMEOUT) -> None:
        self.splits = splits
        self._session = session
        self._query = query
        self._concurrency = max(1, min(concurrency, len(splits)))
        self._fetch_size = fetch_size
        self._consistency_level = consistency_level
        self._retries = retries
        self._retry_timeout = retry_timeout
        self._queue: queue.Queue[tuple[int, object]] = queue.Queue(maxsize=2 * self._concurrency)
        self._stop = threading.Event()
        self._next_split = 0
        self._lock = threading.Lock()
        self._workers: list[threading.Thread] = []
        self._running = 0
        self._tally = ScanTally(splits, progress, host_watch(session), query.table)
        self.readers: dict[int, SplitReader] = {}
        self._finished = False

    # ----- workers
    def _start(self) -> None:
        self._tally.start()
        self._running = self._concurrency
        for i in range(self._concurrency):
            worker = threading.Thread(target=self._work, name=f"cqlcodec-scan-{i}", daemon=True)
            self._workers.append(worker)
            worker.start()

    def _put(self, item: tuple[int, object]) -> bool:
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def _work(self) -> None:
        try:
            while not self._stop.is_set():
                with self._lock:
                    index = self._next_split
                    self._next_split += 1
                if index >= len(self.splits):
                    return
                pages = SplitReader(self._session, self._query, self.splits[index],
                                    self._fetch_size, self._consistency_level, self._retries,
                                    self._retry_timeout)
                self.readers[index] = pages
                for batch in pages:
                    if not self._put((index, batch)):
                        return
                if not self._put((index, _DONE)):
                    return
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer's thread
            self._put((-1, exc))
        finally:
            self._put((-2, None))

    # ----- consuming
    def items(self) -> Iterator[tuple[int, ColumnBatch]]:
        """``(split index, batch)`` pairs as they arrive (the split index into
        :attr:`splits`); a split's batches come in its token order."""
        while True:
            item = self._next_item()
            if item is None:
                return
            yield item

    def _next_item(self) -> tuple[int, ColumnBatch] | None:
        if self._finished:
            return None
        if not self._workers:
            self._start()
        while True:
            if self._running == 0:
                self._finished = True
                last = self._tally.last()
                return None if last is None else (0, last)
            try:
                index, item = self._queue.get(timeout=1.0)
            except queue.Empty:
                self._tally.waiting()  # nothing arrives: say what the reads wait for
                continue
            if index == -2:
                self._running -= 1
                continue
            if index == -1:
                self.close()
                self._finished = True
                assert isinstance(item, BaseException)
                raise item
            if item is _DONE:
                self._tally.split_done(index)
                continue
            assert isinstance(item, ColumnBatch)
            if self._tally.take(item):
                return index, item

    def __iter__(self) -> Iterator[ColumnBatch]:
        return self

    def __next__(self) -> ColumnBatch:
        item = self._next_item()
        if item is None:
            raise StopIteration
        return item[1]

    @property
    def rows_fetched(self) -> int:
        """How many rows have been given out so far."""
        return self._tally.rows

    @property
    def splits_done(self) -> int:
        """How many splits have been read to their end so far."""
        return self._tally.splits_done

    @property
    def done_splits(self) -> frozenset[int]:
        """The indices (into :attr:`splits`) of the splits read to their end so far: every
        batch of such a split has been given out."""
        return frozenset(self._tally.done_splits)

    def close(self) -> None:
        """Stop reading (the workers end after their current page); idempotent."""
        self._stop.set()

    def __enter__(self) -> TableScan:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        self._stop.set()

    # ----- collecting
    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        """Arrow PyCapsule interface: the batches as one stream of record batches
        (pulled as the consumer reads)."""
        first = next(self, None)
        if first is None:
            raise CodecError("this table scan has already been read")
        return stream_capsule_of(self, first)

    def to_arrow(self) -> Any:
        """Every row as one ``pyarrow.Table`` (one record batch per page).

        Where pages gave a varint or decimal column different Arrow types (they depend on
        the page's values), the column gets the type that holds every page exactly:
        decimal128(38, 0) for int64 and decimal128 varints, two's-complement binary
        when a varint needed it, decimals at their one scale, else their exact text.
        """
        return arrow_table_of(self)

    def to_pandas(self) -> Any:
        """Every row as one pandas DataFrame with ``pandas.ArrowDtype`` columns (duration
        columns of :class:`cqlcodec.Duration` objects); needs pyarrow."""
        return pandas_frame_of(self.to_arrow())

    def to_polars(self) -> Any:
        """Every row as one polars DataFrame (pages concatenated without copying)."""
        return polars_frame_of(list(self))

    def to_parquet(self, path: str | os.PathLike[str], **options: Any) -> list[str]:
        """Write every row to Parquet while reading and return the files written.

        ``path`` ending in a separator or naming an existing directory: one file per
        split, ``split-<index>.parquet`` (a split without rows writes no file), each
        written under a temporary name and renamed when its split is complete;
        otherwise one file at ``path`` (also renamed into place at the end). ``options``
        go to ``pyarrow.parquet.ParquetWriter`` (``compression="zstd"``, ...). Memory
        holds the pages in flight, never the table.
        """
        sink = ParquetSink(path, options)
        try:
            while True:
                item = self._next_item()
                if item is None:
                    return sink.finish()
                sink.write(item[0], item[1], self._tally.done_splits)
        finally:
            self.close()
            sink.abort()


def polars_frame_of(batches: list[ColumnBatch]) -> Any:
    """The batches of a scan as one polars DataFrame (concatenated without copying)."""
    import polars

    frames = [batch.to_polars() for batch in batches]
    if len(frames) == 1:
        return frames[0]
    return polars.concat(frames, how="vertical_relaxed", rechunk=False)


def check_scan_options(fetch_size: int, retry_timeout: float | None, retries: int | None,
                       concurrency: int | None) -> float:
    """The ``retry_timeout`` to use (120 s for ``None``); ``ValueError`` for a
    ``fetch_size`` or ``concurrency`` below 1, or a negative ``retry_timeout`` or
    ``retries``."""
    if fetch_size < 1:
        raise ValueError(f"fetch_size must be at least 1, got {fetch_size}")
    if concurrency is not None and concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}")
    return _retry_options(retry_timeout, retries)


def plan_scan(session: Session, table: str, columns: Sequence[str] | None, where: str | None,
              splits: int | Sequence[TokenSplit] | None, concurrency: int | None,
              writetime: bool = False,
              ttl: bool = False) -> tuple[_SplitQuery, list[TokenSplit], int]:
    """The checked query, the splits and the concurrency of a scan (see :func:`scan_table`):
    reads the driver's metadata, prepares the query and may ask the server for its size
    estimates, so it blocks."""
    query = _SplitQuery(session, table, columns, where, writetime, ttl)
    if splits is None or isinstance(splits, int):
        planned = plan_splits(session, str(query.table), splits)
    else:
        planned = sorted(splits, key=lambda s: s.start)
        check_coverage(planned, whole_ring=False)
    if concurrency is None:
        nodes = [h for h in session.cluster.metadata.all_hosts() if h.is_up is not False]
        concurrency = 4 * max(1, len(nodes))
    return query, planned, concurrency


def scan_table(session: Session, table: str, columns: Sequence[str] | None = None, *,
               where: str | None = None, splits: int | Sequence[TokenSplit] | None = None,
               concurrency: int | None = None, fetch_size: int = 5000,
               consistency_level: int | None = None, retries: int | None = None,
               retry_timeout: float | None = None,
               progress: Callable[[ScanProgress], None] | None = None,
               writetime: bool = False, ttl: bool = False) -> TableScan:
    """Read every row of ``table`` ("ks.table", or "table" in the session's keyspace)
    with several token-range splits in flight; returns a :class:`TableScan`.

    ``splits`` is a number of splits for :func:`plan_splits` (default: its default) or
    the splits themselves (from :func:`plan_splits`, or a subset of them: they must not
    overlap). ``concurrency`` is how many splits are read at once (default: 4 per node
    that is up, at most the number of splits). ``columns``, ``where``, ``fetch_size``,
    ``consistency_level``, ``retry_timeout`` (seconds without a page read before a
    split gives up, default 120) and ``retries`` are as in :func:`read_split`: an
    outage shorter than ``retry_timeout`` costs time, never a row. ``progress`` is
    called with a :class:`ScanProgress` after each page and each finished split (and
    about once a second while the reads wait for a host that is down), in the
    consumer's thread. The table, the columns and the query are checked here
    (:class:`ScanError`) before anything is read. ``writetime=True`` adds a column
    ``writetime(c)`` (bigint, microseconds) and ``ttl=True`` a column ``ttl(c)`` (int,
    seconds left, null without TTL) for every regular and static column ``c`` read
    (not counters); for non-frozen collections and UDTs they are lists, one entry per
    element cell (see :mod:`cqlcodec.driver.cell_times`).
    """
    timeout = check_scan_options(fetch_size, retry_timeout, retries, concurrency)
    query, planned, threads = plan_scan(session, table, columns, where, splits, concurrency,
                                        writetime, ttl)
    return TableScan(session, query, planned, threads, fetch_size, consistency_level,
                     retries, progress, timeout)
