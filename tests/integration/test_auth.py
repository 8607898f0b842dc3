"""Logging in with a role on a password-protected Cassandra (``CQLCODEC_AUTH_CASSANDRA``,
see tests/integration/auth.py): the command line (``--username`` with ``--password-env``),
``scan_table``, ``load_table`` and ``cqlcodec.aio``; a wrong password is exit status 4 on
the command line and the driver's ``AuthenticationFailed`` for a session; a table the role
may not read is refused with the table named."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import cqlcodec.driver as cd

from .auth import (
    AUTH_ADDRESS,
    KEYSPACE,
    READER,
    READER_PASSWORD,
    ROWS,
    SKIP_REASON,
    WRONG_PASSWORD,
    auth_cluster,
    auth_host_port,
    prepare_server,
    refused_login,
)
from .test_load_unload import ROOT

pytestmark = pytest.mark.skipif(not AUTH_ADDRESS, reason=SKIP_REASON)
PASSWORD_ENV = "CQLCODEC_TEST_ROLE_PASSWORD"


@pytest.fixture(scope="module")
def reader() -> Iterator[Any]:
    """A session logged in as the reader role, cqlcodec installed."""
    prepare_server()
    cluster = auth_cluster(READER, READER_PASSWORD)
    cd.install(cluster)
    yield cluster.connect()
    cluster.shutdown()


def cli(*args: str, password: str = READER_PASSWORD) -> subprocess.CompletedProcess[str]:
    """``python -m cqlcodec ARGS --username READER`` against the password-protected
    server, the password in the environment variable ``--password-env`` names."""
    host, port = auth_host_port()
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env[PASSWORD_ENV] = password
    return subprocess.run([sys.executable, "-m", "cqlcodec", *args, "--host", host,
                           "--port", str(port), "--timeout", "30", "--username", READER,
                           "--password-env", PASSWORD_ENV],
                          capture_output=True, text=True, env=env, timeout=300, cwd=ROOT)


def test_the_command_line_logs_in_with_a_role(reader: Any) -> None:
    done = cli("count", f"{KEYSPACE}.readable", "--quiet")
    assert (done.returncode, done.stdout.strip()) == (0, str(ROWS)), done.stderr
    done = cli("unload", f"{KEYSPACE}.readable", "-o", "-", "--format", "csv", "--quiet")
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) == ROWS + 1  # and the header
    assert READER_PASSWORD not in done.stdout + done.stderr


def test_a_wrong_password_exits_4_without_showing_it(reader: Any) -> None:
    done = cli("count", f"{KEYSPACE}.readable", password=WRONG_PASSWORD)
    assert done.returncode == 4, done.stderr
    assert "authentication refused" in done.stderr, done.stderr
    assert WRONG_PASSWORD not in done.stdout + done.stderr


def test_a_refused_unload_leaves_no_directory(reader: Any, tmp_path: Path) -> None:
    """A table the role may not read is refused before the output directory (and its
    manifest) is made: the same command run later by a role that may is a new unload."""
    out = tmp_path / "out"
    done = cli("unload", f"{KEYSPACE}.hidden", "-o", str(out))
    assert done.returncode == 3, done.stderr
    assert "SELECT permission" in done.stderr and not out.exists()


def test_a_table_without_select_is_refused_by_name(reader: Any) -> None:
    for command in (["count"], ["unload", "-o", "-", "--format", "csv"]):
        done = cli(*command, f"{KEYSPACE}.hidden")
        assert done.returncode == 3, done.stderr
        assert done.stderr.startswith(f"cqlcodec: error: permission refused: User {READER} has no "
                                      f"SELECT permission on <table {KEYSPACE}.hidden>"), done.stderr
        assert "splits" not in done.stderr and "secret" not in done.stdout
    with pytest.raises(cd.ScanError) as caught:
        cd.scan_table(reader, f"{KEYSPACE}.hidden").to_arrow()
    assert f"{KEYSPACE}.hidden" in str(caught.value) and "SELECT" in str(caught.value)


def test_scan_and_load_with_a_role(reader: Any) -> None:
    table = cd.scan_table(reader, f"{KEYSPACE}.readable").to_arrow()
    assert sorted(table.column("k").to_pylist()) == list(range(ROWS))
    result = cd.load_table(reader, f"{KEYSPACE}.copy", table)
    assert result.written == ROWS
    assert reader.execute(f"SELECT count(*) FROM {KEYSPACE}.copy").one()[0] == ROWS


def test_a_wrong_password_is_the_drivers_authentication_failed(reader: Any) -> None:
    cluster = auth_cluster(READER, WRONG_PASSWORD)
    try:
        with pytest.raises(Exception) as caught:
            cluster.connect()
    finally:
        cluster.shutdown()
    assert refused_login(caught.value), repr(caught.value)


def test_asyncio_with_a_role(reader: Any) -> None:
    from cqlcodec import aio

    async def main() -> tuple[int, int]:
        rows = 0
        async for batch in aio.scan_table(reader, f"{KEYSPACE}.readable", ["k"]):
            rows += batch.num_rows
        pages = await aio.execute_columns(reader, f"SELECT v FROM {KEYSPACE}.readable "
                                                  "WHERE k = %s", [7])
        return rows, pages.to_arrow().num_rows

    assert asyncio.run(main()) == (ROWS, 1)
    with pytest.raises(Exception, match="SELECT"):
        asyncio.run(aio.execute(reader, f"SELECT * FROM {KEYSPACE}.hidden"))


def test_dask_and_ray_specs_keep_the_role() -> None:
    """The engines' connect spec opens a session of the role in this process (the Dask
    and Ray sessions run their own engines' tests with it: tests/engines)."""
    from cqlcodec.driver import Connect, ConnectError, session_for

    prepare_server()
    host, port = auth_host_port()
    session = session_for(Connect([host], port, username=READER, password=READER_PASSWORD))
    assert session.execute(f"SELECT count(*) FROM {KEYSPACE}.readable").one()[0] == ROWS
    with pytest.raises(ConnectError) as caught:
        session_for(Connect([host], port, username=READER, password=WRONG_PASSWORD))
    assert refused_login(caught.value) and WRONG_PASSWORD not in str(caught.value)


@pytest.mark.parametrize("protocol_version", [4, 5])
def test_the_request_path_logs_in_with_the_auth_provider(reader: Any, protocol_version: int) -> None:
    from cassandra import Unauthorized

    from cqlcodec import aio

    cluster = auth_cluster(READER, READER_PASSWORD, protocol_version=protocol_version)
    session = cluster.connect()
    try:
        ps = session.prepare(f"SELECT v FROM {KEYSPACE}.readable WHERE k = ?")

        async def main() -> list[Any]:
            async with await aio.connect(session) as fast:
                rows = [(await fast.execute(ps, [k])).one().v for k in (1, 2, 3)]
                with pytest.raises(Unauthorized, match="SELECT"):
                    await fast.execute(f"SELECT * FROM {KEYSPACE}.hidden")
                return rows
        assert asyncio.run(main()) == ["row 1", "row 2", "row 3"]
    finally:
        cluster.shutdown()
