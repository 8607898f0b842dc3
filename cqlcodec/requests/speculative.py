"""Speculative execution on the request path, as the driver does it.

A statement marked ``is_idempotent``, sent with an execution profile that has a
``speculative_execution_policy``, gets the policy's plan
(``new_plan(keyspace, statement)``, once per call). The first execution goes to the
first host of the query plan; each time the plan's ``next_execution(host)`` delay passes
(``host``: the host the last execution went to) without an answer, one more execution
goes to the next host of the same query plan (a plan without hosts left sends nothing),
until the delay is negative or would reach past the call's timeout. The first execution
to end, with rows or with an error the retry policy does not take back, ends the call;
the others are cancelled, and their stream ids are freed when their answers arrive (or
their connections close), as for any cancelled request. An execution that ran out of
hosts (``NoHostAvailable``) ends the call only when no other is under way or to come.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from cassandra.cluster import NoHostAvailable

Execution = Callable[[Iterator[Any], float | None], Awaitable[Any]]


class _Then:
    """``first``, then the hosts of ``rest``: one execution's view of the shared plan
    (its retries on the next host take the next host no other execution took)."""

    def __init__(self, first: Any, rest: Iterator[Any]) -> None:
        self._first = first
        self._rest = rest

    def __iter__(self) -> _Then:
        return self

    def __next__(self) -> Any:
        first = self._first
        if first is not None:
            self._first = None
            return first
        return next(self._rest)


def plan_of(policy: Any, keyspace: str | None, statement: Any) -> Any:
    """The speculative execution plan of one call (the policy's ``new_plan``)."""
    return policy.new_plan(keyspace, statement)


def _next_at(spec: Any, host: Any, loop: asyncio.AbstractEventLoop,
             deadline: float | None) -> float | None:
    """When the next execution goes out (None: no more), as the driver schedules it."""
    delay: float = spec.next_execution(host)
    if delay < 0:
        return None
    now = loop.time()
    if deadline is not None and deadline - now <= delay:
        return None
    return now + delay


async def speculate(run: Execution, plan: Iterator[Any], spec: Any,
                    loop: asyncio.AbstractEventLoop, deadline: float | None) -> Any:
    """The first result of ``run(hosts, deadline)`` among the executions ``spec`` (a
    driver ``SpeculativeExecutionPlan``) schedules, each given the hosts of ``plan``
    not taken yet; see the module's docstring. Returns ``(result, executions sent)``."""
    host = next(plan, None)
    if host is None:
        raise NoHostAvailable("Unable to complete the operation against any hosts", {})
    running: set[asyncio.Future[Any]] = {asyncio.ensure_future(run(_Then(host, plan), deadline))}
    sent = 1
    next_at = _next_at(spec, host, loop, deadline)
    first_error: BaseException | None = None
    try:
        while True:
            wait = None if next_at is None else max(0.0, next_at - loop.time())
            done, _pending = await asyncio.wait(running, timeout=wait,
                                                return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                running.discard(task)
                error = task.exception()
                if error is None:
                    return task.result(), sent
                if isinstance(error, NoHostAvailable) and (running or next_at is not None):
                    if first_error is None:
                        first_error = error
                    continue  # another execution may still answer
                raise error
            if next_at is not None and loop.time() >= next_at:
                host = next(plan, None)
                if host is None:
                    next_at = None  # no host left: nothing sent, as the driver
                else:
                    running.add(asyncio.ensure_future(run(_Then(host, plan), deadline)))
                    sent += 1
                    next_at = _next_at(spec, host, loop, deadline)
            if not running and next_at is None:
                raise first_error if first_error is not None else \
                    NoHostAvailable("Unable to complete the operation against any hosts", {})
    finally:
        for task in running:
            task.cancel()
