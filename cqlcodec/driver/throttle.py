"""A rows-per-second limit shared by the threads of one unload or load.

:class:`RowRate` spaces deliveries so that ``rows`` rows have taken at least
``rows / rate`` seconds: before a piece of ``n`` rows goes out, :meth:`RowRate.wait`
sleeps until the time the rows before it are due. A stall (a slow server) is not
made up with a burst beyond half a second of rows. Over any window of a few seconds
the rate stays within the size of one piece of the limit; callers keep pieces to a
tenth of a second of rows (``piece_rows``).
"""

from __future__ import annotations

import threading
import time
from typing import Final

__all__ = ["RowRate", "piece_rows"]

_CATCH_UP: Final = 0.5  # seconds of rows a stall may be made up with


def piece_rows(rate: float, rows: int) -> int:
    """``rows`` capped to a tenth of a second at ``rate`` rows per second (at least 1)."""
    return max(1, min(rows, int(rate / 10)))


class RowRate:
    """At most ``rate`` rows per second, across threads."""

    def __init__(self, rate: float) -> None:
        if not rate > 0:
            raise ValueError(f"a rate is more than 0 rows per second, got {rate}")
        self.rate = float(rate)
        self._due = 0.0  # when the next rows may go
        self._lock = threading.Lock()

    def wait(self, rows: int) -> None:
        """Sleeps until ``rows`` more rows may go out."""
        with self._lock:
            now = time.monotonic()
            if self._due == 0.0:  # the first rows: no stall to make up
                self._due = now
            elif self._due < now - _CATCH_UP:
                self._due = now - _CATCH_UP
            start = self._due
            self._due = start + rows / self.rate
        delay = start - time.monotonic()
        if delay > 0:
            time.sleep(delay)
