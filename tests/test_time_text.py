"""The timestamp and date texts the CSV and JSON lines loaders read
(cqlcodec.driver.time_text): what CQL accepts and what pandas, polars, DuckDB, Spark,
cqlsh and dsbulk write, with and without a zone, checked against datetime and the
proleptic Gregorian calendar."""

from __future__ import annotations

import datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cqlcodec.driver.time_text import (
    UTC,
    TimeTextError,
    arrow_times,
    date_days,
    days_from_civil,
    time_zone_of,
    timestamp_ms,
)
from cqlcodec.runtime.calendar import civil_from_days

EPOCH = datetime.datetime(1970, 1, 1, tzinfo=UTC)
NEW_YEAR = 1_704_067_200_000  # 2024-01-01T00:00:00Z


def ms_of(dt: datetime.datetime) -> int:
    return (dt - EPOCH) // datetime.timedelta(milliseconds=1)


@pytest.mark.parametrize("text,expected", [
    ("2024-01-01T00:00:00.000Z", NEW_YEAR),                 # Spark, cqlcodec, dsbulk
    ("2024-01-01T00:00:00.000+00:00", NEW_YEAR),            # Spark with an offset
    ("2024-01-01T01:00:00.000+01:00", NEW_YEAR),
    ("2024-01-01 00:00:00", NEW_YEAR),                      # pandas.to_csv, CQL
    ("2024-01-01T00:00:00", NEW_YEAR),
    ("2024-01-01T00:00", NEW_YEAR),
    ("2024-01-01", NEW_YEAR),                               # CQL: midnight
    ("2024-01-01Z", NEW_YEAR),
    ("2024-01-01 00:00:00+00", NEW_YEAR),                   # DuckDB timestamptz
    ("2024-01-01 02:00:00+0200", NEW_YEAR),                 # cqlsh
    ("2023-12-31T19:00:00.000-05:00", NEW_YEAR),
    ("2024-01-01 00:00:00.123", NEW_YEAR + 123),
    ("2024-01-01 00:00:00.1", NEW_YEAR + 100),
    ("2024-01-01 00:00:00,5", NEW_YEAR + 500),
    ("2024-01-01T00:00:00.123456", NEW_YEAR + 123),          # polars: microseconds
    ("2024-01-01T00:00:00.123999999Z", NEW_YEAR + 123),      # nanoseconds: truncated
    ("1969-12-31T23:59:59.9999Z", -1),                       # truncated = earlier
    ("1704067200000", NEW_YEAR),                             # epoch milliseconds
    ("-1", -1),
    (" 2024-01-01 00:00:00 ", NEW_YEAR),
    ("0001-01-01T00:00:00.000Z", -62_135_596_800_000),
    ("-0001-01-01T00:00:00Z", -62_198_755_200_000),
    ("+10000-01-01T00:00:00Z", 253_402_300_800_000),
])
def test_timestamp_texts(text: str, expected: int) -> None:
    assert timestamp_ms(text) == expected


@pytest.mark.parametrize("text", [
    "", "2024-01-01T", "2024-1-1", "2024-13-01", "2023-02-29", "2024-01-01T24:00:00",
    "2024-01-01T00:60", "2024-01-01T00:00:60", "2024-01-01T00:00:00.1234567890",
    "2024-01-01T00:00:00+19:00", "01/01/2024", "2024-01-01T00:00:00 Europe/Paris", "NaT",
])
def test_texts_that_are_no_timestamp(text: str) -> None:
    with pytest.raises(TimeTextError):
        timestamp_ms(text)


def test_wall_times_are_read_in_the_time_zone() -> None:
    paris = time_zone_of("Europe/Paris")
    assert timestamp_ms("2024-01-01 01:00:00", paris) == NEW_YEAR
    assert timestamp_ms("2024-07-01 02:00:00", paris) == ms_of(
        datetime.datetime(2024, 7, 1, tzinfo=UTC))                      # summer time
    assert timestamp_ms("2024-01-01T00:00:00Z", paris) == NEW_YEAR       # a zone wins
    assert timestamp_ms("1704067200000", paris) == NEW_YEAR              # an instant
    # clocks go back: the earlier of the two instants; forward: the gap is skipped
    assert timestamp_ms("2024-10-27 02:30:00", paris) == ms_of(
        datetime.datetime(2024, 10, 27, 0, 30, tzinfo=UTC))
    assert timestamp_ms("2024-03-31 02:30:00", paris) == ms_of(
        datetime.datetime(2024, 3, 31, 1, 30, tzinfo=UTC))
    assert timestamp_ms("2024-01-01 05:30:00", time_zone_of("+05:30")) == NEW_YEAR
    assert timestamp_ms("+12024-01-01 00:00:00", time_zone_of("-01:00")) == \
        timestamp_ms("+12024-01-01T01:00:00Z")
    with pytest.raises(TimeTextError, match="outside 1-9999"):
        timestamp_ms("+12024-01-01 00:00:00", paris)


@pytest.mark.parametrize("name", ["Mars/Olympus", "+25:00", ""])
def test_unknown_zones_are_refused(name: str) -> None:
    with pytest.raises(ValueError):
        time_zone_of(name)


def test_zone_names() -> None:
    assert time_zone_of(None) is UTC and time_zone_of("utc") is UTC and time_zone_of("Z") is UTC
    assert time_zone_of("-0530").utcoffset(None) == -datetime.timedelta(hours=5, minutes=30)


@pytest.mark.parametrize("text,expected", [
    ("2024-01-01", datetime.date(2024, 1, 1)),
    ("2024-01-01T00:00:00.000", datetime.date(2024, 1, 1)),   # pandas.to_json(iso)
    ("2024-01-01 00:00:00", datetime.date(2024, 1, 1)),       # pandas.to_csv
    ("2024-01-01T00:00:00.000Z", datetime.date(2024, 1, 1)),  # Spark, as a timestamp
    ("2024-01-01T00:00:00.000000000", datetime.date(2024, 1, 1)),
    ("2024-02-29", datetime.date(2024, 2, 29)),
    ("0001-01-01", datetime.date(1, 1, 1)),
    ("9999-12-31", datetime.date(9999, 12, 31)),
])
def test_date_texts(text: str, expected: datetime.date) -> None:
    assert date_days(text) == expected.toordinal() - datetime.date(1970, 1, 1).toordinal()


@pytest.mark.parametrize("text", ["2024-01-01T00:00:01", "2024-01-01 12:00", "2024-01-01T00:00:00.001",
                                  "2024-01-01T00:00:00.0000001"])
def test_a_date_at_another_time_of_day_is_refused(text: str) -> None:
    with pytest.raises(TimeTextError, match="not at midnight"):
        date_days(text)


@given(st.integers(-(2**31), 2**31 - 1))
def test_days_from_civil_inverts_civil_from_days(days: int) -> None:
    assert days_from_civil(*civil_from_days(days)) == days


@given(st.datetimes(timezones=st.just(UTC)), st.sampled_from(["T", " "]),
       st.sampled_from(["Z", "+00:00", "", "+0000"]))
def test_iso_texts_of_datetimes(dt: datetime.datetime, sep: str, zone: str) -> None:
    text = dt.replace(tzinfo=None).isoformat(sep) + zone
    assert timestamp_ms(text) == ms_of(dt.replace(microsecond=dt.microsecond // 1000 * 1000))


@given(st.datetimes(min_value=datetime.datetime(1900, 1, 1),
                    max_value=datetime.datetime(2100, 1, 1)),
       st.sampled_from(["America/New_York", "Asia/Kolkata", "Australia/Lord_Howe"]))
def test_wall_times_agree_with_zoneinfo(dt: datetime.datetime, name: str) -> None:
    zone = time_zone_of(name)
    dt = dt.replace(microsecond=0)
    assert timestamp_ms(dt.isoformat(" "), zone) == ms_of(dt.replace(tzinfo=zone))


def test_arrow_takes_a_column_only_when_it_reads_it_as_the_parser_does() -> None:
    pa = pytest.importorskip("pyarrow")
    zoned = pa.array(["2024-01-01T00:00:00.000Z", None, "2024-01-01T01:00:00+01:00"])
    got = arrow_times(pa, zoned, "timestamp", UTC)
    assert got is not None and got.cast(pa.int64()).to_pylist() == [NEW_YEAR * 1000, None,
                                                                   NEW_YEAR * 1000]
    wall = pa.array(["2024-01-01 00:00:00"])
    assert arrow_times(pa, wall, "timestamp", UTC).cast(pa.int64()).to_pylist() == [NEW_YEAR * 1000]
    assert arrow_times(pa, wall, "timestamp", time_zone_of("Europe/Paris")) is None
    for text in ("1704067200000", "2024-01-01T00:00:00.123456789Z", "2024-01-01 00:00:00+00 x"):
        assert arrow_times(pa, pa.array([text]), "timestamp", UTC) is None
    assert arrow_times(pa, pa.array(["2024-01-01"]), "date", UTC).to_pylist() == [
        datetime.date(2024, 1, 1)]
    assert arrow_times(pa, pa.array(["2024-01-01 00:00:00"]), "date", UTC) is None


# --------------------------------------------------------------------------- the readers

def _chunks(path: str, kind: str, tolerant: bool = False, zone: str = "UTC") -> list[object]:
    pytest.importorskip("pyarrow")
    from cqlcodec import parse_type
    from cqlcodec.driver.sources import SourcePart, open_source

    cql = {"ts": "timestamp", "d": "date", "l": "list<timestamp>"}
    return list(open_source(SourcePart(path, kind), 100, cql,
                            {n: parse_type(t) for n, t in cql.items()}, tolerant=tolerant,
                            time_zone=time_zone_of(zone)))


def _ms(values: object) -> list[int | None]:
    out: list[int | None] = []
    for v in values:  # type: ignore[attr-defined]
        v = v.as_py() if hasattr(v, "as_py") else v
        if isinstance(v, datetime.datetime):
            v = ms_of(v if v.tzinfo else v.replace(tzinfo=UTC))
        out.append(v)
    return out


def _days(values: object) -> list[int | None]:
    from cqlcodec.values import Date

    out: list[int | None] = []
    for v in values:  # type: ignore[attr-defined]
        v = v.as_py() if hasattr(v, "as_py") else v
        out.append(v.days if isinstance(v, Date) else None if v is None
                   else v.toordinal() - datetime.date(1970, 1, 1).toordinal())
    return out


@pytest.mark.parametrize("rows,zone,ts,d", [
    (["2024-01-01 00:00:00,2024-01-01", "2024-01-01 00:00:01.5,2024-01-02"], "UTC",
     [NEW_YEAR, NEW_YEAR + 1500], [19723, 19724]),                       # pandas, Arrow's path
    (["2024-01-01T00:00:00.000Z,2024-01-01T00:00:00.000", "1704067200000,"], "UTC",
     [NEW_YEAR, NEW_YEAR], [19723, None]),                               # mixed forms
    (["2024-01-01 01:00:00,2024-01-01 00:00:00"], "Europe/Paris", [NEW_YEAR], [19723]),
])
def test_csv_columns(tmp_path: object, rows: list[str], zone: str, ts: list[int],
                     d: list[int | None]) -> None:
    path = f"{tmp_path}/t.csv"
    with open(path, "w") as f:
        f.write("\n".join(["ts,d", *rows]) + "\n")
    for tolerant in (False, True):
        (chunk,) = _chunks(path, "csv", tolerant, zone)
        data = chunk.data  # type: ignore[attr-defined]
        if not isinstance(data, dict):
            data = {n: data.column(n) for n in data.schema.names}
        assert _ms(data["ts"]) == ts and _days(data["d"]) == d


def test_a_csv_date_that_is_no_midnight_names_column_and_row(tmp_path: object) -> None:
    from cqlcodec.driver.sources import LoadError

    path = f"{tmp_path}/t.csv"
    with open(path, "w") as f:
        f.write("ts,d\n2024-01-01,2024-01-01\n2024-01-01,2024-01-01 10:00:00\n")
    with pytest.raises(LoadError, match='row 1, column "d".*not at midnight') as info:
        _chunks(path, "csv")
    assert info.value.column == "d" and info.value.row == 1
    (chunk,) = _chunks(path, "csv", tolerant=True)
    assert [u.line for u in chunk.unreadable] == [3]  # type: ignore[attr-defined]
    assert "not at midnight" in chunk.unreadable[0].reason  # type: ignore[attr-defined]


def test_jsonl_values(tmp_path: object) -> None:
    from cqlcodec.driver.sources import LoadError

    path = f"{tmp_path}/t.jsonl"
    with open(path, "w") as f:
        f.write('{"ts": "2024-01-01T00:00:00.000", "d": "2024-01-01T00:00:00.000", '
                '"l": ["2024-01-01 00:00:00Z", 5]}\n'
                '{"ts": 1704067200000, "d": "2024-01-01", "l": null}\n'
                '{"ts": "2024-01-01T01:00:00.000+01:00", "d": 19723}\n')
    (chunk,) = _chunks(path, "jsonl")
    data = chunk.data  # type: ignore[attr-defined]
    assert data["ts"] == [NEW_YEAR] * 3 and _days(data["d"]) == [19723] * 3
    assert data["l"] == [[NEW_YEAR, 5], None, None]
    with open(path, "a") as f:
        f.write('{"ts": "2024-01-01", "d": "2024-01-01T00:00:00.001"}\n')
    with pytest.raises(LoadError, match='row 3, column "d".*not at midnight'):
        _chunks(path, "jsonl")
    (chunk,) = _chunks(path, "jsonl", tolerant=True)
    assert len(chunk.data["ts"]) == 3  # type: ignore[attr-defined]
    assert [u.line for u in chunk.unreadable] == [4]  # type: ignore[attr-defined]
