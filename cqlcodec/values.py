"""Python value classes for CQL values that have no exact builtin equivalent."""

from __future__ import annotations

import datetime
import operator
import re
from typing import Final

from cqlcodec.errors import EncodeTypeError, EncodeValueError
from cqlcodec.runtime.calendar import civil_from_days
from cqlcodec.runtime.wire import short_repr


class _UnsetType:
    """The type of :data:`UNSET`: a bind value that leaves the column untouched."""

    __slots__ = ()
    _instance: _UnsetType | None = None

    def __new__(cls) -> _UnsetType:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNSET"

    def __bool__(self) -> bool:
        return False

    def __reduce__(self) -> str:
        return "UNSET"


UNSET: Final = _UnsetType()
"""Bind value meaning "not set" (protocol v4+ length -2): the column keeps its value."""


# ---------------------------------------------------------------------------
# date, time and duration values
# ---------------------------------------------------------------------------

_INT32_MIN: Final = -(1 << 31)
_INT32_MAX: Final = (1 << 31) - 1
_INT64_MIN: Final = -(1 << 63)
_INT64_MAX: Final = (1 << 63) - 1
_UNIX_EPOCH_ORDINAL: Final = 719163  # datetime.date(1970, 1, 1).toordinal()
_MIN_PY_DAYS: Final = 1 - _UNIX_EPOCH_ORDINAL  # datetime.date.min
_MAX_PY_DAYS: Final = 3652059 - _UNIX_EPOCH_ORDINAL  # datetime.date.max
NANOS_PER_DAY: Final = 86_400_000_000_000
"""Nanoseconds in a day: a CQL ``time`` is in ``[0, NANOS_PER_DAY)``."""


def _whole_number(value: object, what: str, cql_name: str) -> int:
    """``value`` as an int: ints and ``__index__`` objects, never bool."""
    if isinstance(value, int) and not isinstance(value, bool):
        return int(value)
    if not isinstance(value, bool) and hasattr(type(value), "__index__") \
            and type(value).__name__ not in ("bool", "bool_"):
        try:
            return operator.index(value)  # type: ignore[arg-type]
        except TypeError:
            pass
    raise EncodeTypeError(
        f"{what} must be an int, not {type(value).__name__} {short_repr(value)}", cql_name)


class Date:
    """A CQL ``date``: a day count relative to 1970-01-01, for any CQL date.

    CQL dates span about 5.8 million years either side of 1970, far beyond
    ``datetime.date`` (years 1 to 9999). cqlcodec decodes dates inside that
    range to ``datetime.date`` and the others to ``Date``; ``Date`` encodes
    like any ``datetime.date``. ``days`` is in ``[-2**31, 2**31 - 1]``.
    """

    __slots__ = ("_days",)

    def __init__(self, days: int) -> None:
        days = _whole_number(days, "Date days", "date")
        if days < _INT32_MIN or days > _INT32_MAX:
            raise EncodeValueError(
                f"Date days must be in [{_INT32_MIN}, {_INT32_MAX}] (the CQL date range), "
                f"got {short_repr(days)}", "date")
        self._days: int = days

    @classmethod
    def from_date(cls, value: datetime.date) -> Date:
        """The Date of a ``datetime.date`` (for a ``datetime``: its calendar date, tz ignored)."""
        if not isinstance(value, datetime.date):
            raise EncodeTypeError(
                f"Date.from_date needs a datetime.date, not {type(value).__name__}", "date")
        return cls(value.toordinal() - _UNIX_EPOCH_ORDINAL)

    @property
    def days(self) -> int:
        """Days since 1970-01-01 (negative before)."""
        return self._days

    def date(self) -> datetime.date:
        """This day as a ``datetime.date``; ValueError outside years 1 to 9999."""
        if self._days < _MIN_PY_DAYS or self._days > _MAX_PY_DAYS:
            raise ValueError(
                f"{self} (days={self._days}) is outside the range of datetime.date "
                "(years 1 to 9999)")
        return datetime.date.fromordinal(self._days + _UNIX_EPOCH_ORDINAL)

    def __str__(self) -> str:
        """ISO 8601 'YYYY-MM-DD'; outside years 0..9999 the expanded form '+10000-01-01'."""
        year, month, day = civil_from_days(self._days)
        if 0 <= year <= 9999:
            return f"{year:04d}-{month:02d}-{day:02d}"
        sign = "-" if year < 0 else "+"
        return f"{sign}{abs(int(year)):04d}-{month:02d}-{day:02d}"

    def __repr__(self) -> str:
        return f"Date({self._days})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Date):
            return self._days == other._days
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        if isinstance(other, Date):
            return self._days != other._days
        return NotImplemented

    def __lt__(self, other: Date) -> bool:
        if isinstance(other, Date):
            return self._days < other._days
        return NotImplemented

    def __le__(self, other: Date) -> bool:
        if isinstance(other, Date):
            return self._days <= other._days
        return NotImplemented

    def __gt__(self, other: Date) -> bool:
        if isinstance(other, Date):
            return self._days > other._days
        return NotImplemented

    def __ge__(self, other: Date) -> bool:
        if isinstance(other, Date):
            return self._days >= other._days
        return NotImplemented

    def __hash__(self) -> int:
        return hash((Date, self._days))

    def __reduce__(self) -> tuple[type[Date], tuple[int]]:
        return (Date, (self._days,))


class Time:
    """A CQL ``time``: nanoseconds since midnight, ``0 <= nanoseconds < NANOS_PER_DAY``.

    Convert with :meth:`time` (to ``datetime.time``, truncated to microseconds),
    :meth:`from_time` and :meth:`parse` ('HH:MM:SS[.fffffffff]').
    ``str()`` gives 'HH:MM:SS.fffffffff'.
    """

    __slots__ = ("_ns",)

    def __init__(self, nanoseconds: int) -> None:
        if type(nanoseconds) is not int:
            nanoseconds = _whole_number(nanoseconds, "Time nanoseconds", "time")
        if nanoseconds < 0 or nanoseconds >= NANOS_PER_DAY:
            raise EncodeValueError(
                f"Time nanoseconds must be in [0, {NANOS_PER_DAY}) (one day), got {short_repr(nanoseconds)}",
                "time")
        self._ns: int = nanoseconds

    @classmethod
    def from_time(cls, value: datetime.time) -> Time:
        """The Time of a ``datetime.time`` (its tzinfo is ignored)."""
        if not isinstance(value, datetime.time):
            raise EncodeTypeError(
                f"Time.from_time needs a datetime.time, not {type(value).__name__}", "time")
        return cls(((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000_000
                   + value.microsecond * 1000)

    @classmethod
    def parse(cls, text: str) -> Time:
        """Parse 'HH:MM:SS' with an optional fraction of 1 to 9 digits ('12:30:00.5')."""
        if not isinstance(text, str):
            raise EncodeTypeError(f"Time.parse needs a str, not {type(text).__name__}", "time")
        match = _TIME_PATTERN.fullmatch(text)
        if match is None:
            raise EncodeValueError(
                f"cannot parse {short_repr(text)} as a time: expected 'HH:MM:SS[.fffffffff]'", "time")
        hours, minutes, seconds = int(match[1]), int(match[2]), int(match[3])
        if hours > 23 or minutes > 59 or seconds > 59:
            raise EncodeValueError(
                f"cannot parse {text!r} as a time: hour, minute or second out of range", "time")
        fraction = match[4] or ""
        nanos = int(fraction.ljust(9, "0")) if fraction else 0
        return cls(((hours * 60 + minutes) * 60 + seconds) * 1_000_000_000 + nanos)

    @property
    def nanoseconds(self) -> int:
        """Nanoseconds since midnight."""
        return self._ns

    @property
    def hour(self) -> int:
        """Hour, 0 to 23."""
        return self._ns // 3_600_000_000_000

    @property
    def minute(self) -> int:
        """Minute, 0 to 59."""
        return self._ns // 60_000_000_000 % 60

    @property
    def second(self) -> int:
        """Second, 0 to 59."""
        return self._ns // 1_000_000_000 % 60

    @property
    def nanosecond(self) -> int:
        """Nanoseconds within the second, 0 to 999 999 999."""
        return self._ns % 1_000_000_000

    def time(self) -> datetime.time:
        """This time as a naive ``datetime.time`` (sub-microsecond digits are truncated)."""
        return datetime.time(self.hour, self.minute, self.second, self.nanosecond // 1000)

    def __str__(self) -> str:
        return f"{self.hour:02d}:{self.minute:02d}:{self.second:02d}.{self.nanosecond:09d}"

    def __repr__(self) -> str:
        return f"Time.parse('{self}')"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Time):
            return self._ns == other._ns
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        if isinstance(other, Time):
            return self._ns != other._ns
        return NotImplemented

    def __lt__(self, other: Time) -> bool:
        if isinstance(other, Time):
            return self._ns < other._ns
        return NotImplemented

    def __le__(self, other: Time) -> bool:
        if isinstance(other, Time):
            return self._ns <= other._ns
        return NotImplemented

    def __gt__(self, other: Time) -> bool:
        if isinstance(other, Time):
            return self._ns > other._ns
        return NotImplemented

    def __ge__(self, other: Time) -> bool:
        if isinstance(other, Time):
            return self._ns >= other._ns
        return NotImplemented

    def __hash__(self) -> int:
        return hash((Time, self._ns))

    def __reduce__(self) -> tuple[type[Time], tuple[int]]:
        return (Time, (self._ns,))


_TIME_PATTERN: Final = re.compile(r"([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,9}))?", re.ASCII)


class Duration:
    """A CQL ``duration``: months, days and nanoseconds, kept apart (no normalisation).

    Immutable. ``months`` and ``days`` are 32-bit, ``nanoseconds`` 64-bit signed
    integers, and, as Cassandra requires, the three are all >= 0 or all <= 0.
    Durations compare equal only component by component and have no order
    (one month is not a fixed number of days).
    """

    __slots__ = ("_months", "_days", "_nanoseconds")
    _months: int
    _days: int
    _nanoseconds: int

    def __init__(self, months: int = 0, days: int = 0, nanoseconds: int = 0) -> None:
        months = _whole_number(months, "Duration months", "duration")
        days = _whole_number(days, "Duration days", "duration")
        nanoseconds = _whole_number(nanoseconds, "Duration nanoseconds", "duration")
        problem = duration_problem(months, days, nanoseconds)
        if problem:
            raise EncodeValueError(
                f"invalid Duration(months={short_repr(months)}, days={short_repr(days)}, "
                f"nanoseconds={short_repr(nanoseconds)}): "
                f"{problem}", "duration")
        _set_attr(self, "_months", months)
        _set_attr(self, "_days", days)
        _set_attr(self, "_nanoseconds", nanoseconds)

    @property
    def months(self) -> int:
        """Months (signed 32-bit)."""
        return self._months

    @property
    def days(self) -> int:
        """Days (signed 32-bit)."""
        return self._days

    @property
    def nanoseconds(self) -> int:
        """Nanoseconds (signed 64-bit)."""
        return self._nanoseconds

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Duration is immutable (cannot set {name!r})")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"Duration is immutable (cannot delete {name!r})")

    def __repr__(self) -> str:
        return (f"Duration(months={self._months}, days={self._days}, "
                f"nanoseconds={self._nanoseconds})")

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Duration):
            return (self._months == other._months and self._days == other._days
                    and self._nanoseconds == other._nanoseconds)
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        if isinstance(other, Duration):
            return not self.__eq__(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash((Duration, self._months, self._days, self._nanoseconds))

    def __reduce__(self) -> tuple[type[Duration], tuple[int, int, int]]:
        return (Duration, (self._months, self._days, self._nanoseconds))


_set_attr: Final = object.__setattr__


def duration_problem(months: int, days: int, nanoseconds: int) -> str:
    """Why (months, days, nanoseconds) is not a valid CQL duration, or '' if it is."""
    if months < _INT32_MIN or months > _INT32_MAX:
        return "months must fit in a signed 32-bit integer"
    if days < _INT32_MIN or days > _INT32_MAX:
        return "days must fit in a signed 32-bit integer"
    if nanoseconds < _INT64_MIN or nanoseconds > _INT64_MAX:
        return "nanoseconds must fit in a signed 64-bit integer"
    if (months < 0 or days < 0 or nanoseconds < 0) and (months > 0 or days > 0 or nanoseconds > 0):
        return "months, days and nanoseconds must all be >= 0 or all be <= 0"
    return ""

