"""Frames written on the caller's thread over the driver's libev reactor
(:mod:`cqlcodec.connection.direct_write`), against the real server: many threads, small
frames written directly beside large ones written by the IO thread, every answer right;
the loop is not woken per request; timers added without a wake-up still fire on time."""

from __future__ import annotations

import random
import sys
import threading
import time
from collections.abc import Iterator
from types import FrameType
from typing import Any

import pytest
from cassandra.cluster import Cluster, Session

import cqlcodec.driver
from cqlcodec.connection import direct_write

from .conftest import new_cluster

pytestmark = pytest.mark.skipif(direct_write.LibevConnection is None or
                                Cluster.connection_class is not direct_write.LibevConnection,
                                reason="the driver's libev reactor is not its default here")
THREADS = 6
PER_THREAD = 120
LARGE = 20_000  # bytes of a value: its frame is cut into the driver's 4 KiB chunks


@pytest.fixture(scope="module", params=[4, 5], ids=["v4", "v5"])
def session(request: pytest.FixtureRequest) -> Iterator[Session]:
    cluster = new_cluster(request.param, connection_class=Cluster.connection_class)
    cqlcodec.driver.install(cluster, connection=True)
    assert cluster.connection_class.push is direct_write.push
    s = cluster.connect()
    s.execute("CREATE KEYSPACE IF NOT EXISTS cqlcodec_direct WITH replication = "
              "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    s.execute("CREATE TABLE IF NOT EXISTS cqlcodec_direct.kv (k int PRIMARY KEY, v blob)")
    yield s
    cluster.shutdown()


def test_many_threads_every_answer_right(session: Session) -> None:
    insert = session.prepare("INSERT INTO cqlcodec_direct.kv (k, v) VALUES (?, ?)")
    select = session.prepare("SELECT k, v FROM cqlcodec_direct.kv WHERE k = ?")
    failures: list[str] = []

    def value(k: int) -> bytes:
        size = LARGE if k % 5 == 0 else k % 97
        return random.Random(k).randbytes(size)

    def worker(t: int) -> None:
        try:
            keys = [t * PER_THREAD + i for i in range(PER_THREAD)]
            futures = [session.execute_async(insert, (k, value(k))) for k in keys]
            for f in futures:
                f.result()
            reads = [(k, session.execute_async(select, (k,))) for k in keys]
            for k, f in reads:
                rows = list(f.result())
                if [(r.k, r.v) for r in rows] != [(k, value(k))]:
                    failures.append(f"key {k}: {rows!r:.80}")
            for k in keys:  # one at a time too: often the only request in flight
                if session.execute(select, (k,)).one().v != value(k):
                    failures.append(f"key {k}, one at a time")
        except Exception as exc:  # noqa: BLE001 - reported below
            failures.append(f"thread {t}: {exc!r}")

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not failures, failures[:5]


def test_the_loop_is_not_woken_per_request(session: Session,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    loop: Any = direct_write.libevreactor._global_loop
    woken: list[str] = []
    others: list[str] = []
    notify = loop.notify
    connections = _connections(session)
    timer_code = {direct_write.create_timer.__code__, direct_write._Marker._fired.__code__}

    def counted() -> None:
        # only the wake-ups this session's requests cause: the test process's other
        # clusters share the loop (their heartbeats, and the schema refreshes that follow
        # the DDL of the tests before, debounced by a window of up to two seconds)
        frame: FrameType | None = sys._getframe(1)
        for _ in range(3):
            if frame is None:
                others.append("?")
                break
            if frame.f_code in timer_code or (frame.f_code.co_name == "push" and any(
                    frame.f_locals.get("self") is c for c in connections)):
                woken.append(frame.f_code.co_name)
                break
            frame = frame.f_back
        else:
            others.append(sys._getframe(1).f_code.co_name)
        notify()
    monkeypatch.setattr(loop, "notify", counted)
    select = session.prepare("SELECT k FROM cqlcodec_direct.kv WHERE k = ?")
    session.execute(select, (1,))
    woken.clear()
    started = time.monotonic()
    for k in range(200):
        session.execute(select, (k,))
    seconds = time.monotonic() - started
    # the driver's push wakes the loop once per request (200 here); with cqlcodec only a
    # new marker timer (one a second) or a frame the socket did not take whole do: a
    # bound far below 200 that a loaded machine's slow seconds do not break
    assert len(woken) <= min(50, 5 + 2 * seconds), (woken, seconds, len(others))


def _connections(session: Session) -> list[Any]:
    pools: Any = session._pools  # type: ignore[attr-defined]
    found = [c for pool in pools.values()
             for c in ([getattr(pool, "_connection", None)]  # cassandra-driver: one per host
                       + list(getattr(pool, "_connections", {}).values())) if c is not None]
    assert found, "no connection in the session's pools"
    return found


def test_timers_added_without_a_wake_up_fire_on_time(session: Session,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    if session.cluster.protocol_version != 5:
        pytest.skip("timers do not depend on the protocol: once is enough")
    monkeypatch.setattr(direct_write, "_marker", None)  # a new one, a second from its end
    connection_class: Any = session.cluster.connection_class
    fired: dict[str, float] = {}
    done = threading.Event()

    def at(name: str) -> Any:
        def callback() -> None:
            fired[name] = time.monotonic()
            if len(fired) == 3:
                done.set()
        return callback

    started = time.monotonic()
    connection_class.create_timer(0.2, at("short"))  # makes a marker and wakes the loop
    marker = direct_write._marker
    assert marker is not None and not marker.fired
    late = marker.end - time.time() + 0.3
    connection_class.create_timer(late, at("after the marker"))  # no wake-up for this one
    assert direct_write._marker is marker
    connection_class.create_timer(late + 0.5, at("later"))
    assert done.wait(30), fired
    assert fired["short"] - started >= 0.2
    assert late <= fired["after the marker"] - started < late + 2
    assert late + 0.5 <= fired["later"] - started < late + 2.5


def _switches(thread: threading.Thread) -> int:
    with open(f"/proc/self/task/{thread.native_id}/status") as status:
        for line in status:
            if line.startswith("voluntary_ctxt_switches:"):
                return int(line.split()[1])
    raise AssertionError("no voluntary_ctxt_switches line")


def test_the_loop_rests_once_the_last_timer_ends(session: Session,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The loop arms its libev timer as a repeating one and re-arms it only while a timer is
    left: after the last one (here a marker) ended it fired on at that last period, a
    microsecond or less, 10,000 times a second, until a new timer came."""
    if session.cluster.protocol_version != 5:
        pytest.skip("timers do not depend on the protocol: once is enough")
    loop: Any = direct_write.libevreactor._global_loop
    if loop._thread is None or not hasattr(threading.Thread, "native_id"):
        pytest.skip("no loop thread to watch")
    monkeypatch.setattr(direct_write, "_marker", None)
    connection_class: Any = session.cluster.connection_class
    connection_class.create_timer(0.05, lambda: None)  # makes a marker, a second long
    marker = direct_write._marker
    assert marker is not None
    deadline = time.monotonic() + 30
    while not marker.fired and time.monotonic() < deadline:  # the loop runs, and arms its
        loop.notify()  # timer, again and again up to the marker's end, as while reading pages
        time.sleep(0.0005)
    assert marker.fired
    time.sleep(0.1)
    before = _switches(loop._thread)
    time.sleep(0.5)
    woke = _switches(loop._thread) - before
    assert woke < 50, woke  # answers to other tests' clusters' heartbeats at most
