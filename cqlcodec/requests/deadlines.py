"""Client timeouts of one connection's requests with one loop timer, not one per request.

Each request with a timeout is a ``(deadline, seq, stream id, future)`` entry in a heap;
one ``loop.call_at`` waits for the earliest deadline. Entries of requests already
answered stay until they come to the top or until the heap holds more than twice the
requests in flight, when it is rebuilt without them (amortised: its size stays within a
small multiple of the requests in flight).
"""

from __future__ import annotations

import asyncio
import heapq
from collections.abc import Callable
from typing import Any, Final

_EARLY: Final = 0.001  # a timer may fire this much before its deadline (the loop's clock)
_SLACK: Final = 64


class Deadlines:
    """The deadlines of the requests of one connection; ``expire(sid, future, timeout)``
    is called for each request whose deadline passed while its future was not done."""

    def __init__(self, loop: asyncio.AbstractEventLoop,
                 expire: Callable[[int, Any, float], None]) -> None:
        self.loop: Final = loop
        self._expire: Final = expire
        self._heap: list[tuple[float, int, int, Any, float]] = []
        self._seq = 0
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = 0.0

    def add(self, timeout: float, sid: int, fut: Any, in_flight: int) -> None:
        """Time out ``fut`` (stream ``sid``) ``timeout`` seconds from now; ``in_flight``:
        the connection's requests not answered (at least the entries still live)."""
        at = self.loop.time() + timeout
        self._seq += 1
        heap = self._heap
        heapq.heappush(heap, (at, self._seq, sid, fut, timeout))
        if len(heap) > 2 * in_flight + _SLACK:
            self._compact()
        if self._timer is None or at < self._timer_at:
            self._schedule(at)

    def _schedule(self, at: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = self.loop.call_at(at, self._sweep)
        self._timer_at = at

    def _compact(self) -> None:
        kept = [entry for entry in self._heap if not entry[3].done()]
        heapq.heapify(kept)
        self._heap = kept

    def _sweep(self) -> None:
        self._timer = None
        heap = self._heap
        now = self.loop.time() + _EARLY
        while heap:
            at, _seq, sid, fut, timeout = heap[0]
            if fut.done():
                heapq.heappop(heap)
                continue
            if at > now:
                self._schedule(at)
                return
            heapq.heappop(heap)
            self._expire(sid, fut, timeout)

    @property
    def size(self) -> int:
        """Entries kept, of answered requests too."""
        return len(self._heap)

    def pending(self) -> int:
        """Entries kept (requests answered whose entry did not come to the top yet too)."""
        return len([entry for entry in self._heap if not entry[3].done()])

    def clear(self) -> None:
        """Forget every deadline (the connection closed)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._heap = []
