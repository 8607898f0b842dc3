"""Many statements sent on cqlcodec's request path with a bounded number in flight: what
:func:`cqlcodec.driver.sender.send_all` does through the driver, for the columnar
writes (``cqlcodec.aio.insert_columns``, ``cqlcodec.aio.load_table``) on a
:class:`~cqlcodec.requests.session.FastSession`.

``concurrency`` worker coroutines take the statements in order, each sending one at a
time with :meth:`FastSession.execute` (an ``EXECUTE`` with the bound values, or a
``BATCH`` of cqlcodec's encoded statements): no task, future or callback per statement
beyond the request's own.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from cqlcodec.driver.sender import Outcomes, SendsStopped

if TYPE_CHECKING:
    from cqlcodec.requests.session import FastSession

__all__ = ["send_all"]


class _Sender:
    """The statements of one :func:`send_all` and how far the workers got."""

    def __init__(self, fast: FastSession, statements: Sequence[Any], profile: object,
                 stop: threading.Event | None) -> None:
        self.fast = fast
        self.statements = statements
        self.profile = profile
        self.stop = stop
        self.next = 0
        self.stopped = False
        self.outcomes: Outcomes = [(False, None)] * len(statements)

    async def work(self) -> None:
        statements = self.statements
        fast = self.fast
        while self.next < len(statements):
            stop = self.stop
            if stop is not None and stop.is_set():
                self.stopped = True
                return
            index = self.next
            self.next += 1
            try:
                result: object = await fast.execute(statements[index], None,
                                                    execution_profile=self.profile)
            except Exception as exc:  # noqa: BLE001 - a statement that fails fails alone
                self.outcomes[index] = (False, exc)
                continue
            self.outcomes[index] = (True, result)


async def send_all(fast: FastSession, statements: Sequence[Any], concurrency: int,
                   execution_profile: object, stop: threading.Event | None = None) -> Outcomes:
    """Send every statement on ``fast``, at most ``concurrency`` in flight, and return one
    ``(success, FastResult or exception)`` per statement, in order. Once ``stop`` is set
    no further statement is sent: those in flight are waited for and
    :class:`~cqlcodec.driver.sender.SendsStopped` is raised. Cancelled, it stops sending
    (the answers of the statements in flight are dropped when they arrive)."""
    sender = _Sender(fast, statements, execution_profile, stop)
    workers = min(max(1, concurrency), len(statements))
    if workers:
        await asyncio.gather(*[sender.work() for _ in range(workers)])
    if sender.stopped:
        raise SendsStopped("sending was stopped")
    return sender.outcomes
