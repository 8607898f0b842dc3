"""cqlcodec's request path (``cqlcodec.aio.connect``) on the real 3-node cluster (RF 2,
the driver's default token-aware policy): every request goes to a replica of its key, as
the requests each connection carried show against the token map; a statement prepared
on one node only is prepared again where it is unknown (``UNPREPARED``) without an error;
and under a load of reads, idempotent writes and counter increments (100 in flight),
node 3 is SIGKILLed, then started again: reads and idempotent writes all complete, a
counter increment that fails raises the driver's error, and no increment is applied
twice."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from cassandra import ConsistencyLevel, OperationTimedOut, ReadTimeout, Unavailable, WriteTimeout
from cassandra.cluster import NoHostAvailable, Session
from cassandra.connection import ConnectionShutdown
from cassandra.query import BoundStatement, SimpleStatement

from cqlcodec import aio
from cqlcodec.requests import FastSession

from .conftest import connect_rf2
from .test_cluster_scan import _cluster_sh, _node3_pid, _wait_until_node3_is_up

KEYSPACE = "requests_cluster"
KEYS = 1000
IN_FLIGHT = 100


def value_of(key: int) -> str:
    """The one value ever written to ``key``."""
    return f"v{key}"


@pytest.fixture(scope="module")
def session() -> Iterator[Session]:
    """A session on the 3 nodes (the driver's default policy: token-aware) with ``kv``
    written at ALL and an empty counter table."""
    cluster, s = connect_rf2(KEYSPACE)
    s.set_keyspace(KEYSPACE)
    s.execute("CREATE TABLE IF NOT EXISTS kv (k int PRIMARY KEY, v text)", timeout=120)
    s.execute("DROP TABLE IF EXISTS hits", timeout=120)  # TRUNCATE of counters is slow
    s.execute("CREATE TABLE hits (k int PRIMARY KEY, n counter)", timeout=120)
    insert = s.prepare("INSERT INTO kv (k, v) VALUES (?, ?)")
    insert.consistency_level = ConsistencyLevel.ALL

    async def fill() -> None:
        async with await aio.connect(s) as fast:
            for start in range(0, KEYS, IN_FLIGHT):
                await asyncio.gather(*(fast.execute(insert, (k, value_of(k)))
                                       for k in range(start, start + IN_FLIGHT)))
    asyncio.run(fill())
    yield s
    cluster.shutdown()


def test_requests_go_to_a_replica_of_their_key(session: Session) -> None:
    read = session.prepare("SELECT k, v FROM kv WHERE k = ?")
    one_node_text = f"SELECT v AS v_{os.getpid()} FROM {KEYSPACE}.kv WHERE k = ?"

    async def main(fast: FastSession) -> tuple[list[Any], dict[Any, int], int, list[Any]]:
        await asyncio.gather(*(fast.execute(read, (k,)) for k in range(60)))  # every node
        before = {host: conn.sent for host, conn in fast._pool.conns.items()}
        results: list[Any] = []
        for start in range(0, KEYS, IN_FLIGHT):
            results += await asyncio.gather(*(fast.execute(read, (k,))
                                              for k in range(start, start + IN_FLIGHT)))
        carried = {host: conn.sent - before.get(host, 0) for host, conn in fast._pool.conns.items()}
        # prepared through the request path: on one node only; the others answer UNPREPARED
        mine = await fast.prepare(one_node_text)
        again = [(await fast.execute(mine, (k,))).one()[0] for k in range(0, KEYS, 7)]
        return results, carried, fast.reprepared, again

    results, carried, reprepared, again = asyncio.run(_with_fast(session, main))
    metadata = session.cluster.metadata
    for k, result in enumerate(results):
        assert [tuple(r) for r in result] == [(k, value_of(k))]
        replicas = metadata.get_replicas(KEYSPACE, read.bind((k,)).routing_key)
        assert len(replicas) == 2 and result.coordinator in replicas, (k, result.coordinator)
    # each connection carried exactly the requests its host coordinated
    assert carried == Counter(r.coordinator for r in results)
    assert len(carried) == 3, carried
    assert again == [value_of(k) for k in range(0, KEYS, 7)]
    assert reprepared >= 1  # the nodes that had not seen the statement


def test_host_targeting_sends_every_request_to_that_node(session: Session) -> None:
    read = session.prepare("SELECT k, v FROM kv WHERE k = ?")
    hosts = sorted(session.cluster.metadata.all_hosts(), key=str)
    keys = range(0, KEYS, 20)

    async def main(fast: FastSession) -> list[tuple[Any, list[Any], dict[Any, int]]]:
        out = []
        for host in hosts:
            await fast.execute(read, (0,), host=host)  # its connection open before counting
            before = {h: conn.sent for h, conn in fast._pool.conns.items()}
            results = await asyncio.gather(*(fast.execute(read, (k,), host=host) for k in keys))
            carried = {h: conn.sent - before.get(h, 0) for h, conn in fast._pool.conns.items()}
            out.append((host, results, carried))
        return out

    metadata = session.cluster.metadata
    for host, results, carried in asyncio.run(_with_fast(session, main)):
        assert {h: n for h, n in carried.items() if n} == {host: len(keys)}, (host, carried)
        for k, result in zip(keys, results):
            assert result.coordinator is host
            assert [tuple(r) for r in result] == [(k, value_of(k))]
        # a node that is no replica of a key coordinates its read all the same
        assert any(host not in metadata.get_replicas(KEYSPACE, read.bind((k,)).routing_key)
                   for k in keys)


def _read_counters(session: Session, keys: list[int]) -> dict[int, Any]:
    """Each key's counter read by itself at ALL through the driver (None: no row); a
    read the cluster cannot serve yet (node 3 just started) is tried again."""
    select = session.prepare("SELECT n FROM hits WHERE k = ?")
    select.consistency_level = ConsistencyLevel.ALL
    counts: dict[int, Any] = {}
    deadline = time.monotonic() + 120
    while len(counts) < len(keys):
        todo = [k for k in keys if k not in counts]
        futures = [(k, session.execute_async(select, (k,), timeout=60)) for k in todo[:500]]
        for k, future in futures:
            try:
                rows = future.result()
            except (Unavailable, ReadTimeout, NoHostAvailable, OperationTimedOut):
                assert time.monotonic() < deadline, f"key {k} cannot be read at ALL"
                continue
            counts[k] = next((r.n for r in rows), None)
    return counts


def _replicas(session: Session, bump: Any, n: int) -> list[Any]:
    """The replicas of counter key ``n`` (the statement's own ``keyspace`` is None: it was
    prepared in the session's keyspace, not with ``keyspace=``)."""
    return list(session.cluster.metadata.get_replicas(
        KEYSPACE, BoundStatement(bump).bind((n,)).routing_key))


def _explain(session: Session, bump: Any, load: Load, bad: list[tuple[int, Any]]) -> list[Any]:
    """Per key read back wrong (at most five): its value read at ALL, its replicas, the
    host that answered its increment, and what each replica holds (ONE, that host)."""
    out: list[Any] = []
    one = SimpleStatement("SELECT n FROM hits WHERE k = %s", consistency_level=ConsistencyLevel.ONE)
    for n, count in bad[:5]:
        replicas = _replicas(session, bump, n)
        held: dict[str, Any] = {}
        for host in replicas:
            try:
                held[host.address] = [r.n for r in session.execute(one, (n,), host=host, timeout=30)]
            except Exception as exc:  # noqa: BLE001 - what the replica said, for the message
                held[host.address] = repr(exc)
        out.append({"key": n, "read at ALL": count, "answered by": load.bump_hosts.get(n),
                    "replicas": [h.address for h in replicas], "held": held})
    return out


async def _with_fast(session: Session, main: Any) -> Any:
    async with await aio.connect(session) as fast:
        return await main(fast)


class Load:
    """Reads, idempotent writes and counter increments (each key incremented once) by
    ``IN_FLIGHT`` workers, with what each gave."""

    def __init__(self) -> None:
        self.issued = 0
        self.stop = False
        self.errors: list[tuple[str, int, BaseException]] = []
        self.bumped: dict[int, bool] = {}  # counter key -> increment answered
        self.bump_hosts: dict[int, Any] = {}  # counter key -> the host that answered it
        self.wrong: list[Any] = []
        self.answered = 0

    async def worker(self, fast: FastSession, read: Any, write: Any, bump: Any) -> None:
        while not self.stop:
            n = self.issued
            self.issued += 1
            key = n % KEYS
            kind = ("write", "read", "bump")[n % 3]
            try:
                if kind == "write":
                    await fast.execute(write, (key, value_of(key)), timeout=12)
                elif kind == "read":
                    rows = (await fast.execute(read, (key,), timeout=12)).rows
                    if [tuple(r) for r in rows] != [(key, value_of(key))]:
                        self.wrong.append((key, rows))
                else:
                    self.bumped[n] = False
                    answer = await fast.execute(bump, (n,), timeout=12)
                    self.bumped[n] = True
                    self.bump_hosts[n] = answer.coordinator
                self.answered += 1
            except Exception as exc:  # noqa: BLE001 - each is checked below
                self.errors.append((kind, n, exc))


def test_a_node_killed_and_started_again_mid_load(session: Session) -> None:
    _wait_until_node3_is_up(session)
    read = session.prepare("SELECT k, v FROM kv WHERE k = ?")
    write = session.prepare("INSERT INTO kv (k, v) VALUES (?, ?)")
    write.is_idempotent = True
    bump = session.prepare("UPDATE hits SET n = n + 1 WHERE k = ?")  # not idempotent
    node3 = next(h for h in session.cluster.metadata.all_hosts() if h.address == "127.0.0.3")
    load = Load()
    log: list[str] = []
    killed_at: list[int] = []  # the requests issued when node 3 was killed

    async def control(fast: FastSession) -> None:
        loop = asyncio.get_running_loop()
        deadline = time.monotonic() + 150
        while load.answered < 1000:
            await asyncio.sleep(0.01)
        os.kill(_node3_pid(), signal.SIGKILL)
        killed_at.append(load.issued)
        log.append(f"killed node 3 at {load.issued}")
        mark = load.answered
        while load.answered < mark + 1000:
            assert time.monotonic() < deadline, "no progress after the kill"
            await asyncio.sleep(0.01)
        log.append(f"starting node 3 at {load.issued}")
        await loop.run_in_executor(None, _cluster_sh, "start-node", "3")
        log.append(f"node 3 started at {load.issued}")
        # until node 3 coordinated 200 more requests of ours (the driver sees it up, the
        # request path connects to it again)
        sent: int | None = None
        while True:
            assert time.monotonic() < deadline, f"node 3 never came back: {log}"
            conn = fast._pool.conns.get(node3)
            if conn is not None:
                sent = conn.sent if sent is None else sent
                if conn.sent - sent >= 200:
                    break
            await asyncio.sleep(0.05)
        log.append(f"node 3 served again at {load.issued}")
        load.stop = True

    async def main(fast: FastSession) -> tuple[int, tuple[int, int, int], int]:
        await asyncio.gather(control(fast), *(load.worker(fast, read, write, bump)
                                              for _ in range(IN_FLIGHT)))
        return fast.reconnects, fast.leftovers(), fast.reprepared

    try:
        reconnects, leftovers, reprepared = asyncio.run(_with_fast(session, main))
    finally:
        _cluster_sh("start-node", "3")  # idempotent: later tests see 3 nodes
    print(f"{load.issued} requests, {len(load.errors)} errors "
          f"{Counter((k, type(e).__name__) for k, _n, e in load.errors)}, {reconnects} "
          f"reconnects, {reprepared} statements prepared again; {log}")
    assert not load.wrong, load.wrong[:3]
    # reads and idempotent writes completed on the other replicas
    assert [e for e in load.errors if e[0] != "bump"] == []
    # an increment whose node died raises the driver's error; it is not sent again
    allowed = (ConnectionShutdown, OperationTimedOut, WriteTimeout, NoHostAvailable, Unavailable)
    assert all(isinstance(e, allowed) for _k, _n, e in load.errors), load.errors[:3]
    assert leftovers == (0, 0, 0) and reconnects >= 1
    _wait_until_node3_is_up(session)
    counts = _read_counters(session, sorted(load.bumped))
    failed = {n for kind, n, _e in load.errors if kind == "bump"}
    # an answered increment is there once, or lost with node 3: an increment lives on its
    # leader replica alone until it has replicated, and the nodes sync their commit log
    # every 10 s (periodic: Cassandra's default, which may lose acknowledged writes to a
    # crash), so a SIGKILL may take an increment node 3 led and acknowledged just before.
    # Lost where node 3 is no replica, lost after the kill, or there twice: a failure.
    bad = [(n, counts[n]) for n, ok in load.bumped.items() if ok and counts[n] != 1]
    lost = [n for n, count in bad if count is None and n < killed_at[0]
            and node3 in _replicas(session, bump, n)]
    other = [(n, count) for n, count in bad if n not in lost]
    print(f"{len(lost)} answered increments lost with node 3 (led by it, not yet synced)")
    assert not other, \
        f"answered increments read back otherwise: {_explain(session, bump, load, other)}; {log}"
    # an increment that failed is there at most once (never sent again)
    assert all(counts[n] in (None, 1) for n in failed), \
        [(n, counts[n]) for n in failed if counts[n] not in (None, 1)][:10]
