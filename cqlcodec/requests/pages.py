"""The pages of one query on cqlcodec's request path, for the column readers
(``cqlcodec.aio``'s ``execute_columns``, ``stream_columns`` and ``scan_table``, and
:meth:`FastSession.execute_columns <cqlcodec.requests.session.FastSession.execute_columns>`).

:func:`send_pages` sends the first page's request at once (a task on the loop) and
returns a :class:`FastPages`; :meth:`FastPages.page` awaits it as a
:class:`~cqlcodec.driver.columns.RawPage` (the RESULT Rows body as the server sent it),
and :meth:`FastPages.fetch_next` requests the next page from that page's paging state,
so it travels while this one is decoded: what ``ResponseFuture.start_fetching_next_page``
does for the driver's pages, with the same page-size rules
(:func:`~cqlcodec.driver.columns.next_page_rows`, :func:`~cqlcodec.driver.columns.capped`).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from cassandra.cluster import _NOT_SET, EXEC_PROFILE_DEFAULT

from cqlcodec.driver.columns import ColumnPages, RawPage, capped
from cqlcodec.errors import CodecError
from cqlcodec.requests.decode import Page
from cqlcodec.requests.statements import Request

if TYPE_CHECKING:
    from cqlcodec.requests.session import FastSession

__all__ = ["FastPages", "all_columns", "send_pages"]


def _retrieved(task: asyncio.Future[Any]) -> None:
    """A page nobody awaits any more: its error (if any) is taken, not logged."""
    if not task.cancelled():
        task.exception()


class FastPages:
    """The pages of one request on a :class:`FastSession`, one in flight at a time."""

    def __init__(self, fast: FastSession, req: Request, policy: Any) -> None:
        self.fast = fast
        self.req = req
        self.policy = policy
        self.coordinator: Any = None  # the host that answered the last page
        self._state: bytes | None = None
        self._next: asyncio.Future[tuple[Page, Any]] | None = None
        self._start()

    def _start(self) -> None:
        task: asyncio.Future[tuple[Page, Any]] = self.fast.loop.create_task(
            self.fast._page_of(self.req, True))
        task.add_done_callback(_retrieved)
        self._next = task

    async def page(self) -> RawPage:
        """The page requested last; the request's error is raised here, and
        :class:`~cqlcodec.CodecError` when the statement returned no rows result."""
        task = self._next
        if task is None:
            raise CodecError("no page was requested")
        self._next = None
        got, host = await task
        self.coordinator = host
        if not got.body:
            raise CodecError("the statement returned no rows result (execute_columns is "
                             "for queries that return rows)")
        raw = RawPage(got.body, self.fast.version, self.policy)
        self._state = raw.paging_state
        return raw

    def fetch_next(self, cap: int | None) -> None:
        """Request the page after the last one awaited, at most ``cap`` rows if given."""
        req = self.req
        req.paging_state = self._state
        size = capped(req.fetch_size, cap)
        req.fetch_size = size if size is not None else 0
        self._start()

    def close(self) -> None:
        """Stop: a page in flight is dropped (its stream id is freed when it arrives)."""
        task = self._next
        self._next = None
        if task is not None and not task.done():
            task.cancel()


def send_pages(fast: FastSession, statement: object, parameters: Any = None, *,
               fetch_size: int | None = None, max_page_rows: int | None = None,
               paging_state: bytes | None = None, host: Any = None,
               timeout: object = _NOT_SET,
               execution_profile: object = EXEC_PROFILE_DEFAULT) -> FastPages:
    """Send a query whose pages stay raw (the arguments of
    :func:`cqlcodec.driver.columns.send_columnar`) on ``fast``'s request path."""
    req = fast._request(statement, parameters, timeout, execution_profile, paging_state, False)
    if fetch_size is not None:
        if fetch_size < 1:
            raise ValueError(f"fetch_size must be at least 1, not {fetch_size}")
        req.fetch_size = fetch_size
    size = capped(req.fetch_size, max_page_rows)
    req.fetch_size = size if size is not None else 0
    req.skip_metadata = False  # every page describes its columns for the column decoder
    req.host = host
    ps: Any = req.ps
    policy = ps.column_encryption_policy if ps is not None else \
        fast.session.cluster.column_encryption_policy
    return FastPages(fast, req, policy)


async def all_columns(pages: FastPages) -> ColumnPages:
    """Every page of ``pages`` decoded on the loop (the next one requested first)."""
    batches = []
    while True:
        raw = await pages.page()
        more = raw.paging_state is not None and pages.req.fetch_size > 0
        if more:
            pages.fetch_next(None)
        batches.append(raw.decode())
        if not more:
            return ColumnPages.of_batches(batches)
