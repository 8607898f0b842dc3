"""The inputs of :meth:`cqlcodec.Prepared.bind_columnar`: columns of many kinds as one shape.

A column may be a numpy array (2-D for a vector column; ``numpy.ma.MaskedArray``
for nulls), a pyarrow ``Array`` / ``ChunkedArray``, a polars or pandas ``Series``,
a :class:`cqlcodec.Column`, or any sequence of Python values. :func:`source_of`
wraps it as a :class:`Source` that gives, for a range of rows, either

* the big-endian content bytes of every row at once (:meth:`Source.fixed`), for
  numeric, boolean and temporal scalars and numeric vectors held in a typed array:
  one conversion of the whole range, no Python object per value; or
* the Python values (:meth:`Source.values`), ``None`` for nulls, which the caller
  encodes row by row exactly as :meth:`cqlcodec.Prepared.bind` would.

``fixed`` answers ``None`` whenever the bulk form might not be exactly what the row
codec would write (a value out of range, a dtype the codec refuses, a null inside
a vector), and the caller then uses ``values``, which raises the row codec's own
error. Table-like inputs (pandas, polars and pyarrow tables, a
:class:`cqlcodec.ColumnBatch`, any mapping) become a dict of columns with
:func:`as_columns`. Never compiled: it calls numpy, pyarrow, polars and pandas.
"""

from __future__ import annotations

import decimal
import importlib
import uuid
from collections.abc import Mapping, Sequence
from typing import Any, Final

from cqlcodec import kinds as K
from cqlcodec.codecs.numpy_vectors import F32_OVERFLOW, encode_vector
from cqlcodec.columnar.arrow_numbers import arrow_fixed_values, arrow_validity
from cqlcodec.types.model import CqlType
from cqlcodec.values import Date

try:
    np: Any = importlib.import_module("numpy")
except ImportError:  # numpy is optional: sequences still bind, row by row
    np = None

_INT_LIMITS: Final[dict[int, tuple[int, int, str]]] = {
    K.TINYINT: (-(1 << 7), (1 << 7) - 1, ">i1"),
    K.SMALLINT: (-(1 << 15), (1 << 15) - 1, ">i2"),
    K.INT: (-(1 << 31), (1 << 31) - 1, ">i4"),
    K.BIGINT: (-(1 << 63), (1 << 63) - 1, ">i8"),
    K.COUNTER: (-(1 << 63), (1 << 63) - 1, ">i8"),
}
_VECTOR_KINDS: Final = frozenset([K.FLOAT, K.DOUBLE, K.INT, K.BIGINT])
_TYPED_SCALARS: Final = frozenset([K.FLOAT, K.DOUBLE, K.BOOLEAN, K.TIMESTAMP, K.DATE, K.TIME])
_VECTOR_WIDTH: Final = {K.FLOAT: 4, K.DOUBLE: 8, K.INT: 4, K.BIGINT: 8}
_MS_PER: Final = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "D": 86_400_000,
                  "W": 7 * 86_400_000}
_NS_PER: Final = {"ns": 1, "us": 1000, "ms": 1_000_000, "s": 1_000_000_000,
                  "m": 60_000_000_000, "h": 3_600_000_000_000}
_NS_PER_DAY: Final = 86_400_000_000_000
_INT64_MAX: Final = (1 << 63) - 1

Fixed = tuple[bytes, int, list[int]]
"""Bulk-encoded rows: the content bytes of every row back to back, the width of one
row, and the (relative) indexes of the null rows."""


class Source:
    """One input column: a typed numpy array (1-D, or 2-D for vectors) with an optional
    null mask, or a list of Python values."""

    def __init__(self, name: str, array: Any = None, mask: Any = None,
                 values: list[Any] | None = None, arrow: Any = None) -> None:
        self.name = name
        self.array = array
        self.mask = mask
        self.pylist = values
        self.arrow = arrow
        self.num_rows: int = len(values) if values is not None else len(
            arrow if arrow is not None else array)

    def values(self, start: int, stop: int, t: CqlType) -> list[Any]:
        """The Python values of rows ``start:stop`` (``None`` where null), as a user
        would pass them to ``bind`` one row at a time. numpy datetimes become int
        milliseconds (a ``cqlcodec.Date`` for a date column) and timedeltas int
        nanoseconds, so that the codecs see them with their units; Arrow values are
        read as the CQL type ``t`` needs (see :func:`arrow_values`)."""
        if self.pylist is not None:
            return self.pylist[start:stop]
        if self.arrow is not None:
            return arrow_values(self.arrow.slice(start, stop - start), t)
        kind = t.unwrapped().kind
        part = self.array[start:stop]
        if part.ndim > 1:
            out: list[Any] = list(part)  # one 1-D array per row (a vector value)
        elif part.dtype.kind in "mM":
            out = _temporal_values(part, kind)
        else:
            out = part.tolist()
        if self.mask is None:
            return out
        mask = self.mask[start:stop]
        if mask.ndim == 1:
            for i in np.flatnonzero(mask).tolist():
                out[i] = None
            return out
        for i in np.flatnonzero(mask.any(axis=1)).tolist():
            if mask[i].all():
                out[i] = None
            else:  # a vector with null elements: the codec refuses it
                out[i] = [None if m else v for v, m in zip(part[i].tolist(), mask[i].tolist())]
        return out

    def fixed(self, kind: int, sub_kind: int, dim: int, cql_name: str,
              start: int, stop: int) -> Fixed | None:
        """The bulk encoding of rows ``start:stop`` for a column of ``kind`` (for a
        vector: elements of ``sub_kind``, ``dim`` of them), or None (encode row by row)."""
        arr = self.array
        if arr is None or np is None:
            return None
        part = arr[start:stop]
        mask = self.mask[start:stop] if self.mask is not None else None
        if kind == K.VECTOR:
            return _vector(part, mask, sub_kind, dim, cql_name)
        if part.ndim != 1:
            return None
        if part.dtype.kind in "mM":  # NaT is null, as in pandas and pyarrow
            nat = np.isnat(part)
            if nat.any():
                mask = nat if mask is None else (mask | nat)
        if mask is not None and mask.any():
            part = np.where(mask, np.zeros(1, part.dtype), part)
        data = _scalars(part, kind)
        if data is None:
            return None
        nulls = np.flatnonzero(mask).tolist() if mask is not None else []
        return data, data_width(kind), nulls


def _temporal_values(part: Any, kind: int) -> list[Any]:
    """datetime64 -> int ms (floored) or cqlcodec.Date; timedelta64 -> int ns; NaT -> None."""
    unit = _unit(part)
    if part.dtype.kind == "M" and unit in ("Y", "M"):
        part, unit = part.astype("M8[D]"), "D"
    nat = np.isnat(part).tolist()
    ints = part.view("i8").tolist()
    if part.dtype.kind == "m":
        scale = _NS_PER.get(unit, 0)
        return [None if n else (v * scale if scale else part[i]) for i, (v, n) in enumerate(zip(ints, nat))]
    if kind == K.DATE:
        per_day = {"D": 1, "W": 1, "h": 24, "m": 1440, "s": 86400, "ms": 86_400_000,
                   "us": 86_400_000_000, "ns": 86_400_000_000_000}.get(unit, 0)
        if unit == "W":
            ints = [v * 7 for v in ints]
        return [None if n else (Date(v // per_day) if per_day else part[i])
                for i, (v, n) in enumerate(zip(ints, nat))]
    div = {"us": 1000, "ns": 10**6, "ps": 10**9, "fs": 10**12, "as": 10**15}.get(unit, 0)
    mul = _MS_PER.get(unit, 0)
    return [None if n else (v * mul if mul else v // div if div else part[i])
            for i, (v, n) in enumerate(zip(ints, nat))]


def data_width(kind: int) -> int:
    """The content width of a bulk-encoded scalar kind."""
    if kind in _INT_LIMITS:
        return int(_INT_LIMITS[kind][2][-1])
    return {K.FLOAT: 4, K.DOUBLE: 8, K.BOOLEAN: 1, K.TIMESTAMP: 8, K.DATE: 4, K.TIME: 8}[kind]


def _scalars(part: Any, kind: int) -> bytes | None:
    code = part.dtype.kind
    if kind in _INT_LIMITS:
        if code not in "iu":
            return None
        lo, hi, be = _INT_LIMITS[kind]
        if part.size and (int(part.min()) < lo or int(part.max()) > hi):
            return None
        return bytes(part.astype(be).tobytes())
    if kind == K.FLOAT or kind == K.DOUBLE:
        if code in "iu":
            part = part.astype("f8")  # as float(int) does, then narrowed like the codec
        elif code != "f" or part.dtype.itemsize > 8:
            return None
        if kind == K.FLOAT and part.dtype.itemsize > 4 and part.size:
            finite = np.abs(part[np.isfinite(part)])
            if finite.size and float(finite.max()) >= F32_OVERFLOW:
                return None
        with np.errstate(over="ignore"):
            return bytes(part.astype(">f4" if kind == K.FLOAT else ">f8").tobytes())
    if kind == K.BOOLEAN:
        return bytes(part.astype("u1").tobytes()) if code == "b" else None
    if kind == K.TIMESTAMP:
        return _timestamps(part) if code == "M" else None
    if kind == K.DATE:
        return _dates(part) if code == "M" else None
    if kind == K.TIME:
        return _times(part) if code == "m" else None
    return None


def _unit(part: Any) -> str:
    unit, count = np.datetime_data(part.dtype)
    return str(unit) if count == 1 else ""


def _timestamps(part: Any) -> bytes | None:
    """datetime64 -> int64 milliseconds, floored like the codec floors microseconds."""
    unit = _unit(part)
    if unit in ("Y", "M"):
        part, unit = part.astype("M8[D]"), "D"
    ints = part.view("i8")
    if unit in _MS_PER:
        factor = _MS_PER[unit]
        if factor > 1 and ints.size and int(np.abs(ints).max()) > _INT64_MAX // factor:
            return None
        ms = ints * factor
    elif unit in ("us", "ns", "ps", "fs", "as"):
        ms = ints // {"us": 1000, "ns": 10**6, "ps": 10**9, "fs": 10**12, "as": 10**15}[unit]
    else:
        return None
    return bytes(ms.astype(">i8").tobytes())


def _dates(part: Any) -> bytes | None:
    """datetime64 -> days since 1970 (floored), as the unsigned offset form."""
    unit = _unit(part)
    if not unit:
        return None
    days = part.astype("M8[D]").view("i8")
    if days.size and (int(days.min()) < -(1 << 31) or int(days.max()) >= (1 << 31)):
        return None
    return bytes((days + (1 << 31)).astype(">u4").tobytes())


def _times(part: Any) -> bytes | None:
    """timedelta64 since midnight -> int64 nanoseconds in [0, one day)."""
    unit = _unit(part)
    if unit not in _NS_PER:
        return None
    ints = part.view("i8")
    if ints.size and (int(ints.min()) < 0 or int(ints.max()) >= _NS_PER_DAY // _NS_PER[unit]):
        return None
    return bytes((ints * _NS_PER[unit]).astype(">i8").tobytes())


def _vector(part: Any, mask: Any, sub_kind: int, dim: int, cql_name: str) -> Fixed | None:
    if sub_kind not in _VECTOR_KINDS or part.ndim != 2 or part.shape[1] != dim:
        return None
    nulls: list[int] = []
    if mask is not None:
        rows = mask if mask.ndim == 1 else mask.all(axis=1)
        if mask.ndim == 2 and bool((mask.any(axis=1) & ~rows).any()):
            return None  # a null element: the codec's error, row by row
        if rows.any():
            nulls = np.flatnonzero(rows).tolist()
            part = np.where(rows[:, None], np.zeros(1, part.dtype), part)
    try:
        data = encode_vector(part.reshape(-1), sub_kind, part.size, cql_name)
    except Exception:  # out of range or a refused dtype: the codec says which row
        return None
    if data is None:
        return None
    return data, dim * _VECTOR_WIDTH[sub_kind], nulls


# --------------------------------------------------------------------------- inputs

def _module(value: object) -> str:
    return type(value).__module__.split(".")[0]


def as_columns(columns: Any) -> dict[str, Any]:
    """A dict of column name -> column for a mapping or a table (pandas, polars or
    pyarrow table, :class:`cqlcodec.ColumnBatch`, any Arrow stream with pyarrow)."""
    if isinstance(columns, Mapping):
        return dict(columns)
    module = _module(columns)
    if module == "pandas" and hasattr(columns, "columns"):
        return {str(name): columns[name] for name in columns.columns}
    if module == "polars" and hasattr(columns, "get_column"):
        return {name: columns.get_column(name) for name in columns.columns}
    if module == "pyarrow" and hasattr(columns, "column_names"):
        return {name: columns.column(i) for i, name in enumerate(columns.column_names)}
    names = getattr(columns, "names", None)
    if module == "cqlcodec" and names is not None:
        return {name: columns[i] for i, name in enumerate(names)}
    if hasattr(columns, "__arrow_c_stream__"):
        import pyarrow

        table = pyarrow.table(columns)
        return {name: table.column(i) for i, name in enumerate(table.column_names)}
    raise TypeError("bind_columnar needs a mapping of column name to column, or a table "
                    f"(pandas, polars, pyarrow, cqlcodec.ColumnBatch), not {type(columns).__name__}")


def source_of(name: str, column: object) -> Source:
    """The :class:`Source` of one input column (TypeError for something that is no column)."""
    if isinstance(column, (str, bytes, bytearray, memoryview)) or not hasattr(column, "__len__"):
        raise TypeError(f'column "{name}": a column of values is needed (numpy array, '
                        f"pyarrow array, Series, sequence), not {type(column).__name__}")
    module = _module(column)
    if np is not None and isinstance(column, np.ndarray):
        if column.ndim == 0:
            raise TypeError(f'column "{name}": a 0-d array is not a column')
        if isinstance(column, np.ma.MaskedArray):
            mask = np.ma.getmaskarray(column)
            data = np.ma.getdata(column)
            if data.dtype.kind == "O":
                values = data.tolist()
                for i in np.flatnonzero(mask if mask.ndim == 1 else mask.all(axis=1)).tolist():
                    values[i] = None
                return Source(name, values=values)
            return Source(name, data, mask if mask.any() else None)
        return Source(name, column)
    if module == "pyarrow":
        return _arrow_source(name, column)
    if module == "polars":
        return _polars_source(name, column)
    if module == "pandas":
        return _pandas_source(name, column)
    if module == "cqlcodec" and hasattr(column, "to_pylist"):
        return _cqlcodec_source(name, column)
    if type(column).__name__ == "array" and type(column).__module__ == "array" and np is not None:
        return Source(name, np.asarray(column))
    if isinstance(column, Sequence) or hasattr(column, "__iter__"):
        return Source(name, values=list(column))
    raise TypeError(f'column "{name}": cannot read a column from {type(column).__name__}')


def _arrow_source(name: str, column: Any) -> Source:
    import pyarrow

    if isinstance(column, pyarrow.ChunkedArray):
        column = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    if not isinstance(column, pyarrow.Array):
        raise TypeError(f'column "{name}": cannot read a column from {type(column).__name__}')
    t = column.type
    typed = _arrow_numpy(pyarrow, column, t)
    if typed is None or np is None:
        return Source(name, arrow=column)
    mask = None
    if column.null_count:
        mask = ~arrow_validity(column)
    return Source(name, typed, mask)


def _arrow_numpy(pyarrow: Any, column: Any, t: Any) -> Any:
    """A typed numpy array of ``column`` (nulls hold zeros) or None."""
    types = pyarrow.types
    if np is None:
        return None
    if types.is_integer(t) or types.is_floating(t) or types.is_boolean(t):
        return arrow_fixed_values(column, False if types.is_boolean(t) else 0)
    if types.is_timestamp(t) or types.is_time64(t) or types.is_date64(t) or types.is_time32(t):
        width = pyarrow.int32() if types.is_time32(t) else pyarrow.int64()
        ints = arrow_fixed_values(column.view(width))
        if ints.size and width == pyarrow.int64() and int(ints.min()) == -(1 << 63):
            return None  # numpy's NaT, a value here (-2**63 ms): read through Arrow
        unit = "ms" if types.is_date64(t) else t.unit
        kind = "M8" if types.is_timestamp(t) or types.is_date64(t) else "m8"
        return ints.astype("i8").view(f"{kind}[{unit}]")
    if types.is_date32(t):
        days = arrow_fixed_values(column.view(pyarrow.int32()))
        return days.astype("i8").view("M8[D]")
    if types.is_fixed_size_list(t):
        item = t.value_type
        if not (types.is_integer(item) or types.is_floating(item)):
            return None
        dim = t.list_size
        values = column.values.slice(column.offset * dim, len(column) * dim)
        if values.null_count:
            return None  # a null element somewhere: rows are checked one by one
        return arrow_fixed_values(values).reshape(len(column), dim)
    return None


def _polars_source(name: str, column: Any) -> Source:
    try:
        return _arrow_source(name, column.to_arrow())
    except ImportError:  # no pyarrow: numpy for null-free numbers, else Python values
        pass
    if column.null_count() == 0 and column.dtype.is_numeric() and np is not None:
        return Source(name, column.to_numpy())
    return Source(name, values=column.to_list())


def _pandas_source(name: str, column: Any) -> Source:
    dtype = column.dtype
    if np is not None and isinstance(dtype, np.dtype):
        if dtype.kind != "O":
            return Source(name, column.to_numpy())  # NaN in a float column is a value, as in bind
        return Source(name, values=column.where(column.notna(), None).tolist())
    try:
        import pyarrow
    except ImportError:
        return Source(name, values=column.astype(object).where(column.notna(), None).tolist())
    return _arrow_source(name, pyarrow.array(column))


def _cqlcodec_source(name: str, column: Any) -> Source:
    t = column.cql_type.unwrapped()
    kind = t.kind
    numeric_vector = kind == K.VECTOR and t.subtypes[0].unwrapped().kind in _VECTOR_KINDS
    if np is not None and (kind in _INT_LIMITS or kind in _TYPED_SCALARS or numeric_vector):
        arr = column.to_numpy()
        if arr.dtype.kind != "O":
            if isinstance(arr, np.ma.MaskedArray):
                return Source(name, np.ma.getdata(arr), np.ma.getmaskarray(arr))
            return Source(name, arr)
    return Source(name, values=column.to_pylist())


# --------------------------------------------------------------------------- Arrow values

_DIV_MS: Final = {"s": -1000, "ms": 1, "us": 1000, "ns": 1_000_000}
_TO_NS: Final = {"s": 1_000_000_000, "ms": 1_000_000, "us": 1000, "ns": 1}


def _storage_type(pyarrow: Any, at: Any) -> Any:
    """``at`` with its temporal types (at any depth) replaced by their integer storage,
    whose values Python represents whatever their range."""
    types = pyarrow.types
    if types.is_date32(at) or types.is_time32(at):
        return pyarrow.int32()
    if types.is_timestamp(at) or types.is_date64(at) or types.is_time64(at):
        return pyarrow.int64()
    if types.is_fixed_size_list(at):
        return pyarrow.list_(_storage_field(pyarrow, at.value_field), at.list_size)
    if types.is_large_list(at):
        return pyarrow.large_list(_storage_field(pyarrow, at.value_field))
    if types.is_list(at):
        return pyarrow.list_(_storage_field(pyarrow, at.value_field))
    if types.is_map(at):
        return pyarrow.map_(_storage_field(pyarrow, at.key_field),
                            _storage_field(pyarrow, at.item_field))
    if types.is_struct(at):
        return pyarrow.struct([_storage_field(pyarrow, at.field(i)) for i in range(at.num_fields)])
    return at


def _storage_field(pyarrow: Any, f: Any) -> Any:
    return pyarrow.field(f.name, _storage_type(pyarrow, f.type), f.nullable)


def arrow_values(array: Any, t: CqlType) -> list[Any]:
    """The Python values of a pyarrow array for a column of CQL type ``t``: read through
    the integer storage of temporal types (so dates and timestamps outside Python's
    years 1-9999 stay exact), then each value shaped as cqlcodec's codecs take it."""
    import pyarrow

    at = array.type
    storage = _storage_type(pyarrow, at)
    if not storage.equals(at):
        array = array.cast(storage)
    values: list[Any] = array.to_pylist()
    if t.unwrapped().kind not in _SHAPED_KINDS and not _children(at):
        return values  # flat values the codecs take as they are (text, blob, bool, ...)
    return [_from_arrow(v, t, at) for v in values]


# the kinds whose Arrow values _from_arrow reshapes; any other flat column passes as is
_SHAPED_KINDS: Final = frozenset([K.DATE, K.TIMESTAMP, K.TIME, K.VARINT, K.DECIMAL, K.UUID,
                                  K.TIMEUUID, K.TUPLE, K.UDT, K.LIST, K.SET, K.VECTOR, K.MAP])


def _children(at: Any) -> list[Any]:
    import pyarrow

    types = pyarrow.types
    if types.is_struct(at):
        return [at.field(i).type for i in range(at.num_fields)]
    if types.is_map(at):
        return [at.key_type, at.item_type]
    if types.is_list(at) or types.is_large_list(at) or types.is_fixed_size_list(at):
        return [at.value_type]
    return []


def _from_arrow(v: Any, t: CqlType, at: Any) -> Any:
    if v is None:
        return None
    t = t.unwrapped()
    kind = t.kind
    if isinstance(v, int) and not isinstance(v, bool):
        unit = "ms" if str(at).startswith("date64") else str(getattr(at, "unit", ""))
        if kind == K.DATE:
            return Date(v if unit != "ms" else v // 86_400_000)
        if kind == K.TIMESTAMP:
            if unit == "":  # date32 storage: days
                return v * 86_400_000
            div = _DIV_MS.get(unit, 1)
            return v * -div if div < 0 else v // div
        if kind == K.TIME and unit in _TO_NS:
            return v * _TO_NS[unit]
        return v
    kids = _children(at)
    if kind == K.TUPLE and isinstance(v, dict):
        return [_from_arrow(x, sub, a) for x, sub, a in zip(v.values(), t.subtypes, kids)]
    if kind == K.UDT and isinstance(v, dict):
        return {name: _from_arrow(v.get(name), sub, a)
                for (name, sub), a in zip(t.fields, kids)}
    if kind in (K.LIST, K.SET, K.VECTOR) and isinstance(v, list) and kids:
        return [_from_arrow(e, t.subtypes[0], kids[0]) for e in v]
    if kind == K.MAP and isinstance(v, list) and kids:
        if len(kids) == 1 and v and isinstance(v[0], dict):  # list<struct<key, value>>
            kids = _children(kids[0])
            v = [(e["key"], e["value"]) for e in v]
        return [(_from_arrow(k, t.subtypes[0], kids[0]), _from_arrow(x, t.subtypes[1], kids[1]))
                for k, x in v]
    if kind == K.VARINT:
        if isinstance(v, bytes):
            return int.from_bytes(v, "big", signed=True)
        if isinstance(v, decimal.Decimal) and v == v.to_integral_value():
            return int(v)
    if kind == K.DECIMAL and isinstance(v, str):
        try:
            return decimal.Decimal(v)
        except decimal.InvalidOperation:
            return v  # the codec refuses it
    if (kind == K.UUID or kind == K.TIMEUUID) and isinstance(v, bytes) and len(v) == 16:
        return uuid.UUID(bytes=v)
    return v
