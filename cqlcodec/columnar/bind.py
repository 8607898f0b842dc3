"""Binding many rows at once from columns: :meth:`cqlcodec.Prepared.bind_columnar`.

Each column is encoded on its own, for all rows (or a range of rows) at once:
numeric, boolean and temporal scalars and numeric vectors held in typed arrays
through one bulk conversion (:mod:`cqlcodec.columnar.bind_input`, numpy) that is
then cut into one ``bytes`` per row; every other column through the statement's
serializer, value by value, exactly as :meth:`~cqlcodec.Prepared.bind` encodes.
Then the rows are assembled into :class:`~cqlcodec.Bound` objects.

Errors are those of ``bind`` for the first failing row (and, within that row, the
first failing column), with the row's index in the message and in ``err.row``.
"""

from __future__ import annotations

from typing import Any, Final

from cqlcodec import kinds as K
from cqlcodec.codecs.base import Codec
from cqlcodec.codecs.cache import make_serializers
from cqlcodec.errors import BindError, BindTypeError, BindValueError
from cqlcodec.protocol.bind import BoundValue, _encode_error, _unset_error, encrypting_serializers
from cqlcodec.protocol.columns import ColumnSpec
from cqlcodec.protocol.prepared import Bound, Prepared, register_columnar_binder
from cqlcodec.values import UNSET

_UNSET: Final = UNSET
_BULK_SCALARS: Final = frozenset([K.TINYINT, K.SMALLINT, K.INT, K.BIGINT, K.COUNTER, K.FLOAT,
                                  K.DOUBLE, K.BOOLEAN, K.TIMESTAMP, K.DATE, K.TIME])
_BULK_VECTOR_ITEMS: Final = frozenset([K.FLOAT, K.DOUBLE, K.INT, K.BIGINT])


def _with_row(err: BindError, row: int) -> BindError:
    """``err`` as the same error class, its message led by the row index."""
    out: BindError
    if isinstance(err, BindTypeError):
        out = BindTypeError(f"row {row}: {err}", err.column, err.cql_type, err.value_type)
    else:
        out = BindValueError(f"row {row}: {err}", err.column, err.cql_type, err.value_type)
    out.__cause__ = err.__cause__
    out.row = row
    return out


def split_fixed(data: bytes, width: int, count: int, nulls: list[int],
                null: BoundValue = None) -> list[BoundValue]:
    """``count`` values of ``width`` bytes cut from ``data``; ``null`` (``None`` or
    ``UNSET``) at ``nulls``."""
    out: list[BoundValue] = []
    pos = 0
    for _ in range(count):
        out.append(data[pos: pos + width])
        pos += width
    for i in nulls:
        out[i] = null
    return out


def encode_column(col: ColumnSpec, is_pk: bool, protocol_version: int, ser: Codec,
                  values: list[Any], first_row: int, limit: int, null: BoundValue = None
                  ) -> tuple[list[BoundValue], BindError | None]:
    """The encoded ``values`` of one column (rows ``first_row``...), as ``bind`` encodes
    them, a null as ``null`` (``None`` or ``UNSET``); stops at the first failure (or at
    ``limit`` values) and returns its error."""
    out: list[BoundValue] = []
    v3 = protocol_version < 4
    n = len(values)
    for i in range(n):
        if i >= limit:
            break
        v = values[i]
        if v is None:
            out.append(null)
        elif v is _UNSET:
            if v3 or is_pk:
                return out, _with_row(_unset_error(col, protocol_version), first_row + i)
            out.append(_UNSET)
        else:
            try:
                out.append(ser.encode(v))
            except Exception as exc:
                return out, _with_row(_encode_error(col, v, exc), first_row + i)
    return out, None


class ColumnarBinder:
    """The rows of a mapping of columns, bound range by range (``bind_rows``).

    Checks the columns once (same length, no missing partition-key column, no
    missing column on protocol v3) and reads each into a source; ``bind_rows(start,
    stop)`` encodes that range. :func:`bind_columnar` binds every row at once;
    ``cqlcodec.driver.insert_columns`` binds chunk by chunk. With ``nulls_unset`` a
    null of a column outside the partition key is bound as ``UNSET`` (nothing written,
    no tombstone), not as null (protocol v4 and later).
    """

    def __init__(self, prepared: Prepared, columns: object, nulls_unset: bool = False) -> None:
        from cqlcodec.columnar.bind_input import as_columns, source_of

        mapping = as_columns(columns)
        cols = prepared.bind_columns
        pv = prepared.protocol_version
        self.prepared: Final = prepared
        sources: list[Any] = []
        rows = -1
        first = ""
        missing: BindError | None = None
        for i in range(len(cols)):
            col = cols[i]
            if col.name not in mapping:
                if missing is None and pv < 4:
                    missing = BindValueError(
                        f'no column "{col.name}" ({col.type.cql_name}) was given; protocol v3 '
                        "has no UNSET, every bind column needs a value", col.name,
                        col.type.cql_name, "")
                elif missing is None and prepared.is_pk[i]:
                    missing = _unset_error(col, pv)
                sources.append(None)
                continue
            given = mapping[col.name]
            try:
                src = source_of(col.name, given)
            except TypeError as exc:
                raise BindTypeError(str(exc), col.name, col.type.cql_name,
                                    type(given).__name__) from exc
            if rows < 0:
                rows = src.num_rows
                first = col.name
            elif src.num_rows != rows:
                raise BindValueError(
                    f'column "{col.name}" has {src.num_rows} rows but column "{first}" has '
                    f"{rows}: every column must have one value per row", col.name,
                    col.type.cql_name, type(given).__name__)
            sources.append(src)
        if missing is not None and rows > 0:  # no rows: nothing is missing
            raise missing
        self.sources: Final = sources
        self.num_rows: Final = max(rows, 0)
        policy = prepared.column_encryption_policy
        bulk: list[bool] = []
        if policy is None:
            self.serializers: tuple[Codec, ...] = make_serializers([c.type for c in cols])
            for c in cols:
                bulk.append(_bulk_kind(c))
        else:
            self.serializers = encrypting_serializers(cols, policy)
            bulk = [False] * len(cols)
        self.bulk: Final = bulk
        if nulls_unset and pv < 4:
            raise ValueError("protocol v3 has no UNSET: nulls cannot be bound as unset")
        self.nulls: Final[list[BoundValue]] = [
            _UNSET if nulls_unset and not prepared.is_pk[i] else None for i in range(len(cols))]

    def bind_rows(self, start: int, stop: int) -> list[Bound]:
        """The :class:`Bound` values of rows ``start:stop``."""
        prepared = self.prepared
        cols = prepared.bind_columns
        pv = prepared.protocol_version
        count = stop - start
        if count <= 0:
            return []
        columns: list[list[BoundValue]] = []
        error: BindError | None = None
        limit = count
        for j in range(len(cols)):
            src = self.sources[j]
            if src is None:
                columns.append([_UNSET] * count)
                continue
            col = cols[j]
            if self.bulk[j]:
                t = col.type.unwrapped()
                kind = t.kind
                sub = t.subtypes[0].unwrapped().kind if kind == K.VECTOR else 0
                fixed = src.fixed(kind, sub, t.dimension, t.cql_name, start, stop)
                if fixed is not None:
                    columns.append(split_fixed(fixed[0], fixed[1], count, fixed[2],
                                               self.nulls[j]))
                    continue
            values, err = encode_column(col, prepared.is_pk[j], pv, self.serializers[j],
                                        src.values(start, stop, col.type),
                                        start, limit, self.nulls[j])
            if err is not None:
                error = err
                limit = len(values)  # later columns need only be checked before this row
            columns.append(values)
        if error is not None:
            raise error
        out: list[Bound] = []
        ncols = len(columns)
        for i in range(count):
            row: list[BoundValue] = []
            for j in range(ncols):
                row.append(columns[j][i])
            out.append(Bound(prepared, row))
        return out


def _bulk_kind(col: ColumnSpec) -> bool:
    t = col.type.unwrapped()
    if t.kind in _BULK_SCALARS:
        return True
    return t.kind == K.VECTOR and t.subtypes[0].unwrapped().kind in _BULK_VECTOR_ITEMS


def bind_columnar(prepared: Prepared, columns: object) -> list[Bound]:
    """Every row of ``columns`` bound to ``prepared`` (see :meth:`cqlcodec.Prepared.bind_columnar`)."""
    binder = ColumnarBinder(prepared, columns)
    return binder.bind_rows(0, binder.num_rows)


register_columnar_binder(bind_columnar)
