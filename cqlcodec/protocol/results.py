"""Decoding RESULT message bodies: void, rows, set_keyspace, prepared, schema_change.

:func:`decode_result` takes the whole RESULT body (``[int] kind`` first) and
returns one result object per kind; a Prepared body gives a
:class:`~cqlcodec.Prepared`. The whole body is validated: a body that is
truncated, has impossible counts or lengths, or has trailing bytes raises
DecodeError and nothing is returned.

Rows bodies sent with the no-metadata flag (0x0004) take their columns from
the ``prepared`` statement; the parse description built for them (column
specs and deserializers) is cached on that Prepared and reused while the
protocol version, the encryption policy (by identity) and the decode options
stay the same. Rows bodies with inline metadata build an uncached description.
"""

from __future__ import annotations

from typing import Any, Final, Iterator, Union

from mypy_extensions import i64

from cqlcodec.codecs.cache import decode_flags
from cqlcodec.codecs.encryption import ColumnEncryptionPolicy
from cqlcodec.errors import DecodeError
from cqlcodec.protocol.columns import ColumnSpec
from cqlcodec.protocol.metadata import (
    CONTINUOUS_PAGING,
    HAS_MORE_PAGES,
    LAST_CONTINUOUS_PAGE,
    NO_METADATA,
    read_prepared_body,
    read_rows_metadata,
)
from cqlcodec.protocol.prepared import Prepared
from cqlcodec.protocol.rows import RowsDesc, build_rows_desc, decode_rows, tuple_factory
from cqlcodec.protocol.shapes import RowFactory
from cqlcodec.runtime.buffers import read_i32_be
from cqlcodec.runtime.padding import begin_message
from cqlcodec.runtime.wire import check_protocol_version, malformed, read_int, read_short, read_string
from cqlcodec.types.model import CqlType

RESULT_VOID: Final = 0x0001
RESULT_ROWS: Final = 0x0002
RESULT_SET_KEYSPACE: Final = 0x0003
RESULT_PREPARED: Final = 0x0004
RESULT_SCHEMA_CHANGE: Final = 0x0005

_SCHEMA_TARGETS_NAMED: Final = frozenset(["TABLE", "TYPE"])
_SCHEMA_TARGETS_FUNC: Final = frozenset(["FUNCTION", "AGGREGATE"])


class VoidResult:
    """A RESULT of kind Void (1): the statement returned nothing."""

    @property
    def kind(self) -> int:
        """1."""
        return RESULT_VOID

    def __eq__(self, other: object) -> bool:
        return isinstance(other, VoidResult)

    def __hash__(self) -> int:
        return RESULT_VOID

    def __repr__(self) -> str:
        return "VoidResult()"


class SetKeyspaceResult:
    """A RESULT of kind Set_keyspace (3): the keyspace a USE statement switched to."""

    def __init__(self, keyspace: str) -> None:
        self.keyspace: Final = keyspace

    @property
    def kind(self) -> int:
        """3."""
        return RESULT_SET_KEYSPACE

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SetKeyspaceResult) and other.keyspace == self.keyspace

    def __hash__(self) -> int:
        return hash((RESULT_SET_KEYSPACE, self.keyspace))

    def __repr__(self) -> str:
        return f"SetKeyspaceResult({self.keyspace!r})"


class SchemaChangeResult:
    """A RESULT of kind Schema_change (5).

    ``change_type`` is CREATED, UPDATED or DROPPED; ``target`` KEYSPACE, TABLE,
    TYPE, FUNCTION or AGGREGATE; ``keyspace`` the keyspace; ``name`` the table,
    type, function or aggregate name ('' for KEYSPACE); ``argument_types`` the
    CQL argument types of a FUNCTION or AGGREGATE (else empty).
    """

    def __init__(self, change_type: str, target: str, keyspace: str, name: str = "",
                 argument_types: tuple[str, ...] = ()) -> None:
        self.change_type: Final = change_type
        self.target: Final = target
        self.keyspace: Final = keyspace
        self.name: Final = name
        self.argument_types: Final = argument_types

    @property
    def kind(self) -> int:
        """5."""
        return RESULT_SCHEMA_CHANGE

    def _key(self) -> tuple[str, str, str, str, tuple[str, ...]]:
        return (self.change_type, self.target, self.keyspace, self.name, self.argument_types)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SchemaChangeResult) and other._key() == self._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (f"SchemaChangeResult({self.change_type!r}, {self.target!r}, {self.keyspace!r}, "
                f"{self.name!r}, {self.argument_types!r})")


class RowsResult:
    """A RESULT of kind Rows (2).

    * ``columns``: the :class:`ColumnSpec` of each column;
    * ``rows``: the rows as the row factory made them (tuples by default);
    * ``paging_state``: bytes to send to get the next page, or None;
    * ``has_more_pages``: the Has_more_pages flag (0x0002);
    * ``new_metadata_id``: the new result metadata id when the server set
      Metadata_changed (0x0008, v5 / Scylla), else None;
    * ``continuous_page`` / ``last_continuous_page``: DSE continuous paging
      (page number or None; whether this is the last page);
    * ``flags``: the raw metadata flags.
    """

    def __init__(self, columns: tuple[ColumnSpec, ...], rows: list[Any],
                 paging_state: bytes | None, flags: int, new_metadata_id: bytes | None,
                 continuous_page: int | None) -> None:
        self.columns: Final = columns
        self.rows: Final = rows
        self.paging_state: Final = paging_state
        self.flags: Final = flags
        self.new_metadata_id: Final = new_metadata_id
        self.continuous_page: Final = continuous_page

    @property
    def has_more_pages(self) -> bool:
        """The Has_more_pages flag (0x0002): send ``paging_state`` for the next page."""
        return (self.flags & HAS_MORE_PAGES) != 0

    @property
    def last_continuous_page(self) -> bool:
        """The DSE Last_continuous_page flag."""
        return (self.flags & LAST_CONTINUOUS_PAGE) != 0

    @property
    def kind(self) -> int:
        """2."""
        return RESULT_ROWS

    @property
    def column_names(self) -> tuple[str, ...]:
        """The column names, in order."""
        return tuple([c.name for c in self.columns])

    @property
    def column_types(self) -> tuple[CqlType, ...]:
        """The column types, in order."""
        return tuple([c.type for c in self.columns])

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[Any]:
        return iter(self.rows)

    def __repr__(self) -> str:
        names = ", ".join(self.column_names)
        return f"<RowsResult [{names}] {len(self.rows)} rows, has_more_pages={self.has_more_pages}>"


Result = Union[VoidResult, RowsResult, SetKeyspaceResult, SchemaChangeResult, Prepared]
"""What :func:`decode_result` returns (one class per RESULT kind)."""


def decode_result(body: bytes | bytearray | memoryview, protocol_version: int,
                  prepared: Prepared | None = None, *,
                  row_factory: RowFactory = tuple_factory,
                  numpy_vectors: bool = False, tz_aware: bool = False,
                  column_encryption_policy: ColumnEncryptionPolicy | None = None,
                  metadata_id: bool | None = None) -> Result:
    """Decode a whole RESULT body (starting with ``[int] kind``).

    * ``prepared``: the statement that produced the result; needed for Rows
      bodies with the no-metadata flag (its ``result_columns`` describe them).
    * ``row_factory``: ``tuple_factory`` (default), ``dict_factory``,
      ``named_tuple_factory`` or any callable ``(names, rows) -> rows``.
    * ``numpy_vectors``: numeric vector columns decode to numpy arrays.
    * ``tz_aware``: timestamps decode to aware UTC datetimes.
    * ``column_encryption_policy``: decrypts encrypted columns; defaults to the
      prepared statement's policy.
    * ``metadata_id``: for Prepared bodies, whether a result metadata id is
      present (default: protocol v5+; True for Scylla's extension on v4).
    """
    if protocol_version != 4:
        check_protocol_version(protocol_version)
    buf = body if isinstance(body, bytes) else bytes(body)
    end: i64 = len(buf)
    kind: int = read_i32_be(buf, 0) if end >= 4 else read_int(buf, 0, end, "RESULT kind")
    if kind == RESULT_ROWS:
        policy = column_encryption_policy
        if policy is None and prepared is not None:
            policy = prepared.column_encryption_policy
        flags = decode_flags(tz_aware, numpy_vectors) if tz_aware or numpy_vectors else 0
        return read_rows(buf, 4, end, protocol_version, prepared, row_factory, flags, policy)
    if kind == RESULT_VOID:
        if end != 4:
            raise malformed("RESULT void", 4, f"{end - 4} trailing bytes")
        return VoidResult()
    if kind == RESULT_SET_KEYSPACE:
        ks, p = read_string(buf, 4, end, "RESULT set_keyspace")
        if p != end:
            raise malformed("RESULT set_keyspace", p, f"{end - p} trailing bytes")
        return SetKeyspaceResult(ks)
    if kind == RESULT_PREPARED:
        policy = column_encryption_policy
        if policy is None and prepared is not None:
            policy = prepared.column_encryption_policy
        p, end, prep = read_prepared_body(buf, 4, end, protocol_version, metadata_id, policy)
        if p != end:
            raise malformed("RESULT prepared", p, f"{end - p} trailing bytes after the metadata")
        return prep
    if kind == RESULT_SCHEMA_CHANGE:
        return read_schema_change(buf, 4, end)
    raise malformed("RESULT", 0, f"unknown RESULT kind {kind}")


def decode_rows_result(body: bytes | bytearray | memoryview, protocol_version: int,
                       prepared: Prepared | None = None, *,
                       row_factory: RowFactory = tuple_factory,
                       numpy_vectors: bool = False, tz_aware: bool = False,
                       column_encryption_policy: ColumnEncryptionPolicy | None = None
                       ) -> RowsResult:
    """:func:`decode_result` for a body that must be of kind Rows (else DecodeError)."""
    result = decode_result(body, protocol_version, prepared, row_factory=row_factory,
                           numpy_vectors=numpy_vectors, tz_aware=tz_aware,
                           column_encryption_policy=column_encryption_policy)
    if not isinstance(result, RowsResult):
        raise DecodeError(f"expected a RESULT of kind Rows (2), got kind {result.kind}",
                          "RESULT", 0)
    return result


def read_rows(buf: bytes, pos: i64, end: i64, protocol_version: int,
              prepared: Prepared | None, row_factory: RowFactory, flags: int,
              policy: ColumnEncryptionPolicy | None) -> RowsResult:
    """Decode a Rows kind body at ``pos`` (just after the kind)."""
    head = read_rows_header(buf, pos, end, protocol_version, prepared, flags, policy)
    return rows_result(buf, head.rows_at, end, head.desc, row_factory, head.paging_state,
                       head.flags, head.new_metadata_id, head.page)


class RowsHeader:
    """The metadata of a Rows body: its parse description, paging fields and where
    ``[int] rows_count`` starts (shared by the row and the columnar decoders)."""

    def __init__(self, desc: RowsDesc, rows_at: i64, paging_state: bytes | None, flags: int,
                 new_metadata_id: bytes | None, page: int | None) -> None:
        self.desc: Final = desc
        self.rows_at: Final = rows_at
        self.paging_state: Final = paging_state
        self.flags: Final = flags
        self.new_metadata_id: Final = new_metadata_id
        self.page: Final = page


def read_rows_header(buf: bytes, pos: i64, end: i64, protocol_version: int,
                     prepared: Prepared | None, flags: int,
                     policy: ColumnEncryptionPolicy | None) -> RowsHeader:
    """Read the metadata of a Rows kind body at ``pos`` (just after the kind)."""
    if prepared is not None and end - pos >= 12 and read_i32_be(buf, pos) == NO_METADATA:
        # the usual page of a prepared statement: metadata flags exactly no_metadata
        # (no paging state, no new metadata id), so the header is two ints
        desc = prepared.rows_desc(protocol_version, policy, flags)
        count: int = read_i32_be(buf, pos + 4)
        if count != len(desc.columns):
            raise wrong_column_count(pos + 4, count, len(desc.columns))
        return RowsHeader(desc, pos + 8, None, NO_METADATA, None, None)
    meta = read_rows_metadata(buf, pos, end, "RESULT rows metadata")
    columns = meta.columns
    if columns is None:
        if prepared is None:
            raise malformed("RESULT rows metadata", pos,
                            "the no-metadata flag (0x0004) is set but no prepared statement "
                            "was given to describe the columns")
        desc = prepared.rows_desc(protocol_version, policy, flags)
        if meta.column_count != len(desc.columns):
            raise wrong_column_count(pos + 4, meta.column_count, len(desc.columns))
    else:
        desc = build_rows_desc(columns, protocol_version, policy, flags)
    page: int | None = None
    if meta.flags & CONTINUOUS_PAGING:
        page = meta.continuous_page
    return RowsHeader(desc, meta.end, meta.paging_state, meta.flags, meta.new_metadata_id, page)


def wrong_column_count(pos: i64, count: int, expected: int) -> DecodeError:
    return malformed("RESULT rows metadata", pos,
                     f"columns_count {count} but the prepared statement "
                     f"has {expected} result columns")


def read_row_list(buf: bytes, p: i64, end: i64, desc: RowsDesc) -> list[Any]:
    """Decode ``[int] rows_count`` and the rows at ``p`` (up to ``end``, with nothing
    after them) into a list of tuples."""
    if end - p < 4:
        read_int(buf, p, end, "RESULT rows_count")  # raises, naming what is missing
    nrows: int = read_i32_be(buf, p)
    if desc.pads:
        begin_message(end)  # the padding budget of tuples and UDTs that end early
    rows, p = decode_rows(buf, p + 4, end, nrows, desc)
    if p != end:
        raise malformed("RESULT rows", p, f"{end - p} trailing bytes after {nrows} rows")
    return rows


def rows_result(buf: bytes, p: i64, end: i64, desc: RowsDesc, row_factory: RowFactory,
                paging_state: bytes | None, meta_flags: int, new_metadata_id: bytes | None,
                page: int | None) -> RowsResult:
    """Decode ``[int] rows_count`` and the rows at ``p`` into a RowsResult."""
    out: list[Any] = read_row_list(buf, p, end, desc)
    if row_factory is not tuple_factory:
        out = row_factory(desc.names, out)
    return RowsResult(desc.columns, out, paging_state, meta_flags, new_metadata_id, page)


def decode_rows_with(buf: bytes, pos: i64, desc: RowsDesc) -> RowsResult:
    """Decode ``[int] rows_count`` and the rows at ``pos`` of ``buf`` (up to its end) with
    the parse description ``desc``: for a caller that has read the metadata itself
    (driver mode reads the rows where they lie in the driver's message, no copy, and
    decodes some columns straight into the driver's value classes).

    Offsets in errors count from the start of ``buf``; the result carries no paging
    state (the caller has it from the metadata).
    """
    return rows_result(buf, pos, len(buf), desc, tuple_factory, None, 0, None, None)


def read_schema_change(buf: bytes, pos: i64, end: i64) -> SchemaChangeResult:
    """A Schema_change body (v3+ layout) at ``pos``."""
    what = "RESULT schema_change"
    change, p = read_string(buf, pos, end, what + " change_type")
    target, p = read_string(buf, p, end, what + " target")
    ks, p = read_string(buf, p, end, what + " keyspace")
    name = ""
    args: list[str] = []
    if target in _SCHEMA_TARGETS_NAMED or target in _SCHEMA_TARGETS_FUNC:
        name, p = read_string(buf, p, end, what + " name")
        if target in _SCHEMA_TARGETS_FUNC:
            count = read_short(buf, p, end, what + " argument count")
            p += 2
            if count > (end - p) // 2:
                raise malformed(what, p - 2, f"{count} argument types cannot fit in the body")
            for _i in range(count):
                arg, p = read_string(buf, p, end, what + " argument type")
                args.append(arg)
    elif target != "KEYSPACE":
        raise malformed(what, pos, f"unknown schema change target {target!r}")
    if p != end:
        raise malformed(what, p, f"{end - p} trailing bytes")
    return SchemaChangeResult(change, target, ks, name, tuple(args))
