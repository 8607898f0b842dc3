"""The progress line of the table commands on stderr, and their summary line."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import Final, TextIO

REDRAW_SECONDS: Final = 0.25


def _count(n: float) -> str:
    for size, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if n >= size:
            return f"{n / size:.1f}{unit}"
    return f"{n:.0f}"


def _duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


class Progress:
    """Rows done, rows/s, units (splits or files) done of total and the time left,
    redrawn in place on ``stream`` (stderr) at most every 0.25 s; drawn only when
    ``enabled`` (the commands pass: stderr is a terminal and no ``--quiet``).
    Thread-safe: workers call :meth:`add_rows` and :meth:`unit_done`. ``status``, when
    set, gives a text shown at the end of the line when not empty (what the work waits
    for: ``"waiting for 127.0.0.1 (down 12 s)"``). ``estimate``, when set, gives the
    estimated rows in place of ``estimated_rows`` (None while they are not known yet:
    the line then says so rather than show a time left)."""

    def __init__(self, verb: str, units: str, total_units: int, estimated_rows: int,
                 enabled: bool, stream: TextIO | None = None) -> None:
        self.verb = verb
        self.units = units
        self.total_units = total_units
        self.estimated_rows = estimated_rows
        self.enabled = enabled
        self.stream = stream if stream is not None else sys.stderr
        self.rows = 0
        self.units_done = 0
        self.started = time.monotonic()
        self.status: Callable[[], str] | None = None
        self.estimate: Callable[[], int | None] | None = None
        self._drawn = 0.0
        self._lock = threading.Lock()

    @property
    def elapsed(self) -> float:
        """Seconds since the start."""
        return time.monotonic() - self.started

    def add_rows(self, rows: int) -> None:
        """Counts ``rows`` more rows done."""
        with self._lock:
            self.rows += rows
        self.draw()

    def set_rows(self, rows: int) -> None:
        """Sets the rows done (for callers that know the running total)."""
        with self._lock:
            self.rows = rows
        self.draw()

    def unit_done(self) -> None:
        """Counts one more split (or file) finished."""
        with self._lock:
            self.units_done += 1
        self.draw(force=True)

    def line(self) -> str:
        """The progress line as it is drawn."""
        elapsed = self.elapsed
        rate = self.rows / elapsed if elapsed > 0 else 0.0
        parts = [f"{self.verb} {_count(self.rows)} rows", f"{_count(rate)} rows/s",
                 f"{self.units} {self.units_done}/{self.total_units}"]
        total = self.estimate() if self.estimate is not None else self.estimated_rows
        if total is None:
            parts.append("ETA not known yet (estimating rows per partition)")
        elif total > self.rows and rate > 0 and self.units_done < self.total_units:
            parts.append(f"ETA {_duration((total - self.rows) / rate)} of ~{_count(total)} "
                         "rows (estimated)")
        parts.append(_duration(elapsed))
        status = self.status() if self.status is not None else ""
        if status:
            parts.append(status)
        return " | ".join(parts)

    def draw(self, force: bool = False) -> None:
        """Redraws the line if enabled and due."""
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self._drawn < REDRAW_SECONDS:
            return
        self._drawn = now
        self.stream.write("\r\x1b[K" + self.line())
        self.stream.flush()

    def finish(self) -> None:
        """Clears the progress line."""
        if self.enabled:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def summary(verb: str, rows: int, seconds: float, detail: str = "") -> str:
    """The summary line of a command: rows, seconds, rows/s and a detail."""
    rate = rows / seconds if seconds > 0 else 0.0
    tail = f"; {detail}" if detail else ""
    return f"{verb} {rows:,} rows in {seconds:.2f} s ({rate:,.0f} rows/s){tail}"
