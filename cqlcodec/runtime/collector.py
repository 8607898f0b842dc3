"""The cyclic garbage collector held off while a page of row objects is built.

Every tracked object allocated (a row tuple, a ``UUID``, the driver's ``Date``) counts
towards the collector's next young collection, and every hundredth young collection may
become a full one that walks every tracked object of the process. A program keeping
200,000 rows of the driver's values spent 60% of its CPU in those full collections.

The rows of a page hold no reference cycles, so collecting while they are built finds
nothing to free. Paused, the young generation is collected once after the page (at the
next allocation), and full collections come as seldom as the program's own allocations
make them.

The collector has one switch per process. Pauses are counted across threads: the
collector is switched back on when the last pause ends, and only if it was on when the
first began. An application that switches it off itself while a page is being built
finds it on again after that page.
"""

from __future__ import annotations

import gc
import threading
from typing import Final

__all__ = ["pause", "resume"]

_lock: Final = threading.Lock()
_depth: list[int] = [0]  # pauses under way
_was_on: list[bool] = [False]  # whether the first of them found the collector on


def pause() -> None:
    """Holds off automatic collections until the matching :func:`resume`."""
    with _lock:
        if _depth[0] == 0:
            _was_on[0] = gc.isenabled()
            if _was_on[0]:
                gc.disable()
        _depth[0] += 1


def resume() -> None:
    """Ends a :func:`pause`; the last one switches the collector back on if it was on."""
    with _lock:
        _depth[0] -= 1
        if _depth[0] == 0 and _was_on[0]:
            gc.enable()
