"""Fixtures of the integration tests: a real Cassandra (``CQLCODEC_CASSANDRA=host:port``),
one schema with every CQL type, and pairs of driver sessions, one with the driver alone
and one with cqlcodec installed, for protocol v4 and v5.

Without ``CQLCODEC_CASSANDRA`` every test here is skipped, so the unit sessions skip them.
``CQLCODEC_CONNECTION=cqlcodec`` makes every cluster here read through
``cqlcodec.driver.connection_class()`` (the driver-alone side of a pair excepted), and
``CQLCODEC_CONNECTION=driver`` keeps the driver's own class even where ``install()``
would switch; unset, each cluster gets what ``install()`` gives by default.
``tools/cassandra.sh`` starts a server; ``nox -s integration`` does it all.
"""

from __future__ import annotations

import os
import ssl
from collections.abc import Iterator
from typing import Any

import pytest
from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile, Session
from cassandra.policies import RoundRobinPolicy

import cqlcodec.driver

from .data import KEYSPACE, create_schema

ADDRESS = os.environ.get("CQLCODEC_CASSANDRA", "")
# a second single-node cluster, for copies and comparisons across clusters (nox starts it
# in the background, on port 29242)
SECOND_ADDRESS = os.environ.get("CQLCODEC_CASSANDRA_SECOND", "")
CONNECTION = os.environ.get("CQLCODEC_CONNECTION", "")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    here = os.path.dirname(__file__)
    skip = pytest.mark.skip(reason="set CQLCODEC_CASSANDRA=host:port to run (tools/cassandra.sh)")
    for item in items:
        if str(item.path).startswith(here):
            item.add_marker(pytest.mark.integration)
            if not ADDRESS:
                item.add_marker(skip)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """The count of documentation examples run against the server, for the CI log."""
    import sys

    module = sys.modules.get(f"{__package__}.test_doc_server_examples")
    if module is not None:
        ran = module.ran_blocks()
        pages = len({block.rpartition(":")[0] for block in ran})
        terminalreporter.write_line(f"docs examples that need a server: {len(ran)} blocks of "
                                    f"{pages} pages run")


def _host_port(address: str = ADDRESS) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    return (host or "127.0.0.1"), int(port or "9042")


def new_cluster(protocol_version: int, address: str = ADDRESS, **kwargs: Any) -> Cluster:
    """A driver Cluster for the test server (or the server at ``address``) at one
    protocol version (generous timeouts: the server shares 2 cores with the tests)."""
    host, port = _host_port(address)
    if CONNECTION == "cqlcodec" and "connection_class" not in kwargs:
        kwargs["connection_class"] = cqlcodec.driver.connection_class()
    profile = ExecutionProfile(load_balancing_policy=RoundRobinPolicy(), request_timeout=30)
    return Cluster([host], port=port, protocol_version=protocol_version, **kwargs,
                   execution_profiles={EXEC_PROFILE_DEFAULT: profile},
                   connect_timeout=20, control_connection_timeout=20)


def keyspace_session(keyspace: str, *statements: str) -> Iterator[Session]:
    """A v5 session with cqlcodec installed on a new keyspace (dropped first) after
    ``statements`` (types, tables); the keyspace is dropped after the tests. For module
    fixtures: ``yield from keyspace_session(KS, ...)``."""
    cluster = new_cluster(5)
    cqlcodec.driver.install(cluster)
    s = cluster.connect()
    for cql in (f"DROP KEYSPACE IF EXISTS {keyspace}",
                f"CREATE KEYSPACE {keyspace} WITH replication = "
                "{'class': 'SimpleStrategy', 'replication_factor': 1}", *statements):
        s.execute(cql)
    yield s
    s.execute(f"DROP KEYSPACE IF EXISTS {keyspace}")
    cluster.shutdown()


class SessionPair:
    """The same server through the driver alone and through the driver with cqlcodec."""

    def __init__(self, protocol_version: int, **options: bool) -> None:
        self.protocol_version = protocol_version
        self.plain_cluster = new_cluster(protocol_version,
                                         connection_class=Cluster.connection_class)
        self.codec_cluster = new_cluster(protocol_version)
        cqlcodec.driver.install(self.codec_cluster, **options,
                                connection=False if CONNECTION == "driver" else None)
        self.plain: Session = self.plain_cluster.connect(KEYSPACE)
        self.codec: Session = self.codec_cluster.connect(KEYSPACE)

    def close(self) -> None:
        self.plain_cluster.shutdown()
        self.codec_cluster.shutdown()


@pytest.fixture(scope="session", autouse=True)
def expected_driver() -> None:
    """``CQLCODEC_DRIVER`` (set by nox) names the driver distribution that must be active."""
    expected = os.environ.get("CQLCODEC_DRIVER")
    if expected and ADDRESS:
        assert cqlcodec.driver.driver_name() == expected, (
            f"CQLCODEC_DRIVER={expected} but {cqlcodec.driver.driver_name()} is installed")


@pytest.fixture(scope="session")
def schema() -> Iterator[None]:
    """Creates the keyspace (dropped first) with the tables and rows the tests read."""
    cluster = new_cluster(4)
    try:
        create_schema(cluster.connect())
    finally:
        cluster.shutdown()
    yield


@pytest.fixture(scope="session", params=[4, 5], ids=["v4", "v5"])
def pair(request: pytest.FixtureRequest, schema: None) -> Iterator[SessionPair]:
    """Driver-alone and cqlcodec sessions (driver values) at protocol v4 and v5."""
    p = SessionPair(int(request.param))
    assert p.plain_cluster.protocol_version == request.param
    yield p
    p.close()


@pytest.fixture(scope="session")
def plain_pair(schema: None) -> Iterator[SessionPair]:
    """Driver-alone and cqlcodec sessions with plain_values=True, numpy_vectors=True (v5)."""
    p = SessionPair(5, plain_values=True, numpy_vectors=True)
    yield p
    p.close()


@pytest.fixture(scope="session")
def second_session() -> Iterator[Session]:
    """A v5 session with cqlcodec installed on the second cluster
    (``CQLCODEC_CASSANDRA_SECOND=host:port``, a single node of its own); skipped when the
    variable is unset. Waits up to 3 minutes for the node, which nox starts in the
    background."""
    from .auth import connect_waiting

    if not SECOND_ADDRESS:
        pytest.skip("set CQLCODEC_CASSANDRA_SECOND=host:port of a second server (nox sets it)")

    def installed() -> Cluster:
        cluster = new_cluster(5, SECOND_ADDRESS)
        cqlcodec.driver.install(cluster)
        return cluster

    cluster, session = connect_waiting(installed, 180)
    yield session
    cluster.shutdown()


@pytest.fixture(scope="session")
def server_pem() -> str:
    """The test server's certificate (PEM), fetched from the server.

    tools/cassandra.sh lets the CQL port take TLS as well as plain connections, with a
    self-signed certificate for the server's address."""
    host, port = _host_port()
    try:
        return ssl.get_server_certificate((host, port), timeout=10)
    except (OSError, ssl.SSLError) as exc:
        pytest.skip(f"the server at {host}:{port} takes no TLS connections "
                    f"(tools/cassandra.sh sets them up): {exc!r}")


@pytest.fixture(scope="session")
def server_tls(server_pem: str) -> ssl.SSLContext:
    """A client TLS context that trusts the test server's certificate and checks its name."""
    context = ssl.create_default_context(cadata=server_pem)
    context.check_hostname = True
    return context
