"""Token-range splits as Arrow tables of one fixed schema, and Arrow tables into a
table: the engine-neutral half of :mod:`cqlcodec.dask` and :mod:`cqlcodec.ray`.

A distributed engine needs every partition's types before it reads a row, while a
:class:`cqlcodec.ColumnBatch` picks the Arrow type of a varint or decimal column page
by page (int64, decimal128 or binary; decimal128(38, s) or text). So the engines get
one schema per table and projection (:func:`table_schema`): the types an empty page
gives, with varint and decimal columns as their exact decimal text (``str(int)``,
``str(Decimal)``). :func:`conform` puts every page in that schema;
:func:`read_split_table` reads one split (or a group) through
:func:`cqlcodec.driver.read_split`, with the session of this process for the spec
(:func:`cqlcodec.driver.session_for`). :func:`write_arrow` writes one partition with
:func:`cqlcodec.driver.insert_columns` (text back to numbers for those columns).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Final

from cassandra import AuthenticationFailed, OperationTimedOut
from cassandra.cluster import NoHostAvailable, Session
from cassandra.query import PreparedStatement

from cqlcodec import kinds as K
from cqlcodec.columnar.batch import ColumnBatch
from cqlcodec.driver.columns import InsertResult, insert_columns
from cqlcodec.driver.connect import Connect, session_for
from cqlcodec.driver.outage import DEFAULT_RETRY_TIMEOUT, Patience
from cqlcodec.driver.resend import insert_until_written, prepare_patiently
from cqlcodec.driver.scan import ScanError, read_split, resolved_columns, table_schema_batch
from cqlcodec.driver.splits import TokenSplit, table_ref
from cqlcodec.errors import CodecError
from cqlcodec.types.names import cql_table_name, quote_name

__all__ = ["TableColumns", "WriteFailure", "WriteResult", "WriteError", "conform", "group_splits",
           "read_split_table", "resolve_table", "empty_table", "write_arrow"]

_TEXT_KINDS: Final = (K.VARINT, K.DECIMAL)


@dataclass(frozen=True)
class TableColumns:
    """A table as the engines read and write it: keyspace, name, every column in
    schema order, the partition key columns, and the columns chosen (all by default)."""

    keyspace: str
    name: str
    columns: tuple[str, ...]
    partition_key: tuple[str, ...]
    kinds: tuple[tuple[str, str], ...]  # (column, CQL type text)

    @property
    def qualified(self) -> str:
        """``"ks"."table"``, quoted for CQL."""
        return f"{quote_name(self.keyspace)}.{quote_name(self.name)}"

    def __str__(self) -> str:
        return cql_table_name(self.keyspace, self.name)


def resolve_table(session: Session, table: str, columns: Sequence[str] | None = None) -> TableColumns:
    """The table ``"ks.table"`` (or ``"table"`` in the session's keyspace; quoted names
    keep their case) from the driver's schema metadata, with ``columns`` checked against
    it (default: all, in ``SELECT *`` order). Unknown keyspace or table:
    :class:`SplitPlanError`; unknown column: :class:`ScanError`."""
    ref = table_ref(session, table)
    every = tuple(ref.column_names)
    if columns is None:
        chosen = every
    else:
        if isinstance(columns, str):
            raise ScanError(f"columns must be a sequence of column names, not the str {columns!r}")
        chosen = tuple(resolved_columns(columns, every, str(ref), ScanError))
        if not chosen:
            raise ScanError(f"no column chosen from {ref}")
        if len(set(chosen)) != len(chosen):
            raise ScanError(f"a column is chosen twice: {list(chosen)}")
    kinds = tuple((c, str(ref.metadata.columns[c].cql_type)) for c in chosen)
    return TableColumns(ref.keyspace, ref.name, chosen, tuple(ref.partition_key), kinds)


def _text_column(column: Any) -> Any:
    import pyarrow

    return pyarrow.array([None if v is None else str(v) for v in column.to_pylist()],
                         type=pyarrow.string())


def _kind(batch: ColumnBatch, i: int) -> int:
    return int(batch.types[i].unwrapped().kind)


def conform(batch: ColumnBatch, schema: Any = None) -> Any:
    """One page as a ``pyarrow.Table``: varint and decimal columns as exact text, every
    other column as the page exports it, cast exactly to ``schema`` when given (a type
    that cannot be cast exactly raises :class:`ScanError` naming the column)."""
    import pyarrow

    arrays: list[Any] = []
    for i, column in enumerate(batch.columns):
        values = batch[i]
        if _kind(batch, i) in _TEXT_KINDS:
            array = _text_column(values)
        else:
            array = pyarrow.array(values)
        if schema is not None:
            want = schema.field(i).type
            if array.type != want:
                try:
                    array = array.cast(want, safe=True)
                except (pyarrow.ArrowInvalid, pyarrow.ArrowNotImplementedError) as exc:
                    raise ScanError(f"column {column.name!r}: a page's values have Arrow type "
                                    f"{array.type}, which does not cast exactly to the table's "
                                    f"{want}: {exc}") from exc
        arrays.append(array)
    names = list(batch.names)
    if schema is not None:
        return pyarrow.Table.from_arrays(arrays, schema=schema)
    return pyarrow.Table.from_arrays(arrays, names=names)


def empty_table(session: Session, ref: TableColumns) -> Any:
    """An empty ``pyarrow.Table`` whose schema every split of ``ref`` is read into (see
    the module doc); ``.schema`` is that schema (``Schema.empty_table`` cannot make
    every extension type, so the template travels instead)."""
    return conform(table_schema_batch(session, ref.qualified,
                                      [quote_name(c) for c in ref.columns]))


def storage_type(t: Any) -> Any:
    """``t`` with every Arrow extension type (``arrow.uuid``), at any depth, replaced by
    its storage type (``fixed_size_binary(16)``): the same buffers, no extension."""
    import pyarrow

    types = pyarrow.types
    if isinstance(t, pyarrow.BaseExtensionType):
        return storage_type(t.storage_type)
    if types.is_list(t) or types.is_large_list(t) or types.is_fixed_size_list(t):
        item = t.value_field.with_type(storage_type(t.value_type))
        if types.is_fixed_size_list(t):
            return pyarrow.list_(item, t.list_size)
        return pyarrow.large_list(item) if types.is_large_list(t) else pyarrow.list_(item)
    if types.is_map(t):
        return pyarrow.map_(t.key_field.with_type(storage_type(t.key_type)),
                            t.item_field.with_type(storage_type(t.item_type)))
    if types.is_struct(t):
        return pyarrow.struct([t.field(i).with_type(storage_type(t.field(i).type))
                               for i in range(t.num_fields)])
    return t


def without_extensions(table: Any) -> Any:
    """``table`` with its extension types replaced by their storage (see
    :func:`storage_type`); the same table when it has none."""
    import pyarrow

    schema = pyarrow.schema([f.with_type(storage_type(f.type)) for f in table.schema])
    return table if schema == table.schema else table.cast(schema)


def group_splits(splits: Sequence[TokenSplit], split_rows: int | None) -> list[tuple[TokenSplit, ...]]:
    """Consecutive splits (in ring order) grouped so each group's estimated rows stay
    at most ``split_rows`` (a split larger than that stays alone); ``None``: one split
    per group."""
    if split_rows is None:
        return [(s,) for s in splits]
    if split_rows < 1:
        raise ValueError(f"split_rows must be at least 1, got {split_rows}")
    groups: list[tuple[TokenSplit, ...]] = []
    current: list[TokenSplit] = []
    rows = 0
    for split in splits:
        if current and rows + split.estimated_rows > split_rows:
            groups.append(tuple(current))
            current, rows = [], 0
        current.append(split)
        rows += split.estimated_rows
    if current:
        groups.append(tuple(current))
    return groups


def describe_splits(splits: Sequence[TokenSplit]) -> str:
    """``(start, end]`` of one split, or the first and last of a group."""
    if len(splits) == 1:
        return f"({splits[0].start}, {splits[0].end}]"
    return f"{len(splits)} splits ({splits[0].start}, {splits[0].end}] .. " \
           f"({splits[-1].start}, {splits[-1].end}]"


def read_split_table(connect: Connect, ref: TableColumns, template: Any, splits: Sequence[TokenSplit], *,
                     columns: Sequence[str] | None = None, where: str | None = None,
                     fetch_size: int = 5000, consistency_level: int | None = None,
                     retries: int | None = None, retry_timeout: float | None = None) -> Any:
    """Every row of ``splits`` (columns ``columns``, default all of ``ref``) as one
    ``pyarrow.Table`` in the schema of ``template`` (from :func:`empty_table`, projected
    to ``columns``). Runs in the worker: the session is this process's for ``connect``
    (opened again while the cluster is unreachable, up to ``retry_timeout``). Splits
    ride out outages as in :func:`cqlcodec.driver.read_split`; a split that keeps
    failing raises :class:`ScanError` naming its token range and the cause."""
    import pyarrow

    chosen = list(ref.columns) if columns is None else list(columns)
    unknown = [c for c in chosen if c not in ref.columns]
    if unknown:
        raise ScanError(f"unknown column(s) {unknown} for {ref} (columns: {list(ref.columns)})")
    empty = template.select(chosen)
    wanted = empty.schema
    session = _session_in_time(connect, ref, splits, retry_timeout, retries)
    tables: list[Any] = []
    for split in splits:
        try:
            for batch in read_split(session, ref.qualified, split,
                                    [quote_name(c) for c in chosen], where=where,
                                    fetch_size=fetch_size, consistency_level=consistency_level,
                                    retries=retries, retry_timeout=retry_timeout):
                if len(batch):
                    tables.append(conform(batch, wanted))
        except ScanError:
            raise
        except Exception as exc:
            raise ScanError(f"reading token range ({split.start}, {split.end}] of {ref} failed: "
                            f"{type(exc).__name__}: {exc}") from exc
    if not tables:
        return empty
    return pyarrow.concat_tables(tables)


def _session_in_time(connect: Connect, ref: TableColumns, splits: Sequence[TokenSplit],
                     retry_timeout: float | None, retries: int | None) -> Session:
    """This process's session for ``connect``, tried again while no host answers (a
    worker that starts its first task during an outage); refused credentials fail at once."""
    patience = Patience(None, DEFAULT_RETRY_TIMEOUT if retry_timeout is None else retry_timeout,
                        retries)
    found = _connect_patiently(connect, patience)
    if isinstance(found, tuple):
        exc, detail = found
        raise ScanError(f"reading {describe_splits(list(splits))} of {ref}: {exc}{detail}") from exc
    return found


def _connect_patiently(connect: Connect, patience: Patience) -> Session | tuple[CodecError, str]:
    """This process's session for ``connect``, tried again while no host answers and
    ``patience`` lasts; else the connect error and why it was not tried again."""
    while True:
        try:
            return session_for(connect)
        except CodecError as exc:
            reason = patience.wait_to_retry() if _unreachable(exc.__cause__) else ""
            if reason is not None:
                return exc, f" ({reason})" if reason else ""


def _unreachable(error: BaseException | None) -> bool:
    """Whether a failed connect means no node answered (not refused credentials)."""
    if isinstance(error, NoHostAvailable):
        return not any(isinstance(e, AuthenticationFailed) for e in error.errors.values())
    return isinstance(error, OperationTimedOut)


# --------------------------------------------------------------------------- writing

@dataclass(frozen=True)
class WriteFailure:
    """One row not written: its partition (or block) index, its row within it, and the
    error as text (errors cross process boundaries as text)."""

    partition: int
    row: int
    error: str


class WriteResult:
    """What a distributed write did: ``rows`` given, ``written`` acknowledged, and one
    :class:`WriteFailure` per row not written (sorted by partition and row)."""

    def __init__(self, rows: int = 0, failures: Sequence[WriteFailure] = ()) -> None:
        self.rows = rows
        self.failures: list[WriteFailure] = sorted(failures, key=lambda f: (f.partition, f.row))

    @property
    def written(self) -> int:
        """Rows the server acknowledged."""
        return self.rows - len(self.failures)

    def __repr__(self) -> str:
        return f"WriteResult(rows={self.rows}, written={self.written}, failures={len(self.failures)})"


class WriteError(CodecError):
    """Some rows of a distributed write failed (the others were written); ``result``
    holds every failure, as :class:`cqlcodec.driver.InsertError` does for one process."""

    def __init__(self, result: WriteResult) -> None:
        shown = "; ".join(f"partition {f.partition} row {f.row}: {f.error}" for f in result.failures[:3])
        more = len(result.failures) - 3
        super().__init__(f"{len(result.failures)} of {result.rows} rows were not written: {shown}"
                         + (f" (and {more} more)" if more > 0 else ""))
        self.result = result

    def __reduce__(self) -> tuple[Any, ...]:
        return (WriteError, (self.result,))


_prepared_lock: Final = threading.Lock()
_prepared: dict[tuple[int, str], PreparedStatement] = {}


def _prepare(session: Session, query: str, patience: Patience) -> PreparedStatement:
    key = (id(session), query)
    with _prepared_lock:
        found = _prepared.get(key)
    if found is None:
        prepared = prepare_patiently(session, query, patience)
        if isinstance(prepared, tuple):  # unreachable for longer than patience lasts
            raise prepared[0]
        found = prepared
        with _prepared_lock:
            _prepared[key] = found
    return found


def insert_query(ref: TableColumns, names: Sequence[str]) -> str:
    """``INSERT INTO ks.t (names...) VALUES (?, ...)`` for columns of ``ref``."""
    unknown = [n for n in names if n not in ref.columns]
    if unknown:
        raise ScanError(f"unknown column(s) {', '.join(map(repr, unknown))} for {ref} "
                        f"(columns: {', '.join(ref.columns)})")
    missing = [c for c in ref.partition_key if c not in names]
    if missing:
        raise ScanError(f"writing {ref} needs its partition key column(s) {missing}")
    return (f"INSERT INTO {ref.qualified} ({', '.join(quote_name(n) for n in names)}) "
            f"VALUES ({', '.join('?' for _ in names)})")


def _numbers_from_text(ref: TableColumns, table: Any) -> dict[str, Any]:
    kinds = dict(ref.kinds)
    columns: dict[str, Any] = {}
    for name in table.column_names:
        column = table.column(name)
        cql = kinds.get(name, "")
        if cql in ("varint", "decimal") and str(column.type) in ("string", "large_string"):
            make = int if cql == "varint" else Decimal
            columns[name] = [None if v is None else make(v) for v in column.to_pylist()]
        else:
            columns[name] = column
    return columns


def write_arrow(connect: Connect, ref: TableColumns, table: Any, partition: int, *,
                concurrency: int = 64, chunk_rows: int = 4096,
                batch_by_partition: bool = False,
                retry_timeout: float | None = None, nulls: str = "unset") -> WriteResult:
    """Write every row of the ``pyarrow.Table`` ``table`` (or anything
    ``pyarrow.table`` takes: a pandas DataFrame) into ``ref`` with
    :func:`insert_columns`; varint and decimal text columns are read back as numbers.
    Rows that failed with a timeout, an unavailable replica, a lost connection or no host
    available are sent again (inserts are idempotent) until ``retry_timeout`` seconds
    (default 120) pass without a row written; while the driver holds every host down,
    the writes wait for it to come back (:mod:`cqlcodec.driver.outage`). What still
    failed is returned (never raised), numbered within ``partition``. ``nulls`` as for
    :func:`insert_columns` (by default a null writes no tombstone)."""
    import pyarrow

    if not isinstance(table, pyarrow.Table):
        table = pyarrow.Table.from_pandas(table, preserve_index=False) \
            if hasattr(table, "to_numpy") and hasattr(table, "columns") else pyarrow.table(table)
    if table.num_rows == 0:
        return WriteResult(0)
    timeout = DEFAULT_RETRY_TIMEOUT if retry_timeout is None else float(retry_timeout)
    found = _connect_patiently(connect, Patience(None, timeout, None))
    if isinstance(found, tuple):
        return _all_failed(partition, table.num_rows, f"{found[0]}{found[1]}")
    session = found
    patience = Patience(session, timeout, None)
    try:
        statement = _prepare(session, insert_query(ref, table.column_names), patience)
        columns: Mapping[str, Any] = _numbers_from_text(ref, table)
        patience.progressed()
        unavailable = patience.wait_for_hosts()
        if unavailable is not None:
            return _all_failed(partition, table.num_rows, f"no host came back: {unavailable}")
        result: InsertResult = insert_columns(session, statement, columns,
                                              concurrency=concurrency, chunk_rows=chunk_rows,
                                              batch_by_partition=batch_by_partition,
                                              raise_on_error=False, nulls=nulls)
        if len(result.failures) < result.rows:
            patience.progressed()
        failures, resent = insert_until_written(session, pyarrow, statement, columns,
                                                result.failures, patience,
                                                concurrency=concurrency,
                                                batch_by_replica=False,
                                                batch_by_partition=batch_by_partition,
                                                batch_bytes=5 * 1024, nulls=nulls)
    finally:
        patience.done()
    return WriteResult(result.rows, [WriteFailure(partition, f.row,
                                                  f"{type(f.error).__name__}: {f.error}")
                                     for f in failures])


def _all_failed(partition: int, rows: int, reason: str) -> WriteResult:
    return WriteResult(rows, [WriteFailure(partition, row, reason) for row in range(rows)])


def merge_results(results: Iterable[WriteResult]) -> WriteResult:
    """One :class:`WriteResult` for all partitions."""
    rows = 0
    failures: list[WriteFailure] = []
    for r in results:
        rows += r.rows
        failures.extend(r.failures)
    return WriteResult(rows, failures)
