"""Columnar writes from a coroutine: :func:`insert_columns` and :func:`load_table`.

:func:`insert_columns` drives the very generator the synchronous call runs
(:func:`cqlcodec.driver.columns.insert_steps`): each step between two sends (binding
and batching rows) runs in cqlcodec's small thread pool, off the loop, and the
statements each step asks for are sent from the loop through the driver's callbacks, at
most ``concurrency`` in flight, without a thread per request. :func:`load_table` runs
the synchronous load (files, write times, bad rows, throttling, outages) in one thread
of that pool; cancelling its task sets the load's ``stop`` flag and waits for the load
to stop.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Generator, Mapping, Sequence
from typing import Any, TypeVar

from cassandra.cluster import EXEC_PROFILE_DEFAULT, ResponseFuture, Session
from cassandra.query import PreparedStatement

from cqlcodec.aio.bridge import off_loop, on_loop
from cqlcodec.aio.columns import driver_session
from cqlcodec.driver.columns import InsertResult, insert_steps
from cqlcodec.driver.load import LoadProgress
from cqlcodec.driver.load import load_table as sync_load_table
from cqlcodec.driver.sender import Outcomes, Sends, sent_by, start_request
from cqlcodec.requests import sends as fast_sends
from cqlcodec.requests.session import FastSession

__all__ = ["insert_columns", "load_table", "send_all"]

R = TypeVar("R")


async def send_all(session: Session | FastSession, sends: Sends) -> Outcomes:
    """Sends ``sends.statements`` from the running loop, at most ``sends.concurrency`` in
    flight, and returns one ``(success, result or exception)`` per statement, in order
    (as :func:`cqlcodec.driver.sender.send_all`); on a :class:`~cqlcodec.aio.FastSession`
    through cqlcodec's request path (:func:`cqlcodec.requests.sends.send_all`).
    Cancelled, it stops sending and drops the answers of the statements in flight."""
    if isinstance(session, FastSession):
        return await fast_sends.send_all(session, sends.statements, sends.concurrency,
                                         sends.execution_profile)
    loop = asyncio.get_running_loop()
    statements = sends.statements
    outcomes: Outcomes = [(False, None)] * len(statements)
    slots = asyncio.Semaphore(sends.concurrency)
    finished: asyncio.Future[None] = loop.create_future()
    in_flight: dict[int, ResponseFuture] = {}
    left = [len(statements)]

    def settle(index: int, ok: bool, outcome: object) -> None:
        outcomes[index] = (ok, outcome)
        in_flight.pop(index, None)
        slots.release()
        left[0] -= 1
        if left[0] == 0 and not finished.done():
            finished.set_result(None)

    try:
        for index, statement in enumerate(statements):
            await slots.acquire()
            try:
                future = start_request(session, statement, sends.execution_profile)
            except Exception as exc:  # noqa: BLE001 - a request that cannot start fails alone
                settle(index, False, exc)
                continue
            in_flight[index] = future
            future.add_callbacks(_succeeded, _failed, callback_args=(loop, settle, index),
                                 errback_args=(loop, settle, index))
        if left[0]:
            await finished
    finally:
        for future in in_flight.values():
            future.clear_callbacks()
    return outcomes


def _succeeded(result: object, loop: asyncio.AbstractEventLoop,
               settle: Callable[[int, bool, object], None], index: int) -> None:
    on_loop(loop, settle, index, True, result)


def _failed(error: BaseException, loop: asyncio.AbstractEventLoop,
            settle: Callable[[int, bool, object], None], index: int) -> None:
    on_loop(loop, settle, index, False, error)


def _advance(steps: Generator[Sends, Outcomes, R],
             outcomes: Outcomes | None) -> tuple[Sends | None, Any]:
    """The next step's sends, or ``(None, what it returned)`` when the generator has ended."""
    try:
        return (next(steps) if outcomes is None else steps.send(outcomes)), None
    except StopIteration as stop:
        return None, stop.value


async def run_steps(session: Session | FastSession, steps: Generator[Sends, Outcomes, R]) -> R:
    """Drives ``steps`` to its end: each step off the loop, its sends from the loop."""
    outcomes: Outcomes | None = None
    while True:
        sends, result = await off_loop(_advance, steps, outcomes)
        if sends is None:
            returned: R = result
            return returned
        try:
            outcomes = await send_all(session, sends)
        except BaseException:
            steps.close()
            raise


async def insert_columns(session: Session | FastSession, prepared_statement: PreparedStatement,
                         columns: object, *, concurrency: int = 64,
                         batch_by_partition: bool = False, batch_by_replica: bool = False,
                         batch_bytes: int = 5 * 1024, chunk_rows: int = 4096,
                         raise_on_error: bool = True,
                         execution_profile: object = EXEC_PROFILE_DEFAULT,
                         nulls: str = "unset") -> InsertResult:
    """:func:`cqlcodec.driver.insert_columns` awaited: the same arguments, result and
    errors (:class:`~cqlcodec.driver.InsertError`, :class:`cqlcodec.BindError`); rows are
    bound off the loop and sent from it (on a :class:`~cqlcodec.aio.FastSession` through
    cqlcodec's request path: an EXECUTE with the bound values per row, or a BATCH of
    the encoded statements, ``concurrency`` in flight)."""
    return await run_steps(session, insert_steps(
        driver_session(session), prepared_statement, columns, concurrency=concurrency,
        batch_by_partition=batch_by_partition, batch_by_replica=batch_by_replica,
        batch_bytes=batch_bytes, chunk_rows=chunk_rows, raise_on_error=raise_on_error,
        execution_profile=execution_profile, nulls=nulls))


async def load_table(session: Session | FastSession, table: str, source: object, *,
                     columns: Sequence[str] | None = None,
                     rename: Mapping[str, str] | None = None,
                     chunk_rows: int = 20_000, batch_by_replica: bool = True,
                     batch_bytes: int = 40_000, concurrency: int = 16,
                     consistency_level: int | None = None, retries: int | None = None,
                     retry_timeout: float | None = None, raise_on_error: bool = True,
                     progress: Callable[[LoadProgress], None] | None = None,
                     **options: Any) -> InsertResult:
    """:func:`cqlcodec.driver.load_table` awaited: the same arguments (``options``: its
    further keywords, ``ignore_writetime``, ``nulls``, ``max_errors``, ``bad_rows``,
    ``dry_run``, ``rate``, ...), result and errors (:class:`~cqlcodec.driver.LoadError`,
    :class:`~cqlcodec.driver.InsertError`). The whole load runs in one thread of
    cqlcodec's small pool, off the loop (``progress`` is called there): its requests
    are sent through the driver's callbacks, ``concurrency`` in flight, without a
    thread per request.

    Cancelling the task stops the load: no request is sent after that (the chunk being
    written is cut short), and the cancellation is raised once the requests already in
    flight have ended, so that nothing more is written after it (the session stays
    usable). On a :class:`~cqlcodec.aio.FastSession` the rows are written through
    cqlcodec's request path (the load's thread hands each group of writes to the loop);
    the rest of the load (the table's metadata, statements prepared, lookups of
    ``writetime`` loads) uses its driver session."""
    stop = threading.Event()
    fast = session if isinstance(session, FastSession) else None
    session = driver_session(session)

    def run() -> InsertResult:
        return sync_load_table(
            session, table, source, columns=columns, rename=rename, chunk_rows=chunk_rows,
            batch_by_replica=batch_by_replica, batch_bytes=batch_bytes,
            concurrency=concurrency, consistency_level=consistency_level, retries=retries,
            retry_timeout=retry_timeout, raise_on_error=raise_on_error, progress=progress,
            stop=stop, **options)

    if fast is not None:
        loop = asyncio.get_running_loop()
        on_fast = fast

        def hook(statements: Sequence[Any], concurrency: int, profile: object,
                 stop: threading.Event | None) -> Outcomes:
            return asyncio.run_coroutine_threadsafe(fast_sends.send_all(
                on_fast, statements, concurrency, profile, stop), loop).result()

        def run_fast() -> InsertResult:
            with sent_by(hook):
                return run()
        load = asyncio.ensure_future(off_loop(run_fast))
    else:
        load = asyncio.ensure_future(off_loop(run))
    try:
        return await asyncio.shield(load)
    except asyncio.CancelledError:
        stop.set()
        await _stopped(load)
        raise


async def _stopped(load: asyncio.Future[InsertResult]) -> None:
    """Waits for a load told to stop to end, whatever it ends with (its rows in flight
    answered); a further cancellation meanwhile is not held back."""
    try:
        await load
    except Exception:  # noqa: BLE001, S110 - LoadCancelled or the load's own end: the cancellation is raised
        pass
