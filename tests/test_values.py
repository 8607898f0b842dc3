"""cqlcodec.Date, cqlcodec.Time and cqlcodec.Duration."""

from __future__ import annotations

import copy
import datetime
import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import cqlcodec
from cqlcodec import Date, Duration, Time
from cqlcodec.errors import CodecError

NANOS_PER_DAY = 86_400_000_000_000


# --- Date -------------------------------------------------------------------------------------

def test_date_days_and_conversion() -> None:
    assert Date(0).days == 0
    assert Date(0).date() == datetime.date(1970, 1, 1)
    assert Date(-1).date() == datetime.date(1969, 12, 31)
    assert Date(19860).date() == datetime.date(2024, 5, 17)
    assert Date.from_date(datetime.date(2024, 5, 17)) == Date(19860)
    assert Date.from_date(datetime.datetime(2024, 5, 17, 23, 59)) == Date(19860)
    assert Date.from_date(datetime.date.min).date() == datetime.date.min
    assert Date.from_date(datetime.date.max).date() == datetime.date.max


def test_date_outside_python_range() -> None:
    low = Date(-(2**31))
    high = Date(2**31 - 1)
    for d in (low, high, Date(datetime.date.min.toordinal() - 719163 - 1),
              Date(datetime.date.max.toordinal() - 719163 + 1)):
        with pytest.raises(ValueError, match="outside the range of datetime.date"):
            d.date()
    assert str(low) == "-5877641-06-23"
    assert str(high) == "+5881580-07-11"
    assert str(Date(datetime.date.max.toordinal() - 719163 + 1)) == "+10000-01-01"
    assert str(Date(datetime.date.min.toordinal() - 719163 - 1)) == "0000-12-31"
    assert str(Date(datetime.date.min.toordinal() - 719163 - 367)) == "-0001-12-31"


def test_date_str_is_iso() -> None:
    assert str(Date(0)) == "1970-01-01"
    assert str(Date(-719162)) == "0001-01-01"
    assert repr(Date(5)) == "Date(5)"


@pytest.mark.parametrize("bad", [2**31, -(2**31) - 1])
def test_date_range(bad: int) -> None:
    with pytest.raises(ValueError, match="CQL date range") as info:
        Date(bad)
    assert isinstance(info.value, CodecError)


@pytest.mark.parametrize("bad", [True, 1.0, "1", None])
def test_date_wrong_type(bad: object) -> None:
    with pytest.raises(TypeError):
        Date(bad)  # type: ignore[arg-type]


def test_date_accepts_index_objects() -> None:
    assert Date(np.int64(3)) == Date(3)
    assert type(Date(np.int64(3)).days) is int


def test_date_order_hash_pickle() -> None:
    assert Date(1) < Date(2) <= Date(2) < Date(3)
    assert Date(3) > Date(2) >= Date(2)
    assert Date(1) != Date(2)
    assert Date(1) != 1
    assert len({Date(1), Date(1), Date(2)}) == 2
    d = Date(-(2**31))
    assert pickle.loads(pickle.dumps(d)) == d
    assert copy.deepcopy(d) == d
    with pytest.raises(TypeError):
        _ = Date(1) < 2  # type: ignore[operator]


@given(st.dates())
def test_date_from_date_round_trip(value: datetime.date) -> None:
    d = Date.from_date(value)
    assert d.date() == value
    assert str(d) == value.isoformat()


@given(st.integers(min_value=-(2**31), max_value=2**31 - 1))
def test_date_str_matches_calendar(days: int) -> None:
    text = str(Date(days))
    sign = text[0] if text[0] in "+-" else ""
    year_s, month_s, day_s = text[len(sign):].split("-")
    year = int(year_s) * (-1 if sign == "-" else 1)
    # shift by whole 400-year cycles (146097 days) into datetime's range and compare
    cycles = 0
    if not 1 <= year <= 9999:
        cycles = (year - 2000) // 400
    shifted = datetime.date(year - 400 * cycles, int(month_s), int(day_s))
    assert shifted.toordinal() - 719163 + 146097 * cycles == days


# --- Time -------------------------------------------------------------------------------------

def test_time_fields_and_str() -> None:
    t = Time(45_296_789_000_123)
    assert t.nanoseconds == 45_296_789_000_123
    assert (t.hour, t.minute, t.second, t.nanosecond) == (12, 34, 56, 789_000_123)
    assert str(t) == "12:34:56.789000123"
    assert t.time() == datetime.time(12, 34, 56, 789000)
    assert str(Time(0)) == "00:00:00.000000000"
    assert str(Time(NANOS_PER_DAY - 1)) == "23:59:59.999999999"
    assert eval(repr(t), {"Time": Time}) == t


def test_time_from_time() -> None:
    assert Time.from_time(datetime.time(12, 34, 56, 789)) == Time(45_296_000_789_000)
    aware = datetime.time(1, 0, tzinfo=datetime.timezone(datetime.timedelta(hours=5)))
    assert Time.from_time(aware) == Time(3_600_000_000_000)  # tzinfo ignored
    with pytest.raises(TypeError):
        Time.from_time(datetime.datetime(2020, 1, 1))  # type: ignore[arg-type]


@pytest.mark.parametrize(("text", "nanos"), [
    ("00:00:00", 0),
    ("12:34:56", 45_296_000_000_000),
    ("12:34:56.7", 45_296_700_000_000),
    ("12:34:56.123456789", 45_296_123_456_789),
    ("23:59:59.999999999", NANOS_PER_DAY - 1),
])
def test_time_parse(text: str, nanos: int) -> None:
    assert Time.parse(text) == Time(nanos)


@pytest.mark.parametrize("text", ["24:00:00", "12:60:00", "12:00:60", "1:00:00", "12:00",
                                  "12:00:00.", "12:00:00.1234567890", " 12:00:00",
                                  "12:00:00 ", "１２:00:00", ""])
def test_time_parse_rejects(text: str) -> None:
    with pytest.raises(ValueError) as info:
        Time.parse(text)
    assert isinstance(info.value, CodecError)


@pytest.mark.parametrize("bad", [-1, NANOS_PER_DAY, 2**70])
def test_time_range(bad: int) -> None:
    with pytest.raises(ValueError, match="one day"):
        Time(bad)


@pytest.mark.parametrize("bad", [True, 1.5, "12:00:00", None])
def test_time_wrong_type(bad: object) -> None:
    with pytest.raises(TypeError):
        Time(bad)  # type: ignore[arg-type]


def test_time_order_hash_pickle() -> None:
    assert Time(1) < Time(2) <= Time(2)
    assert Time(2) > Time(1)
    assert Time(5) == Time(np.int64(5))
    assert len({Time(1), Time(1)}) == 1
    assert Time(7) != 7
    t = Time(NANOS_PER_DAY - 1)
    assert pickle.loads(pickle.dumps(t)) == t


@given(st.times())
def test_time_round_trip(value: datetime.time) -> None:
    assert Time.from_time(value).time() == value
    assert Time.parse(str(Time.from_time(value))) == Time.from_time(value)


@given(st.integers(min_value=0, max_value=NANOS_PER_DAY - 1))
def test_time_str_parse_round_trip(nanos: int) -> None:
    assert Time.parse(str(Time(nanos))).nanoseconds == nanos


# --- Duration ---------------------------------------------------------------------------------

def test_duration_fields() -> None:
    d = Duration(1, 2, 3)
    assert (d.months, d.days, d.nanoseconds) == (1, 2, 3)
    assert Duration() == Duration(0, 0, 0)
    assert Duration(days=5) == Duration(0, 5, 0)
    assert repr(d) == "Duration(months=1, days=2, nanoseconds=3)"
    assert eval(repr(d), {"Duration": Duration}) == d
    assert Duration(-1, -2, -3).months == -1
    assert Duration(0, 0, -(2**63)).nanoseconds == -(2**63)


def test_duration_is_immutable() -> None:
    d = Duration(1, 2, 3)
    with pytest.raises(AttributeError):
        d.months = 5  # type: ignore[misc]
    with pytest.raises(AttributeError):
        d._months = 5
    with pytest.raises(AttributeError):
        del d._days
    assert d == Duration(1, 2, 3)


@pytest.mark.parametrize(("months", "days", "nanos", "why"), [
    (2**31, 0, 0, "months"),
    (-(2**31) - 1, 0, 0, "months"),
    (0, 2**31, 0, "days"),
    (0, 0, 2**63, "nanoseconds"),
    (1, -1, 0, "all be"),
    (0, 1, -1, "all be"),
    (-1, 0, 1, "all be"),
])
def test_duration_validation(months: int, days: int, nanos: int, why: str) -> None:
    with pytest.raises(ValueError, match=why) as info:
        Duration(months, days, nanos)
    assert isinstance(info.value, cqlcodec.EncodeValueError)


@pytest.mark.parametrize("bad", [True, 1.0, "1", None])
def test_duration_wrong_types(bad: object) -> None:
    with pytest.raises(TypeError):
        Duration(bad)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Duration(0, 0, bad)  # type: ignore[arg-type]


def test_duration_eq_hash_pickle() -> None:
    assert Duration(1, 2, 3) == Duration(1, 2, 3)
    assert Duration(1, 2, 3) != Duration(1, 2, 4)
    assert Duration(0, 30, 0) != Duration(1, 0, 0)
    assert Duration(1, 2, 3) != (1, 2, 3)
    assert len({Duration(1, 2, 3), Duration(1, 2, 3), Duration(3, 2, 1)}) == 2
    d = Duration(-(2**31), -(2**31), -(2**63))
    assert pickle.loads(pickle.dumps(d)) == d
    assert copy.copy(d) == d
    with pytest.raises(TypeError):
        _ = Duration(1) < Duration(2)  # type: ignore[operator]


def test_values_are_exported() -> None:
    assert cqlcodec.Date is Date and cqlcodec.Time is Time and cqlcodec.Duration is Duration
    assert {"Date", "Time", "Duration"} <= set(cqlcodec.__all__)
