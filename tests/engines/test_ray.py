"""cqlcodec.ray against a real Cassandra 5.0.9 with a local ray.init(num_cpus=2): every
CQL type read exactly as SELECT * through execute_columns, round trips through
write_table, projection, an empty table, a read worker killed mid-read, bad inputs,
and no password in task names."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

ray = pytest.importorskip("ray")
pa = pytest.importorskip("pyarrow")
psutil = pytest.importorskip("psutil")

from integration.auth import AUTH_ADDRESS, engine_login_refused, prepare_server, reader_connect  # noqa: E402
from integration.auth import KEYSPACE as AUTH_KS  # noqa: E402
from integration.auth import ROWS as AUTH_ROWS  # noqa: E402
from integration.auth import SKIP_REASON as AUTH_SKIP  # noqa: E402
from integration.data import KEYSPACE  # noqa: E402

import cqlcodec.ray  # noqa: E402
from cqlcodec.driver import Connect, ScanError, SplitPlanError  # noqa: E402
from cqlcodec.driver.arrow_io import WriteError  # noqa: E402

from .conftest import BULK_ROWS, cluster_options, expected_table, freshly_loaded, same_rows  # noqa: E402

SECRET = "Ray-Pa55word-never-shown"


@pytest.fixture(scope="module", autouse=True)
def local_ray() -> Iterator[None]:
    """A local Ray with 2 CPUs (no dashboard)."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             configure_logging=False, object_store_memory=512 * 1024 * 1024)
    ray.data.DataContext.get_current().enable_progress_bars = False
    yield
    ray.shutdown()


def test_every_type_reads_exactly_as_select_star(connect: dict[str, Any], session: Any) -> None:
    table = f"{KEYSPACE}.everything"
    ds = cqlcodec.ray.read_table(connect, table, splits=6, override_num_blocks=6)
    same_rows(expected_table(session, table), _table(ds))


def _table(ds: Any) -> Any:
    return pa.concat_tables([ray.get(ref) for ref in ds.to_arrow_refs()])


def test_read_tasks_carry_the_estimates_and_one_per_split_group(connect: dict[str, Any], session: Any) -> None:
    source = cqlcodec.ray.CassandraDatasource(connect, f"{KEYSPACE}.bulk", splits=8)
    tasks = source.get_read_tasks(4)
    assert len(tasks) == 4
    assert all(t.metadata.num_rows is None for t in tasks)  # Ray's count() trusts it as exact
    assert sum(t.metadata.size_bytes for t in tasks) <= sum(s.estimated_bytes for s in source.splits)
    assert all(t.schema == source.template.schema for t in tasks)
    assert len(source.get_read_tasks(100)) == 8  # never more tasks than splits
    rows = sum(len(block) for t in tasks for block in t())  # the tasks, called here
    assert rows == BULK_ROWS


def test_bulk_and_projection(connect: dict[str, Any], session: Any) -> None:
    table = f"{KEYSPACE}.bulk"
    ds = cqlcodec.ray.read_table(connect, table, splits=16)
    same_rows(expected_table(session, table), _table(ds))
    projected = ds.select_columns(["k", "t"])
    got = _table(projected)
    assert got.column_names == ["k", "t"]
    same_rows(expected_table(session, table, ["k", "t"]), got)
    chosen = cqlcodec.ray.read_table(connect, table, ["t", "k"], splits=4)
    assert chosen.schema().names == ["t", "k"] and chosen.count() == BULK_ROWS


def test_an_empty_table(connect: dict[str, Any]) -> None:
    ds = cqlcodec.ray.read_table(connect, f"{KEYSPACE}.empty", splits=3)
    assert ds.count() == 0
    assert ds.schema().names == ["k", "n", "v"]


def test_round_trip_through_write_table(connect: dict[str, Any], session: Any) -> None:
    session.execute(f"TRUNCATE {KEYSPACE}.everything_copy")
    session.execute(f"TRUNCATE {KEYSPACE}.bulk_copy")
    source = cqlcodec.ray.read_table(connect, f"{KEYSPACE}.everything", splits=3)
    result = cqlcodec.ray.write_table(source, connect, f"{KEYSPACE}.everything_copy")
    assert result.written == result.rows == 3 and not result.failures
    same_rows(expected_table(session, f"{KEYSPACE}.everything"),
              expected_table(session, f"{KEYSPACE}.everything_copy"))
    bulk = cqlcodec.ray.read_table(connect, f"{KEYSPACE}.bulk", splits=8)
    assert cqlcodec.ray.write_table(bulk, connect, f"{KEYSPACE}.bulk_copy").written == BULK_ROWS
    same_rows(expected_table(session, f"{KEYSPACE}.bulk"), expected_table(session, f"{KEYSPACE}.bulk_copy"))


def test_failed_rows_are_reported(connect: dict[str, Any], session: Any) -> None:
    ds = ray.data.from_arrow(pa.table({"k": pa.array([1, None, 3, None], pa.int32()),
                                       "v": ["a", "b", "c", "d"]}))
    with pytest.raises(WriteError, match="2 of 4 rows were not written") as err:
        cqlcodec.ray.write_table(ds, connect, f"{KEYSPACE}.empty")
    assert sorted(f.row for f in err.value.result.failures) == [1, 3]
    session.execute(f"TRUNCATE {KEYSPACE}.empty")


def _read_workers() -> list[Any]:
    found = []
    for p in psutil.process_iter(["cmdline"]):
        line = " ".join(p.info["cmdline"] or [])
        if line.startswith("ray::") and "ReadCassandra" in line:
            found.append(p)
    return found


def test_a_worker_killed_mid_read_is_retried_and_the_result_is_exact(
        connect: dict[str, Any], session: Any) -> None:
    table = f"{KEYSPACE}.bulk"
    ds = cqlcodec.ray.read_table(connect, table, splits=24, fetch_size=100, override_num_blocks=24)
    killed: list[int] = []

    def killer() -> None:
        deadline = time.monotonic() + 120
        while not killed and time.monotonic() < deadline:
            for p in _read_workers():
                os.kill(p.pid, signal.SIGKILL)
                killed.append(p.pid)
                break
            time.sleep(0.005)

    thread = threading.Thread(target=killer, daemon=True)
    thread.start()
    got = _table(ds)
    thread.join()
    assert killed, "no read task was seen running"
    same_rows(expected_table(session, table), got)


def test_a_split_that_keeps_failing_fails_the_job_naming_its_token_range() -> None:
    from .proxy import Proxy

    proxy = Proxy((cluster_options()["contact_points"][0], cluster_options()["port"]))
    try:
        spec = Connect(**cluster_options(proxy.port))
        source = cqlcodec.ray.CassandraDatasource(spec, f"{KEYSPACE}.bulk", splits=2, retries=1)
        proxy.cut()
        with pytest.raises(Exception, match=r"\(-?\d+, -?\d+\]") as err:
            ray.data.read_datasource(source).materialize()  # a ScanError is not retried
        assert "ScanError" in repr(err.value) or isinstance(err.value, ScanError)
    finally:
        proxy.close()


def test_bad_inputs_give_clear_errors(connect: dict[str, Any]) -> None:
    with pytest.raises(SplitPlanError, match="unknown table nope "):
        cqlcodec.ray.read_table(connect, f"{KEYSPACE}.nope")
    with pytest.raises(ScanError, match="unknown column.*wrong"):
        cqlcodec.ray.read_table(connect, f"{KEYSPACE}.bulk", ["k", "wrong"])
    ds = ray.data.from_arrow(pa.table({"k": [1], "wrong": ["x"]}))
    with pytest.raises(Exception, match="unknown column.*wrong"):
        cqlcodec.ray.write_table(ds, connect, f"{KEYSPACE}.empty")


def test_the_password_appears_in_no_task_name(connect: dict[str, Any]) -> None:
    spec = Connect(**cluster_options(), username="reader", password=SECRET)
    source = cqlcodec.ray.CassandraDatasource(spec, f"{KEYSPACE}.bulk", splits=4)
    ds = ray.data.read_datasource(source).materialize()
    assert ds.count() == BULK_ROWS
    shown = [repr(source), str(ds), ds.stats(), source.get_name(),
             *[repr(t.read_fn) for t in source.get_read_tasks(4)]]
    assert not [s for s in shown if SECRET in s]
    # task names come from get_name(); the dashboard's state API needs ray[default], so
    # the logs of this Ray session (every worker's, the raylet's, Ray Data's) are read
    from ray._private.worker import _global_node

    logs = os.path.join(_global_node.get_session_dir_path(), "logs")
    found = []
    for root, _dirs, files in os.walk(logs):
        for name in files:
            with open(os.path.join(root, name), "rb") as f:
                if SECRET.encode() in f.read():
                    found.append(name)
    assert not found
    assert "ReadCassandra" in ds.stats()


def test_a_table_loaded_a_moment_ago_gives_one_read_task_per_split(
        connect: dict[str, Any], session: Any, caplog: pytest.LogCaptureFixture) -> None:
    import logging

    with freshly_loaded(session, "fresh_ray") as table:
        source = cqlcodec.ray.CassandraDatasource(connect, table, splits=8)
        with caplog.at_level(logging.INFO, logger="cqlcodec.driver"):
            tasks = source.get_read_tasks(64)
        assert "no size estimates" in caplog.text
        assert len(tasks) == len(source.splits) >= 8
        got = cqlcodec.ray.read_table(connect, table).to_arrow_refs()
        assert sum(ray.get(ref).num_rows for ref in got) == 5000


@pytest.mark.skipif(not AUTH_ADDRESS, reason=AUTH_SKIP)
def test_a_role_reads_and_writes_on_a_password_protected_server() -> None:
    """CQLCODEC_AUTH_CASSANDRA (nox starts that node beside the test server): the
    read and write tasks log in with the role of the spec; a wrong password is
    refused at once."""
    prepare_server()
    spec = reader_connect()
    ds = cqlcodec.ray.read_table(spec, f"{AUTH_KS}.readable", splits=4)
    table = _table(ds)
    assert sorted(table.column("k").to_pylist()) == list(range(AUTH_ROWS))
    result = cqlcodec.ray.write_table(ds, spec, f"{AUTH_KS}.copy")
    assert result.written == AUTH_ROWS and not result.failures
    engine_login_refused(cqlcodec.ray.read_table)


def test_case_sensitive_and_quoted_names(connect: dict[str, Any], session: Any) -> None:
    """A keyspace, tables and columns that keep their case (quoted), a spaced, a reserved
    and a non-ASCII column: read and written by their CQL names; an unquoted name folds
    to lower case."""
    ks = '"Ray_KS"'
    session.execute(f"DROP KEYSPACE IF EXISTS {ks}")
    session.execute(f"CREATE KEYSPACE {ks} WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    columns = '"Key" int PRIMARY KEY, "a b" text, "select" int, "ünï" text'
    for name in ('"Src"', '"Dst"'):
        session.execute(f"CREATE TABLE {ks}.{name} ({columns})")
    for k in range(20):
        session.execute(f'INSERT INTO {ks}."Src" ("Key", "a b", "select", "ünï") '
                        f"VALUES ({k}, 'v{k}', {k * 2}, 'ü{k}')")
    try:
        ds = cqlcodec.ray.read_table(connect, f'{ks}."Src"', splits=3)
        got = _table(ds)
        assert sorted(got.column_names) == sorted(["Key", "a b", "select", "ünï"])
        assert sorted(got.column("Key").to_pylist()) == list(range(20))
        result = cqlcodec.ray.write_table(ds, connect, f'{ks}."Dst"')
        assert result.written == 20 and not result.failures
        assert sorted(map(tuple, session.execute(f'SELECT * FROM {ks}."Dst"'))) == \
            sorted(map(tuple, session.execute(f'SELECT * FROM {ks}."Src"')))
        with pytest.raises(SplitPlanError, match=r"unknown keyspace ray_ks .*\"Ray_KS\""):
            cqlcodec.ray.read_table(connect, "Ray_KS.Src")  # folds to ray_ks.src
    finally:
        session.execute(f"DROP KEYSPACE IF EXISTS {ks}")
