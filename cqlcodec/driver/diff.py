"""Two tables compared row by row, as they stream: :func:`diff_tables`.

::

    from cqlcodec.driver import diff_tables

    report = diff_tables(source_session, "ks.events", target_session, "ks.events")
    for difference in report:          # Difference(kind, key, columns), as found
        print(difference.as_json())
    print(report.missing, report.extra, report.differs, report.equal)

Both tables are read with the same token-range splits (the source's
:func:`~cqlcodec.driver.plan_splits`), each split of the source beside the same split of
the target (several splits at once), and the rows of a split are matched by primary key
as they arrive (:mod:`cqlcodec.driver.diff_walk`; memory holds the pages in flight and
the differences, never a table). How cells compare is in
:mod:`cqlcodec.driver.diff_values`.
"""

from __future__ import annotations

import json
import os
import queue
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final

from cassandra.cluster import Session

from cqlcodec.driver.diff_fix import fix_differences
from cqlcodec.driver.diff_read import (
    Difference,
    DiffOptions,
    DiffTables,
    difference_of,
    token_split,
)
from cqlcodec.driver.diff_spill import CHUNK, DifferenceSpill
from cqlcodec.driver.diff_values import DiffError
from cqlcodec.driver.scan import ScanError, check_scan_options
from cqlcodec.driver.splits import SplitPlanError, TokenSplit, plan_splits
from cqlcodec.driver.throttle import piece_rows

__all__ = ["DiffError", "DiffProgress", "DiffState", "Difference", "TableDiff",
           "check_counter_fix", "check_diff_options", "diff_tables", "recheck_differences", "state_description"]

PLAN_FILE: Final = "diff-plan.json"
DONE_FILE: Final = "diff-done.jsonl"
KINDS: Final = ("missing", "extra", "differs")


@dataclass(frozen=True)
class DiffProgress:
    """Where a diff stands, given to the ``progress`` callback after each split: rows
    read from each side, differences so far, splits done of all, seconds since the
    start, and the phase (``"reading"``, ``"rechecking"``, ``"fixing"``)."""

    source_rows: int
    target_rows: int
    differences: int
    splits_done: int
    splits_total: int
    elapsed: float
    phase: str = "reading"


class DiffState:
    """The state directory of a resumable diff: the plan (tables, splits, options) and
    one line per finished split with its differences."""

    def __init__(self, directory: str, resume: bool, description: dict[str, Any]) -> None:
        self.directory = directory
        os.makedirs(directory, exist_ok=True)
        self._plan = os.path.join(directory, PLAN_FILE)
        self._done = os.path.join(directory, DONE_FILE)
        self.splits: list[TokenSplit] | None = None
        # finished splits: (source rows, target rows, where their line starts)
        self.finished: dict[int, tuple[int, int, int]] = {}
        found = os.path.exists(self._plan)
        if found and not resume:
            raise DiffError(f"{directory} holds the state of a diff: give resume=True "
                            "(--resume) to continue it, or another directory")
        if found:
            with open(self._plan, encoding="utf-8") as f:
                plan = json.load(f)
            if plan["description"] != description:
                raise DiffError(f"{directory} holds the state of another diff: "
                                f"{plan['description']}")
            self.splits = [TokenSplit(s, e, tuple(r)) for s, e, r in plan["splits"]]
            self._read_done()
        self._description = description

    def _read_done(self) -> None:
        if not os.path.exists(self._done):
            return
        with open(self._done, "rb") as f:
            at = 0
            for line in f:
                try:
                    entry = json.loads(line)
                except ValueError:  # a line cut by a kill: that split is read again
                    entry = None
                if entry is not None:  # its differences are read again when handed on
                    self.finished[int(entry["split"])] = (
                        int(entry["source_rows"]), int(entry["target_rows"]), at)
                at += len(line)

    def differences_of(self, index: int) -> list[Difference]:
        """The differences recorded for the finished split ``index``."""
        with open(self._done, "rb") as f:
            f.seek(self.finished[index][2])
            entry = json.loads(f.readline())
        return [Difference.from_json(d) for d in entry["differences"]]

    def start(self, splits: list[TokenSplit]) -> None:
        """Records the plan of a new diff."""
        self.splits = splits
        temp = self._plan + ".tmp"
        with open(temp, "w", encoding="utf-8") as f:
            json.dump({"description": self._description,
                       "splits": [[s.start, s.end, list(s.replicas)] for s in splits]}, f)
        os.replace(temp, self._plan)
        if os.path.exists(self._done):
            os.remove(self._done)

    def record(self, index: int, source_rows: int, target_rows: int,
               differences: list[Difference]) -> None:
        """Split ``index`` is finished: appended, flushed and synced."""
        line = json.dumps({"split": index, "source_rows": source_rows,
                           "target_rows": target_rows,
                           "differences": [d.as_json() for d in differences]},
                          separators=(",", ":"))
        with open(self._done, "a", encoding="utf-8") as f:
            f.write(line + "\n")
            f.flush()
            os.fsync(f.fileno())


_SPLIT_DONE: Final = object()


class TableDiff:
    """A diff of two tables (what :func:`diff_tables` returns): iterate it once for the
    :class:`Difference` s (each split's as it finishes; with ``recheck``, ``fix`` or
    ``delete_extra``, once every split is read, ``chunk_size`` at a time (whole
    partitions), each chunk rechecked and fixed first), or call :meth:`run`. The counts
    grow as it goes: ``source_rows``, ``target_rows``, ``missing``, ``extra``, ``differs``,
    ``converged`` (differences dropped by the recheck), ``fixed`` (rows and partitions
    written into the target by ``fix``), ``deleted`` (extra rows deleted by
    ``delete_extra``); ``equal`` is true when no difference is left. Beyond
    ``chunk_size``, the differences waiting for their recheck and fix are kept on disk
    (in the state directory when there is one), not in memory."""

    def __init__(self, tables: DiffTables, splits: list[TokenSplit], options: DiffOptions,
                 state: DiffState | None,
                 progress: Callable[[DiffProgress], None] | None) -> None:
        self.tables = tables
        self.splits = splits
        self.options = options
        self._state = state
        self._progress = progress
        self.source_rows = 0
        self.target_rows = 0
        self.missing = 0
        self.extra = 0
        self.differs = 0
        self.converged = 0
        self.fixed = 0
        self.deleted = 0
        self.splits_done = 0
        self._started = time.monotonic()
        self.started_us = int(time.time() * 1_000_000)
        self._iterated = False
        self._stop = threading.Event()
        self.chunk_size = CHUNK

    @property
    def differences(self) -> int:
        """How many differences so far."""
        return self.missing + self.extra + self.differs

    @property
    def equal(self) -> bool:
        """No difference (meaningful once the diff has run)."""
        return self.differences == 0

    def summary(self) -> str:
        """One line: rows read from each side and the differences by kind."""
        text = (f"{self.source_rows} source rows, {self.target_rows} target rows: "
                f"{self.missing} missing, {self.extra} extra, {self.differs} differ")
        if self.options.recheck:
            text += f" ({self.converged} converged on recheck)"
        if self.options.fix:
            text += f"; {self.fixed} fixed"
        if self.options.delete_extra:
            text += f", {self.deleted} extra deleted"
        return text

    def run(self) -> TableDiff:
        """Runs the whole diff (differences are counted, not kept); returns ``self``."""
        for _ in self:
            pass
        return self

    def close(self) -> None:
        """Stops the reads (the splits being read end after their current page)."""
        self._stop.set()

    def _count(self, differences: Sequence[Difference], sign: int = 1) -> None:
        for d in differences:
            if d.kind == "missing":
                self.missing += sign
            elif d.kind == "extra":
                self.extra += sign
            else:
                self.differs += sign

    def _report(self, phase: str = "reading") -> None:
        if self._progress is not None:
            self._progress(DiffProgress(self.source_rows, self.target_rows, self.differences,
                                        self.splits_done, len(self.splits),
                                        time.monotonic() - self._started, phase))

    def __iter__(self) -> Iterator[Difference]:
        if self._iterated:
            raise DiffError("this diff has already been run")
        self._iterated = True
        if not (self.options.recheck or self.options.fix or self.options.delete_extra):
            for found in self._splits():
                yield from found
            return
        # every difference is known before the recheck and the fix: beyond a chunk kept on
        # disk, not in memory (diff_spill); then each chunk (whole partitions) is
        # rechecked, fixed and handed on before the next is read back
        directory = self._state.directory if self._state is not None else None
        fixing = self.options.fix or self.options.delete_extra
        with DifferenceSpill(directory, self.chunk_size) as read:
            for found in self._splits():
                read.add(found)
            if self.options.recheck and read.count:
                self._report("rechecking")
                time.sleep(self.options.recheck_after)
            for chunk in read.chunks(self.chunk_size):
                if self.options.recheck:
                    chunk = self._recheck(chunk)
                if fixing and chunk:
                    self._report("fixing")
                    fixed, deleted = fix_differences(self.tables, self.options,
                                                     self.started_us, chunk)
                    self.fixed += fixed
                    self.deleted += deleted
                yield from chunk

    def _splits(self) -> Iterator[list[Difference]]:
        """Each finished split's differences (those of a resumed diff's splits first)."""
        todo = list(range(len(self.splits)))
        state = self._state
        if state is not None:
            for index, (src, dst, _at) in sorted(state.finished.items()):
                found = state.differences_of(index)
                self.source_rows += src
                self.target_rows += dst
                self.splits_done += 1
                self._count(found)
                todo.remove(index)
                yield found
        if not todo:
            return
        results: queue.Queue[tuple[int, object]] = queue.Queue(maxsize=64)
        lock = threading.Lock()
        workers = max(1, min(self.options.concurrency, len(todo)))

        def put(item: tuple[int, object]) -> None:
            while not self._stop.is_set():  # a consumer that stopped takes nothing more
                try:
                    results.put(item, timeout=0.1)
                    return
                except queue.Full:
                    continue

        def work() -> None:
            try:
                while not self._stop.is_set():
                    with lock:
                        if not todo:
                            return
                        index = todo.pop(0)
                    walk = self.tables.walk(self.splits[index], self.options)
                    found = [difference_of(f) for f in walk]
                    put((index, (walk.source_rows, walk.target_rows, found)))
            except BaseException as exc:  # noqa: BLE001 - handed to the consumer's thread
                put((-1, exc))
            finally:
                put((-2, _SPLIT_DONE))

        threads = [threading.Thread(target=work, name=f"cqlcodec-diff-{i}", daemon=True)
                   for i in range(workers)]
        for t in threads:
            t.start()
        running = workers
        try:
            while running:
                index, item = results.get()
                if index == -2:
                    running -= 1
                    continue
                if index == -1:
                    assert isinstance(item, BaseException)
                    if isinstance(item, ScanError):
                        raise DiffError(str(item)) from item
                    raise item
                src, dst, found = item  # type: ignore[misc]
                if self._state is not None:
                    self._state.record(index, src, dst, found)
                self.source_rows += src
                self.target_rows += dst
                self.splits_done += 1
                self._count(found)
                self._report()
                yield found
        finally:
            self._stop.set()

    def _recheck(self, chunk: list[Difference]) -> list[Difference]:
        """The differences of ``chunk`` still there when their partitions are read again
        from both sides (as they are now)."""
        now = recheck_differences(self.tables, self.options, chunk, wait=False)
        self._count(chunk, -1)
        self._count(now)
        self.converged += len(chunk) - len(now)
        return now


def state_description(tables: DiffTables, options: DiffOptions) -> dict[str, Any]:
    """What a diff's state directory records of the diff, checked on resume."""
    description = {"source": str(tables.source_query.table),
                   "target": str(tables.target_query.table),
                   "columns": options.columns, "writetime": options.writetime,
                   "ttl": options.ttl, "float_tolerance": options.float_tolerance,
                   "ttl_tolerance": options.ttl_tolerance}
    if options.where is not None:  # the description of a diff without one is unchanged
        description["where"] = options.where
    return description


def recheck_differences(tables: DiffTables, options: DiffOptions,
                        found: list[Difference], *, wait: bool = True) -> list[Difference]:
    """The differences of ``found`` still there (as they are now) when their partitions
    are read again from both tables, ``options.recheck_after`` seconds from now
    (``wait=False``: at once)."""
    if not found:
        return found
    if wait:
        time.sleep(options.recheck_after)
    wanted = {d.identity for d in found}
    now: list[Difference] = []
    for token in sorted({d.token for d in found}):
        walk = tables.walk(token_split(token), options)
        now.extend(d for d in map(difference_of, walk) if d.identity in wanted)
    return now


def check_diff_options(where: str | None, fix: bool, fix_counters: bool,
                       delete_extra: bool) -> None:
    """:class:`DiffError` for options that cannot go together (before any read)."""
    if where and delete_extra:
        raise DiffError("delete_extra (--delete-extra) cannot go with where (--where): a "
                        "row the condition keeps out of the source only because its "
                        "values differ would be found 'extra' and deleted; diff without "
                        "--where to delete extra rows")
    if fix_counters and not fix:
        raise DiffError("fix_counters (--fix-counters) is a kind of fix: give fix (--fix)")


def check_counter_fix(tables: DiffTables, options: DiffOptions) -> None:
    """:class:`DiffError` for ``fix`` or ``delete_extra`` on a counter table that the
    options do not allow (see :mod:`cqlcodec.driver.diff_counters`)."""
    if not tables.counters:
        return
    if options.delete_extra:
        raise DiffError("delete_extra (--delete-extra) does not delete counter rows: the "
                        "server does not take a deleted counter's later increments "
                        "reliably, so the target would be left unable to count them; "
                        "delete them by hand if they must go")
    if options.fix and not options.fix_counters:
        raise DiffError("fix (--fix) of a counter table adds the difference (source - "
                        "target) to each counter, which is exact only while nothing else "
                        "increments them: give fix_counters=True (--fix-counters) to do it")


def diff_tables(source_session: Session, source_table: str, target_session: Session,
                target_table: str, *, columns: Sequence[str] | None = None,
                writetime: bool = False, ttl: bool = False, float_tolerance: float = 0.0,
                ttl_tolerance: float = 0.0, splits: int | Sequence[TokenSplit] | None = None,
                concurrency: int | None = None, fetch_size: int = 5000,
                consistency_level: int | None = None, retries: int | None = None,
                retry_timeout: float | None = None, recheck: bool = False,
                recheck_after: float = 0.0, fix: bool = False, delete_extra: bool = False,
                fix_counters: bool = False, where: str | None = None,
                rate: float | None = None, state: str | os.PathLike[str] | None = None, resume: bool = False,
                progress: Callable[[DiffProgress], None] | None = None) -> TableDiff:
    """Compare ``source_table`` (on ``source_session``) with ``target_table`` (on
    ``target_session``: the same session, or one of another cluster) row by row;
    returns a :class:`TableDiff` that runs when iterated (or :meth:`TableDiff.run`).

    The tables must have the same primary key (names and order); every column of the
    source (or of ``columns``) must be in the target (columns only in the target are
    not compared). Both are read with the source's token-range splits (``splits``: a
    number for :func:`plan_splits`, or the splits), ``concurrency`` splits at once
    (default: 4 per source node up), each split of both tables side by side, its rows
    matched by primary key as they arrive. ``writetime=True`` also compares each cell's
    write time, ``ttl=True`` its TTL within ``ttl_tolerance`` seconds;
    ``float_tolerance`` is the largest absolute difference between float or double
    values that counts as equal. ``fetch_size``, ``consistency_level``, ``retries``
    and ``retry_timeout`` are those of :func:`~cqlcodec.driver.scan_table`, for both.

    ``recheck=True`` reads the partition of every difference again from both sides at
    the end, after ``recheck_after`` seconds, and keeps only the differences still
    there (as they are then): a table taking writes during the diff is not reported
    for rows that were merely caught between the two reads. ``fix=True`` then writes
    the source's version of every missing or differing row (or partition's static
    cells) into the target, read again with each cell's write time and TTL, so that a
    cell written in the target later wins (see :mod:`cqlcodec.driver.diff_fix`);
    ``delete_extra=True`` deletes the rows only the target has, at their own latest
    write time. A counter table cannot be written with the source's values: ``fix``
    refuses it unless ``fix_counters=True``, which adds the difference (source -
    target) to each counter of a missing or differing row (exact only while nothing
    else increments them; :mod:`cqlcodec.driver.diff_counters`); ``delete_extra``
    refuses counter tables. With ``recheck``, ``fix`` or ``delete_extra`` the differences are
    kept in memory and given at the end.

    ``state`` (a directory) makes the diff resumable: the plan and each finished
    split's differences are recorded there; with ``resume=True`` a diff stopped part
    way continues with the splits not finished and reports the same set as one run.
    ``progress`` gets a :class:`DiffProgress` after each split.

    ``where`` is a CQL condition (sent with ``ALLOW FILTERING``) that restricts the
    rows read from both tables alike: only the rows matching it on each side are
    compared, so a row whose filtered values differ shows as missing or extra, not as
    differing; it cannot go with ``delete_extra``. ``rate`` limits the rows read per
    second from each table (pages shrink to a tenth of a second of rows). Raises
    :class:`DiffError` for tables that cannot be compared, before reading.
    """
    timeout = check_scan_options(fetch_size, retry_timeout, retries, concurrency)
    if rate is not None:
        if not rate > 0:
            raise ValueError(f"rate is more than 0 rows per second, got {rate}")
        fetch_size = piece_rows(rate, fetch_size)
    if float_tolerance < 0 or ttl_tolerance < 0 or recheck_after < 0:
        raise ValueError("float_tolerance, ttl_tolerance and recheck_after must be at least 0")
    if concurrency is None:
        nodes = [h for h in source_session.cluster.metadata.all_hosts() if h.is_up is not False]
        concurrency = 4 * max(1, len(nodes))
    options = DiffOptions(list(columns) if columns is not None else None, writetime, ttl,
                          float(float_tolerance), float(ttl_tolerance), concurrency, fetch_size,
                          consistency_level, retries, timeout,
                          recheck, float(recheck_after), fix, delete_extra,
                          where or None, rate, fix_counters)
    check_diff_options(where, fix, fix_counters, delete_extra)
    tables = DiffTables(source_session, source_table, target_session, target_table, options)
    check_counter_fix(tables, options)
    record = DiffState(os.fspath(state), resume, state_description(tables, options)) \
        if state is not None else None
    if record is not None and record.splits is not None:
        planned = record.splits
    else:
        try:
            if splits is None or isinstance(splits, int):
                planned = plan_splits(source_session, str(tables.source_query.table), splits)
            else:
                planned = sorted(splits, key=lambda s: s.start)
        except SplitPlanError as exc:
            raise DiffError(str(exc)) from exc
        if record is not None:
            record.start(planned)
    return TableDiff(tables, planned, options, record, progress)
