"""The request path's connection against a small CQL-framed server on a local socket:
many requests in flight, answers out of order, one write per loop iteration, waiting
for room, cancellation, timeouts and a closed connection, with nothing left behind; the
heartbeat closes a connection whose peer went silent and keeps one that answers."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from cassandra import OperationTimedOut
from cassandra.connection import ConnectionShutdown

from cqlcodec.connection.reassembler import FrameReassembler
from cqlcodec.requests.connection import Connection
from cqlcodec.requests.deadlines import Deadlines
from cqlcodec.requests.frames import OP_QUERY, OP_RESULT, envelope, segments
from cqlcodec.requests.heartbeat import Heartbeat


class EchoServer(asyncio.Protocol):
    """Answers each request with a RESULT carrying the request's body, the requests of
    one read in reverse order; bodies starting with b"hold" wait for :meth:`release`."""

    def __init__(self, version: int) -> None:
        self.version = version
        self.reader = FrameReassembler([version])
        if version >= 5:
            self.reader.enable_segments(None)
        self.transport: Any = None
        self.held: list[bytes] = []
        self.in_flight_peak = 0
        self.open: set[int] = set()

    def connection_made(self, transport: Any) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.reader.write(data)
        answers = []
        while self.reader.next_frame():
            stream, body = self.reader.stream, bytes(self.reader.body)
            assert stream not in self.open, f"stream {stream} reused before its answer"
            self.open.add(stream)
            self.in_flight_peak = max(self.in_flight_peak, len(self.open))
            answer = envelope(0x80 | self.version, 0, stream, OP_RESULT, body)
            if body.startswith(b"hold"):
                self.held.append(answer)
                self.open.discard(stream)  # the client may not reuse it, checked there
            else:
                answers.append((stream, answer))
        for stream, frame in reversed(answers):
            self.open.discard(stream)
            self.send([frame])

    def send(self, frames: list[bytes]) -> None:
        self.transport.write(segments(frames) if self.version >= 5 else b"".join(frames))

    def release(self) -> None:
        held, self.held = self.held, []
        if held:
            self.send(held)


async def with_server(version: int, body: Callable[[Connection, EchoServer], Awaitable[None]],
                      max_in_flight: int = 100) -> None:
    loop = asyncio.get_running_loop()
    servers: list[EchoServer] = []

    def make() -> EchoServer:
        servers.append(EchoServer(version))
        return servers[-1]
    server = await loop.create_server(make, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    conn = Connection(loop, version, "test-host", max_in_flight)
    factory: Any = lambda: conn  # noqa: E731
    await loop.create_connection(factory, "127.0.0.1", port)
    if version >= 5:
        conn.start_segments()
    try:
        await body(conn, servers[0])
    finally:
        conn.close()
        server.close()
        await server.wait_closed()


async def ask(conn: Connection, body: bytes, timeout: float | None = None) -> bytes:
    if not conn.has_room():
        await conn.wait_slot()
    frame = await conn.request(OP_QUERY, body, 0, timeout)
    assert frame.opcode == OP_RESULT
    return frame.body


@pytest.mark.parametrize("version", [4, 5])
def test_many_in_flight_answered_out_of_order(version: int) -> None:
    async def body(conn: Connection, server: EchoServer) -> None:
        bodies = [f"request {i}".encode() * (1 + i % 7) for i in range(2000)]
        got = await asyncio.gather(*(ask(conn, b) for b in bodies))
        assert got == bodies
        assert server.in_flight_peak <= 100  # the bound held
        assert conn.writes < len(bodies) / 10  # the frames of one iteration share a write
        assert conn.leftovers() == (0, 0, 0)
    asyncio.run(with_server(version, body))


def test_cancelled_requests_keep_their_ids_until_answered() -> None:
    async def body(conn: Connection, server: EchoServer) -> None:
        tasks = [asyncio.ensure_future(ask(conn, b"hold %d" % i)) for i in range(80)]
        while len(server.held) < 80:
            await asyncio.sleep(0.01)
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        assert conn.in_flight() == 80  # answers still owed: ids not reusable
        assert await ask(conn, b"meanwhile") == b"meanwhile"
        server.release()
        while conn.in_flight():
            await asyncio.sleep(0.01)
        assert conn.leftovers() == (0, 0, 0)
        assert await asyncio.gather(*(ask(conn, b"after %d" % i) for i in range(300))) == \
            [b"after %d" % i for i in range(300)]
    asyncio.run(with_server(4, body))


def test_callers_beyond_the_bound_wait_and_cancelled_waiters_pass_their_turn() -> None:
    async def body(conn: Connection, server: EchoServer) -> None:
        holders = [asyncio.ensure_future(ask(conn, b"hold %d" % i)) for i in range(10)]
        while len(server.held) < 10:
            await asyncio.sleep(0.01)
        waiting = [asyncio.ensure_future(ask(conn, b"later %d" % i)) for i in range(5)]
        await asyncio.sleep(0.05)
        assert not any(t.done() for t in waiting)
        waiting[0].cancel()
        server.release()
        assert await asyncio.gather(*holders) == [b"hold %d" % i for i in range(10)]
        assert await asyncio.gather(*waiting[1:]) == [b"later %d" % i for i in range(1, 5)]
        assert conn.leftovers() == (0, 0, 0)
    asyncio.run(with_server(5, body, max_in_flight=10))


def test_a_timed_out_request_raises_and_its_id_waits_for_the_late_answer() -> None:
    async def body(conn: Connection, server: EchoServer) -> None:
        with pytest.raises(OperationTimedOut):
            await ask(conn, b"hold late", timeout=0.05)
        assert conn.in_flight() == 1 and conn.streams.orphans == {0}
        server.release()
        while conn.in_flight():
            await asyncio.sleep(0.01)
        assert conn.leftovers() == (0, 0, 0)
    asyncio.run(with_server(4, body))


def test_a_closed_connection_fails_what_is_in_flight_and_keeps_nothing() -> None:
    async def body(conn: Connection, server: EchoServer) -> None:
        tasks = [asyncio.ensure_future(ask(conn, b"hold %d" % i, timeout=30)) for i in range(50)]
        while len(server.held) < 50:
            await asyncio.sleep(0.01)
        server.transport.close()
        results = await asyncio.gather(*tasks, return_exceptions=True)
        assert all(isinstance(r, ConnectionShutdown) for r in results)
        assert conn.closed and conn.leftovers() == (0, 0, 0)
        with pytest.raises(ConnectionShutdown):
            conn.request(OP_QUERY, b"x")
    asyncio.run(with_server(5, body))


def test_deadlines_of_answered_requests_do_not_pile_up_and_mixed_timeouts_expire_in_order() -> None:
    async def body(conn: Connection, server: EchoServer) -> None:
        for _ in range(5):
            await asyncio.gather(*(ask(conn, b"quick %d" % i, timeout=60) for i in range(500)))
            assert conn.deadlines.size <= 2 * 100 + 64  # answered entries are dropped
        assert conn.deadlines.pending() == 0
        # a request with another timeout than the others (a retry's remaining time)
        mixed = [asyncio.ensure_future(ask(conn, b"quick %d" % i, timeout=60 if i % 3 else 7.5))
                 for i in range(300)]
        await asyncio.gather(*mixed)
        assert conn.deadlines.size <= 2 * (2 * 100 + 64) and conn.deadlines.pending() == 0
        started = asyncio.get_running_loop().time()
        slow = asyncio.ensure_future(ask(conn, b"hold slow", timeout=0.6))
        fast = asyncio.ensure_future(ask(conn, b"hold fast", timeout=0.1))
        with pytest.raises(OperationTimedOut):
            await fast
        assert not slow.done()
        assert asyncio.get_running_loop().time() - started < 0.5
        with pytest.raises(OperationTimedOut):
            await slow
        server.release()
        while conn.in_flight():
            await asyncio.sleep(0.01)
        assert conn.leftovers() == (0, 0, 0)
    asyncio.run(with_server(4, body))


class Silent(asyncio.Protocol):
    """Reads everything, answers nothing, never closes (a peer gone quiet)."""

    def data_received(self, data: bytes) -> None:
        pass


@pytest.mark.parametrize("version", [4, 5])
def test_a_silent_peer_is_found_and_its_requests_fail(version: int) -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        server = await loop.create_server(Silent, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        conn = Connection(loop, version, "silent-host", 16)
        factory: Any = lambda: conn  # noqa: E731
        await loop.create_connection(factory, "127.0.0.1", port)
        if version >= 5:
            conn.start_segments()
        beat = Heartbeat(conn, 0.05, 0.1)
        try:
            started = loop.time()
            with pytest.raises(ConnectionShutdown, match="heartbeat"):
                await conn.request(OP_QUERY, b"no timeout", 0, None)  # would wait forever
            assert loop.time() - started < 2.0
            assert conn.closed and beat.sent >= 1 and conn.leftovers() == (0, 0, 0)
        finally:
            conn.close()
            server.close()
            await server.wait_closed()
    asyncio.run(main())


@pytest.mark.parametrize("taken", [4, 5])
def test_a_silent_peer_is_found_with_every_request_slot_taken(taken: int) -> None:
    """Every one of ``max_in_flight`` requests waits on a silent peer: the heartbeat goes
    out on the stream id kept for it and closes the connection; with that id taken too,
    the connection is closed without one (as the driver's heartbeat does)."""
    async def main() -> None:
        loop = asyncio.get_running_loop()
        server = await loop.create_server(Silent, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        conn = Connection(loop, 4, "silent-host", 4)
        factory: Any = lambda: conn  # noqa: E731
        await loop.create_connection(factory, "127.0.0.1", port)
        beat = Heartbeat(conn, 0.05, 0.1)
        try:
            waiting = [conn.request(OP_QUERY, b"no timeout", 0, None) for _ in range(taken)]
            assert not conn.has_room()
            done = await asyncio.gather(*waiting, return_exceptions=True)
            assert all(isinstance(e, ConnectionShutdown) for e in done), done
            expected = "heartbeat" if taken == 4 else "every stream id is in use"
            assert all(expected in str(e) for e in done), done
            assert conn.closed and beat.sent == (1 if taken == 4 else 0)
            assert conn.leftovers() == (0, 0, 0)
        finally:
            conn.close()
            server.close()
            await server.wait_closed()
    asyncio.run(asyncio.wait_for(main(), 10))


def test_a_connection_with_too_many_timed_out_requests_is_retired() -> None:
    """Three quarters of ``max_in_flight`` requests timed out unanswered: the connection
    tells its pool to replace it, still answers what waits on it, and closes once only
    answers nobody waits for are owed."""
    async def body(conn: Connection, server: EchoServer) -> None:
        retired: list[Connection] = []
        conn.on_retire = retired.append
        live = [asyncio.ensure_future(conn.request(OP_QUERY, b"hold live %d" % i, 0, None))
                for i in range(2)]
        late = await asyncio.gather(*(conn.request(OP_QUERY, b"hold late %d" % i, 0, 0.05)
                                      for i in range(6)), return_exceptions=True)
        assert all(isinstance(e, OperationTimedOut) for e in late) and not retired
        with pytest.raises(OperationTimedOut):
            await conn.request(OP_QUERY, b"hold late 6", 0, 0.05)  # the 7th of 10: retired
        assert retired == [conn] and conn.retiring and conn.error is None  # not closed yet
        assert await ask(conn, b"meanwhile") == b"meanwhile"  # what is sent on it still runs
        server.release()
        assert [(await f).body for f in live] == [b"hold live 0", b"hold live 1"]
        for _ in range(100):
            if conn.closed:
                break
            await asyncio.sleep(0.01)
        assert conn.closed and "replaced" in str(conn.error)
        assert conn.leftovers() == (0, 0, 0)
    asyncio.run(with_server(4, body, max_in_flight=10))


def test_a_peer_that_answers_keeps_its_connection() -> None:
    async def body(conn: Connection, server: EchoServer) -> None:
        beat = Heartbeat(conn, 0.03, 0.5)
        while beat.sent < 3:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)
        assert not conn.closed and await ask(conn, b"still here") == b"still here"
        busy = beat.sent
        for _ in range(10):  # requests answered in every interval: no heartbeat needed
            assert await ask(conn, b"busy") == b"busy"
            await asyncio.sleep(0.01)
        assert beat.sent <= busy + 1
    asyncio.run(with_server(4, body))


def test_deadlines_of_the_queue_and_the_heap_expire_in_deadline_order() -> None:
    async def main() -> list[tuple[int, float]]:
        loop = asyncio.get_running_loop()
        expired: list[tuple[int, float]] = []
        futs = [loop.create_future() for _ in range(6)]
        waiters: list[Any] = list(futs)  # a connection's future per stream id
        deadlines = Deadlines(loop, lambda sid, fut, timeout: expired.append((sid, timeout)),
                              waiters)
        for sid, timeout in enumerate((0.3, 0.3, 0.1, 0.3, 0.2, 0.05)):
            deadlines.add(timeout, sid, futs[sid], 6)
        futs[1].set_result(None)  # answered: never expired
        waiters[1] = None
        await asyncio.sleep(0.45)
        assert deadlines.pending() == 0
        return expired
    assert [sid for sid, _ in asyncio.run(main())] == [5, 2, 4, 0, 3]


def test_deadlines_in_asking_order_are_queued_whatever_the_first_timeout() -> None:
    async def main() -> tuple[int, int, int]:
        loop = asyncio.get_running_loop()
        futs = [loop.create_future() for _ in range(300)]
        waiters: list[Any] = list(futs)
        deadlines = Deadlines(loop, lambda sid, fut, timeout: None, waiters)
        deadlines.add(7.5, 0, futs[0], 1)  # a connection's first request: a retry's time left
        for sid in range(1, 200):  # then the profile's timeout: later deadlines, queued
            deadlines.add(60.0, sid, futs[sid], sid + 1)
        queued_only = deadlines.out_of_order
        deadlines.add(7.5, 200, futs[200], 201)  # earlier than the last queued: the heap
        deadlines.add(60.0, 201, futs[201], 202)
        heaped, kept = deadlines.out_of_order, deadlines.size
        deadlines.clear()
        return queued_only, heaped, kept
    assert asyncio.run(main()) == (0, 1, 202)


def test_deadlines_forget_answered_requests_and_expire_the_rest_in_order() -> None:
    async def main() -> list[int]:
        loop = asyncio.get_running_loop()
        expired: list[int] = []
        n = 3000
        futs = [loop.create_future() for _ in range(n)]
        waiters: list[Any] = list(futs)
        deadlines = Deadlines(loop, lambda sid, fut, timeout: expired.append(sid), waiters)
        live = 0
        for sid in range(n):
            deadlines.add(0.2, sid, futs[sid], live + 1)
            if sid % 100 == 7:
                live += 1
            else:  # answered at once, as most are
                futs[sid].set_result(None)
                waiters[sid] = None
            assert deadlines.size <= 2 * (live + 1) + 64 + 1
        deadlines.add(0.05, 0, loop.create_future(), live + 1)  # another timeout: the heap
        assert deadlines.pending() == live + 1
        await asyncio.sleep(0.35)
        assert deadlines.pending() == 0 and deadlines.size == 0
        return expired
    assert asyncio.run(main()) == [0] + [sid for sid in range(3000) if sid % 100 == 7]
