"""Riding out an outage: retries bounded by time without progress, not by a count.

A scan, a load or a count that meets a transient failure (a timeout, a cut connection,
no host available) tries again until ``retry_timeout`` seconds have passed without
progress (no page read, no row written); a permanent failure (a bad query, an unknown
table, an unauthorized user) is never retried. While every host the work needs is down,
the wait ends at the driver's own up event (:class:`HostWatch`, a host-state listener on
the cluster: the driver marks a host up once its reconnection policy reconnected and its
connection pools are open again), else after a backoff of 0.2 s doubled up to 5 s.

How soon a host that came back is used again therefore depends on the driver's
reconnection policy: the driver's default (exponential, 1 s doubled up to 10 minutes)
notices a node back within about twice its outage; a ``ConstantReconnectionPolicy(1)``
within a second.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Sequence
from typing import Any, Final

from cassandra.cluster import Session

__all__ = ["DEFAULT_RETRY_TIMEOUT", "HostWatch", "Patience", "check_retry_options", "host_watch"]

DEFAULT_RETRY_TIMEOUT: Final = 120.0
BACKOFF: Final = 0.2  # seconds before the first retry, doubled for each further one
BACKOFF_MAX: Final = 5.0


def check_retry_options(retry_timeout: float, retries: int | None) -> None:
    """``ValueError`` for a negative ``retry_timeout`` or ``retries``."""
    if not retry_timeout >= 0:
        raise ValueError(f"retry_timeout must be at least 0 seconds, got {retry_timeout}")
    if retries is not None and retries < 0:
        raise ValueError(f"retries must be at least 0, got {retries}")


class HostWatch:
    """The driver's host up and down events of one cluster (registered with
    ``Cluster.register_listener``), and who is waiting for which hosts.

    :meth:`wait_for_up` blocks until the driver marks any host up or a timeout;
    :meth:`waiting_text` says what the waiting work waits for:
    ``"waiting for 127.0.0.1 (down 12 s)"``.
    """

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._ups = 0
        self._down_since: dict[str, float] = {}
        self._waiters: dict[int, tuple[tuple[str, ...], float]] = {}

    # ----- the driver's HostStateListener interface
    def on_up(self, host: Any) -> None:
        """The driver marked ``host`` up (its pools are open)."""
        with self._changed:
            self._ups += 1
            self._down_since.pop(address_of(host), None)
            self._changed.notify_all()

    def on_down(self, host: Any) -> None:
        """The driver marked ``host`` down."""
        with self._changed:
            self._down_since.setdefault(address_of(host), time.monotonic())

    def on_add(self, host: Any, *more: Any) -> None:
        """A host joined: waiters look again."""
        with self._changed:
            self._ups += 1
            self._changed.notify_all()

    def on_remove(self, host: Any) -> None:
        """A host left the cluster."""
        with self._changed:
            self._down_since.pop(address_of(host), None)

    # ----- waiting
    def ups(self) -> int:
        """A counter of up (and add) events, to wait for the next one."""
        with self._changed:
            return self._ups

    def wait_for_up(self, seen: int, timeout: float) -> bool:
        """Waits until an up event after the count ``seen`` or ``timeout`` seconds;
        whether one came."""
        with self._changed:
            return self._changed.wait_for(lambda: self._ups != seen, timeout=max(0.0, timeout))

    def set_waiting(self, waiter: object, addresses: tuple[str, ...], since: float) -> None:
        """Records that ``waiter`` waits for ``addresses``, unreachable since ``since``."""
        with self._changed:
            self._waiters[id(waiter)] = (addresses, since)

    def clear_waiting(self, waiter: object) -> None:
        """``waiter`` waits no more."""
        with self._changed:
            self._waiters.pop(id(waiter), None)

    def waiting_text(self) -> str:
        """``"waiting for 127.0.0.1 (down 12 s)"`` for the hosts work is waiting for
        (the longest outage among them), ``""`` when nothing waits."""
        with self._changed:
            waits = list(self._waiters.values())
            down = dict(self._down_since)
        if not waits:
            return ""
        now = time.monotonic()
        since: dict[str, float] = {}
        for addresses, started in waits:
            for address in addresses:
                first = min(started, down.get(address, started))
                since[address] = min(first, since.get(address, first))
        if not since:
            return "waiting for the cluster"
        longest = now - min(since.values())
        return f"waiting for {', '.join(sorted(since))} (down {longest:.0f} s)"


_watches: weakref.WeakKeyDictionary[Any, HostWatch] = weakref.WeakKeyDictionary()
_watches_lock: Final = threading.Lock()


def host_watch(session: Session) -> HostWatch:
    """The :class:`HostWatch` of the session's cluster (registered on first use)."""
    cluster = session.cluster
    with _watches_lock:
        watch = _watches.get(cluster)
        if watch is None:
            watch = HostWatch()
            cluster.register_listener(watch)
            _watches[cluster] = watch
        return watch


def address_of(host: Any) -> str:
    """A driver host's address as text (``""`` for none)."""
    if host is None:
        return ""
    return str(getattr(host, "address", None) or host.endpoint)


class Patience:
    """How long one piece of work (a split, a load) keeps trying: until
    ``retry_timeout`` seconds pass without :meth:`progressed`, or, when ``retries`` is
    given, ``retries`` failures in a row. :meth:`wait_to_retry` waits before the next
    try (for the driver's up event while every host is down, else a backoff) or says
    why to give up."""

    def __init__(self, session: Session | None, retry_timeout: float,
                 retries: int | None = None) -> None:
        self._session = session
        self._watch = host_watch(session) if session is not None else None
        self.retry_timeout = retry_timeout
        self.retries = retries
        self.failures = 0
        self._last_progress = time.monotonic()
        self._first_failure = 0.0

    def progressed(self) -> None:
        """Work got done: the clock and the count start again."""
        self._last_progress = time.monotonic()
        self.failures = 0
        if self._watch is not None:
            self._watch.clear_waiting(self)

    def done(self) -> None:
        """The work ended (finished or given up): it waits for nothing any more."""
        if self._watch is not None:
            self._watch.clear_waiting(self)

    def wait_to_retry(self, addresses: Sequence[str] = ()) -> str | None:
        """After a transient failure: waits until it is worth trying again and returns
        ``None``, or returns why to give up (nothing waited). ``addresses`` are the
        hosts the work wants (default: those the driver holds down, else all)."""
        reason = self.failed()
        if reason is None:
            self.pause(self.delay(addresses))
        return reason

    def failed(self) -> str | None:
        """Counts a transient failure; returns why to give up, or ``None`` when the work
        is to be tried again after :meth:`delay`."""
        now = time.monotonic()
        self.failures += 1
        if self.failures == 1:
            self._first_failure = now
        idle = now - self._last_progress
        if self.retries is not None and self.failures > self.retries:
            return f"failed {self.failures} times in a row"
        if idle >= self.retry_timeout:
            return (f"no progress for {idle:.1f} s (retry_timeout {self.retry_timeout:g} s), "
                    f"{self.failures} failures in a row")
        return None

    def delay(self, addresses: Sequence[str] = ()) -> float:
        """The seconds to wait before the next try (a backoff, within ``retry_timeout``);
        the hosts waited for (``addresses``, as in :meth:`wait_to_retry`) show in the
        progress text until :meth:`progressed`. The waiting is the caller's:
        :meth:`pause` on a thread, ``asyncio.sleep`` on an event loop."""
        idle = time.monotonic() - self._last_progress
        backoff: float = BACKOFF * 2.0 ** min(self.failures - 1, 16)
        delay = min(BACKOFF_MAX, backoff, max(0.0, self.retry_timeout - idle))
        if self._watch is not None and self._session is not None:
            hosts = list(self._session.cluster.metadata.all_hosts())
            wanted = tuple(addresses) or tuple(address_of(h) for h in hosts if h.is_up is False) \
                or tuple(address_of(h) for h in hosts)
            self._watch.set_waiting(self, wanted, self._first_failure)
        return delay

    def pause(self, delay: float) -> None:
        """Waits ``delay`` seconds on this thread; while the driver holds every host
        down, the driver's up event ends the wait early."""
        watch, session = self._watch, self._session
        if watch is None or session is None:
            time.sleep(delay)
            return
        seen = watch.ups()
        hosts = list(session.cluster.metadata.all_hosts())
        if hosts and all(h.is_up is False for h in hosts):
            watch.wait_for_up(seen, delay)  # the driver reconnects; woken when it has
        else:
            time.sleep(delay)

    def wait_for_hosts(self) -> str | None:
        """Before sending writes: while the driver holds every host down, waits for an
        up event (up to ``retry_timeout`` without progress); ``None`` when a host is
        up, else why to give up."""
        if self._session is None:
            return None
        while True:
            hosts = list(self._session.cluster.metadata.all_hosts())
            if not hosts or any(h.is_up is not False for h in hosts):
                return None
            reason = self.wait_to_retry()
            if reason is not None:
                return reason
