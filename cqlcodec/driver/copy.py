"""Table to table copies, on one cluster or from one cluster to another, with no files
in between::

    from cqlcodec.driver import copy_table

    result = copy_table(old_session, "ks.events", new_session, "ks.events",
                        state="copy-state/")      # resumable: resume=True continues
    print(result.written, result.splits_done, "of", result.splits_total)

The source is read as :func:`cqlcodec.driver.scan_table` reads a table (token-range
splits, several at once, each page decoded into columns, outages ridden out from the
paging state of the last page) with ``writetime(c)`` and ``ttl(c)`` of every cell, and
each page is written into the target as :func:`cqlcodec.driver.load_table` writes a
chunk (:class:`cqlcodec.driver.load.ChunkWriter`): every cell with its own write time
and TTL, non-frozen lists never doubled by a repeat (:mod:`cqlcodec.driver.list_repeats`),
nulls left unset, counters as increments, rows that timed out sent again. Memory holds
the pages in flight, never the table.

With ``state`` (a directory), the splits planned and, per split, that it was copied are
kept in ``_copy_state.json``; a split is recorded only once every one of its rows was
written. A copy stopped in any way (an exception, a kill) continues with
``resume=True``: it copies the splits not recorded, and a split that was partly written
is written again whole, which leaves the target as one copy would (cells rewritten at
their own write times change nothing; lists are looked up first). Counter splits are
the exception: an increment written twice adds twice, so a counter split that was
started and not finished is settled instead (:mod:`cqlcodec.driver.copy_counters`).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from cassandra.cluster import Session

from cqlcodec.driver.columns import InsertResult, check_nulls
from cqlcodec.driver.copy_counters import settle_counters
from cqlcodec.driver.copy_errors import CopyError
from cqlcodec.driver.diff_read import DiffOptions
from cqlcodec.driver.load import ChunkWriter
from cqlcodec.driver.outage import Patience, check_retry_options, host_watch
from cqlcodec.driver.scan import ScanProgress, resolved_columns, scan_table, table_schema_batch
from cqlcodec.driver.sources import LoadError, arrow_module
from cqlcodec.driver.splits import SplitPlanError, TokenSplit, plan_splits, table_ref
from cqlcodec.driver.throttle import RowRate, piece_rows
from cqlcodec.runtime.state_files import SplitsState, write_json
from cqlcodec.types.names import quote_name

__all__ = ["STATE_FILE", "CopyError", "CopyProgress", "CopyResult", "CopyState", "copy_table"]

STATE_FILE: Final = "_copy_state.json"
DEFAULT_RETRY_TIMEOUT: Final = 120.0


@dataclass(frozen=True)
class CopyProgress:
    """What a :func:`copy_table` progress callback receives after each page written (and
    about once a second while the reads wait for a host): rows read and handed to the
    writes in this run, rows written, rows failed, splits copied (earlier runs
    included) of all, the source's estimated rows (None while not known), seconds
    since the start, and what the copy waits for (``""`` while it goes on)."""

    rows: int
    written: int
    failed: int
    splits_done: int
    splits_total: int
    estimated_rows: int | None
    elapsed: float
    waiting: str = ""


class CopyResult(InsertResult):
    """What :func:`copy_table` did: the :class:`InsertResult` of this run's writes
    (``rows`` read and sent, ``requests``, ``failures`` numbered in the order the rows
    were read, ``empty``), plus ``splits_total``, ``splits_done`` (copied whole, earlier
    runs of a resumed copy included), ``splits_skipped`` (copied by an earlier run) and
    ``failed_splits`` (indices into the plan whose rows were not all written)."""

    def __init__(self, splits_total: int, splits_skipped: int) -> None:
        super().__init__(0)
        self.splits_total = splits_total
        self.splits_skipped = splits_skipped
        self.splits_done = splits_skipped
        self.failed_splits: list[int] = []

    @property
    def complete(self) -> bool:
        """Whether every split was copied whole."""
        return self.splits_done == self.splits_total

    def __repr__(self) -> str:
        return (f"CopyResult(rows={self.rows}, requests={self.requests}, "
                f"failures={len(self.failures)}, splits={self.splits_done}/{self.splits_total})")


class CopyState(SplitsState):
    """The state directory of a copy: ``header`` (what is copied where), the planned
    ``splits`` (:class:`TokenSplit` s) and ``done`` (split index as text -> rows copied),
    in :data:`STATE_FILE`, rewritten atomically after each split copied."""

    FILE_NAME = STATE_FILE
    KIND = "copy"

    #: the splits of a counter copy whose first page was written (None: not known, a
    #: state of an earlier version), kept so that a resume makes them equal instead of
    #: adding their increments again
    started: set[str] | None = None

    @staticmethod
    def load(directory: str) -> CopyState | None:
        """The state in ``directory``; None when there is none."""
        try:
            data = CopyState.read(directory)
            if data is None:
                return None
            splits = [TokenSplit(int(d["start"]), int(d["end"]), tuple(d["replicas"]),
                                 int(d["estimated_rows"]), int(d["estimated_bytes"]))
                      for d in data["splits"]]
            found = CopyState(directory, dict(data["copy"]), splits,
                              {str(k): int(v) for k, v in data["done"].items()})
            started = data.get("started")
            found.started = None if started is None else {str(i) for i in started}
            return found
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise CopyError(f"cannot read {os.path.join(directory, STATE_FILE)}: "
                            f"{exc}") from exc

    def finished(self, index: int, rows: int) -> None:
        """Records split ``index`` as copied, with its ``rows``."""
        self.finish(index, rows)

    def start_split(self, index: int) -> None:
        """Records that split ``index`` of a counter copy is being written."""
        assert self.started is not None
        self.started.add(str(index))
        self.save()

    def save(self) -> None:
        """Writes the state file atomically (its directory made if need be)."""
        os.makedirs(self.directory, exist_ok=True)
        if self.started is None:
            super().save()
            return
        write_json(self.path, {self.KIND: self.header, "splits": self.splits_document(),
                               "done": self.done, "started": sorted(self.started, key=int)})

    def splits_document(self) -> list[Any]:
        """The splits as JSON objects."""
        return [{"start": s.start, "end": s.end, "replicas": list(s.replicas),
                 "estimated_rows": s.estimated_rows, "estimated_bytes": s.estimated_bytes}
                for s in self.splits]


def copy_table(source_session: Session, source_table: str, target_session: Session,
               target_table: str, *, columns: Sequence[str] | None = None,
               where: str | None = None, splits: int | Sequence[TokenSplit] | None = None,
               read_concurrency: int | None = None, fetch_size: int = 5000,
               concurrency: int = 16, batch_by_replica: bool = True,
               batch_bytes: int = 40_000, read_consistency: int | None = None,
               write_consistency: int | None = None, retries: int | None = None,
               retry_timeout: float | None = None, ignore_writetime: bool = False,
               nulls: str = "unset", rate: float | None = None,
               progress: Callable[[CopyProgress], None] | None = None,
               state: str | os.PathLike[str] | None = None, resume: bool = False,
               raise_on_error: bool = True) -> CopyResult:
    """Copy every row of ``source_table`` ("ks.table") read through ``source_session``
    into ``target_table`` written through ``target_session`` (the same session, or one
    of another cluster; both with :func:`cqlcodec.driver.install`), split by split,
    page by page, with no file in between; returns a :class:`CopyResult`.

    Columns are matched by name: the target must have every column copied (``columns``,
    default all of the source's; the source's primary-key columns are always copied,
    named or not). ``where`` is a further CQL condition on the source's rows (sent with
    ``ALLOW FILTERING``). ``splits``, ``read_concurrency`` (splits read at once),
    ``fetch_size``, ``read_consistency`` are those of :func:`scan_table`; ``concurrency``
    (requests in flight), ``batch_by_replica``, ``batch_bytes``, ``write_consistency``
    (``consistency_level`` there) and ``nulls`` those of :func:`load_table`. Reads and
    writes overlap: the next pages are read while a page is written.

    Every cell keeps its write time and TTL (read with ``writetime(c)``/``ttl(c)``,
    written ``USING TIMESTAMP ? AND TTL ?``; TTLs are the seconds left when the page was
    read); ``ignore_writetime=True`` writes the cells at the time of the copy, without
    TTL. A counter table is copied with ``UPDATE ... SET c = c + ?`` (into an empty
    target the counts arrive equal; into one with counts they are added).

    Outages on either side are ridden out: a split's reads continue from their last
    page, writes that timed out or found no host are sent again, until
    ``retry_timeout`` seconds (default 120) pass without progress (or ``retries``
    failures in a row, when given). A page whose rows could not all be written stops
    the copy: :class:`CopyError` (with ``raise_on_error=False`` the result, with
    ``failures`` and ``failed_splits``, is returned instead). ``rate`` limits the rows
    per second; ``progress`` is called with a :class:`CopyProgress` after each page.

    ``state`` (a directory, made if need be) keeps the plan and the splits copied, so
    that a copy stopped in any way continues with ``resume=True`` (only the splits not
    recorded are copied; the other options must be the same). A directory that holds
    a copy's state already is refused without ``resume``. A split is recorded once all
    its rows are written; a split cut short is copied again whole on resume, which is
    exact (each cell is written again at its own write time; a non-frozen list is
    looked up first so that it does not double). A counter split cut short is not
    copied again but settled: read beside the target, each row gets ``source -
    target`` added (:mod:`cqlcodec.driver.copy_counters`; exact when the target's
    counters held nothing before the copy and nobody else increments them).
    """
    if fetch_size < 1 or concurrency < 1:
        raise ValueError("fetch_size and concurrency must be at least 1")
    if read_concurrency is not None and read_concurrency < 1:
        raise ValueError(f"read_concurrency must be at least 1, got {read_concurrency}")
    check_nulls(nulls)
    timeout = DEFAULT_RETRY_TIMEOUT if retry_timeout is None else float(retry_timeout)
    check_retry_options(timeout, retries)
    if resume and state is None:
        raise ValueError("resume=True continues from a state directory: give state=")
    pa = arrow_module()
    try:
        source = table_ref(source_session, source_table)
        target = table_ref(target_session, target_table)
    except SplitPlanError as exc:
        raise CopyError(str(exc)) from None
    if source_session is target_session and str(source) == str(target):
        raise CopyError(f"the source and the target are the same table, {source}")
    chosen = _chosen_columns(source, columns)
    counter = any(str(c.cql_type) == "counter" for c in target.metadata.columns.values())
    timed = not ignore_writetime and not counter
    patience = Patience(target_session, timeout, retries)
    try:
        writer = ChunkWriter(target_session, str(target), patience,
                             batch_by_replica=batch_by_replica, batch_bytes=batch_bytes,
                             concurrency=concurrency, consistency_level=write_consistency,
                             nulls=nulls, source_name=str(source))
        writer.check_columns(chosen)
    except LoadError as exc:
        raise CopyError(f"the target cannot take the source's rows: {exc}") from None
    selected = [quote_name(c) for c in chosen]
    # the columns and a condition the server refuses fail here, before a state is kept
    table_schema_batch(source_session, str(source), selected, writetime=timed, ttl=timed,
                       where=where)
    header = {"source": str(source), "target": str(target), "columns": chosen,
              "where": where, "writetime": timed}
    kept = _open_state(state, header, resume)
    if kept is None:
        planned = plan_splits(source_session, str(source), splits) \
            if splits is None or isinstance(splits, int) else sorted(splits, key=lambda s: s.start)
        if state is not None:
            kept = CopyState(os.fspath(state), header, planned, {})
            if counter:
                kept.started = set()
            kept.save()
    else:
        planned = kept.splits
    done = kept.done if kept is not None else {}
    todo = [i for i in range(len(planned)) if str(i) not in done]
    result = CopyResult(len(planned), len(planned) - len(todo))
    if counter and kept is not None and resume:
        cut = [i for i in todo if kept.started is None or str(i) in kept.started]
        if cut:
            settle_counters(source_session, str(source), target_session, str(target),
                            [(i, planned[i]) for i in cut], kept, result,
                            DiffOptions(chosen, False, False, 0.0, 0.0, 1, fetch_size,
                                        read_consistency, retries, timeout, False, 0.0,
                                        False, False, where, rate),
                            write_consistency)
            todo = [i for i in todo if i not in cut]
        if kept.started is None:
            kept.started = set()
    if not todo:
        return result
    if rate is not None:
        fetch_size = piece_rows(rate, fetch_size)
    copier = _Copier(result, writer, kept, todo, progress, target_session,
                     RowRate(rate) if rate is not None else None)
    scan = scan_table(source_session, str(source), selected,
                      where=where, splits=[planned[i] for i in todo],
                      concurrency=read_concurrency, fetch_size=fetch_size,
                      consistency_level=read_consistency, retries=retries,
                      retry_timeout=timeout, progress=copier.read_progress,
                      writetime=timed, ttl=timed)
    ticker = threading.Thread(target=copier.tick, name="cqlcodec-copy-progress", daemon=True)
    ticker.start()
    try:
        with scan:
            for index, batch in scan.items():
                copier.record(scan.done_splits)
                if len(batch) and not copier.write(pa, index, batch):
                    break
            else:
                copier.record(scan.done_splits)
                copier.report()
    finally:
        copier.finished.set()
        patience.done()
    result.failures.sort(key=lambda f: f.row)
    if result.failures and raise_on_error:
        f = result.failures[0]
        place = f" (state in {kept.path}: resume=True continues)" if kept is not None else ""
        raise CopyError(f"{len(result.failures)} rows of split {result.failed_splits[0]} "
                        f"were not written, first: {type(f.error).__name__}: {f.error}; "
                        f"{result.splits_done} of {result.splits_total} splits copied"
                        f"{place}", result)
    return result


class _Copier:
    """The bookkeeping of one copy: pages written, splits recorded, progress."""

    def __init__(self, result: CopyResult, writer: ChunkWriter, state: CopyState | None,
                 todo: list[int], progress: Callable[[CopyProgress], None] | None,
                 target_session: Session, limiter: RowRate | None) -> None:
        self.result = result
        self.writer = writer
        self.state = state
        self.todo = todo
        self.progress = progress
        self.limiter = limiter
        self.rows_of: dict[int, int] = {}
        self.recorded: set[int] = set()
        self.failed: set[int] = set()
        self.read = ScanProgress(0, 0, len(todo), 0, 0.0)
        self.target_watch = host_watch(target_session)
        self.started = time.monotonic()
        self.finished = threading.Event()

    def record(self, read_whole: frozenset[int]) -> None:
        """Records the splits read to their end (indices into the scan's splits), all of
        whose rows are written by now."""
        for index in read_whole - self.recorded - self.failed:
            self.recorded.add(index)
            self.result.splits_done += 1
            if self.state is not None:
                self.state.finished(self.todo[index], self.rows_of.get(index, 0))

    def write(self, pa: Any, index: int, batch: Any) -> bool:
        """Writes one page of split ``index``; False when rows of it were not written."""
        if self.limiter is not None:
            self.limiter.wait(len(batch))
        failures_before = len(self.result.failures)
        state = self.state
        if state is not None and state.started is not None and len(batch) and \
                str(self.todo[index]) not in state.started:
            state.start_split(self.todo[index])  # before any increment of it is sent
        self.writer.write(pa.record_batch(batch), self.result.rows, self.result)
        self.rows_of[index] = self.rows_of.get(index, 0) + len(batch)
        failed = len(self.result.failures) > failures_before
        if failed:
            self.failed.add(index)
            self.result.failed_splits.append(self.todo[index])
        self.report()
        return not failed

    def read_progress(self, read: ScanProgress) -> None:
        """The scan's progress: kept for the estimate, reported while it waits."""
        self.read = read
        if read.waiting:
            self.report()

    def tick(self) -> None:
        """Reports about once a second while the writes wait for the target's hosts
        (the pages' reports stop while a page waits), until :attr:`finished` is set."""
        while not self.finished.wait(1.0):
            if self.target_watch.waiting_text():
                self.report()

    def report(self) -> None:
        """Calls the progress callback with where the copy stands."""
        if self.progress is None:
            return
        result, read = self.result, self.read
        waiting = " ".join(w for w in (read.waiting, self.target_watch.waiting_text()) if w)
        self.progress(CopyProgress(result.rows, result.written, len(result.failures),
                                   result.splits_done, result.splits_total,
                                   read.estimated_rows or None, time.monotonic() - self.started,
                                   waiting))


def _chosen_columns(source: Any, columns: Sequence[str] | None) -> list[str]:
    """The source's exact column names to copy: ``columns`` (as CQL names them) with
    the primary key first, or every column."""
    known = list(source.column_names)
    keys = [c.name for c in source.metadata.primary_key]
    if columns is None:
        return known
    if isinstance(columns, str):
        raise CopyError(f"columns is a sequence of column names, not the string {columns!r}")
    named = resolved_columns(columns, known, str(source), CopyError)
    return keys + [c for c in named if c not in keys]


def _open_state(state: str | os.PathLike[str] | None, header: dict[str, Any],
                resume: bool) -> CopyState | None:
    """The state kept in ``state`` for a resumed copy (checked to be of the same copy),
    None when there is none; :class:`CopyError` for a state found without ``resume``."""
    if state is None:
        return None
    directory = os.fspath(state)
    if os.path.exists(directory) and not os.path.isdir(directory):
        raise CopyError(f"{directory} is not a directory")
    found = CopyState.load(directory)
    if found is None:
        return None
    if not resume:
        raise CopyError(f"{directory} holds the state of a copy already ({found.path}): "
                        "resume it, or give another directory")
    for key, value in header.items():
        if found.header.get(key) != value:
            raise CopyError(f"{found.path} is the state of another copy ({key} "
                            f"{found.header.get(key)!r}, now {value!r}): give the same "
                            "options, or another directory")
    return found
