"""cqlcodec's connection class against the real server: every reactor, v4 and v5, plain
and TLS sockets, the switch made by ``install()``, and a connection cut mid-response."""

from __future__ import annotations

import importlib
import random
import ssl
import warnings
from collections.abc import Iterator
from typing import Any

import pytest
from cassandra import DependencyException
from cassandra.cluster import Cluster, NoHostAvailable

import cqlcodec.driver
from cqlcodec.connection.driver_class import ON_BY_DEFAULT, is_cqlcodec_class
from cqlcodec.connection.large_bodies import FILL_FROM

from .conftest import _host_port, new_cluster
from .faultproxy import FaultProxy

AsyncioConnection: Any = pytest.importorskip("cassandra.io.asyncioreactor").AsyncioConnection
AsyncoreConnection: Any = None
try:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # asyncore, gone in Python 3.12
        AsyncoreConnection = importlib.import_module("cassandra.io.asyncorereactor").AsyncoreConnection
except (ImportError, DependencyException):  # Python 3.12+ without the pyasyncore backport
    pass
# 300 KiB that lz4 cannot shrink: one frame over three v5 segments, compressed or not
BLOB = random.Random(32).randbytes(300 * 1024)
# the four rows come back in one frame large enough to be filled in place as it arrives
assert 4 * (len(BLOB) - 3) > FILL_FROM


@pytest.fixture(scope="module")
def blob_table() -> Iterator[str]:
    cluster = new_cluster(5)
    session = cluster.connect()
    session.execute("CREATE KEYSPACE IF NOT EXISTS cqlcodec_conn WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    session.execute("CREATE TABLE IF NOT EXISTS cqlcodec_conn.blobs (k int PRIMARY KEY, v blob)")
    for k in range(4):
        session.execute("INSERT INTO cqlcodec_conn.blobs (k, v) VALUES (%s, %s)", (k, BLOB[k:]))
    cluster.shutdown()
    yield "cqlcodec_conn.blobs"


def _reads(cluster: Cluster, table: str) -> tuple[list[Any], list[Any], list[Any]]:
    """The columns of the schema tables, the rows of ``table``, the pools' connections."""
    session = cluster.connect()
    try:
        columns = sorted(tuple(r) for r in session.execute(
            "SELECT keyspace_name, table_name, column_name, type FROM system_schema.columns"))
        blobs = sorted(tuple(r) for r in session.execute(f"SELECT k, v FROM {table}"))
        pools: dict[Any, Any] = vars(session)["_pools"]  # not in the driver's stubs
        return columns, blobs, [c for p in pools.values() for c in _pool_connections(p)]
    finally:
        cluster.shutdown()


def _pool_connections(pool: Any) -> list[Any]:
    """A host pool's connections: cassandra-driver's one, or scylla-driver's one per shard."""
    if hasattr(pool, "_connections"):
        return list(pool._connections.values())
    return [pool._connection]


@pytest.mark.parametrize("protocol", [4, 5])
@pytest.mark.parametrize("reactor", [None, AsyncioConnection, "asyncore"],
                         ids=["default", "asyncio", "asyncore"])
def test_every_reactor_reads_what_the_driver_reads(protocol: int, reactor: Any,
                                                   blob_table: str) -> None:
    if reactor == "asyncore":
        if AsyncoreConnection is None:
            pytest.skip("the driver's asyncore reactor needs asyncore (Python < 3.12)")
        reactor = AsyncoreConnection
    base = reactor or Cluster.connection_class
    ours = new_cluster(protocol, connection_class=cqlcodec.driver.connection_class(base))
    theirs = new_cluster(protocol, connection_class=base)
    got = _reads(ours, blob_table)
    assert got[:2] == _reads(theirs, blob_table)[:2]
    assert got[1][0] == (0, BLOB)


@pytest.mark.parametrize("protocol", [4, 5])
@pytest.mark.parametrize("reactor", [None, "asyncore"], ids=["default", "asyncore"])
def test_tls_connections_read_what_the_driver_reads(protocol: int, reactor: Any,
                                                    blob_table: str,
                                                    server_tls: ssl.SSLContext) -> None:
    """Frames of 300 KiB arrive over TLS records of at most 16 KiB each. (The driver's
    asyncio reactor opens no TLS connection of its own in 3.30.1, so it is not here.)"""
    if reactor == "asyncore":
        if AsyncoreConnection is None:
            pytest.skip("the driver's asyncore reactor needs asyncore (Python < 3.12)")
        reactor = AsyncoreConnection
    base = reactor or Cluster.connection_class
    columns, blobs, connections = _reads(
        new_cluster(protocol, ssl_context=server_tls,
                    connection_class=cqlcodec.driver.connection_class(base)), blob_table)
    assert connections and all(is_cqlcodec_class(type(c)) for c in connections)
    assert all(isinstance(c._socket, ssl.SSLSocket) for c in connections)
    theirs = _reads(new_cluster(protocol, ssl_context=server_tls, connection_class=base),
                    blob_table)
    plain = _reads(new_cluster(protocol, connection_class=base), blob_table)
    assert (columns, blobs) == theirs[:2] == plain[:2]
    assert not isinstance(plain[2][0]._socket, ssl.SSLSocket)
    assert blobs[0] == (0, BLOB)


def test_install_switches_before_connect_only() -> None:
    cluster = new_cluster(5, connection_class=Cluster.connection_class)
    cqlcodec.driver.install(cluster, connection=True)
    assert is_cqlcodec_class(cluster.connection_class)
    assert cluster.connection_class.__mro__[2] is Cluster.connection_class
    cluster.shutdown()

    cluster = new_cluster(5, connection_class=Cluster.connection_class)
    cqlcodec.driver.install(cluster)
    assert is_cqlcodec_class(cluster.connection_class) == ON_BY_DEFAULT
    cluster.shutdown()

    cluster = new_cluster(5, connection_class=Cluster.connection_class)
    cqlcodec.driver.install(cluster, connection=False)
    assert cluster.connection_class is Cluster.connection_class
    cluster.shutdown()

    cluster = new_cluster(5, connection_class=Cluster.connection_class)
    session = cluster.connect()
    try:
        with pytest.warns(UserWarning, match="already connected"):
            cqlcodec.driver.install(cluster, connection=True)
        assert cluster.connection_class is Cluster.connection_class
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            cqlcodec.driver.install(session)  # a session: only connection=True warns
        assert session.execute("SELECT release_version FROM system.local").one()
    finally:
        cluster.shutdown()


def test_connect_specs_use_the_class_by_default() -> None:
    host, port = _host_port()
    cluster = cqlcodec.driver.Connect([host], port).cluster()
    assert is_cqlcodec_class(cluster.connection_class) == ON_BY_DEFAULT
    mine = cqlcodec.driver.Connect([host], port, connection_class=AsyncioConnection).cluster()
    assert mine.connection_class is AsyncioConnection


@pytest.mark.parametrize("protocol", [4, 5])
def test_a_cut_connection_fails_its_requests_and_the_pool_recovers(protocol: int,
                                                                   blob_table: str) -> None:
    """A reset in the middle of a response: the connection is defunct, its requests fail
    with the driver's own exception or are retried by its policy, and the next query
    on a new connection reads everything."""
    from cassandra import OperationTimedOut
    from cassandra.connection import ConnectionException
    from cassandra.policies import ConstantReconnectionPolicy

    with FaultProxy(_host_port(), seed=protocol) as proxy:
        cluster = Cluster(["127.0.0.1"], port=proxy.port, protocol_version=protocol,
                          connection_class=cqlcodec.driver.connection_class(),
                          reconnection_policy=ConstantReconnectionPolicy(0.5),
                          connect_timeout=10, control_connection_timeout=10)
        session = cluster.connect()
        try:
            proxy.arm(cuts=1, min_bytes=50_000, max_bytes=400_000)
            try:
                rows = list(session.execute(f"SELECT k, v FROM {blob_table}", timeout=20))
                assert len(rows) == 4  # retried on another connection
            except (ConnectionException, OperationTimedOut, NoHostAvailable):
                pass
            assert proxy.cuts == 1
            for _attempt in range(40):
                try:
                    rows = list(session.execute(f"SELECT k, v FROM {blob_table}", timeout=20))
                    break
                except (ConnectionException, OperationTimedOut, NoHostAvailable):
                    import time

                    time.sleep(0.5)
            assert sorted(r.k for r in rows) == [0, 1, 2, 3]
        finally:
            cluster.shutdown()
