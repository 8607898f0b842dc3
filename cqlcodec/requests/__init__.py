"""cqlcodec's own request path on the caller's asyncio loop (opt in per session)::

    fast = await cqlcodec.aio.connect(session)
    result = await fast.execute(prepared, (42,))     # rows as the session's row factory makes them
    pages = await fast.execute_columns(prepared, (42,))
    await fast.close()

The driver's session keeps the control plane (metadata, token map, policies, auth,
prepared statements); :class:`FastSession` sends the requests over connections of its
own (:mod:`cqlcodec.requests.connection`), binding and decoding with cqlcodec's
compiled codecs. See docs/guide/requests.md for what it supports and refuses.
"""

from __future__ import annotations

from cqlcodec.requests.errors import UnsupportedRequestError
from cqlcodec.requests.session import FastResult, FastSession, connect

__all__ = ["FastResult", "FastSession", "UnsupportedRequestError", "connect"]
