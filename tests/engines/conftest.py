"""Fixtures of the engine tests (cqlcodec.dask, cqlcodec.ray) against a real Cassandra
(``CQLCODEC_CASSANDRA=host:port``; skipped without it): the integration schema (every
CQL type), a bigger table for kills and timings, and the connect spec."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

ADDRESS = os.environ.get("CQLCODEC_CASSANDRA", "")
BULK_ROWS = 20_000
# a deprecation warning raised where cqlcodec calls into Dask, Ray, pandas or pyarrow (the
# warning's origin is a cqlcodec module) fails the test
OUR_CALLS_MUST_NOT_WARN = [f"error::{category}:cqlcodec"
                           for category in ("DeprecationWarning", "PendingDeprecationWarning",
                                            "FutureWarning")]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    here = os.path.dirname(__file__)
    skip = pytest.mark.skip(reason="set CQLCODEC_CASSANDRA=host:port to run (nox -s distributed / ray)")
    for item in items:
        if str(item.path).startswith(here):
            item.add_marker(pytest.mark.integration)
            for warning in OUR_CALLS_MUST_NOT_WARN:
                item.add_marker(pytest.mark.filterwarnings(warning))
            if not ADDRESS:
                item.add_marker(skip)


def host_port() -> tuple[str, int]:
    """The test server's address."""
    host, _, port = ADDRESS.rpartition(":")
    return (host or "127.0.0.1"), int(port or "9042")


def cluster_options(port: int | None = None) -> dict[str, Any]:
    """``Cluster`` keyword arguments for the test server (or a proxy port in front of it)."""
    host, server_port = host_port()
    return {"contact_points": [host], "port": port or server_port, "protocol_version": 5,
            "connect_timeout": 20, "control_connection_timeout": 20}


@pytest.fixture(scope="session")
def connect() -> dict[str, Any]:
    """The connect spec the engines get: a plain mapping of Cluster keyword arguments."""
    return cluster_options()


@pytest.fixture(scope="session")
def session(connect: dict[str, Any]) -> Iterator[Any]:
    """A driver session of the test process, with the integration schema created."""
    pytest.importorskip("pyarrow")
    from cassandra.cluster import Cluster
    from integration.data import KEYSPACE, create_schema

    cluster = Cluster(**connect)
    s = cluster.connect()
    create_schema(s)
    columns = ", ".join(f"{n} {t}" for n, t in _everything_columns())
    for ddl in [f"CREATE TABLE {KEYSPACE}.everything_copy (k int PRIMARY KEY, {columns})",
                f"CREATE TABLE {KEYSPACE}.empty (k int PRIMARY KEY, v text, n varint)",
                f"CREATE TABLE {KEYSPACE}.bulk (k bigint PRIMARY KEY, i int, f double, t text, "
                "b boolean, ts timestamp, n varint, d decimal, l list<int>, u uuid)",
                f"CREATE TABLE {KEYSPACE}.bulk_copy (k bigint PRIMARY KEY, i int, f double, t text, "
                "b boolean, ts timestamp, n varint, d decimal, l list<int>, u uuid)"]:
        s.execute(ddl, timeout=60)
    _fill_bulk(s, KEYSPACE)
    yield s
    cluster.shutdown()


def _everything_columns() -> list[tuple[str, str]]:
    from integration.data import EVERYTHING_COLUMNS

    return list(EVERYTHING_COLUMNS)


def _fill_bulk(s: Any, keyspace: str) -> None:
    import datetime
    import uuid
    from decimal import Decimal

    import numpy as np

    from cqlcodec.driver import insert_columns

    n = BULK_ROWS
    k = np.arange(n, dtype=np.int64)
    base = datetime.datetime(2024, 1, 1)
    columns = {
        "k": k, "i": (k * 7 % 1000).astype(np.int32), "f": k / 3.0,
        "t": [f"row {i} " + "x" * (i % 40) for i in range(n)], "b": k % 2 == 0,
        "ts": [base + datetime.timedelta(seconds=int(i)) for i in range(n)],
        "n": [2**80 + i if i == 12345 else i * 10**12 if i % 97 else None for i in range(n)],
        "d": [Decimal(i) / 100 for i in range(n)],
        "l": [[i, i + 1] for i in range(n)],
        "u": [uuid.UUID(int=i * 7919) for i in range(n)],
    }
    insert = s.prepare(f"INSERT INTO {keyspace}.bulk (k, i, f, t, b, ts, n, d, l, u) "
                       "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
    insert_columns(s, insert, columns, concurrency=32)


@contextmanager
def freshly_loaded(session: Any, name: str, rows: int = 5000) -> Iterator[str]:
    """A table ``(k int, v double)`` of ``rows`` rows loaded just now (so that the server
    has no size estimate for it yet); dropped afterwards. Yields its ``ks.table`` name."""
    import numpy as np

    from cqlcodec.driver import insert_columns

    table = f"{_keyspace()}.{name}"
    session.execute(f"CREATE TABLE {table} (k int PRIMARY KEY, v double)", timeout=60)
    try:
        keys = np.arange(rows, dtype=np.int32)
        insert_columns(session, session.prepare(f"INSERT INTO {table} (k, v) VALUES (?, ?)"),
                       {"k": keys, "v": keys / 2}, concurrency=32)
        yield table
    finally:
        session.execute(f"DROP TABLE {table}", timeout=60)


def _keyspace() -> str:
    from integration.data import KEYSPACE

    return KEYSPACE


def expected_table(session: Any, table: str, columns: list[str] | None = None) -> Any:
    """``SELECT`` of the whole table through execute_columns, in the engines' schema."""
    import pyarrow

    from cqlcodec.driver import execute_columns
    from cqlcodec.driver.arrow_io import conform, empty_table, resolve_table

    ref = resolve_table(session, table, columns)
    template = empty_table(session, ref)
    query = f"SELECT {', '.join(ref.columns)} FROM {table}"
    tables = [conform(b, template.schema) for b in execute_columns(session, query, fetch_size=1000) if len(b)]
    return pyarrow.concat_tables(tables) if tables else template


def same_rows(expected: Any, actual: Any, key: str = "k") -> None:
    """Two Arrow tables hold the same rows (in any order), value for value."""
    assert actual.schema == expected.schema, f"{actual.schema}\n!=\n{expected.schema}"
    assert actual.num_rows == expected.num_rows
    a = actual.sort_by(key).combine_chunks()
    e = expected.sort_by(key).combine_chunks()
    for name in e.column_names:
        assert a.column(name).equals(e.column(name)), f"column {name} differs"
