"""Cassandra / ScyllaDB tables as Ray Data datasets, and datasets into tables.

::

    import cqlcodec.ray

    connect = {"contact_points": ["10.0.0.1"], "port": 9042, "protocol_version": 5}
    ds = cqlcodec.ray.read_table(connect, "shop.items", ["id", "embedding"])
    ds = ds.map_batches(embed)                       # any Ray Data pipeline
    cqlcodec.ray.write_table(ds, connect, "shop.items_embedded")

:class:`CassandraDatasource` makes one ``ReadTask`` per token-range split (or group of
consecutive splits), planned by :func:`cqlcodec.driver.plan_splits` on the driver
process; each task yields one Arrow table per split (in the table's fixed schema, see
:mod:`cqlcodec.driver.arrow_io`); the splits' estimated rows size the tasks, and each
task's ``BlockMetadata`` carries their estimated bytes (``num_rows`` stays unknown:
Ray 2.60 answers ``Dataset.count()`` from it without reading, so an estimate there
would be taken for the truth). :class:`CassandraDatasink` writes each block with
:func:`cqlcodec.driver.insert_columns`. Both are Ray Data developer APIs: this module
is tested with ray 2.60.0 (the ``cqlcodec[ray]`` extra pins the series).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

try:
    import pyarrow
    import ray.data
    from ray.data.block import BlockMetadata
    from ray.data.datasource import Datasink, Datasource, ReadTask
except ImportError as exc:  # pragma: no cover - the extra is missing
    raise ImportError(f"cqlcodec.ray needs Ray Data: pip install 'cqlcodec[ray]' ({exc})") from exc

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
    write_arrow,
)
from cqlcodec.driver.columns import check_nulls
from cqlcodec.driver.connect import Connect, session_for
from cqlcodec.driver.partitions import estimates_usable, even_groups
from cqlcodec.driver.splits import TokenSplit, plan_splits

__all__ = ["CassandraDatasink", "CassandraDatasource", "WriteError", "WriteResult", "read_table",
           "write_table"]


class _ReadGroup:
    """The ``read_fn`` of one ReadTask: the group's rows as Arrow tables."""

    def __init__(self, source: CassandraDatasource, splits: tuple[TokenSplit, ...],
                 columns: list[str] | None) -> None:
        self.source = source
        self.splits = splits
        self.columns = columns

    def __call__(self) -> Iterator[Any]:
        s = self.source
        # no column at all (Ray's count() projects to none): the partition key is read
        # and kept, since Ray counts the rows of record batches and an Arrow table
        # without columns has no batches
        columns = list(s.ref.partition_key) if self.columns == [] else self.columns
        for split in self.splits:
            table = read_split_table(s.connect, s.ref, s.template, [split], columns=columns,
                                     where=s.where, fetch_size=s.fetch_size,
                                     consistency_level=s.consistency_level, retries=s.retries,
                                     retry_timeout=s.retry_timeout)
            yield table

    def __repr__(self) -> str:
        return f"ReadCassandra({self.source.ref}, {len(self.splits)} splits)"


class CassandraDatasource(Datasource):  # type: ignore[misc]
    """A Ray Data source reading one table by token-range splits.

    ``connect``, ``table``, ``columns``, ``where``, ``splits``, ``fetch_size``,
    ``consistency_level``, ``retries`` and ``retry_timeout`` as for :func:`read_table`. The splits are
    planned when the source is made (on the driver process); ``get_read_tasks`` groups
    consecutive splits into at most ``parallelism`` tasks (never more tasks than
    splits). Projection is pushed down into the queries.
    """

    def __init__(self, connect: Connect | Mapping[str, Any], table: str,
                 columns: Sequence[str] | None = None, *, where: str | None = None,
                 splits: int | Sequence[TokenSplit] | None = None, fetch_size: int = 5000,
                 consistency_level: int | None = None, retries: int | None = None,
                 retry_timeout: float | None = None) -> None:
        super().__init__()
        self.connect = Connect.of(connect)
        session = session_for(self.connect)
        self.ref: TableColumns = resolve_table(session, table, columns)
        self.template = empty_table(session, self.ref)
        self.splits: list[TokenSplit] = (list(splits) if isinstance(splits, Sequence)
                                         else plan_splits(session, str(self.ref), splits))
        self.where = where
        self.fetch_size = fetch_size
        self.consistency_level = consistency_level
        self.retries = retries
        self.retry_timeout = retry_timeout
        self._projection_map: dict[str, str] | None = None

    def get_name(self) -> str:
        """``ReadCassandra``'s name in task names and the dashboard (no credentials)."""
        return "Cassandra"

    def estimate_inmemory_data_size(self) -> int | None:
        """The splits' estimated bytes (from ``system.size_estimates``)."""
        return sum(s.estimated_bytes for s in self.splits) or None

    def supports_projection_pushdown(self) -> bool:
        """Column projection is passed down to each split's query."""
        return True

    def _columns(self) -> list[str] | None:
        chosen = self._get_data_columns()
        if chosen is None:
            return None
        return [c for c in self.ref.columns if c in chosen]

    def get_read_tasks(self, parallelism: int, per_task_row_limit: int | None = None,
                       data_context: Any = None) -> list[ReadTask]:
        """One ReadTask per group of consecutive splits, at most ``parallelism`` groups
        (sized by the estimated rows; where the server has none for the table yet, runs
        of the same number of splits, which is logged)."""
        wanted = parallelism if parallelism > 0 else len(self.splits)
        if estimates_usable(self.splits, str(self.ref), "cqlcodec.ray"):
            total = sum(s.estimated_rows for s in self.splits)
            groups = group_splits(self.splits, max(1, -(-total // max(1, min(wanted, len(self.splits))))))
        else:  # no estimates: contiguous runs of about the same number of splits
            groups = even_groups(self.splits, wanted)
        columns = self._columns()
        shown = list(self.ref.columns) if columns is None else columns or list(self.ref.partition_key)
        schema = self.template.select(shown).schema
        share = max(1, len(schema)) / max(1, len(self.ref.columns))
        tasks = []
        for group in groups:
            # num_rows stays unknown: Ray takes it as exact (Dataset.count() answers from
            # it without reading), and the splits' row counts are only estimates; they
            # size the groups, and the estimated bytes go to size_bytes
            metadata = BlockMetadata(
                num_rows=None,
                size_bytes=int(sum(s.estimated_bytes for s in group) * share),
                input_files=None, exec_stats=None)
            tasks.append(ReadTask(_ReadGroup(self, group, columns), metadata, schema=schema,
                                  per_task_row_limit=per_task_row_limit))
        return tasks

    def __repr__(self) -> str:
        return f"CassandraDatasource({self.ref}, {self.connect!r}, {len(self.splits)} splits)"


def read_table(connect: Connect | Mapping[str, Any], table: str,
               columns: Sequence[str] | None = None, *, where: str | None = None,
               splits: int | Sequence[TokenSplit] | None = None, fetch_size: int = 5000,
               consistency_level: int | None = None, retries: int | None = None,
               retry_timeout: float | None = None, override_num_blocks: int | None = None,
               num_cpus: float | None = None, memory: float | None = None,
               concurrency: int | None = None) -> Any:
    """Every row of ``table`` (``"ks.table"``) as a ``ray.data.Dataset``.

    ``connect``: a :class:`cqlcodec.driver.Connect` or a mapping of
    ``cassandra.cluster.Cluster`` keyword arguments. ``columns``, ``where``,
    ``splits``, ``fetch_size``, ``consistency_level``, ``retries``, ``retry_timeout``:
    as for :func:`cqlcodec.dask.read_table` (each task rides out an outage shorter than
    ``retry_timeout``, default 120 s without a page read). ``override_num_blocks`` caps
    the read tasks (default: Ray's choice, at most one per split); ``num_cpus``,
    ``memory`` and ``concurrency`` go to ``ray.data.read_datasource`` for the read tasks.
    Ray re-runs a read task whose worker died (a split read is idempotent, so a re-run
    task gives the same rows); a :class:`cqlcodec.driver.ScanError` is not retried.
    Blocks are Arrow tables in the table's schema (varint and decimal as exact text).
    Unknown table/keyspace raises
    :class:`cqlcodec.driver.SplitPlanError` and an unknown column
    :class:`cqlcodec.driver.ScanError`, here, before any task runs.
    """
    source = CassandraDatasource(connect, table, columns, where=where, splits=splits,
                                 fetch_size=fetch_size, consistency_level=consistency_level,
                                 retries=retries, retry_timeout=retry_timeout)
    return ray.data.read_datasource(source, override_num_blocks=override_num_blocks,
                                    num_cpus=num_cpus, memory=memory, concurrency=concurrency)


class CassandraDatasink(Datasink):  # type: ignore[misc]
    """A Ray Data sink writing each block into one table with
    :func:`cqlcodec.driver.insert_columns`. Each write task returns a
    :class:`cqlcodec.driver.arrow_io.WriteResult`; :attr:`result` holds them merged
    after the write (on the driver process), and with ``raise_on_error`` a
    :class:`WriteError` is raised when rows failed. Rows that failed for a passing reason
    (a timeout, a node down, a lost connection) are written again until
    ``retry_timeout`` seconds (default 120) pass without a row written
    (:func:`cqlcodec.driver.arrow_io.write_arrow`). ``nulls`` as for
    :func:`cqlcodec.driver.insert_columns`: by default a null writes no tombstone."""

    def __init__(self, connect: Connect | Mapping[str, Any], table: str, *,
                 concurrency: int = 64, chunk_rows: int = 4096,
                 batch_by_partition: bool = False, raise_on_error: bool = True,
                 retry_timeout: float | None = None, nulls: str = "unset") -> None:
        check_nulls(nulls)
        self.connect = Connect.of(connect)
        self.ref = resolve_table(session_for(self.connect), table)
        self.options: dict[str, Any] = {"concurrency": concurrency, "chunk_rows": chunk_rows,
                                         "batch_by_partition": batch_by_partition,
                                         "retry_timeout": retry_timeout, "nulls": nulls}
        self.raise_on_error = raise_on_error
        self.result: WriteResult | None = None

    def get_name(self) -> str:
        """``WriteCassandra`` in task names and the dashboard (no credentials)."""
        return "Cassandra"

    def on_write_start(self, schema: Any = None) -> None:
        """Checks the dataset's columns against the table before any block is written."""
        if schema is not None:
            insert_query(self.ref, list(schema.names))

    def write(self, blocks: Iterable[Any], ctx: Any) -> WriteResult:
        """Writes the blocks of one task; failed rows are returned, numbered by block."""
        results = []
        for i, block in enumerate(blocks):
            table = block if isinstance(block, pyarrow.Table) else pyarrow.Table.from_pandas(
                block, preserve_index=False)
            number = int(getattr(ctx, "task_idx", 0)) * 1_000_000 + i
            results.append(write_arrow(self.connect, self.ref, table, number, **self.options))
        return merge_results(results)

    def on_write_complete(self, write_result: Any) -> None:
        """Merges the tasks' results into :attr:`result`; raises :class:`WriteError` if
        rows failed and ``raise_on_error``."""
        self.result = merge_results(list(write_result.write_returns))
        if self.result.failures and self.raise_on_error:
            raise WriteError(self.result)

    def __repr__(self) -> str:
        return f"CassandraDatasink({self.ref}, {self.connect!r})"


def write_table(dataset: Any, connect: Connect | Mapping[str, Any], table: str, *,
                concurrency: int = 64, chunk_rows: int = 4096, batch_by_partition: bool = False,
                raise_on_error: bool = True, retry_timeout: float | None = None,
                ray_remote_args: dict[str, Any] | None = None,
                nulls: str = "unset") -> WriteResult:
    """Write every row of the ``ray.data.Dataset`` into ``table`` (columns by name;
    the partition key columns must be among them) through a :class:`CassandraDatasink`
    and return the merged :class:`cqlcodec.driver.arrow_io.WriteResult`. Failed rows
    are reported by block (``partition`` = task index x 1,000,000 + block within the
    task) and row; with ``raise_on_error`` :class:`WriteError` is raised after all
    blocks were tried. ``retry_timeout`` and ``nulls`` as for :class:`CassandraDatasink`."""
    sink = CassandraDatasink(connect, table, concurrency=concurrency, chunk_rows=chunk_rows,
                             batch_by_partition=batch_by_partition, raise_on_error=False,
                             retry_timeout=retry_timeout, nulls=nulls)
    dataset.write_datasink(sink, ray_remote_args=ray_remote_args)
    result = sink.result if sink.result is not None else WriteResult(0)
    if result.failures and raise_on_error:
        raise WriteError(result)
    return result
