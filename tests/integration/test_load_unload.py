"""Bulk loads (``load_table``), batch sizing in the server's measure, and the
``unload``/``load``/``count`` commands against the real server: round trips through
Parquet, CSV and Arrow, ``--resume`` after a killed unload, and bad inputs."""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cassandra.cluster import Session

import cqlcodec
import cqlcodec.driver as cd
from cqlcodec.driver.batching import is_batch_too_large

from .conftest import ADDRESS, keyspace_session

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

KS = "cqlcodec_load"
# the directory holding the cqlcodec in use (the source tree or site-packages)
ROOT = Path(cqlcodec.__file__).resolve().parent.parent
ROUND_TRIP_COLUMNS = (
    "k int, c int, name text, score double, ratio float, big bigint, small smallint, "
    "flag boolean, at timestamp, day date, id uuid, data blob, nums list<int>, "
    "tags set<text>, attrs map<text, int>, PRIMARY KEY (k, c)")


@pytest.fixture(scope="module")
def session() -> Iterator[Session]:
    yield from keyspace_session(KS)


def fresh_table(session: Session, name: str, columns: str) -> str:
    session.execute(f"DROP TABLE IF EXISTS {KS}.{name}")
    session.execute(f"CREATE TABLE {KS}.{name} ({columns})")
    return f"{KS}.{name}"


def small_columns(n: int, start: int = 0) -> dict[str, Any]:
    r = np.arange(start, start + n)
    return {"k": r.astype(np.int64), "a": r.astype(np.int32), "b": (r * 2).astype(np.int32),
            "c": r * 3, "d": r * 0.5, "e": (r * 0.25).astype(np.float32),
            "f": [f"v{x}" for x in r.tolist()], "g": r % 2 == 0,
            "h": (r % 1000).astype(np.int16), "i": r * 7}


SMALL = ("k bigint PRIMARY KEY, a int, b int, c bigint, d double, e float, f text, "
         "g boolean, h smallint, i bigint")


def count(session: Session, table: str) -> int:
    return int(session.execute(f"SELECT count(*) FROM {table}").one()[0])


def round_trip_table(n: int) -> Any:
    r = list(range(n))
    base = dt.datetime(2024, 5, 17, tzinfo=dt.timezone.utc)
    return pa.table({
        "k": pa.array([i // 4 for i in r], pa.int32()),
        "c": pa.array([i % 4 for i in r], pa.int32()),
        "name": pa.array([None if i % 7 == 0 else f"name {i} é" for i in r]),
        "score": pa.array([i * 1.25 for i in r], pa.float64()),
        "ratio": pa.array([i / 8 for i in r], pa.float32()),
        "big": pa.array([i * 10**12 for i in r], pa.int64()),
        "small": pa.array([i % 30000 for i in r], pa.int16()),
        "flag": pa.array([i % 3 == 0 for i in r]),
        "at": pa.array([base + dt.timedelta(milliseconds=i * 1001) for i in r],
                       pa.timestamp("ms", tz="UTC")),
        "day": pa.array([dt.date(2020, 1, 1) + dt.timedelta(days=i) for i in r], pa.date32()),
        "id": pa.array([uuid.UUID(int=i * 7919 + 1).bytes for i in r], pa.binary(16)),
        "data": pa.array([bytes([i % 256]) * (i % 5) for i in r], pa.binary()),
        "nums": pa.array([[i, i + 1, -i] for i in r], pa.list_(pa.int32())),
        "tags": pa.array([[f"t{i % 3}", f"u{i % 5}"] for i in r], pa.list_(pa.string())),
        "attrs": pa.array([[("a", i), ("b", -i)] for i in r], pa.map_(pa.string(), pa.int32())),
    })


def rows_of(session: Session, table: str) -> list[tuple[Any, ...]]:
    rows = [tuple(row) for row in session.execute(f"SELECT * FROM {table}")]
    return sorted(rows, key=lambda row: (row[0], row[1]))


def cli(*args: str, timeout: float = 300,
        cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m cqlcodec ARGS`` against the test server, in ``cwd`` (default the
    repository root: where a load without --bad-rows would put its bad rows)."""
    host, _, port = ADDRESS.rpartition(":")
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("CQLCODEC_DEBUG", None)
    # cwd=ROOT: `python -m` puts the working directory first on sys.path, so the child
    # imports the same cqlcodec as this process (the installed build under nox)
    return subprocess.run([sys.executable, "-m", "cqlcodec", *args, "--host", host or "127.0.0.1",
                           "--port", port or "9042", "--timeout", "30"],
                          capture_output=True, text=True, env=env, timeout=timeout,
                          cwd=cwd or ROOT)


# --------------------------------------------------------------------------- batch sizing

def test_batches_by_replica_fit_the_servers_measure(session: Session) -> None:
    """README's example, batch_by_replica with batch_bytes=40000 on small values: the
    server counts each row's cells and row overhead, far more than the value bytes."""
    table = fresh_table(session, "small_rows", SMALL)
    ps = session.prepare(f"INSERT INTO {table} (k, a, b, c, d, e, f, g, h, i) "
                         "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
    result = cd.insert_columns(session, ps, small_columns(5000), batch_by_replica=True,
                               batch_bytes=40000, concurrency=4, raise_on_error=False)
    assert [f for f in result.failures if is_batch_too_large(f.error)] == []
    assert result.requests < 5000 / 20  # real batches, not rows one by one
    if not result.failures:  # a write timeout (a busy shared machine) may leave rows out
        assert count(session, table) == 5000


def test_a_batch_refused_as_too_large_is_split(session: Session) -> None:
    """A budget beyond the server's 50 KiB threshold: refused batches are split and sent
    again until they fit, no row fails."""
    table = fresh_table(session, "split_rows", SMALL)
    ps = session.prepare(f"INSERT INTO {table} (k, a, b, c, d, e, f, g, h, i) "
                         "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
    result = cd.insert_columns(session, ps, small_columns(3000), batch_by_replica=True,
                               batch_bytes=400_000, chunk_rows=3000, concurrency=4,
                               raise_on_error=False)
    assert [f for f in result.failures if is_batch_too_large(f.error)] == []
    assert result.requests > 1  # the one 3000-row batch was refused and split
    if not result.failures:
        assert count(session, table) == 3000


# --------------------------------------------------------------------------- load_table

def test_parquet_round_trip_through_load_and_unload(session: Session, tmp_path: Path) -> None:
    table = fresh_table(session, "round_trip", ROUND_TRIP_COLUMNS)
    source = round_trip_table(600)
    pq.write_table(source, tmp_path / "in.parquet", row_group_size=150)
    result = cd.load_table(session, table, tmp_path / "in.parquet", chunk_rows=200)
    assert (result.rows, result.failures) == (600, [])
    proc = cli("unload", table, "-o", str(tmp_path / "out"), "--splits", "6", "--quiet")
    assert proc.returncode == 0, proc.stderr
    back = pq.read_table(tmp_path / "out").sort_by([("k", "ascending"), ("c", "ascending")])
    assert back.num_rows == 600
    expected = source.sort_by([("k", "ascending"), ("c", "ascending")])
    for name in source.column_names:
        got = back.column(name).to_pylist()
        want = expected.column(name).to_pylist()
        if name == "id":
            got = [None if v is None else uuid.UUID(str(v)).bytes if not isinstance(v, bytes)
                   else v for v in got]
        if name == "tags":
            got = [sorted(v) for v in got]
            want = [sorted(v) for v in want]
        if name == "data":
            want = [v if v else None for v in want]  # an empty blob reads back as empty
            got = [v if v else None for v in got]
        if name == "attrs":
            got = [sorted(v) for v in got]
            want = [sorted(v) for v in want]
        assert got == want, name


@pytest.mark.parametrize("fmt", ["csv", "arrow"])
def test_unload_and_load_other_formats(session: Session, tmp_path: Path, fmt: str) -> None:
    table = fresh_table(session, f"fmt_{fmt}", ROUND_TRIP_COLUMNS)
    cd.load_table(session, table, round_trip_table(300))
    before = rows_of(session, table)
    proc = cli("unload", table, "-o", str(tmp_path / fmt), "--format", fmt, "--splits", "4")
    assert proc.returncode == 0, proc.stderr
    assert "unloaded 300 rows" in proc.stderr
    session.execute(f"TRUNCATE {table}")
    proc = cli("load", table, str(tmp_path / fmt))
    assert proc.returncode == 0, proc.stderr
    assert "loaded 300 rows" in proc.stderr
    assert rows_of(session, table) == before


def test_load_from_frames_tables_and_batches(session: Session) -> None:
    pandas = pytest.importorskip("pandas")
    polars = pytest.importorskip("polars")
    table = fresh_table(session, "frames", SMALL)
    data = pa.table(small_columns(900))
    sources: list[Any] = [data, data.to_pandas(), polars.from_arrow(data),
                          iter(data.to_batches(max_chunksize=250)),
                          pa.RecordBatchReader.from_batches(data.schema, data.to_batches(300))]
    import pyarrow.dataset as ds

    sources.append(ds.dataset(data))
    for source in sources:
        session.execute(f"TRUNCATE {table}")
        seen: list[cd.LoadProgress] = []
        result = cd.load_table(session, table, source, chunk_rows=400, progress=seen.append)
        assert (result.rows, result.written) == (900, 900), type(source)
        assert seen[-1].rows == 900
        assert count(session, table) == 900, type(source)
    assert isinstance(pandas.DataFrame, type)


def test_columns_are_matched_by_name_and_renamed(session: Session) -> None:
    table = fresh_table(session, "renamed", "id int PRIMARY KEY, label text, extra int")
    source = pa.table({"label": ["a", "b"], "key": [1, 2], "unused": [0.5, 0.25]})
    cd.load_table(session, table, source, columns=["key", "label"], rename={"key": "id"})
    rows = sorted(tuple(r) for r in session.execute(f"SELECT id, label, extra FROM {table}"))
    assert rows == [(1, "a", None), (2, "b", None)]


# --------------------------------------------------------------------------- bad inputs

def test_bad_inputs_are_clear_errors_and_write_nothing(session: Session, tmp_path: Path) -> None:
    table = fresh_table(session, "bad", "k int PRIMARY KEY, v int, t text")
    good = pa.table({"k": pa.array([1, 2, 3], pa.int32()), "v": pa.array([1, 2, 3], pa.int32()),
                     "t": ["a", "b", "c"]})
    with pytest.raises(cd.LoadError, match='unknown keyspace nope '):
        cd.load_table(session, "nope.bad", good)
    with pytest.raises(cd.LoadError, match="unknown table"):
        cd.load_table(session, f"{KS}.nope", good)
    with pytest.raises(cd.LoadError, match='column "w": table .* has no such column'):
        cd.load_table(session, table, good.append_column("w", pa.array([1, 2, 3])))
    with pytest.raises(cd.LoadError, match="primary-key column"):
        cd.load_table(session, table, good.drop_columns(["k"]))
    wrong = good.set_column(1, "v", pa.array(["1", "2", "x"]))
    with pytest.raises(cd.LoadError, match=r'row 0, column "v"'):
        cd.load_table(session, table, wrong)
    too_big = good.set_column(1, "v", pa.array([1, 2, 2**40], pa.int64()))
    with pytest.raises(cd.LoadError, match=r'row 2, column "v"') as err:
        cd.load_table(session, table, too_big)
    assert err.value.row == 2 and err.value.column == "v"
    # a good file then a corrupt one: the corrupt one is found before anything is sent
    pq.write_table(good, tmp_path / "a.parquet")
    (tmp_path / "b.parquet").write_bytes(b"PAR1 this is not parquet")
    with pytest.raises(cd.LoadError, match="b.parquet: cannot read it"):
        cd.load_table(session, table, tmp_path)
    assert count(session, table) == 0

    proc = cli("load", table, str(tmp_path / "b.parquet"))
    assert proc.returncode == 3 and "cannot read it" in proc.stderr, proc.stderr
    proc = cli("load", table, str(tmp_path / "missing.csv"))
    assert proc.returncode == 3 and "no such file" in proc.stderr, proc.stderr
    proc = cli("load", f"{KS}.nope", str(tmp_path / "a.parquet"))
    assert proc.returncode == 3 and "unknown table" in proc.stderr, proc.stderr
    (tmp_path / "c.csv").write_text("k,v,t\n1,2,a\n2,oops,b\n")
    proc = cli("load", table, str(tmp_path / "c.csv"))
    assert proc.returncode == 3 and 'column "v"' in proc.stderr, proc.stderr
    proc = cli("unload", f"{KS}.nope", "-o", str(tmp_path / "u"))
    assert proc.returncode == 3 and "unknown table" in proc.stderr, proc.stderr
    proc = cli("unload", table, "-o", str(tmp_path / "u2"), "--columns", "k,zz")
    assert proc.returncode == 3 and "zz" in proc.stderr, proc.stderr
    proc = cli("count", "nope.bad")
    assert proc.returncode == 3 and "nope" in proc.stderr, proc.stderr
    assert count(session, table) == 0


# --------------------------------------------------------------------------- count, resume

def test_count_is_exact(session: Session) -> None:
    table = fresh_table(session, "counted", SMALL)
    cd.load_table(session, table, pa.table(small_columns(2500)))
    proc = cli("count", table, "--splits", "12")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "2500"
    proc = cli("count", table, "--where", "a < 100", "--quiet")
    assert (proc.returncode, proc.stdout.strip(), proc.stderr) == (0, "100", "")


def test_resume_after_a_killed_unload(session: Session, tmp_path: Path) -> None:
    table = fresh_table(session, "resumed", SMALL)
    n = 20_000
    cd.load_table(session, table, pa.table(small_columns(n)))
    out = tmp_path / "out"
    host, _, port = ADDRESS.rpartition(":")
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    args = [sys.executable, "-m", "cqlcodec", "unload", table, "-o", str(out), "--splits", "40",
            "--concurrency", "1", "--fetch-size", "100", "--host", host, "--port", port]
    proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            cwd=ROOT)
    manifest = out / "_manifest.json"
    deadline = time.monotonic() + 120
    done: dict[str, Any] = {}
    while time.monotonic() < deadline and proc.poll() is None:
        if manifest.exists():
            done = json.loads(manifest.read_text())["done"]
            if len(done) >= 2:
                break
        time.sleep(0.05)
    assert proc.poll() is None, "the unload ended before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    planned = json.loads(manifest.read_text())
    done = planned["done"]
    assert 2 <= len(done) < len(planned["splits"])
    kept = {d["file"]: (out / d["file"]).stat().st_mtime_ns for d in done.values() if d["file"]}

    again = cli("unload", table, "-o", str(out))
    assert again.returncode == 3 and "--resume" in again.stderr, again.stderr
    again = cli("unload", table, "-o", str(out), "--resume", "--concurrency", "4")
    assert again.returncode == 0, again.stderr
    for name, mtime in kept.items():  # finished splits were not written again
        assert (out / name).stat().st_mtime_ns == mtime
    assert not [p for p in os.listdir(out) if ".tmp-" in p]
    keys = pq.read_table(out, columns=["k"]).column("k").to_pylist()
    assert len(keys) == n and sorted(keys) == list(range(n))
    final = json.loads(manifest.read_text())
    assert len(final["done"]) == len(final["splits"]) == len(planned["splits"])
    assert sum(d["rows"] for d in final["done"].values()) == n


def test_load_csv_written_the_way_cqlsh_writes_it(session: Session, tmp_path: Path) -> None:
    table = fresh_table(session, "from_cqlsh", "k int PRIMARY KEY, at timestamp, flag boolean, "
                        "id uuid, nums list<int>, tags set<text>, attrs map<text, int>, "
                        "data blob, amount decimal")
    (tmp_path / "rows.csv").write_text(
        "k,at,flag,id,nums,tags,attrs,data,amount\n"
        "1,2024-05-17 10:20:30.123000+0000,True,8a6f6d0e-4d0a-4b39-9d4c-3bd1f3c7a001,"
        "\"[1, 2, 3]\",\"{'a', 'b'}\",\"{'x': 1, 'y': 2}\",0x00ff,12.50\n"
        "2,,False,,,,,,\n")
    cd.load_table(session, table, tmp_path / "rows.csv")
    rows = {r.k: r for r in session.execute(f"SELECT * FROM {table}")}
    first = rows[1]
    assert first.at == dt.datetime(2024, 5, 17, 10, 20, 30, 123000)
    assert (first.flag, first.nums, set(first.tags), dict(first.attrs)) == \
        (True, [1, 2, 3], {"a", "b"}, {"x": 1, "y": 2})
    assert first.id == uuid.UUID("8a6f6d0e-4d0a-4b39-9d4c-3bd1f3c7a001")
    assert (first.data, str(first.amount)) == (b"\x00\xff", "12.50")
    assert (rows[2].at, rows[2].flag, rows[2].id, rows[2].nums) == (None, False, None, None)


def test_command_line_children_run_this_build() -> None:
    """The commands these tests start import the cqlcodec this process imported (under nox,
    the installed build, never the source tree that a working directory would put first)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-c", "import cqlcodec; print(cqlcodec.COMPILED, "
                           "cqlcodec.__file__)"], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=60, check=True)
    compiled, path = proc.stdout.split(maxsplit=1)
    assert compiled == str(cqlcodec.COMPILED)
    assert Path(path.strip()).resolve() == Path(cqlcodec.__file__).resolve()
