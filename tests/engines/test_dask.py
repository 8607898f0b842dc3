"""cqlcodec.dask against a real Cassandra 5.0.9 with a distributed.LocalCluster of two
worker processes: every CQL type read exactly as SELECT * through execute_columns,
round trips through to_table, projection, an empty table, a worker killed mid-read,
a split that keeps failing, bad inputs, and no password in task keys or logs."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")
pa = pytest.importorskip("pyarrow")

from integration.auth import AUTH_ADDRESS, engine_login_refused, prepare_server, reader_connect  # noqa: E402
from integration.auth import KEYSPACE as AUTH_KS  # noqa: E402
from integration.auth import ROWS as AUTH_ROWS  # noqa: E402
from integration.auth import SKIP_REASON as AUTH_SKIP  # noqa: E402
from integration.data import KEYSPACE  # noqa: E402

import cqlcodec.dask  # noqa: E402
from cqlcodec.driver import Connect, ScanError, SplitPlanError, execute_columns  # noqa: E402
from cqlcodec.driver.arrow_io import WriteError  # noqa: E402
from cqlcodec.driver.connect import open_session_count  # noqa: E402

from .conftest import BULK_ROWS, cluster_options, expected_table, freshly_loaded, same_rows  # noqa: E402
from .proxy import Proxy  # noqa: E402

SECRET = "Dask-Pa55word-never-shown"


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    """A LocalCluster of 2 worker processes (1 thread each) and its client."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, memory_limit="2GiB") as cluster, \
            distributed.Client(cluster) as c:
        yield c


def plain(table: Any) -> Any:
    """The Arrow table as Dask holds it (extension types as their storage)."""
    from cqlcodec.driver.arrow_io import without_extensions

    return without_extensions(table)


def _arrow(frame: Any) -> Any:
    return pa.Table.from_pandas(frame, preserve_index=False)


def test_every_type_reads_exactly_as_select_star(client: Any, connect: dict[str, Any], session: Any) -> None:
    table = f"{KEYSPACE}.everything"
    ddf = cqlcodec.dask.read_table(connect, table, splits=6, split_rows=None)
    assert ddf.npartitions == 6
    actual = _arrow(ddf.compute())
    same_rows(plain(expected_table(session, table)), actual)


def test_meta_has_the_dtypes_of_column_batch_to_pandas(connect: dict[str, Any], session: Any) -> None:
    import pandas

    from cqlcodec.driver.arrow_io import storage_type

    table = f"{KEYSPACE}.everything"
    ddf = cqlcodec.dask.read_table(connect, table, splits=2)
    batch = next(iter(execute_columns(session, f"SELECT * FROM {table} WHERE k = 1")))
    frame = batch.to_pandas()
    assert list(ddf.columns) == list(frame.columns)
    for name in frame.columns:
        if not isinstance(frame.dtypes[name], pandas.ArrowDtype):  # durations: Duration objects
            assert ddf.dtypes[name] == pandas.ArrowDtype(pa.month_day_nano_interval()), name
            continue
        arrow_type = frame.dtypes[name].pyarrow_dtype
        if name in ("a_varint", "a_decimal"):  # exact text in the engines
            assert ddf.dtypes[name] == pandas.ArrowDtype(pa.string())
        elif "decimal" in str(arrow_type):  # nested decimals: the scale of one page
            continue
        else:  # uuid as its 16 bytes: Dask cannot sample Arrow extension types
            assert ddf.dtypes[name] == pandas.ArrowDtype(storage_type(arrow_type)), name
    assert len(ddf) == 3


def test_varint_and_decimal_text_is_exact(connect: dict[str, Any], session: Any) -> None:
    table = f"{KEYSPACE}.everything"
    got = cqlcodec.dask.read_table(connect, table, ["k", "a_varint", "a_decimal"]).compute(
        scheduler="sync")
    rows = {int(k): (n, d) for k, n, d in zip(got.k, got.a_varint, got.a_decimal)}
    for batch in execute_columns(session, f"SELECT k, a_varint, a_decimal FROM {table}"):
        for k, n, d in zip(*(batch[i].to_pylist() for i in range(3))):
            text_n, text_d = rows[k]
            assert (None if text_n is None or text_n is pd_na() else int(text_n)) == n
            assert (None if text_d is None or text_d is pd_na() else Decimal(text_d)) == d
            if d is not None:
                assert text_d == str(d)


def pd_na() -> Any:
    import pandas

    return pandas.NA


def test_bulk_with_a_wide_varint_and_groups_of_splits(client: Any, connect: dict[str, Any], session: Any) -> None:
    table = f"{KEYSPACE}.bulk"
    ddf = cqlcodec.dask.read_table(connect, table, splits=16, split_rows=BULK_ROWS // 3)
    assert 1 <= ddf.npartitions <= 16
    same_rows(plain(expected_table(session, table)), _arrow(ddf.compute()))
    # one session per worker process for one spec, whatever the number of tasks
    assert set(client.run(open_session_count).values()) <= {0, 1}
    assert sum(client.run(open_session_count).values()) >= 1


def test_column_projection_reaches_the_query(client: Any, connect: dict[str, Any], session: Any) -> None:
    table = f"{KEYSPACE}.bulk"
    ddf = cqlcodec.dask.read_table(connect, table, splits=4, split_rows=None)
    projected = ddf[["k", "t"]]
    reads = [e for e in projected.optimize().expr.walk() if type(e).__name__ == "FromMapProjectable"]
    assert reads and reads[0].columns == ["k", "t"]
    got = projected.compute()
    assert list(got.columns) == ["k", "t"]
    same_rows(plain(expected_table(session, table, ["k", "t"])), _arrow(got))
    chosen = cqlcodec.dask.read_table(connect, table, ["t", "k"], splits=4)
    assert list(chosen.columns) == ["t", "k"]
    assert len(chosen.compute()) == BULK_ROWS


def test_an_empty_table(client: Any, connect: dict[str, Any], session: Any) -> None:
    ddf = cqlcodec.dask.read_table(connect, f"{KEYSPACE}.empty", splits=3, split_rows=None)
    got = ddf.compute()
    assert len(got) == 0 and list(got.columns) == ["k", "n", "v"]
    assert got.dtypes.equals(ddf.dtypes)


def test_round_trip_through_to_table(client: Any, connect: dict[str, Any], session: Any) -> None:
    source = cqlcodec.dask.read_table(connect, f"{KEYSPACE}.everything", splits=3)
    result = cqlcodec.dask.to_table(source, connect, f"{KEYSPACE}.everything_copy")
    assert result.written == result.rows == len(source) and not result.failures
    same_rows(expected_table(session, f"{KEYSPACE}.everything"),
              expected_table(session, f"{KEYSPACE}.everything_copy"))
    bulk = cqlcodec.dask.read_table(connect, f"{KEYSPACE}.bulk", splits=8)
    assert cqlcodec.dask.to_table(bulk, connect, f"{KEYSPACE}.bulk_copy").written == BULK_ROWS
    same_rows(expected_table(session, f"{KEYSPACE}.bulk"), expected_table(session, f"{KEYSPACE}.bulk_copy"))


def test_failed_rows_are_reported(client: Any, connect: dict[str, Any], session: Any) -> None:
    import pandas

    frame = pandas.DataFrame({"k": pandas.array([1, None, 3, None], dtype="Int32"),
                              "v": ["a", "b", "c", "d"]})
    ddf = dd.from_pandas(frame, npartitions=2)
    with pytest.raises(WriteError, match="2 of 4 rows were not written") as err:
        cqlcodec.dask.to_table(ddf, connect, f"{KEYSPACE}.empty")
    assert [(f.partition, f.row) for f in err.value.result.failures] == [(0, 1), (1, 1)]
    result = cqlcodec.dask.to_table(ddf, connect, f"{KEYSPACE}.empty", raise_on_error=False)
    assert result.written == 2
    session.execute(f"TRUNCATE {KEYSPACE}.empty")


def test_a_worker_killed_mid_read_is_retried_and_the_result_is_exact(
        client: Any, connect: dict[str, Any], session: Any) -> None:
    table = f"{KEYSPACE}.bulk"
    ddf = cqlcodec.dask.read_table(connect, table, splits=24, split_rows=None, fetch_size=200)
    pids = client.run(os.getpid)
    future = client.compute(ddf)
    victim = None
    deadline = time.monotonic() + 60
    while victim is None and time.monotonic() < deadline and not future.done():
        for address, keys in client.processing().items():
            if keys:
                victim = address
                break
        time.sleep(0.01)
    assert victim is not None, "no task ever ran"
    os.kill(pids[victim], signal.SIGKILL)
    got = future.result(timeout=300)
    same_rows(plain(expected_table(session, table)), _arrow(got))
    client.wait_for_workers(2, timeout=120)
    assert pids[victim] not in client.run(os.getpid).values()  # the nanny started a new one


def test_a_split_that_keeps_failing_fails_the_job_naming_its_token_range(client: Any) -> None:
    proxy = Proxy((cluster_options()["contact_points"][0], cluster_options()["port"]))
    try:
        spec = Connect(**cluster_options(proxy.port))
        warm = cqlcodec.dask.read_table(spec, f"{KEYSPACE}.bulk", splits=4, split_rows=None,
                                        retries=1, fetch_size=1000)
        assert len(warm.compute()) == BULK_ROWS  # the workers hold sessions through the proxy
        # another graph (other keys): the scheduler may still hold the results of the first
        ddf = cqlcodec.dask.read_table(spec, f"{KEYSPACE}.bulk", splits=4, split_rows=None,
                                       retries=1)
        proxy.cut()
        with pytest.raises(ScanError, match=r"\(-?\d+, -?\d+\]") as err:
            ddf.compute()
        assert "failed" in str(err.value)
    finally:
        proxy.close()


def test_a_read_rides_out_5_then_20_seconds_unreachable(client: Any, session: Any) -> None:
    """The whole host unreachable for 5 s and then for 20 s while the two workers read
    (through a proxy that slows responses so the read outlasts the first outage): the
    tasks wait for the driver to reconnect and resume from their paging state, and
    the frame holds every row exactly once."""
    from cassandra.policies import ConstantReconnectionPolicy
    from integration.faultproxy import FaultProxy

    table = f"{KEYSPACE}.bulk"
    with FaultProxy((cluster_options()["contact_points"][0], cluster_options()["port"]),
                    seed=5) as proxy:
        spec = Connect(**cluster_options(proxy.port),
                       reconnection_policy=ConstantReconnectionPolicy(0.5, max_attempts=None))
        warm = cqlcodec.dask.read_table(spec, table, splits=8, split_rows=None, fetch_size=1000)
        assert len(warm.compute()) == BULK_ROWS  # the workers hold sessions through the proxy
        # another graph (other keys): the scheduler may still hold the results of the first
        ddf = cqlcodec.dask.read_table(spec, table, splits=8, split_rows=None, fetch_size=100)
        proxy.latency = 0.05  # 200 pages: about 5 s of reading on the two workers
        future = client.compute(ddf)
        time.sleep(0.5)
        assert not future.done(), "the read ended before the first outage"
        proxy.outage(5.0).join()
        time.sleep(0.3)
        assert not future.done(), "the read ended before the second outage"
        proxy.outage(20.0)
        got = future.result(timeout=240)
        assert proxy.outage_cuts > 0, "the outages found no connection to cut"
        assert proxy.refused > 0, "the workers never tried to reconnect"
    actual = _arrow(got)
    assert len(set(actual.column("k").to_pylist())) == BULK_ROWS  # no row twice
    same_rows(plain(expected_table(session, table)), actual)


def test_a_write_rides_out_5_seconds_unreachable(client: Any, session: Any) -> None:
    """The whole host unreachable for 5 s while the two workers write (through a proxy
    that slows responses so the write outlasts the start of the outage): the failed
    rows are sent again once the driver reconnects, and every row is in the table."""
    from cassandra.policies import ConstantReconnectionPolicy
    from integration.faultproxy import FaultProxy

    session.execute(f"TRUNCATE {KEYSPACE}.bulk_copy")
    ddf = cqlcodec.dask.read_table(cluster_options(), f"{KEYSPACE}.bulk", splits=8,
                                   split_rows=None).partitions[:2].persist()
    distributed.wait(ddf)
    given = _arrow(ddf.compute())
    with FaultProxy((cluster_options()["contact_points"][0], cluster_options()["port"]),
                    seed=7) as proxy:
        spec = Connect(**cluster_options(proxy.port),
                       reconnection_policy=ConstantReconnectionPolicy(0.5, max_attempts=None))
        proxy.latency = 0.005  # one row per request: about 3 s of writing on the two workers
        outcome: list[Any] = []

        def write() -> None:
            try:
                outcome.append(cqlcodec.dask.to_table(ddf, spec, f"{KEYSPACE}.bulk_copy",
                                                      concurrency=4))
            except Exception as exc:  # noqa: BLE001 - shown by the assertion below
                outcome.append(exc)

        writer = threading.Thread(target=write)
        writer.start()
        time.sleep(1.0)
        assert writer.is_alive(), "the write ended before the outage"
        proxy.outage(5.0).join()
        writer.join(timeout=240)
        assert proxy.outage_cuts > 0, "the outage found no connection to cut"
    assert outcome, "the write did not end within 4 minutes"
    assert not isinstance(outcome[0], Exception), f"the write failed: {outcome[0]!r}"[:2000]
    assert outcome[0].written == given.num_rows and not outcome[0].failures
    same_rows(plain(expected_table(session, f"{KEYSPACE}.bulk_copy")), given)


def test_bad_inputs_give_clear_errors(connect: dict[str, Any]) -> None:
    with pytest.raises(SplitPlanError, match="unknown table nope "):
        cqlcodec.dask.read_table(connect, f"{KEYSPACE}.nope")
    with pytest.raises(SplitPlanError, match="unknown keyspace no_such_ks "):
        cqlcodec.dask.read_table(connect, "no_such_ks.t")
    with pytest.raises(ScanError, match="unknown column.*wrong"):
        cqlcodec.dask.read_table(connect, f"{KEYSPACE}.bulk", ["k", "wrong"])
    import pandas

    frame = dd.from_pandas(pandas.DataFrame({"k": [1], "wrong": ["x"]}), npartitions=1)
    with pytest.raises(ScanError, match="unknown column.*wrong"):
        cqlcodec.dask.to_table(frame, connect, f"{KEYSPACE}.empty")
    with pytest.raises(Exception, match="mapping of cassandra.cluster.Cluster"):
        cqlcodec.dask.read_table(["127.0.0.1"], f"{KEYSPACE}.bulk")  # type: ignore[arg-type]


def test_the_password_appears_in_no_task_key_label_or_log(client: Any) -> None:
    spec = Connect(**cluster_options(), username="reader", password=SECRET)
    ddf = cqlcodec.dask.read_table(spec, f"{KEYSPACE}.bulk", splits=4, split_rows=None)
    graph = ddf.__dask_graph__()
    shown = [repr(k) for k in graph] + [repr(v) for v in graph.values()]
    assert shown and not [s for s in shown if SECRET in s]
    assert "read-cassandra-bulk" in "".join(shown)
    assert len(ddf.compute()) == BULK_ROWS

    def scheduler_views(dask_scheduler: Any) -> list[str]:
        return [repr(ts) + repr(ts.run_spec) for ts in dask_scheduler.tasks.values()]

    views = client.run_on_scheduler(scheduler_views)
    assert not [v for v in views if SECRET in v]
    logs = client.get_worker_logs()
    assert SECRET not in repr(logs)


def test_a_table_loaded_a_moment_ago_is_read_by_both_workers(
        client: Any, connect: dict[str, Any], session: Any, caplog: pytest.LogCaptureFixture) -> None:
    import logging

    import pandas

    client.wait_for_workers(2, timeout=300)  # a worker killed by an earlier test is back
    with freshly_loaded(session, "fresh_dask") as table:
        with caplog.at_level(logging.INFO, logger="cqlcodec.driver"):
            ddf = cqlcodec.dask.read_table(connect, table)
        assert "no size estimates" in caplog.text and table in caplog.text
        assert ddf.npartitions >= 4  # at least 2 per worker thread

        def where_read(frame: Any) -> Any:
            return pandas.DataFrame({"worker": [distributed.get_worker().address],
                                     "rows": [len(frame)]})

        per_partition = ddf.map_partitions(where_read, meta={"worker": object, "rows": "int64"}).compute()
        assert per_partition["rows"].sum() == 5000
        assert per_partition["worker"].nunique() == 2, per_partition


@pytest.mark.skipif(not AUTH_ADDRESS, reason=AUTH_SKIP)
def test_a_role_reads_and_writes_on_a_password_protected_server(client: Any) -> None:
    """CQLCODEC_AUTH_CASSANDRA (nox starts that node beside the test server): the
    workers log in with the role of the spec; a wrong password is refused at once."""
    prepare_server()
    spec = reader_connect()
    ddf = cqlcodec.dask.read_table(spec, f"{AUTH_KS}.readable", splits=4, split_rows=None)
    frame = ddf.compute()
    assert sorted(frame["k"]) == list(range(AUTH_ROWS))
    result = cqlcodec.dask.to_table(ddf, spec, f"{AUTH_KS}.copy")
    assert result.written == AUTH_ROWS and not result.failures
    engine_login_refused(cqlcodec.dask.read_table)
    from cassandra import Unauthorized

    with pytest.raises((ScanError, Unauthorized), match=f"SELECT permission on <table {AUTH_KS}.hidden>"):
        cqlcodec.dask.read_table(spec, f"{AUTH_KS}.hidden", splits=2).compute()
