"""Scalar codecs: timestamp, date, time and duration (cqlcodec.codecs.temporal)."""

from __future__ import annotations

import datetime

import numpy as np
import pytest
from scalar_checks import NANOS_PER_DAY, UTC, check, dec, decode_error, enc, encode_error, same

from cqlcodec import Date, Duration, Time
from cqlcodec.codecs.base import FLAG_TZ_AWARE
from cqlcodec.codecs.temporal import DaysObjectDateCodec
from cqlcodec.errors import DecodeError, EncodeTypeError, EncodeValueError
from cqlcodec.runtime.buffers import BytesWriter

# --- timestamp --------------------------------------------------------------------------------

@pytest.mark.parametrize(("value", "ms"), [
    (datetime.datetime(1970, 1, 1), 0),
    (datetime.datetime(2024, 5, 17, 12, 34, 56, 789000), 1715949296789),
    (datetime.datetime(1969, 12, 31, 23, 59, 59, 999000), -1),
    (datetime.datetime(2300, 1, 1, 0, 0, 0, 1000), 10413792000001),
    (datetime.datetime(1, 1, 1), -62135596800000),
    (datetime.datetime(9999, 12, 31, 23, 59, 59, 999000), 253402300799999),
    (datetime.datetime(1900, 3, 1, 0, 0, 0, 1000), -2203891199999),
    (datetime.datetime(2000, 2, 29, 23, 59, 59, 999000), 951868799999),
    (datetime.datetime(1600, 2, 29), -11670998400000),
])
def test_timestamp_vectors(value: datetime.datetime, ms: int) -> None:
    check("timestamp", value, ms.to_bytes(8, "big", signed=True).hex())
    aware = dec("timestamp", ms.to_bytes(8, "big", signed=True), FLAG_TZ_AWARE)
    assert same(aware, value.replace(tzinfo=UTC))
    assert enc("timestamp", ms) == ms.to_bytes(8, "big", signed=True)


def test_timestamp_sub_millisecond_truncates_toward_earlier() -> None:
    assert enc("timestamp", datetime.datetime(1970, 1, 1, 0, 0, 0, 999)) == (0).to_bytes(8, "big")
    assert enc("timestamp", datetime.datetime(1969, 12, 31, 23, 59, 59, 999999)) == \
        (-1).to_bytes(8, "big", signed=True)
    assert enc("timestamp", datetime.datetime(1969, 12, 31, 23, 59, 59, 998001)) == \
        (-2).to_bytes(8, "big", signed=True)
    aware = datetime.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)
    assert enc("timestamp", aware) == (-1).to_bytes(8, "big", signed=True)


def test_timestamp_aware_values_are_converted() -> None:
    plus2 = datetime.timezone(datetime.timedelta(hours=2))
    local = datetime.datetime(2024, 5, 17, 14, 34, 56, 789000, tzinfo=plus2)
    assert enc("timestamp", local) == (1715949296789).to_bytes(8, "big")
    odd = datetime.timezone(datetime.timedelta(hours=-5, minutes=-30, microseconds=-1500))
    value = datetime.datetime(2000, 1, 1, tzinfo=odd)
    expected = (value - datetime.datetime(1970, 1, 1, tzinfo=UTC)) // datetime.timedelta(milliseconds=1)
    assert enc("timestamp", value) == expected.to_bytes(8, "big", signed=True)
    # an aware value just before year 1 in UTC still encodes
    early = datetime.datetime(1, 1, 1, tzinfo=datetime.timezone(datetime.timedelta(hours=1)))
    assert enc("timestamp", early) == (-62135596800000 - 3600000).to_bytes(8, "big", signed=True)


def test_timestamp_from_date_is_midnight_utc() -> None:
    assert enc("timestamp", datetime.date(2024, 5, 17)) == (1715904000000).to_bytes(8, "big")
    assert enc("timestamp", datetime.date(1, 1, 1)) == (-62135596800000).to_bytes(8, "big", signed=True)


def test_timestamp_outside_datetime_range_decodes_to_int_ms() -> None:
    for ms in (-62135596800001, 253402300800000, 2**63 - 1, -(2**63)):
        data = ms.to_bytes(8, "big", signed=True)
        assert dec("timestamp", data) == ms
        assert type(dec("timestamp", data)) is int
        assert dec("timestamp", data, FLAG_TZ_AWARE) == ms
        assert enc("timestamp", ms) == data  # and it round-trips


def test_timestamp_decodes_naive_utc_by_default() -> None:
    got = dec("timestamp", (1715949296789).to_bytes(8, "big"))
    assert got.tzinfo is None
    got = dec("timestamp", (1715949296789).to_bytes(8, "big"), FLAG_TZ_AWARE)
    assert got.tzinfo is UTC


def test_timestamp_errors() -> None:
    for bad in (True, 1.5, 0.0, "2024-01-01", None, datetime.time(1, 2), np.float64(3)):
        encode_error("timestamp", bad, EncodeTypeError)
    encode_error("timestamp", 2**63, EncodeValueError)
    encode_error("timestamp", -(2**63) - 1, EncodeValueError)
    assert enc("timestamp", np.int64(5)) == (5).to_bytes(8, "big")


# --- date -------------------------------------------------------------------------------------

@pytest.mark.parametrize(("value", "hexed"), [
    (datetime.date(1970, 1, 1), "80000000"), (datetime.date(1969, 12, 31), "7fffffff"),
    (datetime.date(2024, 5, 17), "80004d94"), (datetime.date(1, 1, 1), "7ff506c6"),
    (datetime.date(9999, 12, 31), "802cc0a0"), (datetime.date(2000, 2, 29), "80002b08"),
])
def test_date_vectors(value: datetime.date, hexed: str) -> None:
    check("date", value, hexed)
    assert enc("date", Date.from_date(value)) == bytes.fromhex(hexed)


def test_date_outside_python_range() -> None:
    check("date", Date(-(2**31)), "00000000")
    check("date", Date(2**31 - 1), "ffffffff")
    check("date", Date(-719163), "7ff506c5")  # the day before 0001-01-01
    check("date", Date(2932897), "802cc0a1")  # the day after 9999-12-31
    assert str(dec("date", bytes.fromhex("00000000"))) == "-5877641-06-23"


def test_date_inputs_and_errors() -> None:
    assert enc("date", datetime.datetime(2024, 5, 17, 23, 59)) == bytes.fromhex("80004d94")
    aware = datetime.datetime(2024, 5, 17, 23, 59, tzinfo=datetime.timezone(datetime.timedelta(hours=-9)))
    assert enc("date", aware) == bytes.fromhex("80004d94")  # the calendar date; tz ignored
    assert enc("date", Date(0)) == bytes.fromhex("80000000")
    encode_error("date", 19860, EncodeTypeError, "Date")
    encode_error("date", 2**31, EncodeTypeError, "Date")
    for bad in (True, "2024-05-17", 1.0, None, datetime.time(1)):
        encode_error("date", bad, EncodeTypeError)


class _Days:
    """A value class as the drivers' Date is: the days in one slot, set by __init__."""

    __slots__ = ("days_from_epoch",)

    def __init__(self, days: int) -> None:
        self.days_from_epoch = days


@pytest.mark.parametrize(("days", "hexed"), [
    (0, "80000000"), (-1, "7fffffff"), (19860, "80004d94"), (-719163, "7ff506c5"),
    (2932897, "802cc0a1"), (-(2**31), "00000000"), (2**31 - 1, "ffffffff"),
])
def test_date_into_a_days_class(days: int, hexed: str) -> None:
    """DaysObjectDateCodec: every int32 day count becomes the object the class makes
    from it, without its __init__; it encodes such objects and what DateCodec encodes."""
    c = DaysObjectDateCodec(_Days, "days_from_epoch")
    data = bytes.fromhex(hexed)
    value = c.decode(b"\x00" + data + b"\x00", 1, 4)
    assert type(value) is _Days and value.days_from_epoch == days
    assert c.encode(value) == data == c.encode(_Days(days))
    w = BytesWriter()
    c.encode_into(w, value)
    assert w.getvalue() == data
    if -719162 <= days <= 2932896:
        assert c.encode(datetime.date(1970, 1, 1) + datetime.timedelta(days=days)) == data
    assert c.encode(Date(days)) == data
    assert c.decode(b"", 0, 0) is None


def test_date_into_a_days_class_errors() -> None:
    c = DaysObjectDateCodec(_Days, "days_from_epoch")
    for width in (3, 5):
        with pytest.raises(DecodeError, match="date") as info:
            c.decode(b"\x00" * 9, 2, width)
        assert info.value.offset == 2
    for days in (2**31, -(2**31) - 1):
        with pytest.raises(EncodeValueError, match="int32"):
            c.encode(_Days(days))
    with pytest.raises(EncodeValueError):
        c.encode(_Days(True))
    with pytest.raises(EncodeTypeError):
        c.encode(19860)


# --- time -------------------------------------------------------------------------------------

@pytest.mark.parametrize(("value", "nanos"), [
    (Time(0), 0), (Time(NANOS_PER_DAY - 1), NANOS_PER_DAY - 1),
    (Time(45_296_000_789_000), 45_296_000_789_000),
])
def test_time_vectors(value: Time, nanos: int) -> None:
    check("time", value, nanos.to_bytes(8, "big").hex())
    assert enc("time", nanos) == nanos.to_bytes(8, "big")


def test_time_inputs_and_errors() -> None:
    assert enc("time", datetime.time(12, 34, 56, 789)) == (45_296_000_789_000).to_bytes(8, "big")
    assert enc("time", datetime.time(23, 59, 59, 999999)) == (NANOS_PER_DAY - 1000).to_bytes(8, "big")
    assert enc("time", np.int64(5)) == (5).to_bytes(8, "big")
    assert type(dec("time", (5).to_bytes(8, "big"))) is Time
    encode_error("time", NANOS_PER_DAY, EncodeValueError, "nanoseconds since midnight")
    encode_error("time", -1, EncodeValueError)
    encode_error("time", 2**64, EncodeValueError)
    for bad in (True, 1.5, "12:00:00", None, datetime.timedelta(1), datetime.datetime(2020, 1, 1)):
        encode_error("time", bad, EncodeTypeError)
    decode_error("time", (NANOS_PER_DAY).to_bytes(8, "big"), "one day")
    decode_error("time", (-1).to_bytes(8, "big", signed=True), "one day")
    decode_error("time", (2**63 - 1).to_bytes(8, "big"), "one day")


# --- duration ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("value", "hexed"), [
    (Duration(1, 2, 3), "020406"), (Duration(-1, -2, -3), "010305"), (Duration(), "000000"),
    (Duration(0, 0, -(2**63)), "0000ffffffffffffffffff"),
    (Duration(0, 0, 2**63 - 1), "0000fffffffffffffffffe"),
    (Duration(2**31 - 1, 2**31 - 1, 0), "f0fffffffef0fffffffe00"),
    (Duration(-(2**31), -(2**31), 0), "f0fffffffff0ffffffff00"),
    (Duration(12, 0, 3_600_000_000_000), "1800" "fc068c61714000"),
    (Duration(0, 64, 0), "00808000"),
])
def test_duration_vectors(value: Duration, hexed: str) -> None:
    check("duration", value, hexed)


def test_duration_duck_typing_and_errors() -> None:
    class Like:
        def __init__(self, months: object, days: object, nanoseconds: object) -> None:
            self.months, self.days, self.nanoseconds = months, days, nanoseconds

    assert enc("duration", Like(1, 2, 3)) == bytes.fromhex("020406")
    assert enc("duration", Like(np.int32(1), 2, np.int64(3))) == bytes.fromhex("020406")
    encode_error("duration", Like(1, -2, 3), EncodeValueError, "all be")
    encode_error("duration", Like(2**31, 0, 0), EncodeValueError, "32-bit")
    encode_error("duration", Like(0, 0, 2**63), EncodeValueError, "64-bit")
    encode_error("duration", Like(1.5, 0, 0), EncodeTypeError)
    encode_error("duration", Like(True, 0, 0), EncodeTypeError)
    for bad in (datetime.timedelta(days=1), (1, 2, 3), 5, "1d", None):
        encode_error("duration", bad, EncodeTypeError)


@pytest.mark.parametrize(("hexed", "match"), [
    ("02", "vint"), ("0204", "vint"), ("02040600", "after the three vints"),
    ("c0", "vint"), ("0204ff00", "vint"),
    ("f1000000000000", "months"),  # zigzag 2**32 -> months 2**31
    ("00f100000000" + "00", "days"),
    ("020106", "mixed signs"), ("000102", "mixed signs"),
])
def test_duration_decode_errors(hexed: str, match: str) -> None:
    decode_error("duration", bytes.fromhex(hexed), match)


def test_duration_decode_accepts_non_minimal_vints() -> None:
    assert dec("duration", bytes.fromhex("8002" "04" "c00006")) == Duration(1, 2, 3)
    assert type(dec("duration", bytes.fromhex("020406"))) is Duration
