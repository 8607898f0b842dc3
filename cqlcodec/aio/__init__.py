"""cqlcodec from asyncio: await a query's rows or columns, iterate a table scan with
``async for``, insert and load without blocking the loop::

    from cqlcodec import aio

    rows = await aio.execute(session, "SELECT * FROM ks.t WHERE p = %s", [7])
    pages = await aio.execute_columns(session, "SELECT * FROM ks.t WHERE p = %s", [7])
    frame = pages.to_pandas()
    async for batch in aio.stream_columns(session, "SELECT * FROM ks.t"):
        ...
    async for batch in aio.scan_table(session, "ks.t"):
        ...

Every call has the semantics and errors of its synchronous counterpart in
:mod:`cqlcodec.driver` and works with or without :func:`cqlcodec.driver.install`.
Requests go through the driver's ``ResponseFuture`` callbacks, handed to the running
loop with ``call_soon_threadsafe`` (:mod:`cqlcodec.aio.bridge`): no thread waits for a
request. Cancelling a task cancels what it waits for (the answers of requests already
sent are dropped when they arrive; no further page is requested); the driver's errors
(``OperationTimedOut``, ``Unavailable``, ...) are raised as they are, and
``asyncio.wait_for`` / ``asyncio.timeout`` work as with any coroutine.

:func:`connect` opts a session into cqlcodec's own request path
(:mod:`cqlcodec.requests`): connections of its own on this loop, no driver machinery
per request.
"""

from __future__ import annotations

from cqlcodec.aio.columns import ColumnStream, execute, execute_columns, stream_columns
from cqlcodec.aio.load import insert_columns, load_table
from cqlcodec.aio.scan import AsyncTableScan, scan_table
from cqlcodec.errors import UnsupportedRequestError
from cqlcodec.requests.session import FastResult, FastSession, connect

__all__ = ["AsyncTableScan", "ColumnStream", "FastResult", "FastSession", "UnsupportedRequestError",
           "connect", "execute", "execute_columns", "insert_columns", "load_table", "scan_table",
           "stream_columns"]
