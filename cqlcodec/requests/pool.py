"""The request path's connections, one per host, and how they come back after a failure.

A connection is opened when a request first goes to its host; the callers that want it
meanwhile share the one attempt, each waiting no longer than its own deadline (the
attempt goes on without them, and the connection it opens is kept for the next caller).
A connection that drops is forgotten, and the next request to its host opens another.
When an attempt fails, the host is not tried again before a delay that doubles from
``FIRST_DELAY`` up to ``MOST_DELAY`` seconds (with some jitter): requests meanwhile move
on to the next host of their plan at once, as the driver skips a host it holds down. The
driver's own host events end the wait early: when the driver sees a host up again, the
next request to it connects at once. Each connection has a heartbeat
(:mod:`cqlcodec.requests.heartbeat`).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from typing import Any, Final

from cassandra.connection import ConnectionShutdown

from cqlcodec.requests.connection import Connection
from cqlcodec.requests.handshake import open_connection
from cqlcodec.requests.heartbeat import Heartbeat

FIRST_DELAY: Final = 0.1
MOST_DELAY: Final = 2.0
_JITTER: Final = 0.2  # each delay is stretched or shrunk by up to this share


class Backoff:
    """When a host whose last connection attempt failed may be tried again."""

    def __init__(self, now: float, error: BaseException, delay: float) -> None:
        self.delay = delay
        self.error = error
        self.at = now + delay * (1.0 + _JITTER * (2.0 * random.random() - 1.0))

    def after(self, now: float, error: BaseException) -> Backoff:
        """The backoff after one more failed attempt (twice the delay, at most MOST_DELAY)."""
        return Backoff(now, error, min(self.delay * 2.0, MOST_DELAY))


class HostEvents:
    """A listener the driver's ``Cluster`` calls from its threads on host events; hands
    them to the pool on its loop. Once that loop is closed (a ``FastSession`` never
    closed), it takes itself off the cluster's listeners, so the pool is not kept."""

    def __init__(self, loop: asyncio.AbstractEventLoop, cluster: Any,
                 up: Callable[[Any], None], removed: Callable[[Any], None]) -> None:
        self.loop = loop
        self.cluster = cluster
        self._up = up
        self._removed = removed

    def _hand(self, call: Callable[[Any], None], host: Any) -> None:
        try:
            self.loop.call_soon_threadsafe(call, host)
        except RuntimeError:  # the loop is closed: nothing to tell, now or later
            try:
                self.cluster.unregister_listener(self)
            except KeyError:
                pass

    def on_up(self, host: Any) -> None:
        """The driver sees ``host`` up (again)."""
        self._hand(self._up, host)

    def on_down(self, host: Any) -> None:
        """The driver holds ``host`` down (its query plans skip it already)."""

    def on_add(self, host: Any) -> None:
        """A new host (connected to when a plan first names it)."""

    def on_remove(self, host: Any) -> None:
        """``host`` left the cluster."""
        self._hand(self._removed, host)


class Pool:
    """One connection per host for a ``FastSession``."""

    def __init__(self, loop: asyncio.AbstractEventLoop, cluster: Any, version: int,
                 max_in_flight: int, connect_timeout: float) -> None:
        self.loop: Final = loop
        self.cluster: Final = cluster
        self.version: Final = version
        self.max_in_flight: Final = max_in_flight
        self.connect_timeout: Final = connect_timeout
        self.conns: dict[Any, Connection] = {}
        # the same connections by id() of the Host they were opened to (kept alive by
        # conn.host): found without hashing the driver's Host (its endpoint) per request
        self.by_host_id: dict[int, Connection] = {}
        self.closed = False
        self.opened = 0  # connections opened
        self.reconnects = 0  # of which to a host that had one before
        self.failed_attempts = 0
        self._opening: dict[Any, asyncio.Future[Connection]] = {}
        self._backoff: dict[Any, Backoff] = {}
        self._seen: set[Any] = set()
        self._events = HostEvents(loop, cluster, self._host_up, self._host_removed)
        self.heartbeat_interval = float(getattr(cluster, "idle_heartbeat_interval", 30) or 0)
        self.heartbeat_timeout = float(getattr(cluster, "idle_heartbeat_timeout", 30) or 30)
        cluster.register_listener(self._events)

    async def get(self, host: Any, keyspace: str | None, wait: float | None) -> Connection:
        """The connection to ``host``, opened if need be; waits at most ``wait`` seconds
        (``asyncio.TimeoutError``). Raises ``ConnectionShutdown`` while the host is in
        its backoff, and what the attempt raised when it fails."""
        conn = self.conns.get(host)
        if conn is not None and not conn.closed:
            return conn
        if self.closed:
            raise ConnectionShutdown("cqlcodec: this FastSession is closed")
        opening = self._opening.get(host)
        if opening is None:
            opening = self._open(host, keyspace)
        try:
            if wait is None:
                return await asyncio.shield(opening)
            return await asyncio.wait_for(asyncio.shield(opening), wait)
        except asyncio.CancelledError:
            if opening.cancelled():  # the pool closed under the attempt, not our caller
                raise ConnectionShutdown("cqlcodec: this FastSession is closed") from None
            raise

    def _open(self, host: Any, keyspace: str | None) -> asyncio.Future[Connection]:
        backoff = self._backoff.get(host)
        now = self.loop.time()
        if backoff is not None and now < backoff.at:
            raise ConnectionShutdown(
                f"cqlcodec: connecting to {host} again in {backoff.at - now:.2f} s (the last "
                f"attempt failed: {backoff.error})")
        opening = asyncio.ensure_future(open_connection(
            self.loop, host, self.cluster, self.version, self.max_in_flight, keyspace,
            self.connect_timeout))
        self._opening[host] = opening
        opening.add_done_callback(lambda fut: self._opened(host, fut))
        return opening

    def _opened(self, host: Any, fut: asyncio.Future[Connection]) -> None:
        """The attempt ended (before any caller waiting for it resumes)."""
        if self._opening.get(host) is fut:
            del self._opening[host]
        if fut.cancelled():
            return
        error = fut.exception()
        if error is not None:
            self.failed_attempts += 1
            backoff = self._backoff.get(host)
            now = self.loop.time()
            self._backoff[host] = Backoff(now, error, FIRST_DELAY) if backoff is None else \
                backoff.after(now, error)
            return
        conn = fut.result()
        if self.closed:
            conn.close()
            return
        self._backoff.pop(host, None)
        self.opened += 1
        if host in self._seen:
            self.reconnects += 1
        self._seen.add(host)
        conn.on_close = self._forget
        conn.on_retire = self._forget  # the next request to the host opens another
        if not conn.closed:
            self.conns[host] = conn
            self.by_host_id[id(conn.host)] = conn
            if self.heartbeat_interval > 0:
                Heartbeat(conn, self.heartbeat_interval, self.heartbeat_timeout)

    def _forget(self, conn: Connection) -> None:
        if self.conns.get(conn.host) is conn:
            del self.conns[conn.host]
        if self.by_host_id.get(id(conn.host)) is conn:
            del self.by_host_id[id(conn.host)]

    def _host_up(self, host: Any) -> None:
        self._backoff.pop(host, None)

    def _host_removed(self, host: Any) -> None:
        self._backoff.pop(host, None)
        conn = self.conns.pop(host, None)
        if conn is not None:
            self.by_host_id.pop(id(conn.host), None)
            conn.close()

    def close(self) -> None:
        """Close every connection and cancel the attempts under way (their callers get
        ``ConnectionShutdown``); stop listening to the driver's host events."""
        if self.closed:
            return
        self.closed = True
        try:
            self.cluster.unregister_listener(self._events)
        except KeyError:
            pass
        for fut in list(self._opening.values()):
            fut.cancel()
        for conn in list(self.conns.values()):
            conn.close()
        self.conns.clear()
        self.by_host_id.clear()
