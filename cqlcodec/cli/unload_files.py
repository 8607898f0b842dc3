"""The output directory of ``cqlcodec unload``: one file per split, each written under a
temporary name and renamed when complete, and a manifest of the finished splits.

The manifest (``_manifest.json``, rewritten atomically after each finished split) holds
the table, the columns, the condition, the format, the planned splits and, per finished
split, its file and row count. A restarted unload (``--resume``) reads the plan from
the manifest, so it writes exactly the splits that are not listed there; a split file
renamed but not yet listed is simply written again under the same name. Loaders skip
files whose names start with ``_`` or ``.`` (the manifest, temporary files).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator, Sequence
from typing import Any, Final

from cqlcodec.runtime.state_files import TEMP_MARK, SplitsState

MANIFEST: Final = "_manifest.json"
FORMATS: Final = {"parquet": "parquet", "csv": "csv", "arrow": "arrow", "jsonl": "jsonl"}
# --compress: the codec's name in pyarrow and the file name's suffix
COMPRESSIONS: Final = {"gzip": ".gz", "zstd": ".zst"}
TEXT_FORMATS: Final = ("csv", "jsonl")
ROW_GROUP_ROWS: Final = 65_536
# A Parquet row group is written when its rows' Arrow data reaches this size (or
# ROW_GROUP_ROWS): until then the split's batches and the writer's encoders (dictionaries)
# are held, several splits at once, so a bound in rows alone let memory grow with the
# table (65,536 rows per split) and with the width of its rows.
ROW_GROUP_BYTES: Final = 1 << 20


class ManifestError(Exception):
    """The output directory holds an unload that does not match this one."""


class Manifest(SplitsState):
    """The manifest of one output directory (see the module docstring)."""

    FILE_NAME = MANIFEST
    KIND = "unload"

    @staticmethod
    def load(directory: str) -> Manifest | None:
        """The manifest in ``directory``, None if there is none."""
        try:
            data = Manifest.read(directory)
            if data is None:
                return None
            return Manifest(directory, data["unload"], data["splits"], data["done"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ManifestError(f"cannot read {os.path.join(directory, MANIFEST)}: "
                                f"{exc}") from exc

    def check_matches(self, header: dict[str, Any]) -> None:
        """ManifestError unless this manifest is of the same unload (table, columns,
        condition, format)."""
        for key, value in header.items():
            if self.header.get(key) != value:
                raise ManifestError(
                    f"{self.path} is of another unload ({key} {self.header.get(key)!r}, "
                    f"now {value!r}): use another directory, or the same options")

    def finished(self, index: int, file: str | None, rows: int) -> None:
        """Records split ``index`` as written (``file`` None when it had no rows)."""
        self.finish(index, {"file": file, "rows": rows})

    def rows_done(self) -> int:
        """Rows of the finished splits."""
        return sum(int(d["rows"]) for d in self.done.values())


def remove_temporaries(directory: str) -> None:
    """Deletes the temporary files a killed unload left behind."""
    for name in os.listdir(directory):
        if TEMP_MARK in name and name.startswith((".", "_")):
            os.unlink(os.path.join(directory, name))


def split_file_name(index: int, fmt: str, compress: str | None = None) -> str:
    """The file name of split ``index`` (stable across runs)."""
    suffix = COMPRESSIONS[compress] if compress else ""
    return f"part-{index:05d}.{FORMATS[fmt]}{suffix}"


def open_output(pa: Any, path_or_file: Any, compress: str | None) -> Any:
    """A pyarrow output stream to a path or a binary file object, compressed with
    ``compress`` (``gzip`` or ``zstd``, pyarrow's own codecs) when given."""
    if isinstance(path_or_file, str):
        raw = pa.OSFile(path_or_file, "wb")
    else:
        raw = pa.PythonFile(_KeptOpen(path_or_file), mode="w")
    if compress is None:
        return raw
    return pa.CompressedOutputStream(raw, compress)


class _KeptOpen:
    """A binary file (stdout) that closing the stream written through leaves open."""

    def __init__(self, file: Any) -> None:
        self.file = file
        self.closed = False

    def write(self, data: bytes) -> int:
        """Writes ``data``."""
        return int(self.file.write(data))

    def flush(self) -> None:
        """Flushes the file."""
        self.file.flush()

    def close(self) -> None:
        """Flushes, and leaves the file open."""
        self.file.flush()
        self.closed = True

    def writable(self) -> bool:
        """True."""
        return True


def write_jsonl(pa: Any, batches: Iterator[Any], sink: Any, on_rows: Any = None) -> int:
    """Writes the rows of ``batches`` (ColumnBatches) to ``sink`` (a binary stream) as
    JSON lines (:mod:`cqlcodec.cli.jsonl_text`); returns the rows written."""
    from cqlcodec.cli.jsonl_text import jsonl_buffer

    rows = 0
    for batch in batches:
        n = len(batch)
        if not n:
            continue
        sink.write(jsonl_buffer(pa, batch))
        rows += n
        if on_rows is not None:
            on_rows(n)
    return rows


def write_csv_stream(pa: Any, batches: Iterator[Any], sink: Any, on_rows: Any = None) -> int:
    """Writes the rows of ``batches`` (ColumnBatches) to ``sink`` (a pyarrow output
    stream) as CSV with one header line; returns the rows written. Each batch is
    written as it is (:func:`csv_ready`): a column may be text in one batch and Arrow's
    own type in another (a date column with a year beyond 9999 on one page only)."""
    import pyarrow.csv as pcsv

    rows = 0
    for batch in batches:
        if not len(batch):
            continue
        ready = csv_ready(pa, pa.record_batch(batch), batch)
        pcsv.write_csv(ready, sink, pcsv.WriteOptions(include_header=not rows))
        rows += len(batch)
        if on_rows is not None:
            on_rows(len(batch))
    return rows


def write_split(batches: Iterator[Any], directory: str, name: str, fmt: str,
                on_rows: Any = None, *, compress: str | None = None,
                parquet_compression: str | None = None) -> int:
    """Writes the rows of ``batches`` (ColumnBatches of one split) to ``directory/name``
    through a temporary file renamed when complete; returns the rows written. A split
    without rows writes no file (returns 0). ``on_rows(n)`` is called per batch.
    ``compress`` (gzip, zstd) compresses a csv or jsonl file; ``parquet_compression``
    is the Parquet writer's codec (its default: snappy)."""
    import pyarrow as pa

    first = None
    for batch in batches:
        if len(batch):
            first = batch
            break
    if first is None:
        return 0
    if fmt in TEXT_FORMATS:
        return _write_text(pa, first, batches, directory, name, fmt, on_rows, compress)
    from cqlcodec.driver.columnar_files import ColumnarFile

    temp = os.path.join(directory, f".{name}{TEMP_MARK}{os.getpid()}-{threading.get_ident()}")
    options = {"compression": parquet_compression} if parquet_compression else {}
    out = ColumnarFile(temp, fmt, options=options, group_rows=ROW_GROUP_ROWS,
                       group_bytes=ROW_GROUP_BYTES, sync=True)
    try:
        for batch in _chain(first, batches):
            if len(batch):
                out.write(batch)
                if on_rows is not None:
                    on_rows(len(batch))
        os.replace(out.close(), os.path.join(directory, name))
    finally:
        out.abort()
    return out.rows


def _write_text(pa: Any, first: Any, rest: Iterator[Any], directory: str, name: str,
                fmt: str, on_rows: Any, compress: str | None) -> int:
    final = os.path.join(directory, name)
    temp = os.path.join(directory, f".{name}{TEMP_MARK}{os.getpid()}-{threading.get_ident()}")
    batches = _chain(first, rest)
    try:
        with open_output(pa, temp, compress) as sink:
            if fmt == "jsonl":
                rows = write_jsonl(pa, batches, sink, on_rows)
            else:
                rows = write_csv_stream(pa, batches, sink, on_rows)
        with open(temp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(temp, final)
    finally:
        if os.path.exists(temp):
            os.unlink(temp)
    return rows


def _chain(first: Any, rest: Iterator[Any]) -> Iterator[Any]:
    yield first
    yield from rest


def csv_ready(pa: Any, batch: Any, source: Any = None) -> Any:
    """``batch`` (a RecordBatch) with the columns CSV cannot hold as Arrow writes them
    turned into text that ``load`` reads back: uuids in their standard form, blobs as
    ``0x`` hex, varints as decimal digits, collections, tuples, UDTs and durations as
    the JSON of :mod:`cqlcodec.driver.json_values` (``NaN``, ``Infinity`` and
    ``-Infinity`` for those floats, as cqlsh and dsbulk write them); float columns
    holding such values as those names; dates and timestamps with a year outside
    1-9999 in the ISO forms of :mod:`cqlcodec.driver.iso_text`. ``source`` is the
    :class:`~cqlcodec.ColumnBatch` of ``batch`` (its CQL types and values); without
    it, other columns are written as Python literals."""
    arrays: list[Any] = []
    fields: list[Any] = []
    changed = False
    for i, (field, column) in enumerate(zip(batch.schema, batch.columns)):
        if _csv_writable(pa, field.type):
            text = _edge_texts(pa, column)
        elif source is not None:
            from cqlcodec.cli.jsonl_text import ordered_values

            t = source.types[i]
            text = _json_texts(ordered_values(column, t, source.column(i)), t)
        else:
            text = [None if v is None else _text_of(v, field.type, pa)
                    for v in column.to_pylist()]
        if text is None:
            arrays.append(column)
            fields.append(field)
            continue
        changed = True
        arrays.append(pa.array(text, pa.string()))
        fields.append(pa.field(field.name, pa.string()))
    if not changed:
        return batch
    return pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields))


_NON_FINITE_TEXT: Final = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}
# the first and last millisecond and day of years 1-9999, where Arrow's texts are ISO's
_MS_RANGE: Final = (-62_135_596_800_000, 253_402_300_799_999)
_DAY_RANGE: Final = (-719_162, 2_932_896)
_TO_MS: Final = {"s": (1000, 1), "ms": (1, 1), "us": (1, 1000), "ns": (1, 1_000_000)}


def _edge_texts(pa: Any, column: Any) -> list[str | None] | None:
    """The texts of a column Arrow writes itself where its texts would not read back:
    floats with NaN or infinities, dates and timestamps outside years 1-9999; None for
    any other column (Arrow writes it)."""
    import pyarrow.compute as pc

    t = column.type
    if not column.null_count < len(column):
        return None
    if pa.types.is_floating(t):
        if pc.all(pc.is_finite(column)).as_py() is not False:
            return None
        return [None if v is None else _NON_FINITE_TEXT.get(repr(v), repr(v))
                for v in column.to_pylist()]
    if pa.types.is_timestamp(t) and t.unit in _TO_MS and t.tz is not None:
        mul, div = _TO_MS[t.unit]
        times = column.cast(pa.int64())
        bounds = pc.min_max(times).as_py()
        if _MS_RANGE[0] <= bounds["min"] * mul // div and bounds["max"] * mul // div <= _MS_RANGE[1]:
            return None
        from cqlcodec.driver.iso_text import timestamp_text

        return [None if v is None else timestamp_text(v * mul // div, " ")
                for v in times.to_pylist()]
    if pa.types.is_date32(t):
        days = column.cast(pa.int32())
        bounds = pc.min_max(days).as_py()
        if _DAY_RANGE[0] <= bounds["min"] and bounds["max"] <= _DAY_RANGE[1]:
            return None
        from cqlcodec.driver.iso_text import date_text

        return [None if v is None else date_text(v) for v in days.to_pylist()]
    return None


def _json_texts(values: list[Any], t: Any) -> list[str | None]:
    """Cells of CQL type ``t``: a value whose JSON form (``json_values.to_json``) is a
    string or a number as that text, any other as its JSON."""
    from cqlcodec.driver.json_values import to_json

    encode = json.JSONEncoder(ensure_ascii=False, allow_nan=True,
                              separators=(",", ":")).encode
    out: list[str | None] = []
    for value in values:
        obj = to_json(value, t)
        if obj is None:
            out.append(None)
        elif isinstance(obj, str):
            out.append(obj)
        elif isinstance(obj, int) and not isinstance(obj, bool):
            out.append(str(obj))
        else:
            out.append(encode(obj))
    return out


def _csv_writable(pa: Any, t: Any) -> bool:
    types = pa.types
    if isinstance(t, pa.ExtensionType):
        return False
    return bool(types.is_integer(t) or types.is_floating(t) or types.is_boolean(t)
                or types.is_string(t) or types.is_large_string(t) or types.is_date(t)
                or types.is_time(t) or types.is_timestamp(t) or types.is_decimal(t))


def _text_of(value: Any, t: Any, pa: Any) -> str:
    import uuid

    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, (bytes, bytearray)):
        if pa.types.is_fixed_size_binary(getattr(t, "storage_type", t)) and len(value) == 16 \
                and isinstance(t, pa.ExtensionType):
            return str(uuid.UUID(bytes=bytes(value)))
        return "0x" + bytes(value).hex()
    return repr(_plain(value, getattr(t, "storage_type", t), pa))


def _plain(value: Any, t: Any, pa: Any) -> Any:
    """Nested Arrow values as plain Python literals (maps as dicts)."""
    if value is None:
        return None
    if pa.types.is_map(t) and isinstance(value, list):
        return {_hashable(_plain(k, t.key_type, pa)): _plain(v, t.item_type, pa)
                for k, v in value}
    if (pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t)) \
            and isinstance(value, list):
        return [_plain(v, t.value_type, pa) for v in value]
    if pa.types.is_struct(t) and isinstance(value, dict):
        return {f.name: _plain(value[f.name], f.type, pa) for f in t}
    if isinstance(value, (bytes, bytearray)):
        return "0x" + bytes(value).hex()
    if isinstance(value, (int, float, str, bool)):
        return value
    return str(value)


def _hashable(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted(value.items()))
    return value


def splits_as_dicts(splits: Sequence[Any]) -> list[dict[str, Any]]:
    """The planned splits as JSON-ready dicts (for the manifest)."""
    return [{"start": s.start, "end": s.end, "replicas": list(s.replicas),
             "estimated_rows": s.estimated_rows, "estimated_bytes": s.estimated_bytes}
            for s in splits]
