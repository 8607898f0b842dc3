"""Driver mode against a real Cassandra 5: where cqlcodec alone and the driver alone part
ways, a session with cqlcodec installed reads and binds what the driver alone does.

Empty values and ``support_empty_values``, binding a str or other non-list values,
protocol v6 (beta) and types cqlcodec does not know (read by the driver's own code),
a malformed cell reaching the caller's future, timestamps outside ``datetime``'s range,
and statements prepared before ``install``.
"""

from __future__ import annotations

import datetime
import logging
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from cassandra import DriverException, ProtocolVersion
from cassandra import cqltypes as ct
from cassandra.cluster import Cluster, Session
from cassandra.policies import ColDesc, ColumnEncryptionPolicy
from cassandra.query import PreparedStatement

import cqlcodec
import cqlcodec.driver
import cqlcodec.driver.installer as installer

from .compare import assert_same, assert_same_rows
from .conftest import SessionPair, new_cluster
from .data import KEYSPACE

pytestmark = pytest.mark.integration

CODEC = 1000  # key offset of the rows written through cqlcodec

TABLES = [
    "CREATE TYPE IF NOT EXISTS compat_pair (x int, y bigint)",
    "CREATE TABLE IF NOT EXISTS compat_empty (k int PRIMARY KEY, i int, b bigint, t text, "
    "l list<int>, s set<int>, m map<text, int>, tu frozen<tuple<int, text>>, "
    "u frozen<compat_pair>, v vector<int, 2>)",
    "CREATE TABLE IF NOT EXISTS compat_values (k text PRIMARY KEY, a int, b int, t text)",
    "CREATE TABLE IF NOT EXISTS compat_ts (k int PRIMARY KEY, t timestamp, "
    "l list<timestamp>)",
    "CREATE TABLE IF NOT EXISTS compat_custom (k int PRIMARY KEY, "
    "lex 'org.apache.cassandra.db.marshal.LexicalUUIDType', "
    "comp 'org.apache.cassandra.db.marshal.CompositeType("
    "org.apache.cassandra.db.marshal.UTF8Type, org.apache.cassandra.db.marshal.Int32Type)')",
    f"CREATE TABLE IF NOT EXISTS compat_deep (k int PRIMARY KEY, d {'frozen<tuple<' * 32}"
    f"int{'>>' * 32})",
    "CREATE TABLE IF NOT EXISTS compat_secret (k int PRIMARY KEY, n blob)",
]
EMPTY_ROWS = [  # empty values written by the server's blobAs*() functions, at every level
    "INSERT INTO compat_empty (k, i, b, t) VALUES (1, blobAsInt(0x), blobAsBigint(0x), '')",
    "INSERT INTO compat_empty (k, l, s) VALUES (2, [blobAsInt(0x), 3], {blobAsInt(0x), 1})",
    "INSERT INTO compat_empty (k, m) VALUES (3, {'': blobAsInt(0x), 'a': 1})",
    "INSERT INTO compat_empty (k, tu, u) VALUES (4, (blobAsInt(0x), ''), "
    "{x: blobAsInt(0x), y: blobAsBigint(0x)})",
    "INSERT INTO compat_empty (k, i, v) VALUES (5, 7, [1, 2])",
]
# outside datetime's years 1-9999, and the extremes of the 64-bit range
OUT_OF_RANGE_MS = [-62135596800001, 253402300800000, 2**63 - 1, -(2**63)]


def deep_value(leaf: int) -> Any:
    """``leaf`` inside 32 one-element tuples."""
    value: Any = leaf
    for _level in range(32):
        value = (value,)
    return value


@pytest.fixture(scope="module")
def compat_schema(schema: None) -> Iterator[None]:
    cluster = new_cluster(4)
    try:
        session = cluster.connect(KEYSPACE)
        for ddl in TABLES:
            session.execute(ddl, timeout=60)
        for insert in EMPTY_ROWS:
            session.execute(insert)
        for k, ms in enumerate(OUT_OF_RANGE_MS):
            session.execute(f"INSERT INTO compat_ts (k, t, l) VALUES ({k}, {ms}, [{ms}, 0])")
        # composite ('abc', 7): per component a length, the bytes and an end-of-component byte
        composite = "0003" + b"abc".hex() + "00" + "0004" + "00000007" + "00"
        session.execute("INSERT INTO compat_custom (k, lex, comp) VALUES "
                        f"(1, 0x00112233445566778899aabbccddeeff, 0x{composite})")
        session.execute(session.prepare("INSERT INTO compat_deep (k, d) VALUES (1, ?)"),
                        (deep_value(5),))
    finally:
        cluster.shutdown()
    yield


@pytest.fixture(scope="module")
def compat(compat_schema: None, pair: SessionPair) -> SessionPair:
    """The v4 / v5 session pair, with the tables of this module."""
    return pair


def rows(session: Session, query: str, *values: Any, prepared: bool = True) -> list[Any]:
    if prepared:
        return list(session.execute(session.prepare(query), values))
    # the driver formats the values into the text of an unprepared query
    return list(session.execute(query.replace("?", "%s"), values or None))


def outcome(session: Session, query: str, values: Any) -> Any:
    """The rows a prepared ``query`` with ``values`` reads, or its exception's type."""
    try:
        return list(session.execute(session.prepare(query), values))
    except Exception as exc:
        return type(exc)


class Counting:
    """Counts the RESULT messages cqlcodec decodes and the binds it performs."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.decoded = 0
        self.bound = 0
        real_decode = installer._decode_rows_at
        real_bind = cqlcodec.driver.CqlcodecBoundStatement.bind

        def decode(*args: Any, **kwargs: Any) -> Any:
            self.decoded += 1
            return real_decode(*args, **kwargs)

        def bind(statement: Any, values: Any) -> Any:
            self.bound += 1
            return real_bind(statement, values)
        monkeypatch.setattr(installer, "_decode_rows_at", decode)
        monkeypatch.setattr(cqlcodec.driver.CqlcodecBoundStatement, "bind", bind)


@pytest.fixture
def fresh_log(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(installer, "_logged", set())


def codec_log(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "cqlcodec.driver"]


# --------------------------------------------------------------------------- empty values

SELECT_EMPTY = "SELECT * FROM compat_empty WHERE k IN (1, 2, 3, 4, 5)"


@pytest.mark.parametrize("switched", [(), (ct.Int32Type,), (ct.LongType, ct.UTF8Type),
                                      (ct._CassandraType,)],
                         ids=["off", "int", "bigint+text", "every type"])
def test_empty_values(compat: SessionPair, switched: tuple[type[ct._CassandraType], ...],
                      monkeypatch: pytest.MonkeyPatch) -> None:
    for cls in switched:
        monkeypatch.setattr(cls, "support_empty_values", True)
    counting = Counting(monkeypatch)
    for prepared in (True, False):
        expected = rows(compat.plain, SELECT_EMPTY, prepared=prepared)
        actual = rows(compat.codec, SELECT_EMPTY, prepared=prepared)
        assert len(expected) == 5
        assert_same_rows(expected, actual, f"empty values prepared={prepared}")
        by_key = {r.k: r for r in actual}
        assert (by_key[1].i is ct.EMPTY) == ct.Int32Type.support_empty_values
        assert (by_key[4].u.y is ct.EMPTY) == ct.LongType.support_empty_values
        assert by_key[1].t == ""
    # decoded by cqlcodec exactly when no switch applies to these columns
    assert (counting.decoded == 2) == (not switched)


def test_empty_values_switched_after_prepare(compat: SessionPair,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    statements = [(s, s.prepare("SELECT i, l, u FROM compat_empty WHERE k = ?"))
                  for s in (compat.plain, compat.codec)]
    for switch in (False, True, False):
        monkeypatch.setattr(ct.Int32Type, "support_empty_values", switch)
        for k in (1, 2, 4):
            expected, actual = (list(s.execute(ps, (k,))) for s, ps in statements)
            assert_same_rows(expected, actual, f"k={k} switch={switch}")
        row = compat.codec.execute(statements[1][1], (2,)).one()
        assert (row.l[0] is ct.EMPTY) is switch


# --------------------------------------------------------------------------- bind values

def _one_value() -> Iterator[str]:
    yield "gen"


BIND_CASES: list[tuple[str, str, Callable[[], Any]]] = [
    ("a str as the values of one marker",
     "INSERT INTO compat_values (k, t) VALUES (?, 'one marker')", lambda: "a"),
    ("a str of two markers", "INSERT INTO compat_values (k, t, a) VALUES (?, ?, 1)",
     lambda: "xy"),
    ("bytes as ints", "INSERT INTO compat_values (k, a, b) VALUES ('bytes', ?, ?)",
     lambda: b"\x01\x02"),
    ("a set", "INSERT INTO compat_values (k, a) VALUES ('set', ?)", lambda: {5}),
    ("a range", "INSERT INTO compat_values (k, a, b) VALUES ('range', ?, ?)",
     lambda: range(3, 5)),
    ("a dict with extra keys", "INSERT INTO compat_values (k, a, t) VALUES (?, ?, ?)",
     lambda: {"k": "dict", "a": 1, "t": "x", "other": object()}),
    ("a bool for an int", "INSERT INTO compat_values (k, a) VALUES ('bool', ?)", lambda: (True,)),
    ("an int out of range", "INSERT INTO compat_values (k, a) VALUES ('big', ?)",
     lambda: (2**40,)),
    ("a str for an int", "INSERT INTO compat_values (k, a) VALUES ('str', ?)", lambda: ("1",)),
    ("an int for a text", "INSERT INTO compat_values (k, t) VALUES (?, 'int')", lambda: (1,)),
    ("an int", "INSERT INTO compat_values (k, t) VALUES (?, 'int')", lambda: 1),
    ("too many", "INSERT INTO compat_values (k, t) VALUES (?, 'many')", lambda: ("a", "b")),
    ("a generator", "INSERT INTO compat_values (k, t) VALUES (?, 'gen')", _one_value),
]


@pytest.mark.parametrize("case", BIND_CASES, ids=[c[0] for c in BIND_CASES])
def test_bind_values_as_the_driver(compat: SessionPair,
                                   case: tuple[str, str, Callable[[], Any]]) -> None:
    _name, query, make_values = case
    outcomes, written = [], []
    for session in (compat.plain, compat.codec):
        compat.plain.execute("TRUNCATE compat_values", timeout=60)
        outcomes.append(outcome(session, query, make_values()))
        written.append(rows(compat.plain, "SELECT * FROM compat_values", prepared=False))
    assert outcomes[0] == outcomes[1]
    assert_same_rows(written[0], written[1], "the rows written")


def test_bind_a_str_to_select(compat: SessionPair) -> None:
    compat.plain.execute("INSERT INTO compat_values (k, a) VALUES ('a', 11)")
    query = "SELECT a FROM compat_values WHERE k = ?"
    expected = list(compat.plain.execute(compat.plain.prepare(query), "a"))
    actual = list(compat.codec.execute(compat.codec.prepare(query), "a"))
    assert [r.a for r in actual] == [r.a for r in expected] == [11]


# --------------------------------------------------------------------------- driver's path

@pytest.fixture
def v6_clusters(compat_schema: None) -> Iterator[tuple[Cluster, Cluster]]:
    if 6 not in ProtocolVersion.SUPPORTED_VERSIONS:
        pytest.skip(f"{cqlcodec.driver.driver_name()} does not speak protocol v6 (beta)")
    clusters = (new_cluster(6, allow_beta_protocol_version=True),
                new_cluster(6, allow_beta_protocol_version=True))
    yield clusters
    for c in clusters:
        c.shutdown()


def test_protocol_v6_beta_goes_the_driver_way(v6_clusters: tuple[Cluster, Cluster],
                                              monkeypatch: pytest.MonkeyPatch,
                                              caplog: pytest.LogCaptureFixture,
                                              fresh_log: None) -> None:
    plain_cluster, codec_cluster = v6_clusters
    cqlcodec.driver.install(codec_cluster)
    with caplog.at_level(logging.WARNING, logger="cqlcodec.driver"):
        plain, codec = plain_cluster.connect(KEYSPACE), codec_cluster.connect(KEYSPACE)
        assert codec_cluster.protocol_version == 6
        counting = Counting(monkeypatch)
        for query in ["SELECT * FROM everything WHERE k = ?", SELECT_EMPTY]:
            args = (1,) if "?" in query else ()
            for prepared in (True, False):
                expected = rows(plain, query, *args, prepared=prepared)
                actual = rows(codec, query, *args, prepared=prepared)
                assert expected
                assert_same_rows(expected, actual, f"v6 {query} prepared={prepared}")
        insert = codec.prepare("INSERT INTO compat_values (k, a, t) VALUES (?, ?, ?)")
        codec.execute(insert, ("v6", 6, "six"))
        assert plain.execute("SELECT a, t FROM compat_values WHERE k = 'v6'").one() == (6, "six")
    assert counting.decoded == 0
    logged = codec_log(caplog)
    assert any("protocol v6" in m for m in logged)
    assert len(logged) == len(set(logged)) <= 2  # decoding and encoding, once each


class LexicalUUIDType(ct._CassandraType):
    """An application's driver class for a custom type Cassandra has and cqlcodec
    does not know (the driver alone returns raw bytes for it)."""

    typename = "org.apache.cassandra.db.marshal.LexicalUUIDType"

    @staticmethod
    def deserialize(byts: bytes, protocol_version: int) -> uuid.UUID:
        return uuid.UUID(bytes=byts)

    @staticmethod
    def serialize(val: uuid.UUID, protocol_version: int) -> bytes:
        return val.bytes


def test_types_cqlcodec_does_not_know(compat: SessionPair, monkeypatch: pytest.MonkeyPatch,
                                      caplog: pytest.LogCaptureFixture,
                                      fresh_log: None) -> None:
    query = "SELECT * FROM compat_custom WHERE k = ?"
    # CompositeType: whichever way it is read, it reads as the driver reads it
    for prepared in (True, False):
        assert_same_rows(rows(compat.plain, query, 1, prepared=prepared),
                         rows(compat.codec, query, 1, prepared=prepared), "composite")
    registry: dict[str, type[ct._CassandraType]] = getattr(ct, "_casstypes")
    monkeypatch.setitem(registry, "LexicalUUIDType", LexicalUUIDType)
    with caplog.at_level(logging.WARNING, logger="cqlcodec.driver"):
        for prepared in (True, False, True):
            expected = rows(compat.plain, "SELECT k, lex FROM compat_custom", prepared=prepared)
            actual = rows(compat.codec, "SELECT k, lex FROM compat_custom", prepared=prepared)
            assert actual[0].lex == uuid.UUID("00112233-4455-6677-8899-aabbccddeeff")
            assert_same_rows(expected, actual, f"registered custom class prepared={prepared}")
        insert = compat.codec.prepare("INSERT INTO compat_custom (k, lex) VALUES (?, ?)")
        compat.codec.execute(insert, (2, uuid.UUID(int=5)))
        back = rows(compat.plain, "SELECT lex FROM compat_custom WHERE k = 2", prepared=False)
        assert back[0].lex == uuid.UUID(int=5)
    logged = [m for m in codec_log(caplog) if "LexicalUUIDType" in m]
    assert len(logged) == 1 and "is not one cqlcodec decodes" in logged[0]


def test_nesting_cqlcodec_refuses_in_metadata(compat: SessionPair) -> None:
    """33 levels of tuples around an int: Cassandra and the driver read it."""
    query = "SELECT * FROM compat_deep WHERE k = ?"
    for prepared in (True, False):
        expected = rows(compat.plain, query, 1, prepared=prepared)
        actual = rows(compat.codec, query, 1, prepared=prepared)
        assert_same_rows(expected, actual, f"deep prepared={prepared}")
    value = expected[0].d
    for _level in range(32):
        value = value[0]
    assert value == 5
    insert = compat.codec.prepare("INSERT INTO compat_deep (k, d) VALUES (?, ?)")
    compat.codec.execute(insert, (2, expected[0].d))
    assert_same(expected[0].d, rows(compat.plain, query, 2)[0].d, "deep written back")


# --------------------------------------------------------------------------- malformed cell

class TruncatingPolicy(ColumnEncryptionPolicy):
    """'Decrypts' the int column to 3 bytes: a malformed cell inside a real response."""

    def __init__(self) -> None:
        self.column = ColDesc(KEYSPACE, "compat_secret", "n")

    def encrypt(self, coldesc: ColDesc, obj_bytes: bytes) -> bytes:
        return obj_bytes

    def decrypt(self, coldesc: ColDesc, encrypted_bytes: bytes) -> bytes:
        return encrypted_bytes[:3]

    def contains_column(self, coldesc: ColDesc) -> bool:
        return coldesc == self.column

    def column_type(self, coldesc: ColDesc) -> type[ct._CassandraType]:
        return ct.Int32Type


def test_malformed_cell_reaches_the_future_as_the_drivers_error(compat_schema: None) -> None:
    if cqlcodec.driver.driver_name() == "scylla-driver":
        pytest.skip("scylla-driver disables column encryption policies (its issue 365), "
                    "the way to have a real response carry a malformed cell")
    setup = new_cluster(5)
    try:
        setup.connect(KEYSPACE).execute("INSERT INTO compat_secret (k, n) VALUES (1, 0x00000007)")
    finally:
        setup.shutdown()
    errors: dict[tuple[bool, bool], BaseException] = {}
    for installed in (False, True):
        for prepared in (False, True):
            # a decode failure makes the driver drop the connection: one cluster per read
            cluster = new_cluster(5, column_encryption_policy=TruncatingPolicy())
            try:
                if installed:
                    cqlcodec.driver.install(cluster)
                session = cluster.connect(KEYSPACE)
                if prepared:
                    future = session.execute_async(
                        session.prepare("SELECT n FROM compat_secret WHERE k = ?"), (1,))
                else:
                    future = session.execute_async("SELECT n FROM compat_secret WHERE k = 1")
                with pytest.raises(DriverException) as info:
                    future.result()
                errors[installed, prepared] = info.value
            finally:
                cluster.shutdown()
    for prepared in (False, True):
        # cqlcodec refuses the cell; the driver's own code reads the message again and
        # fails as it fails alone
        assert type(errors[False, prepared]) is DriverException
        error = errors[True, prepared]
        assert type(error) is DriverException and str(error) == str(errors[False, prepared])


# --------------------------------------------------------------------------- timestamps

def test_timestamps_outside_datetime(compat: SessionPair) -> None:
    query = "SELECT k, t, l FROM compat_ts WHERE k = ?"
    every = "SELECT k, t, l FROM compat_ts WHERE k IN (0, 1, 2, 3)"
    for prepared in (True, False):
        # the driver alone cannot read them (and drops the connection): its own cluster
        alone = new_cluster(compat.protocol_version)
        try:
            with pytest.raises(DriverException, match="out of range|magnitude|too large"):
                rows(alone.connect(KEYSPACE), every, prepared=prepared)
        finally:
            alone.shutdown()
        got = rows(compat.codec, every, prepared=prepared)
        epoch = datetime.datetime(1970, 1, 1)
        assert sorted((r.k, r.t, r.l) for r in got) == [
            (k, ms, [ms, epoch]) for k, ms in enumerate(OUT_OF_RANGE_MS)]
    for k, ms in enumerate(OUT_OF_RANGE_MS):
        # written back as the int it read, it is the same timestamp
        insert = compat.codec.prepare("INSERT INTO compat_ts (k, t, l) VALUES (?, ?, ?)")
        compat.codec.execute(insert, (k + CODEC, ms, [ms]))
        back = rows(compat.codec, query, k + CODEC)[0]
        assert (back.t, back.l) == (ms, [ms])
        raw = compat.plain.execute(
            f"SELECT blobAsBigint(timestampAsBlob(t)) AS ms FROM compat_ts WHERE k = {k + CODEC}"
        ).one()
        assert raw.ms == ms


# --------------------------------------------------------------------------- prepared before

QUERY = "SELECT k, a_int FROM everything WHERE k = ?"


def test_statements_prepared_before_install(compat_schema: None,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    cluster = new_cluster(5)
    try:
        early_session = cluster.connect(KEYSPACE)
        early = early_session.prepare(QUERY)
        stale = early_session.prepare("SELECT k FROM everything WHERE k = ?")
        again = early_session.prepare("SELECT k FROM everything WHERE k = ?")  # replaces stale
        assert type(early) is PreparedStatement
        cqlcodec.driver.install(cluster)
        late_session = cluster.connect(KEYSPACE)
        assert cqlcodec.driver.installed_options(early_session) is not None
        assert cqlcodec.driver.installed_options(late_session) is not None
        assert type(early) is cqlcodec.driver.CqlcodecPreparedStatement
        assert type(again) is cqlcodec.driver.CqlcodecPreparedStatement
        counting = Counting(monkeypatch)
        for session in (early_session, late_session):
            assert session.execute(early, (1,)).one().k == 1
        assert type(stale) is PreparedStatement  # not in the cluster's registry any more
        assert early_session.execute(stale, (2,)).one().k == 2
        assert type(stale) is cqlcodec.driver.CqlcodecPreparedStatement
        assert counting.bound == 3 and counting.decoded == 3
    finally:
        cluster.shutdown()


def test_statements_prepared_before_install_on_a_session(compat_schema: None) -> None:
    cluster = new_cluster(4)
    try:
        session = cluster.connect(KEYSPACE)
        early = session.prepare(QUERY)
        cqlcodec.driver.install(session)
        assert type(early) is cqlcodec.driver.CqlcodecPreparedStatement
        assert type(early.bind((1,))) is cqlcodec.driver.CqlcodecBoundStatement
        assert session.execute(early, (1,)).one().k == 1
    finally:
        cluster.shutdown()
