"""Against a real Cassandra 5.0.9: short tuple values, CompositeType columns and deeply
nested types read (and bind) the same with cqlcodec installed as with the driver alone.

A third session, with a protocol handler that keeps RESULT bodies and cells as raw
bytes, shows what the server really sent; cqlcodec's core decodes those bodies too.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

import pytest
from cassandra.cluster import Cluster, Session
from cassandra.protocol import ProtocolHandler, ResultMessage

import cqlcodec
import cqlcodec.driver
from cqlcodec import composite_type, kinds, scalar_type
from cqlcodec.errors import TypeTooDeepError
from cqlcodec.types.model import MAX_TYPE_DEPTH

from .compare import assert_same_rows
from .conftest import SessionPair, new_cluster
from .data import KEYSPACE

pytestmark = pytest.mark.integration

M = "org.apache.cassandra.db.marshal."
COMP_JAVA = f"{M}CompositeType({M}UTF8Type,{M}Int32Type)"
DATE_COMP_JAVA = f"{M}CompositeType({M}SimpleDateType,{M}UTF8Type)"
DYN_JAVA = f"{M}DynamicCompositeType(s=>{M}UTF8Type,i=>{M}Int32Type)"
TEXT = scalar_type(kinds.TEXT)
INT = scalar_type(kinds.INT)
DEEP_LEVELS = (33, MAX_TYPE_DEPTH)  # 32 tuples around an int, and the deepest accepted type

# k -> (c, d) content written with CQL blob literals (Cassandra does not validate those)
COMPOSITES: dict[int, tuple[str, str]] = {
    1: ("0003666f6f00 00040000000700", "000480004e20 00 000178 00"),
    2: ("0003666f6f01", "000480000000 01"),  # a prefix, end-of-component 1
    3: ("0003666f6f00 000000", "0000 00"),  # empty components
    4: ("000000", "000480000001 00 0000 00"),
}
STATIC = "ffff 0003666f6f00"  # Cassandra's static marker: the Cython driver cannot read it
DYNAMIC = "8073 0003666f6f00 8069 00040000000700"  # s=>'foo', i=>7


def h(text: str) -> bytes:
    return bytes.fromhex(text.replace(" ", ""))


def nested_cql(levels: int) -> str:
    return "frozen<tuple<" * (levels - 1) + "int" + ">>" * (levels - 1)


def nested_value(levels: int) -> Any:
    value: Any = 7
    for _i in range(levels - 1):
        value = (value,)
    return value


class _RawResult(ResultMessage):
    """Rows as raw cells; the whole RESULT body (from its kind) is kept in ``BODIES``."""

    def recv_results_rows(self, f: io.BytesIO, protocol_version: int, user_type_map: Any,
                          result_metadata: Any, column_encryption_policy: Any) -> None:
        start = f.tell()
        f.seek(start - 4)
        body = f.read()
        if body[:4] != b"\x00\x00\x00\x02":
            f.seek(start)
            body = b"\x00\x00\x00\x02" + f.read()
        BODIES.append(body)
        f.seek(start)
        self.recv_results_metadata(f, user_type_map)
        columns = self.column_metadata or result_metadata or []
        count = _read_i32(f)
        self.parsed_rows = [tuple(_read_cell(f) for _c in columns) for _i in range(count)]
        self.column_names = [c[2] for c in columns]
        self.column_types = [c[3] for c in columns]


def _read_i32(f: io.BytesIO) -> int:
    return int.from_bytes(f.read(4), "big", signed=True)


def _read_cell(f: io.BytesIO) -> bytes | None:
    n = _read_i32(f)
    return None if n < 0 else f.read(n)


BODIES: list[bytes] = []
_opcodes = dict(ProtocolHandler.message_types_by_opcode)
_opcodes[ResultMessage.opcode] = _RawResult
_RawHandler: Any = type("RawHandler", (ProtocolHandler,), {"message_types_by_opcode": _opcodes})


class RawSessions:
    """One raw session per protocol version, made on first use."""

    def __init__(self) -> None:
        self.clusters: dict[int, Cluster] = {}
        self.sessions: dict[int, Session] = {}

    def get(self, protocol_version: int) -> Session:
        if protocol_version not in self.sessions:
            cluster = new_cluster(protocol_version)
            session = cluster.connect(KEYSPACE)
            session.client_protocol_handler = _RawHandler
            self.clusters[protocol_version] = cluster
            self.sessions[protocol_version] = session
        return self.sessions[protocol_version]

    def body(self, protocol_version: int, query: str) -> bytes:
        """The RESULT body of an unprepared query (its metadata inline)."""
        BODIES.clear()
        self.get(protocol_version).execute(query)
        assert len(BODIES) == 1
        return BODIES[0]

    def cells(self, protocol_version: int, query: str) -> list[tuple[bytes | None, ...]]:
        return list(self.get(protocol_version).execute(query))

    def close(self) -> None:
        for cluster in self.clusters.values():
            cluster.shutdown()


@pytest.fixture(scope="module")
def raw(tables: None) -> Iterator[RawSessions]:
    sessions = RawSessions()
    yield sessions
    sessions.close()


@pytest.fixture(scope="module")
def tables(schema: None) -> Iterator[None]:
    """The tables of this module, written by the driver alone and by CQL literals (pytest
    may run this again when the session-scoped ``pair`` changes: every step is idempotent)."""
    cluster = new_cluster(4)
    try:
        s = cluster.connect(KEYSPACE)
        tables = {
            "cc_tuple": "k int PRIMARY KEY, t tuple<ascii, int, boolean>",
            "cc_tuple_key": "t frozen<tuple<int, int, int>> PRIMARY KEY, v int",
            "cc_comp": f"k int PRIMARY KEY, c '{COMP_JAVA}', d '{DATE_COMP_JAVA}'",
            "cc_comp_odd": f"k int PRIMARY KEY, c '{COMP_JAVA}', dyn '{DYN_JAVA}'",
        }
        for n in (*DEEP_LEVELS, MAX_TYPE_DEPTH + 1):
            tables[f"cc_deep{n}"] = f"k int PRIMARY KEY, v {nested_cql(n)}"
        for name, columns in tables.items():
            s.execute(f"CREATE TABLE IF NOT EXISTS {name} ({columns})", timeout=60)
        s.execute("INSERT INTO cc_tuple (k, t) VALUES (1, ('bar', 456))")
        insert_tuple = s.prepare("INSERT INTO cc_tuple (k, t) VALUES (?, ?)")
        s.execute(insert_tuple, (2, ("baz",)))
        s.execute(insert_tuple, (3, ("q", 7, True)))
        s.execute("INSERT INTO cc_tuple (k, t) VALUES (4, ('a', null, null))")
        s.execute("INSERT INTO cc_tuple_key (t, v) VALUES ((1, 2), 12)")
        for k, (c, d) in COMPOSITES.items():
            s.execute(f"INSERT INTO cc_comp (k, c, d) VALUES ({k}, 0x{h(c).hex()}, "
                      f"0x{h(d).hex()})")
        s.execute(f"INSERT INTO cc_comp_odd (k, c, dyn) VALUES (1, 0x{h(STATIC).hex()}, "
                  f"0x{h(DYNAMIC).hex()})")
        for n in (*DEEP_LEVELS, MAX_TYPE_DEPTH + 1):
            s.execute(s.prepare(f"INSERT INTO cc_deep{n} (k, v) VALUES (?, ?)"),
                      (1, nested_value(n)), timeout=60)
    finally:
        cluster.shutdown()
    yield


def _both(pair: SessionPair, query: str, params: tuple[Any, ...] = ()) -> None:
    """The same rows through the driver alone and through cqlcodec, prepared and not."""
    for prepared in (False, True):
        if prepared:
            expected = list(pair.plain.execute(pair.plain.prepare(query), params))
            actual = list(pair.codec.execute(pair.codec.prepare(query), params))
        else:
            expected = list(pair.plain.execute(query, params))
            actual = list(pair.codec.execute(query, params))
        assert_same_rows(expected, actual, f"{query} (prepared={prepared})")


# --------------------------------------------------------------------------- short tuples

def test_short_tuples_are_stored_short_and_read_like_the_driver(
        pair: SessionPair, tables: None, raw: RawSessions) -> None:
    pv = pair.protocol_version
    cells = {r[0]: r[1] for r in raw.cells(pv, "SELECT k, t FROM cc_tuple WHERE k IN (1, 2, 3, 4)")}
    assert cells[i32(1)] == h("00000003 626172 00000004 000001c8")  # ('bar', 456) literal
    assert cells[i32(2)] == h("00000003 62617a")  # the driver's binding of ('baz',)
    assert cells[i32(3)] == h("00000001 71 00000004 00000007 00000001 01")
    assert cells[i32(4)] == h("00000001 61 ffffffff ffffffff")  # explicit nulls stay
    _both(pair, "SELECT k, t FROM cc_tuple WHERE k IN (1, 2, 3, 4)")
    rows = dict(list(pair.codec.execute("SELECT k, t FROM cc_tuple WHERE k IN (1, 2, 3, 4)")))
    assert rows == {1: ("bar", 456, None), 2: ("baz", None, None), 3: ("q", 7, True),
                    4: ("a", None, None)}
    core = cqlcodec.decode_result(raw.body(pv, "SELECT t FROM cc_tuple WHERE k = 1"), pv)
    assert isinstance(core, cqlcodec.RowsResult)
    assert core.rows == [(("bar", 456, None),)]


def test_short_tuples_bind_like_the_driver(pair: SessionPair, tables: None,
                                           raw: RawSessions) -> None:
    pv = pair.protocol_version
    key = 100 + pv
    insert = pair.codec.prepare("INSERT INTO cc_tuple (k, t) VALUES (?, ?)")
    assert isinstance(insert, cqlcodec.driver.CqlcodecPreparedStatement)
    plain_insert = pair.plain.prepare("INSERT INTO cc_tuple (k, t) VALUES (?, ?)")
    for value in [("baz",), ("bar", 456), ("q", 7, True)]:
        assert insert.bind((key, value)).values == plain_insert.bind((key, value)).values
    pair.codec.execute(insert, (key, ("baz",)))
    stored = raw.cells(pv, f"SELECT t FROM cc_tuple WHERE k = {key}")
    assert stored == [(h("00000003 62617a"),)]
    # a short tuple is its own partition key: padding it would miss the driver's row
    for session in (pair.plain, pair.codec):
        select = session.prepare("SELECT v FROM cc_tuple_key WHERE t = ?")
        assert [r.v for r in session.execute(select, ((1, 2),))] == [12]
        assert list(session.execute(select, ((1, 2, None),))) == []


# --------------------------------------------------------------------------- CompositeType

def test_composite_columns_read_like_the_driver(pair: SessionPair, tables: None,
                                                raw: RawSessions) -> None:
    pv = pair.protocol_version
    query = "SELECT k, c, d FROM cc_comp WHERE k IN (1, 2, 3, 4)"
    stored = {int.from_bytes(r[0] or b"", "big"): r[1:] for r in raw.cells(pv, query)}
    assert stored == {k: (h(c), h(d)) for k, (c, d) in COMPOSITES.items()}
    _both(pair, query)
    values = {r.k: r.c for r in pair.codec.execute(query)}
    assert values == {1: ("foo", 7), 2: ("foo",), 3: ("foo", None), 4: ("",)}
    core = cqlcodec.decode_result(raw.body(pv, "SELECT c FROM cc_comp WHERE k = 1"), pv)
    assert isinstance(core, cqlcodec.RowsResult)
    assert core.columns[0].type == composite_type(TEXT, INT)  # the server's [option]
    assert core.rows == [(("foo", 7),)]
    ps = pair.codec.prepare("SELECT c FROM cc_comp WHERE k = ?")
    assert ps.result_metadata is not None
    assert cqlcodec.driver.cql_type_of(ps.result_metadata[0][3]) == composite_type(TEXT, INT)


def test_composite_values_bind_with_cqlcodec(pair: SessionPair, tables: None,
                                             raw: RawSessions) -> None:
    """The driver has no encoder for CompositeType; cqlcodec builds what Cassandra builds,
    and the server, which validates bound composite values, takes it."""
    pv = pair.protocol_version
    key = 200 + pv
    insert = pair.codec.prepare("INSERT INTO cc_comp (k, c) VALUES (?, ?)")
    pair.codec.execute(insert, (key, ("foo", 7)))
    pair.codec.execute(insert, (key + 10, ["foo"]))
    stored = raw.cells(pv, f"SELECT c FROM cc_comp WHERE k IN ({key}, {key + 10})")
    assert sorted(stored) == sorted([(h(COMPOSITES[1][0]),), (h("0003666f6f00"),)])
    _both(pair, f"SELECT k, c FROM cc_comp WHERE k IN ({key}, {key + 10})")


def test_static_marker_and_dynamic_composites_with_cqlcodec(pair: SessionPair, tables: None,
                                                            raw: RawSessions) -> None:
    """Values the drivers fail on (and then lose the connection): a static-marked composite
    decodes as Cassandra reads it, a DynamicCompositeType value stays raw bytes."""
    pv = pair.protocol_version
    query = "SELECT c, dyn FROM cc_comp_odd WHERE k = 1"
    assert raw.cells(pv, query) == [(h(STATIC), h(DYNAMIC))]
    for prepared in (False, True):
        statement: Any = pair.codec.prepare(query) if prepared else query
        row = pair.codec.execute(statement).one()
        assert row.c == ("foo",) and row.dyn == h(DYNAMIC)


# --------------------------------------------------------------------------- deep nesting

@pytest.mark.parametrize("levels", DEEP_LEVELS)
def test_deeply_nested_tuples_read_and_bind_like_the_driver(
        pair: SessionPair, tables: None, raw: RawSessions, levels: int) -> None:
    pv = pair.protocol_version
    _both(pair, f"SELECT k, v FROM cc_deep{levels} WHERE k = 1")
    assert pair.codec.execute(f"SELECT v FROM cc_deep{levels} WHERE k = 1").one().v == (
        nested_value(levels))
    key = 10 + pv
    insert = pair.codec.prepare(f"INSERT INTO cc_deep{levels} (k, v) VALUES (?, ?)")
    pair.codec.execute(insert, (key, nested_value(levels)), timeout=60)
    _both(pair, f"SELECT k, v FROM cc_deep{levels} WHERE k = {key}")
    core = cqlcodec.decode_result(raw.body(pv, f"SELECT v FROM cc_deep{levels} WHERE k = 1"), pv)
    assert isinstance(core, cqlcodec.RowsResult)
    assert core.rows == [(nested_value(levels),)]


def test_one_level_deeper_is_refused_cleanly(pair: SessionPair, tables: None,
                                             raw: RawSessions) -> None:
    """The driver alone reads it; cqlcodec refuses its metadata with an error that is both
    a DecodeError and an UnsupportedTypeError (never a RecursionError or a crash)."""
    pv = pair.protocol_version
    levels = MAX_TYPE_DEPTH + 1
    query = f"SELECT v FROM cc_deep{levels} WHERE k = 1"
    assert pair.plain.execute(query).one().v == nested_value(levels)
    body = raw.body(pv, query)
    with pytest.raises(TypeTooDeepError) as info:
        cqlcodec.decode_result(body, pv)
    assert isinstance(info.value, cqlcodec.UnsupportedTypeError)
    ps = pair.plain.prepare(query)
    assert ps.result_metadata is not None
    with pytest.raises(cqlcodec.UnsupportedTypeError):
        cqlcodec.driver.cql_type_of(ps.result_metadata[0][3])


def i32(n: int) -> bytes:
    return n.to_bytes(4, "big", signed=True)
