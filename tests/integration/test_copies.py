"""Copies that keep what the server kept: write times and TTLs through ``scan_table``
/ ``load_table`` and ``unload --writetime --ttl`` / ``load``, and counter tables."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cassandra.cluster import Session

import cqlcodec.driver as cd

from .conftest import ADDRESS, keyspace_session
from .test_load_unload import ROOT, cli

pa = pytest.importorskip("pyarrow")

KS = "cqlcodec_copies"

EVERY_KIND = ("k int, c int, s int static, v text, n bigint, l list<int>, st set<text>, "
              "m map<int, text>, u addr, fu frozen<addr>, vec vector<float, 3>, "
              "tu tuple<int, text>, PRIMARY KEY (k, c)")
TIMED = ["s", "v", "n", "l", "st", "m", "u", "fu", "vec", "tu"]


@pytest.fixture(scope="module")
def session() -> Iterator[Session]:
    """A keyspace of its own, with the UDT the tables here use."""
    yield from keyspace_session(KS, f"CREATE TYPE {KS}.addr (street text, n int)")


def fresh(session: Session, name: str, columns: str) -> str:
    session.execute(f"DROP TABLE IF EXISTS {KS}.{name}")
    session.execute(f"CREATE TABLE {KS}.{name} ({columns})")
    return f"{KS}.{name}"


def fill_every_kind(session: Session, table: str) -> None:
    """Rows whose cells were written at different times, some with TTLs, collections
    and a UDT whose elements differ in time, a partition of its static cell alone (with
    a TTL) and a row of its key alone."""
    run = session.execute
    run(f"INSERT INTO {table} (k, c, s, v, n, l, st, m, u, fu, vec, tu) VALUES (1, 1, 5, 'a', "
        "7, [1, 2], {'x'}, {1: 'a'}, {street: 's', n: 1}, {street: 'f', n: 2}, [1, 2, 3], "
        "(1, 'one')) USING TIMESTAMP 1000 AND TTL 50000")
    run(f"UPDATE {table} USING TIMESTAMP 2000 SET l = l + [3], st = st + {{'y'}}, "
        "m = m + {2: 'b'}, u.n = 7, v = 'b' WHERE k = 1 AND c = 1")
    run(f"UPDATE {table} USING TIMESTAMP 3000 AND TTL 40000 SET l = l + [4], n = 8 "
        "WHERE k = 1 AND c = 1")
    run(f"INSERT INTO {table} (k, c, v, l, u) VALUES (1, 2, 'c', [9, 8], {{street: 'z'}}) "
        "USING TIMESTAMP 4000")
    run(f"INSERT INTO {table} (k, c, m, vec) VALUES (2, 1, {{5: 'e'}}, [0.5, 1, 2]) "
        "USING TTL 60000")
    run(f"INSERT INTO {table} (k, s) VALUES (3, 33) USING TIMESTAMP 5000 AND TTL 45000")
    run(f"INSERT INTO {table} (k, c) VALUES (4, 1) USING TIMESTAMP 6000")
    for i in range(5, 40):
        run(f"INSERT INTO {table} (k, c, v, n) VALUES ({i}, {i % 3}, 'r{i}', {i}) "
            f"USING TIMESTAMP {10_000 + i} AND TTL {30_000 + i}")


def times_of(session: Session, table: str) -> dict[tuple[Any, ...], tuple[Any, ...]]:
    """Per row: every value, then writetime(c) and ttl(c) of every timed column."""
    select = ", ".join(f"writetime({c}), ttl({c})" for c in TIMED)
    rows = session.execute(f"SELECT k, c, {select} FROM {table}")
    values = {(r[0], r[1]): tuple(r) for r in session.execute(f"SELECT * FROM {table}")}
    return {(r[0], r[1]): (values[(r[0], r[1])], tuple(r[2:])) for r in rows}


def assert_same_times(session: Session, before: dict[tuple[Any, ...], tuple[Any, ...]],
                      target: str, started: float) -> None:
    """The target's cells have the write times ``before`` (the source's, read before
    the copy began at ``started``) and TTLs lower by at most the seconds since."""
    after = times_of(session, target)
    assert before.keys() == after.keys()
    slack = int(time.monotonic() - started) + 2
    for key, (values, times) in before.items():
        copied_values, copied = after[key]
        assert copied_values == values, key
        for j, column in enumerate(TIMED):
            wt, ttl = times[2 * j], times[2 * j + 1]
            assert copied[2 * j] == wt, (key, column)
            got = copied[2 * j + 1]
            pairs = list(zip(ttl, got)) if isinstance(ttl, list) else [(ttl, got)]
            assert not isinstance(ttl, list) or len(ttl) == len(got), (key, column)
            for was, now in pairs:
                assert (was is None) == (now is None), (key, column, ttl, got)
                if was is not None:
                    assert was - slack <= now <= was, (key, column, ttl, got)


def test_scan_reads_writetime_and_ttl_named_exactly(session: Session) -> None:
    table = fresh(session, "named", EVERY_KIND)
    fill_every_kind(session, table)
    got = cd.scan_table(session, table, writetime=True, ttl=True).to_arrow()
    names = got.schema.names
    for c in TIMED:
        assert f"writetime({c})" in names and f"ttl({c})" in names
    assert "writetime(k)" not in names and "writetime(c)" not in names
    rows = {(r["k"], r["c"]): r for r in got.to_pylist()}
    first = rows[(1, 1)]
    assert first["writetime(v)"] == 2000 and first["ttl(v)"] is None
    assert first["writetime(n)"] == 3000 and 39_000 < first["ttl(n)"] <= 40_000
    assert first["writetime(l)"] == [1000, 1000, 2000, 3000]  # per element, in list order
    assert first["writetime(u)"] == [1000, 2000]  # per non-null field, in field order
    assert first["writetime(fu)"] == 1000 and first["writetime(vec)"] == 1000
    assert rows[(5, 2)]["ttl(l)"] is None and rows[(5, 2)]["writetime(v)"] == 10_005
    static_only = rows[(3, None)]  # a partition of its static cell alone keeps both
    assert static_only["writetime(s)"] == 5000 and 44_000 < static_only["ttl(s)"] <= 45_000


def test_api_copy_keeps_every_cells_time_and_ttl(session: Session) -> None:
    source = fresh(session, "timed_src", EVERY_KIND)
    target = fresh(session, "timed_dst", EVERY_KIND)
    fill_every_kind(session, source)
    started = time.monotonic()
    before = times_of(session, source)
    data = cd.scan_table(session, source, writetime=True, ttl=True).to_arrow()
    result = cd.load_table(session, target, data, chunk_rows=16)
    assert result.rows == data.num_rows and not result.failures
    assert_same_times(session, before, target, started)


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_unload_writetime_ttl_then_load(session: Session, tmp_path: Path, fmt: str) -> None:
    source = fresh(session, f"cli_src_{fmt}", EVERY_KIND)
    target = fresh(session, f"cli_dst_{fmt}", EVERY_KIND)
    fill_every_kind(session, source)
    started = time.monotonic()
    before = times_of(session, source)
    out = tmp_path / "out"
    done = cli("unload", source, "-o", str(out), "--format", fmt, "--writetime", "--ttl",
               "--splits", "4", "-q")
    assert done.returncode == 0, done.stderr
    done = cli("load", target, str(out), "-q")
    assert done.returncode == 0, done.stderr
    assert_same_times(session, before, target, started)


def test_ignore_writetime_writes_cells_now(session: Session, tmp_path: Path) -> None:
    source = fresh(session, "ignored_src", "k int PRIMARY KEY, v text, l list<int>")
    target = fresh(session, "ignored_dst", "k int PRIMARY KEY, v text, l list<int>")
    for k in range(10):
        session.execute(f"INSERT INTO {source} (k, v, l) VALUES ({k}, 'x', [1]) "
                        "USING TIMESTAMP 1000 AND TTL 50000")
    out = tmp_path / "out"
    assert cli("unload", source, "-o", str(out), "--writetime", "--ttl", "-q").returncode == 0
    done = cli("load", target, str(out), "--ignore-writetime", "-q")
    assert done.returncode == 0, done.stderr
    now_us = time.time() * 1e6
    for wt, ttl in session.execute(f"SELECT writetime(v), ttl(v) FROM {target}"):
        assert wt > now_us - 600e6 and ttl is None  # written now, without TTL


def test_counter_table_round_trip(session: Session, tmp_path: Path) -> None:
    columns = "k int, c int, hits counter, misses counter, PRIMARY KEY (k, c)"
    source = fresh(session, "counts_src", columns)
    target = fresh(session, "counts_dst", columns)
    for k in range(20):
        for c in range(3):
            session.execute(f"UPDATE {source} SET hits = hits + {k * 10 + c}, "
                            f"misses = misses + {c} WHERE k = {k} AND c = {c}")
    out = tmp_path / "counts"
    assert cli("unload", source, "-o", str(out), "-q").returncode == 0
    done = cli("load", target, str(out))
    assert done.returncode == 0, done.stderr
    assert "warning" not in done.stderr

    def rows(table: str) -> list[tuple[Any, ...]]:
        return sorted(tuple(r) for r in session.execute(f"SELECT k, c, hits, misses FROM {table}"))

    assert rows(target) == rows(source)
    done = cli("load", target, str(out))  # loading twice doubles, with a warning
    assert done.returncode == 0, done.stderr
    assert "counter table that has rows already" in done.stderr
    assert rows(target) == [(k, c, 2 * h, 2 * m) for k, c, h, m in rows(source)]


# --------------------------------------------------------------------------- formats, streams

ALL_TYPES = ("k int PRIMARY KEY, a ascii, b bigint, bl blob, bo boolean, d date, de decimal, "
             "do double, du duration, f float, i inet, si smallint, t text, tm time, "
             "ts timestamp, tu timeuuid, ti tinyint, u uuid, vi varint, l list<int>, "
             "st set<text>, mt map<text, int>, mi map<int, frozen<list<text>>>, "
             "ad addr, fad frozen<addr>, tp tuple<int, text, double>, vec vector<float, 3>")


def fill_all_types(session: Session, table: str, n: int = 30) -> None:
    """``n`` rows of every type and one row of nulls."""
    for k in range(n):
        session.execute(
            f"INSERT INTO {table} (k, a, b, bl, bo, d, de, do, du, f, i, si, t, tm, ts, tu, "
            "ti, u, vi, l, st, mt, mi, ad, fad, tp, vec) VALUES (%s, 'asc', %s, 0x00ff, true, "
            "'2024-02-29', 12345678901234567890.0012, %s, 1mo2d3ns, 0.1, '::1', -3, 'é \"q\"\n', "
            "'10:00:00.000000123', '2024-05-17 10:00:00.123+0000', now(), 7, uuid(), %s, "
            "[1, 2], {'x', 'y'}, {'a': 1}, {3: ['p', 'q']}, {street: 'st', n: null}, "
            "{street: 'f', n: 2}, (1, 'one', NaN), [1.5, -2, 3])",
            (k, -(2 ** 63) + k, float("inf") if k == 3 else k / 3, 10 ** 30 + k))
    session.execute(f"INSERT INTO {table} (k) VALUES ({n})")  # every other column null


CSV_TYPES = ("k int PRIMARY KEY, t text, b bigint, do double, ts timestamp, u uuid, bl blob, "
             "d date, de decimal, l list<int>, st set<text>, mt map<text, int>")


def fill_csv_types(session: Session, table: str, n: int = 30) -> None:
    """Rows of the types CSV holds (its collections are Python literals)."""
    for k in range(n):
        session.execute(f"INSERT INTO {table} (k, t, b, do, ts, u, bl, d, de, l, st, mt) "
                        "VALUES (%s, 'é, \"q\"\n', %s, %s, '2024-05-17 10:00:00.123+0000', "
                        "uuid(), 0x00ff, '2024-02-29', 1.50, [1, 2], {'x'}, {'a': 1})",
                        (k, -(2 ** 63) + k, k / 3))
    session.execute(f"INSERT INTO {table} (k) VALUES ({n})")


def rows_by_key(session: Session, table: str) -> list[Any]:
    return sorted((tuple(r) for r in session.execute(f"SELECT * FROM {table}")),
                  key=lambda r: r[0])


def same_rows(left: list[Any], right: list[Any]) -> bool:
    """Equal rows, a NaN equal to a NaN."""
    return repr(left) == repr(right)


@pytest.mark.parametrize("compress", [None, "zstd"])
def test_jsonl_files_round_trip_every_type(session: Session, tmp_path: Path,
                                           compress: str | None) -> None:
    source = fresh(session, "json_src", ALL_TYPES)
    target = fresh(session, "json_dst", ALL_TYPES)
    fill_all_types(session, source)
    out = tmp_path / "json"
    extra = ["--compress", compress] if compress else []
    done = cli("unload", source, "-o", str(out), "--format", "jsonl", "--splits", "3", "-q",
               *extra)
    assert done.returncode == 0, done.stderr
    suffix = {None: ".jsonl", "gzip": ".jsonl.gz", "zstd": ".jsonl.zst"}[compress]
    names = [p.name for p in out.iterdir() if p.name.startswith("part-")]
    assert names and all(n.endswith(suffix) for n in names)
    done = cli("load", target, str(out), "-q")
    assert done.returncode == 0, done.stderr
    assert same_rows(rows_by_key(session, target), rows_by_key(session, source))


def test_compressed_csv_and_parquet_codec(session: Session, tmp_path: Path) -> None:
    source = fresh(session, "csvz_src", CSV_TYPES)
    fill_csv_types(session, source, 10)
    before = rows_by_key(session, source)
    for compress in ("gzip",):  # zstd: the JSON lines test
        out = tmp_path / compress
        done = cli("unload", source, "-o", str(out), "--format", "csv", "--compress", compress,
                   "-q")
        assert done.returncode == 0, done.stderr
        target = fresh(session, f"csvz_{compress}", CSV_TYPES)
        done = cli("load", target, str(out), "-q")
        assert done.returncode == 0, done.stderr
        assert same_rows(rows_by_key(session, target), before)
    out = tmp_path / "pq"
    done = cli("unload", source, "-o", str(out), "--parquet-compression", "zstd", "-q")
    assert done.returncode == 0, done.stderr
    import pyarrow.parquet as pq

    for path in out.glob("part-*.parquet"):
        assert pq.ParquetFile(path).metadata.row_group(0).column(0).compression == "ZSTD"


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_stdout_piped_into_stdin(session: Session, fmt: str) -> None:
    """``unload -o -`` in one process, its stdout the stdin of ``load -`` in another."""
    columns = ALL_TYPES if fmt == "jsonl" else CSV_TYPES
    source = fresh(session, f"pipe_src_{fmt}", columns)
    target = fresh(session, f"pipe_dst_{fmt}", columns)
    if fmt == "jsonl":
        fill_all_types(session, source)
    else:
        fill_csv_types(session, source)
    unload = cli_process("unload", source, "-o", "-", "--format", fmt, "-q")
    load = cli_process("load", target, "-", "--format", fmt, "-q", stdin=unload.stdout)
    assert unload.stdout is not None
    unload.stdout.close()  # the load process holds the pipe's reading end
    _, unload_err = unload.communicate(timeout=300)
    _, load_err = load.communicate(timeout=300)
    assert unload.returncode == 0, unload_err
    assert load.returncode == 0, load_err
    assert same_rows(rows_by_key(session, target), rows_by_key(session, source))


def cli_process(*args: str, stdin: Any = None) -> Any:
    """A ``python -m cqlcodec`` child with pipes (see ``test_load_unload.cli``)."""
    import os
    import subprocess
    import sys

    host, _, port = ADDRESS.rpartition(":")
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.Popen([sys.executable, "-m", "cqlcodec", *args, "--host",
                             host or "127.0.0.1", "--port", port or "9042", "--timeout", "30"],
                            stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env, cwd=ROOT)


# --------------------------------------------------------------------------- bad rows

def planted_jsonl(path: Path) -> None:
    """20 rows; line 4 has a wrong type, line 6 a value too large for smallint, line 8
    a partition key longer than the server takes (64 KiB)."""
    import json

    lines = []
    for k in range(20):
        row: dict[str, Any] = {"k": f"key{k}", "n": k, "s": k}
        if k == 3:
            row["n"] = "abc"
        if k == 5:
            row["s"] = 70_000
        if k == 7:
            row["k"] = "x" * 70_000
        lines.append(json.dumps(row))
    path.write_text("\n".join(lines) + "\n")


def test_bad_rows_budget_not_hit(session: Session, tmp_path: Path) -> None:
    import json

    table = fresh(session, "bad_rows", "k text PRIMARY KEY, n int, s smallint")
    source = tmp_path / "in.jsonl"
    planted_jsonl(source)
    bad = tmp_path / "bad.jsonl"
    done = cli("load", table, str(source), "--max-errors", "5", "--bad-rows", str(bad),
               "--chunk-rows", "8")
    assert done.returncode == 1, done.stderr
    assert "loaded 17 rows" in done.stderr and "3 bad rows" in done.stderr, done.stderr
    assert sorted(r[0] for r in session.execute(f"SELECT k FROM {table}")) == sorted(
        f"key{k}" for k in range(20) if k not in (3, 5, 7))
    rows = [json.loads(line) for line in bad.read_text().splitlines()]
    assert [r["_source"] for r in rows] == [f"{source}:4", f"{source}:6", f"{source}:8"]
    assert rows[0]["n"] == "abc" and '"n"' in rows[0]["_error"]
    assert rows[1]["s"] == 70_000 and '"s"' in rows[1]["_error"]
    assert len(rows[2]["k"]) == 70_000 and "InvalidRequest" in rows[2]["_error"]


def test_bad_rows_budget_hit_and_dry_run(session: Session, tmp_path: Path) -> None:
    table = fresh(session, "bad_budget", "k text PRIMARY KEY, n int, s smallint")
    source = tmp_path / "in.jsonl"
    planted_jsonl(source)
    done = cli("load", table, str(source), "--max-errors", "1", "--chunk-rows", "4",
               cwd=tmp_path)
    assert done.returncode == 1
    # the budget is checked after each chunk: the second chunk's two bad rows stop it
    assert "more than 1 bad rows (3): the load stopped after 8 rows read (5 written, 3 bad)" \
        in done.stderr, done.stderr
    written = {r[0] for r in session.execute(f"SELECT k FROM {table}")}
    assert written == {"key0", "key1", "key2", "key4", "key6"}
    empty = fresh(session, "bad_dry", "k text PRIMARY KEY, n int, s smallint")
    done = cli("load", empty, str(source), "--dry-run", cwd=tmp_path)
    assert done.returncode == 1
    assert "dry run: 20 rows read and bound, 2 bad (in cqlcodec-bad-rows-" in done.stderr, \
        done.stderr
    assert f"bad row at {source}:4: LoadError: column \"n\"" in done.stderr, done.stderr
    assert session.execute(f"SELECT count(*) FROM {empty}").one()[0] == 0


def test_load_table_returns_bad_rows_within_budget(session: Session, tmp_path: Path) -> None:
    """Issue 46, item 4: with ``max_errors`` the bad rows are in the result returned,
    not an InsertError (raise_on_error left at its default), with and without a dry
    run; more than the budget is TooManyBadRows holding the result; a budget below 0
    is refused."""
    import json

    from cqlcodec.driver.bad_rows import BadRowsFile

    table = fresh(session, "bad_api", "k text PRIMARY KEY, n int, s smallint")
    source = tmp_path / "in.jsonl"
    planted_jsonl(source)
    bad = BadRowsFile(str(tmp_path / "bad.jsonl"), csv_format=False)
    result = cd.load_table(session, table, str(source), max_errors=100, bad_rows=bad)
    bad.close()
    assert (result.rows, result.written) == (20, 17)
    assert [f.row for f in result.failures] == [3, 5, 7]
    places = [json.loads(line)["_source"] for line in (tmp_path / "bad.jsonl").read_text()
              .splitlines()]
    assert places == [f"{source}:{n}" for n in (4, 6, 8)]
    for budget in (100, None):  # a dry run reports its bad rows, with a budget or without
        dry = cd.load_table(session, table, str(source), max_errors=budget, dry_run=True)
        assert (dry.rows, dry.requests, [f.row for f in dry.failures]) == (20, 0, [3, 5])
    with pytest.raises(cd.TooManyBadRows) as caught:
        cd.load_table(session, table, str(source), max_errors=1, chunk_rows=4)
    assert not caught.value.finished and caught.value.limit == 1
    assert (caught.value.result.rows, len(caught.value.result.failures)) == (8, 3)
    with pytest.raises(ValueError, match="max_errors must be at least 0"):
        cd.load_table(session, table, str(source), max_errors=-1)
    with pytest.raises(cd.InsertError):  # no budget: a row the server refuses raises
        cd.load_table(session, table, str(source), columns=["k"])  # key7 is too long


def test_budget_run_out_in_the_last_chunk(session: Session, tmp_path: Path) -> None:
    """Issue 46, items 5 and 6: 11 bad rows in one chunk with --max-errors 5 and every
    good row written is said as it happened (not "the load stopped"); without
    --bad-rows the bad rows go to a file in the current directory that the message
    names, each with its file and line; --max-errors below 0 is a usage error."""
    import json

    table = fresh(session, "bad_one_chunk", "k int PRIMARY KEY, n int")
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps({"k": k, "n": "x" if k % 100 == 7 else k}) + "\n"
                              for k in range(1100)))
    work = tmp_path / "work"
    work.mkdir()
    done = cli("load", table, str(source), "--max-errors", "5", cwd=work)
    assert done.returncode == 1, done.stderr
    assert "more than 5 bad rows (11): every row was read; 1,089 written, 11 bad (the budget " \
        "ran out in the last chunk)" in done.stderr, done.stderr
    assert "the load stopped" not in done.stderr
    (bad_file,) = list(work.iterdir())
    assert f"(in {bad_file.name})" in done.stderr, done.stderr
    rows = [json.loads(line) for line in bad_file.read_text().splitlines()]
    assert [r["_source"] for r in rows] == [f"{source}:{k + 1}" for k in range(7, 1100, 100)]
    assert session.execute(f"SELECT count(*) FROM {table}").one()[0] == 1089
    done = cli("load", table, str(source), "--max-errors", "20", cwd=work)
    assert done.returncode == 1, done.stderr
    assert "loaded 1,089 rows" in done.stderr and "11 bad rows (in cqlcodec-bad-rows-" in \
        done.stderr and "within --max-errors 20" in done.stderr, done.stderr
    assert len(list(work.iterdir())) == 2  # a new file: the first is not appended to
    done = cli("load", table, str(source), "--max-errors", "-1", cwd=work)
    assert done.returncode == 2 and "must be at least 0" in done.stderr, done.stderr


# --------------------------------------------------------------------------- unreadable lines

def planted_csv(path: Path) -> tuple[dict[int, int], list[int]]:
    """400 rows of about 300 bytes (so Arrow reads the file in several blocks and the
    first ones are loaded before the bad lines are met); from row 250 on: too few
    fields, an unclosed quote, a value that is no int, bytes that are no UTF-8, and a
    good value over two lines. Returns the line of every good row's key and the
    lines of the bad ones."""
    out = [b"k,n,s\n"]
    line = 2
    good: dict[int, int] = {}
    bad: list[int] = []
    for k in range(400):
        pad = "x" * 300
        text = {250: f"{k},7", 260: f'{k},5,"unclosed {pad}', 270: f"{k},abc,{pad}",
                280: f"{k},1,\udcff{pad}", 290: f'{k},1,"two\nlines"'}.get(k, f"{k},{k},{pad}")
        data = text.encode("utf-8", "surrogateescape") + b"\n"
        if k in (250, 260, 270, 280):
            bad.append(line)
        else:
            good[k] = line
        out.append(data)
        line += data.count(b"\n")
    path.write_bytes(b"".join(out))
    return good, bad


def test_unreadable_csv_lines_go_to_bad_rows(session: Session, tmp_path: Path) -> None:
    """Unreadable lines are bad rows with their line; the lines after them load, and
    the rows before them were read by Arrow's fast reader."""
    import csv

    from cqlcodec.driver.bad_rows import BadRowsFile

    table = fresh(session, "unreadable_csv", "k int PRIMARY KEY, n int, s text")
    source = tmp_path / "in.csv"
    good, bad_lines = planted_csv(source)
    bad_file = BadRowsFile(str(tmp_path / "bad.csv"), csv_format=True)
    result = cd.load_table(session, table, str(source), chunk_rows=100, max_errors=10,
                           bad_rows=bad_file, raise_on_error=False)
    bad_file.close()
    assert result.rows == 400 and [f.row for f in result.failures] == [250, 260, 270, 280]
    loaded = {r[0]: (r[1], r[2]) for r in session.execute(f"SELECT k, n, s FROM {table}")}
    assert sorted(loaded) == sorted(good)
    assert loaded[290] == (1, "two\nlines") and loaded[261] == (261, "x" * 300)
    with open(tmp_path / "bad.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert [r["_source"] for r in rows] == [f"{source}:{n}" for n in bad_lines]
    assert "2 fields where the header has 3; the line: 250,7" in rows[0]["_error"]
    assert "quote not closed" in rows[1]["_error"] and rows[1]["k"] == "260"
    assert 'column "n"' in rows[2]["_error"] and rows[2]["n"] == "abc"
    assert "not UTF-8 text" in rows[3]["_error"] and rows[3]["k"] == "280"


def test_unreadable_lines_budget_hit_and_dry_run(session: Session, tmp_path: Path) -> None:
    """JSON lines: a line that is no JSON, one that is no object and one that is no
    UTF-8 count against --max-errors; a CSV dry run reports its unreadable lines."""
    import json

    table = fresh(session, "unreadable_jsonl", "k int PRIMARY KEY, n int")
    lines = [json.dumps({"k": k, "n": k}).encode() for k in range(60)]
    lines[9], lines[19], lines[24] = b'{"k": 9, "n":', b"[19, 19]", b'{"k": 24, "n": "\xff"}'
    source = tmp_path / "in.jsonl"
    source.write_bytes(b"\n".join(lines) + b"\n")
    done = cli("load", table, str(source), "--max-errors", "1", "--chunk-rows", "15",
               cwd=tmp_path)
    assert done.returncode == 1
    # the budget is checked after each chunk: the second one's two bad lines stop it
    assert "more than 1 bad rows (3)" in done.stderr, done.stderr
    written = {r[0] for r in session.execute(f"SELECT k FROM {table}")}
    assert written == set(range(30)) - {9, 19, 24}
    bad = tmp_path / "bad.jsonl"
    done = cli("load", table, str(source), "--max-errors", "3", "--bad-rows", str(bad))
    assert done.returncode == 1 and "3 bad rows" in done.stderr, done.stderr
    assert {r[0] for r in session.execute(f"SELECT k FROM {table}")} == \
        set(range(60)) - {9, 19, 24}
    rows = [json.loads(line) for line in bad.read_text().splitlines()]
    assert [r["_source"] for r in rows] == [f"{source}:{n}" for n in (10, 20, 25)]
    assert "no JSON object" in rows[0]["_error"] and '{"k": 9' in rows[0]["_error"]
    assert "not UTF-8" in rows[2]["_error"]
    csv_source = tmp_path / "in.csv"
    planted_csv(csv_source)
    empty = fresh(session, "unreadable_dry", "k int PRIMARY KEY, n int, s text")
    done = cli("load", empty, str(csv_source), "--dry-run", cwd=tmp_path)
    assert done.returncode == 1
    assert "dry run: 400 rows read and bound, 4 bad (in cqlcodec-bad-rows-" in done.stderr, \
        done.stderr
    assert f"bad row at {csv_source}:252: LoadError: 2 fields" in done.stderr, done.stderr
    assert session.execute(f"SELECT count(*) FROM {empty}").one()[0] == 0


# --------------------------------------------------------------------------- --rate

def test_load_rate_holds_over_every_five_second_window(session: Session) -> None:
    table = fresh(session, "rated", "k int PRIMARY KEY, v text")
    rate, n = 1000, 6500
    data = pa.table({"k": pa.array(range(n), pa.int32()), "v": [f"v{i}" for i in range(n)]})
    seen: list[tuple[float, int]] = [(0.0, 0)]
    cd.load_table(session, table, data, rate=rate,
                  progress=lambda p: seen.append((p.elapsed, p.written)))
    elapsed, written = seen[-1]
    assert written == n
    assert rate * 0.9 <= n / elapsed <= rate * 1.1
    for t0, rows0 in seen:  # the rows written in any 5 s after a progress report
        inside = [rows for t, rows in seen if t0 <= t <= t0 + 5.0]
        assert inside[-1] - rows0 <= 5.0 * rate * 1.1, (t0, inside)


def test_unload_rate(session: Session, tmp_path: Path) -> None:
    import re

    table = fresh(session, "rated_out", "k int PRIMARY KEY, v text")
    cd.load_table(session, table, pa.table({"k": pa.array(range(6000), pa.int32()),
                                             "v": ["x"] * 6000}))
    done = cli("unload", table, "-o", str(tmp_path / "o"), "--rate", "1500", "--splits", "8")
    assert done.returncode == 0, done.stderr
    found = re.search(r"unloaded 6,000 rows in ([\d.]+) ?s", done.stderr)
    assert found is not None, done.stderr
    assert 6000 / 1500 * 0.9 <= float(found[1]) <= 6000 / 1500 * 1.1 + 1.0


# --------------------------------------------------------------------------- count --by

def test_count_by_host_range_and_partition(session: Session) -> None:
    import json
    import re

    table = fresh(session, "grouped", "a int, b text, c int, PRIMARY KEY ((a, b), c)")
    for a in range(12):  # partition (a, 'p<a>') has a + 1 rows
        for c in range(a + 1):
            session.execute(f"INSERT INTO {table} (a, b, c) VALUES ({a}, 'p{a}', {c})")
    total = sum(a + 1 for a in range(12))

    done = cli("count", table, "--by", "range", "--splits", "6", "-q")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) >= 6
    summed = 0
    for line in lines:
        found = re.fullmatch(r"\((-?\d+), (-?\d+)\] (\d+)", line)
        assert found is not None, line
        direct = session.execute(f"SELECT count(*) FROM {table} WHERE token(a, b) > %s AND "
                                 "token(a, b) <= %s", (int(found[1]), int(found[2]))).one()[0]
        assert int(found[3]) == direct
        summed += int(found[3])
    assert summed == total

    done = cli("count", table, "--by", "host", "-q")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [ADDRESS.rpartition(":")[0] or "127.0.0.1", str(total)]

    done = cli("count", table, "--by", "partition", "--top", "3", "-q")
    assert done.returncode == 0, done.stderr
    direct = sorted(((r[2], r[0], r[1]) for r in session.execute(
        f"SELECT a, b, count(*) FROM {table} GROUP BY a, b")), reverse=True)[:3]
    assert done.stdout.splitlines() == [f"{a} {b} {n}" for n, a, b in direct]
    done = cli("count", table, "--by", "partition", "--top", "3", "--json", "-q")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["groups"] == [{"key": {"a": a, "b": b}, "rows": n}
                                                 for n, a, b in direct]


def test_bad_rows_with_write_times(session: Session, tmp_path: Path) -> None:
    import json

    table = fresh(session, "bad_timed", "k int PRIMARY KEY, v smallint")
    source = tmp_path / "timed.jsonl"
    source.write_text("".join(json.dumps({"k": k, "v": 70_000 if k == 2 else k,
                                          "writetime(v)": 1000 + k}) + "\n" for k in range(5)))
    bad = tmp_path / "bad.jsonl"
    done = cli("load", table, str(source), "--bad-rows", str(bad))
    assert done.returncode == 1, done.stderr
    rows = [json.loads(line) for line in bad.read_text().splitlines()]
    assert len(rows) == 1 and rows[0]["k"] == 2 and '"v"' in rows[0]["_error"], rows
    assert rows[0]["_source"] == f"{source}:3"
    got = sorted(tuple(r) for r in session.execute(f"SELECT k, writetime(v) FROM {table}"))
    assert got == [(k, 1000 + k) for k in (0, 1, 3, 4)]


def test_rows_of_one_write_go_at_once_as_row_by_row(session: Session) -> None:
    """``write_timed_chunk`` takes the rows whose cells are all set and share one write
    time and TTL column by column, the others one by one: the same chunk as Arrow arrays
    (both ways) and as Python lists (one by one only) writes the same cells, write times
    and TTLs. Rows: one write with and without a TTL, a null cell, cells of different
    times or TTLs, a null clustering key (the static cell alone)."""
    from cqlcodec.driver.cell_times import TimedColumns, _add_one_time_rows, write_timed_chunk

    columns = "k int, c int, s int static, a int, b text, PRIMARY KEY (k, c)"
    cells = ["s", "a", "b"]
    rows: list[tuple[Any, ...]] = []  # k, c, s, a, b, then the write times, then the TTLs
    for k in range(40):
        t, ttl = 10_000 + k, (None if k % 2 else 50_000 + k)
        rows.append((k, k % 3, k, k * 2, f"b{k}", t, t, t, ttl, ttl, ttl))
    rows.append((40, 0, 1, None, "null a", 900, None, 900, None, None, None))
    rows.append((41, 0, 1, 2, "two times", 900, 901, 900, None, None, None))
    rows.append((42, 0, 1, 2, "two ttls", 900, 900, 900, 40_000, None, 40_000))
    rows.append((43, None, 7, None, None, 950, None, None, 30_000, None, None))
    names = ["k", "c", *cells, *(f"writetime({c})" for c in cells), *(f"ttl({c})" for c in cells)]
    types = [pa.int32()] * 4 + [pa.string()] + [pa.int64()] * 3 + [pa.int32()] * 3
    lists = {n: [r[i] for r in rows] for i, n in enumerate(names)}
    arrays = {n: pa.array(lists[n], type=types[i]) for i, n in enumerate(names)}
    assert str(arrays["b"].type) == "string" and str(arrays["ttl(b)"].type) == "int32"
    timed = TimedColumns({c: f"writetime({c})" for c in cells}, {c: f"ttl({c})" for c in cells})
    one_by_one = _add_one_time_rows({}, arrays, len(rows), timed, cells, ["c"], ("k", "c"))
    assert one_by_one == [40, 41, 42, 43]  # the others went at once
    written = {}
    for how, batch in (("arrow", arrays), ("lists", lists)):
        table = fresh(session, f"at_once_{how}", columns)
        meta = session.cluster.metadata.keyspaces[KS].tables[f"at_once_{how}"]
        done = write_timed_chunk(session, pa, table, meta, batch, len(rows), timed, {}, None,
                                 batch_by_replica=False, batch_bytes=40_000, concurrency=8)
        assert not done.failures, done.failures[:3]
        written[how] = sorted((*r[:8], r[8] is not None, r[9] is not None) for r in session.execute(
            f"SELECT k, c, s, a, b, writetime(s), writetime(a), writetime(b), ttl(a), ttl(b) "
            f"FROM {table}"))
    assert written["arrow"] == written["lists"]
    assert len(written["arrow"]) == 44  # k 43: its partition's static cell alone
    by_key = {r[0]: r for r in written["arrow"]}
    assert by_key[0][5:] == (10_000, 10_000, 10_000, True, True)
    assert by_key[1][5:] == (10_001, 10_001, 10_001, False, False)
    assert by_key[41][5:8] == (900, 901, 900) and by_key[42][8:] == (False, True)
