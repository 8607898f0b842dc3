"""CQL ``duration`` values in Parquet files.

Arrow holds a duration as a ``month_day_nano_interval`` (months, days, nanoseconds: a
duration's three parts, exactly); Parquet has no such type (its ``INTERVAL`` has
milliseconds, and unsigned parts), and pyarrow refuses to write one. So ``unload``
writes each interval, at any depth (a ``duration`` column, a ``list<duration>``, a UDT
field), as ``struct<months: int32, days: int32, nanoseconds: int64>``, the field marked
with the metadata ``cqlcodec.cql_type: duration``; reading a Parquet file back
(``load``), the marked structs become intervals again. Readers other than cqlcodec
(DuckDB, polars, pandas, Spark) see the struct: three plain numbers per value.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

__all__ = ["DURATION_MARK", "intervals_as_structs", "structs_as_intervals"]

DURATION_MARK: Final = {b"cqlcodec.cql_type": b"duration"}
_PARTS: Final = ("months", "days", "nanoseconds")


def _struct_type(pa: Any) -> Any:
    return pa.struct([pa.field("months", pa.int32()), pa.field("days", pa.int32()),
                      pa.field("nanoseconds", pa.int64())])


def _is_marked(field: Any) -> bool:
    meta = field.metadata or {}
    return bool(meta.get(b"cqlcodec.cql_type") == b"duration")


def intervals_as_structs(pa: Any, batch: Any) -> Any:
    """``batch`` (a RecordBatch) with every interval, at any depth, as a marked struct;
    the batch itself when it holds none."""
    return _convert_batch(pa, batch, _to_structs)


def structs_as_intervals(pa: Any, batch: Any) -> Any:
    """``batch`` with every struct marked as a duration turned back into intervals;
    the batch itself when it holds none."""
    return _convert_batch(pa, batch, _to_intervals)


Leaf = Callable[[Any, Any, Any], "tuple[Any, Any] | None"]


def _convert_batch(pa: Any, batch: Any, leaf: Leaf) -> Any:
    arrays: list[Any] = []
    fields: list[Any] = []
    changed = False
    for field, column in zip(batch.schema, batch.columns):
        new_field, new_column = _convert(pa, field, column, leaf)
        changed = changed or new_column is not column
        arrays.append(new_column)
        fields.append(new_field)
    if not changed:
        return batch
    return pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields, batch.schema.metadata))


def _to_structs(pa: Any, field: Any, array: Any) -> tuple[Any, Any] | None:
    if not pa.types.is_interval(field.type):
        return None
    values = array.to_pylist()
    parts = [pa.array([None if v is None else getattr(v, part) for v in values], t)
             for part, t in zip(_PARTS, (pa.int32(), pa.int32(), pa.int64()))]
    out = pa.StructArray.from_arrays(parts, fields=list(_struct_type(pa)),
                                     mask=array.is_null())
    meta = dict(field.metadata or {})
    meta.update(DURATION_MARK)
    return pa.field(field.name, out.type, field.nullable, meta), out


def _to_intervals(pa: Any, field: Any, array: Any) -> tuple[Any, Any] | None:
    if not (pa.types.is_struct(field.type) and _is_marked(field)):
        return None
    values = [None if v is None else tuple(int(v.get(p) or 0) for p in _PARTS)
              for v in array.to_pylist()]
    out = pa.array(values, pa.month_day_nano_interval())
    meta = {k: v for k, v in (field.metadata or {}).items() if k not in DURATION_MARK}
    return pa.field(field.name, out.type, field.nullable, meta or None), out


def _has(pa: Any, field: Any, leaf: Leaf) -> bool:
    t = field.type
    if pa.types.is_interval(t) or pa.types.is_struct(t) and _is_marked(field):
        return True
    return any(_has(pa, t.field(i), leaf) for i in range(t.num_fields)) \
        if hasattr(t, "num_fields") and not isinstance(t, pa.ExtensionType) else False


def _convert(pa: Any, field: Any, array: Any, leaf: Leaf) -> tuple[Any, Any]:
    """``field`` and ``array`` with ``leaf`` applied to each field it changes, at any
    depth (structs, lists, fixed-size lists, maps)."""
    if not _has(pa, field, leaf):
        return field, array
    done = leaf(pa, field, array)
    if done is not None:
        return done
    t = field.type
    if not t.num_fields or isinstance(t, pa.ExtensionType):  # a leaf the other way round
        return field, array
    types = pa.types
    mask = array.is_null() if array.null_count else None
    if types.is_struct(t):
        pairs = [_convert(pa, t.field(i), array.field(i), leaf) for i in range(t.num_fields)]
        out = pa.StructArray.from_arrays([a for _f, a in pairs], fields=[f for f, _a in pairs],
                                         mask=mask)
    elif types.is_map(t):
        key_field, key = _convert(pa, t.key_field, array.keys, leaf)
        item_field, item = _convert(pa, t.item_field, array.items, leaf)
        out = pa.MapArray.from_arrays(array.offsets, key, item,
                                      type=pa.map_(key_field, item_field), mask=mask)
    elif types.is_fixed_size_list(t):
        start = array.offset * t.list_size
        values = array.values.slice(start, len(array) * t.list_size)
        value_field, inner = _convert(pa, t.value_field, values, leaf)
        out = pa.FixedSizeListArray.from_arrays(
            inner, type=pa.list_(value_field, t.list_size), mask=mask)
    elif types.is_large_list(t):
        value_field, inner = _convert(pa, t.value_field, array.values, leaf)
        out = pa.LargeListArray.from_arrays(array.offsets, inner,
                                            type=pa.large_list(value_field), mask=mask)
    else:
        value_field, inner = _convert(pa, t.value_field, array.values, leaf)
        out = pa.ListArray.from_arrays(array.offsets, inner, type=pa.list_(value_field),
                                       mask=mask)
    return pa.field(field.name, out.type, field.nullable, field.metadata), out
