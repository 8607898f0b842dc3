"""The metadata of RESULT bodies: rows ``<metadata>`` and the PREPARED result body.

* :func:`read_rows_metadata`: the ``<metadata>`` of a RESULT Rows body (also
  the result metadata inside a PREPARED body), as a :class:`RowsMetadata`;
  :func:`rows_metadata_extent`: where its parts lie, its types not built.
* :func:`decode_prepared` / :func:`read_prepared_body`: a PREPARED result body
  into a :class:`~cqlcodec.Prepared`.
"""

from __future__ import annotations

from typing import Final

from mypy_extensions import i64

from cqlcodec.codecs.encryption import ColumnEncryptionPolicy
from cqlcodec.protocol.columns import ColumnSpec
from cqlcodec.protocol.prepared import Prepared
from cqlcodec.runtime.wire import (
    check_protocol_version,
    malformed,
    read_int,
    read_short,
    read_short_bytes,
    read_string,
    skip_string,
)
from cqlcodec.types.option import read_option_at, skip_option_at

# Rows metadata flags (native protocol §4.2.5.2; DSE continuous paging).
GLOBAL_TABLES_SPEC: Final = 0x0001
HAS_MORE_PAGES: Final = 0x0002
NO_METADATA: Final = 0x0004
METADATA_CHANGED: Final = 0x0008
CONTINUOUS_PAGING: Final = 0x40000000
LAST_CONTINUOUS_PAGE: Final = 0x80000000


_EMPTY_SPECS: Final[tuple[ColumnSpec, ...]] = ()


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
    flags, count, paging_state, new_id, page, p = _read_header(buf, pos, end, what)
    if flags & NO_METADATA:
        return RowsMetadata(flags, count, paging_state, new_id, page, None, p)
    columns, p = read_column_specs(buf, p, end, count, (flags & GLOBAL_TABLES_SPEC) != 0, what)
    return RowsMetadata(flags, count, paging_state, new_id, page, columns, p)


def _read_header(buf: bytes, pos: i64, end: i64,
                 what: str) -> tuple[int, i64, bytes | None, bytes | None, int, i64]:
    """Flags, columns_count, paging state, new metadata id, continuous page (-1 if none)
    and the position of what follows (the column specs unless no_metadata is set)."""
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
    return flags, count, paging_state, new_id, page, p


class MetadataExtent:
    """Where the parts of a rows ``<metadata>`` lie, found without building its types
    (:func:`rows_metadata_extent`): for a caller that keeps what it made of the same
    column specs before. ``specs_start``/``specs_end`` bound the column specs (with
    the global keyspace and table): equal when no_metadata is set."""

    def __init__(self, flags: int, column_count: i64, paging_state: bytes | None,
                 new_metadata_id: bytes | None, continuous_page: int, specs_start: i64,
                 specs_end: i64, user_types: bool) -> None:
        self.flags: Final = flags
        self.column_count: Final = column_count
        self.paging_state: Final = paging_state
        self.new_metadata_id: Final = new_metadata_id
        self.continuous_page: Final = continuous_page
        self.specs_start: Final = specs_start
        self.specs_end: Final = specs_end
        self.user_types: Final = user_types  # whether a column's type holds a UDT

    def specs_key(self, buf: bytes) -> tuple[i64, bool, bytes]:
        """What identifies the column specs: their count, global flag and bytes."""
        return (self.column_count, (self.flags & GLOBAL_TABLES_SPEC) != 0,
                buf[self.specs_start: self.specs_end])


def rows_metadata_extent(buf: bytes, pos: i64, end: i64) -> MetadataExtent:
    """The :class:`MetadataExtent` of the rows ``<metadata>`` at ``buf[pos:end]``.

    The same checks as :func:`read_rows_metadata` on the header; the column specs are
    walked (names, bounds, type ids and nesting checked), their types not built."""
    what = "RESULT rows metadata"
    flags, count, paging_state, new_id, page, p = _read_header(buf, pos, end, what)
    start = p
    user_types = False
    if not flags & NO_METADATA:
        if flags & GLOBAL_TABLES_SPEC:
            p = skip_string(buf, p, end, what + " keyspace")
            p = skip_string(buf, p, end, what + " table")
        elif count > (end - p) // 8:  # each spec: ks, table, name and an [option] id
            raise malformed(what, p, f"{count} column specs cannot fit in the {end - p} "
                                     "bytes that remain")
        for _i in range(count):
            if not flags & GLOBAL_TABLES_SPEC:
                p = skip_string(buf, p, end, what + " column keyspace")
                p = skip_string(buf, p, end, what + " column table")
            p = skip_string(buf, p, end, what + " column name")
            p, udt = skip_option_at(buf, p, end, 0)
            user_types = user_types or udt
    return MetadataExtent(flags, count, paging_state, new_id, page, start, p, user_types)


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
