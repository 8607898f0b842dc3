"""Against a real Cassandra 5.0.9: tuple and UDT values shorter than their type, as the
server stores and returns them, read in every API without refusal.

* a UDT row written before ``ALTER TYPE ... ADD`` of 30 fields: 1 of 31 fields (frozen
  and not);
* a 20-component tuple written with 1..20 components;
* a ``tuple<int x 40>`` bound with one component.

Each reads through ``decode_result``, ``decode_columns`` (the raw RESULT body the server
sent), ``execute_columns`` and driver mode (as the driver alone reads it), after which a
second query on the same session proves the connection stayed up.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import cqlcodec
import cqlcodec.driver

from .compare import assert_same_rows
from .conftest import SessionPair, new_cluster
from .data import KEYSPACE
from .test_compat_core import RawSessions

pytestmark = pytest.mark.integration

ADDED = 30  # fields added to the UDT after its row was written
TUPLE20 = ", ".join(["text"] * 20)
TUPLE40 = ", ".join(["int"] * 40)
QUERIES = {
    "udt": "SELECT k, u, n FROM sv_udt",
    "tuple20": "SELECT k, t FROM sv_tuple20",
    "tuple40": "SELECT k, t FROM sv_tuple40",
}


def _expected(name: str) -> dict[int, tuple[Any, ...]]:
    """Per key, the values of the short column(s), as tuples of fields."""
    if name == "udt":
        one = (7,) + (None,) * ADDED
        return {1: (one, one)}
    if name == "tuple20":
        return {k: (tuple(f"c{i}" if i < k else None for i in range(20)),) for k in range(1, 21)}
    return {1: ((5,) + (None,) * 39,)}


@pytest.fixture(scope="module")
def short_tables(schema: None) -> Iterator[None]:
    """The tables, written by the driver alone (dropped first: the UDT must be altered
    after its row was written)."""
    cluster = new_cluster(4)
    try:
        s = cluster.connect(KEYSPACE)
        for table in ("sv_udt", "sv_tuple20", "sv_tuple40"):
            s.execute(f"DROP TABLE IF EXISTS {table}", timeout=60)
        s.execute("DROP TYPE IF EXISTS sv_grown", timeout=60)
        s.execute("CREATE TYPE sv_grown (f0 int)", timeout=60)
        s.execute("CREATE TABLE sv_udt (k int PRIMARY KEY, u frozen<sv_grown>, n sv_grown)",
                  timeout=60)
        s.execute(f"CREATE TABLE sv_tuple20 (k int PRIMARY KEY, t frozen<tuple<{TUPLE20}>>)",
                  timeout=60)
        s.execute(f"CREATE TABLE sv_tuple40 (k int PRIMARY KEY, t frozen<tuple<{TUPLE40}>>)",
                  timeout=60)
        s.execute("INSERT INTO sv_udt (k, u, n) VALUES (1, {f0: 7}, {f0: 7})")
        for i in range(1, ADDED + 1):
            s.execute(f"ALTER TYPE sv_grown ADD f{i} int", timeout=60)
        insert20 = s.prepare("INSERT INTO sv_tuple20 (k, t) VALUES (?, ?)")
        for k in range(1, 21):
            s.execute(insert20, (k, tuple(f"c{i}" for i in range(k))))
        s.execute(s.prepare("INSERT INTO sv_tuple40 (k, t) VALUES (?, ?)"), (1, (5,)))
    finally:
        cluster.shutdown()
    yield


@pytest.fixture(scope="module")
def raw_sessions(short_tables: None) -> Iterator[RawSessions]:
    sessions = RawSessions()
    yield sessions
    sessions.close()


def _fields(value: Any) -> Any:
    """A UDT or tuple value (any class) as a plain tuple of its fields; None stays."""
    if value is None:
        return None
    if isinstance(value, dict):
        return tuple(value.values())
    return tuple(value)


def _check_rows(name: str, rows: list[Any], what: str) -> None:
    expected = _expected(name)
    got = {row[0]: tuple(_fields(v) for v in row[1:]) for row in rows}
    assert got == expected, what


@pytest.mark.parametrize("name", list(QUERIES))
def test_core_decodes_what_the_server_sent(pair: SessionPair, raw_sessions: RawSessions,
                                           name: str) -> None:
    pv = pair.protocol_version
    if name == "udt":  # the frozen value is stored as written: 1 of its 31 fields
        cells = raw_sessions.cells(pv, "SELECT u FROM sv_udt WHERE k = 1")
        assert cells == [(bytes.fromhex("00000004 00000007"),)]
    if name == "tuple20":  # written with one component: stored with one
        cells = raw_sessions.cells(pv, "SELECT t FROM sv_tuple20 WHERE k = 1")
        assert cells == [(bytes.fromhex("00000002") + b"c0",)]
    if name == "tuple40":
        cells = raw_sessions.cells(pv, "SELECT t FROM sv_tuple40 WHERE k = 1")
        assert cells == [(bytes.fromhex("00000004 00000005"),)]
    body = raw_sessions.body(pv, QUERIES[name])
    result = cqlcodec.decode_result(body, pv)
    assert isinstance(result, cqlcodec.RowsResult)
    _check_rows(name, list(result.rows), f"decode_result v{pv}")
    batch = cqlcodec.decode_columns(body, pv).to_pydict()
    columns = list(batch.values())
    _check_rows(name, list(zip(*columns)), f"decode_columns v{pv}")


@pytest.mark.parametrize("name", list(QUERIES))
def test_execute_columns_reads_short_values(pair: SessionPair, short_tables: None,
                                            name: str) -> None:
    for session in (pair.plain, pair.codec):
        pages = list(cqlcodec.driver.execute_columns(session, QUERIES[name]))
        rows = [row for page in pages for row in zip(*page.to_pydict().values())]
        _check_rows(name, rows, f"execute_columns v{pair.protocol_version}")


@pytest.mark.parametrize("name", list(QUERIES))
def test_driver_mode_reads_short_values_and_keeps_the_connection(
        pair: SessionPair, short_tables: None, name: str) -> None:
    query = QUERIES[name]
    for prepared in (False, True):
        if prepared:
            expected = list(pair.plain.execute(pair.plain.prepare(query)))
            actual = list(pair.codec.execute(pair.codec.prepare(query)))
        else:
            expected = list(pair.plain.execute(query))
            actual = list(pair.codec.execute(query))
        assert_same_rows(expected, actual, f"{query} (prepared={prepared})")
        _check_rows(name, actual, f"driver mode v{pair.protocol_version}")
        # the same session (and connection) answers the next query
        assert pair.codec.execute("SELECT k FROM sv_tuple40 WHERE k = 1").one()[0] == 1
