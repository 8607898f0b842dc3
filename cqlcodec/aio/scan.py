"""Whole tables into columns from a coroutine: :func:`scan_table` returns an
:class:`AsyncTableScan` to read with ``async for``.

The splits, the query and the retry rules are those of :func:`cqlcodec.driver.scan_table`
(:func:`~cqlcodec.driver.scan.plan_scan`, :class:`~cqlcodec.driver.scan.SplitCursor`):
each split is read by one task on the running loop instead of one thread, page by page,
the next page requested before this one is decoded; a bounded queue between the tasks
and the consumer bounds the memory as the synchronous scan's queue does (two pages per
split read at once, plus one in flight per split).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any, Final

from cassandra.cluster import Session

from cqlcodec.aio.bridge import FuturePages, decode_page, off_loop
from cqlcodec.aio.columns import PageSource, driver_session
from cqlcodec.columnar.batch import ColumnBatch
from cqlcodec.columnar.unify import arrow_table_of, pandas_frame_of
from cqlcodec.driver.outage import host_watch
from cqlcodec.driver.scan import (
    ParquetSink,
    ScanProgress,
    ScanTally,
    SplitCursor,
    _SplitQuery,
    check_scan_options,
    plan_scan,
    polars_frame_of,
)
from cqlcodec.driver.splits import TokenSplit
from cqlcodec.requests.pages import send_pages
from cqlcodec.requests.session import FastSession

__all__ = ["AsyncTableScan", "scan_table"]

_DONE: Final = object()
_FAILED: Final = -1
_ENDED: Final = -2


class _SplitTasks:
    """The tasks reading the splits of one scan into a bounded queue. They refer to this
    object, never to the :class:`AsyncTableScan`, so a scan dropped unfinished is
    collected and cancels them."""

    def __init__(self, session: Session, query: _SplitQuery, splits: list[TokenSplit],
                 concurrency: int, fetch_size: int, consistency_level: int | None,
                 retries: int | None, retry_timeout: float,
                 waiting: Callable[[], None], fast: FastSession | None) -> None:
        self.session = session
        self.fast = fast  # the request path the pages come through (None: the driver's)
        self.query = query
        self.splits = splits
        self.count = max(1, min(concurrency, len(splits)))
        self.fetch_size = fetch_size
        self.consistency_level = consistency_level
        self.retries = retries
        self.retry_timeout = retry_timeout
        self.waiting = waiting
        self.queue: asyncio.Queue[tuple[int, object]] = asyncio.Queue(maxsize=2 * self.count)
        self.readers: dict[int, SplitCursor] = {}
        self.next_split = 0
        self.tasks = [asyncio.ensure_future(self.work()) for _ in range(self.count)]

    async def work(self) -> None:
        try:
            while self.next_split < len(self.splits):
                index = self.next_split
                self.next_split += 1
                cursor = SplitCursor(self.session, self.query, self.splits[index],
                                     self.fetch_size, self.consistency_level, self.retries,
                                     self.retry_timeout)
                self.readers[index] = cursor
                await self.read(index, cursor)
                await self.queue.put((index, _DONE))
        except Exception as exc:  # noqa: BLE001 - handed to the consumer (a cancellation is not)
            await self.queue.put((_FAILED, exc))
        await self.queue.put((_ENDED, None))

    async def read(self, index: int, cursor: SplitCursor) -> None:
        try:
            while True:
                try:
                    source = self.send(cursor)
                    page = await source.page()
                    while True:
                        more = page.paging_state is not None
                        if more:  # the next page travels while this one is decoded and queued
                            source.fetch_next(None)
                        batch = await decode_page(page)
                        cursor.delivered(page, source.coordinator)
                        await self.queue.put((index, batch))
                        if not more:
                            return
                        page = await source.page()
                except Exception as exc:  # noqa: BLE001 - timeouts, cut connections, nodes down
                    delay = cursor.failed(exc)
                    while delay > 0:  # says what it waits for about once a second
                        self.waiting()
                        await asyncio.sleep(min(1.0, delay))
                        delay -= 1.0
        finally:
            cursor.done()

    def send(self, cursor: SplitCursor) -> PageSource:
        """The cursor's next request, through the driver or cqlcodec's request path."""
        if self.fast is None:
            return FuturePages(cursor.send())
        bound, fetch_size, state, host = cursor.next_request()
        return send_pages(self.fast, bound, fetch_size=fetch_size, paging_state=state, host=host)

    def cancel(self) -> None:
        for task in self.tasks:
            if not task.done():
                try:
                    task.cancel()
                except RuntimeError:  # its loop is closed: nothing runs it any more
                    pass


class AsyncTableScan:
    """The rows of a table as a one-shot stream of :class:`~cqlcodec.ColumnBatch` es for
    ``async for`` (see :func:`scan_table`), with the semantics of
    :class:`cqlcodec.driver.TableScan`.

    The first ``__anext__`` plans the scan (table and columns checked, query prepared,
    splits planned: :class:`~cqlcodec.driver.ScanError` is raised there) off the loop,
    then starts one task per split read at once. :meth:`to_arrow`, :meth:`to_pandas`,
    :meth:`to_polars` and :meth:`to_parquet` are coroutines. Cancelling the task that
    iterates, :meth:`aclose`, leaving an ``async with`` block or dropping the scan
    cancels the reads. ``splits`` (after the first batch) are the splits read;
    ``readers`` maps the index of each split begun to its
    :class:`~cqlcodec.driver.scan.SplitCursor` (``coordinators``, ``failures``).
    """

    def __init__(self, session: Session, table: str, columns: Sequence[str] | None,
                 where: str | None, splits: int | Sequence[TokenSplit] | None,
                 concurrency: int | None, fetch_size: int, consistency_level: int | None,
                 retries: int | None, retry_timeout: float,
                 progress: Callable[[ScanProgress], None] | None,
                 fast: FastSession | None = None) -> None:
        self.splits: list[TokenSplit] = []
        self._fast = fast
        self._plan = (session, table, columns, where, splits, concurrency)
        self._read_options = (fetch_size, consistency_level, retries, retry_timeout)
        self._progress = progress
        self._tasks: _SplitTasks | None = None
        self._tally: ScanTally | None = None
        self._running = 0
        self._finished = False

    @property
    def readers(self) -> dict[int, SplitCursor]:
        """The cursor of each split begun, by split index."""
        return {} if self._tasks is None else self._tasks.readers

    @property
    def rows_fetched(self) -> int:
        """How many rows have been given out so far."""
        return 0 if self._tally is None else self._tally.rows

    @property
    def splits_done(self) -> int:
        """How many splits have been read to their end so far."""
        return 0 if self._tally is None else self._tally.splits_done

    async def _start(self) -> _SplitTasks:
        session, table, columns, where, splits, concurrency = self._plan
        query, planned, count = await off_loop(plan_scan, session, table, columns, where,
                                               splits, concurrency)
        self.splits = planned
        self._tally = ScanTally(planned, self._progress, host_watch(session), query.table)
        fetch_size, consistency_level, retries, retry_timeout = self._read_options
        self._tasks = _SplitTasks(session, query, planned, count, fetch_size,
                                  consistency_level, retries, retry_timeout,
                                  self._tally.waiting, self._fast)
        self._running = self._tasks.count
        return self._tasks

    async def _next_item(self) -> tuple[int, ColumnBatch] | None:
        if self._finished:
            return None
        try:
            tasks = self._tasks if self._tasks is not None else await self._start()
            tally = self._tally
            assert tally is not None
            while True:
                if self._running == 0:
                    self._finished = True
                    last = tally.last()
                    return None if last is None else (0, last)
                index, item = await tasks.queue.get()
                if index == _ENDED:
                    self._running -= 1
                    continue
                if index == _FAILED:
                    assert isinstance(item, BaseException)
                    raise item
                if item is _DONE:
                    tally.split_done(index)
                    continue
                assert isinstance(item, ColumnBatch)
                if tally.take(item):
                    return index, item
        except BaseException:
            self.close()
            raise

    def __aiter__(self) -> AsyncIterator[ColumnBatch]:
        return self

    async def __anext__(self) -> ColumnBatch:
        item = await self._next_item()
        if item is None:
            raise StopAsyncIteration
        return item[1]

    async def items(self) -> AsyncIterator[tuple[int, ColumnBatch]]:
        """``(split index, batch)`` pairs as they arrive; a split's batches come in its
        token order."""
        while True:
            item = await self._next_item()
            if item is None:
                return
            yield item

    def close(self) -> None:
        """Stop reading: the tasks are cancelled (answers in flight are dropped); idempotent."""
        self._finished = True
        if self._tasks is not None:
            self._tasks.cancel()

    async def aclose(self) -> None:
        """:meth:`close`, then wait until the tasks have ended."""
        self.close()
        if self._tasks is not None:
            await asyncio.gather(*self._tasks.tasks, return_exceptions=True)

    async def __aenter__(self) -> AsyncTableScan:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __del__(self) -> None:
        if self._tasks is not None:
            self._tasks.cancel()

    async def _batches(self) -> list[ColumnBatch]:
        return [batch async for batch in self]

    async def to_arrow(self) -> Any:
        """Every row as one ``pyarrow.Table`` (as :meth:`cqlcodec.driver.TableScan.to_arrow`;
        the table is assembled off the loop)."""
        return await off_loop(arrow_table_of, await self._batches())

    async def to_pandas(self) -> Any:
        """Every row as one pandas DataFrame with ``pandas.ArrowDtype`` columns (duration
        columns of :class:`cqlcodec.Duration` objects); needs pyarrow."""
        table = await self.to_arrow()
        return await off_loop(pandas_frame_of, table)

    async def to_polars(self) -> Any:
        """Every row as one polars DataFrame (pages concatenated without copying)."""
        return await off_loop(polars_frame_of, await self._batches())

    async def to_parquet(self, path: str | os.PathLike[str], **options: Any) -> list[str]:
        """Write every row to Parquet while reading and return the files written (the
        files as :meth:`cqlcodec.driver.TableScan.to_parquet` writes them; the writes and
        their compression run off the loop)."""
        sink = await off_loop(ParquetSink, path, options)
        try:
            while True:
                item = await self._next_item()
                if item is None:
                    return await off_loop(sink.finish)
                assert self._tally is not None
                await off_loop(sink.write, item[0], item[1], set(self._tally.done_splits))
        finally:
            self.close()
            await off_loop(sink.abort)


def scan_table(session: Session | FastSession, table: str, columns: Sequence[str] | None = None, *,
               where: str | None = None, splits: int | Sequence[TokenSplit] | None = None,
               concurrency: int | None = None, fetch_size: int = 5000,
               consistency_level: int | None = None, retries: int | None = None,
               retry_timeout: float | None = None,
               progress: Callable[[ScanProgress], None] | None = None) -> AsyncTableScan:
    """:func:`cqlcodec.driver.scan_table` for ``async for``: the same arguments, rows and
    errors, each split read by a task on the running loop (``concurrency`` of them at
    once) instead of a thread. The arguments are checked here (``ValueError``); the
    table, the columns and the query when the first batch is asked for
    (:class:`~cqlcodec.driver.ScanError`). ``progress`` is called on the loop. On a
    :class:`~cqlcodec.aio.FastSession` the pages come through cqlcodec's request path
    (the scan is planned with its driver session: table, columns, splits, replicas)."""
    timeout = check_scan_options(fetch_size, retry_timeout, retries, concurrency)
    fast = session if isinstance(session, FastSession) else None
    return AsyncTableScan(driver_session(session), table, columns, where, splits, concurrency,
                          fetch_size, consistency_level, retries, timeout, progress, fast)
