"""Outages in the middle of the work, through a TCP proxy in front of the real server
(:class:`FaultProxy`): the whole host unreachable for 5 s and then, in the same run, for
20 s, during a ``scan_table``, a ``load_table`` and an ``unload`` on the command line
(a child process), and six cuts of every connection in 3 seconds during a scan. Each
gives every row exactly once, compared row by row with a direct read. The proxy slows
responses down a little so that the outages land mid-work on small tables."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile, Session
from cassandra.policies import ConstantReconnectionPolicy, RoundRobinPolicy

import cqlcodec
import cqlcodec.driver as cd

from .conftest import _host_port, new_cluster
from .faultproxy import FaultProxy

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

KS = "cqlcodec_outage"
ROWS = 3000
ROOT = Path(cqlcodec.__file__).resolve().parent.parent
Row = tuple[int, int, str]


@pytest.fixture(scope="module")
def direct() -> Iterator[Session]:
    """A session straight to the server (no proxy), with the keyspace and the table."""
    cluster = new_cluster(5)
    s = cluster.connect()
    s.execute(f"DROP KEYSPACE IF EXISTS {KS}")
    s.execute(f"CREATE KEYSPACE {KS} WITH replication = "
              "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    s.execute(f"CREATE TABLE {KS}.t (k int, c int, v text, PRIMARY KEY (k, c))")
    s.execute(f"CREATE TABLE {KS}.loaded (k int, c int, v text, PRIMARY KEY (k, c))")
    cd.load_table(s, f"{KS}.t", source_rows(0, ROWS))
    yield s
    s.execute(f"DROP KEYSPACE IF EXISTS {KS}")
    cluster.shutdown()


def source_rows(start: int, stop: int) -> Any:
    """Rows ``start`` to ``stop``: 4 per partition, a text that varies in length."""
    r = range(start, stop)
    return pa.table({"k": pa.array([i // 4 for i in r], pa.int32()),
                     "c": pa.array([i % 4 for i in r], pa.int32()),
                     "v": [f"value {i} " + "x" * (i % 50) for i in r]})


def read_directly(session: Session, table: str) -> list[Row]:
    """Every row of ``table`` through the plain driver (no proxy), sorted."""
    return sorted((r.k, r.c, r.v) for r in session.execute(f"SELECT k, c, v FROM {table}"))


def rows_of(table: Any) -> list[Row]:
    """The rows of an Arrow table or a ColumnBatch (columns k, c, v), in order."""
    return list(zip(*(table.column(n).to_pylist() for n in ("k", "c", "v"))))


def exactly_once(got: list[Row], expected: list[Row]) -> None:
    assert len({(k, c) for k, c, _ in got}) == len(got), "a row came twice"
    assert len(got) == len(expected)
    assert sorted(got) == expected


def proxied(proxy: FaultProxy, quick_reconnect: bool = True) -> Cluster:
    """A Cluster that reaches the server through ``proxy`` only; the driver reconnects
    every half second with ``quick_reconnect``, else on its default policy."""
    profile = ExecutionProfile(load_balancing_policy=RoundRobinPolicy(), request_timeout=10)
    options: dict[str, Any] = {}
    if quick_reconnect:
        options["reconnection_policy"] = ConstantReconnectionPolicy(0.5, max_attempts=None)
    return Cluster(["127.0.0.1"], port=proxy.port, protocol_version=5,
                   execution_profiles={EXEC_PROFILE_DEFAULT: profile},
                   connect_timeout=5, control_connection_timeout=5, **options)


def test_a_scan_rides_out_5_then_20_seconds_unreachable(direct: Session) -> None:
    expected = read_directly(direct, f"{KS}.t")
    with FaultProxy(_host_port(), seed=1) as proxy:
        proxy.latency = 0.01
        cluster = proxied(proxy)
        try:
            session = cluster.connect()
            waiting: list[str] = []
            scan = cd.scan_table(session, f"{KS}.t", ["k", "c", "v"], splits=8, concurrency=2,
                                 fetch_size=50,
                                 progress=lambda p: waiting.append(p.waiting) if p.waiting else None)
            got: list[Row] = []
            outages: list[threading.Thread] = []
            pages_after = 0
            for page, batch in enumerate(scan):
                got += rows_of(batch)
                if page == 5:
                    outages.append(proxy.outage(5.0, blackhole=True))
                elif page == 20:
                    outages[0].join()
                    outages.append(proxy.outage(20.0))
                elif page > 20 and not proxy.down:
                    pages_after += 1
            assert len(outages) == 2 and pages_after > 0, "the outages did not land mid-scan"
            assert proxy.refused > 0, "the driver never tried to reconnect during the outages"
            assert sum(len(r.failures) for r in scan.readers.values()) >= 2
            assert any(w.startswith("waiting for 127.0.0.1 (down ") for w in waiting), waiting
            exactly_once(got, expected)
        finally:
            cluster.shutdown()


def test_a_scan_rides_out_six_cuts_in_3_seconds_on_the_drivers_default_policy(
        direct: Session) -> None:
    expected = read_directly(direct, f"{KS}.t")
    with FaultProxy(_host_port(), seed=2) as proxy:
        proxy.latency = 0.005
        cluster = proxied(proxy, quick_reconnect=False)
        try:
            session = cluster.connect()
            scan = cd.scan_table(session, f"{KS}.t", ["k", "c", "v"], splits=8, concurrency=2,
                                 fetch_size=50)
            hits: list[int] = []

            def cut_six_times() -> None:
                for _ in range(6):
                    hits.append(proxy.cut_all())
                    time.sleep(0.5)

            cutter = threading.Thread(target=cut_six_times, daemon=True)
            got: list[Row] = []
            for page, batch in enumerate(scan):
                got += rows_of(batch)
                if page == 3:
                    cutter.start()
            cutter.join()
            # the driver reconnects 1 s after a cut on its default policy: some cuts find
            # the connections it opened again, others find none
            assert len(hits) == 6 and sum(1 for n in hits if n) >= 2, hits
            assert sum(len(r.failures) for r in scan.readers.values()) >= 1
            exactly_once(got, expected)
        finally:
            cluster.shutdown()


def test_a_load_rides_out_5_then_20_seconds_unreachable(direct: Session) -> None:
    table = f"{KS}.loaded"
    direct.execute(f"TRUNCATE {table}")
    source = source_rows(0, ROWS)
    chunk = 100
    outages: list[threading.Thread] = []
    with FaultProxy(_host_port(), seed=3) as proxy:
        proxy.latency = 0.005
        cluster = proxied(proxy)

        def batches() -> Iterator[Any]:
            for i, offset in enumerate(range(0, ROWS, chunk)):
                if i == 5:
                    outages.append(proxy.outage(5.0))
                elif i == 15:
                    outages[0].join()
                    outages.append(proxy.outage(20.0))
                yield source.slice(offset, chunk).to_batches()[0]

        try:
            session = cluster.connect()
            result = cd.load_table(session, table, batches(), chunk_rows=chunk, concurrency=4)
            assert len(outages) == 2 and proxy.refused > 0
            assert (result.rows, result.written, result.failures) == (ROWS, ROWS, [])
        finally:
            cluster.shutdown()
    exactly_once(read_directly(direct, table), sorted(rows_of(source)))


def test_an_unload_on_the_command_line_rides_out_5_then_20_seconds_unreachable(
        direct: Session, tmp_path: Path) -> None:
    expected = read_directly(direct, f"{KS}.t")
    out = tmp_path / "out"
    with FaultProxy(_host_port(), seed=4) as proxy:
        proxy.latency = 0.05
        env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        args = [sys.executable, "-m", "cqlcodec", "unload", f"{KS}.t", "-o", str(out),
                "--splits", "16", "--concurrency", "2", "--fetch-size", "50",
                "--host", "127.0.0.1", "--port", str(proxy.port), "--timeout", "10",
                "--retry-timeout", "90"]
        child = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True, cwd=ROOT)
        manifest = out / "_manifest.json"
        outages: list[threading.Thread] = []
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and child.poll() is None and len(outages) < 2:
            done = json.loads(manifest.read_text())["done"] if manifest.exists() else {}
            if len(done) >= 2 and not outages:
                outages.append(proxy.outage(5.0))
            elif len(done) >= 7 and len(outages) == 1 and not proxy.down:
                outages.append(proxy.outage(20.0))
            time.sleep(0.02)
        _, stderr = child.communicate(timeout=240)
        assert len(outages) == 2, "the unload ended before both outages"
        assert child.returncode == 0, stderr
        assert proxy.refused > 0
    files = sorted(out.glob("*.parquet"))
    got = [row for f in files for row in rows_of(pq.read_table(f))]
    exactly_once(got, expected)


def test_a_permanent_failure_mid_read_fails_at_once(direct: Session) -> None:
    """A table dropped between planning and reading: the server's InvalidRequest is not
    an outage, so the split fails at the first try, long before ``retry_timeout``."""
    direct.execute(f"CREATE TABLE IF NOT EXISTS {KS}.dropped (k int PRIMARY KEY, v text)")
    direct.execute(f"INSERT INTO {KS}.dropped (k, v) VALUES (1, 'one')")
    split = cd.plan_splits(direct, f"{KS}.dropped", 1)[0]
    reader = cd.read_split(direct, f"{KS}.dropped", split, retry_timeout=3600)
    direct.execute(f"DROP TABLE {KS}.dropped")
    with pytest.raises(cd.ScanError, match="failed: InvalidRequest") as info:
        list(reader)
    assert reader.failures == [] and info.value.split == split
