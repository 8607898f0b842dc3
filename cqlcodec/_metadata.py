"""Column metadata, prepared statements and the PREPARED result body.

* :class:`ColumnSpec` — one column: keyspace, table, name and CQL type.
* :class:`Prepared` — a prepared statement as the codec needs it: bind
  columns, result columns, partition-key indexes, protocol version, ids and an
  optional column-encryption policy. Build it directly or with
  :func:`decode_prepared`; bind values with :meth:`Prepared.bind`.
* :func:`read_rows_metadata` — the ``<metadata>`` of a RESULT Rows body (also
  the result metadata inside a PREPARED body).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Final, Mapping, NamedTuple, Sequence

from mypy_extensions import i64

from cqlcodec._bind import Bound, bind_values
from cqlcodec._codec import Codec
from cqlcodec._encryption import ColumnEncryptionPolicy, ColumnKey
from cqlcodec._option import read_option_at
from cqlcodec._types import CqlType
from cqlcodec._wire import (
    check_protocol_version,
    malformed,
    read_int,
    read_short,
    read_short_bytes,
    read_string,
)

if TYPE_CHECKING:
    from cqlcodec._rows import RowsDesc

# Rows metadata flags (native protocol §4.2.5.2; DSE continuous paging).
GLOBAL_TABLES_SPEC: Final = 0x0001
HAS_MORE_PAGES: Final = 0x0002
NO_METADATA: Final = 0x0004
METADATA_CHANGED: Final = 0x0008
CONTINUOUS_PAGING: Final = 0x40000000
LAST_CONTINUOUS_PAGE: Final = 0x80000000

RESULT_PREPARED: Final = 0x0004

_EMPTY_SPECS: Final[tuple[ColumnSpec, ...]] = ()


class ColumnSpec(NamedTuple):
    """One column of a statement or result: keyspace, table, name and CQL type.

    An immutable named tuple (like the drivers' ``ColumnMetadata``): equal,
    hashable and unpackable by value. ``key`` is the ``(keyspace, table, name)``
    tuple column-encryption policies use.
    """

    keyspace: str
    table: str
    name: str
    type: CqlType

    @property
    def key(self) -> ColumnKey:
        """``(keyspace, table, name)``: the column as a column-encryption policy sees it."""
        return (self.keyspace, self.table, self.name)


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
        # interpreted build only: per-column struct packers (see cqlcodec._interp_fast)
        self._bind_plan: list[tuple[type, Callable[[object], bytes]] | None] | None = None
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
        return bind_values(self, values)

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


class RowsMetadata:
    """The parsed ``<metadata>`` of a Rows result (or of a PREPARED result's rows).

    ``columns`` is None when the no-metadata flag was set (the columns then
    come from the prepared statement). ``continuous_page`` is -1 unless the
    DSE continuous-paging flag was set.
    """

    def __init__(self, flags: int, column_count: int, paging_state: bytes | None,
                 new_metadata_id: bytes | None, continuous_page: int,
                 columns: tuple[ColumnSpec, ...] | None, end: i64) -> None:
        self.flags: Final = flags
        self.column_count: Final = column_count
        self.paging_state: Final = paging_state
        self.new_metadata_id: Final = new_metadata_id
        self.continuous_page: Final = continuous_page
        self.columns: Final = columns
        self.end: Final = end


def read_rows_metadata(buf: bytes, pos: i64, end: i64, what: str) -> RowsMetadata:
    """Parse a rows ``<metadata>`` at ``pos``.

    Layout (native protocol v5 §4.2.5.2 and the DSE extension, in the order the
    reference Java codec uses): ``[int] flags`` ``[int] columns_count``
    ``[bytes] paging_state`` if 0x0002, ``[short bytes] new_metadata_id`` if
    0x0008, ``[int] continuous page number`` if 0x40000000, then unless
    0x0004 (no metadata): ``[string] ks [string] table`` if 0x0001 and one
    column spec per column. Metadata_changed together with no_metadata is
    refused (the v5 spec forbids it; drivers disagree on how to read it).
    Unknown flag bits are ignored, as drivers do.
    """
    raw = read_int(buf, pos, end, what + " flags")
    flags: int = raw & 0xFFFFFFFF
    count = read_int(buf, pos + 4, end, what + " columns_count")
    if count < 0:
        raise malformed(what, pos + 4, f"negative columns_count {count}")
    p = pos + 8
    paging_state: bytes | None = None
    if flags & HAS_MORE_PAGES:
        n = read_int(buf, p, end, what + " paging_state")
        p += 4
        if n >= 0:
            if n > end - p:
                raise malformed(what, p - 4, f"paging_state of {n} bytes but only "
                                             f"{end - p} remain")
            paging_state = buf[p: p + n]
            p += n
        elif n != -1:
            raise malformed(what, p - 4, f"invalid paging_state length {n}")
    new_id: bytes | None = None
    if flags & METADATA_CHANGED:
        if flags & NO_METADATA:
            raise malformed(what, pos, "flags set both metadata_changed (0x0008) and "
                                       "no_metadata (0x0004), which the protocol forbids")
        new_id, p = read_short_bytes(buf, p, end, what + " new_metadata_id")
    page: int = -1
    if flags & CONTINUOUS_PAGING:
        page = read_int(buf, p, end, what + " continuous page number")
        p += 4
    if flags & NO_METADATA:
        return RowsMetadata(flags, count, paging_state, new_id, page, None, p)
    columns, p = read_column_specs(buf, p, end, count, (flags & GLOBAL_TABLES_SPEC) != 0, what)
    return RowsMetadata(flags, count, paging_state, new_id, page, columns, p)


def read_column_specs(buf: bytes, pos: i64, end: i64, count: i64, global_spec: bool,
                      what: str) -> tuple[tuple[ColumnSpec, ...], i64]:
    """``count`` column specs (after the global ks/table if ``global_spec``)."""
    ks = ""
    table = ""
    p = pos
    if global_spec:
        ks, p = read_string(buf, p, end, what + " keyspace")
        table, p = read_string(buf, p, end, what + " table")
    # smallest spec: [string] name (2) + [option] (2), plus ks and table (4) if not global
    least: i64 = 4 if global_spec else 8
    if count > (end - p) // least:
        raise malformed(what, pos, f"{count} column specs cannot fit in the {end - p} "
                                   "bytes that remain")
    specs: list[ColumnSpec] = []
    for _i in range(count):
        if not global_spec:
            ks, p = read_string(buf, p, end, what + " column keyspace")
            table, p = read_string(buf, p, end, what + " column table")
        name, p = read_string(buf, p, end, what + " column name")
        t, p = read_option_at(buf, p, end, 0)
        specs.append(ColumnSpec(ks, table, name, t))
    return tuple(specs), p


def decode_prepared(body: bytes | bytearray | memoryview, protocol_version: int,
                    metadata_id: bool | None = None,
                    column_encryption_policy: ColumnEncryptionPolicy | None = None) -> Prepared:
    """Parse the body of a RESULT of kind Prepared, **after** the ``[int] kind``.

    (``decode_result`` takes the whole RESULT body, kind included, and returns
    the same object for kind 4.) Layout: ``[short bytes] id``, then
    ``[short bytes] result_metadata_id`` if ``metadata_id`` (default: protocol
    v5+; pass True for Scylla's metadata-id extension on v4), the bind
    metadata (``[int] flags [int] columns_count``, ``[int] pk_count`` and
    ``pk_count`` ``[short]`` indexes on v4+, the global table spec if flag
    0x0001, the column specs) and the result rows metadata. Trailing bytes are
    an error.
    """
    check_protocol_version(protocol_version)
    buf = body if isinstance(body, bytes) else bytes(body)
    p, end, prep = read_prepared_body(buf, 0, len(buf), protocol_version, metadata_id,
                                      column_encryption_policy)
    if p != end:
        raise malformed("PREPARED result", p, f"{end - p} trailing bytes after the metadata")
    return prep


def read_prepared_body(buf: bytes, pos: i64, end: i64, protocol_version: int,
                       metadata_id: bool | None,
                       policy: ColumnEncryptionPolicy | None) -> tuple[i64, i64, Prepared]:
    """Parse a prepared body at ``pos``; returns (next position, end, Prepared)."""
    what = "PREPARED result"
    query_id, p = read_short_bytes(buf, pos, end, what + " id")
    result_id: bytes | None = None
    with_id = protocol_version >= 5 if metadata_id is None else metadata_id
    if with_id:
        result_id, p = read_short_bytes(buf, p, end, what + " result_metadata_id")
    raw = read_int(buf, p, end, what + " flags")
    flags: int = raw & 0xFFFFFFFF
    count = read_int(buf, p + 4, end, what + " columns_count")
    if count < 0:
        raise malformed(what, p + 4, f"negative columns_count {count}")
    p += 8
    pks: list[int] = []
    if protocol_version >= 4:
        npk = read_int(buf, p, end, what + " pk_count")
        if npk < 0 or npk > (end - p - 4) // 2:
            raise malformed(what, p, f"pk_count {npk} does not fit in the body")
        p += 4
        for _i in range(npk):
            idx = read_short(buf, p, end, what + " pk index")
            if idx >= count:
                raise malformed(what, p, f"partition-key index {idx} is out of range for "
                                         f"{count} bind columns")
            pks.append(idx)
            p += 2
    binds, p = read_column_specs(buf, p, end, count, (flags & GLOBAL_TABLES_SPEC) != 0,
                                 what + " bind metadata")
    meta = read_rows_metadata(buf, p, end, what + " result metadata")
    results = meta.columns if meta.columns is not None else _EMPTY_SPECS
    try:
        prep = Prepared(binds, results, pks, protocol_version, query_id, result_id,
                        policy, flags)
    except ValueError as exc:  # e.g. a partition-key index given twice
        err = malformed(what, pos, str(exc))
        err.__cause__ = exc  # explicit: mypyc drops the cause of ``raise ... from exc``
        raise err
    return meta.end, end, prep
