"""cqlcodec.connection.direct_write without a server: which classes get the caller-thread
writes, a frame written whole or its rest queued in order, cancelled timers."""

from __future__ import annotations

import importlib
import socket
import threading
from collections import deque
from collections.abc import Iterator
from typing import Any

import pytest

from cqlcodec.connection import direct_write

pytestmark = pytest.mark.skipif(not direct_write.FITS,
                                reason="the driver's libev reactor is not installed here")


def test_only_the_drivers_own_libev_connection_gets_them() -> None:
    asyncio_connection = importlib.import_module("cassandra.io.asyncioreactor").AsyncioConnection
    libev = direct_write.LibevConnection
    assert set(direct_write.direct_write_methods(libev)) >= {"push", "handle_write",
                                                             "create_timer"}
    assert direct_write.direct_write_methods(asyncio_connection) == {}

    class OwnPush(libev):  # type: ignore[misc,valid-type]
        def push(self, data: bytes) -> None:
            pass
    assert direct_write.direct_write_methods(OwnPush) == {}


class _Loop:
    def __init__(self) -> None:
        self.woken = 0

    def notify(self) -> None:
        self.woken += 1


class _Connection:
    """What push and handle_write use of a libev connection, over one end of a socket pair."""

    out_buffer_size = 4096
    is_closed = is_defunct = False
    _cqlcodec_io_writing = False
    _socket_writable = True

    def __init__(self, sock: socket.socket) -> None:
        self._socket = sock
        self.deque: deque[bytes] = deque()
        self._deque_lock = threading.Lock()
        self._requests: dict[int, Any] = {}

    def defunct(self, exc: BaseException) -> None:
        raise AssertionError(exc)

    push = direct_write.push
    handle_write = direct_write.handle_write


@pytest.fixture
def pair(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[_Connection, socket.socket, _Loop]]:
    ours, theirs = socket.socketpair()
    ours.setblocking(False)
    ours.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    loop = _Loop()
    monkeypatch.setattr(direct_write.libevreactor, "_global_loop", loop)
    yield _Connection(ours), theirs, loop
    ours.close()
    theirs.close()


def _read_all(sock: socket.socket, size: int) -> bytes:
    got = b""
    while len(got) < size:
        got += sock.recv(size - len(got))
    return got


def test_a_frame_is_written_whole_without_waking_the_loop(
        pair: tuple[_Connection, socket.socket, _Loop]) -> None:
    conn, theirs, loop = pair
    conn.push(b"frame one")
    conn.push(b"frame two")
    assert not conn.deque and loop.woken == 0
    assert _read_all(theirs, 18) == b"frame oneframe two"
    conn.push(b"x" * 5000)  # over out_buffer_size: the driver's push, the loop woken
    assert loop.woken == 1 and b"".join(conn.deque) == b"x" * 5000


def test_what_the_socket_does_not_take_is_queued_in_order(
        pair: tuple[_Connection, socket.socket, _Loop]) -> None:
    conn, theirs, loop = pair
    frames = [bytes([65 + i % 26]) * 4000 for i in range(200)]
    for frame in frames:
        conn.push(frame)
    assert conn.deque and loop.woken >= 1  # the socket filled up: the rest is queued
    reader = threading.Thread(target=lambda: got.append(_read_all(theirs, 800_000)))
    got: list[bytes] = []
    reader.start()
    while conn.deque:  # the IO thread's writes
        conn.handle_write(None, 0)
    reader.join(30)
    assert got == [b"".join(frames)]
    assert not conn._cqlcodec_io_writing


def test_no_frame_is_written_while_the_io_thread_writes(
        pair: tuple[_Connection, socket.socket, _Loop]) -> None:
    conn, theirs, loop = pair
    conn._cqlcodec_io_writing = True
    conn.push(b"later")
    assert list(conn.deque) == [b"later"] and loop.woken == 1


def test_with_other_requests_in_flight_the_io_thread_writes(
        pair: tuple[_Connection, socket.socket, _Loop]) -> None:
    conn, theirs, loop = pair
    conn._requests = {1: None}
    conn.push(b"mine")  # its own request: written here
    assert not conn.deque and loop.woken == 0
    conn._requests = {1: None, 2: None}
    conn.push(b"queued")
    assert list(conn.deque) == [b"queued"] and loop.woken == 1


def test_a_cancelled_timer_lets_go_of_its_callback() -> None:
    calls: list[int] = []
    timer: Any = direct_write._Timer(0, lambda: calls.append(1))
    timer.cancel()
    assert timer.canceled and timer.callback is direct_write._nothing
    assert timer.finish(timer.end + 1) and calls == []
    fired: Any = direct_write._Timer(0, lambda: calls.append(2))
    assert fired.finish(fired.end + 1) and calls == [2]
