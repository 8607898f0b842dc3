"""cqlcodec inside the driver against a real Cassandra 5: every value read or written
through a session with cqlcodec installed is compared with the driver alone."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest
from cassandra.cluster import ResultSet, Session
from cassandra.cqltypes import CassandraType, Int32Type, UTF8Type
from cassandra.policies import ColDesc, ColumnEncryptionPolicy
from cassandra.query import UNSET_VALUE, BatchStatement, SimpleStatement

import cqlcodec
import cqlcodec.driver
import cqlcodec.driver.installer as installer
from cqlcodec.connection.driver_class import is_cqlcodec_class

from .compare import assert_plain_equal, assert_same, assert_same_rows
from .conftest import SessionPair, new_cluster
from .data import (
    ANN_BIG_ROWS,
    ANN_POINTS,
    CODEC_KEY_OFFSET,
    COLUMN_NAMES,
    KEYSPACE,
    PAGED_PARTITIONS,
    PAGED_ROWS_PER_PARTITION,
    everything_rows,
    unit_big_vector,
)

pytestmark = pytest.mark.integration

SELECT_EVERYTHING = "SELECT * FROM everything WHERE k = ?"


def _rows(result: ResultSet) -> list[Any]:
    return list(result)


def test_rows_are_decoded_by_cqlcodec(pair: SessionPair, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = installer._decode_rows_at

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(installer, "_decode_rows_at", counting)
    ps = pair.codec.prepare("SELECT * FROM everything WHERE k = ?")
    assert pair.codec.execute(ps, (1,)).one().k == 1
    assert pair.codec.execute("SELECT k FROM everything WHERE k = 2").one().k == 2
    assert len(calls) == 2
    assert pair.plain.execute("SELECT k FROM everything WHERE k = 2").one().k == 2
    assert len(calls) == 2


def test_installed_handler(pair: SessionPair) -> None:
    assert cqlcodec.driver.installed_options(pair.codec) is not None
    assert cqlcodec.driver.installed_options(pair.plain) is None
    assert pair.codec.client_protocol_handler is not pair.plain.client_protocol_handler
    ps = pair.codec.prepare("SELECT k FROM everything WHERE k = ?")
    assert isinstance(ps, cqlcodec.driver.CqlcodecPreparedStatement)


@pytest.mark.parametrize("key", [1, 2, 3])
def test_every_type_prepared(pair: SessionPair, key: int) -> None:
    plain_ps = pair.plain.prepare(SELECT_EVERYTHING)
    codec_ps = pair.codec.prepare(SELECT_EVERYTHING)
    for _round in range(2):  # the second execution reuses cqlcodec's cached Prepared
        expected = _rows(pair.plain.execute(plain_ps, (key,)))
        actual = _rows(pair.codec.execute(codec_ps, (key,)))
        assert len(expected) == 1
        assert_same_rows(expected, actual, f"prepared k={key}")


@pytest.mark.parametrize("key", [1, 2, 3])
def test_every_type_unprepared(pair: SessionPair, key: int) -> None:
    query = f"SELECT * FROM everything WHERE k = {key}"
    expected = _rows(pair.plain.execute(query))
    actual = _rows(pair.codec.execute(SimpleStatement(query)))
    assert_same_rows(expected, actual, f"unprepared k={key}")


def test_every_type_full_scan(pair: SessionPair) -> None:
    expected = _rows(pair.plain.execute("SELECT * FROM everything"))
    actual = _rows(pair.codec.execute("SELECT * FROM everything"))
    assert len(expected) >= 3
    assert_same_rows(sorted(expected, key=lambda r: r.k), sorted(actual, key=lambda r: r.k),
                     "full scan")


def _insert_cql() -> str:
    return (f"INSERT INTO everything (k, {', '.join(COLUMN_NAMES)}) "
            f"VALUES (?, {', '.join('?' for _n in COLUMN_NAMES)})")


def test_bind_bytes_equal_driver(pair: SessionPair) -> None:
    plain_ps = pair.plain.prepare(_insert_cql())
    codec_ps = pair.codec.prepare(_insert_cql())
    for row in everything_rows():
        values = [row["k"]] + [row.get(n) for n in COLUMN_NAMES]
        expected = plain_ps.bind(values)
        actual = codec_ps.bind(values)
        for name, e, a in zip(["k", *COLUMN_NAMES], expected.values, actual.values):
            assert e == a, f"k={row['k']} column {name}: {a!r} != {e!r}"
        assert actual.routing_key == expected.routing_key
        assert actual.raw_values == values


def test_written_by_cqlcodec_reads_the_same(pair: SessionPair) -> None:
    codec_insert = pair.codec.prepare(_insert_cql())
    by_name = pair.codec.prepare(
        f"INSERT INTO everything (k, {', '.join(COLUMN_NAMES)}) "
        f"VALUES (:k, {', '.join(':' + n for n in COLUMN_NAMES)})")
    offset = CODEC_KEY_OFFSET + 10 * pair.protocol_version
    for row in everything_rows():
        pair.codec.execute(codec_insert, [row["k"] + offset] + [row.get(n) for n in COLUMN_NAMES])
        named = {n: row[n] for n in COLUMN_NAMES if row.get(n) is not None}
        named["k"] = row["k"] + offset + 5
        pair.codec.execute(by_name, named)  # missing names are UNSET
    select = pair.plain.prepare(SELECT_EVERYTHING)
    for row in everything_rows():
        original = _rows(pair.plain.execute(select, (row["k"],)))
        for copy_key in (row["k"] + offset, row["k"] + offset + 5):
            copy = _rows(pair.plain.execute(select, (copy_key,)))
            assert len(copy) == 1, copy_key
            for name in COLUMN_NAMES:
                assert_same(getattr(original[0], name), getattr(copy[0], name),
                            f"k={copy_key} {name}")


def test_unset_and_null(pair: SessionPair) -> None:
    session = pair.codec
    key = 500 + pair.protocol_version
    insert = session.prepare("INSERT INTO everything (k, a_int, a_text, l_int) VALUES (?, ?, ?, ?)")
    session.execute(insert, (key, 1, "kept", [1]))
    session.execute(insert, (key, UNSET_VALUE, cqlcodec.UNSET, None))
    session.execute(insert, [key])  # missing trailing values are UNSET on v4+
    session.execute(insert, {"k": key, "a_int": 5})  # missing names are UNSET
    row = pair.plain.execute("SELECT a_int, a_text, l_int FROM everything WHERE k = %s",
                             (key,)).one()
    assert (row.a_int, row.a_text, row.l_int) == (5, "kept", None)
    with pytest.raises(ValueError):
        insert.bind((UNSET_VALUE, 1, "x", None))  # the partition key cannot be UNSET
    with pytest.raises(TypeError) as info:  # the driver's own error, after cqlcodec's
        insert.bind((key, "not an int", "x", None))
    assert "a_int" in str(info.value)
    context = info.value.__context__
    while context is not None and not isinstance(context, cqlcodec.BindError):
        context = context.__context__
    assert context is not None and "a_int" in str(context)
    with pytest.raises(ValueError):
        insert.bind((key, 1, "x", None, "one too many"))


def test_routing_key_composite(pair: SessionPair) -> None:
    query = "INSERT INTO composite (a, b, c, v) VALUES (?, ?, ?, ?)"
    plain_ps, codec_ps = pair.plain.prepare(query), pair.codec.prepare(query)
    values = (7, "seven", 1, "x")
    assert codec_ps.bind(values).routing_key == plain_ps.bind(values).routing_key
    pair.codec.execute(codec_ps, values)
    select = "SELECT * FROM composite WHERE b = ? AND a = ?"
    plain_sel, codec_sel = pair.plain.prepare(select), pair.codec.prepare(select)
    assert codec_sel.bind(("seven", 7)).routing_key == plain_sel.bind(("seven", 7)).routing_key
    assert_same_rows(_rows(pair.plain.execute(plain_sel, ("seven", 7))),
                     _rows(pair.codec.execute(codec_sel, ("seven", 7))), "composite")


def _read_pages(session: Session, statement: Any, params: Any) -> tuple[list[Any], int]:
    result = session.execute(statement, params)
    rows: list[Any] = []
    pages = 0
    while True:
        pages += 1
        rows.extend(result.current_rows)
        if not result.has_more_pages:
            return rows, pages
        result.fetch_next_page()


@pytest.mark.parametrize("prepared", [True, False], ids=["prepared", "unprepared"])
def test_paging(pair: SessionPair, prepared: bool) -> None:
    cql = "SELECT * FROM paged"
    expected_rows = PAGED_PARTITIONS * PAGED_ROWS_PER_PARTITION
    results = []
    for session in (pair.plain, pair.codec):
        stmt: Any = session.prepare(cql) if prepared else SimpleStatement(cql)
        stmt.fetch_size = 37
        rows, pages = _read_pages(session, stmt, None)
        assert len(rows) == expected_rows
        assert pages == math.ceil(expected_rows / 37) or pages == math.ceil(expected_rows / 37) + 1
        results.append(rows)
    assert_same_rows(results[0], results[1], "paged")
    # the clustering order is descending (ReversedType in the metadata)
    first = [r.c for r in results[1] if r.p == results[1][0].p]
    assert first == sorted(first, reverse=True)


def test_paging_state_resume(pair: SessionPair) -> None:
    ps = pair.codec.prepare("SELECT * FROM paged WHERE p = ?")
    ps.fetch_size = 25
    first = pair.codec.execute(ps, (1,))
    state = first.paging_state
    assert state is not None and first.has_more_pages
    plain_ps = pair.plain.prepare("SELECT * FROM paged WHERE p = ?")
    plain_ps.fetch_size = 25
    resumed_codec = pair.codec.execute(ps, (1,), paging_state=state).current_rows
    resumed_plain = pair.plain.execute(plain_ps, (1,), paging_state=state).current_rows
    assert_same_rows(resumed_plain, resumed_codec, "resumed page")
    assert len(resumed_codec) == 25


def test_counters_and_lwt(pair: SessionPair) -> None:
    assert_same_rows(sorted(_rows(pair.plain.execute("SELECT * FROM counters"))),
                     sorted(_rows(pair.codec.execute("SELECT * FROM counters"))), "counters")
    key = 600 + pair.protocol_version
    lwt = "INSERT INTO everything (k, a_text) VALUES (?, ?) IF NOT EXISTS"
    codec_ps = pair.codec.prepare(lwt)
    first = pair.codec.execute(codec_ps, (key, "first")).one()
    second = pair.codec.execute(codec_ps, (key, "second")).one()
    assert first[0] is True and second[0] is False
    plain_second = pair.plain.execute(pair.plain.prepare(lwt), (key, "third")).one()
    assert_same(plain_second, second, "lwt")
    # the driver's factory runs with the collector held off, and still counts as its own
    applied = pair.codec.execute(codec_ps, (key, "fourth"))
    assert applied.was_applied is False
    assert applied.response_future.row_factory == pair.plain.execute(
        "SELECT k FROM everything WHERE k = 1").response_future.row_factory


def test_an_applications_row_factory_is_left_as_it_is(pair: SessionPair) -> None:
    from cassandra.cluster import ExecutionProfile

    def keys(names: Any, rows: Any) -> Any:
        return [row[0] for row in rows]

    name = f"cqlcodec_keys_v{pair.protocol_version}"
    if name not in pair.codec.cluster.profile_manager.profiles:
        pair.codec.cluster.add_execution_profile(name, ExecutionProfile(row_factory=keys))
    result = pair.codec.execute("SELECT k FROM everything WHERE k = 2", execution_profile=name)
    assert result.response_future.row_factory is keys
    assert list(result) == [2]


def test_batch(pair: SessionPair) -> None:
    ps = pair.codec.prepare("INSERT INTO everything (k, a_date, s_date) VALUES (?, ?, ?)")
    batch = BatchStatement()
    key = 700 + 10 * pair.protocol_version
    for i in range(3):
        batch.add(ps, (key + i, everything_rows()[0]["a_date"], {everything_rows()[1]["a_date"]}))
    pair.codec.execute(batch)
    rows = _rows(pair.plain.execute(f"SELECT k, a_date, s_date FROM everything WHERE k IN "
                                    f"({key}, {key + 1}, {key + 2})"))
    assert len(rows) == 3
    for row in rows:
        assert str(row.a_date) == "2024-02-29"
        assert [d.days_from_epoch for d in row.s_date] == [-1_000_000]


def _ann_expected(query: list[float], limit: int) -> list[int]:
    def dist(k: int) -> float:
        return sum((a - b) ** 2 for a, b in zip(ANN_POINTS[k], query))
    return sorted(ANN_POINTS, key=lambda k: (dist(k), k))[:limit]


@pytest.mark.parametrize("query", [[2.1, 3.2, 0.9], [0.0, 0.0, 0.0], [4.4, 4.9, 2.1]])
def test_ann_nearest(pair: SessionPair, query: list[float]) -> None:
    expected_keys = _ann_expected(query, 4)
    cql = "SELECT k, v, label FROM ann ORDER BY v ANN OF ? LIMIT 4"
    literal = f"SELECT k, v, label FROM ann ORDER BY v ANN OF {query} LIMIT 4"
    plain_rows = _rows(pair.plain.execute(pair.plain.prepare(cql), (query,)))
    codec_rows = _rows(pair.codec.execute(pair.codec.prepare(cql), (query,)))
    codec_literal = _rows(pair.codec.execute(literal))
    assert_same_rows(plain_rows, codec_rows, "ann prepared")
    assert_same_rows(plain_rows, codec_literal, "ann unprepared")
    dists = [sum((a - b) ** 2 for a, b in zip(r.v, query)) for r in codec_rows]
    expected_dists = sorted(sum((a - b) ** 2 for a, b in zip(ANN_POINTS[k], query))
                            for k in expected_keys)
    assert dists == pytest.approx(expected_dists)
    assert {r.k for r in codec_rows} <= set(ANN_POINTS)
    assert codec_rows[0].k == expected_keys[0] or dists[0] == dists[1]


def test_ann_1536(pair: SessionPair) -> None:
    cql = "SELECT k, v FROM ann_big ORDER BY v ANN OF ? LIMIT 3"
    for target in (0, 5, ANN_BIG_ROWS - 1):
        query = unit_big_vector(target)
        codec_rows = _rows(pair.codec.execute(pair.codec.prepare(cql), (query,)))
        plain_rows = _rows(pair.plain.execute(pair.plain.prepare(cql), (query,)))
        assert codec_rows[0].k == target
        assert codec_rows[0].v == query
        assert_same_rows(plain_rows, codec_rows, "ann 1536")


def test_plain_values_and_numpy(plain_pair: SessionPair) -> None:
    numpy = pytest.importorskip("numpy")
    plain_ps = plain_pair.plain.prepare("SELECT * FROM everything WHERE k = ?")
    codec_ps = plain_pair.codec.prepare("SELECT * FROM everything WHERE k = ?")
    for key in (1, 2, 3):
        expected = plain_pair.plain.execute(plain_ps, (key,)).one()
        actual = plain_pair.codec.execute(codec_ps, (key,)).one()
        for name in ("k", *COLUMN_NAMES):
            assert_plain_equal(getattr(expected, name), getattr(actual, name), f"k={key} {name}")
    row = plain_pair.codec.execute(codec_ps, (1,)).one()
    assert isinstance(row.v_float_big, numpy.ndarray) and row.v_float_big.shape == (1536,)
    assert isinstance(row.v_text2, list)
    assert isinstance(row.s_text, set) and isinstance(row.m_text_int, dict)


def test_registered_user_type(schema: None) -> None:
    class Address:
        def __init__(self, street: str | None = None, zip: int | None = None,
                     tags: Any = None) -> None:
            self.street, self.zip, self.tags = street, zip, tags

    sessions: list[Session] = []
    clusters = [new_cluster(5), new_cluster(5)]
    try:
        cqlcodec.driver.install(clusters[1])
        for cluster in clusters:
            cluster.register_user_type(KEYSPACE, "address", Address)
            sessions.append(cluster.connect(KEYSPACE))
        ps = [s.prepare("SELECT udt_list, udt_map, tup_nested FROM everything WHERE k = ?")
              for s in sessions]
        expected = sessions[0].execute(ps[0], (1,)).one()
        actual = sessions[1].execute(ps[1], (1,)).one()
        assert type(actual.udt_list[0]) is Address
        assert_same(expected, actual, "registered udt")
        # binding an instance of the registered class
        insert = sessions[1].prepare("INSERT INTO everything (k, udt_list) VALUES (?, ?)")
        sessions[1].execute(insert, (800, [Address("Rue", 75000, {"fr"})]))
        back = sessions[0].execute("SELECT udt_list FROM everything WHERE k = 800").one()
        assert (back.udt_list[0].street, back.udt_list[0].zip, set(back.udt_list[0].tags)) == (
            "Rue", 75000, {"fr"})
    finally:
        for cluster in clusters:
            cluster.shutdown()


def test_install_session_and_options(schema: None) -> None:
    cluster = new_cluster(4)
    try:
        session = cluster.connect(KEYSPACE)
        cqlcodec.driver.install(session, plain_values=True)
        ps = session.prepare("SELECT s_text FROM everything WHERE k = 1")
        assert session.execute(ps).one().s_text == {"a", "b", "c"}
        cqlcodec.driver.install(session)  # switch back to the driver's values
        value = session.execute(ps).one().s_text
        assert type(value).__name__ == "SortedSet" and list(value) == ["a", "b", "c"]
        options = cqlcodec.driver.installed_options(session)
        assert options is not None and not options.plain_values
    finally:
        cluster.shutdown()


def test_refuses_unknown_driver_version(monkeypatch: pytest.MonkeyPatch) -> None:
    import cassandra

    monkeypatch.setattr(cassandra, "__version__", "3.99.0")
    cluster = new_cluster(4)
    with pytest.raises(cqlcodec.driver.UnsupportedDriverError) as info:
        cqlcodec.driver.install(cluster)
    assert isinstance(info.value, cqlcodec.CodecError) and "3.99.0" in str(info.value)


def test_async_and_concurrent(pair: SessionPair) -> None:
    ps = pair.codec.prepare("SELECT k, l_int FROM everything WHERE k = ?")
    futures = [pair.codec.execute_async(ps, (1 + i % 3,)) for i in range(60)]
    results: list[Callable[[], Any]] = [f.result for f in futures]
    for i, get in enumerate(results):
        row = get().one()
        assert row.k == 1 + i % 3


def test_schema_change_refreshes_metadata(pair: SessionPair) -> None:
    table = f"evolving_v{pair.protocol_version}"
    pair.plain.execute(f"DROP TABLE IF EXISTS {table}", timeout=60)
    pair.plain.execute(f"CREATE TABLE {table} (k int PRIMARY KEY, a int)", timeout=60)
    pair.plain.execute(f"INSERT INTO {table} (k, a) VALUES (1, 10)")
    select = f"SELECT * FROM {table} WHERE k = ?"
    statements = [(s, s.prepare(select)) for s in (pair.plain, pair.codec)]
    before = [s.execute(ps, (1,)).one() for s, ps in statements]
    assert_same(before[0], before[1], "before ALTER")
    pair.plain.execute(f"ALTER TABLE {table} ADD b set<text>", timeout=60)
    pair.plain.execute(f"UPDATE {table} SET b = {{'x', 'y'}} WHERE k = 1")
    for _round in range(2):
        after = [s.execute(ps, (1,)).one() for s, ps in statements]
        assert after[1].b is not None and list(after[1].b) == ["x", "y"]
        assert_same(after[0], after[1], "after ALTER")


class XorPolicy(ColumnEncryptionPolicy):
    """A toy column-encryption policy (XOR and a marker byte) for the hook's plumbing."""

    def __init__(self, columns: dict[ColDesc, type[CassandraType]]) -> None:
        self.columns = columns

    def encrypt(self, coldesc: ColDesc, obj_bytes: bytes) -> bytes:
        return bytes(b ^ 0x5A for b in obj_bytes) + b"!"

    def decrypt(self, coldesc: ColDesc, encrypted_bytes: bytes) -> bytes:
        assert encrypted_bytes.endswith(b"!"), encrypted_bytes
        return bytes(b ^ 0x5A for b in encrypted_bytes[:-1])

    def contains_column(self, coldesc: ColDesc) -> bool:
        return coldesc in self.columns

    def column_type(self, coldesc: ColDesc) -> type[CassandraType]:
        return self.columns[coldesc]


def test_column_encryption_policy(schema: None) -> None:
    if cqlcodec.driver.driver_name() == "scylla-driver":
        pytest.skip("scylla-driver disables column encryption policies (its issue 365)")
    policy = XorPolicy({ColDesc(KEYSPACE, "secrets", "s"): UTF8Type,
                        ColDesc(KEYSPACE, "secrets", "n"): Int32Type})
    clusters = [new_cluster(5, column_encryption_policy=policy) for _i in range(2)]
    clusters.append(new_cluster(5))
    try:
        cqlcodec.driver.install(clusters[1])
        plain, codec, no_policy = (c.connect(KEYSPACE) for c in clusters)
        plain.execute("CREATE TABLE IF NOT EXISTS secrets (k int PRIMARY KEY, s blob, n blob, "
                      "clear text)", timeout=60)
        insert = "INSERT INTO secrets (k, s, n, clear) VALUES (?, ?, ?, ?)"
        plain.execute(plain.prepare(insert), (1, "by the driver", 7, "c1"))
        codec.execute(codec.prepare(insert), (2, "by cqlcodec ✓", -8, "c2"))
        raw = no_policy.execute("SELECT s, n FROM secrets WHERE k = 2").one()
        assert raw.s.endswith(b"!") and raw.n.endswith(b"!")  # stored encrypted
        select = "SELECT * FROM secrets WHERE k IN (1, 2)"
        expected = _rows(plain.execute(plain.prepare(select)))
        assert [(r.k, r.s, r.n) for r in expected] == [(1, "by the driver", 7),
                                                      (2, "by cqlcodec ✓", -8)]
        assert_same_rows(expected, _rows(codec.execute(codec.prepare(select))), "encrypted")
        assert_same_rows(expected, _rows(codec.execute(select)), "encrypted unprepared")
    finally:
        for cluster in clusters:
            cluster.shutdown()


def test_metadata_skipped_on_v5_and_parsed_once(pair: SessionPair,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A prepared statement's answers leave their metadata out on v5 (skip-metadata with
    the result metadata id), also after ALTER TABLE ADD and DROP: the first answer after
    each carries the new columns (METADATA_CHANGED), its rows and the statement's columns
    are the new ones at once, and the next answers skip them again. On v4 the metadata
    comes with every answer and the driver parses the same column specs once."""
    table = f"skipping_v{pair.protocol_version}"
    pair.plain.execute(f"DROP TABLE IF EXISTS {table}", timeout=60)
    pair.plain.execute(f"CREATE TABLE {table} (k int PRIMARY KEY, a int, c text)", timeout=60)
    pair.plain.execute(f"INSERT INTO {table} (k, a, c) VALUES (1, 10, 'x')")
    carried: list[bool] = []  # whether each of the codec session's answers had metadata
    read_metadata = installer._read_metadata

    def spy(msg: Any, *args: Any) -> Any:
        out = read_metadata(msg, *args)
        carried.append(out[0] is not None)
        return out

    monkeypatch.setattr(installer, "_read_metadata", spy)
    parses: list[int] = []
    message_class: Any = pair.codec.client_protocol_handler.message_types_by_opcode[0x08]
    driver_parse = message_class.recv_results_metadata

    def counting(self: Any, *args: Any) -> Any:
        parses.append(1)
        return driver_parse(self, *args)

    monkeypatch.setattr(message_class, "recv_results_metadata", counting)
    select = f"SELECT * FROM {table} WHERE k = ?"
    plain_ps, codec_ps = pair.plain.prepare(select), pair.codec.prepare(select)
    v5 = pair.protocol_version == 5 and is_cqlcodec_class(
        pair.codec_cluster.connection_class)

    def same_rows(what: str) -> Any:
        expected = pair.plain.execute(plain_ps, (1,)).one()
        actual = pair.codec.execute(codec_ps, (1,)).one()
        assert_same(expected, actual, what)
        assert type(actual).__name__ == "Row" and actual._fields == expected._fields
        return actual

    for _round in range(3):
        same_rows("before ALTER")
    assert carried == ([False] * 3 if v5 else [True] * 3)
    assert len(parses) <= 1
    changes = [(f"ALTER TABLE {table} ADD b set<text>", ("k", "a", "b", "c")),
               (f"ALTER TABLE {table} DROP a", ("k", "b", "c"))]
    for change, fields in changes:
        pair.plain.execute(change, timeout=60)
        pair.plain.execute(f"UPDATE {table} SET b = {{'y', 'z'}} WHERE k = 1")
        carried.clear()
        parses.clear()
        for _round in range(3):
            row = same_rows(change)
            assert row._fields == fields and list(row.b) == ["y", "z"]
            if v5:  # v4 has no metadata id: the statement keeps its columns, as the driver's
                assert [c[2] for c in codec_ps.result_metadata or []] == list(fields)
        assert carried == ([True, False, False] if v5 else [True] * 3)
        assert len(parses) == 1
