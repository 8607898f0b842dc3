"""Whole-table scans against a real Cassandra 5: ``plan_splits`` covers the ring exactly
once, ``scan_table`` and ``read_split`` give exactly the rows of ``SELECT *`` for every
table shape (multi-column partition keys, static columns, clustering rows spanning
pages, empty and one-partition tables, counters, every CQL type), with and without
``install``, at protocol v4 and v5; and the same holds when a TCP proxy cuts the
driver's connections at random points in the middle of the scan."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile, Session
from cassandra.concurrent import execute_concurrent_with_args
from cassandra.policies import ConstantReconnectionPolicy, RoundRobinPolicy

import cqlcodec
from cqlcodec.driver import (
    ScanError,
    ScanProgress,
    SplitPlanError,
    TokenSplit,
    execute_columns,
    plan_splits,
    read_split,
    scan_table,
    table_schema_batch,
)
from cqlcodec.driver.splits import MAX_TOKEN, MIN_TOKEN, replicas_of

from .conftest import SessionPair, _host_port
from .data import KEYSPACE
from .faultproxy import FaultProxy

pytestmark = pytest.mark.integration
pa = pytest.importorskip("pyarrow")

MIXED_PARTITIONS = 120
EMPTY_PARTITIONS = 5  # partitions with a static value and no clustering row


def _write_tables(s: Session) -> None:
    for ddl in [
        "CREATE TABLE IF NOT EXISTS scan_mixed (p int, q text, c int, s text static, v double, "
        "b blob, PRIMARY KEY ((p, q), c))",
        "CREATE TABLE IF NOT EXISTS scan_empty (k int PRIMARY KEY, v text)",
        "CREATE TABLE IF NOT EXISTS scan_one (p int, c int, v text, PRIMARY KEY (p, c))",
        "CREATE TABLE IF NOT EXISTS scan_counter (k int PRIMARY KEY, n counter)",
    ]:
        s.execute(ddl, timeout=60)
    for table in ["scan_mixed", "scan_empty", "scan_one", "scan_counter"]:
        s.execute(f"TRUNCATE {table}", timeout=60)
    rows = [(p, f"q{p % 3}", c, c * 0.5, bytes([c % 256]) * (c % 5))
            for p in range(MIXED_PARTITIONS) for c in range(p % 40)]
    insert = s.prepare("INSERT INTO scan_mixed (p, q, c, v, b) VALUES (?, ?, ?, ?, ?)")
    execute_concurrent_with_args(s, insert, rows, concurrency=32)
    statics = s.prepare("UPDATE scan_mixed SET s = ? WHERE p = ? AND q = ?")
    execute_concurrent_with_args(s, statics, [(f"static {p}", p, f"q{p % 3}")
                                              for p in range(0, MIXED_PARTITIONS + EMPTY_PARTITIONS)],
                                 concurrency=32)
    one = s.prepare("INSERT INTO scan_one (p, c, v) VALUES (7, ?, ?)")
    execute_concurrent_with_args(s, one, [(c, f"row {c}") for c in range(700)], concurrency=32)
    counter = s.prepare("UPDATE scan_counter SET n = n + ? WHERE k = ?")
    execute_concurrent_with_args(s, counter, [(k * 3 - 5, k) for k in range(150)], concurrency=32)


@pytest.fixture(scope="module")
def tables(pair: SessionPair) -> None:
    """The scan tables, written once with the driver alone."""
    _write_tables(pair.plain)


@pytest.fixture(params=["installed", "plain"])
def session(request: pytest.FixtureRequest, pair: SessionPair, tables: None) -> Session:
    """A session with cqlcodec installed, and one of the driver alone."""
    return pair.codec if request.param == "installed" else pair.plain


def _rows(table: Any) -> list[str]:
    """The rows of a pyarrow Table, each as the repr of its dict, sorted (the order of a
    scan is not specified; repr makes NaN equal to NaN)."""
    return sorted(repr(row) for row in table.to_pylist())


def _select_all(session: Session, table: str) -> Any:
    return execute_columns(session, f"SELECT * FROM {table}", fetch_size=100000).to_arrow()


def _driver_count(pair: SessionPair, table: str) -> int:
    return len(list(pair.plain.execute(f"SELECT * FROM {table}")))


# --------------------------------------------------------------------------- the plan

def test_splits_cover_the_ring_exactly_once(session: Session) -> None:
    token_map = session.cluster.metadata.token_map
    for wanted in (None, 1, 7, 64, 500):
        splits = plan_splits(session, f"{KEYSPACE}.scan_mixed", wanted)
        assert splits[0].start == MIN_TOKEN and splits[-1].end == MAX_TOKEN
        assert all(a.end == b.start for a, b in zip(splits, splits[1:]))
        assert all(s.replicas == ("127.0.0.1",) or s.replicas for s in splits)
        if wanted is not None:  # never fewer than asked; a few more at ring-range edges
            assert wanted <= len(splits) <= wanted + len(token_map.ring) + 1
    assert_one_replica_set_per_split(session, KEYSPACE, plan_splits(session, f"{KEYSPACE}.scan_mixed", 2))


def assert_one_replica_set_per_split(session: Session, keyspace: str,
                                     splits: list[TokenSplit]) -> None:
    """Every ring token inside a split (and its end) has the split's replicas."""
    ring = sorted(int(t.value) for t in session.cluster.metadata.token_map.ring)
    for split in splits:
        inside = [t for t in ring if split.start < t < split.end] + [split.end]
        for token in inside:
            owners = {h.address for h in replicas_of(session, keyspace, token)}
            assert owners == set(split.replicas), (split, token)


def test_the_table_name_forms(session: Session) -> None:
    a = plan_splits(session, f"{KEYSPACE}.scan_one", 4)
    assert plan_splits(session, f'"{KEYSPACE}"."scan_one"', 4) == a
    assert plan_splits(session, "scan_one", 4) == a  # the session's keyspace
    assert plan_splits(session, f" {KEYSPACE.upper()} . SCAN_ONE ", 4) == a


def test_unknown_names_are_clear_errors(session: Session) -> None:
    with pytest.raises(SplitPlanError, match="unknown keyspace no_such_ks "):
        plan_splits(session, "no_such_ks.t")
    with pytest.raises(SplitPlanError, match="unknown table no_such_table "):
        plan_splits(session, f"{KEYSPACE}.no_such_table")
    with pytest.raises(SplitPlanError, match="keyspace.table"):
        plan_splits(session, "a.b.c")
    with pytest.raises(ScanError, match="unknown table nope ") as info:
        scan_table(session, f"{KEYSPACE}.nope")
    assert isinstance(info.value, cqlcodec.CodecError) and info.value.split is None
    with pytest.raises(ScanError, match="unknown column.*nope.*its columns are p, q, c"):
        scan_table(session, f"{KEYSPACE}.scan_mixed", ["p", "nope"])
    split = plan_splits(session, f"{KEYSPACE}.scan_one", 1)[0]
    with pytest.raises(ScanError, match="unknown column"):
        read_split(session, f"{KEYSPACE}.scan_one", split, ["zz"])
    with pytest.raises(ScanError, match="refuses the scan query"):
        scan_table(session, f"{KEYSPACE}.scan_one", where="no_such_column = 3")
    with pytest.raises(ValueError):
        plan_splits(session, f"{KEYSPACE}.scan_one", 0)


# --------------------------------------------------------------------------- exactness

def _batch_rows(batches: Any) -> list[str]:
    """The rows of ColumnBatches (cqlcodec's values: dates outside Python's range stay
    exact), each as the repr of its tuple, sorted."""
    rows: list[str] = []
    for batch in batches:
        columns = [column.to_pylist() for column in batch]
        rows += [repr(row) for row in zip(*columns)]
    return sorted(rows)


@pytest.mark.parametrize("table", ["scan_mixed", "scan_one", "scan_counter", "everything",
                                   "composite", "paged"])
def test_scan_equals_select_star(pair: SessionPair, session: Session, table: str) -> None:
    name = f"{KEYSPACE}.{table}"
    want = _batch_rows(execute_columns(session, f"SELECT * FROM {name}", fetch_size=100000))
    assert len(want) == _driver_count(pair, name)
    got = _batch_rows(scan_table(session, name, splits=23, concurrency=4, fetch_size=37))
    assert got == want
    arrow = scan_table(session, name, splits=23, concurrency=4, fetch_size=37).to_arrow()
    assert arrow.num_rows == len(want)
    if table != "everything":  # its dates lie outside Python's range
        assert _rows(arrow) == _rows(_select_all(session, name))


def test_static_only_partitions_and_pages_inside_partitions(session: Session) -> None:
    name = f"{KEYSPACE}.scan_mixed"
    got = scan_table(session, name, ["p", "c", "s"], splits=3, fetch_size=11).to_arrow()
    by_partition: dict[int, list[Any]] = {}
    for p, c, s in zip(*(got.column(n).to_pylist() for n in ["p", "c", "s"])):
        by_partition.setdefault(p, []).append((c, s))
    assert len(by_partition) == MIXED_PARTITIONS + EMPTY_PARTITIONS
    for p, rows in by_partition.items():
        if p % 40 == 0 or p >= MIXED_PARTITIONS:  # a static value and no clustering row
            assert rows == [(None, f"static {p}")]
        else:
            assert rows == [(c, f"static {p}") for c in range(p % 40)]


def test_empty_table(session: Session) -> None:
    name = f"{KEYSPACE}.scan_empty"
    scan = scan_table(session, name, splits=9)
    batches = list(scan)
    assert len(batches) == 1 and len(batches[0]) == 0  # one empty batch: the columns' types
    assert [c.name for c in batches[0]] == ["k", "v"]
    table = scan_table(session, name).to_arrow()
    assert table.num_rows == 0 and table.column_names == ["k", "v"]
    schema = pa.record_batch(table_schema_batch(session, name)).schema
    assert schema == table.schema


def test_read_split_by_split_is_exact_and_idempotent(session: Session) -> None:
    name = f"{KEYSPACE}.scan_mixed"
    splits = plan_splits(session, name, 6)
    got: list[str] = []
    for split in splits:
        first = pa.Table.from_batches([pa.record_batch(b) for b in read_split(session, name, split,
                                                                              fetch_size=50)])
        again = pa.Table.from_batches([pa.record_batch(b) for b in read_split(session, name, split,
                                                                              fetch_size=1000)])
        assert _rows(first) == _rows(again)
        tokens = session.execute(f"SELECT token(p, q) FROM {name} WHERE token(p, q) > %s AND "
                                 f"token(p, q) <= %s", (split.start, split.end))
        assert first.num_rows == len(list(tokens))
        got += _rows(first)
    assert sorted(got) == _rows(_select_all(session, name))


def test_columns_where_and_progress(session: Session) -> None:
    name = f"{KEYSPACE}.scan_mixed"
    seen: list[ScanProgress] = []
    scan = scan_table(session, name, ["v", "p"], where="v > 10", splits=5, fetch_size=40,
                      progress=seen.append)
    got = scan.to_arrow()
    want = execute_columns(session, f"SELECT v, p FROM {name} WHERE v > 10 ALLOW FILTERING").to_arrow()
    assert got.column_names == ["v", "p"] and _rows(got) == _rows(want)
    assert seen[-1].rows == want.num_rows and seen[-1].splits_done == seen[-1].splits_total == 5
    assert [p.rows for p in seen] == sorted(p.rows for p in seen)
    assert scan.rows_fetched == want.num_rows


def test_polars_pandas_and_a_chosen_subset_of_splits(session: Session) -> None:
    pytest.importorskip("pandas")
    pytest.importorskip("polars")
    name = f"{KEYSPACE}.scan_one"
    frame = scan_table(session, name).to_pandas()
    assert sorted(frame["c"].tolist()) == list(range(700))
    polars_frame = scan_table(session, name, splits=4).to_polars()
    assert polars_frame.height == 700
    splits = plan_splits(session, name, 8)
    some = scan_table(session, name, splits=splits[2:5]).to_arrow()
    assert some.num_rows == sum(sum(len(b) for b in read_split(session, name, s)) for s in splits[2:5])
    with pytest.raises(SplitPlanError, match="overlap"):
        scan_table(session, name, splits=[splits[0], TokenSplit(splits[0].start + 1, splits[0].end)])


def test_to_parquet_one_file_and_one_file_per_split(session: Session, tmp_path: Any) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    name = f"{KEYSPACE}.scan_mixed"
    want = _rows(_select_all(session, name))
    files = scan_table(session, name, splits=7, fetch_size=64).to_parquet(tmp_path / "all.parquet",
                                                                           compression="zstd")
    assert files == [str(tmp_path / "all.parquet")]
    assert _rows(pq.read_table(files[0])) == want
    out = tmp_path / "parts"
    out.mkdir()
    files = scan_table(session, name, splits=7, fetch_size=64).to_parquet(out)
    assert 1 < len(files) <= 7 and not [f for f in os.listdir(out) if f.endswith(".tmp")]
    assert _rows(pq.read_table(out)) == want


def test_an_abandoned_scan_stops(session: Session) -> None:
    scan = scan_table(session, f"{KEYSPACE}.scan_mixed", splits=20, concurrency=3, fetch_size=10)
    with scan:
        first = next(scan)
    assert len(first) > 0
    for worker in scan._workers:
        worker.join(timeout=10)
        assert not worker.is_alive()


# --------------------------------------------------------------------------- faults

def _proxied_cluster(protocol_version: int, proxy: FaultProxy) -> Cluster:
    """A driver Cluster that reaches the test server through ``proxy`` only (short
    request timeouts: a cut shows at once, a stall within seconds; the driver tries to
    reconnect every half second rather than after 1, 2, 4 ... s)."""
    profile = ExecutionProfile(load_balancing_policy=RoundRobinPolicy(), request_timeout=10)
    return Cluster(["127.0.0.1"], port=proxy.port, protocol_version=protocol_version,
                   reconnection_policy=ConstantReconnectionPolicy(0.5),
                   execution_profiles={EXEC_PROFILE_DEFAULT: profile},
                   connect_timeout=10, control_connection_timeout=10)


@pytest.fixture(scope="module")
def table_rows(pair: SessionPair, tables: None) -> list[str]:
    """The rows of scan_mixed as SELECT * gives them (straight, no proxy)."""
    return _rows(_select_all(pair.plain, f"{KEYSPACE}.scan_mixed"))


@pytest.mark.parametrize("seed,install", [(1, True), (2, False), (3, True)],
                         ids=["seed1-installed", "seed2-plain", "seed3-installed"])
def test_exact_when_connections_are_cut(pair: SessionPair, table_rows: list[str], seed: int,
                                        install: bool) -> None:
    """A proxy between driver and server cuts connections (with a reset) after a random
    number of response bytes, again and again during the scan: the scan still gives
    every row of SELECT * exactly once. (Protocol v5 only: the paging is the same at v4,
    and the fault tests are the slow ones.)"""
    if pair.protocol_version != 5:
        pytest.skip("fault tests run at protocol v5")
    with FaultProxy(_host_port(), seed=seed) as proxy:
        cluster = _proxied_cluster(pair.protocol_version, proxy)
        if install:
            cqlcodec.driver.install(cluster)
        try:
            session = cluster.connect(KEYSPACE)
            name = f"{KEYSPACE}.scan_mixed"
            splits = plan_splits(session, name, 8)
            scan = scan_table(session, name, splits=splits, concurrency=3, fetch_size=60,
                              retries=10)
            proxy.arm(cuts=4, min_bytes=3_000, max_bytes=40_000)
            got = scan.to_arrow()
            assert proxy.cuts >= 1, "the proxy cut nothing: the test tested no fault"
            assert sum(len(r.failures) for r in scan.readers.values()) >= 1
            assert got.num_rows == len(table_rows)
            assert _rows(got) == table_rows
        finally:
            cluster.shutdown()


def test_a_split_that_keeps_failing_names_itself(pair: SessionPair, tables: None) -> None:
    if pair.protocol_version != 5:
        pytest.skip("fault tests run at protocol v5")
    with FaultProxy(_host_port(), seed=9) as proxy:
        cluster = _proxied_cluster(pair.protocol_version, proxy)
        try:
            session = cluster.connect(KEYSPACE)
            name = f"{KEYSPACE}.scan_mixed"
            split = plan_splits(session, name, 1)[0]
            reader = read_split(session, name, split, fetch_size=20, retries=1)
            proxy.arm(cuts=1000, min_bytes=100, max_bytes=200)
            with pytest.raises(ScanError) as info:
                list(reader)
            assert info.value.split == split
            assert f"({split.start}, {split.end}]" in str(info.value)
            assert "2 times in a row" in str(info.value) and info.value.__cause__ is not None
        finally:
            proxy.arm(cuts=0, min_bytes=0, max_bytes=0)
            cluster.shutdown()



@pytest.mark.parametrize("mode", ["pyarrow", "ctypes"])
def test_a_failing_split_while_pages_are_held_raises_the_scan_error(schema: None,
                                                                    mode: str) -> None:
    """``to_arrow()`` (with pyarrow) and ``to_polars()`` (pyarrow blocked: the ctypes
    export) of a scan whose later splits fail (the table is dropped after the first
    page) raise ScanError, in a child process that exits 0: no abort, no SystemError."""
    pytest.importorskip("polars")
    host, port = _host_port()
    child = Path(__file__).with_name("scan_failure_child.py")
    done = subprocess.run([sys.executable, str(child), mode, host, str(port), KEYSPACE],
                          capture_output=True, text=True, timeout=300, env=dict(os.environ))
    assert done.returncode == 0, done.stderr[-3000:]
    assert "caught ScanError" in done.stdout, (done.stdout, done.stderr[-3000:])
