"""The event loop's clock and futures as the request path calls them per request:
asyncio's own loops implement ``loop.time()`` and ``loop.create_future()`` as Python
methods that only call ``time.monotonic()`` and ``asyncio.Future(loop=loop)``; for them
those are called directly (the same clock, the same futures), for any other loop
(uvloop, a loop of the user's) its methods."""

from __future__ import annotations

import asyncio
import time
from asyncio.base_events import BaseEventLoop
from collections.abc import Callable
from functools import partial
from typing import Any


def loop_clock(loop: asyncio.AbstractEventLoop) -> Callable[[], float]:
    """What ``loop.time()`` returns, as a call."""
    if getattr(type(loop), "time", None) is BaseEventLoop.time:
        return time.monotonic
    return loop.time


def future_maker(loop: asyncio.AbstractEventLoop) -> Callable[[], asyncio.Future[Any]]:
    """What ``loop.create_future()`` makes, as a call."""
    if getattr(type(loop), "create_future", None) is BaseEventLoop.create_future:
        return partial(asyncio.Future, loop=loop)
    return loop.create_future
