"""Codecs of the time types: timestamp, date, time and duration.

timestamp
    int64 milliseconds since 1970-01-01 UTC. Decodes to a naive UTC
    ``datetime`` (an aware one with ``timezone.utc`` when tz-aware decoding is
    asked for), computed with exact integer arithmetic, so values far from 1970
    keep their milliseconds. **A timestamp outside datetime's range (years 1 to
    9999) decodes losslessly to its int milliseconds** instead of failing.
    Encodes from ``datetime`` (naive = UTC, aware converted to UTC, sub-millisecond
    digits truncated toward the earlier millisecond), ``date`` (midnight UTC)
    and int milliseconds (``__index__`` objects too; not bool, not float).
date
    uint32 days with 2**31 = 1970-01-01. Decodes to ``datetime.date``, or to
    :class:`cqlcodec.Date` outside years 1 to 9999. Encodes from ``date``,
    ``datetime`` (its calendar date; tzinfo is ignored) and ``cqlcodec.Date``.
    Plain ints are rejected: the drivers read them as the raw *offset* value
    (0 = year -5877641), which is never what is meant; use ``Date(days)``.
time
    int64 nanoseconds since midnight in [0, 86400e9). Decodes to
    :class:`cqlcodec.Time` (a value outside the day raises DecodeError).
    Encodes from ``Time``, ``datetime.time`` (tzinfo ignored) and int
    nanoseconds in range.
duration
    three signed vints: months, days, nanoseconds. Decodes to
    :class:`cqlcodec.Duration`; anything but exactly three vints, months or
    days beyond int32, or components of mixed signs raise DecodeError.
    Encodes from ``Duration`` or any object with ``months``, ``days`` and
    ``nanoseconds``, validated the same way (EncodeValueError).
"""

from __future__ import annotations

from datetime import date, datetime, time, timedelta, timezone
from typing import Callable, Final, final

from mypy_extensions import i16, i64

from cqlcodec.codecs.base import Codec
from cqlcodec.codecs.coerce import coerce_int, is_bool_like
from cqlcodec.codecs.fixed import wrong_width
from cqlcodec.errors import EncodeValueError
from cqlcodec.runtime.buffers import (
    BytesWriter,
    read_i32_be,
    read_i64_be,
    scratch_writer,
    write_i16_be,
    write_i32_be,
    write_i64_be,
)
from cqlcodec.runtime.build import COMPILED
from cqlcodec.runtime.calendar import civil_from_days
from cqlcodec.runtime.wire import malformed, out_of_range, read_vint, write_uvint, wrong_type, zigzag
from cqlcodec.values import Date, Duration, Time, duration_problem

# Decoding a timestamp: compiled, computing the fields and building the datetime from
# them is the fastest exact method (~70 ns vs ~330 ns for epoch + timedelta); interpreted,

_UTC: Final = timezone.utc
_EPOCH: Final = datetime(1970, 1, 1)
_EPOCH_UTC: Final = datetime(1970, 1, 1, tzinfo=timezone.utc)
_ONE_MS: Final = timedelta(milliseconds=1)
_UNIX_EPOCH_ORDINAL: Final = 719163  # date(1970, 1, 1).toordinal()
MIN_DATETIME_MS: Final = -62135596800000  # datetime(1, 1, 1)
MAX_DATETIME_MS: Final = 253402300799999  # datetime(9999, 12, 31, 23, 59, 59, 999000)
MIN_DATE_DAYS: Final = 1 - _UNIX_EPOCH_ORDINAL  # date.min
MAX_DATE_DAYS: Final = 3652059 - _UNIX_EPOCH_ORDINAL  # date.max
_MS_PER_DAY: Final = 86400000
NANOS_PER_DAY: Final = 86400000000000
_INT32_MIN: Final = -2147483648
_INT32_MAX: Final = 2147483647
_DATE_OFFSET: Final = 2147483648  # a CQL date is days + 2**31 as uint32


def _datetime_state_constructor_works() -> bool:
    """True if ``datetime(state)`` (the pickle protocol's 10-byte form) builds datetimes."""
    try:
        made = _from_state(b"\x07\xe8\x05\x11\x0c\x22\x38\x0c\x0a\x08", _UTC)
    except Exception:
        return False
    return bool(made == datetime(2024, 5, 17, 12, 34, 56, 789000, _UTC) and made.tzinfo is _UTC)


# datetime's pickle form: datetime(b'YYMDhms' + 3-byte microseconds[, tzinfo]). CPython
# takes it without parsing arguments, which makes it the cheapest exact constructor
# reachable from compiled code; checked once at import, else the ordinary constructor.
_from_state: Final[Callable[..., datetime]] = datetime
_date_from_ordinal: Final[Callable[[int], date]] = date.fromordinal
_STATE_CONSTRUCTOR: Final = _datetime_state_constructor_works()


def datetime_from_ms(ms: i64, tz_aware: bool) -> object:
    """The UTC datetime of ``ms`` milliseconds since the epoch, or ``ms`` outside datetime's range."""
    if ms < MIN_DATETIME_MS or ms > MAX_DATETIME_MS:
        return ms
    if not COMPILED:
        whole: int = ms
        if tz_aware:
            return _EPOCH_UTC + timedelta(0, 0, 0, whole)
        return _EPOCH + timedelta(0, 0, 0, whole)
    days = ms // _MS_PER_DAY
    rem = ms - days * _MS_PER_DAY
    year, month, day = civil_from_days(days)
    hour = rem // 3600000
    rem -= hour * 3600000
    minute = rem // 60000
    rem -= minute * 60000
    second = rem // 1000
    micro = (rem - second * 1000) * 1000
    if _STATE_CONSTRUCTOR:
        # bytes 0-7: year (2), month, day, hour, minute, second, microseconds >> 16
        head: i64 = ((((((year * 256 + month) * 256 + day) * 256 + hour) * 256 + minute) * 256
                      + second) * 256 + micro // 65536)
        low: i64 = micro % 65536  # the last two bytes, as a signed 16-bit write
        w = scratch_writer()  # nothing may run between this and getvalue()
        write_i64_be(w, head)
        write_i16_be(w, i16(low - 65536 if low >= 32768 else low))
        if tz_aware:
            return _from_state(w.getvalue(), _UTC)
        return _from_state(w.getvalue())
    if tz_aware:
        return datetime(year, month, day, hour, minute, second, micro, _UTC)
    return datetime(year, month, day, hour, minute, second, micro)


def timestamp_ms(value: object) -> int:
    """Milliseconds since the epoch of a datetime, date or int value."""
    if isinstance(value, datetime):
        if value.tzinfo is not None and value.utcoffset() is not None:
            aware: int = (value - _EPOCH_UTC) // _ONE_MS
            return aware
        days: int = value.toordinal() - _UNIX_EPOCH_ORDINAL
        return (((days * 24 + value.hour) * 60 + value.minute) * 60 + value.second) * 1000 \
            + value.microsecond // 1000
    if isinstance(value, date):
        return (value.toordinal() - _UNIX_EPOCH_ORDINAL) * _MS_PER_DAY
    if isinstance(value, float):
        raise wrong_type("timestamp", value,
                         "a datetime, a date or int milliseconds (not float)")
    if isinstance(value, int) and not isinstance(value, bool):
        ms: int = value
        return ms
    if is_bool_like(value) or not hasattr(type(value), "__index__"):
        raise wrong_type("timestamp", value, "a datetime, a date or int milliseconds")
    return coerce_int(value, "timestamp")


def timestamp_overflow(value: object) -> EncodeValueError:
    """The error for int milliseconds outside int64."""
    return out_of_range("timestamp", value, "milliseconds must fit in 64 bits")


@final
class TimestampCodec(Codec):
    """timestamp: int64 ms since the epoch <-> UTC datetime."""

    def __init__(self, tz_aware: bool) -> None:
        super().__init__("timestamp", 8)
        self.tz_aware = tz_aware

    def encode(self, value: object) -> bytes:
        try:
            return timestamp_ms(value).to_bytes(8, "big", signed=True)
        except OverflowError:
            raise timestamp_overflow(value) from None

    def encode_into(self, w: BytesWriter, value: object) -> None:
        ms = timestamp_ms(value)
        try:
            write_i64_be(w, ms)
        except (OverflowError, ValueError):  # compiled: OverflowError; librt interpreted: ValueError
            raise timestamp_overflow(value) from None

    def decode(self, buf: bytes, pos: i64, n: i64) -> object:
        if n == 8:
            return datetime_from_ms(read_i64_be(buf, pos), self.tz_aware)
        if n == 0:
            return None
        raise wrong_width("timestamp", pos, 8, n)


def date_days(value: object) -> int:
    """Days since 1970-01-01 of a date, datetime or cqlcodec.Date value."""
    if isinstance(value, date):  # datetime too: its calendar date
        return value.toordinal() - _UNIX_EPOCH_ORDINAL
    if isinstance(value, Date):
        d: int = value._days  # the slot itself: cheaper than the property
        return d
    if isinstance(value, int) and not isinstance(value, bool):
        raise wrong_type("date", value,
                         "a datetime.date or a cqlcodec.Date; a plain int is ambiguous "
                         "(use cqlcodec.Date(days_since_1970))")
    raise wrong_type("date", value, "a datetime.date, a datetime or a cqlcodec.Date")


def date_from_days(days: i64) -> object:
    """``datetime.date`` for ``days`` since 1970-01-01, or ``cqlcodec.Date`` outside its range."""
    if MIN_DATE_DAYS <= days <= MAX_DATE_DAYS:
        return _date_from_ordinal(days + _UNIX_EPOCH_ORDINAL)
    return Date(days)


@final
class DateCodec(Codec):
    """date: uint32 days with 2**31 at 1970-01-01."""

    def __init__(self) -> None:
        super().__init__("date", -1)

    def encode(self, value: object) -> bytes:
        return (date_days(value) + _DATE_OFFSET).to_bytes(4, "big")

    def encode_into(self, w: BytesWriter, value: object) -> None:
        days = date_days(value)  # within int32: the offset form is its sign bit flipped
        write_i32_be(w, days + _DATE_OFFSET if days < 0 else days - _DATE_OFFSET)

    def decode(self, buf: bytes, pos: i64, n: i64) -> object:
        if n == 4:
            raw: int = read_i32_be(buf, pos)
            return date_from_days(raw + _DATE_OFFSET if raw < 0 else raw - _DATE_OFFSET)
        if n == 0:
            return None
        raise wrong_width("date", pos, 4, n)


_new_object: Final[Callable[[type], object]] = object.__new__


@final
class DaysObjectDateCodec(Codec):
    """date decoded into instances of a class that keeps the days since 1970-01-01 in
    one attribute (the drivers' ``cassandra.util.Date`` and its ``days_from_epoch``).

    Each value is ``object.__new__(cls)`` with that attribute set, without a call to the
    class's ``__init__``: the caller checks once that this makes the object its class
    makes from the days (``cls(days)``). Any int32 day count decodes, as the class takes
    any int. Encodes from such an instance, or from what :class:`DateCodec` encodes.
    """

    def __init__(self, cls: type, attr: str) -> None:
        super().__init__("date", -1)
        self.cls: Final = cls
        self.attr: Final = attr

    def _days(self, value: object) -> int:
        if isinstance(value, self.cls):
            d = getattr(value, self.attr)
            if isinstance(d, int) and not isinstance(d, bool) and _INT32_MIN <= d <= _INT32_MAX:
                return d
            raise out_of_range("date", value, "days since 1970-01-01 must fit in an int32")
        return date_days(value)

    def encode(self, value: object) -> bytes:
        return (self._days(value) + _DATE_OFFSET).to_bytes(4, "big")

    def encode_into(self, w: BytesWriter, value: object) -> None:
        days = self._days(value)
        write_i32_be(w, days + _DATE_OFFSET if days < 0 else days - _DATE_OFFSET)

    def decode(self, buf: bytes, pos: i64, n: i64) -> object:
        if n == 4:
            raw: int = read_i32_be(buf, pos)
            value = _new_object(self.cls)
            setattr(value, self.attr, raw + _DATE_OFFSET if raw < 0 else raw - _DATE_OFFSET)
            return value
        if n == 0:
            return None
        raise wrong_width("date", pos, 4, n)


def time_nanos(value: object) -> int:
    """Nanoseconds since midnight of a Time, datetime.time or int value."""
    if isinstance(value, Time):
        ns: int = value._ns  # the slot itself: cheaper than the property
        return ns
    if isinstance(value, time):
        return ((value.hour * 60 + value.minute) * 60 + value.second) * 1000000000 \
            + value.microsecond * 1000
    if isinstance(value, int) and not isinstance(value, bool):
        v: int = value
    elif is_bool_like(value) or not hasattr(type(value), "__index__"):
        raise wrong_type("time", value,
                         "a cqlcodec.Time, a datetime.time or int nanoseconds since midnight")
    else:
        v = coerce_int(value, "time")
    if v < 0 or v >= NANOS_PER_DAY:
        raise out_of_range("time", value,
                           f"nanoseconds since midnight must be in [0, {NANOS_PER_DAY})")
    return v


@final
class TimeCodec(Codec):
    """time: int64 nanoseconds since midnight <-> cqlcodec.Time."""

    def __init__(self) -> None:
        super().__init__("time", -1)

    def encode(self, value: object) -> bytes:
        return time_nanos(value).to_bytes(8, "big", signed=True)

    def encode_into(self, w: BytesWriter, value: object) -> None:
        write_i64_be(w, time_nanos(value))

    def decode(self, buf: bytes, pos: i64, n: i64) -> object:
        if n == 8:
            ns: i64 = read_i64_be(buf, pos)
            if ns < 0 or ns >= NANOS_PER_DAY:
                raise malformed("time", pos,
                                f"{ns} nanoseconds is outside [0, {NANOS_PER_DAY}) (one day)")
            # Time's only slot, set directly: the value is already validated
            t = object.__new__(Time)
            object.__setattr__(t, "_ns", ns)
            return t
        if n == 0:
            return None
        raise wrong_width("time", pos, 8, n)


def duration_parts(value: object) -> tuple[int, int, int]:
    """(months, days, nanoseconds) of a Duration-like value, validated."""
    if isinstance(value, Duration):  # the slots themselves: cheaper than the properties
        return value._months, value._days, value._nanoseconds
    try:
        months_obj: object = getattr(value, "months")
        days_obj: object = getattr(value, "days")
        nanos_obj: object = getattr(value, "nanoseconds")
    except AttributeError:
        raise wrong_type("duration", value,
                         "a cqlcodec.Duration (or an object with months, days and "
                         "nanoseconds)") from None
    months = coerce_int(months_obj, "duration")
    days = coerce_int(days_obj, "duration")
    nanos = coerce_int(nanos_obj, "duration")
    problem = duration_problem(months, days, nanos)
    if problem:
        raise out_of_range("duration", value, problem)
    return months, days, nanos


def write_duration(w: BytesWriter, value: object) -> None:
    """Append the three vints of a duration value."""
    months, days, nanos = duration_parts(value)
    write_uvint(w, zigzag(months))
    write_uvint(w, zigzag(days))
    write_uvint(w, zigzag(nanos))


@final
class DurationCodec(Codec):
    """duration: vint months, vint days, vint nanoseconds <-> cqlcodec.Duration."""

    def __init__(self) -> None:
        super().__init__("duration", -1)

    def encode(self, value: object) -> bytes:
        w = BytesWriter()
        write_duration(w, value)
        return w.getvalue()

    def encode_into(self, w: BytesWriter, value: object) -> None:
        write_duration(w, value)

    def decode(self, buf: bytes, pos: i64, n: i64) -> object:
        if n == 0:
            return None
        end = pos + n
        months, p = read_vint(buf, pos, end, "duration")
        days, p = read_vint(buf, p, end, "duration")
        nanos, p = read_vint(buf, p, end, "duration")
        if p != end:
            raise malformed("duration", p,
                            f"{end - p} bytes after the three vints of a duration")
        if months < _INT32_MIN or months > _INT32_MAX:
            # format(), not f-strings: mypyc 2.4.1 leaks ints >= 2**62 it str()s
            raise malformed("duration", pos, "months " + format(months, "d")
                            + " do not fit in 32 bits")
        if days < _INT32_MIN or days > _INT32_MAX:
            raise malformed("duration", pos, "days " + format(days, "d")
                            + " do not fit in 32 bits")
        if (months < 0 or days < 0 or nanos < 0) and (months > 0 or days > 0 or nanos > 0):
            raise malformed("duration", pos,
                            "mixed signs (months=" + format(months, "d") + ", days="
                            + format(days, "d") + ", nanoseconds=" + format(nanos, "d")
                            + "); Cassandra requires one sign")
        # Duration's slots, set directly: the components are already validated
        d = object.__new__(Duration)
        object.__setattr__(d, "_months", months)
        object.__setattr__(d, "_days", days)
        object.__setattr__(d, "_nanoseconds", nanos)
        return d
