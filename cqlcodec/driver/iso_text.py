"""ISO 8601 texts of CQL ``date`` and ``timestamp`` values over their whole range, as
Java's ``DateTimeFormatter`` writes them (what cqlsh and dsbulk show): a year from 0 to
9999 as four digits, any other year with its sign and at least four digits
(``-0768-02-04``, ``+15659-07-15``, ``+292278994-08-17T07:12:55.807Z``). Python's
``datetime`` stops at years 1 and 9999; a CQL ``date`` spans about 5.8 million years
either side of 1970 and a ``timestamp`` about 292 million.
:mod:`cqlcodec.driver.time_text` reads them back.
"""

from __future__ import annotations

from typing import Final

from cqlcodec.runtime.calendar import civil_from_days

__all__ = ["date_text", "timestamp_text"]

_MS_PER_DAY: Final = 86_400_000


def _year_text(year: int) -> str:
    if 0 <= year <= 9999:
        return f"{year:04d}"
    return f"{'-' if year < 0 else '+'}{abs(year):04d}"


def date_text(days: int) -> str:
    """``YYYY-MM-DD`` of ``days`` since 1970-01-01 (years outside 0-9999 signed)."""
    year, month, day = civil_from_days(days)
    return f"{_year_text(int(year))}-{int(month):02d}-{int(day):02d}"


def timestamp_text(ms: int, separator: str = "T") -> str:
    """``YYYY-MM-DDTHH:MM:SS.mmmZ`` of ``ms`` milliseconds since the epoch, in UTC
    (years outside 0-9999 signed); ``separator`` between the date and the time."""
    days, rest = divmod(ms, _MS_PER_DAY)
    seconds, millis = divmod(rest, 1000)
    minutes, second = divmod(seconds, 60)
    hour, minute = divmod(minutes, 60)
    return (f"{date_text(days)}{separator}{hour:02d}:{minute:02d}:{second:02d}"
            f".{millis:03d}Z")
