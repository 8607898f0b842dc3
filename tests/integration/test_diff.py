"""``diff_tables`` and ``python -m cqlcodec diff`` against the real server: planted
differences are each found exactly once and nothing else is; a table taking writes
during ``--recheck`` is not reported; ``--fix`` makes the target equal without undoing a
newer write; a diff killed part way and resumed reports the same set; two clusters."""

from __future__ import annotations

import json
import os
import pickle
import random
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from cassandra.cluster import Session

import cqlcodec.driver as cd
from cqlcodec.driver.splits import table_ref

from .conftest import ADDRESS, keyspace_session
from .test_load_unload import ROOT, cli

pytest.importorskip("pyarrow")

KS = "cqlcodec_diff"
KINDS = ("k int, c int, s text static, i int, bi bigint, t text, b blob, u uuid, ts timestamp, "
         "d decimal, vi varint, f float, db double, bo boolean, dt date, tm time, ip inet, "
         "l list<int>, st set<text>, m map<text, int>, fl frozen<list<int>>, "
         "tu tuple<int, text>, ud frozen<pt>, nu pt, vec vector<float, 3>, du duration, "
         "PRIMARY KEY (k, c)")
# a new value (CQL literal) per value column: one row each is changed in the target
CHANGES = {"i": "-1", "bi": "-1", "t": "'changed'", "b": "0xff",
           "u": "00000000-0000-0000-0000-0000000000ff", "ts": "99", "d": "0.5", "vi": "-5",
           "f": "-0.5", "db": "-0.25", "bo": "false", "dt": "'1999-01-01'",
           "tm": "'01:00:00'", "ip": "'::1'", "l": "[7]", "st": "{'z'}", "m": "{'y': 1}",
           "fl": "[7, 7]", "tu": "(0, 'y')", "ud": "{x: -1, y: 1}", "nu": "{x: -1, y: 2}",
           "vec": "[9, 9, 9]", "du": "1d"}
PARTITIONS = 40


@pytest.fixture(scope="module")
def session() -> Iterator[Session]:
    """A keyspace of its own with the UDT of the tables here."""
    yield from keyspace_session(KS, f"CREATE TYPE {KS}.pt (x int, y int)")


@pytest.fixture(scope="module")
def second(second_session: Session) -> Iterator[Session]:
    """The second cluster's session (conftest's ``second_session``) with this module's
    keyspace."""
    for cql in (f"DROP KEYSPACE IF EXISTS {KS}",
                f"CREATE KEYSPACE {KS} WITH replication = "
                "{'class': 'SimpleStrategy', 'replication_factor': 1}",
                f"CREATE TYPE {KS}.pt (x int, y int)"):
        second_session.execute(cql)
    yield second_session
    second_session.execute(f"DROP KEYSPACE IF EXISTS {KS}")


def fresh(session: Session, name: str, columns: str = KINDS) -> str:
    session.execute(f"DROP TABLE IF EXISTS {KS}.{name}")
    session.execute(f"CREATE TABLE {KS}.{name} ({columns})")
    return f"{KS}.{name}"


def literals(k: int, c: int) -> dict[str, str]:
    """The CQL literals of row (k, c) of the kinds table."""
    n = k * 10 + c
    return {"k": str(k), "c": str(c), "s": f"'s{k}'", "i": str(n), "bi": str(n * 10 ** 9),
            "t": f"'t{n}'", "b": f"0x{n:04x}", "u": str(uuid.UUID(int=n + 1)),
            "ts": str(n * 1000), "d": f"{n}.25", "vi": str(n * 10 ** 20), "f": f"{n}.5",
            "db": f"{n}.25", "bo": "true" if n % 2 == 0 else "false",
            "dt": f"'2024-01-{1 + n % 28:02d}'", "tm": f"'10:00:{n % 60:02d}.000000001'",
            "ip": f"'10.0.{k}.{c}'", "l": f"[{n}, {n + 1}]", "st": f"{{'a{n}', 'b'}}",
            "m": f"{{'x': {n}}}", "fl": f"[{n}]", "tu": f"({n}, 'x')",
            "ud": f"{{x: {n}, y: 1}}", "nu": f"{{x: {n}, y: 2}}", "vec": f"[{n}, 1.5, 2.5]",
            "du": f"{n}h"}


def insert(session: Session, table: str, values: dict[str, str], using: str) -> None:
    session.execute(f"INSERT INTO {table} ({', '.join(values)}) VALUES "
                    f"({', '.join(values.values())}) USING {using}")


def fill_kinds(session: Session, table: str, partitions: int = PARTITIONS) -> None:
    """Three rows a partition, every kind set, written at time 2000."""
    for k in range(partitions):
        for c in range(3):
            insert(session, table, literals(k, c), "TIMESTAMP 2000")


def copy(source: Session, src: str, target: Session, dst: str) -> None:
    """The target made a copy of the source with the existing APIs: a scan with write
    times and TTLs, loaded (counter tables: as increments)."""
    counters = "counter" in {str(c.cql_type) for c in
                             table_ref(source, src).metadata.columns.values()}
    table = cd.scan_table(source, src, writetime=not counters, ttl=not counters).to_arrow()
    cd.load_table(target, dst, table)


def found(differences: Iterable[cd.Difference]) -> list[tuple[str, str, tuple[str, ...]]]:
    """(kind, key, sorted columns) of each difference, sorted."""
    return sorted((d.kind, json.dumps(d.key, sort_keys=True), tuple(sorted(d.columns)))
                  for d in differences)


def key(**values: int) -> str:
    return json.dumps(values, sort_keys=True)


# --------------------------------------------------------------------------- planted

@pytest.fixture(scope="module")
def planted(session: Session) -> tuple[str, str, list[tuple[str, str, tuple[str, ...]]]]:
    """A kinds table, its copy with differences planted, and the value differences
    expected (without write times and TTLs)."""
    src, dst = fresh(session, "kinds_src"), fresh(session, "kinds_dst")
    fill_kinds(session, src)
    insert(session, src, {"k": "31", "c": "0", "t": "'lives'"}, "TIMESTAMP 2500 AND TTL 100000")
    insert(session, src, {"k": "45", "c": "0", "i": "1"}, "TIMESTAMP 2000")  # l, fl null
    # a partition whose rows were deleted and whose static cell lives on (CDM issue 301)
    session.execute(f"DELETE FROM {src} WHERE k = 38 AND c IN (0, 1, 2)")
    copy(session, src, session, dst)
    expected: list[tuple[str, str, tuple[str, ...]]] = [
        ("missing", key(k=1, c=1), ()), ("extra", key(k=1000, c=0), ())]
    session.execute(f"DELETE FROM {dst} WHERE k = 1 AND c = 1")
    session.execute(f"INSERT INTO {dst} (k, c, i) VALUES (1000, 0, 5)")
    for j, (column, literal) in enumerate(CHANGES.items()):
        session.execute(f"UPDATE {dst} USING TIMESTAMP 3000 SET {column} = {literal} "
                        f"WHERE k = {2 + j} AND c = 0")
        expected.append(("differs", key(k=2 + j, c=0), (column,)))
    # the same value at another time; TTLs of another length
    session.execute(f"UPDATE {dst} USING TIMESTAMP 5000 SET i = 32 WHERE k = 3 AND c = 2")
    session.execute(f"UPDATE {dst} USING TIMESTAMP 2600 AND TTL 50000 SET t = 'lives' "
                    "WHERE k = 31 AND c = 0")
    session.execute(f"UPDATE {dst} USING TIMESTAMP 3000 SET s = 'other' WHERE k = 35")
    expected.append(("differs", key(k=35), ("s",)))
    session.execute(f"DELETE FROM {dst} WHERE k = 36")
    expected += [("missing", key(k=36, c=c), ()) for c in range(3)]
    # null against an empty collection: equal
    session.execute(f"UPDATE {dst} USING TIMESTAMP 3000 SET l = [], fl = [] "
                    "WHERE k = 45 AND c = 0")
    return src, dst, sorted(expected)


def test_planted_differences_are_each_found_once(
        session: Session, planted: tuple[str, str, list[Any]]) -> None:
    src, dst, expected = planted
    diff = cd.diff_tables(session, src, session, dst, splits=16, concurrency=3,
                          fetch_size=7)
    got = found(diff)
    assert got == expected
    assert (diff.missing, diff.extra, diff.differs) == (4, 1, len(CHANGES) + 1)
    assert diff.source_rows == PARTITIONS * 3 - 1 and not diff.equal


def test_write_times_and_ttls_beyond_tolerance(
        session: Session, planted: tuple[str, str, list[Any]]) -> None:
    """The write time changed alone, and the TTL shortened by half, are each found once
    more; TTLs that merely counted down during the copy are within the tolerance."""
    src, dst, expected = planted
    diff = cd.diff_tables(session, src, session, dst, writetime=True, ttl=True,
                          ttl_tolerance=60)
    extra = [("differs", key(k=3, c=2), ("writetime(i)",)),
             ("differs", key(k=31, c=0), ("ttl(t)", "writetime(t)"))]
    assert found(diff) == sorted(expected + extra)
    ttls = cd.diff_tables(session, src, session, dst, ttl=True, ttl_tolerance=60)
    assert found(ttls) == sorted([*expected, ("differs", key(k=31, c=0), ("ttl(t)",))])
    close = cd.diff_tables(session, src, session, dst, ttl=True, ttl_tolerance=60000)
    assert found(close) == expected


def test_cli_report_and_exit_status(session: Session, planted: tuple[str, str, list[Any]],
                                    tmp_path: Path) -> None:
    src, dst, expected = planted
    report = tmp_path / "report.jsonl"
    done = cli("diff", src, dst, "--report", str(report), "--splits", "5")
    assert done.returncode == 1, done.stderr
    lines = [json.loads(line) for line in report.read_text().splitlines()]
    got = sorted((d["kind"], json.dumps(d["key"], sort_keys=True),
                  tuple(sorted(d.get("columns", {})))) for d in lines)
    assert got == expected
    changed = next(d for d in lines if d["key"] == {"k": 2, "c": 0})
    assert changed["columns"] == {"i": {"source": 20, "target": -1}}
    assert f"{PARTITIONS * 3 - 1} source rows" in done.stderr and "4 missing" in done.stderr
    same = cli("diff", src, src, "--to-host", "127.0.0.1", "-q", "--where", "c = 1",
               "--rate", "5000")
    assert same.returncode == 0 and same.stderr == "", same.stderr
    bad = cli("diff", src, f"{KS}.nowhere")
    assert bad.returncode == 3 and "nowhere" in bad.stderr


def test_where_restricts_both_sides_and_rate(
        session: Session, planted: tuple[str, str, list[Any]]) -> None:
    """``where`` filters both tables alike (a clustering condition: the planted
    differences of the rows ``c = 1`` and the partitions' static cells); ``rate``
    spaces the pages of each side and finds the same; what cannot be compared is
    refused before any read."""
    src, dst, expected = planted
    kept = [e for e in expected if json.loads(e[1]).get("c", 1) == 1]
    assert len(kept) == 3
    diff = cd.diff_tables(session, src, session, dst, where="c = 1", splits=5)
    assert found(diff) == kept and diff.source_rows == PARTITIONS - 1
    started = time.monotonic()
    paced = cd.diff_tables(session, src, session, dst, rate=400, splits=3)
    assert found(paced) == expected
    # 119 rows a side at 400 rows/s, the first piece (40 rows) at once
    assert time.monotonic() - started >= (PARTITIONS * 3 - 1 - 40) / 400
    with pytest.raises(cd.DiffError, match="delete_extra"):
        cd.diff_tables(session, src, session, dst, where="c = 1", delete_extra=True)
    narrow = fresh(session, "narrow", "k int, c int, i int, PRIMARY KEY (k, c)")
    with pytest.raises(cd.DiffError, match="^the target: .*t"):
        cd.diff_tables(session, src, session, narrow, columns=["i"], where="t = 'x'")
    with pytest.raises(cd.DiffError, match="fix_counters"):
        cd.diff_tables(session, src, session, dst, fix_counters=True)


def test_key_only_counter_and_big_blob_tables(session: Session) -> None:
    src, dst = fresh(session, "keys_src", "k int, c int, PRIMARY KEY (k, c)"), \
        fresh(session, "keys_dst", "k int, c int, PRIMARY KEY (k, c)")
    for k in range(30):
        session.execute(f"INSERT INTO {src} (k, c) VALUES ({k}, {k % 3})")
    copy(session, src, session, dst)
    session.execute(f"DELETE FROM {dst} WHERE k = 4 AND c = 1")
    session.execute(f"INSERT INTO {dst} (k, c) VALUES (4, 2)")
    assert found(cd.diff_tables(session, src, session, dst)) == [
        ("extra", key(k=4, c=2), ()), ("missing", key(k=4, c=1), ())]

    columns = "k int PRIMARY KEY, hits counter, misses counter"
    src, dst = fresh(session, "counts_src", columns), fresh(session, "counts_dst", columns)
    for k in range(20):
        session.execute(f"UPDATE {src} SET hits = hits + {k}, misses = misses + 1 WHERE k = {k}")
    copy(session, src, session, dst)
    session.execute(f"UPDATE {dst} SET hits = hits + 1 WHERE k = 7")
    # a row missing, a row with a null counter in the source, one null in the target
    session.execute(f"UPDATE {src} SET hits = hits + 3, misses = misses + 1 WHERE k = 50")
    session.execute(f"UPDATE {src} SET hits = hits + 5 WHERE k = 40")
    session.execute(f"UPDATE {dst} SET misses = misses + 2 WHERE k = 40")
    session.execute(f"UPDATE {src} SET misses = misses + 4 WHERE k = 41")
    session.execute(f"UPDATE {dst} SET hits = hits + 1, misses = misses + 1 WHERE k = 41")
    diff = cd.diff_tables(session, src, session, dst)
    assert sorted(((d.kind, d.key, d.columns) for d in diff), key=lambda d: d[1]["k"]) == [
        ("differs", {"k": 7}, {"hits": (7, 8)}),
        ("differs", {"k": 40}, {"hits": (5, None), "misses": (None, 2)}),
        ("differs", {"k": 41}, {"hits": (None, 1), "misses": (4, 1)}),
        ("missing", {"k": 50}, {})]
    with pytest.raises(cd.DiffError, match="fix_counters"):
        cd.diff_tables(session, src, session, dst, fix=True)
    with pytest.raises(cd.DiffError, match="deleted counter"):
        cd.diff_tables(session, src, session, dst, fix=True, fix_counters=True,
                       delete_extra=True)
    fixed = cd.diff_tables(session, src, session, dst, fix=True, fix_counters=True).run()
    assert fixed.fixed == 4
    # a counter null in the source and set in the target can only be brought to 0
    left = cd.diff_tables(session, src, session, dst)
    assert sorted(((d.key, d.columns) for d in left), key=lambda d: d[0]["k"]) == [
        ({"k": 40}, {"misses": (None, 0)}), ({"k": 41}, {"hits": (None, 0)})]
    assert tuple(session.execute(f"SELECT hits, misses FROM {dst} WHERE k = 50").one()) == (3, 1)

    columns = "k int PRIMARY KEY, b blob"
    src, dst = fresh(session, "blobs_src", columns), fresh(session, "blobs_dst", columns)
    big = os.urandom(2 * 1024 * 1024)
    ps = session.prepare(f"INSERT INTO {src} (k, b) VALUES (?, ?)")
    for k in range(3):
        session.execute(ps, (k, big))
    copy(session, src, session, dst)
    changed = big[:-1] + bytes([big[-1] ^ 1])
    session.execute(session.prepare(f"UPDATE {dst} SET b = ? WHERE k = 1"), (changed,))
    assert found(cd.diff_tables(session, src, session, dst)) == [("differs", key(k=1), ("b",))]


# --------------------------------------------------------------------------- fix

def test_fix_makes_the_target_equal_but_keeps_a_newer_write(session: Session) -> None:
    src, dst = fresh(session, "fix_src"), fresh(session, "fix_dst")
    fill_kinds(session, src, 20)
    insert(session, src, {"k": "3", "c": "0", "t": "'lives'"}, "TIMESTAMP 2500 AND TTL 100000")
    copy(session, src, session, dst)
    # the target: an extra row, an extra partition of static cells alone, and a newer
    # write (which must survive)
    session.execute(f"INSERT INTO {dst} (k, c, i) VALUES (500, 0, 1) USING TIMESTAMP 1500")
    session.execute(f"INSERT INTO {dst} (k, s) VALUES (501, 'x') USING TIMESTAMP 1500")
    session.execute(f"UPDATE {dst} USING TIMESTAMP 9000 SET t = 'newer' WHERE k = 2 AND c = 2")
    # the source moves on after the copy: values, a list appended to, a cell deleted,
    # a static cell, a new partition
    session.execute(f"UPDATE {src} USING TIMESTAMP 3000 SET t = 'moved', f = 9.5 "
                    "WHERE k = 4 AND c = 0")
    session.execute(f"UPDATE {src} USING TIMESTAMP 3000 SET l = l + [99] WHERE k = 5 AND c = 1")
    session.execute(f"DELETE i FROM {src} USING TIMESTAMP 3000 WHERE k = 6 AND c = 2")
    session.execute(f"UPDATE {src} USING TIMESTAMP 3000 SET s = 'moved' WHERE k = 7")
    insert(session, src, literals(60, 0), "TIMESTAMP 3000")
    # a partition of static cells alone, missing from the target
    session.execute(f"INSERT INTO {src} (k, s) VALUES (61, 'alone') USING TIMESTAMP 3000 "
                    "AND TTL 90000")
    before = cd.diff_tables(session, src, session, dst, fix=True, delete_extra=True)
    before.chunk_size = 2  # fixed two at a time: partitions split between chunks too
    listed = found(before)
    assert len(listed) == 9, listed
    assert ("missing", key(k=61), ()) in listed
    assert (before.fixed, before.deleted) == (7, 2)
    after = found(cd.diff_tables(session, src, session, dst, writetime=True, ttl=True,
                                 ttl_tolerance=60))
    # a list whose elements have different write times is written whole at the latest
    # (cqlcodec.driver.list_repeats): its values are equal, its element times are not
    assert after == sorted([("differs", key(k=2, c=2), ("t",)),
                            ("differs", key(k=5, c=1), ("writetime(l)",))])
    kept = session.execute(f"SELECT t, writetime(t) FROM {dst} WHERE k = 2 AND c = 2").one()
    assert tuple(kept) == ("newer", 9000)
    listed = session.execute(f"SELECT l FROM {dst} WHERE k = 5 AND c = 1").one()
    assert list(listed[0]) == [51, 52, 99]


# --------------------------------------------------------------------------- live writes

def test_recheck_drops_what_a_live_writer_changed(session: Session) -> None:
    """A writer updates 1% of the rows on the source and, 30 ms later, on the target
    (a migration's dual writes) while the diff runs: the recheck finds them converged;
    the one real difference stays."""
    columns = "k int PRIMARY KEY, v int, t text"
    src, dst = fresh(session, "live_src", columns), fresh(session, "live_dst", columns)
    ps = session.prepare(f"INSERT INTO {src} (k, v, t) VALUES (?, ?, 'x')")
    rows = 3000
    for k in range(rows):
        session.execute_async(ps, (k, k))
    time.sleep(1)
    copy(session, src, session, dst)
    session.execute(f"DELETE FROM {dst} WHERE k = 17")
    stop = threading.Event()
    written: list[int] = []
    update = {t: session.prepare(f"UPDATE {t} SET v = ? WHERE k = ?") for t in (src, dst)}

    def write() -> None:
        chosen = random.Random(4).sample([k for k in range(rows) if k != 17], rows // 100)
        while not stop.is_set():
            for k in chosen:  # a whole pass each time: 1% of the rows
                session.execute(update[src], (k + len(written) + 10 ** 6, k))
                time.sleep(0.03)
                session.execute(update[dst], (k + len(written) + 10 ** 6, k))
                written.append(k)

    def pause(p: cd.DiffProgress) -> None:
        if p.phase == "rechecking":  # the writer ends its pass during the pause
            stop.set()

    writer = threading.Thread(target=write)
    writer.start()
    try:
        while len(written) < 5:
            time.sleep(0.01)
        diff = cd.diff_tables(session, src, session, dst, recheck=True, recheck_after=4,
                              concurrency=2, fetch_size=50, splits=30, progress=pause)
        diff.chunk_size = 7  # rechecked a few at a time, as a table with many would be
        got = found(diff)
    finally:
        stop.set()
        writer.join()
    assert len(written) >= rows // 100
    assert got == [("missing", key(k=17), ())]
    assert diff.differences == 1


# --------------------------------------------------------------------------- resume

def test_killed_diff_resumes_with_the_same_report(session: Session, tmp_path: Path) -> None:
    src, dst = fresh(session, "resume_src"), fresh(session, "resume_dst")
    fill_kinds(session, src, 60)
    copy(session, src, session, dst)
    for k in range(0, 60, 7):
        session.execute(f"UPDATE {dst} USING TIMESTAMP 3000 SET t = 'x' WHERE k = {k} AND c = 1")
        session.execute(f"DELETE FROM {dst} WHERE k = {k + 1} AND c = 2")
    whole = tmp_path / "whole.jsonl"
    assert cli("diff", src, dst, "--report", str(whole)).returncode == 1
    host, _, port = ADDRESS.rpartition(":")
    state, part = tmp_path / "state", tmp_path / "part.jsonl"
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, "-m", "cqlcodec", "diff", src, dst, "--state",
                             str(state), "--splits", "60", "--concurrency", "1",
                             "--fetch-size", "1", "--report", str(part), "--host",
                             host or "127.0.0.1", "--port", port or "9042"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT)
    done = state / "diff-done.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if done.exists() and len(done.read_text().splitlines()) >= 3:
            break
        time.sleep(0.02)
    assert proc.poll() is None, "the diff ended before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    finished = len(done.read_text().splitlines())
    plan = json.loads((state / "diff-plan.json").read_text())
    assert 3 <= finished < len(plan["splits"])
    again = cli("diff", src, dst, "--state", str(state))
    assert again.returncode == 3 and "--resume" in again.stderr, again.stderr
    again = cli("diff", src, dst, "--state", str(state), "--resume", "--report", str(part))
    assert again.returncode == 1, again.stderr
    assert sorted(part.read_text().splitlines()) == sorted(whole.read_text().splitlines())
    assert len(whole.read_text().splitlines()) == 18


# --------------------------------------------------------------------------- two clusters

def test_diff_across_two_clusters(session: Session, second: Session,
                                  tmp_path: Path) -> None:
    src = fresh(session, "across")
    dst = fresh(second, "across")
    fill_kinds(session, src, 10)
    copy(session, src, second, dst)
    second.execute(f"UPDATE {dst} USING TIMESTAMP 3000 SET m = {{'q': 1}} "
                   "WHERE k = 3 AND c = 1")
    insert(session, src, literals(70, 0), "TIMESTAMP 3000")
    host, _, port = os.environ["CQLCODEC_CASSANDRA_SECOND"].rpartition(":")
    report = tmp_path / "across.jsonl"
    done = cli("diff", src, dst, "--to-host", host or "127.0.0.1", "--to-port", port,
               "--report", str(report), "--writetime", "--ttl")
    assert done.returncode == 1, done.stderr
    lines = [json.loads(line) for line in report.read_text().splitlines()]
    assert sorted((d["kind"], json.dumps(d["key"]), list(d.get("columns", {})))
                  for d in lines) == [("differs", '{"k": 3, "c": 1}', ["m"]),
                                      ("missing", '{"k": 70, "c": 0}', [])]
    fixed = cd.diff_tables(session, src, second, dst, fix=True).run()
    assert fixed.fixed == 2
    # the target's map was written later than the source's: it wins, as it should
    assert found(cd.diff_tables(session, src, second, dst, writetime=True)) == [
        ("differs", key(k=3, c=1), ("m",))]


# --------------------------------------------------------------------------- Dask

def test_dask_diff_over_workers(session: Session, planted: tuple[str, str, list[Any]],
                                tmp_path: Path) -> None:
    """``cqlcodec.dask.diff_tables`` (local threaded scheduler: each task opens its own
    sessions from the connect spec) finds the same set as the single-process diff,
    resumes from its state directory, rechecks and fixes."""
    dask = pytest.importorskip("dask")
    import cqlcodec.dask

    src, dst, expected = planted
    host, _, port = ADDRESS.rpartition(":")
    connect = {"contact_points": [host or "127.0.0.1"], "port": int(port or "9042"),
               "protocol_version": 5}
    with dask.config.set(scheduler="threads", num_workers=2):
        result = cqlcodec.dask.diff_tables(connect, src, connect, dst, splits=6)
    # what a distributed worker gets travels pickled
    options = cd.diff_read.DiffOptions(None, True, True, 0.0, 1.0, 1, 100, None, None, 5.0,
                                       False, 0.0, False, False)
    spec = cd.Connect.of(connect)
    task = pickle.loads(pickle.dumps(cqlcodec.dask._DiffTask(spec, src, spec, dst, options)))
    assert task.options == options and task.source == spec
    assert found(result.differences) == expected
    assert result.source_rows == PARTITIONS * 3 - 1 and result.count("missing") == 4
    tokens = [d.token for d in result.differences]
    assert tokens == sorted(tokens) and not result.equal
    state = tmp_path / "dask-state"
    with dask.config.set(scheduler="threads", num_workers=2):
        whole = cqlcodec.dask.diff_tables(connect, src, connect, dst, splits=6, state=state,
                                          recheck=True)
        assert found(whole.differences) == expected and whole.converged == 0
        done = state / "diff-done.jsonl"
        assert len(done.read_text().splitlines()) == 6
        # stopped after two splits: the resumed diff reads the other four only
        done.write_text("".join(done.read_text().splitlines(keepends=True)[:2]))
        again = cqlcodec.dask.diff_tables(connect, src, connect, dst, state=state,
                                          resume=True)
        assert found(again.differences) == expected
        assert again.source_rows == result.source_rows
        assert len(done.read_text().splitlines()) == 6
        columns = "k int PRIMARY KEY, v int"
        small, copied = fresh(session, "dask_src", columns), fresh(session, "dask_dst", columns)
        for k in range(10):
            session.execute(f"INSERT INTO {small} (k, v) VALUES ({k}, {k})")
            if k != 4:
                session.execute(f"INSERT INTO {copied} (k, v) VALUES ({k}, {k})")
        fixed = cqlcodec.dask.diff_tables(connect, small, connect, copied, splits=3, fix=True)
        assert (fixed.count("missing"), fixed.fixed) == (1, 1)
        assert cqlcodec.dask.diff_tables(connect, small, connect, copied, splits=3).equal
