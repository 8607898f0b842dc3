"""Queries on a driver ``Session`` from a coroutine: rows (:func:`execute`), columns
(:func:`execute_columns`, :func:`stream_columns`) and columnar writes
(:func:`insert_columns`), with the semantics and errors of their synchronous
counterparts in :mod:`cqlcodec.driver`."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from cassandra.cluster import EXEC_PROFILE_DEFAULT, Session
from cassandra.query import PreparedStatement, Statement

from cqlcodec.aio.bridge import FuturePages, decode_page, response_of
from cqlcodec.columnar.batch import ColumnBatch
from cqlcodec.driver.columns import (
    ColumnPages,
    check_page_options,
    next_page_rows,
    send_columnar,
)
from cqlcodec.requests.pages import FastPages, send_pages
from cqlcodec.requests.session import FastSession

__all__ = ["ColumnStream", "driver_session", "execute", "execute_columns", "stream_columns"]

Query = str | Statement | PreparedStatement
Parameters = Sequence[Any] | Mapping[str, Any] | None
PageSource = FuturePages | FastPages


def driver_session(session: Session | FastSession) -> Session:
    """The driver session of a :class:`~cqlcodec.aio.FastSession` (its control plane:
    metadata, token map, prepared statements, which scans and loads plan with), or
    ``session`` itself."""
    if isinstance(session, FastSession):
        found: Session = session.session
        return found
    return session


async def execute(session: Session | FastSession, query: Query, parameters: Parameters = None,
                  **options: Any) -> list[Any]:
    """``session.execute(query, parameters, **options)`` awaited: every row of every page,
    as the session's row factory makes them (cqlcodec's values when
    :func:`cqlcodec.driver.install` is on, the driver's otherwise), in one list; an empty
    list for a statement without rows. ``options`` are those of ``session.execute_async``
    (``timeout``, ``execution_profile``, ``paging_state``, ``host``, ...). The next page is
    requested as soon as one arrives; the driver's errors are raised as they are."""
    if isinstance(session, FastSession):
        return (await session.execute(query, parameters, **options)).rows
    future = session.execute_async(query, parameters, **options)
    rows: list[Any] = []
    while True:
        page = await response_of(future)
        more = future.has_more_pages
        if more:
            future.start_fetching_next_page()
        if page:
            rows.extend(page)
        if not more:
            return rows


class ColumnStream:
    """The pages of one query as :class:`~cqlcodec.ColumnBatch` es, for ``async for``
    (what :func:`stream_columns` returns; one pass). The next page is requested when a
    page arrives, before it is decoded and handed out, so it travels while this one is
    used; at most one request is in flight. Cancelling the task that waits on it drops
    the request's answer and ends the stream. The pages come through the driver's
    ``ResponseFuture`` or, on a :class:`~cqlcodec.aio.FastSession`, cqlcodec's request
    path (:class:`~cqlcodec.requests.pages.FastPages`), walked the same way."""

    def __init__(self, source: PageSource, limit: int | None) -> None:
        self._source = source
        self._limit = limit
        self._delivered = 0
        self._pages = 0
        self._pending = True

    @property
    def pages_fetched(self) -> int:
        """How many pages have been given out so far."""
        return self._pages

    @property
    def rows_fetched(self) -> int:
        """How many rows have been given out so far."""
        return self._delivered

    def __aiter__(self) -> AsyncIterator[ColumnBatch]:
        return self

    async def __anext__(self) -> ColumnBatch:
        if not self._pending:
            raise StopAsyncIteration
        self._pending = False  # a failure or a cancellation below ends the stream
        page = await self._source.page()
        keep, more, cap = next_page_rows(page, self._limit, self._delivered)
        if more:  # the next page travels while this one is decoded
            self._source.fetch_next(cap)
        self._pending = more
        batch = await decode_page(page, keep)
        self._delivered += batch.num_rows
        self._pages += 1
        return batch

    async def aclose(self) -> None:
        """End the stream; a page in flight is dropped when it arrives."""
        self._pending = False
        self._source.close()


def stream_columns(session: Session | FastSession, statement: Query, parameters: Parameters = None, *,
                   fetch_size: int | None = None, limit: int | None = None,
                   execution_profile: object = EXEC_PROFILE_DEFAULT) -> ColumnStream:
    """Send a query and return its pages as a :class:`ColumnStream` (``async for batch in
    stream_columns(...)``). Arguments as :func:`cqlcodec.driver.execute_columns`; the
    first page is requested here and awaited by the first ``__anext__``, which raises the
    query's error. On a :class:`~cqlcodec.aio.FastSession` the pages come through
    cqlcodec's request path."""
    check_page_options(fetch_size, limit)
    if isinstance(session, FastSession):
        return ColumnStream(send_pages(session, statement, parameters, fetch_size=fetch_size,
                                       max_page_rows=limit,
                                       execution_profile=execution_profile), limit)
    future = send_columnar(session, statement, parameters, fetch_size=fetch_size,
                           max_page_rows=limit, execution_profile=execution_profile)
    return ColumnStream(FuturePages(future), limit)


async def execute_columns(session: Session | FastSession, statement: Query, parameters: Parameters = None,
                          *, fetch_size: int | None = None, limit: int | None = None,
                          execution_profile: object = EXEC_PROFILE_DEFAULT) -> ColumnPages:
    """:func:`cqlcodec.driver.execute_columns` awaited: every page is fetched (the next one
    requested while this one is decoded) and the :class:`~cqlcodec.driver.ColumnPages`
    returned holds them decoded, so iterating it, ``to_arrow()``, ``to_pandas()`` or
    ``to_polars()`` never waits for the server. For a result too large to hold, use
    :func:`stream_columns`. On a :class:`~cqlcodec.aio.FastSession` the pages come
    through cqlcodec's request path (large pages decoded off the loop, as here)."""
    stream = stream_columns(session, statement, parameters, fetch_size=fetch_size,
                            limit=limit, execution_profile=execution_profile)
    batches = [await stream.__anext__()]  # a query's first page, even when it has no rows
    while stream._pending:
        batches.append(await stream.__anext__())
    return ColumnPages.of_batches(batches)
