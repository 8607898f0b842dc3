"""Timestamps and dates written as text, as the CSV and JSON lines loaders read them.

What CQL accepts and what common writers produce (pandas, polars, DuckDB, Spark,
cqlsh, dsbulk, cqlcodec itself):

* a timestamp: ``YYYY-MM-DD``, then optionally ``T`` or a space and ``HH:MM``,
  ``:SS`` and a fraction of 1 to 9 digits (``.`` or ``,``), then optionally a zone:
  ``Z``, ``+HH``, ``+HHMM`` or ``+HH:MM`` (a space before it is allowed). Without a
  zone, the wall time is read in the load's time zone (``time_zone``, default UTC,
  as dsbulk's ``codec.timeZone``; CQL itself takes the coordinator's zone). A
  timestamp holds milliseconds: digits after the third of the fraction are dropped
  (the instant is truncated to its millisecond, as Cassandra 5.0 does with a CQL
  literal such as ``'2024-01-01 00:00:00.123456'``). An integer (optionally signed)
  is milliseconds since 1970-01-01 UTC, as in CQL.
* a date: ``YYYY-MM-DD``, or a datetime at midnight (``2024-01-01T00:00:00.000``,
  ``2024-01-01 00:00:00``, with or without a zone: the date as written), as pandas
  writes a date held in a datetime column. A datetime at any other time of day is
  refused (a date column holds no time of day).

Years have four digits or more, with an optional sign (``+10000-01-01``,
``-0768-02-04``), and the calendar is the proleptic Gregorian one, so every date
and timestamp a server stores reads back. :func:`arrow_times` converts a whole
Arrow column of such text at once where Arrow's own parser takes every value.
"""

from __future__ import annotations

import datetime
import re
from typing import Any, Final

__all__ = ["TimeTextError", "arrow_times", "date_days", "time_zone_of", "timestamp_ms"]

UTC: Final = datetime.timezone.utc
_MS_PER_DAY: Final = 86_400_000
_TEXT: Final = re.compile(
    r"\s*([+-]?\d{4,})-(\d\d)-(\d\d)"                               # date
    r"(?:[T ](\d\d):(\d\d)(?::(\d\d)(?:[.,](\d{1,9}))?)?)?"          # time of day
    r" ?(Z|z|[+-]\d\d(?::?\d\d)?)?\s*$")                             # zone
_INTEGER: Final = re.compile(r"\s*[+-]?\d+\s*$")
_OFFSET: Final = re.compile(r"([+-])(\d\d)(?::?(\d\d))?$")


class TimeTextError(ValueError):
    """A text that is no timestamp or date (see the module docstring): why."""


def time_zone_of(name: str | datetime.tzinfo | None) -> datetime.tzinfo:
    """The zone of a ``time_zone`` option: ``None``, ``"UTC"`` or ``"Z"`` (UTC), an
    offset (``"+02:00"``, ``"-0530"``), an IANA name (``"Europe/Paris"``, through
    :mod:`zoneinfo`) or a ``tzinfo``. ``ValueError`` for an unknown name."""
    if name is None:
        return UTC
    if isinstance(name, datetime.tzinfo):
        return name
    text = name.strip()
    if text.upper() in ("UTC", "Z", "GMT"):
        return UTC
    offset = _OFFSET.match(text)
    if offset is not None:
        return datetime.timezone(_offset_of(offset[1], offset[2], offset[3] or "00"))
    import zoneinfo

    try:
        return zoneinfo.ZoneInfo(text)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError) as exc:
        raise ValueError(f"unknown time zone {name!r} (give an IANA name such as "
                         "'Europe/Paris', an offset such as '+02:00', or 'UTC')") from exc


def _offset_of(sign: str, hours: str, minutes: str) -> datetime.timedelta:
    h, m = int(hours), int(minutes)
    if h > 18 or m > 59:
        raise TimeTextError(f"zone offset {sign}{hours}:{minutes} is out of range")
    delta = datetime.timedelta(hours=h, minutes=m)
    return -delta if sign == "-" else delta


def days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (any year; year 0 is 1 BC);
    ``ValueError`` for a month or day that does not exist."""
    if not 1 <= month <= 12:
        raise TimeTextError(f"month {month} does not exist")
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    last = (31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)[month - 1]
    if not 1 <= day <= last:
        raise TimeTextError(f"day {day} does not exist in month {month} of year {year}")
    y = year - 1 if month <= 2 else year
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _parts(text: str) -> re.Match[str]:
    found = _TEXT.match(text)
    if found is None:
        raise TimeTextError("expected YYYY-MM-DD, optionally followed by T or a space, "
                         "HH:MM[:SS[.fraction]] and a zone (Z, +HH:MM)")
    return found


def _clock_ms(found: re.Match[str]) -> int:
    """Milliseconds into the day of a matched text (its fraction truncated to ms)."""
    hours = int(found[4] or 0)
    minutes = int(found[5] or 0)
    seconds = int(found[6] or 0)
    if hours > 23 or minutes > 59 or seconds > 59:
        raise TimeTextError(f"no time of day {found[4]}:{found[5]}:{found[6] or '00'}")
    millis = int((found[7] or "").ljust(3, "0")[:3])
    return ((hours * 60 + minutes) * 60 + seconds) * 1000 + millis


def timestamp_ms(text: str, zone: datetime.tzinfo = UTC) -> int:
    """Milliseconds since the epoch of a timestamp written as text (see the module
    docstring); a text without a zone is a wall time in ``zone``. ``ValueError`` for
    anything else."""
    if _INTEGER.match(text):
        return int(text)
    found = _parts(text)
    days = days_from_civil(int(found[1]), int(found[2]), int(found[3]))
    wall = days * _MS_PER_DAY + _clock_ms(found)
    written = found[8]
    if written is not None:
        if written in ("Z", "z"):
            return wall
        offset = _OFFSET.match(written)
        assert offset is not None
        shift = _offset_of(offset[1], offset[2], offset[3] or "00")
        return wall - int(shift.total_seconds()) * 1000
    if zone is UTC:
        return wall
    return wall - _zone_offset_ms(zone, found, wall)


def _zone_offset_ms(zone: datetime.tzinfo, found: re.Match[str], wall: int) -> int:
    """The offset of ``zone`` at a wall time (the earlier one where clocks go back; in
    a gap where they go forward, the offset before it, which moves the time forward
    by the gap, as java.time does)."""
    year = int(found[1])
    fixed = zone.utcoffset(None)
    if fixed is not None:
        return int(fixed.total_seconds()) * 1000
    if not 1 <= year <= 9999:
        raise TimeTextError(f"year {year} is outside 1-9999, where the time zone {zone} "
                         "has no rules: write the zone offset (Z, +HH:MM) in the value")
    local = datetime.datetime(year, int(found[2]), int(found[3]), int(found[4] or 0),
                              int(found[5] or 0), int(found[6] or 0), tzinfo=zone)
    offset = local.utcoffset()
    return 0 if offset is None else int(offset.total_seconds()) * 1000


def date_days(text: str) -> int:
    """Days since 1970-01-01 of a date written as text: ``YYYY-MM-DD`` or a datetime
    at midnight (see the module docstring). ``ValueError`` for anything else,
    a datetime at another time of day included."""
    found = _parts(text)
    if found[4] is not None and _clock_ms(found) != 0 or (found[7] or "0").strip("0"):
        raise TimeTextError("a datetime that is not at midnight: a date column takes a date "
                         "(YYYY-MM-DD) or a datetime at 00:00:00")
    return days_from_civil(int(found[1]), int(found[2]), int(found[3]))


def arrow_times(pa: Any, strings: Any, cql: str, zone: datetime.tzinfo) -> Any:
    """A pyarrow string column of timestamps (``cql`` ``"timestamp"``) or dates
    (``"date"``) converted by Arrow's own parser, when it takes every value exactly as
    :func:`timestamp_ms` and :func:`date_days` would: zoned timestamps with at most
    microseconds, wall times when ``zone`` is UTC, ``YYYY-MM-DD`` dates. ``None`` when
    it does not (then each value goes through those functions)."""
    try:
        if cql == "date":
            return strings.cast(pa.date32())
        try:
            return strings.cast(pa.timestamp("us", tz="UTC"))
        except pa.ArrowInvalid:
            if zone is not UTC:
                return None
            return strings.cast(pa.timestamp("us"))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
