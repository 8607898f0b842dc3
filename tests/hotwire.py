"""Byte-by-byte builders of RESULT and PREPARED bodies for the hot-path tests.

Written with ``struct`` only (no cqlcodec encoders), so the tests check
cqlcodec's decoding against bytes laid out by hand from the protocol spec.
"""

from __future__ import annotations

import struct
from typing import Mapping, Sequence, Union

from cqlcodec import CqlType, kinds

GLOBAL_TABLES_SPEC = 0x0001
HAS_MORE_PAGES = 0x0002
NO_METADATA = 0x0004
METADATA_CHANGED = 0x0008
CONTINUOUS_PAGING = 0x40000000
LAST_CONTINUOUS_PAGE = 0x80000000

KIND_VOID = 1
KIND_ROWS = 2
KIND_SET_KEYSPACE = 3
KIND_PREPARED = 4
KIND_SCHEMA_CHANGE = 5

NOT_SET = -2
"""Cell marker for a ``[value]`` of length -2."""

Cell = Union[bytes, None, int]
"""A cell: content bytes, None (length -1) or an int written as the raw length word."""

Col = tuple[str, str, str, CqlType]

_JAVA = {
    kinds.ASCII: "AsciiType", kinds.BIGINT: "LongType", kinds.BLOB: "BytesType",
    kinds.BOOLEAN: "BooleanType", kinds.COUNTER: "CounterColumnType",
    kinds.DECIMAL: "DecimalType", kinds.DOUBLE: "DoubleType", kinds.FLOAT: "FloatType",
    kinds.INT: "Int32Type", kinds.TEXT: "UTF8Type", kinds.TIMESTAMP: "TimestampType",
    kinds.UUID: "UUIDType", kinds.VARINT: "IntegerType", kinds.TIMEUUID: "TimeUUIDType",
    kinds.INET: "InetAddressType", kinds.DATE: "SimpleDateType", kinds.TIME: "TimeType",
    kinds.SMALLINT: "ShortType", kinds.TINYINT: "ByteType", kinds.DURATION: "DurationType",
}
_PKG = "org.apache.cassandra.db.marshal."


def i32(v: int) -> bytes:
    return struct.pack(">i", v)


def u32(v: int) -> bytes:
    return struct.pack(">I", v)


def short(v: int) -> bytes:
    return struct.pack(">H", v)


def string(s: str) -> bytes:
    data = s.encode("utf-8")
    return short(len(data)) + data


def short_bytes(b: bytes) -> bytes:
    return short(len(b)) + b


def cell(c: Cell) -> bytes:
    if c is None:
        return i32(-1)
    if isinstance(c, int):
        return i32(c)
    return i32(len(c)) + c


def java_name(t: CqlType) -> str:
    """The Java marshal class name of ``t`` (what a custom [option] carries)."""
    t = t.unwrapped()
    k = t.kind
    if k in _JAVA:
        return _PKG + _JAVA[k]
    if k == kinds.LIST:
        return f"{_PKG}ListType({java_name(t.subtypes[0])})"
    if k == kinds.SET:
        return f"{_PKG}SetType({java_name(t.subtypes[0])})"
    if k == kinds.MAP:
        return f"{_PKG}MapType({java_name(t.subtypes[0])},{java_name(t.subtypes[1])})"
    if k == kinds.TUPLE:
        return f"{_PKG}TupleType({','.join(java_name(s) for s in t.subtypes)})"
    if k == kinds.VECTOR:
        return f"{_PKG}VectorType({java_name(t.subtypes[0])}, {t.dimension})"
    if k == kinds.UDT:
        fields = ",".join(f"{f.encode().hex()}:{java_name(s)}" for f, s in t.fields)
        return f"{_PKG}UserType({t.keyspace},{t.name.encode().hex()},{fields})"
    return t.name


def option(t: CqlType) -> bytes:
    """The ``[option]`` of ``t`` as a server writes it in metadata."""
    t = t.unwrapped()
    k = t.kind
    if 0 < k <= 0x15:
        return short(k)
    if k in (kinds.LIST, kinds.SET):
        return short(k) + option(t.subtypes[0])
    if k == kinds.MAP:
        return short(k) + option(t.subtypes[0]) + option(t.subtypes[1])
    if k == kinds.TUPLE:
        return short(k) + short(len(t.subtypes)) + b"".join(option(s) for s in t.subtypes)
    if k == kinds.UDT:
        out = short(k) + string(t.keyspace) + string(t.name) + short(len(t.subtypes))
        for f, s in t.fields:
            out += string(f) + option(s)
        return out
    return short(0) + string(java_name(t))


def col_specs(cols: Sequence[Col], global_spec: bool) -> bytes:
    out = b""
    if global_spec:
        out += string(cols[0][0]) + string(cols[0][1])
    for ks, table, name, t in cols:
        if not global_spec:
            out += string(ks) + string(table)
        out += string(name) + option(t)
    return out


def rows_metadata(cols: Sequence[Col], *, flags: int = 0, column_count: int | None = None,
                  paging_state: bytes | None | int = None, new_metadata_id: bytes | None = None,
                  continuous_page: int | None = None) -> bytes:
    """A rows ``<metadata>``; flags for the optional parts are added automatically.

    ``paging_state`` may be an int to write a raw (e.g. negative) length word.
    """
    if paging_state is not None:
        flags |= HAS_MORE_PAGES
    if new_metadata_id is not None:
        flags |= METADATA_CHANGED
    if continuous_page is not None:
        flags |= CONTINUOUS_PAGING
    out = u32(flags) + i32(len(cols) if column_count is None else column_count)
    if paging_state is not None:
        out += i32(paging_state) if isinstance(paging_state, int) else cell(paging_state)
    if new_metadata_id is not None:
        out += short_bytes(new_metadata_id)
    if continuous_page is not None:
        out += i32(continuous_page)
    if not flags & NO_METADATA:
        out += col_specs(cols, bool(flags & GLOBAL_TABLES_SPEC))
    return out


def rows_body(cols: Sequence[Col], rows: Sequence[Sequence[Cell]], *, flags: int = 0,
              row_count: int | None = None, column_count: int | None = None,
              paging_state: bytes | None | int = None, new_metadata_id: bytes | None = None,
              continuous_page: int | None = None, kind: bool = True) -> bytes:
    """A RESULT Rows body (with the kind word unless ``kind=False``)."""
    out = i32(KIND_ROWS) if kind else b""
    out += rows_metadata(cols, flags=flags, column_count=column_count,
                         paging_state=paging_state, new_metadata_id=new_metadata_id,
                         continuous_page=continuous_page)
    out += i32(len(rows) if row_count is None else row_count)
    for row in rows:
        for c in row:
            out += cell(c)
    return out


def prepared_body(query_id: bytes, binds: Sequence[Col], pk_indexes: Sequence[int],
                  results: Sequence[Col], protocol_version: int, *,
                  result_metadata_id: bytes | None = None, bind_flags: int = 0,
                  result_flags: int | None = None, kind: bool = True,
                  metadata_id: bool | None = None) -> bytes:
    """A PREPARED body (with the RESULT kind word unless ``kind=False``).

    The result metadata id is written when ``metadata_id`` (default: v5+).
    ``result_flags`` defaults to global-spec for results, no-metadata for none.
    """
    out = i32(KIND_PREPARED) if kind else b""
    out += short_bytes(query_id)
    if protocol_version >= 5 if metadata_id is None else metadata_id:
        out += short_bytes(result_metadata_id if result_metadata_id is not None else b"\xaa" * 16)
    out += u32(bind_flags) + i32(len(binds))
    if protocol_version >= 4:
        out += i32(len(pk_indexes)) + b"".join(short(i) for i in pk_indexes)
    out += col_specs(binds, bool(bind_flags & GLOBAL_TABLES_SPEC))
    if result_flags is None:
        result_flags = GLOBAL_TABLES_SPEC if results else NO_METADATA
    out += rows_metadata(results, flags=result_flags)
    return out


def schema_change_body(change: str, target: str, keyspace: str, name: str | None = None,
                       args: Sequence[str] | None = None) -> bytes:
    out = i32(KIND_SCHEMA_CHANGE) + string(change) + string(target) + string(keyspace)
    if name is not None:
        out += string(name)
    if args is not None:
        out += short(len(args)) + b"".join(string(a) for a in args)
    return out


# --- sample values accepted alike by cqlcodec and cassandra-driver ---------------------

def _samples() -> list[tuple[str, list[object]]]:
    import datetime
    import decimal
    import uuid

    return [
        ("int", [0, -1, 2**31 - 1, -(2**31)]),
        ("bigint", [2**63 - 1, -(2**63), 5]),
        ("smallint", [-32768, 32767, 0]),
        ("tinyint", [-128, 127, 1]),
        ("varint", [0, 2**100, -(2**70), 255]),
        ("counter", [7, -7]),
        ("float", [1.5, -0.0, 0.10000000149011612]),
        ("double", [3.141592653589793, -1e300, 0.0]),
        ("decimal", [decimal.Decimal("12345.6789"), decimal.Decimal("-0.001"),
                     decimal.Decimal(0)]),
        ("text", ["", "héllo wörld", "x" * 300]),
        ("ascii", ["abc", ""]),
        ("blob", [b"", b"\x00\xff\x10"]),
        ("boolean", [True, False]),
        ("uuid", [uuid.UUID("3f2504e0-4f89-11d3-9a0c-0305e82c3301"), uuid.UUID(int=0)]),
        ("timeuuid", [uuid.UUID("e5a6f7b0-1234-11ee-8000-000000000000")]),
        ("timestamp", [datetime.datetime(2024, 5, 17, 12, 34, 56, 789000),
                       datetime.datetime(1960, 1, 1)]),
        ("date", [datetime.date(2024, 5, 17), datetime.date(1, 1, 1)]),
        ("time", [datetime.time(12, 34, 56, 789), datetime.time(0, 0)]),
        ("inet", ["127.0.0.1", "::1", "2001:db8::8:800:200c:417a"]),
        ("list<int>", [[1, 2, 3], []]),
        ("set<text>", [{"a", "bb"}]),
        ("map<text, int>", [{"a": 1, "b": -2}]),
        ("tuple<int, text>", [(1, "x")]),
        ("vector<float, 3>", [[1.0, 2.5, -3.0]]),
    ]


SAMPLES: list[tuple[str, list[object]]] = _samples()
"""(CQL type, values) pairs that both cqlcodec and the driver encode to the same bytes."""


def plain(value: object) -> object:
    """A cqlcodec value with cqlcodec's own classes replaced by builtins (see oracle.driver_plain)."""
    import datetime

    from cqlcodec.values import Date, Duration, Time

    if isinstance(value, (set, frozenset)):
        return {plain(v) for v in value}
    if isinstance(value, Mapping):
        return {plain(k): plain(v) for k, v in value.items()}
    if isinstance(value, Time):
        return value.nanoseconds
    if isinstance(value, Duration):
        return (value.months, value.days, value.nanoseconds)
    if isinstance(value, Date):
        return value.days
    if isinstance(value, datetime.time):
        return ((value.hour * 60 + value.minute) * 60 + value.second) * 10**9 \
            + value.microsecond * 1000
    if isinstance(value, tuple):
        return tuple(plain(v) for v in value)
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value
