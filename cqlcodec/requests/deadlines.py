"""Client timeouts of one connection's requests with one loop timer, not one per request.

Most requests of a connection share one timeout (their execution profile's), so their
deadlines come in the order they are asked (the loop's clock only moves on): a request's
``(deadline, stream id, future, timeout)`` entry goes to a FIFO queue (a list and the
index of its head) when its deadline is not before the last queued one; one that would
expire earlier (a retry's remaining time, a statement's shorter timeout) goes to a heap.
One ``loop.call_at`` waits for the earliest deadline of both. An answered request's entry
leaves the queue when it comes to the front (answers come about in the order asked), the
heap's when it comes to the top; when either holds more than twice the requests in
flight, it is rebuilt without them (amortised: its size stays within a small multiple of
the requests in flight).
"""

from __future__ import annotations

import asyncio
import heapq
from collections.abc import Callable
from typing import Any, Final

from cqlcodec.requests.loops import loop_clock

_EARLY: Final = 0.001  # a timer may fire this much before its deadline (the loop's clock)
_SLACK: Final = 64


class Deadlines:
    """The deadlines of the requests of one connection; ``expire(sid, future, timeout)``
    is called for each request whose deadline passed while its future was not done."""

    def __init__(self, loop: asyncio.AbstractEventLoop,
                 expire: Callable[[int, Any, float], None],
                 waiters: list[Any]) -> None:
        self.loop: Final = loop
        self._clock: Final = loop_clock(loop)
        self._expire: Final = expire
        # the connection's future per stream id: an entry whose future is no longer
        # there was answered
        self._waiters: Final = waiters
        self._queue: list[tuple[float, int, Any, float]] = []
        self._head = 0  # the queue's entries before it are gone
        self._queue_last = 0.0  # the deadline of the entry queued last
        self._heap: list[tuple[float, int, int, Any, float]] = []
        self._seq = 0
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = 0.0

    def add(self, timeout: float, sid: int, fut: Any, in_flight: int, at: float = -1.0) -> None:
        """Time out ``fut`` (stream ``sid``) ``timeout`` seconds from now (``at``, the
        loop's time, when the caller read the clock for it); ``in_flight``: the
        connection's requests not answered (at least the entries still live)."""
        if at < 0:
            at = self._clock() + timeout
        if at >= self._queue_last:
            self._queue_last = at
            queue = self._queue
            head = self._head
            queue.append((at, sid, fut, timeout))
            waiters = self._waiters
            while True:  # the new entry is not answered: the loop ends there at the latest
                entry = queue[head]
                if waiters[entry[1]] is entry[2]:
                    break
                head += 1
            if len(queue) - head > 2 * in_flight + _SLACK:
                self._queue = [entry for entry in queue[head:]
                               if not self._answered(entry[1], entry[2])]
                head = 0
            elif head > _SLACK and 2 * head > len(queue):
                del queue[:head]
                head = 0
            self._head = head
        else:
            self._seq += 1
            heap = self._heap
            heapq.heappush(heap, (at, self._seq, sid, fut, timeout))
            if len(heap) > 2 * in_flight + _SLACK:
                kept = [entry for entry in heap if not self._answered(entry[2], entry[3])]
                heapq.heapify(kept)
                self._heap = kept
        self._rearm(at)

    def _answered(self, sid: int, fut: Any) -> bool:
        return self._waiters[sid] is not fut

    def _schedule(self, at: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = self.loop.call_at(at, self._sweep)
        self._timer_at = at

    def _sweep(self) -> None:
        self._timer = None
        now = self._clock() + _EARLY
        nxt = -1.0
        queue = self._queue
        while self._head < len(queue):
            at, sid, fut, timeout = queue[self._head]
            if fut.done():
                self._head += 1
                continue
            if at > now:
                nxt = at
                break
            self._head += 1
            self._expire(sid, fut, timeout)
            queue = self._queue  # expire may have cleared it
        heap = self._heap
        while heap:
            at, _seq, sid, fut, timeout = heap[0]
            if fut.done():
                heapq.heappop(heap)
                continue
            if at > now:
                if nxt < 0 or at < nxt:
                    nxt = at
                break
            heapq.heappop(heap)
            self._expire(sid, fut, timeout)
        if nxt >= 0:
            self._rearm(nxt)

    def _rearm(self, at: float) -> None:
        """Wait for ``at`` unless the timer is set for earlier."""
        if self._timer is None or at < self._timer_at:
            self._schedule(at)

    @property
    def size(self) -> int:
        """Entries kept, of answered requests too."""
        return len(self._queue) - self._head + len(self._heap)

    @property
    def out_of_order(self) -> int:
        """Entries kept in the heap (deadlines earlier than one queued before them)."""
        return len(self._heap)

    def pending(self) -> int:
        """Entries of requests not answered yet."""
        return len([e for e in self._queue[self._head:] if not e[2].done()]) + \
            len([e for e in self._heap if not e[3].done()])

    def clear(self) -> None:
        """Forget every deadline (the connection closed)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._queue = []
        self._head = 0
        self._heap = []
