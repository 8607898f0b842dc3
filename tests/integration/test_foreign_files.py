"""Files written by other tools load into a table exactly: CSV, JSON lines and Parquet
written here by pandas, polars and DuckDB (with their default forms of timestamps,
dates, decimals, lists, booleans and categoricals), and hand-written samples of
Spark's default CSV and JSON forms (no Spark here). Every cell read back is compared
with the values the files were made from."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from cassandra.cluster import Session

import cqlcodec.driver as cd

from .conftest import keyspace_session

pd = pytest.importorskip("pandas")
pl = pytest.importorskip("polars")
duckdb = pytest.importorskip("duckdb")
pytest.importorskip("pyarrow")

KS = "cqlcodec_foreign"
COLUMNS = ("id int PRIMARY KEY, name text, score float, ts timestamp, d date, amount decimal, "
           "tags list<int>, flag boolean, cat text")

# (id, name, score, ts (UTC), d, amount, tags, flag, cat)
ROWS: list[tuple[Any, ...]] = [
    (1, "plain", 1.5, dt.datetime(2024, 1, 1), dt.date(2024, 1, 1), Decimal("12.50"), [1, 2],
     True, "x"),
    (2, 'comma, "quote"', -0.25, dt.datetime(2024, 5, 17, 10, 30, 15, 123000),
     dt.date(1999, 12, 31), Decimal("-0.01"), [], False, "y"),
    (3, "été ✓", 3.0, dt.datetime(1969, 12, 31, 23, 59, 59, 999000), dt.date(1970, 1, 1),
     Decimal("1000"), [3], True, "x"),
    (4, "sentinels", 0.0, dt.datetime(1, 1, 1), dt.date(9999, 12, 31), Decimal("0.001"), [-7],
     False, "z"),
]


@pytest.fixture(scope="module")
def session() -> Iterator[Session]:
    yield from keyspace_session(KS)


def fresh(session: Session, name: str) -> str:
    session.execute(f"DROP TABLE IF EXISTS {KS}.{name}")
    session.execute(f"CREATE TABLE {KS}.{name} ({COLUMNS})")
    return f"{KS}.{name}"


def read_back(session: Session, table: str) -> list[tuple[Any, ...]]:
    """Every row, as comparable plain values (timestamps naive UTC, dates as ISO text)."""
    out = []
    for r in session.execute(f"SELECT id, name, score, ts, d, amount, tags, flag, cat FROM {table}"):
        ts = r.ts.replace(tzinfo=None) if r.ts is not None else None
        out.append((r.id, r.name, r.score, ts, str(r.d), r.amount, r.tags, r.flag, r.cat))
    return sorted(out)


def expected(without: tuple[str, ...] = ()) -> list[tuple[Any, ...]]:
    names = ["id", "name", "score", "ts", "d", "amount", "tags", "flag", "cat"]
    out = []
    for row in ROWS:
        values = dict(zip(names, row))
        values["d"] = values["d"].isoformat()
        values["tags"] = values["tags"] or None  # an empty list is no cell in Cassandra
        for name in without:
            values[name] = "None" if name == "d" else None
        out.append(tuple(values.values()))
    return sorted(out)


def same(got: list[tuple[Any, ...]], want: list[tuple[Any, ...]]) -> None:
    """Equal row by row; decimals by value (JSON writers give 12.5 for 12.50)."""
    assert [r[0] for r in got] == [r[0] for r in want]
    for g, w in zip(got, want):
        assert g == w, (g, w)


def pandas_frame() -> Any:
    frame = pd.DataFrame([list(r) for r in ROWS],
                         columns=["id", "name", "score", "ts", "d", "amount", "tags", "flag", "cat"])
    frame["ts"] = pd.array([r[3] for r in ROWS], dtype="datetime64[ms]")
    frame["d"] = pd.array([dt.datetime.combine(r[4], dt.time()) for r in ROWS],
                          dtype="datetime64[s]")  # pandas holds dates in datetime columns
    frame["cat"] = pd.Categorical(frame["cat"])
    return frame


def polars_frame() -> Any:
    return pl.DataFrame({
        "id": [r[0] for r in ROWS], "name": [r[1] for r in ROWS],
        "score": pl.Series([r[2] for r in ROWS], dtype=pl.Float32),
        "ts": pl.Series([r[3] for r in ROWS], dtype=pl.Datetime("ms")),
        "d": [r[4] for r in ROWS],
        "amount": pl.Series([r[5] for r in ROWS], dtype=pl.Decimal(12, 3)),
        "tags": [r[6] for r in ROWS], "flag": [r[7] for r in ROWS],
        "cat": pl.Series([r[8] for r in ROWS], dtype=pl.Categorical)})


def duckdb_relation(con: Any) -> None:
    con.execute("CREATE TABLE t (id INTEGER, name VARCHAR, score FLOAT, ts TIMESTAMP, d DATE, "
                "amount DECIMAL(12, 3), tags INTEGER[], flag BOOLEAN, cat VARCHAR)")
    con.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", [list(r) for r in ROWS])


def write_pandas(path: Path, fmt: str) -> Path:
    frame = pandas_frame()
    if fmt == "csv":
        frame.to_csv(path.with_suffix(".csv"), index=False)
    elif fmt == "jsonl":
        frame.to_json(path.with_suffix(".jsonl"), orient="records", lines=True, date_format="iso")
    else:
        frame.to_parquet(path.with_suffix(".parquet"), index=False)
    return path.with_suffix("." + fmt)


def write_polars(path: Path, fmt: str) -> Path:
    frame = polars_frame()
    if fmt == "csv":
        frame.drop("tags").write_csv(path.with_suffix(".csv"))  # CSV has no nested columns in polars
    elif fmt == "jsonl":
        frame.write_ndjson(path.with_suffix(".jsonl"))
    else:
        frame.write_parquet(path.with_suffix(".parquet"))
    return path.with_suffix("." + fmt)


def write_duckdb(path: Path, fmt: str) -> Path:
    con = duckdb.connect()
    duckdb_relation(con)
    target = path.with_suffix("." + fmt)
    option = {"csv": "HEADER", "jsonl": "FORMAT json", "parquet": "FORMAT parquet"}[fmt]
    con.execute(f"COPY t TO '{target}' ({option})")
    con.close()
    return target


WRITERS: dict[str, Callable[[Path, str], Path]] = {
    "pandas": write_pandas, "polars": write_polars, "duckdb": write_duckdb}


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_files_of_other_writers_load_exactly(session: Session, tmp_path: Path, writer: str,
                                              fmt: str) -> None:
    path = WRITERS[writer](tmp_path / "data", fmt)
    table = fresh(session, f"{writer}_{fmt}")
    result = cd.load_table(session, table, str(path))
    assert result.written == len(ROWS)
    without = ("tags",) if (writer, fmt) == ("polars", "csv") else ()
    same(read_back(session, table), expected(without))


def test_pandas_frames_load_exactly(session: Session) -> None:
    table = fresh(session, "pandas_frame")
    cd.load_table(session, table, pandas_frame())
    same(read_back(session, table), expected())


@pytest.mark.filterwarnings("ignore:.*'epoch' date format")
def test_pandas_default_json_dates_are_refused_not_misread(session: Session,
                                                           tmp_path: Path) -> None:
    """``to_json``'s default ``date_format="epoch"`` writes timestamps and dates as
    milliseconds: timestamps load; a date column cannot tell milliseconds from its own
    day counts, so the load stops at the first such date, naming it (the docs list the
    dates near 1970 whose milliseconds are day counts in range too)."""
    path = tmp_path / "epoch.jsonl"
    pandas_frame().drop(columns="d").to_json(path, orient="records", lines=True,
                                             date_format="epoch")
    table = fresh(session, "pandas_epoch")
    cd.load_table(session, table, str(path))
    same(read_back(session, table), expected(("d",)))
    pandas_frame()[["id", "d"]].to_json(path, orient="records", lines=True,
                                        date_format="epoch")
    with pytest.raises(cd.LoadError, match='column "d"') as info:
        cd.load_table(session, fresh(session, "pandas_epoch_d"), str(path))
    assert info.value.row == 0


# Spark's default forms (written by hand: no Spark here). CSV: header on (the loader needs
# one), timestampFormat yyyy-MM-dd'T'HH:mm:ss.SSSXXX (Z for UTC, +01:00 in a session at
# that offset), dateFormat yyyy-MM-dd, true/false, no nested columns. JSON: the same
# texts, decimals as numbers, null fields left out.
SPARK_CSV = """id,name,score,ts,d,amount,flag,cat
1,plain,1.5,2024-01-01T00:00:00.000Z,2024-01-01,12.50,true,x
2,"comma, quote",-0.25,2024-05-17T11:30:15.123+01:00,1999-12-31,-0.01,false,y
3,été ✓,3.0,1969-12-31T23:59:59.999Z,1970-01-01,1000,true,x
4,sentinels,0.0,0001-01-01T00:00:00.000Z,9999-12-31,0.001,false,z
"""
SPARK_JSON = "".join(line + "\n" for line in [
    '{"id":1,"name":"plain","score":1.5,"ts":"2024-01-01T00:00:00.000Z","d":"2024-01-01",'
    '"amount":12.50,"tags":[1,2],"flag":true,"cat":"x"}',
    '{"id":2,"name":"comma, \\"quote\\"","score":-0.25,"ts":"2024-05-17T11:30:15.123+01:00",'
    '"d":"1999-12-31","amount":-0.01,"flag":false,"cat":"y"}',
    '{"id":3,"name":"été ✓","score":3.0,"ts":"1969-12-31T23:59:59.999Z","d":"1970-01-01",'
    '"amount":1000,"tags":[3],"flag":true,"cat":"x"}',
    '{"id":4,"name":"sentinels","score":0.0,"ts":"0001-01-01T00:00:00.000Z","d":"9999-12-31",'
    '"amount":0.001,"tags":[-7],"flag":false,"cat":"z"}'])


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_spark_default_forms_load_exactly(session: Session, tmp_path: Path, fmt: str) -> None:
    path = tmp_path / f"part-00000.{fmt}"
    path.write_text(SPARK_CSV if fmt == "csv" else SPARK_JSON, encoding="utf-8")
    table = fresh(session, f"spark_{fmt}")
    cd.load_table(session, table, str(path))
    want = expected(("tags",) if fmt == "csv" else ())
    if fmt == "csv":
        want[1] = (2, "comma, quote", *want[1][2:])
    same(read_back(session, table), want)


@pytest.mark.parametrize("zone,shift", [("UTC", 0), ("Europe/Paris", -1), ("+05:30", -5.5)])
def test_time_zone_applies_to_wall_times_only(session: Session, tmp_path: Path, zone: str,
                                              shift: float) -> None:
    path = tmp_path / "walls.csv"
    path.write_text("id,ts,d\n1,2024-01-01 00:00:00,2024-01-01 00:00:00\n"
                    "2,2024-01-01T00:00:00Z,2024-01-01\n3,1704067200000,2024-01-01T00:00:00.000\n")
    table = fresh(session, "walls")
    cd.load_table(session, table, str(path), time_zone=zone)
    got = {r.id: (r.ts.replace(tzinfo=None), str(r.d))
           for r in session.execute(f"SELECT id, ts, d FROM {table}")}
    new_year = dt.datetime(2024, 1, 1)
    assert got == {1: (new_year + dt.timedelta(hours=shift), "2024-01-01"),
                   2: (new_year, "2024-01-01"), 3: (new_year, "2024-01-01")}


def test_a_date_at_another_time_of_day_names_column_and_row(session: Session,
                                                            tmp_path: Path) -> None:
    path = tmp_path / "noon.csv"
    path.write_text("id,d\n1,2024-01-01 00:00:00\n2,2024-01-01 12:00:00\n")
    with pytest.raises(cd.LoadError, match='row 1, column "d".*not at midnight'):
        cd.load_table(session, fresh(session, "noon"), str(path))


# --------------------------------------------------------------------------- query results back

WIDE = [None, 0, 2**63, -(10**38), 10**76 - 1, -(10**76 - 1), 12345678901234567890123456789012345678901234567890]


def test_durations_and_wide_varints_round_trip_through_pandas_and_arrow(
        session: Session, tmp_path: Path) -> None:
    """``to_pandas()`` of durations and varints of up to 76 digits prints, and the frame,
    the ``to_arrow()`` table and a Parquet file of it load back cell for cell; a page
    holding a varint of 77 digits stays binary and loads back too."""
    import pyarrow.parquet as pq

    from cqlcodec import Duration

    columns = "k int PRIMARY KEY, du duration, v varint"
    source = f"{KS}.results"
    session.execute(f"DROP TABLE IF EXISTS {source}")
    session.execute(f"CREATE TABLE {source} ({columns})")
    durations = [None, Duration(0, 0, 0), Duration(1, 2, 3), Duration(-14, -3, -(10**15))]
    insert = session.prepare(f"INSERT INTO {source} (k, du, v) VALUES (?, ?, ?)")
    for k, v in enumerate(WIDE):
        session.execute(insert, (k, durations[k % len(durations)], v))

    def rows(table: str) -> dict[int, tuple[Any, Any]]:
        return {r.k: (r.du, r.v) for r in session.execute(f"SELECT k, du, v FROM {table}")}

    want = rows(source)
    frame = cd.execute_columns(session, f"SELECT k, du, v FROM {source}").to_pandas()
    assert "Duration(months=" in frame.to_string() and frame["du"].dtype == object
    assert str(frame["v"].dtype) == "decimal256(76, 0)[pyarrow]"
    table = cd.execute_columns(session, f"SELECT k, du, v FROM {source}").to_arrow()
    pq.write_table(table.drop_columns(["du"]), tmp_path / "v.parquet")  # Parquet has no intervals
    for name, loaded in [("from_frame", frame), ("from_arrow", table),
                         ("from_parquet", str(tmp_path / "v.parquet"))]:
        target = f"{KS}.{name}"
        session.execute(f"DROP TABLE IF EXISTS {target}")
        session.execute(f"CREATE TABLE {target} ({columns})")
        cd.load_table(session, target, loaded)
        got = rows(target)
        if name == "from_parquet":
            got = {k: (want[k][0], v) for k, (_, v) in got.items()}
        assert got == want, name
    session.execute(insert, (99, None, 10**76))  # 77 digits: its page is binary
    table = cd.execute_columns(session, f"SELECT k, du, v FROM {source}").to_arrow()
    assert str(table.schema.field("v").type) == "binary"
    target = f"{KS}.from_binary"
    session.execute(f"DROP TABLE IF EXISTS {target}")
    session.execute(f"CREATE TABLE {target} ({columns})")
    cd.load_table(session, target, table)
    assert rows(target) == rows(source)
