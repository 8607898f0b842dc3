"""``cqlcodec.aio`` against a real Cassandra 5: the same results as the synchronous API
for every column kind, with and without ``install``, on the default loop and on uvloop
(when installed); many requests on one loop without a thread per request; cancellation
that leaves the session usable and nothing behind; a table scan through a faulty
connection delivering every row once; the loop kept responsive during a scan."""

from __future__ import annotations

import asyncio
import gc
import importlib
import threading
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar

import pytest
from cassandra.cluster import ResponseFuture, Session

from cqlcodec import aio
from cqlcodec.driver import ColumnPages, execute_columns

from .conftest import SessionPair
from .data import COLUMN_NAMES, PAGED_PARTITIONS, PAGED_ROWS_PER_PARTITION

pytestmark = pytest.mark.integration
pa = pytest.importorskip("pyarrow")

T = TypeVar("T")
SELECT_EVERYTHING = f"SELECT k, {', '.join(COLUMN_NAMES)} FROM everything"

uvloop: Any
try:
    uvloop = importlib.import_module("uvloop")  # an optional test dependency
except ImportError:
    uvloop = None


@pytest.fixture(params=["asyncio", "uvloop"])
def run(request: pytest.FixtureRequest) -> Callable[[Callable[[], Awaitable[T]]], T]:
    """Runs a coroutine function to its end on a new loop of the default kind or uvloop's."""
    if request.param == "uvloop" and uvloop is None:
        pytest.skip("uvloop is not installed")

    def run_on_loop(main: Callable[[], Awaitable[T]]) -> T:
        async def wrapped() -> T:
            return await main()
        if request.param == "uvloop":
            assert uvloop is not None
            result: T = uvloop.run(wrapped())
            return result
        return asyncio.run(wrapped())
    return run_on_loop


@pytest.fixture(params=["installed", "plain"])
def session(request: pytest.FixtureRequest, pair: SessionPair) -> Iterator[Session]:
    """A session with cqlcodec installed and one with the driver alone."""
    yield pair.codec if request.param == "installed" else pair.plain


def _pylists(pages: Any) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for batch in pages:
        for column in batch:
            out.setdefault(column.name, []).extend(column.to_pylist())
    return out


def test_execute_columns_equals_the_sync_api_for_every_column_kind(run: Any, session: Session) -> None:
    want = execute_columns(session, SELECT_EVERYTHING).to_arrow()
    got = run(lambda: aio.execute_columns(session, SELECT_EVERYTHING))
    assert isinstance(got, ColumnPages)
    table = got.to_arrow()
    assert table.num_rows >= 3 and table.equals(want)

    async def streamed() -> list[Any]:
        return [batch async for batch in aio.stream_columns(session, SELECT_EVERYTHING,
                                                            fetch_size=1)]
    batches = run(streamed)
    assert len(batches) >= table.num_rows
    assert _pylists(batches) == _pylists(execute_columns(session, SELECT_EVERYTHING))


def test_execute_gives_the_rows_of_session_execute(run: Any, session: Session) -> None:
    query = "SELECT * FROM paged WHERE p = %s"
    want = list(session.execute(query, [1]))
    got = run(lambda: aio.execute(session, query, [1]))
    assert got == want and len(got) == PAGED_ROWS_PER_PARTITION
    session.default_fetch_size, saved = 7, session.default_fetch_size
    try:
        assert run(lambda: aio.execute(session, query, [1])) == want  # several pages
    finally:
        session.default_fetch_size = saved
    assert run(lambda: aio.execute(session, "SELECT * FROM paged WHERE p = -1")) == []
    assert run(lambda: aio.execute(session, "UPDATE paged SET label = 'x' WHERE p = -5 AND c = 0")) == []


def test_pages_limit_and_errors_as_in_the_sync_api(run: Any, session: Session) -> None:
    query = "SELECT * FROM paged"
    want = execute_columns(session, query, fetch_size=100, limit=250).to_arrow()
    got = run(lambda: aio.execute_columns(session, query, fetch_size=100, limit=250))
    assert got.to_arrow().equals(want) and want.num_rows == 250
    with pytest.raises(ValueError, match="limit must be at least 1"):
        run(lambda: aio.execute_columns(session, query, limit=0))
    from cassandra import InvalidRequest

    with pytest.raises(InvalidRequest):  # the driver's own error
        run(lambda: aio.execute_columns(session, "SELECT nope FROM paged"))
    from cqlcodec import CodecError

    with pytest.raises(CodecError, match="no rows result"):
        run(lambda: aio.execute_columns(session, "UPDATE paged SET label = 'x' WHERE p = -5 AND c = 0"))


def test_a_thousand_concurrent_queries_without_a_thread_each(run: Any, pair: SessionPair) -> None:
    session = pair.codec
    query = session.prepare("SELECT * FROM paged WHERE p = ?")
    before = threading.active_count()
    peak = [before]

    async def main() -> list[ColumnPages]:
        async def one(p: int) -> ColumnPages:
            pages = await aio.execute_columns(session, query, [p % PAGED_PARTITIONS])
            peak[0] = max(peak[0], threading.active_count())
            return pages
        return await asyncio.gather(*(one(i) for i in range(1000)))
    results = run(main)
    assert [sum(len(b) for b in pages) for pages in results] == [PAGED_ROWS_PER_PARTITION] * 1000
    assert peak[0] <= before + 4, (before, peak[0])  # the decode pool at most, no thread per request


def _response_futures() -> int:
    return sum(1 for o in gc.get_objects() if isinstance(o, ResponseFuture))


def _in_flight(session: Session) -> int:
    total = 0
    for pool in list(session._pools.values()):  # type: ignore[attr-defined]
        for conn in list(pool._connections.values()) if hasattr(pool, "_connections") else \
                [getattr(pool, "_connection", None)]:
            if conn is not None:
                total += conn.in_flight - len(conn.orphaned_request_ids)
    return total


def test_cancellations_leave_the_session_usable_and_leak_nothing(run: Any, pair: SessionPair) -> None:
    session = pair.codec
    query = session.prepare("SELECT * FROM paged WHERE p = ?")

    async def cancel_many(n: int) -> None:
        for i in range(n):
            task = asyncio.ensure_future(aio.execute_columns(session, query, [i % PAGED_PARTITIONS],
                                                             fetch_size=5))
            await asyncio.sleep(0 if i % 2 else 0.001)  # before the first page and between pages
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
        for _ in range(200):  # the answers of requests already sent arrive and are dropped
            if _in_flight(session) == 0:
                break
            await asyncio.sleep(0.05)

    run(lambda: cancel_many(50))  # warm up the pools, caches and loop machinery
    gc.collect()
    futures_before = _response_futures()
    objects_before = len(gc.get_objects())
    run(lambda: cancel_many(1000))
    gc.collect()
    assert _response_futures() <= futures_before
    assert len(gc.get_objects()) - objects_before < 2000  # not one object per cancellation
    pages = run(lambda: aio.execute_columns(session, query, [2]))
    assert sum(len(b) for b in pages) == PAGED_ROWS_PER_PARTITION


def test_wait_for_times_out_with_asyncio_timeout_error(run: Any, pair: SessionPair) -> None:
    session = pair.codec

    async def main() -> None:
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(aio.execute_columns(session, "SELECT * FROM paged",
                                                       fetch_size=1), 0.01)
    run(main)
    assert len(run(lambda: aio.execute(session, "SELECT * FROM paged WHERE p = 1"))) == \
        PAGED_ROWS_PER_PARTITION
