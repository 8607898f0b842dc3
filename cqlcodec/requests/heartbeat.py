"""The heartbeat of a request-path connection, as the driver keeps its own: a connection
on which nothing arrived for ``interval`` seconds is sent an OPTIONS request; when that
gets no answer within ``timeout`` seconds the connection is closed, so that requests on
a connection that went silent (a dead peer, a partition without a reset) fail with
``ConnectionShutdown`` and move to the next host instead of waiting forever. The
intervals are the cluster's ``idle_heartbeat_interval`` and ``idle_heartbeat_timeout``
(0 or None: no heartbeat). The heartbeat goes out on the stream id the connection keeps
beyond its ``max_in_flight``; when even that one is taken (``max_in_flight`` of 32,768),
the connection is closed at once, as the driver's heartbeat defuncts a connection whose
request ids are all in flight.
"""

from __future__ import annotations

import asyncio
from typing import Final

from cassandra.connection import ConnectionShutdown

from cqlcodec.requests.connection import Connection, Frame
from cqlcodec.requests.frames import OP_OPTIONS


class Heartbeat:
    """Watches one connection until it closes (one loop timer)."""

    def __init__(self, conn: Connection, interval: float, timeout: float) -> None:
        self.conn: Final = conn
        self.interval: Final = interval
        self.timeout: Final = timeout
        self.sent = 0  # OPTIONS requests sent
        self._seen = conn.reads
        self._timer: asyncio.TimerHandle = conn.loop.call_later(interval, self._tick)

    def _tick(self) -> None:
        conn = self.conn
        if conn.closed:
            return
        if conn.reads == self._seen:
            if conn.streams.available <= 0:
                conn.close(ConnectionShutdown(
                    f"cqlcodec: connection to {conn.host} closed: nothing arrived for "
                    f"{self.interval} s and every stream id is in use (no heartbeat possible)"))
                return
            self.sent += 1
            conn.request(OP_OPTIONS, b"", 0, self.timeout).add_done_callback(self._answered)
        self._seen = conn.reads
        self._timer = conn.loop.call_later(self.interval, self._tick)

    def _answered(self, fut: asyncio.Future[Frame]) -> None:
        if fut.cancelled() or fut.exception() is None or self.conn.closed:
            return
        self.conn.close(ConnectionShutdown(
            f"cqlcodec: connection to {self.conn.host} closed: no answer to a heartbeat "
            f"within {self.timeout} s"))
