"""What arrives is what was there, once: non-frozen lists written again with their write
times (a load run twice and three times, every write timed out once after the server
applied it, an outage mid-load) stay equal to the source's; and nulls written as unset
leave no tombstone (a sparse table through Parquet, CSV, JSON lines, ``insert_columns``
and the Dask sink), unless asked to delete."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from cassandra import WriteTimeout
from cassandra.cluster import Session
from cassandra.query import SimpleStatement

import cqlcodec.driver as cd
import cqlcodec.driver.sender as sender

from .conftest import _host_port, keyspace_session, new_cluster
from .faultproxy import FaultProxy
from .test_load_unload import cli
from .test_outages import proxied

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

KS = "cqlcodec_repeats"
LISTS = ("k int, c int, s list<int> static, l list<int>, lu list<frozen<pt>>, st set<int>, "
         "m map<int, text>, v int, PRIMARY KEY (k, c)")
MULTI = ["s", "l", "lu", "st", "m"]


@pytest.fixture(scope="module")
def session() -> Iterator[Session]:
    """A keyspace of its own, with the UDT the tables here use."""
    yield from keyspace_session(KS, f"CREATE TYPE {KS}.pt (x int, y int)")


def fresh(session: Session, name: str, columns: str = LISTS) -> str:
    session.execute(f"DROP TABLE IF EXISTS {KS}.{name}")
    session.execute(f"CREATE TABLE {KS}.{name} ({columns})")
    return f"{KS}.{name}"


def fill_lists(session: Session, table: str, partitions: int = 12) -> None:
    """Three rows a partition, each written at its own time: whole lists, and in every
    third row a list appended to later (elements of different write times)."""
    for k in range(partitions):
        session.execute(f"UPDATE {table} USING TIMESTAMP {1000 + k} SET s = [{k}, {k + 1}] "
                        f"WHERE k = {k}")
        for c in range(3):
            t = 10_000 + 10 * k + c
            session.execute(
                f"INSERT INTO {table} (k, c, l, lu, st, m, v) VALUES ({k}, {c}, "
                f"[{k}, {c}, {k + c}], [{{x: {k}, y: {c}}}], {{{c}, {k}}}, {{{c}: 'm{k}'}}, "
                f"{k * c}) USING TIMESTAMP {t}")
            if c == 2:
                session.execute(f"UPDATE {table} USING TIMESTAMP {t + 5} SET l = l + [{k * 7}] "
                                f"WHERE k = {k} AND c = {c}")


def lists_and_times(session: Session, table: str) -> dict[tuple[int, int], tuple[Any, ...]]:
    """Per row: each multi-cell value and its element write times, and v with its time."""
    picked = ", ".join(f"{c}, writetime({c})" for c in MULTI)
    rows = session.execute(f"SELECT k, c, {picked}, v, writetime(v) FROM {table}")
    return {(r[0], r[1]): tuple(_plain(x) for x in r[2:]) for r in rows}


def _plain(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    if isinstance(value, dict) or hasattr(value, "items"):
        return sorted((k, _plain(v)) for k, v in value.items())
    if hasattr(value, "_fields"):
        return tuple(value)
    return value


def timed_source(session: Session, name: str = "src") -> tuple[str, Any]:
    table = fresh(session, name)
    fill_lists(session, table)
    return table, cd.scan_table(session, table, writetime=True, ttl=True).to_arrow()


def exact_or_1us_later(got: dict[tuple[int, int], tuple[Any, ...]],
                       want: dict[tuple[int, int], tuple[Any, ...]]) -> None:
    """Every value equal (lists: length and order); every write time exact, a list's
    exact or, where it was sent again, all 1 µs after the source's latest."""
    assert got.keys() == want.keys()
    for row, values in want.items():
        for i, column in enumerate([*MULTI, "v"]):
            value, times = values[2 * i], values[2 * i + 1]
            assert got[row][2 * i] == value, (row, column)
            there = got[row][2 * i + 1]
            if column in ("s", "l", "lu") and isinstance(times, list) and there != times:
                assert there == [max(times) + 1] * len(times), (row, column, there, times)
            else:
                assert there == times, (row, column)


def test_a_timed_load_repeated_three_times_keeps_every_list_exact(session: Session) -> None:
    source, data = timed_source(session)
    target = fresh(session, "thrice")
    expected = lists_and_times(session, source)
    for _ in range(3):
        result = cd.load_table(session, target, data, chunk_rows=7)
        assert result.failures == []
        assert lists_and_times(session, target) == expected


def test_every_write_timing_out_once_after_it_landed_doubles_nothing(
        session: Session, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each request is sent, applied by the server, then reported as a write timeout the
    first time its bytes are seen: the load sends those rows again."""
    source, data = timed_source(session, "src_timeouts")
    target = fresh(session, "timeouts")
    real = sender.send_all
    seen: set[bytes] = set()
    injected = [0]

    def key(statement: Any) -> bytes:
        if isinstance(statement, sender.EncodedBatch):
            return statement.encoded_statements
        return repr((statement.prepared_statement.query_id, statement.values)).encode()

    def timing_out(session_: Session, statements: Sequence[Any], concurrency: int,
                   profile: object) -> sender.Outcomes:
        outcomes = real(session_, statements, concurrency, profile)
        out: sender.Outcomes = []
        for statement, (ok, outcome) in zip(statements, outcomes):
            first = key(statement) not in seen
            seen.add(key(statement))
            if ok and first:
                injected[0] += 1
                out.append((False, WriteTimeout("injected after the write landed", write_type=0)))
            else:
                out.append((ok, outcome))
        return out

    monkeypatch.setattr(sender, "send_all", timing_out)
    result = cd.load_table(session, target, data, chunk_rows=10, retry_timeout=60)
    monkeypatch.undo()
    assert injected[0] > 0
    assert result.failures == []
    exact_or_1us_later(lists_and_times(session, target), lists_and_times(session, source))


def test_lists_exact_through_an_outage_mid_load(session: Session) -> None:
    source, data = timed_source(session, "src_outage")
    data = data.combine_chunks()
    target = fresh(session, "outage")
    chunk = 6
    outages: list[threading.Thread] = []
    with FaultProxy(_host_port(), seed=5) as proxy:
        proxy.latency = 0.005
        cluster = proxied(proxy)

        def batches() -> Iterator[Any]:
            for i, offset in enumerate(range(0, data.num_rows, chunk)):
                if i == 2:
                    outages.append(proxy.outage(5.0))
                yield data.slice(offset, chunk).to_batches()[0]

        try:
            proxied_session = cluster.connect()
            result = cd.load_table(proxied_session, target, batches(), chunk_rows=chunk,
                                   concurrency=4)
            assert len(outages) == 1 and proxy.refused > 0
            assert (result.rows, result.failures) == (data.num_rows, [])
        finally:
            cluster.shutdown()
    exact_or_1us_later(lists_and_times(session, target), lists_and_times(session, source))


def test_a_newer_list_in_the_target_is_left_alone(session: Session) -> None:
    source, data = timed_source(session, "src_newer")
    target = fresh(session, "newer")
    cd.load_table(session, target, data)
    session.execute(f"UPDATE {target} SET l = [42] WHERE k = 0 AND c = 0")  # now: newer
    session.execute(f"INSERT INTO {target} (k, c, l) VALUES (1, 0, [1]) USING TIMESTAMP 5")
    cd.load_table(session, target, data)
    got = lists_and_times(session, target)
    assert got[(0, 0)][2] == [42]
    assert got[(1, 0)][2:4] == lists_and_times(session, source)[(1, 0)][2:4]  # older: replaced


def test_the_command_line_load_run_twice(session: Session, tmp_path: Path) -> None:
    source, _ = timed_source(session, "src_cli")
    target = fresh(session, "cli")
    out = tmp_path / "wt"
    done = cli("unload", source, "-o", str(out), "--writetime", "--ttl")
    assert done.returncode == 0, done.stderr
    for _ in range(2):
        done = cli("load", target, str(out))
        assert done.returncode == 0, done.stderr
    assert lists_and_times(session, target) == lists_and_times(session, source)


def test_a_plain_dask_write_repeated_replaces_lists(session: Session) -> None:
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    import cqlcodec.dask

    target = fresh(session, "dask_lists", "k int PRIMARY KEY, l list<int>, v int")
    frame = pd.DataFrame({"k": range(40),
                          "l": pd.Series([[i, i + 1] for i in range(40)],
                                         dtype=pd.ArrowDtype(pa.list_(pa.int32()))),
                          "v": pd.Series([None if i % 2 else i for i in range(40)],
                                         dtype="Int32")})
    host, port = _host_port()
    connect = {"contact_points": [host], "port": port, "protocol_version": 5}
    for _ in range(2):
        cqlcodec.dask.to_table(dd.from_pandas(frame, npartitions=2), connect, target)
    rows = {r.k: (r.l, r.v) for r in session.execute(f"SELECT k, l, v FROM {target}")}
    assert rows == {i: ([i, i + 1], None if i % 2 else i) for i in range(40)}
    assert tombstones(session, target, 1) == 0


# --------------------------------------------------------------------------- nulls

def tombstones(session: Session, table: str, k: int) -> int:
    """The tombstone cells the server reports reading the partition ``k`` (tracing)."""
    result = session.execute(SimpleStatement(f"SELECT * FROM {table} WHERE k = {k}"),
                             trace=True)
    trace = result.get_query_trace(max_wait_sec=20)
    found = 0
    for event in trace.events:
        match = re.search(r"(\d+) tombstone cells", event.description)
        if match:
            found += int(match.group(1))
    return found


SPARSE = "k int PRIMARY KEY, a int, b text, c list<int>, d double"


def sparse_source(rows: int = 10_000) -> Any:
    """Most cells null: ``a`` set in every row, the others in one row of 50."""
    every = [i % 50 == 0 for i in range(rows)]
    return pa.table({
        "k": pa.array(range(rows), pa.int32()),
        "a": pa.array(range(rows), pa.int32()),
        "b": pa.array([f"b{i}" if e else None for i, e in enumerate(every)]),
        "c": pa.array([[i] if e else None for i, e in enumerate(every)], pa.list_(pa.int32())),
        "d": pa.array([float(i) if e else None for i, e in enumerate(every)], pa.float64())})


@pytest.mark.parametrize("fmt", ["parquet", "csv", "jsonl", "insert_columns", "v3"])
def test_a_sparse_load_writes_no_tombstone(session: Session, tmp_path: Path, fmt: str) -> None:
    data = sparse_source()
    target = fresh(session, f"sparse_{fmt}", SPARSE)
    if fmt == "parquet":
        pq.write_table(data, tmp_path / "s.parquet")
        cd.load_table(session, target, str(tmp_path / "s.parquet"))
    elif fmt in ("csv", "jsonl"):
        src = fresh(session, "sparse_src", SPARSE)
        cd.load_table(session, src, data)
        done = cli("unload", src, "-o", str(tmp_path / "u"), "--format", fmt)
        assert done.returncode == 0, done.stderr
        done = cli("load", target, str(tmp_path / "u"))
        assert done.returncode == 0, done.stderr
    elif fmt == "insert_columns":
        ps = session.prepare(f"INSERT INTO {target} (k, a, b, c, d) VALUES (?, ?, ?, ?, ?)")
        cd.insert_columns(session, ps, data)
    else:
        cluster = new_cluster(3)
        try:
            v3 = cluster.connect()
            ps = v3.prepare(f"INSERT INTO {target} (k, a, b, c, d) VALUES (?, ?, ?, ?, ?)")
            result = cd.insert_columns(v3, ps, data)
            assert result.written == data.num_rows
        finally:
            cluster.shutdown()
    assert session.execute(f"SELECT count(*) FROM {target}").one()[0] == data.num_rows
    for k in (1, 2, 3, 50, 51):
        assert tombstones(session, target, k) == 0, k
    row = session.execute(f"SELECT * FROM {target} WHERE k = 50").one()
    assert (row.a, row.b, row.c, row.d) == (50, "b50", [50], 50.0)


def test_a_null_clears_a_value_only_when_asked(session: Session) -> None:
    target = fresh(session, "nulls_delete", SPARSE)
    session.execute(f"INSERT INTO {target} (k, a, b, c, d) VALUES (1, 1, 'x', [1], 1.5)")
    nulls = pa.table({"k": pa.array([1], pa.int32()), "a": pa.array([2], pa.int32()),
                      "b": pa.array([None], pa.string()),
                      "c": pa.array([None], pa.list_(pa.int32())),
                      "d": pa.array([None], pa.float64())})
    cd.load_table(session, target, nulls)
    row = session.execute(f"SELECT a, b, c, d FROM {target} WHERE k = 1").one()
    assert tuple(row) == (2, "x", [1], 1.5)  # nulls left the cells alone
    assert tombstones(session, target, 1) == 0
    cd.load_table(session, target, nulls, nulls="delete")
    row = session.execute(f"SELECT a, b, c, d FROM {target} WHERE k = 1").one()
    assert tuple(row) == (2, None, None, None)
    assert tombstones(session, target, 1) > 0
    with pytest.raises(ValueError, match="nulls must be"):
        cd.load_table(session, target, nulls, nulls="ignore")


def test_counters_with_nulls_load_and_round_trip(session: Session, tmp_path: Path) -> None:
    src = fresh(session, "counts_src", "k int PRIMARY KEY, a counter, b counter")
    dst = fresh(session, "counts_dst", "k int PRIMARY KEY, a counter, b counter")
    session.execute(f"UPDATE {src} SET a = a + 5 WHERE k = 1")  # b null
    session.execute(f"UPDATE {src} SET a = a + 0, b = b - 7 WHERE k = 2")
    session.execute(f"UPDATE {src} SET a = a + 9000000000000, b = b + 1 WHERE k = 3")
    data = pa.table({"k": pa.array([1, 2, 3, 4], pa.int32()),
                     "a": pa.array([5, 0, 9_000_000_000_000, None], pa.int64()),
                     "b": pa.array([None, -7, 1, None], pa.int64())})
    result = cd.load_table(session, dst, data)
    assert (result.written, result.empty, result.failures) == (4, 1, [])
    want = {r.k: (r.a, r.b) for r in session.execute(f"SELECT * FROM {src}")}
    assert {r.k: (r.a, r.b) for r in session.execute(f"SELECT * FROM {dst}")} == want
    cli_dst = fresh(session, "counts_cli", "k int PRIMARY KEY, a counter, b counter")
    done = cli("unload", src, "-o", str(tmp_path / "c"))
    assert done.returncode == 0, done.stderr
    done = cli("load", cli_dst, str(tmp_path / "c"))
    assert done.returncode == 0, done.stderr
    assert {r.k: (r.a, r.b) for r in session.execute(f"SELECT * FROM {cli_dst}")} == want


@pytest.mark.parametrize("keys", [
    "k uuid, c timestamp, PRIMARY KEY (k, c)",              # partitions read 50 at a time
    "k int, k2 text, c int, PRIMARY KEY ((k, k2), c)",      # partition by partition
    "k date, c frozen<list<int>>, PRIMARY KEY (k, c)",      # row by row
], ids=["in", "partition", "row"])
def test_loaded_again_by_every_kind_of_lookup(session: Session, keys: str) -> None:
    columns = f"{keys.split(', PRIMARY')[0]}, s list<int> static, l list<int>, " \
        f"PRIMARY{keys.split(', PRIMARY')[1]}"
    source = fresh(session, "kinds_src", columns)
    names = [part.split()[0] for part in keys.split(", PRIMARY")[0].split(", ")]
    ps = session.prepare(f"INSERT INTO {source} ({', '.join(names)}, s, l) VALUES "
                         f"({', '.join('?' * len(names))}, ?, ?) USING TIMESTAMP ?")
    import datetime
    import uuid

    for i in range(30):
        key: dict[str, Any] = {
            "k": (uuid.UUID(int=i // 3) if "uuid" in keys else
                  datetime.date(2020, 1, 1 + i // 3) if "date" in keys else i // 3),
            "k2": f"p{i // 3}",
            "c": (datetime.datetime(2024, 1, 1, 0, 0, i % 3) if "timestamp" in keys else
                  [i % 3, i] if "frozen" in keys else i % 3)}
        session.execute(ps, [key[n] for n in names] + [[i // 3], [i, i + 1], 1000 + i])
    data = cd.scan_table(session, source, writetime=True, ttl=True).to_arrow()
    target = fresh(session, "kinds_dst", columns)
    want = sorted(map(tuple, session.execute(
        f"SELECT {', '.join(names)}, s, l, writetime(l) FROM {source}")))
    for _ in range(2):
        assert cd.load_table(session, target, data, chunk_rows=7).failures == []
        assert sorted(map(tuple, session.execute(
            f"SELECT {', '.join(names)}, s, l, writetime(l) FROM {target}"))) == want
