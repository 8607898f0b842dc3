"""Table scans and loads on a real 3-node cluster (127.0.0.1-3, 16 vnodes each, RF 2): the
splits cover the ring exactly once, each split's pages are coordinated by one of its
replicas, a scan during which a node is SIGKILLed still gives every row exactly once, and
a load during which a node is SIGKILLed still writes every row."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import pytest
from cassandra import ConsistencyLevel, ReadTimeout, Unavailable
from cassandra.cluster import NoHostAvailable, Session
from cassandra.concurrent import execute_concurrent_with_args
from cassandra.query import SimpleStatement

from cqlcodec.driver import LoadProgress, ScanProgress, execute_columns, load_table, plan_splits, scan_table
from cqlcodec.driver.splits import MAX_TOKEN, MIN_TOKEN, replicas_of

from .conftest import connect_rf2

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KEYSPACE = "scan_cluster"
PARTITIONS = 500
ROWS_PER_PARTITION = 8


def _cluster_sh(*args: str) -> str:
    return subprocess.run(["bash", os.path.join(ROOT, "tools", "cluster.sh"), *args],
                          capture_output=True, text=True, timeout=300).stdout


@pytest.fixture(scope="module")
def session() -> Iterator[Session]:
    """A session on the 3 nodes with the test table written at consistency ALL."""
    cluster, s = connect_rf2(KEYSPACE)
    s.execute(f"CREATE TABLE IF NOT EXISTS {KEYSPACE}.t (p int, c int, v text, "
              "PRIMARY KEY (p, c))", timeout=120)
    s.execute(f"TRUNCATE {KEYSPACE}.t", timeout=120)
    insert = s.prepare(f"INSERT INTO {KEYSPACE}.t (p, c, v) VALUES (?, ?, ?)")
    insert.consistency_level = ConsistencyLevel.ALL
    execute_concurrent_with_args(s, insert, [(p, c, f"v{p}.{c}") for p in range(PARTITIONS)
                                             for c in range(ROWS_PER_PARTITION)], concurrency=32)
    yield s
    cluster.shutdown()


def _expected(session: Session) -> list[Any]:
    statement = SimpleStatement(f"SELECT p, c, v FROM {KEYSPACE}.t",
                                consistency_level=ConsistencyLevel.ALL, fetch_size=5000)
    rows = sorted((r.p, r.c, r.v) for r in session.execute(statement))
    assert len(rows) == PARTITIONS * ROWS_PER_PARTITION
    return rows


def _rows(table: Any) -> list[Any]:
    return sorted(zip(*(table.column(n).to_pylist() for n in ["p", "c", "v"])))


def test_three_nodes_sixteen_tokens_each(session: Session) -> None:
    hosts = session.cluster.metadata.all_hosts()
    assert sorted(h.address for h in hosts) == ["127.0.0.1", "127.0.0.2", "127.0.0.3"]
    assert len(session.cluster.metadata.token_map.ring) == 48


def test_coverage_and_replica_routing(session: Session) -> None:
    splits = plan_splits(session, f"{KEYSPACE}.t")
    assert splits[0].start == MIN_TOKEN and splits[-1].end == MAX_TOKEN
    assert all(a.end == b.start for a, b in zip(splits, splits[1:]))
    ring = sorted(int(t.value) for t in session.cluster.metadata.token_map.ring)
    for split in splits:
        assert len(split.replicas) == 2
        for token in [t for t in ring if split.start < t < split.end] + [split.end]:
            assert {h.address for h in replicas_of(session, KEYSPACE, token)} == set(split.replicas)
    preferred = {s.replicas[0] for s in splits}
    assert preferred == {"127.0.0.1", "127.0.0.2", "127.0.0.3"}  # the work is spread
    scan = scan_table(session, f"{KEYSPACE}.t", splits=splits, fetch_size=200)
    assert _rows(scan.to_arrow()) == _expected(session)
    assert len(scan.readers) == len(splits)
    for index, reader in scan.readers.items():
        assert reader.coordinators, splits[index]
        assert set(reader.coordinators) <= set(splits[index].replicas), (splits[index], reader.coordinators)
    whole = execute_columns(session, f"SELECT p, c, v FROM {KEYSPACE}.t").to_arrow()
    assert _rows(whole) == _expected(session)


@pytest.fixture
def node3_back() -> Iterator[None]:
    """Starts node 3 again after the test (it joins the ring as it was)."""
    yield
    _cluster_sh("start-node", "3")


def _node3_pid() -> int:
    pids = {line.split()[1]: int(line.split()[2]) for line in _cluster_sh("status").splitlines()
            if len(line.split()) == 3}
    assert "127.0.0.3" in pids, "node 3 is not up"
    return pids["127.0.0.3"]


class _KillNode3:
    """A progress callback that SIGKILLs node 3 once ``after_rows`` rows went by, and
    sleeps ``pause`` seconds each call (a slow consumer: the kill lands mid-way)."""

    def __init__(self, after_rows: int, pause: float) -> None:
        self.pid = _node3_pid()
        self.after_rows = after_rows
        self.pause = pause
        self.killed = False

    def __call__(self, progress: ScanProgress | LoadProgress) -> None:
        if not self.killed and progress.rows >= self.after_rows:
            os.kill(self.pid, signal.SIGKILL)
            self.killed = True
        time.sleep(self.pause)


def test_a_node_killed_mid_scan(session: Session, node3_back: None) -> None:
    want = _expected(session)
    kill_once = _KillNode3(len(want) // 4, 0.01)
    scan = scan_table(session, f"{KEYSPACE}.t", concurrency=3, fetch_size=100, retries=6,
                      progress=kill_once)
    got = _rows(scan.to_arrow())
    assert kill_once.killed and scan.rows_fetched == len(want)
    assert got == want
    after = [r for r in scan.readers.values() if "127.0.0.3" in r.split.replicas]
    assert after, "no split had node 3 as a replica"
    failures = sum(len(r.failures) for r in scan.readers.values())
    print(f"killed node 3 after {len(want) // 4} rows; {failures} failed requests retried; "
          f"{len(scan.splits)} splits")


def _wait_until_node3_is_up(session: Session) -> None:
    """Until the driver holds node 3 up (it may just have been started again)."""
    deadline = time.monotonic() + 120
    while not any(h.address == "127.0.0.3" and h.is_up for h in session.cluster.metadata.all_hosts()):
        assert time.monotonic() < deadline, "the driver does not see node 3 up"
        time.sleep(1)


def test_a_node_killed_mid_load(session: Session) -> None:
    pyarrow = pytest.importorskip("pyarrow")
    want = _expected(session)
    _wait_until_node3_is_up(session)
    table = f"{KEYSPACE}.loaded_{os.getpid()}"  # a new table: TRUNCATE needs every node
    session.execute(f"CREATE TABLE {table} (p int, c int, v text, PRIMARY KEY (p, c))", timeout=120)
    source = pyarrow.table({"p": [r[0] for r in want], "c": [r[1] for r in want],
                            "v": [r[2] for r in want]})
    kill_once = _KillNode3(len(want) // 4, 0.05)
    try:
        result = load_table(session, table, source, chunk_rows=250, concurrency=4, retries=6,
                            progress=kill_once)
        assert kill_once.killed and result.rows == len(want) and not result.failures
    finally:
        _cluster_sh("start-node", "3")
    # every row, read at ALL once node 3 is back (a row only node 3 had acknowledged
    # before it died is there again)
    statement = SimpleStatement(f"SELECT p, c, v FROM {table}",
                                consistency_level=ConsistencyLevel.ALL, fetch_size=5000)
    deadline = time.monotonic() + 120
    while True:
        try:
            got = sorted((r.p, r.c, r.v) for r in session.execute(statement, timeout=60))
            break
        except (Unavailable, ReadTimeout, NoHostAvailable):
            if time.monotonic() > deadline:
                raise
            time.sleep(2)  # node 3 is not yet seen up by the coordinator
    assert got == want
    session.execute(f"DROP TABLE {table}", timeout=120)
    print(f"killed node 3 after {len(want) // 4} rows of a load; {result.requests} requests")
