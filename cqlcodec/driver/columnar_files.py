"""Parquet and Arrow IPC files of pages whose Arrow types differ.

A :class:`~cqlcodec.ColumnBatch` gives a ``varint`` or ``decimal`` value, at any depth,
the Arrow type its page's values need: a varint is int64, decimal128(38, 0),
decimal256(76, 0) or two's-complement binary; a decimal is decimal128(38, s) or its
exact text. A file has one schema, so :class:`ColumnarFile` keeps, for each column, the
narrowest type that holds every page written so far exactly:

- varint: int64, then decimal128(38, 0), then binary (the big-endian two's complement,
  as on the wire). A page of decimal256 makes it binary: files never hold decimal256,
  which polars refuses and DuckDB reads as a rounded ``DOUBLE``.
- decimal: decimal128(38, s) while every page has the scale s, else the exact text (a
  decimal's scale is part of its value: ``1.50`` is not ``1.5``, so scales are never
  widened).
- text and binary: large when a page is.

When a page needs a wider type than the file has, what was written is rewritten in the
wider schema (one row group or record batch at a time, under a second temporary name)
and writing goes on there: one file with one schema, whatever the pages. A column widens
at most three times per file (int64, decimal128, binary), mostly on the first pages.
"""

from __future__ import annotations

import os
from typing import Any, Final

from cqlcodec.columnar.stream import StreamSchemaError

__all__ = ["ColumnarFile", "common_schema", "conform"]

# the steps of a varint's type in a file (binary after decimal128, large after binary)
_VARINT_STEPS: Final = ("int64", "decimal128(38, 0)", "binary", "large_binary")
_SEP: Final = "\x00"  # between the column's name and the child indexes in a leaf's path


def common_schema(pa: Any, old: Any | None, page: Any, valued: set[str] | None = None) -> Any:
    """The schema of a file of schema ``old`` (None: no file yet) that also holds the
    page ``page`` (a RecordBatch) exactly (see the module docstring); StreamSchemaError,
    naming the column, when there is none. ``valued`` holds the paths of the leaves that
    held a value in the file (updated): a leaf that held none (a varint or decimal of
    empty collections or null cells only, typed int64 or scale 0) takes the page's type.
    Where the page holds no value, the file's type stays."""
    valued = set() if valued is None else valued
    names = page.schema.names
    if old is not None and old.names != names:
        raise StreamSchemaError(f"a page has the columns {names}, the file {old.names}")
    fields = [_join_field(pa, None if old is None else old.field(i), page.schema.field(i),
                          page.column(i), names[i], valued) for i in range(len(names))]
    return pa.schema(fields, page.schema.metadata if old is None else old.metadata)


def _join_field(pa: Any, a: Any | None, b: Any, values: Any, path: str,
                valued: set[str]) -> Any:
    base = b if a is None else a
    t = _join(pa, None if a is None else a.type, b.type, values, path, valued)
    return pa.field(base.name, t, base.nullable or b.nullable, base.metadata)


def _join(pa: Any, a: Any | None, b: Any, values: Any, path: str, valued: set[str]) -> Any:
    """The type of the file's ``a`` (None: no file yet) and the page's ``b``, whose
    values at this depth are ``values``."""
    types = pa.types
    empty = values.null_count == len(values)
    if a is not None and empty:
        return a
    kids = _kids(pa, b)
    if kids:
        a_kids = _kids(pa, a) if a is not None else [None] * len(kids)
        if len(a_kids) != len(kids) or not _same_shape(pa, a, b):
            raise _no_common(a, b, path)
        parts = [_join_field(pa, fa, fb, v, f"{path}{_SEP}{i}", valued)
                 for i, (fa, (fb, v)) in enumerate(zip(a_kids, _kids_values(pa, b, values)))]
        return _shaped(pa, a if a is not None else b, b, parts)
    b = pa.binary() if types.is_decimal256(b) else b  # files hold no decimal256
    if empty:
        return b
    fresh = path not in valued
    valued.add(path)
    if a is None or (fresh and _common_leaf(pa, a, b) is not None):
        return b  # the file held no value here: the page's type
    leaf = _common_leaf(pa, a, b)
    if leaf is None:
        raise _no_common(a, b, path)
    return leaf


def _no_common(a: Any, b: Any, path: str) -> StreamSchemaError:
    return StreamSchemaError(f"column {path.split(_SEP)[0]!r} has the Arrow types {a} and {b} "
                             "on different pages and no exact common type")


def _kids(pa: Any, t: Any) -> list[Any]:
    """The child fields of a nested type (none for a leaf)."""
    types = pa.types
    if types.is_struct(t):
        return [t.field(i) for i in range(t.num_fields)]
    if types.is_map(t):
        return [t.key_field, t.item_field]
    if types.is_list(t) or types.is_large_list(t) or types.is_fixed_size_list(t):
        return [t.value_field]
    return []


def _kids_values(pa: Any, t: Any, array: Any) -> list[tuple[Any, Any]]:
    if pa.types.is_struct(t):
        return [(t.field(i), array.field(i)) for i in range(t.num_fields)]
    if pa.types.is_map(t):
        return [(t.key_field, array.keys), (t.item_field, array.items)]
    return [(t.value_field, array.values)]


def _same_shape(pa: Any, a: Any | None, b: Any) -> bool:
    if a is None:
        return True
    types = pa.types
    if types.is_struct(a) or types.is_struct(b):
        return bool(types.is_struct(a) and types.is_struct(b)
                    and [f.name for f in _kids(pa, a)] == [f.name for f in _kids(pa, b)])
    if types.is_fixed_size_list(a) or types.is_fixed_size_list(b):
        return bool(types.is_fixed_size_list(a) and types.is_fixed_size_list(b)
                    and a.list_size == b.list_size)
    return bool(types.is_map(a) == types.is_map(b))


def _shaped(pa: Any, a: Any, b: Any, parts: list[Any]) -> Any:
    """The nested type of ``a``'s shape (large when ``a`` or ``b`` is) of fields ``parts``."""
    types = pa.types
    if types.is_struct(a):
        return pa.struct(parts)
    if types.is_map(a):
        return pa.map_(parts[0], parts[1])
    if types.is_fixed_size_list(a):
        return pa.list_(parts[0], a.list_size)
    if types.is_large_list(a) or types.is_large_list(b):
        return pa.large_list(parts[0])
    return pa.list_(parts[0])


def _leaves(pa: Any, schema: Any) -> int:
    def count(t: Any) -> int:
        kids = _kids(pa, t)
        return sum(count(f.type) for f in kids) if kids else 1
    return sum(count(f.type) for f in schema)


def _common_leaf(pa: Any, a: Any, b: Any) -> Any | None:
    if a.equals(b):
        return a
    names = (str(a), str(b))
    if all(n in _VARINT_STEPS for n in names):  # a varint's
        return max((a, b), key=lambda t: _VARINT_STEPS.index(str(t)))
    texts = (pa.types.is_decimal128, pa.types.is_string, pa.types.is_large_string)
    if all(any(f(t) for f in texts) for t in (a, b)):  # a decimal's, or text
        large = pa.types.is_large_string(a) or pa.types.is_large_string(b)
        return pa.large_string() if large else pa.string()
    return None


def conform(pa: Any, batch: Any, schema: Any) -> Any:
    """``batch`` (a RecordBatch) in ``schema``, a :func:`common_schema` of its own:
    every value exactly the same (varints to two's complement, decimals to their text)."""
    if batch.schema.equals(schema, check_metadata=True):
        return batch
    arrays = [_cast(pa, column, f.type, f.name) for column, f in zip(batch.columns, schema)]
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def _cast(pa: Any, array: Any, target: Any, column: str) -> Any:
    """``array`` as an array of type ``target`` with the same values, at any depth."""
    t = array.type
    types = pa.types
    if t.equals(target):
        return array
    if array.null_count == len(array):
        return pa.nulls(len(array), target)
    mask = array.is_null() if array.null_count else None
    if types.is_struct(target):
        children = [_cast(pa, array.field(i), target.field(i).type, column)
                    for i in range(target.num_fields)]
        return pa.StructArray.from_arrays(children, fields=list(target), mask=mask)
    if types.is_fixed_size_list(target):
        size = target.list_size
        values = array.values.slice(array.offset * size, len(array) * size)
        return pa.FixedSizeListArray.from_arrays(
            _cast(pa, values, target.value_type, column), type=target, mask=mask)
    if types.is_map(target):
        offsets, keys, items = _unsliced(pa, array, array.keys, array.items)
        return pa.MapArray.from_arrays(offsets, _cast(pa, keys, target.key_type, column),
                                       _cast(pa, items, target.item_type, column),
                                       type=target, mask=mask)
    if types.is_list(target) or types.is_large_list(target):
        offsets, values = _unsliced(pa, array, array.values)
        make = pa.LargeListArray if types.is_large_list(target) else pa.ListArray
        if types.is_large_list(target):
            offsets = offsets.cast(pa.int64())
        return make.from_arrays(offsets, _cast(pa, values, target.value_type, column),
                                type=target, mask=mask)
    if (types.is_binary(target) or types.is_large_binary(target)) \
            and (types.is_integer(t) or types.is_decimal(t)):  # a varint's two's complement
        return pa.array([None if v is None else _twos_complement(int(v))
                         for v in array.to_pylist()], target)
    try:
        return array.cast(target, safe=True)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise StreamSchemaError(f"column {column!r}: a page of Arrow type {t} does not cast "
                                f"exactly to {target}: {exc}") from exc


def _unsliced(pa: Any, array: Any, *children: Any) -> tuple[Any, ...]:
    """The offsets of a list or map ``array`` from 0 and its ``children`` cut to its
    own elements (Arrow takes no validity bitmap with the offsets of a slice)."""
    offsets = array.offsets
    if not array.offset:
        return (offsets, *children)
    import pyarrow.compute as pc

    start, end = offsets[0].as_py(), offsets[len(offsets) - 1].as_py()
    rebased = pc.subtract(offsets, pa.scalar(start, offsets.type))
    return (rebased, *[c.slice(start, end - start) for c in children])


def _twos_complement(value: int) -> bytes:
    return value.to_bytes(max(1, (value.bit_length() + 8) // 8), "big", signed=True)


class ColumnarFile:
    """One Parquet (``fmt`` ``"parquet"``) or Arrow IPC (``"arrow"``) file written page
    by page under a temporary name, in a schema that widens as the module docstring
    says. Parquet row groups are written at ``group_rows`` rows or ``group_bytes``
    bytes of Arrow data; ``options`` go to ``pyarrow.parquet.ParquetWriter``.
    :meth:`close` returns the finished file's (temporary) path for the caller to
    rename; :meth:`abort` removes what is unfinished. Durations are written to Parquet
    as :mod:`cqlcodec.driver.parquet_durations` says."""

    def __init__(self, path: str, fmt: str, *, options: dict[str, Any] | None = None,
                 group_rows: int = 1, group_bytes: int = 0, sync: bool = False) -> None:
        import pyarrow

        self.pa: Any = pyarrow
        self.path = path
        self.rows = 0
        self.rewrites = 0
        self._paths = (path, f"{path}.wider")
        self._fmt = fmt
        self._options = options or {}
        self._group = (group_rows, group_bytes)
        self._sync = sync
        self._schema: Any = None
        self._valued: set[str] = set()
        self._settled = False
        self._writer: Any = None
        self._sink: Any = None
        self._pending: list[Any] = []
        self._held = (0, 0)

    @property
    def schema(self) -> Any:
        """The file's schema so far (None before the first batch)."""
        return self._schema

    def write(self, batch: Any) -> None:
        """Adds ``batch`` (a pyarrow RecordBatch, or any object exporting
        ``__arrow_c_array__``) to the file; a batch without rows only fixes the schema
        of a file without rows."""
        pa = self.pa
        if not isinstance(batch, pa.RecordBatch):
            batch = pa.record_batch(batch)
        if self._fmt == "parquet":
            from cqlcodec.driver.parquet_durations import intervals_as_structs

            batch = intervals_as_structs(pa, batch)
        if not batch.num_rows:
            if self._writer is None:
                self._open(common_schema(pa, None, batch))
            return
        if not self.rows and self._writer is not None:  # typed by a page without rows
            self._discard()
        if self._settled and batch.schema.equals(self._schema, check_metadata=True):
            schema = self._schema  # its types, every leaf of which has held a value
        else:
            schema = common_schema(pa, self._schema, batch, self._valued)
            self._settled = len(self._valued) == _leaves(pa, schema)
        if self._writer is None:
            self._open(schema)
        elif not schema.equals(self._schema, check_metadata=True):
            self._rewrite(schema)
        batch = conform(pa, batch, self._schema)
        self.rows += batch.num_rows
        if self._fmt != "parquet":
            self._writer.write_batch(batch)
            return
        self._pending.append(batch)
        rows, size = self._held[0] + batch.num_rows, self._held[1] + batch.nbytes
        self._held = (rows, size)
        if rows >= self._group[0] or size >= self._group[1]:
            self._flush()

    def close(self) -> str:
        """Writes what is held, closes the file (fsynced when ``sync``) and returns its
        path."""
        if self._writer is None:
            self._open(self.pa.schema([]))
        self._flush()
        self._close_writer()
        if self._sync:
            with open(self.path, "rb+") as f:
                os.fsync(f.fileno())
        return self.path

    def abort(self) -> None:
        """Closes and removes the unfinished file (nothing after :meth:`close`)."""
        if self._writer is not None:
            self._discard()

    def _open(self, schema: Any) -> None:
        self._schema = schema
        if self._fmt == "parquet":
            import pyarrow.parquet as pq

            self._writer = pq.ParquetWriter(self.path, schema, **self._options)
        else:
            self._sink = self.pa.OSFile(self.path, "wb")
            self._writer = self.pa.ipc.new_file(self._sink, schema)

    def _flush(self) -> None:
        if self._pending:
            self._writer.write_table(self.pa.Table.from_batches(self._pending, self._schema))
        self._pending, self._held = [], (0, 0)

    def _close_writer(self) -> None:
        self._writer.close()
        self._writer = None
        if self._sink is not None:
            self._sink.close()
            self._sink = None

    def _discard(self) -> None:
        self._close_writer()
        self._schema, self._valued = None, set()
        self._pending, self._held = [], (0, 0)
        if os.path.exists(self.path):
            os.unlink(self.path)

    def _rewrite(self, schema: Any) -> None:
        """Rewrites what was written in ``schema`` into the other temporary name."""
        pa = self.pa
        self._flush()
        self._close_writer()
        old = self.path
        self.path = self._paths[1] if old == self._paths[0] else self._paths[0]
        self._open(schema)
        self.rewrites += 1
        if self._fmt == "parquet":
            import pyarrow.parquet as pq

            with pq.ParquetFile(old) as source:
                for i in range(source.num_row_groups):
                    batches = [conform(pa, b, schema)
                               for b in source.read_row_group(i).to_batches()]
                    self._writer.write_table(pa.Table.from_batches(batches, schema))
        else:
            with pa.OSFile(old, "rb") as f:
                source = pa.ipc.open_file(f)
                for i in range(source.num_record_batches):
                    self._writer.write_batch(conform(pa, source.get_batch(i), schema))
        os.unlink(old)
