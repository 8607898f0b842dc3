"""The command line's edges against a real server (issue 46): a password never shown,
``--username`` against a server without authentication, a refused ``--where`` that
leaves nothing behind, a closed stdout, a malformed CSV line named by its line, the row
estimate of a clustered table, and case-sensitive, spaced, reserved-word and non-ASCII
names through every command, format and API."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cassandra.cluster import Session

import cqlcodec
import cqlcodec.driver as cd
from cqlcodec import aio
from cqlcodec.driver.estimates import RowEstimate, sample_page
from cqlcodec.driver.splits import MAX_TOKEN, MIN_TOKEN, TokenSplit

from .conftest import ADDRESS, new_cluster

pytest.importorskip("pyarrow.parquet")

KS = "cqlcodec_edges"
ODD_KS = "Edges_KS"  # a keyspace that keeps its case (keyspace names are \w+ in Cassandra)
ODD = f'"{ODD_KS}"'
ROOT = Path(cqlcodec.__file__).resolve().parent.parent
MARKER = "S3cretPW-marker-46"
# key "Key", clustering "select" (a reserved word), a spaced, a quoted, a non-ASCII
# column, and "key" beside "Key"
ODD_COLUMNS = ('"Key" int, "select" int, "a b" text, "q""t" int, "ünï" text, key int, '
               '"Value" double, PRIMARY KEY ("Key", "select")')
ROWS = 50_000
PARTITIONS = 5_000


@pytest.fixture(scope="module")
def session() -> Iterator[Session]:
    cluster = new_cluster(5)
    cd.install(cluster)
    s = cluster.connect()
    for ks in (KS, ODD):
        s.execute(f"DROP KEYSPACE IF EXISTS {ks}")
        s.execute(f"CREATE KEYSPACE {ks} WITH replication = "
                  "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    s.execute(f"CREATE TABLE {KS}.big (p int, c int, v text, PRIMARY KEY (p, c))")
    ps = s.prepare(f"INSERT INTO {KS}.big (p, c, v) VALUES (?, ?, ?)")
    r = np.arange(ROWS)
    result = cd.insert_columns(s, ps, {"p": (r // 10).astype(np.int32),
                                       "c": (r % 10).astype(np.int32),
                                       "v": [f"value {x}" for x in r.tolist()]},
                               batch_by_partition=True)
    assert not result.failures
    s.execute(f"CREATE TABLE {KS}.small (k int PRIMARY KEY, a int, b text)")
    s.execute(f"CREATE TABLE {ODD}.\"SrcTable\" ({ODD_COLUMNS})")
    insert = s.prepare(f'INSERT INTO {ODD}."SrcTable" ("Key", "select", "a b", "q""t", "ünï", '
                       'key, "Value") VALUES (?, ?, ?, ?, ?, ?, ?)')
    for i in range(60):
        s.execute(insert, (i % 7, i, f"row {i}" if i % 5 else None, i * 3, f"é{i}", -i, i / 4))
    yield s
    for ks in (KS, ODD):
        s.execute(f"DROP KEYSPACE IF EXISTS {ks}")
    cluster.shutdown()


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("CQLCODEC_DEBUG", None)
    env.pop("CQLCODEC_PASSWORD", None)
    env.update(extra or {})
    return env


def _server() -> list[str]:
    host, _, port = ADDRESS.rpartition(":")
    return ["--host", host or "127.0.0.1", "--port", port or "9042", "--timeout", "30"]


def cli(*args: str, stdin: bytes | None = None, env: dict[str, str] | None = None,
        cwd: Path = ROOT) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "cqlcodec", *args, *_server()],
                          capture_output=True, input=stdin, env=_env(env), timeout=300, cwd=cwd)


def _text(proc: subprocess.CompletedProcess[bytes]) -> str:
    return proc.stderr.decode("utf-8", "replace")


def _odd_rows(session: Session, table: str) -> list[tuple[Any, ...]]:
    rows = session.execute(f'SELECT "Key", "select", "a b", "q""t", "ünï", key, "Value" '
                           f"FROM {ODD}.{table}")
    return sorted(tuple(r) for r in rows)


def _fresh_odd(session: Session, name: str) -> str:
    session.execute(f"DROP TABLE IF EXISTS {ODD}.{name}")
    session.execute(f"CREATE TABLE {ODD}.{name} ({ODD_COLUMNS})")
    return f"{ODD}.{name}"


# --------------------------------------------------------------------------- item 1

def _files_hold(root: Path, text: str) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and text.encode() in p.read_bytes()]


def test_a_password_is_never_shown_on_any_path(session: Session, tmp_path: Path) -> None:
    src = tmp_path / "src.csv"
    src.write_text("k,a,b\n1,2,x\n2,notanumber,y\n3,4,z\n")
    bad = tmp_path / "bad_rows.csv"
    out = tmp_path / "out"
    logins = [(["--username", "someone"], {"CQLCODEC_PASSWORD": MARKER}),
              (["--username", "someone", "--password-env", "MY_PW"], {"MY_PW": MARKER})]
    paths: list[tuple[list[str], bytes | None]] = [
        (["count", f"{KS}.small"], None),
        (["count", f"{KS}.big", "--by", "host"], None),
        (["count", f"{KS}.nope"], None),
        (["unload", f"{KS}.small", "-o", str(out)], None),
        (["unload", f"{KS}.small", "-o", str(out), "--resume"], None),
        (["unload", f"{KS}.small", "-o", "-", "--format", "csv"], None),
        (["unload", f"{KS}.small", "-o", str(tmp_path / "o2"), "--where", "nonsense"], None),
        (["load", f"{KS}.small", str(src), "--max-errors", "5", "--bad-rows", str(bad)], None),
        (["load", f"{KS}.small", str(src)], None),
        (["load", f"{KS}.small", str(src), "--dry-run"], None),
        (["load", f"{KS}.small", "-", "--format", "csv"], b"k,a,b\n9,9,q\n"),
    ]
    for login, env in logins:
        for args, stdin in paths:
            proc = cli(*args, *login, stdin=stdin, env=env, cwd=tmp_path)
            assert proc.returncode in (0, 1, 3), (args, _text(proc))
            assert MARKER.encode() not in proc.stdout + proc.stderr, args
            # the server has no authenticator: said once, not once per connection
            assert _text(proc).count("asked for no authentication") == 1, (args, _text(proc))
    assert bad.exists() and (out / "_manifest.json").exists()
    assert _files_hold(tmp_path, MARKER) == []


# --------------------------------------------------------------------------- item 3

def test_a_refused_where_on_unload_exits_3_and_leaves_nothing(session: Session,
                                                              tmp_path: Path) -> None:
    out = tmp_path / "out"
    for args in (["--where", "v = 'x' AND nonsense"], ["--where", "no_such_column = 1"],
                 ["--columns", "p,nope"], ["--format", "csv", "--columns", '"P"']):
        proc = cli("unload", f"{KS}.big", "-o", str(out), *args)
        assert proc.returncode == 3, (args, _text(proc))
        assert "--resume" not in _text(proc) and not out.exists()
    proc = cli("unload", f"{KS}.nope", "-o", str(out))
    assert proc.returncode == 3 and not out.exists()
    out.mkdir()  # an empty directory given stays empty
    proc = cli("unload", f"{KS}.big", "-o", str(out), "--where", "nonsense")
    assert proc.returncode == 3 and list(out.iterdir()) == []
    proc = cli("unload", f"{KS}.big", "-o", "-", "--format", "csv", "--where", "nonsense")
    assert proc.returncode == 3 and proc.stdout == b""
    proc = cli("unload", f"{KS}.big", "-o", str(out), "--where", "v = 'value 7'")
    assert proc.returncode == 0, _text(proc)  # the corrected command just works
    assert json.loads((out / "_manifest.json").read_text())["done"]


# --------------------------------------------------------------------------- item 7

def test_the_row_estimate_counts_rows_not_partitions(session: Session) -> None:
    # a split that claims the server's partition estimate: 5,000 partitions of 10 rows
    whole = [TokenSplit(MIN_TOKEN, MAX_TOKEN, (), PARTITIONS, 0)]
    seen: list[int] = []
    scan = cd.scan_table(session, f"{KS}.big", splits=whole, fetch_size=2000,
                         progress=lambda p: seen.append(p.estimated_rows))
    assert sum(len(b) for b in scan) == ROWS
    assert 0.9 * ROWS <= seen[0] <= 1.05 * ROWS, seen[:3]
    # columns without the partition key: the finished splits tell
    estimate = RowEstimate(PARTITIONS, clustered=True)
    for batch in cd.read_split(session, f"{KS}.big", whole[0], ["v"]):
        sample_page(estimate, batch, ["p"])
    assert estimate.rows is None
    estimate.split_done(ROWS, PARTITIONS)
    assert estimate.rows == ROWS


# --------------------------------------------------------------------------- item 8

def test_a_closed_stdout_exits_141_quietly(session: Session) -> None:
    for fmt in ("csv", "jsonl"):
        child = subprocess.Popen([sys.executable, "-m", "cqlcodec", "unload", f"{KS}.big",
                                  "-o", "-", "--format", fmt, *_server()],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(),
                                 cwd=ROOT)
        assert child.stdout is not None and child.stderr is not None
        first = child.stdout.readline(), child.stdout.readline()
        assert all(first)
        child.stdout.close()  # what `| head -2` does
        stderr = child.stderr.read().decode()
        assert child.wait(timeout=120) == 141, stderr
        assert "Traceback" not in stderr and "Exception ignored" not in stderr
        assert "unloaded" not in stderr  # no summary claiming rows nobody read


# --------------------------------------------------------------------------- item 9

def test_a_malformed_csv_line_is_named_by_its_line(session: Session, tmp_path: Path) -> None:
    src = tmp_path / "bad.csv"
    src.write_text("k,a,b\n1,2,x\n2,3,y\n3,4,z,extra\n4,5,w\n")
    proc = cli("load", f"{KS}.small", str(src))
    assert proc.returncode == 3 and f"{src}:4:" in _text(proc), _text(proc)
    with pytest.raises(cd.LoadError) as info:
        cd.load_table(session, f"{KS}.small", str(src))
    assert info.value.line == 4 and info.value.source == str(src)
    src.write_text("k,a,b\n1,2,x\n2,three,y\n")
    with pytest.raises(cd.LoadError) as info:
        cd.load_table(session, f"{KS}.small", str(src))
    assert info.value.line == 3 and 'column "a"' in str(info.value)
    proc = cli("load", f"{KS}.small", "-", stdin=b"k,a,b\n1,2,x\n")
    assert proc.returncode == 2 and "--format" in _text(proc)


@pytest.mark.parametrize("chunk_rows", [1, 100])
def test_a_refused_json_line_is_named_by_its_line(session: Session, tmp_path: Path,
                                                  chunk_rows: int) -> None:
    """A JSON lines value that cannot be read (a date) or bound (an int) names its file
    and line, as CSV does, whatever chunk its row falls in."""
    session.execute(f"CREATE TABLE IF NOT EXISTS {KS}.dated (k int PRIMARY KEY, a int, d date)")
    src = tmp_path / "bad.jsonl"
    good = '{"k": 1, "a": 2}\n\n{"k": 2, "a": 3}\n'
    for bad, column in (('{"k": 3, "a": "three"}', "a"), ('{"k": 3, "d": "today"}', "d")):
        src.write_text(good + bad + "\n")
        with pytest.raises(cd.LoadError) as info:
            cd.load_table(session, f"{KS}.dated", str(src), chunk_rows=chunk_rows)
        assert (info.value.line, info.value.row, info.value.column) == (4, 2, column)
        assert str(info.value).startswith(f"{src}:4, row 2, ")
    proc = cli("load", f"{KS}.dated", str(src))
    assert proc.returncode == 3 and f"{src}:4" in _text(proc), _text(proc)


# --------------------------------------------------------------------------- item 12

CHOSEN = '"Key","select","a b","q""t",ünï,KEY,"Value"'


@pytest.mark.parametrize("fmt", ["parquet", "csv", "arrow", "jsonl"])
def test_case_sensitive_names_through_unload_and_load(session: Session, tmp_path: Path,
                                                      fmt: str) -> None:
    src = f'{ODD}."SrcTable"'
    out = tmp_path / "out"
    proc = cli("unload", src, "-o", str(out), "--format", fmt, "--columns", CHOSEN,
               "--where", '"q""t" >= 0', "--writetime")
    assert proc.returncode == 0, _text(proc)
    dst = _fresh_odd(session, f'"Dst{fmt.title()}"')
    proc = cli("load", dst, str(out))
    assert proc.returncode == 0, _text(proc)
    assert _odd_rows(session, f'"Dst{fmt.title()}"') == _odd_rows(session, '"SrcTable"')
    proc = cli("count", dst)
    assert proc.returncode == 0 and proc.stdout.strip() == b"60"


def test_case_sensitive_names_in_count_stdout_and_messages(session: Session) -> None:
    src = f'{ODD}."SrcTable"'
    assert cli("count", src).stdout.strip() == b"60"
    proc = cli("count", src, "--where", '"a b" = \'row 7\'')
    assert proc.returncode == 0 and proc.stdout.strip() == b"1"
    proc = cli("count", src, "--by", "partition", "--json", "--top", "2")
    groups = json.loads(proc.stdout)["groups"]
    assert proc.returncode == 0 and len(groups) == 2 and "Key" in groups[0]["key"]
    dst = _fresh_odd(session, '"Piped"')
    unload = cli("unload", src, "-o", "-", "--format", "jsonl", "--columns", CHOSEN)
    assert unload.returncode == 0, _text(unload)
    proc = cli("load", dst, "-", "--format", "jsonl", "--columns", 'Key,select,"a b",key',
               stdin=unload.stdout)
    assert proc.returncode == 0, _text(proc)
    got = sorted(tuple(r) for r in session.execute(f'SELECT "Key", "select", "a b", key '
                                                   f'FROM {dst}'))
    assert got == [r[:3] + (r[5],) for r in _odd_rows(session, '"SrcTable"')]
    # unquoted names fold to lower case; the message writes them as CQL would
    proc = cli("count", f"{ODD_KS}.SrcTable")
    assert proc.returncode == 3
    assert f'unknown keyspace {ODD_KS.lower()}' in _text(proc)
    assert f'did you mean "{ODD_KS}"' in _text(proc)
    proc = cli("count", f"{ODD}.srctable")
    assert proc.returncode == 3 and 'did you mean "SrcTable"' in _text(proc)
    proc = cli("unload", src, "-o", "-", "--format", "csv", "--columns", '"KEY"')
    assert proc.returncode == 3
    assert 'unknown column(s) "KEY"' in _text(proc) and '"q""t"' in _text(proc)


def test_case_sensitive_names_in_the_python_apis(session: Session) -> None:
    src = f'{ODD}."SrcTable"'
    names = ['"Key"', "select", '"a b"', 'q"t', '"ünï"', "key"]
    table = cd.scan_table(session, src, names, where='"Key" = 3').to_arrow()
    assert table.column_names == ["Key", "select", "a b", 'q"t', "ünï", "key"]
    assert table.num_rows == len([r for r in _odd_rows(session, '"SrcTable"') if r[0] == 3])
    with pytest.raises(cd.ScanError, match='unknown column.*"KEY"'):
        cd.scan_table(session, src, ['"KEY"'])

    async def scan() -> int:
        rows = 0
        async with aio.scan_table(session, src, ['"a b"', "Key"]) as batches:
            async for batch in batches:
                assert batch.names == ("a b", "key")
                rows += len(batch)
        return rows

    assert asyncio.run(scan()) == 60
    dst = _fresh_odd(session, '"FromApi"')
    result = cd.load_table(session, dst, table.select(["Key", "select", "a b"]))
    assert result.written == table.num_rows
    assert asyncio.run(aio.load_table(session, dst, table)).written == table.num_rows
    assert session.execute(f"SELECT count(*) FROM {dst}").one()[0] == table.num_rows


def test_case_sensitive_names_in_dask(session: Session) -> None:
    dd = pytest.importorskip("dask.dataframe")
    del dd
    import cqlcodec.dask

    host, _, port = ADDRESS.rpartition(":")
    connect = {"contact_points": [host or "127.0.0.1"], "port": int(port or 9042),
               "protocol_version": 5}
    ddf = cqlcodec.dask.read_table(connect, f'{ODD}."SrcTable"', ['"a b"', "select", '"Key"'],
                                   splits=3, split_rows=None)
    frame = ddf.compute(scheduler="synchronous")
    assert list(frame.columns) == ["a b", "select", "Key"] and len(frame) == 60
