"""What :func:`cqlcodec.driver.load_table` reads: files, directories, tables and
streams, each opened as a sequence of pyarrow record batches of bounded size.

A *source* is one of: a path (str or ``os.PathLike``) to a Parquet file (``.parquet``,
``.pq``), a CSV file (``.csv``, ``.csv.gz``, ``.tsv``), an Arrow IPC file or stream
(``.arrow``, ``.feather``, ``.ipc``) or a directory holding such files (read in name
order, recursively; other files are ignored); a ``pyarrow.dataset.Dataset``,
``pyarrow.Table``, ``pyarrow.RecordBatch`` or ``RecordBatchReader``; a pandas or polars
DataFrame; any object with ``__arrow_c_stream__``; or an iterable of record batches
(or of anything ``pyarrow.record_batch`` takes). A list of sources is read one after
the other. Needs pyarrow (``pip install 'cqlcodec[arrow]'``).

CSV files have a header line; their columns are read with the Arrow type that fits
the table's CQL type (``csv_types``), and values Arrow cannot parse itself (uuid,
inet, varint, decimal, blob as ``0x...`` hex, collections, tuples and UDTs as JSON or
CQL-like literals) are converted column by column. Timestamps and dates are read as
:mod:`cqlcodec.driver.time_text` says (with or without a zone, ``T`` or a space,
any fraction, epoch milliseconds; a date as a midnight datetime): by Arrow's parser
where it takes every value of a column, else value by value.
"""

from __future__ import annotations

import ast
import csv
import datetime
import io
import itertools
import json
import os
import re
import sys
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Final

from cqlcodec.driver.row_take import take_chunk_rows, take_rows
from cqlcodec.driver.text_records import (
    RecordGroup,
    Unreadable,
    csv_pieces,
    csv_records,
    jsonl_records,
)
from cqlcodec.driver.time_text import UTC, TimeTextError, arrow_times, date_days, timestamp_ms
from cqlcodec.errors import CodecError

__all__ = ["Chunk", "LoadCancelled", "LoadError", "SourcePart", "TooManyBadRows", "arrow_module", "open_source",
           "source_parts"]

PARQUET_SUFFIXES: Final = (".parquet", ".pq")
CSV_SUFFIXES: Final = (".csv", ".csv.gz", ".csv.bz2", ".csv.zst", ".tsv")
JSONL_SUFFIXES: Final = (".jsonl", ".jsonl.gz", ".jsonl.zst", ".ndjson")
STDIN: Final = "-"
ARROW_SUFFIXES: Final = (".arrow", ".feather", ".ipc", ".arrows")
ARROW_HINT: Final = "pip install 'cqlcodec[arrow]' (or pip install pyarrow)"


class LoadError(CodecError):
    """A bulk load cannot go on: an unknown table or column, a value that does not fit
    its column's CQL type, an unreadable file. ``source`` names the file (or source),
    ``column``, ``row`` (the row's index in the whole load, from 0) and ``line`` (the
    line of a CSV or JSON lines file the record starts on, from 1: the header is line 1)
    where known. Nothing of the chunk holding ``row`` was sent; the chunks before it were."""

    def __init__(self, message: str, *, source: str = "", column: str = "",
                 row: int | None = None, line: int | None = None) -> None:
        where = ", ".join(part for part in (
            f"{source}:{line}" if source and line is not None else source,
            f"row {row}" if row is not None else "",
            f'column "{column}"' if column else "") if part)
        super().__init__(f"{where}: {message}" if where else message)
        self.reason = message
        self.source = source
        self.column = column
        self.row = row
        self.line = line


class LoadCancelled(LoadError):
    """A bulk load was told to stop (its ``stop`` flag was set, or the task awaiting
    :func:`cqlcodec.aio.load_table` was cancelled): no request was sent after that, and
    the requests already in flight were waited for. ``result`` is the
    :class:`~cqlcodec.driver.InsertResult` of the rows read so far (``result.rows``;
    the rows of a chunk cut short count as read)."""

    def __init__(self, result: Any) -> None:
        super().__init__(f"the load was stopped after {result.rows} rows read")
        self.result = result


class TooManyBadRows(LoadError):
    """A tolerant load (``max_errors``) met more bad rows than its budget. The budget is
    checked after each chunk, so the good rows of that chunk were written. ``result`` is
    the :class:`~cqlcodec.driver.InsertResult` so far (its ``failures`` are the bad rows),
    ``limit`` the budget, and ``finished`` says whether every row of the source had been
    read (the budget ran out in the last chunk: nothing was left unwritten but the bad
    rows) or the rest of the source was not read."""

    def __init__(self, result: Any, limit: int, finished: bool, source: str = "") -> None:
        bad = len(result.failures)
        if finished:
            what = (f"every row was read; {result.written:,} written, {bad:,} bad "
                    "(the budget ran out in the last chunk)")
        else:
            what = (f"the load stopped after {result.rows:,} rows read ({result.written:,} "
                    f"written, {bad:,} bad); the rest was not read")
        super().__init__(f"more than {limit} bad rows ({bad}): {what}", source=source)
        self.result = result
        self.limit = limit
        self.finished = finished


def arrow_module() -> Any:
    """pyarrow, or a :class:`LoadError` saying how to install it."""
    try:
        import pyarrow
    except ImportError:
        raise LoadError(f"loading and unloading tables needs pyarrow: {ARROW_HINT}") from None
    return pyarrow


@dataclass
class SourcePart:
    """One readable piece of a source: a file or an in-memory object, with a name for
    messages and, where cheap to know, its row count and size in bytes."""

    name: str
    kind: str                 # "parquet", "csv", "jsonl", "arrow" or "object"
    obj: Any = None           # the in-memory object (kind "object")
    rows: int | None = None
    size: int = 0


@dataclass
class Chunk:
    """A piece of a source as read: ``data`` (a record batch, or a mapping of column
    name to values), for text files the line each of its rows starts on (``lines``,
    from 1; None for other sources), and the records of that stretch that could not be
    read (``unreadable``: only when reading tolerantly, see
    :mod:`cqlcodec.driver.text_records`)."""

    data: Any
    lines: list[int] | None = None
    unreadable: list[Unreadable] = field(default_factory=list)


def source_parts(source: object, stdin_format: str | None = None) -> list[SourcePart]:
    """The pieces of ``source`` in reading order, every file checked to exist and to
    have a known format (LoadError otherwise) before anything is read. The path ``-``
    is stdin, read as ``stdin_format`` (csv or jsonl)."""
    listed = isinstance(source, (list, tuple)) and any(
        isinstance(s, str) and s == STDIN for s in source)
    if isinstance(source, str) and source == STDIN or listed:
        if stdin_format not in ("csv", "jsonl"):
            raise LoadError("reading stdin (-) needs its format: csv or jsonl",
                            source="stdin")
        if listed and len(source) != 1:  # type: ignore[arg-type]
            raise LoadError("stdin (-) is read alone, without other sources", source="stdin")
        return [SourcePart("stdin", stdin_format, sys.stdin.buffer)]
    if isinstance(source, (str, os.PathLike)):
        return _path_parts(os.fspath(source))
    if isinstance(source, (list, tuple)) and source and all(
            isinstance(s, (str, os.PathLike)) for s in source):
        parts: list[SourcePart] = []
        for s in source:
            parts.extend(_path_parts(os.fspath(s)))
        return parts
    rows = getattr(source, "num_rows", None)
    if not isinstance(rows, int):
        rows = None
    return [SourcePart(type(source).__name__, "object", source, rows)]


def _format_of(path: str) -> str | None:
    lower = path.lower()
    if lower.endswith(PARQUET_SUFFIXES):
        return "parquet"
    if lower.endswith(CSV_SUFFIXES):
        return "csv"
    if lower.endswith(JSONL_SUFFIXES):
        return "jsonl"
    if lower.endswith(ARROW_SUFFIXES):
        return "arrow"
    return None


def _path_parts(path: str) -> list[SourcePart]:
    if os.path.isdir(path):
        found: list[str] = []
        for root, dirs, files in os.walk(path):
            dirs[:] = sorted(d for d in dirs if not d.startswith((".", "_")))
            found.extend(os.path.join(root, f) for f in files
                         if not f.startswith((".", "_")) and _format_of(f) is not None)
        if not found:
            raise LoadError("no Parquet, CSV, JSON lines or Arrow files in this directory",
                            source=path)
        return [_file_part(f) for f in sorted(found)]
    if not os.path.exists(path):
        raise LoadError("no such file or directory", source=path)
    return [_file_part(path)]


def _file_part(path: str) -> SourcePart:
    kind = _format_of(path)
    if kind is None:
        raise LoadError("unknown file format (use .parquet, .csv, .jsonl or .arrow files)",
                        source=path)
    try:
        size = os.path.getsize(path)
        with open(path, "rb"):
            pass
    except OSError as exc:
        raise LoadError(f"cannot read the file: {exc.strerror or exc}", source=path) from exc
    return SourcePart(path, kind, size=size)


def open_source(part: SourcePart, chunk_rows: int,
                csv_types: Mapping[str, str] | None = None,
                json_types: Mapping[str, Any] | None = None, *,
                tolerant: bool = False, time_zone: datetime.tzinfo = UTC) -> Iterator[Chunk]:
    """The :class:`Chunk` s of one piece (each at most ``chunk_rows`` rows where the
    format allows; an iterable's own batches as they come). Read errors are
    :class:`LoadError` naming the piece. ``csv_types`` maps column name to CQL type
    name for CSV files, ``json_types`` to :class:`~cqlcodec.CqlType` for JSON lines.
    ``tolerant``: a CSV or JSON lines record that cannot be read (or a CSV value that
    does not convert) is left out of its chunk and listed in its ``unreadable``
    instead of raising. ``time_zone``: the zone of CSV and JSON lines timestamps
    written without one (see :mod:`cqlcodec.driver.time_text`)."""
    pa = arrow_module()
    try:
        if part.kind == "csv":
            yield from _csv_chunks(pa, part, chunk_rows, CsvTypes(csv_types or {}, json_types),
                                   tolerant, time_zone)
        elif part.kind == "jsonl":
            yield from _jsonl_chunks(pa, part, chunk_rows, json_types or {}, tolerant,
                                     time_zone)
        else:
            for batch in _batches(pa, part, chunk_rows):
                yield Chunk(batch)
    except LoadError:
        raise
    except (OSError, pa.ArrowException, ValueError, TypeError) as exc:
        raise LoadError(f"cannot read it: {exc}", source=part.name) from exc


def _batches(pa: Any, part: SourcePart, chunk_rows: int) -> Iterator[Any]:
    if part.kind == "parquet":
        return _parquet_batches(part, chunk_rows)
    if part.kind == "arrow":
        return _ipc_batches(pa, part)
    return _object_batches(pa, part.obj, chunk_rows)


def peek_columns(part: SourcePart, csv_types: Mapping[str, str] | None = None) -> list[str] | None:
    """The column names of a file piece, read from its header or schema only (None for
    in-memory objects, whose columns are seen with their first batch)."""
    pa = arrow_module()
    try:
        if part.kind == "parquet":
            import pyarrow.parquet as pq

            return list(pq.ParquetFile(part.name).schema_arrow.names)
        if part.kind in ("csv", "jsonl") and part.obj is not None:
            return _peek_stdin(part)
        if part.kind == "csv":
            return _csv_header(pa, part)
        if part.kind == "jsonl":
            with _byte_input(pa, part) as lines:
                return _first_object_keys(lines)
        if part.kind == "arrow":
            with _open_ipc(pa, part.name) as reader:
                return list(reader.schema.names)
    except (OSError, pa.ArrowException, ValueError) as exc:
        raise LoadError(f"cannot read it: {exc}", source=part.name) from exc
    return None


def _peek_stdin(part: SourcePart) -> list[str] | None:
    """The columns of stdin's first line (its CSV header, or its first JSON object),
    seen without consuming it (at most the stream's buffer, 64 KiB)."""
    peek = 1 << 16
    head = bytes(part.obj.peek(peek))
    lines = head.split(b"\n")
    if len(head) >= peek:
        lines.pop()  # cut by the buffer
    if part.kind == "jsonl":
        return _first_object_keys(lines)
    line = lines[0].decode("utf-8-sig", "replace").strip() if lines else ""
    return next(csv.reader([line]), []) if line else []


def _first_object_keys(lines: Iterable[bytes]) -> list[str] | None:
    """The keys of the first line that is a JSON object (None when no line is: the
    lines that are not are reported when the file is read)."""
    for line in lines:
        if line.strip():
            try:
                row = json.loads(line.decode("utf-8"))
            except ValueError:
                continue
            if isinstance(row, dict):
                return list(row)
    return None


def _byte_input(pa: Any, part: SourcePart) -> Any:
    """The bytes of a text piece (stdin, or a file, decompressed by its suffix), read
    by line when iterated."""
    if part.obj is not None:
        return io.BufferedReader(_Unclosed(part.obj), 1 << 16)
    return io.BufferedReader(pa.input_stream(part.name, compression="detect"), 1 << 16)


class _Unclosed(io.RawIOBase):
    """stdin, read through a wrapper that closing does not close."""

    def __init__(self, raw: Any) -> None:
        super().__init__()
        self.raw = raw

    def readable(self) -> bool:
        """True."""
        return True

    def readinto(self, buffer: Any) -> int:
        """Reads into ``buffer``."""
        data = self.raw.read1(len(buffer)) if hasattr(self.raw, "read1") else \
            self.raw.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)


def _jsonl_chunks(pa: Any, part: SourcePart, chunk_rows: int, json_types: Mapping[str, Any],
                  tolerant: bool, time_zone: datetime.tzinfo = UTC) -> Iterator[Chunk]:
    """JSON lines as mappings of column name to Python values, ``chunk_rows`` lines at
    a time, each value converted for its column's CQL type (``json_values``). A
    timestamp or date text that is none (see :mod:`cqlcodec.driver.time_text`)
    raises :class:`LoadError` naming its column and row, or, ``tolerant``, sets its
    record aside as unreadable."""
    known: list[str] = []  # the columns seen so far, in order of their first row
    with _byte_input(pa, part) as lines:
        try:
            for group in jsonl_records(lines, chunk_rows, tolerant=tolerant):
                refused: list[tuple[int, str, str]] = []
                columns = _json_columns(group, known, json_types, time_zone, refused)
                if refused and not tolerant:
                    row, name, reason = refused[0]
                    raise LoadError(reason, column=name, row=row, line=group.lines[row])
                if refused:
                    yield _without_refused(group, columns, refused)
                else:
                    yield Chunk(columns, group.lines, group.unreadable)
        except ValueError as exc:
            raise LoadError(str(exc), source=part.name) from None


def _without_refused(group: RecordGroup, columns: dict[str, list[Any]],
                     refused: list[tuple[int, str, str]]) -> Chunk:
    """A JSON lines chunk without its records whose values did not convert, which are
    listed as unreadable (the first reason of each)."""
    reasons: dict[int, str] = {}
    for row, name, reason in refused:
        reasons.setdefault(row, f'column "{name}": {reason}')
    keep = [i for i in range(len(group.records)) if i not in reasons]
    unreadable = list(group.unreadable) + [
        Unreadable(group.lines[row], reason, "", dict(group.records[row]))
        for row, reason in reasons.items()]
    return Chunk({n: [values[i] for i in keep] for n, values in columns.items()},
                 [group.lines[i] for i in keep], sorted(unreadable, key=lambda u: u.line))


def _json_columns(group: RecordGroup, known: list[str], json_types: Mapping[str, Any],
                  time_zone: datetime.tzinfo = UTC,
                  refused: list[tuple[int, str, str]] | None = None) -> dict[str, list[Any]]:
    from cqlcodec.driver.json_values import from_json

    columns: dict[str, list[Any]] = {name: [] for name in known}
    for rows, row in enumerate(group.records):
        for name in row:
            if name not in columns:
                columns[name] = [None] * rows
                known.append(name)
        for name, values in columns.items():
            value = row.get(name)
            t = json_types.get(name)
            if t is not None and value is not None:
                try:
                    value = from_json(value, t, time_zone)
                except TimeTextError as exc:
                    if refused is not None:
                        refused.append((rows, name, f"{value!r} is no {t.cql_name} value ({exc})"))
                except (ValueError, TypeError, ArithmeticError):
                    pass  # binding refuses it, naming the column and the row
            values.append(value)
    return columns


def _parquet_batches(part: SourcePart, chunk_rows: int) -> Iterator[Any]:
    """A Parquet file's batches, its durations (:mod:`cqlcodec.driver.parquet_durations`)
    as Arrow intervals again."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from cqlcodec.driver.parquet_durations import structs_as_intervals

    with pq.ParquetFile(part.name) as f:
        for batch in f.iter_batches(batch_size=chunk_rows):
            yield structs_as_intervals(pa, batch)


def _open_ipc(pa: Any, path: str) -> Any:
    import pyarrow.ipc as ipc

    try:
        return ipc.open_file(path)
    except pa.ArrowInvalid:
        return ipc.open_stream(path)


def _ipc_batches(pa: Any, part: SourcePart) -> Iterator[Any]:
    reader = _open_ipc(pa, part.name)
    if hasattr(reader, "num_record_batches"):
        for i in range(reader.num_record_batches):
            yield reader.get_batch(i)
    else:
        yield from reader


def _object_batches(pa: Any, obj: Any, chunk_rows: int) -> Iterator[Any]:
    module = type(obj).__module__.split(".")[0]
    if isinstance(obj, pa.RecordBatch):
        yield from pa.Table.from_batches([obj]).to_batches(max_chunksize=chunk_rows)
    elif isinstance(obj, pa.Table):
        yield from obj.to_batches(max_chunksize=chunk_rows)
    elif isinstance(obj, pa.RecordBatchReader):
        yield from obj
    elif module == "pyarrow" and hasattr(obj, "to_batches") and hasattr(obj, "schema"):
        yield from obj.to_batches(batch_size=chunk_rows)  # a pyarrow.dataset.Dataset
    elif module == "pandas" and hasattr(obj, "columns"):
        for start in range(0, len(obj), chunk_rows):
            yield pandas_record_batch(pa, obj.iloc[start:start + chunk_rows])
    elif module == "polars" and hasattr(obj, "to_arrow"):
        for start in range(0, len(obj), chunk_rows):
            yield from obj.slice(start, chunk_rows).to_arrow().to_batches()
    elif hasattr(obj, "__arrow_c_stream__"):
        yield from pa.RecordBatchReader.from_stream(obj)
    elif isinstance(obj, Iterable) and not isinstance(obj, (str, bytes, Mapping)):
        for item in obj:
            if isinstance(item, pa.Table):
                yield from item.to_batches(max_chunksize=chunk_rows)
            elif isinstance(item, pa.RecordBatch):
                yield item
            else:
                yield pa.record_batch(item)
    else:
        raise LoadError(f"cannot load from a {type(obj).__name__}: give a file or directory "
                        "path, a pyarrow Table/Dataset/RecordBatchReader, a pandas or polars "
                        "DataFrame, or an iterable of record batches")


def pandas_record_batch(pa: Any, frame: Any) -> Any:
    """A pandas DataFrame as a record batch (its index left out). A column of
    :class:`cqlcodec.Duration` objects (what ``to_pandas()`` gives for a duration
    column) becomes a month_day_nano interval column, which pyarrow does not infer."""
    from cqlcodec.values import Duration

    held = [i for i in range(frame.shape[1])
            if getattr(frame.dtypes.iloc[i], "kind", "") == "O" and _first_value_is(frame.iloc[:, i], Duration)]
    if not held:
        return pa.RecordBatch.from_pandas(frame, preserve_index=False)
    arrays = [_interval_array(pa, frame.iloc[:, i]) if i in held
              else pa.array(frame.iloc[:, i], from_pandas=True) for i in range(frame.shape[1])]
    arrays = [a.combine_chunks() if isinstance(a, pa.ChunkedArray) else a for a in arrays]
    return pa.RecordBatch.from_arrays(arrays, names=[str(c) for c in frame.columns])


def _first_value_is(column: Any, cls: type) -> bool:
    for v in column:
        if v is not None and v == v:  # NaN, pandas' own missing value, is not equal to itself
            return isinstance(v, cls)
    return False


def _interval_array(pa: Any, column: Any) -> Any:
    """A pandas column of Duration objects (None or NaN for null) as Arrow intervals;
    any other value is refused naming the column."""
    from cqlcodec.values import Duration

    values: list[Any] = []
    for v in column:
        if isinstance(v, Duration):
            values.append(pa.MonthDayNano([v.months, v.days, v.nanoseconds]))
        elif v is None or v != v:
            values.append(None)
        else:
            raise LoadError(f"a {type(v).__name__} among Duration objects: {v!r}",
                            column=str(column.name))
    return pa.array(values, pa.month_day_nano_interval())


# --------------------------------------------------------------------------- CSV

class CsvTypes(dict[str, str]):
    """The CQL type names of a CSV file's columns by name, and their
    :class:`~cqlcodec.CqlType` where known (``full``): collections, tuples, UDTs and
    durations are then read as the JSON ``unload`` writes (``parse_csv_value``)."""

    def __init__(self, names: Mapping[str, str], full: Mapping[str, Any] | None) -> None:
        super().__init__(names)
        self.full = dict(full or {})


_ARROW_OF_CQL: Final = {
    "tinyint": "int8", "smallint": "int16", "int": "int32", "bigint": "int64",
    "counter": "int64", "float": "float32", "double": "float64", "boolean": "bool_",
    "text": "string", "varchar": "string", "ascii": "string", "inet": "string",
    "time": "time64ns",
}  # any other type (timestamp and date included) is read as text and converted here


def _arrow_type(pa: Any, cql: str) -> Any:
    name = _ARROW_OF_CQL.get(cql, "string")
    if name == "time64ns":
        return pa.time64("ns")
    return getattr(pa, name)()


def _csv_options(pcsv: Any, part: SourcePart, column_types: Mapping[str, Any],
                 empty_lines: bool = True) -> dict[str, Any]:
    """Arrow's CSV options; ``empty_lines=False`` makes an empty line a row of one
    field (so that every row read is one line of the file)."""
    return {
        "parse_options": pcsv.ParseOptions(delimiter=_delimiter(part), newlines_in_values=True,
                                           ignore_empty_lines=empty_lines),
        "convert_options": pcsv.ConvertOptions(
            column_types=dict(column_types), strings_can_be_null=True,
            null_values=[""], quoted_strings_can_be_null=False, true_values=["true", "True", "TRUE", "1"],
            false_values=["false", "False", "FALSE", "0"]),
    }


def _delimiter(part: SourcePart) -> str:
    return "\t" if part.name.lower().endswith(".tsv") else ","


def _csv_chunks(pa: Any, part: SourcePart, chunk_rows: int, csv_types: Mapping[str, str],
                tolerant: bool, time_zone: datetime.tzinfo = UTC) -> Iterator[Chunk]:
    """A CSV piece read by Arrow's streaming reader. Tolerantly, the rows it gives are
    checked to be one line each (no value holds a line break) and read from an empty
    line on as they come; at the first block it cannot read (a record of the wrong
    width, a value that does not convert, bytes that are no UTF-8) or that is not one
    line per row, the rest of the file is read line by line (stdin: all of it), the
    records that cannot be read set aside (:func:`_careful_csv_chunks`)."""
    import pyarrow.csv as pcsv

    types = {name: _arrow_type(pa, cql) for name, cql in csv_types.items()}
    if tolerant and part.obj is not None:  # stdin cannot be read a second time
        yield from _careful_csv_chunks(pa, pcsv, part, 0, chunk_rows, types, csv_types,
                                       time_zone)
        return
    if part.obj is not None:  # stdin cannot be read again with larger blocks
        yield from _stdin_csv_chunks(pa, pcsv, part, chunk_rows, types, csv_types, time_zone)
        return
    block = max(1 << 16, min(1 << 26, chunk_rows * 128))
    options = _csv_options(pcsv, part, types, empty_lines=not tolerant)
    options["read_options"] = pcsv.ReadOptions(block_size=block)
    source = part.obj if part.obj is not None else part.name
    if not tolerant:
        done = 0
        while True:
            try:
                with pcsv.open_csv(source, **options) as reader:
                    for batch in reader:
                        done += batch.num_rows
                        yield Chunk(_typed_csv_batch(pa, batch, csv_types, time_zone=time_zone))
                return
            except pa.ArrowInvalid as exc:
                if "straddl" in str(exc) and part.obj is None and block < _MAX_BLOCK:
                    # a record longer than a block (a cell of megabytes): read again
                    # with larger blocks, from the row after the last one given
                    block = min(_MAX_BLOCK, block * 4)
                    options["read_options"] = pcsv.ReadOptions(block_size=block,
                                                               skip_rows_after_names=done)
                    continue
                error = _conversion_error(exc, part, _csv_header(pa, part), csv_types)
                raise _located(pa, pcsv, part, chunk_rows, types, csv_types, error) from None
    read = 0  # the rows read so far, each one line after the header
    try:
        with pcsv.open_csv(source, **options) as reader:
            for batch in reader:
                if _has_line_break(pa, batch):
                    break
                rows = batch.num_rows
                yield _tolerant_chunk(pa, batch, list(range(read + 2, read + 2 + rows)),
                                      csv_types, time_zone)
                read += rows
            else:
                return
    except pa.ArrowInvalid:
        pass
    yield from _careful_csv_chunks(pa, pcsv, part, read, chunk_rows, types, csv_types,
                                   time_zone)


# Arrow's CSV reader refuses a record longer than its block: a file is read again with
# blocks four times larger (up to the largest it takes)
_MAX_BLOCK: Final = (1 << 31) - 1


def _stdin_csv_chunks(pa: Any, pcsv: Any, part: SourcePart, chunk_rows: int,
                      types: Mapping[str, Any], csv_types: Mapping[str, str],
                      time_zone: datetime.tzinfo) -> Iterator[Chunk]:
    """CSV from stdin, which is read once: in pieces that end where a record ends
    (:func:`~cqlcodec.driver.text_records.csv_pieces`), each read by Arrow as one
    block, so that a record of any length is read (Arrow's streaming reader refuses a
    record longer than its block, and stdin cannot be read again with larger ones).
    From a piece Arrow cannot read on, the rest is read line by line
    (:func:`_careful_csv_chunks`): the first record that cannot be read is the error,
    with its line."""
    options = _csv_options(pcsv, part, types)
    pieces = csv_pieces(part.obj.read, max(1 << 16, min(1 << 26, chunk_rows * 128)))
    header = b""
    names: list[str] | None = None
    lines = 0  # in the pieces before this one
    for piece in pieces:
        read = pcsv.ReadOptions(block_size=len(piece) + 1, use_threads=False,
                                column_names=names)
        try:
            table = pcsv.read_csv(pa.py_buffer(piece), read_options=read, **options)
        except pa.ArrowInvalid:
            rest = SourcePart(part.name, "csv", _Joined(iter([header, piece]), pieces))
            for chunk in _careful_csv_chunks(pa, pcsv, rest, 0, chunk_rows, types, csv_types,
                                             time_zone, max(0, lines - 1)):
                if chunk.unreadable:
                    raise _unreadable_error(chunk.unreadable[0], part) from None
                yield chunk
            return
        if names is None:
            names = table.schema.names
            header = piece[:piece.find(b"\n") + 1]
        lines += piece.count(b"\n")
        for batch in table.to_batches(max_chunksize=chunk_rows):
            yield Chunk(_typed_csv_batch(pa, batch, csv_types, time_zone=time_zone))


class _Joined:
    """Pieces of bytes (``first``, then ``rest``) read as one stream."""

    def __init__(self, first: Iterator[bytes], rest: Iterator[bytes]) -> None:
        self._pieces = itertools.chain(first, rest)
        self._held = memoryview(b"")

    def read(self, n: int = -1) -> bytes:
        """At most ``n`` bytes (all of a piece when ``n`` is -1); none at the end."""
        while not self._held:
            piece = next(self._pieces, None)
            if piece is None:
                return b""
            self._held = memoryview(piece)
        out = bytes(self._held[:n] if n >= 0 else self._held)
        self._held = self._held[len(out):]
        return out


def _unreadable_error(first: Unreadable, part: SourcePart, column: str = "") -> LoadError:
    """The :class:`LoadError` of the first record of ``part`` that cannot be read."""
    reason = first.reason.partition("; reading goes on")[0]  # it does not here
    return LoadError(reason, source=part.name, line=first.line,
                     column="" if reason.startswith("column ") else column)


def _located(pa: Any, pcsv: Any, part: SourcePart, chunk_rows: int,
             types: Mapping[str, Any], csv_types: Mapping[str, str],
             error: LoadError) -> LoadError:
    """``error`` (Arrow could not read a block of ``part``) with the line of the first
    record that cannot be read, found by reading the file again line by line (stdin,
    which cannot be read again, keeps ``error``)."""
    if part.obj is not None:
        return error
    try:
        for chunk in _careful_csv_chunks(pa, pcsv, part, 0, chunk_rows, types, csv_types):
            if chunk.unreadable:
                return _unreadable_error(chunk.unreadable[0], part, error.column)
    except (OSError, pa.ArrowException, ValueError, TypeError):
        pass
    return error


def _conversion_error(exc: Any, part: SourcePart, header: list[str],
                      csv_types: Mapping[str, str]) -> LoadError:
    """Arrow's CSV error as a :class:`LoadError` naming the column Arrow gives by
    number (the error itself when it names none)."""
    found = re.search(r"CSV column #(\d+): (?:Row #\d+: )?(.*)", str(exc))
    if found is None:
        return LoadError(f"cannot read it: {exc}", source=part.name)
    index = int(found[1])
    column = header[index] if index < len(header) else f"#{index}"
    return LoadError(f"{found[2]} (CQL type {csv_types.get(column, '?')})",
                     source=part.name, column=column)


def _has_line_break(pa: Any, batch: Any) -> bool:
    """Whether a text value of ``batch`` holds a line break (then a row is not one
    line: a quoted value over several lines, or a quote never closed)."""
    import pyarrow.compute as pc

    for column in batch.columns:
        if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
            for brk in ("\n", "\r"):
                if pc.any(pc.match_substring(column, brk)).as_py():
                    return True
    return False


def _tolerant_chunk(pa: Any, batch: Any, lines: list[int], csv_types: Mapping[str, str],
                    time_zone: datetime.tzinfo = UTC) -> Chunk:
    """``batch`` converted (``_typed_csv_batch``), the rows whose values do not convert
    left out and set aside as unreadable."""
    failed: list[tuple[int, str]] = []
    data = _typed_csv_batch(pa, batch, csv_types, failed, time_zone)
    if not failed:
        return Chunk(data, lines)
    names = list(batch.schema.names)
    bad: dict[int, str] = {}
    for row, reason in failed:
        bad.setdefault(row, reason)
    unreadable = [Unreadable(lines[row], reason, "",
                             {n: batch.column(i)[row].as_py() for i, n in enumerate(names)})
                  for row, reason in sorted(bad.items())]
    keep = [i for i in range(len(lines)) if i not in bad]
    return Chunk(_rows_of(pa, data, keep), [lines[i] for i in keep], unreadable)


def _rows_of(pa: Any, data: Any, rows: list[int]) -> Any:
    """Rows ``rows`` of a record batch or of a mapping of columns (lists or arrays)."""
    if isinstance(data, Mapping):
        return take_chunk_rows(pa, data, rows)
    return take_rows(pa, data, rows)


def _careful_csv_chunks(pa: Any, pcsv: Any, part: SourcePart, skip: int, chunk_rows: int,
                        types: Mapping[str, Any], csv_types: Mapping[str, str],
                        time_zone: datetime.tzinfo = UTC, lines_before: int = 0
                        ) -> Iterator[Chunk]:
    """A CSV piece from the line after its header and ``skip`` rows, read line by line
    (:func:`~cqlcodec.driver.text_records.csv_records`); the good records converted by
    Arrow as the fast path does, a record whose values do not convert found by halving
    and set aside. ``lines_before``: lines of the source before the piece's first
    record but its header (stdin read again from a later piece)."""
    delimiter = _delimiter(part)
    with _byte_input(pa, part) as stream:
        header = stream.readline().decode("utf-8-sig", "replace")
        names = next(csv.reader([header], delimiter=delimiter), [])
        for _ in range(skip):
            stream.readline()
        all_types = {n: types.get(n, pa.string()) for n in names}
        options = _csv_options(pcsv, part, all_types)
        options["parse_options"] = pcsv.ParseOptions(newlines_in_values=True)
        for group in csv_records(iter(stream), skip + 2 + lines_before, names, delimiter,
                                 chunk_rows):
            yield _records_chunk(pa, pcsv, group, names, options, csv_types, time_zone)


def _records_chunk(pa: Any, pcsv: Any, group: RecordGroup, names: list[str],
                   options: dict[str, Any], csv_types: Mapping[str, str],
                   time_zone: datetime.tzinfo = UTC) -> Chunk:
    pieces: list[Any] = []
    kept: list[int] = []
    unreadable = list(group.unreadable)
    _read_records(pa, pcsv, group.records, 0, names, options, csv_types, pieces, kept,
                  unreadable, group.lines)
    if not pieces:
        return Chunk({}, [], unreadable)
    table = pa.concat_tables(pieces)
    batch = pa.RecordBatch.from_arrays([c.combine_chunks() for c in table.columns],
                                       names=names)
    chunk = _tolerant_chunk(pa, batch, [group.lines[i] for i in kept], csv_types, time_zone)
    chunk.unreadable = sorted(unreadable + chunk.unreadable, key=lambda u: u.line)
    return chunk


def _read_records(pa: Any, pcsv: Any, records: list[list[str | None]], first: int,
                  names: list[str], options: dict[str, Any], csv_types: Mapping[str, str],
                  pieces: list[Any], kept: list[int], unreadable: list[Unreadable],
                  lines: list[int]) -> None:
    """Records (field texts) read by Arrow with the fast path's options into
    ``pieces`` (their indices, from ``first``, into ``kept``); when Arrow refuses them,
    each half again, down to the single records it refuses (into ``unreadable``)."""
    if not records:
        return
    data = _csv_text(records).encode("utf-8")
    try:
        pieces.append(pcsv.read_csv(io.BytesIO(data), read_options=pcsv.ReadOptions(
            column_names=names, block_size=max(1 << 16, len(data) + 1), use_threads=False),
            **options))
        kept.extend(range(first, first + len(records)))
        return
    except pa.ArrowInvalid as exc:
        if len(records) == 1:
            error = _conversion_error(exc, SourcePart("", "csv"), names, csv_types)
            unreadable.append(Unreadable(lines[first], str(error), "",
                                         dict(zip(names, records[0]))))
            return
    half = len(records) // 2
    _read_records(pa, pcsv, records[:half], first, names, options, csv_types, pieces, kept,
                  unreadable, lines)
    _read_records(pa, pcsv, records[half:], first + half, names, options, csv_types, pieces,
                  kept, unreadable, lines)


def _csv_text(records: list[list[str | None]]) -> str:
    """Records as CSV for Arrow's reader: every text quoted, so that an empty one stays
    an empty text; a null (None) as nothing."""
    return "".join(",".join("" if f is None else '"' + f.replace('"', '""') + '"' for f in r)
                   + "\n" for r in records)


def _csv_header(pa: Any, part: SourcePart) -> list[str]:
    """The column names in a CSV file's header line ([] for stdin, read already)."""
    if part.obj is not None:
        return []
    with _byte_input(pa, part) as stream:
        header = stream.readline().decode("utf-8-sig", "replace")
    return next(csv.reader([header], delimiter=_delimiter(part)), [])


def _typed_csv_batch(pa: Any, batch: Any, csv_types: Mapping[str, str],
                     failed: list[tuple[int, str]] | None = None,
                     time_zone: datetime.tzinfo = UTC) -> Any:
    """The values Arrow does not parse itself converted (``parse_csv_value``;
    timestamps and dates by :func:`~cqlcodec.driver.time_text.arrow_times` or
    :func:`_time_parser`). A value that does not convert raises
    :class:`LoadError`, or, with ``failed``, is left as None and its row and reason
    appended there."""
    arrays = list(batch.columns)
    changed = False
    for i, name in enumerate(batch.schema.names):
        cql = csv_types.get(name)
        if cql is None or cql in _ARROW_OF_CQL:
            continue
        changed = True
        parse = _time_parser(cql, time_zone)
        if parse is not None:
            whole = arrow_times(pa, arrays[i], cql, time_zone)
            if whole is not None:
                arrays[i] = whole
                continue
        t = csv_types.full.get(name) if isinstance(csv_types, CsvTypes) else None
        values = arrays[i].to_pylist()
        converted: list[object] = []
        for row, text in enumerate(values):
            try:
                converted.append(None if text is None else parse(text) if parse is not None
                                 else parse_csv_value(text, cql, t))
            except (ValueError, SyntaxError, TypeError, ArithmeticError) as exc:
                error = LoadError(f"{_short(text)!r} is no {cql} value ({exc})", column=name,
                                  row=row)
                if failed is None:
                    raise error from None
                failed.append((row, f'column "{name}": {error.reason}'))
                converted.append(None)
        arrays[i] = converted
    if not changed:
        return batch
    return {name: arrays[i] for i, name in enumerate(batch.schema.names)}


def _time_parser(cql: str, time_zone: datetime.tzinfo) -> Callable[[str], object] | None:
    """The conversion of one CSV text of a timestamp or date column (None for other
    types): milliseconds since the epoch, or a :class:`cqlcodec.Date`."""
    if cql == "timestamp":
        return lambda text: timestamp_ms(text, time_zone)
    if cql == "date":
        from cqlcodec.values import Date

        return lambda text: Date(date_days(text))
    return None


# types whose CSV text is no JSON form (a varint's digits would read as a JSON number too)
_PLAIN_TEXT_TYPES: Final = frozenset(["uuid", "timeuuid", "varint", "decimal", "blob"])


def _short(text: str) -> str:
    """A cell's text for a message: at most 200 characters (a cell may be megabytes)."""
    return text if len(text) <= 200 else f"{text[:200]}... ({len(text)} characters)"


def parse_csv_value(text: str, cql: str, t: Any = None) -> object:
    """A CSV cell's text as the value to bind for CQL type ``cql`` (the types Arrow's
    CSV reader does not parse itself). ``t``, the :class:`~cqlcodec.CqlType`, when
    known: collections, tuples, UDTs and durations are first read as the JSON that
    ``unload`` writes (:mod:`cqlcodec.driver.json_values`), then as literals."""
    base = cql.strip()
    if base.startswith("frozen<") and base.endswith(">"):
        base = base[7:-1].strip()
    if t is not None and base not in _PLAIN_TEXT_TYPES:
        from cqlcodec.driver.json_values import from_json

        try:
            obj = json.loads(text)
        except ValueError:
            pass
        else:
            return from_json(obj, t)
    if base in ("uuid", "timeuuid"):
        return uuid.UUID(text.strip())
    if base == "varint":
        return int(text)
    if base == "decimal":
        return Decimal(text.strip())
    if base == "blob":
        t = text.strip()
        return bytes.fromhex(t[2:] if t[:2].lower() == "0x" else t)
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        value = json.loads(text)
    if base.startswith("tuple<") and isinstance(value, dict):  # Arrow's struct f0, f1, ...
        return tuple(value.values())
    return value
