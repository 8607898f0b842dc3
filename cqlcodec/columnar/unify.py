"""Pages of one result into one pyarrow table, whatever Arrow type each page gave a column.

A varint or decimal column's Arrow type depends on the values of its page (int64,
decimal128(38, 0), decimal256(76, 0) or two's-complement binary for varints, the page's
scale for decimals), so the pages of one result may disagree. :func:`arrow_table_of`
gives such a column the type that holds every page exactly: the widest decimal of
int64 and decimal varints (decimal128(38, 0), or decimal256(76, 0) when a page needed
it), binary when a varint needed it, decimals at their one scale, else their exact text
(a scale is never widened: 1.5 and 1.50 are different decimals, and one page of mixed
scales is text too, so a column's type does not depend on where pages end); anything else
is refused with :class:`StreamSchemaError`.
:func:`pandas_frame_of` makes the pandas DataFrame of such a table.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from cqlcodec.columnar.stream import StreamSchemaError
from cqlcodec.values import Duration


def arrow_table_of(batches: Iterable[Any]) -> Any:
    """One ``pyarrow.Table`` of ``batches`` (objects exporting ``__arrow_c_array__``,
    such as :class:`~cqlcodec.ColumnBatch`), one record batch per page."""
    import pyarrow

    records: list[Any] = []
    for batch in batches:
        # A local, not a list comprehension: when ``batches`` raises, the traceback
        # keeps the records alive until the exception is handled, instead of their
        # release running while it is being raised (safe with pyarrow's structs, not
        # with a ctypes release; see cqlcodec.columnar.ctypes_guard).
        records.append(pyarrow.record_batch(batch))
    filled = [r for r in records if r.num_rows]  # an empty page may type a column differently
    return pyarrow.Table.from_batches(unified(filled) if filled else records[:1])


def unified(records: list[Any]) -> list[Any]:
    """pyarrow record batches of one result cast to one schema (see :func:`arrow_table_of`)."""
    import pyarrow

    if len({r.schema for r in records}) <= 1:
        return records
    names = records[0].schema.names
    columns: list[list[Any]] = []
    for i, name in enumerate(names):
        arrays = [r.column(i) for r in records]
        types = {a.type for a in arrays}
        if len(types) > 1:
            target = _common_type(name, types)
            try:
                arrays = [_cast_exactly(name, a, target) for a in arrays]
            except _WiderThanDecimal:  # a varint of more than 38 digits: exact text
                arrays = [_cast_exactly(name, a, pyarrow.string()) for a in arrays]
        columns.append(arrays)
    return [pyarrow.RecordBatch.from_arrays([c[j] for c in columns], names=names)
            for j in range(len(records))]


class _WiderThanDecimal(Exception):
    pass


def _common_type(name: str, types: set[Any]) -> Any:
    import pyarrow

    decimals = {t for t in types if pyarrow.types.is_decimal(t)}
    others = types - decimals
    if others <= {pyarrow.int64()} and decimals and all(t.scale == 0 for t in decimals):
        if any(pyarrow.types.is_decimal256(t) for t in decimals):
            return pyarrow.decimal256(76, 0)
        return pyarrow.decimal128(38, 0)
    if others <= {pyarrow.int64(), pyarrow.binary()} and pyarrow.binary() in others \
            and all(t.scale == 0 for t in decimals):
        return pyarrow.binary()
    if not others and decimals and len({t.scale for t in decimals}) == 1:
        return pyarrow.decimal128(38, decimals.pop().scale)
    if others <= {pyarrow.string()}:  # decimals of several scales: their exact text
        return pyarrow.string()
    raise StreamSchemaError(f"column {name!r} has Arrow types {sorted(map(str, types))} on different "
                    f"pages and no exact common type: iterate the batches instead")


def _cast_exactly(name: str, array: Any, target: Any) -> Any:
    import pyarrow

    if array.type == target:
        return array
    if pyarrow.types.is_binary(target):  # varint: two's-complement bytes, as on the wire
        values = [None if v is None else _twos_complement(int(v)) for v in array.to_pylist()]
        return pyarrow.array(values, pyarrow.binary())
    try:
        return array.cast(target, safe=True)
    except (pyarrow.ArrowInvalid, pyarrow.ArrowNotImplementedError) as exc:
        if pyarrow.types.is_decimal(target):
            raise _WiderThanDecimal from exc
        raise StreamSchemaError(f"column {name!r}: a page of type {array.type} does not cast exactly "
                        f"to {target}: {exc}") from exc


def _twos_complement(value: int) -> bytes:
    return value.to_bytes(max(1, (value.bit_length() + 8) // 8), "big", signed=True)


def pandas_frame_of(table: Any) -> Any:
    """The pandas DataFrame of a ``pyarrow.Table`` of query results: every column a
    ``pandas.ArrowDtype`` (its exact Arrow type), except ``duration`` columns (Arrow
    month_day_nano intervals, which ``ArrowDtype`` columns cannot print), which hold
    :class:`cqlcodec.Duration` objects (``None`` for null), the values the row path
    gives. Durations inside collections, tuples and UDTs stay ``ArrowDtype`` (pandas
    shows them as ``DateOffset`` objects)."""
    import pandas
    import pyarrow

    frame = table.to_pandas(types_mapper=pandas.ArrowDtype)
    for i, f in enumerate(table.schema):
        if pyarrow.types.is_interval(f.type):
            frame.isetitem(i, pandas.Series(_durations(table.column(i)), index=frame.index,
                                            dtype=object))
    return frame


def _durations(column: Any) -> list[Any]:
    return [None if v is None else Duration(v.months, v.days, v.nanoseconds)
            for v in column.to_pylist()]
