"""The password-protected test server (``CQLCODEC_AUTH_CASSANDRA=host:port``: one node
started with ``CASS_AUTH=1 tools/cassandra.sh``, superuser cassandra/cassandra), shared by
tests/integration/test_auth.py and the Dask and Ray engine tests: a keyspace with a table
the reader role may read and write, a table it may not read, and the role.

Without ``CQLCODEC_AUTH_CASSANDRA`` the tests that use it are skipped (nox sets it in the
sessions that start the node: the cassandra-driver integration sessions, distributed and
ray)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

AUTH_ADDRESS = os.environ.get("CQLCODEC_AUTH_CASSANDRA", "")
SKIP_REASON = "set CQLCODEC_AUTH_CASSANDRA=host:port of a CASS_AUTH=1 node (nox sets it)"
KEYSPACE = "cqlcodec_auth"
READER = "cqlcodec_reader"
READER_PASSWORD = "Rd-pass-46-never-shown"
WRONG_PASSWORD = "not-the-Password-46"
ROWS = 300  # rows of KEYSPACE.readable
SUPERUSER = ("cassandra", "cassandra")


def auth_host_port() -> tuple[str, int]:
    """The password-protected server's address."""
    host, _, port = AUTH_ADDRESS.rpartition(":")
    return (host or "127.0.0.1"), int(port or "9042")


def auth_cluster(username: str, password: str, **kwargs: Any) -> Any:
    """A driver Cluster for that server logging in as ``username``."""
    from cassandra.auth import PlainTextAuthProvider
    from cassandra.cluster import Cluster

    host, port = auth_host_port()
    return Cluster([host], port=port, auth_provider=PlainTextAuthProvider(username, password),
                   protocol_version=kwargs.pop("protocol_version", 5), connect_timeout=20,
                   control_connection_timeout=20, **kwargs)


def reader_connect() -> Any:
    """The engines' connect spec for the reader role."""
    from cqlcodec.driver import Connect

    host, port = auth_host_port()
    return Connect([host], port, username=READER, password=READER_PASSWORD,
                   protocol_version=5, connect_timeout=20)


def engine_login_refused(read: Any) -> None:
    """``read(spec, table)`` (an engine's read_table) with the reader role and a wrong
    password raises cqlcodec's ConnectError from the driver's AuthenticationFailed,
    the password not in its text."""
    import pytest

    from cqlcodec.driver import Connect, ConnectError

    host, port = auth_host_port()
    wrong = Connect([host], port, username=READER, password=WRONG_PASSWORD)
    with pytest.raises(ConnectError) as caught:
        read(wrong, f"{KEYSPACE}.readable")
    assert refused_login(caught.value) and WRONG_PASSWORD not in str(caught.value)


def connect_waiting(new_cluster: Callable[[], Any], deadline_s: float) -> tuple[Any, Any]:
    """A cluster of ``new_cluster()`` and its session, trying again every 2 s while no
    host answers (a node nox may still be starting), for up to ``deadline_s``."""
    from cassandra.cluster import NoHostAvailable

    give_up = time.monotonic() + deadline_s
    while True:
        cluster = new_cluster()
        try:
            return cluster, cluster.connect()
        except NoHostAvailable:
            cluster.shutdown()
            if time.monotonic() > give_up:
                raise
            time.sleep(2)


def prepare_server(deadline_s: float = 180.0) -> None:
    """Logs in as the superuser (waiting up to ``deadline_s`` for the node, which nox may
    still be starting), then makes the keyspace, its tables and the reader role: SELECT
    and MODIFY on ``readable`` and ``copy``, nothing on ``hidden``. Once per process
    (the role's password never changes: the server allows a change every 5 s only)."""
    if _prepared:
        return
    cluster, session = connect_waiting(lambda: auth_cluster(*SUPERUSER), deadline_s)
    try:
        run = session.execute
        run(f"CREATE KEYSPACE IF NOT EXISTS {KEYSPACE} WITH replication = "
            "{'class': 'SimpleStrategy', 'replication_factor': 1}")
        for table in ("readable", "copy", "hidden"):
            run(f"CREATE TABLE IF NOT EXISTS {KEYSPACE}.{table} (k int PRIMARY KEY, v text)")
        run(f"TRUNCATE {KEYSPACE}.copy")
        insert = session.prepare(f"INSERT INTO {KEYSPACE}.readable (k, v) VALUES (?, ?)")
        for k in range(ROWS):
            run(insert, (k, f"row {k}"))
        run(f"INSERT INTO {KEYSPACE}.hidden (k, v) VALUES (1, 'secret')")
        run(f"CREATE ROLE IF NOT EXISTS {READER} WITH PASSWORD = '{READER_PASSWORD}' "
            "AND LOGIN = true")
        for table in ("readable", "copy"):
            run(f"GRANT SELECT ON TABLE {KEYSPACE}.{table} TO {READER}")
            run(f"GRANT MODIFY ON TABLE {KEYSPACE}.{table} TO {READER}")
    finally:
        cluster.shutdown()
    _prepared.append(True)


_prepared: list[bool] = []  # prepare_server ran in this process


def refused_login(exc: BaseException) -> bool:
    """Whether ``exc`` (or an exception it was raised from) is the driver's
    ``NoHostAvailable`` for an ``AuthenticationFailed``, or that error itself."""
    from cassandra import AuthenticationFailed
    from cassandra.cluster import NoHostAvailable

    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, AuthenticationFailed):
            return True
        if isinstance(seen, NoHostAvailable) and any(
                isinstance(e, AuthenticationFailed) for e in seen.errors.values()):
            return True
        seen = seen.__cause__
    return False
