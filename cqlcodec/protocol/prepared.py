"""A prepared statement (:class:`Prepared`) and one execution's encoded values (:class:`Bound`).

A Prepared owns what it caches: its serializers (and, interpreted, its bind
plan), built on the first bind, and the parse description of its result rows,
built on the first no-metadata page. Binding itself is :mod:`cqlcodec.protocol.bind`;
row decoding is :mod:`cqlcodec.protocol.rows`.
"""

from __future__ import annotations

from typing import Callable, Final, Mapping, Sequence

from cqlcodec.codecs.base import Codec
from cqlcodec.codecs.cache import make_serializers
from cqlcodec.codecs.encryption import ColumnEncryptionPolicy
from cqlcodec.errors import BindValueError
from cqlcodec.protocol.bind import (
    BindPlan,
    BoundValue,
    encode_bind_values,
    encrypting_serializers,
    plan_bind_fast_path,
)
from cqlcodec.protocol.columns import ColumnSpec
from cqlcodec.protocol.rows import RowsDesc, build_rows_desc
from cqlcodec.runtime.buffers import BytesWriter, write_i32_be
from cqlcodec.runtime.wire import check_protocol_version
from cqlcodec.types.model import CqlType

RESULT_PREPARED: Final = 0x0004
_MAX_VALUES: Final = 0xFFFF
_MAX_LEN: Final = 0x7FFFFFFF


class Prepared:
    """A prepared statement: what binding values and decoding its rows need.

    ``Prepared(bind_columns, result_columns=(), pk_indexes=(), protocol_version=4,
    query_id=b"", result_metadata_id=None, column_encryption_policy=None,
    metadata_flags=0)``

    * ``bind_columns``: the :class:`ColumnSpec` of each bind marker, in order.
    * ``result_columns``: the columns of the rows the statement returns
      (empty for statements that return none); used for RESULT Rows bodies sent
      with the no-metadata flag.
    * ``pk_indexes``: indexes into ``bind_columns`` of the partition-key
      components, in partition-key order (the routing key is built from them).
    * ``protocol_version``: 3, 4 or 5.
    * ``query_id``, ``result_metadata_id``: as the server sent them (the latter
      only with protocol v5 or Scylla's metadata-id extension).
    * ``column_encryption_policy``: a :class:`ColumnEncryptionPolicy` or None.
    * ``metadata_flags``: the raw flags of the PREPARED bind metadata (Scylla
      marks LWT statements with a negotiated bit there).

    A Prepared is immutable. It caches its serializers (built on first bind)
    and the parse description of its result rows (see ``decode_result``).
    """

    def __init__(self, bind_columns: Sequence[ColumnSpec],
                 result_columns: Sequence[ColumnSpec] = (),
                 pk_indexes: Sequence[int] = (),
                 protocol_version: int = 4,
                 query_id: bytes = b"",
                 result_metadata_id: bytes | None = None,
                 column_encryption_policy: ColumnEncryptionPolicy | None = None,
                 metadata_flags: int = 0) -> None:
        check_protocol_version(protocol_version)
        binds = tuple(bind_columns)
        results = tuple(result_columns)
        for spec in binds + results:
            if not isinstance(spec, ColumnSpec) or not isinstance(spec.type, CqlType):
                raise TypeError("Prepared columns must be ColumnSpec objects with a CqlType "
                                f"type, got {spec!r}")
        pks = tuple([int(i) for i in pk_indexes])
        is_pk = [False] * len(binds)
        for i in pks:
            if i < 0 or i >= len(binds):
                raise ValueError(f"partition-key index {i} is out of range for "
                                 f"{len(binds)} bind columns")
            if is_pk[i]:
                raise ValueError(f"partition-key index {i} is given twice")
            is_pk[i] = True
        if not isinstance(query_id, bytes):
            raise TypeError(f"query_id must be bytes, got {type(query_id).__name__}")
        if result_metadata_id is not None and not isinstance(result_metadata_id, bytes):
            raise TypeError(f"result_metadata_id must be bytes or None, "
                            f"got {type(result_metadata_id).__name__}")
        self.bind_columns: Final = binds
        self.result_columns: Final = results
        self.pk_indexes: Final = pks
        self.protocol_version: Final = protocol_version
        self.query_id: Final = query_id
        self.result_metadata_id: Final = result_metadata_id
        self.column_encryption_policy: Final = column_encryption_policy
        self.metadata_flags: Final = metadata_flags
        self.is_pk: Final = is_pk
        self._serializers: tuple[Codec, ...] | None = None
        # interpreted build only: per-column struct packers (see cqlcodec.protocol.interp_fast)
        self._bind_plan: BindPlan | None = None
        self._rows_desc: RowsDesc | None = None

    @property
    def bind_names(self) -> tuple[str, ...]:
        """The names of the bind columns, in order."""
        return tuple([c.name for c in self.bind_columns])

    @property
    def result_names(self) -> tuple[str, ...]:
        """The names of the result columns, in order."""
        return tuple([c.name for c in self.result_columns])

    def bind(self, values: Sequence[object] | Mapping[str, object] | None = None) -> Bound:
        """Encode ``values`` for this statement's bind markers.

        ``values`` is a sequence (by position) or a mapping (by column name),
        or None for no values. Missing trailing values and missing names are
        left UNSET on protocol v4+ and are an error on v3; UNSET is refused for
        partition-key columns; too many values is an error. Every failure is a
        :class:`~cqlcodec.BindError` (``BindTypeError`` or ``BindValueError``)
        naming the column, its CQL type and the value's Python type.
        """
        policy = self.column_encryption_policy
        plan: BindPlan | None = None
        if policy is None:
            sers = self._serializers
            if sers is None:
                sers = make_serializers([c.type for c in self.bind_columns])
                self._bind_plan = plan_bind_fast_path(sers)  # before sers: readers check sers
                self._serializers = sers
            plan = self._bind_plan
        else:  # the policy is asked on every bind, so a policy that gains columns is obeyed
            sers = encrypting_serializers(self.bind_columns, policy)
        out = encode_bind_values(self.bind_columns, self.is_pk, self.protocol_version, sers,
                                 plan, values)
        return Bound(self, out)

    def bind_columnar(self, columns: object) -> list[Bound]:
        """Bind every row of ``columns``: a mapping of column name to a column of values
        (numpy array, 2-D array for a vector column, ``numpy.ma.MaskedArray``, pyarrow
        Array/ChunkedArray, polars or pandas Series, :class:`~cqlcodec.Column`, any
        sequence) or a table (pandas/polars/pyarrow table, :class:`~cqlcodec.ColumnBatch`).

        One :class:`Bound` per row, with the semantics of :meth:`bind` given that row's
        values by name: columns not given are UNSET (an error on v3 and for partition-key
        columns), nulls come from ``None``, masks and validity bitmaps. Numeric, boolean
        and temporal columns and numeric vectors in typed arrays are encoded in bulk. A
        failure raises the :class:`~cqlcodec.BindError` of ``bind`` for the first bad row,
        naming the column and the row (``err.row``).
        """
        if not _columnar_binders:
            raise RuntimeError("no columnar binder is registered: import cqlcodec first")
        return _columnar_binders[0](self, columns)

    def rows_desc(self, protocol_version: int, policy: ColumnEncryptionPolicy | None,
                  flags: int) -> RowsDesc:
        """The parse description of this statement's result rows (cached; rebuilt if the
        protocol version, encryption policy or decode flags differ from the cached one)."""
        cached = self._rows_desc
        if cached is not None and cached.matches(protocol_version, policy, flags):
            return cached
        desc = build_rows_desc(self.result_columns, protocol_version, policy, flags)
        self._rows_desc = desc
        return desc

    def with_result_metadata(self, result_columns: Sequence[ColumnSpec],
                             result_metadata_id: bytes | None) -> Prepared:
        """A copy with new result columns and id (after a v5 ``metadata_changed`` result)."""
        return Prepared(self.bind_columns, result_columns, self.pk_indexes,
                        self.protocol_version, self.query_id, result_metadata_id,
                        self.column_encryption_policy, self.metadata_flags)

    @property
    def kind(self) -> int:
        """The RESULT kind this object stands for (4, Prepared)."""
        return RESULT_PREPARED

    def __repr__(self) -> str:
        binds = ", ".join([f"{c.name} {c.type.cql_name}" for c in self.bind_columns])
        results = ", ".join([f"{c.name} {c.type.cql_name}" for c in self.result_columns])
        return (f"Prepared(bind=[{binds}], result=[{results}], pk_indexes={list(self.pk_indexes)}, "
                f"protocol_version={self.protocol_version}, query_id={self.query_id.hex()!r})")


_columnar_binders: Final[list[Callable[[Prepared, object], list[Bound]]]] = []


def register_columnar_binder(binder: Callable[[Prepared, object], list[Bound]]) -> None:
    """Install the function behind :meth:`Prepared.bind_columnar` (the columnar layer,
    which imports this one, registers it when ``cqlcodec`` is imported)."""
    _columnar_binders[:] = [binder]


class Bound:
    """The encoded values of one execution of a prepared statement.

    ``values`` holds one entry per bind column: the content bytes, ``None``
    for null or :data:`cqlcodec.UNSET`. ``routing_key`` is the partition key
    as drivers compute it for token-aware routing, and :meth:`values_block`
    the ``[short] n`` + ``[value]``\\ s block of an EXECUTE body.
    """

    def __init__(self, prepared: Prepared, values: list[BoundValue]) -> None:
        self.prepared: Final = prepared
        self.values: Final = values
        self._routing_key: bytes | None = None

    @property
    def routing_key(self) -> bytes | None:
        """The routing key, or None if the statement has no partition-key indexes.

        One component: its encoded value as is. Several: for each component
        ``[unsigned short] length``, the bytes and a ``0x00`` byte. A null
        component raises BindValueError (no token can be computed).
        """
        key = self._routing_key
        if key is not None:
            return key
        pks = self.prepared.pk_indexes
        if len(pks) == 0:
            return None
        if len(pks) == 1:
            key = self._component(pks[0])
        else:
            w = BytesWriter()
            for i in pks:
                part = self._component(i)
                size = len(part)
                if size > 0xFFFF:
                    col = self.prepared.bind_columns[i]
                    raise BindValueError(
                        f'partition-key column "{col.name}" ({col.type.cql_name}) value of '
                        f"{size} bytes is too long for a composite routing key (max 65535)",
                        col.name, col.type.cql_name, "bytes")
                w.append((size >> 8) & 0xFF)
                w.append(size & 0xFF)
                w.write(part)
                w.append(0)
            key = w.getvalue()
        self._routing_key = key
        return key

    def _component(self, index: int) -> bytes:
        value = self.values[index]
        if isinstance(value, bytes):
            return value
        col = self.prepared.bind_columns[index]
        raise BindValueError(
            f'partition-key column "{col.name}" ({col.type.cql_name}) is null: '
            "no routing key can be computed", col.name, col.type.cql_name, "NoneType")

    def values_block(self) -> bytes:
        """``[short] n`` then each value as ``[value]`` (-1 null, -2 unset): an EXECUTE body part."""
        values = self.values
        n = len(values)
        if n > _MAX_VALUES:
            raise BindValueError(f"{n} values cannot be sent in one request (max 65535)")
        w = BytesWriter()
        w.append((n >> 8) & 0xFF)
        w.append(n & 0xFF)
        for v in values:
            if isinstance(v, bytes):
                size = len(v)
                if size > _MAX_LEN:
                    raise BindValueError(f"a value of {size} bytes is too long for a [value]")
                write_i32_be(w, size)
                w.write(v)
            elif v is None:
                write_i32_be(w, -1)
            else:
                write_i32_be(w, -2)
        return w.getvalue()

    def __repr__(self) -> str:
        return f"Bound({self.values!r})"
