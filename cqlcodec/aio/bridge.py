"""The driver's ``ResponseFuture`` as something a coroutine awaits.

The driver completes a request on its IO thread and calls the future's callbacks
there. :func:`response_of` registers a callback that hands the outcome to the running
loop (:class:`Inbox`: one ``loop.call_soon_threadsafe``, one wake-up of the loop, for a
burst of responses, not one per response); the coroutine waits on an ``asyncio.Future``,
so no thread ever blocks for a request. The callbacks are removed again when the
awaiting coroutine returns or is cancelled, so a cancelled wait leaves nothing
referring to it behind (the request itself runs out on the server; its answer is
dropped). Pages of a paged query are awaited one by one on the same future: the
callbacks are registered again for every page.

Decoding a page runs on the loop when its body is small and in a small thread pool
(:data:`DECODE_OFF_LOOP_BYTES`) when it is large: see :func:`decode_page`.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Final, TypeVar

from cassandra.cluster import ResponseFuture

from cqlcodec.columnar.batch import ColumnBatch
from cqlcodec.driver.columns import RawPage, capped, page_of_rows

__all__ = ["DECODE_OFF_LOOP_BYTES", "FuturePages", "Inbox", "decode_page", "inbox_of", "off_loop",
           "on_loop", "raw_page_of", "response_of"]

T = TypeVar("T")

# A page body at least this large is decoded in the decode pool rather than on the
# loop (about 1-2 ms of decoding on the compiled build: see docs/guide/asyncio.md).
DECODE_OFF_LOOP_BYTES: Final = 64 * 1024
_POOL_THREADS: Final = 2


def _settle(waiter: asyncio.Future[Any], ok: bool, value: Any) -> None:
    if waiter.done():  # cancelled meanwhile: the answer is dropped
        return
    if ok:
        waiter.set_result(value)
    else:
        waiter.set_exception(value)


def on_loop(loop: asyncio.AbstractEventLoop, fn: Callable[..., object], *args: Any) -> None:
    """Schedules ``fn(*args)`` on ``loop`` from the driver's IO thread (or from the loop's
    own thread, when a driver callback runs at once); nothing when the loop is closed."""
    try:
        loop.call_soon_threadsafe(fn, *args)
    except RuntimeError:  # the loop was closed: nobody waits any more
        pass


class Inbox:
    """The outcomes the driver's IO thread hands to one loop: appended there, settled on
    the loop by one :meth:`drain` per burst. ``scheduled`` is cleared before the drain
    takes the first outcome, so an outcome appended after the drain's last look
    schedules the next drain; the GIL orders the two threads' steps."""

    __slots__ = ("__weakref__", "loop", "outcomes", "scheduled")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = weakref.ref(loop)  # the loop's entry in _inboxes must not keep it
        self.outcomes: deque[tuple[asyncio.Future[Any], bool, Any]] = deque()
        self.scheduled = False

    def put(self, waiter: asyncio.Future[Any], ok: bool, value: Any) -> None:
        """From any thread: settle ``waiter`` on the loop (with ``value`` or, unless
        ``ok``, by raising it) at its next drain."""
        self.outcomes.append((waiter, ok, value))
        if not self.scheduled:
            loop = self.loop()
            if loop is not None:
                self.scheduled = True
                on_loop(loop, self.drain)

    def drain(self) -> None:
        """On the loop: settle every outcome handed over so far."""
        self.scheduled = False
        outcomes = self.outcomes
        while outcomes:
            waiter, ok, value = outcomes.popleft()
            _settle(waiter, ok, value)


_inboxes: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Inbox] = weakref.WeakKeyDictionary()


def inbox_of(loop: asyncio.AbstractEventLoop) -> Inbox:
    """The :class:`Inbox` of ``loop`` (made at its first request; called on the loop)."""
    inbox = _inboxes.get(loop)
    if inbox is None:
        inbox = _inboxes[loop] = Inbox(loop)
    return inbox


def _on_result(value: Any, inbox: Inbox, waiter: asyncio.Future[Any]) -> None:
    inbox.put(waiter, True, value)


def _on_error(error: BaseException, inbox: Inbox, waiter: asyncio.Future[Any]) -> None:
    inbox.put(waiter, False, error)


async def response_of(future: ResponseFuture, first: bool = False) -> Any:
    """What the future's current request (or page) brings: the rows the driver made of it
    (the session's row factory), or its error raised, the driver's own exception. Call it
    once per page, after ``start_fetching_next_page`` for the pages after the first
    (``first``: the future's first page, with no callbacks of an earlier page to
    remove). Its callbacks are removed from the future when it returns or is cancelled."""
    loop = asyncio.get_running_loop()
    waiter: asyncio.Future[Any] = loop.create_future()
    if not first:
        future.clear_callbacks()
    args = (inbox_of(loop), waiter)
    future.add_callbacks(_on_result, _on_error, callback_args=args, errback_args=args)
    try:
        return await waiter
    finally:
        future.clear_callbacks()


async def raw_page_of(future: ResponseFuture, first: bool = False) -> RawPage:
    """The :class:`RawPage` a columnar request (``send_columnar``) brings, once it is
    there (``first`` as for :func:`response_of`)."""
    return page_of_rows(await response_of(future, first))


class FuturePages:
    """The pages of a :func:`~cqlcodec.driver.columns.send_columnar` future, walked as
    :class:`cqlcodec.requests.pages.FastPages` walks those of cqlcodec's request path:
    :meth:`page` awaits the current page, :meth:`fetch_next` requests the next one."""

    def __init__(self, future: ResponseFuture) -> None:
        self.future = future
        self._first = True

    @property
    def coordinator(self) -> Any:
        """The host that answered the last page."""
        return self.future.coordinator_host

    async def page(self) -> RawPage:
        """The page requested last (its error raised here)."""
        first, self._first = self._first, False
        return await raw_page_of(self.future, first)

    def fetch_next(self, cap: int | None) -> None:
        """Request the next page, at most ``cap`` rows if given."""
        message = self.future.message
        message.fetch_size = capped(message.fetch_size, cap)
        self.future.start_fetching_next_page()

    def close(self) -> None:
        """Stop: a page in flight is dropped when it arrives."""
        self.future.clear_callbacks()


_pool: ThreadPoolExecutor | None = None
_pool_lock: Final = threading.Lock()


def _decode_pool() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(_POOL_THREADS, thread_name_prefix="cqlcodec-aio")
        return _pool


async def off_loop(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` in cqlcodec's small thread pool (two threads, shared by every loop),
    for work that would hold the loop too long: large pages, binding a chunk of rows,
    opening files, the blocking parts of the driver's metadata calls."""
    return await asyncio.get_running_loop().run_in_executor(_decode_pool(), fn, *args)


async def decode_page(page: RawPage, keep_rows: int | None = None) -> ColumnBatch:
    """``page.decode(keep_rows)``: on the loop for a small body (a thread hop would cost
    more than the decode), in the pool for a body of :data:`DECODE_OFF_LOOP_BYTES` or
    more, so that a large page never holds the loop for the whole decode."""
    if len(page.body) < DECODE_OFF_LOOP_BYTES:
        return page.decode(keep_rows)
    return await off_loop(page.decode, keep_rows)
