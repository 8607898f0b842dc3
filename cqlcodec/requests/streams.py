"""Stream ids of one connection: which are free, which wait for an answer, and which
were given up (timed out or cancelled) but must not be reused until their answer comes.

Ids 0..32767 are the client's on protocol v3+. Freed ids are reused oldest first (a
late answer to an id that was reused would be taken for the new request's; an id given
up is never freed before its answer arrives or the connection closes).
"""

from __future__ import annotations

from collections import deque
from typing import Final

MAX_STREAMS: Final = 32768


class StreamIds:
    """The stream ids of one connection (at most ``limit`` in use at once)."""

    def __init__(self, limit: int = MAX_STREAMS) -> None:
        if not 0 < limit <= MAX_STREAMS:
            raise ValueError(f"a connection has 1 to {MAX_STREAMS} stream ids, not {limit}")
        self.limit: Final = limit
        self._free: deque[int] = deque()
        self._next = 0
        self.in_use = 0
        self.orphans: set[int] = set()

    def acquire(self) -> int:
        """A free id, or -1 when all ``limit`` are in use."""
        free = self._free
        if free:
            self.in_use += 1
            return free.popleft()
        if self._next < self.limit:
            sid = self._next
            self._next += 1
            self.in_use += 1
            return sid
        return -1

    def release(self, sid: int) -> None:
        """The answer to ``sid`` has arrived: the id is free again."""
        self.orphans.discard(sid)
        self._free.append(sid)
        self.in_use -= 1

    def orphan(self, sid: int) -> None:
        """Nobody waits for ``sid`` any more; it stays in use until its answer arrives."""
        self.orphans.add(sid)

    @property
    def available(self) -> int:
        """How many ids :meth:`acquire` can still hand out."""
        return self.limit - self.in_use
