"""Proleptic Gregorian calendar arithmetic on day counts, without datetime's year limits."""

from __future__ import annotations

from mypy_extensions import i64


def civil_from_days(days: i64) -> tuple[i64, i64, i64]:
    """(year, month, day) for ``days`` since 1970-01-01; year 0 is 1 BC.

    The inverse of Howard Hinnant's days_from_civil, using floor division.
    """
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    year = yoe + era * 400 + (1 if month <= 2 else 0)
    return year, month, day
