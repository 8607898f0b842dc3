"""Cassandra / ScyllaDB tables as Dask DataFrames, and Dask DataFrames into tables.

::

    import cqlcodec.dask

    connect = {"contact_points": ["10.0.0.1"], "port": 9042, "protocol_version": 5}
    ddf = cqlcodec.dask.read_table(connect, "shop.items", ["id", "price"], split_rows=200_000)
    ddf.price.mean().compute()
    cqlcodec.dask.to_table(ddf, connect, "shop.items_copy")
    report = cqlcodec.dask.diff_tables(connect, "shop.items", connect, "shop.items_copy")

One partition per token-range split (or per group of consecutive splits, see
``split_rows``), planned once by :func:`cqlcodec.driver.plan_splits` on the client and
read on the workers by :func:`cqlcodec.driver.read_split`. Each worker process opens
one session per distinct ``connect`` and keeps it (:func:`cqlcodec.driver.session_for`).
Needs the ``cqlcodec[dask]`` extra (``dask[dataframe]``, pyarrow, a driver).
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

try:
    import dask
    import dask.dataframe
    import pandas
except ImportError as exc:  # pragma: no cover - the extra is missing
    raise ImportError(f"cqlcodec.dask needs Dask: pip install 'cqlcodec[dask]' ({exc})") from exc

from cqlcodec.driver.arrow_io import (
    TableColumns,
    WriteError,
    WriteResult,
    empty_table,
    group_splits,
    insert_query,
    merge_results,
    read_split_table,
    resolve_table,
    without_extensions,
    write_arrow,
)
from cqlcodec.driver.columns import check_nulls
from cqlcodec.driver.connect import Connect, session_for
from cqlcodec.driver.diff_read import Difference, DiffOptions, DiffTables, difference_of
from cqlcodec.driver.partitions import estimates_usable, fallback_split_count
from cqlcodec.driver.splits import TokenSplit, default_split_count, plan_splits

__all__ = ["DiffResult", "SplitReader", "WriteError", "WriteResult", "diff_tables", "read_table",
           "to_table"]

DEFAULT_SPLIT_ROWS = 500_000


def _frame(table: Any) -> Any:
    # Dask makes sample values for its meta, which pandas cannot do for Arrow extension
    # types: uuid columns come as their 16 bytes (fixed_size_binary(16))
    return without_extensions(table).to_pandas(types_mapper=pandas.ArrowDtype)


class SplitReader:
    """The function Dask maps over the split groups: reads one group into a pandas
    DataFrame (``pandas.ArrowDtype`` columns, as :meth:`cqlcodec.ColumnBatch.to_pandas`
    gives). ``columns`` is Dask's column projection, passed down to the query. Its
    ``repr`` names the table and the spec without the password."""

    def __init__(self, connect: Connect, ref: TableColumns, template: Any, *, where: str | None,
                 fetch_size: int, consistency_level: int | None, retries: int | None,
                 retry_timeout: float | None = None) -> None:
        self.connect = connect
        self.ref = ref
        self.template = template
        self.where = where
        self.fetch_size = fetch_size
        self.consistency_level = consistency_level
        self.retries = retries
        self.retry_timeout = retry_timeout

    def __call__(self, splits: Sequence[TokenSplit], columns: Sequence[str] | None = None) -> Any:
        table = read_split_table(self.connect, self.ref, self.template, splits, columns=columns,
                                 where=self.where, fetch_size=self.fetch_size,
                                 consistency_level=self.consistency_level, retries=self.retries,
                                 retry_timeout=self.retry_timeout)
        return _frame(table)

    def __repr__(self) -> str:
        return f"SplitReader({self.ref}, {self.connect!r})"


def read_table(connect: Connect | Mapping[str, Any], table: str,
               columns: Sequence[str] | None = None, *, where: str | None = None,
               splits: int | Sequence[TokenSplit] | None = None,
               split_rows: int | None = DEFAULT_SPLIT_ROWS, fetch_size: int = 5000,
               consistency_level: int | None = None, retries: int | None = None,
               retry_timeout: float | None = None) -> Any:
    """Every row of ``table`` (``"ks.table"``) as a ``dask.dataframe.DataFrame``.

    ``connect``: a :class:`cqlcodec.driver.Connect` or a mapping of
    ``cassandra.cluster.Cluster`` keyword arguments (used here to plan, and on each
    worker to read). ``columns``: the columns to read (default all; Dask's own
    projection, ``ddf[["a", "b"]]``, is passed down to the query too). ``where``: an
    extra CQL condition ANDed to each split's token range (``"v > 3 ALLOW FILTERING"``
    is the caller's call). ``splits``: a number of splits for
    :func:`cqlcodec.driver.plan_splits`, or planned splits. ``split_rows``: consecutive
    splits are grouped into one partition up to about this many estimated rows
    (``None``: one partition per split). Where the server has no size estimate for the
    table yet (a table loaded since ``system.size_estimates`` was last refreshed, every
    few minutes), each split is a partition, and without ``splits`` at least two are
    planned per worker thread; the decision is logged (logger ``cqlcodec.driver``).
    ``fetch_size``, ``consistency_level``, ``retry_timeout`` (seconds without a page
    read before a split's task fails, default 120: the tasks ride out outages shorter
    than that) and ``retries`` go to
    :func:`cqlcodec.driver.read_split`.

    ``meta`` comes from the table's schema: the pandas dtypes of
    :meth:`cqlcodec.ColumnBatch.to_pandas` (``pandas.ArrowDtype``), with varint and
    decimal columns as their exact text (see :mod:`cqlcodec.driver.arrow_io`). Unknown
    table or keyspace: :class:`cqlcodec.driver.SplitPlanError`; unknown column:
    :class:`cqlcodec.driver.ScanError`, both raised here, before any task runs. A split
    that keeps failing fails its task with a ``ScanError`` naming the token range and
    the cause; Dask's retries re-read the whole split (reads are idempotent).
    """
    spec = Connect.of(connect)
    session = session_for(spec)
    ref = resolve_table(session, table, columns)
    template = empty_table(session, ref)
    if isinstance(splits, Sequence):
        planned = list(splits)
    else:
        wanted = splits if splits is not None else fallback_split_count(
            default_split_count(session), _worker_threads())
        planned = plan_splits(session, str(ref), wanted)
    usable = split_rows is not None and estimates_usable(planned, str(ref), "cqlcodec.dask")
    groups = group_splits(planned, split_rows if usable else None)
    reader = SplitReader(spec, ref, template, where=where, fetch_size=fetch_size,
                         consistency_level=consistency_level, retries=retries,
                         retry_timeout=retry_timeout)
    meta = _frame(template)
    # the frames are Arrow-backed already: no string-conversion layer over the reads
    with dask.config.set({"dataframe.convert-string": False}):
        return dask.dataframe.from_map(reader, groups, meta=meta,
                                       label=f"read-cassandra-{ref.name}", enforce_metadata=False)


def _worker_threads() -> int:
    """The task slots that will run the partitions: the threads of the workers of the
    current ``distributed`` client, else the local scheduler's worker count."""
    try:
        from distributed import get_client

        workers = get_client().scheduler_info(n_workers=-1)["workers"]
        return sum(int(w.get("nthreads", 1)) for w in workers.values()) or 1
    except (ImportError, ValueError):  # no distributed, or no client: the local scheduler
        return int(dask.config.get("num_workers", None) or dask.system.CPU_COUNT)


class _PartitionWriter:
    """Writes one partition; returns a one-row frame with its counts and failures."""

    def __init__(self, connect: Connect, ref: TableColumns, options: dict[str, Any]) -> None:
        self.connect = connect
        self.ref = ref
        self.options = options

    def __call__(self, frame: Any, partition_info: dict[str, Any] | None = None) -> Any:
        number = int(partition_info["number"]) if partition_info else 0
        result = write_arrow(self.connect, self.ref, frame, number, **self.options)
        return pandas.DataFrame({"rows": [result.rows], "result": [result]})

    def __repr__(self) -> str:
        return f"PartitionWriter({self.ref}, {self.connect!r})"


def to_table(ddf: Any, connect: Connect | Mapping[str, Any], table: str, *,
             concurrency: int = 64, chunk_rows: int = 4096, batch_by_partition: bool = False,
             raise_on_error: bool = True, retry_timeout: float | None = None,
             nulls: str = "unset") -> WriteResult:
    """Write every row of the Dask DataFrame ``ddf`` into ``table`` (its columns by
    name; the partition key columns must be among them), each partition by a worker
    with :func:`cqlcodec.driver.insert_columns` (``concurrency``, ``chunk_rows``,
    ``batch_by_partition`` as there). Returns a
    :class:`cqlcodec.driver.arrow_io.WriteResult`; rows that failed are reported per
    partition and row, and with ``raise_on_error`` :class:`WriteError` is raised after
    every partition was tried. Unknown columns are refused before anything is written.
    Rows that failed for a passing reason (a timeout, a node down, a lost connection) are
    written again until ``retry_timeout`` seconds (default 120) pass without a row
    written (:func:`cqlcodec.driver.arrow_io.write_arrow`). ``nulls`` as for
    :func:`cqlcodec.driver.insert_columns`: by default a null writes no tombstone.
    """
    check_nulls(nulls)
    spec = Connect.of(connect)
    session = session_for(spec)
    ref = resolve_table(session, table)
    insert_query(ref, list(ddf.columns))  # checks the columns here, before any task
    writer = _PartitionWriter(spec, ref, {"concurrency": concurrency, "chunk_rows": chunk_rows,
                                          "batch_by_partition": batch_by_partition,
                                          "retry_timeout": retry_timeout, "nulls": nulls})
    meta = pandas.DataFrame({"rows": pandas.Series([], dtype="int64"),
                             "result": pandas.Series([], dtype=object)})
    parts = ddf.map_partitions(writer, meta=meta, enforce_metadata=False,
                               token=f"write-cassandra-{ref.name}")
    done = parts.compute()
    result = merge_results(list(done["result"]))
    if result.failures and raise_on_error:
        raise WriteError(result)
    return result



@dataclass(frozen=True)
class DiffResult:
    """What :func:`diff_tables` found: the rows read from each side and every
    :class:`cqlcodec.driver.Difference` (in token order; after a recheck, those left),
    with ``converged`` (dropped by the recheck), ``fixed`` and ``deleted`` (written
    into the target by ``fix`` / ``delete_extra``)."""

    source_rows: int
    target_rows: int
    differences: list[Difference]
    converged: int = 0
    fixed: int = 0
    deleted: int = 0

    def count(self, kind: str) -> int:
        """How many differences of ``kind`` (``missing``, ``extra``, ``differs``)."""
        return sum(1 for d in self.differences if d.kind == kind)

    @property
    def equal(self) -> bool:
        """No difference."""
        return not self.differences


class _DiffTask:
    """Diffs a group of splits on a worker: (source rows, target rows, differences as
    JSON objects). Its ``repr`` names the tables and the specs without passwords."""

    def __init__(self, source: Connect, source_table: str, target: Connect, target_table: str,
                 options: DiffOptions) -> None:
        self.source, self.source_table = source, source_table
        self.target, self.target_table = target, target_table
        self.options = options

    def __call__(self, splits: Sequence[TokenSplit]) -> tuple[int, int, list[dict[str, Any]]]:
        tables = DiffTables(session_for(self.source), self.source_table,
                            session_for(self.target), self.target_table, self.options)
        source_rows = target_rows = 0
        found: list[dict[str, Any]] = []
        for split in splits:
            walk = tables.walk(split, self.options)
            found.extend(difference_of(f).as_json() for f in walk)
            source_rows += walk.source_rows
            target_rows += walk.target_rows
        return source_rows, target_rows, found

    def __repr__(self) -> str:
        return (f"DiffTask({self.source_table} {self.source!r} -> {self.target_table} "
                f"{self.target!r})")


def diff_tables(source: Connect | Mapping[str, Any], source_table: str,
                target: Connect | Mapping[str, Any], target_table: str, *,
                columns: Sequence[str] | None = None, writetime: bool = False,
                ttl: bool = False, float_tolerance: float = 0.0, ttl_tolerance: float = 0.0,
                splits: int | Sequence[TokenSplit] | None = None, fetch_size: int = 5000,
                consistency_level: int | None = None, retries: int | None = None,
                retry_timeout: float | None = None, where: str | None = None,
                rate: float | None = None, recheck: bool = False,
                recheck_after: float = 0.0, fix: bool = False, delete_extra: bool = False,
                fix_counters: bool = False, state: str | os.PathLike[str] | None = None,
                resume: bool = False) -> DiffResult:
    """:func:`cqlcodec.driver.diff_tables` over Dask's workers: the splits are planned
    here (``splits`` as for :func:`read_table`; without it at least two per worker
    thread), each one a task that reads the split of both tables on a worker (one
    session per ``connect`` per worker process) and returns its differences; the
    results are gathered here, sorted by token. The options are those of
    :func:`cqlcodec.driver.diff_tables` (``rate`` per task: each worker thread reads
    at most that many rows per second from each table). ``recheck``, ``fix``,
    ``fix_counters`` and ``delete_extra`` run here, on the differences gathered,
    through this process's sessions. With ``state`` (a directory) the splits are
    computed in rounds of two per worker thread, each round's differences recorded
    there, and ``resume=True`` continues a diff stopped part way with the splits not
    recorded (the same state files as the single-process diff's). The tables are
    checked here, before any task: :class:`cqlcodec.driver.DiffError`."""
    from cqlcodec.driver.diff import (
        DiffState,
        check_counter_fix,
        check_diff_options,
        recheck_differences,
        state_description,
    )
    from cqlcodec.driver.diff_fix import fix_differences
    from cqlcodec.driver.scan import check_scan_options
    from cqlcodec.driver.throttle import piece_rows

    timeout = check_scan_options(fetch_size, retry_timeout, retries, None)
    if rate is not None:
        if not rate > 0:
            raise ValueError(f"rate is more than 0 rows per second, got {rate}")
        fetch_size = piece_rows(rate, fetch_size)
    options = DiffOptions(list(columns) if columns is not None else None, writetime, ttl,
                          float(float_tolerance), float(ttl_tolerance), 1, fetch_size,
                          consistency_level, retries, timeout, recheck, float(recheck_after),
                          fix, delete_extra, where or None, rate, fix_counters)
    check_diff_options(where, fix, fix_counters, delete_extra)
    source_spec, target_spec = Connect.of(source), Connect.of(target)
    session = session_for(source_spec)
    tables = DiffTables(session, source_table, session_for(target_spec), target_table, options)
    check_counter_fix(tables, options)
    started_us = int(time.time() * 1_000_000)
    name = str(tables.source_query.table)
    record = DiffState(os.fspath(state), resume, state_description(tables, options)) \
        if state is not None else None
    if record is not None and record.splits is not None:
        planned = record.splits
    elif isinstance(splits, Sequence):
        planned = sorted(splits, key=lambda s: s.start)
    else:
        wanted = splits if splits is not None else fallback_split_count(
            default_split_count(session), _worker_threads())
        planned = plan_splits(session, name, wanted)
    if record is not None and record.splits is None:
        record.start(planned)
    task = _DiffTask(source_spec, name, target_spec, str(tables.target_query.table), options)
    done: list[tuple[int, int, list[Difference]]] = []
    todo = list(range(len(planned)))
    if record is not None:
        done += [(src, dst, record.differences_of(index))
                 for index, (src, dst, _at) in sorted(record.finished.items())]
        todo = [i for i in todo if i not in record.finished]
    step = 2 * _worker_threads() if record is not None else max(1, len(todo))
    for at in range(0, len(todo), step):
        chosen = todo[at:at + step]
        parts = dask.compute(*[dask.delayed(task, pure=False)([planned[i]]) for i in chosen])
        for index, (src, dst, found) in zip(chosen, parts):
            differences = [Difference.from_json(d) for d in found]
            if record is not None:
                record.record(index, src, dst, differences)
            done.append((src, dst, differences))
    differences = sorted((d for r in done for d in r[2]), key=lambda d: d.token)
    found = len(differences)
    if recheck:
        differences = recheck_differences(tables, options, differences)
    fixed = deleted = 0
    if fix or delete_extra:
        fixed, deleted = fix_differences(tables, options, started_us, differences)
    return DiffResult(sum(r[0] for r in done), sum(r[1] for r in done), differences,
                      found - len(differences), fixed, deleted)
