"""How many calls of one :class:`~cqlcodec.requests.session.FastSession` are under way
at once, and the calls waiting for their turn.

A call beyond the bound waits here, before anything of its request is built: what it
holds while it waits is its own arguments (the statement and its values) and one future,
not a bound request, a query plan or a coroutine per step. With 100,000 calls submitted
at once, all but ``limit`` of them wait this way. A turn given up (a call that ends) goes
to the oldest waiter still waiting; a waiter cancelled after it was given a turn hands
it on.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Final


class Admission:
    """The calls under way (``inside``) and the waiters of one session, on its loop."""

    __slots__ = ("loop", "per_connection", "inside", "_waiting")

    def __init__(self, loop: asyncio.AbstractEventLoop, per_connection: int) -> None:
        self.loop: Final = loop
        self.per_connection: Final = per_connection
        self.inside = 0
        self._waiting: deque[asyncio.Future[None]] = deque()

    def enter(self, connections: int) -> bool:
        """Take a turn now if there is room (``per_connection`` calls per open
        connection, at least one connection's worth) and nobody waits before."""
        waiting = self._waiting
        while waiting and waiting[0].done():  # waiters cancelled before their turn
            waiting.popleft()
        if not waiting and self.inside < self.per_connection * max(1, connections):
            self.inside += 1
            return True
        return False

    async def wait(self) -> None:
        """Wait for a turn (after :meth:`enter` said no)."""
        turn: asyncio.Future[None] = self.loop.create_future()
        self._waiting.append(turn)
        try:
            await turn
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():
                self.leave()  # the turn it was given goes to the next waiter
            raise

    def leave(self) -> None:
        """A call ends: its turn goes to the oldest waiter, else the room grows."""
        waiting = self._waiting
        while waiting:
            turn = waiting.popleft()
            if not turn.done():
                turn.set_result(None)
                return
        self.inside -= 1

    def release_all(self) -> None:
        """The session closed: every waiter goes on (and fails as a closed session's call)."""
        waiting = self._waiting
        while waiting:
            turn = waiting.popleft()
            if not turn.done():
                self.inside += 1
                turn.set_result(None)

    def waiting(self) -> int:
        """Calls waiting for a turn."""
        return sum(1 for turn in self._waiting if not turn.done())
