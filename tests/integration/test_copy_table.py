"""``copy_table`` and ``python -m cqlcodec copy`` (issue 44) against the real server, on
one cluster and from it to a second one (``CQLCODEC_CASSANDRA_SECOND``, the
``second_session`` fixture): every column kind with every cell's write time and TTL,
counters, static columns, a table of key columns only, ``--resume`` after a SIGKILL
mid-copy, and 20 s of the target unreachable mid-copy (the fault proxy)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cassandra.cluster import Session

import cqlcodec.driver as cd

from .auth import (
    AUTH_ADDRESS,
    READER,
    READER_PASSWORD,
    WRONG_PASSWORD,
    auth_cluster,
    auth_host_port,
    prepare_server,
)
from .auth import KEYSPACE as AUTH_KEYSPACE
from .conftest import ADDRESS, SECOND_ADDRESS, _host_port, keyspace_session
from .faultproxy import FaultProxy
from .test_copies import (
    ALL_TYPES,
    EVERY_KIND,
    assert_same_times,
    fill_all_types,
    fill_every_kind,
    rows_by_key,
    same_rows,
    times_of,
)
from .test_load_unload import ROOT, cli
from .test_outages import proxied

pytest.importorskip("pyarrow")

KS = "cqlcodec_copy"
UDT = f"CREATE TYPE {KS}.addr (street text, n int)"
COUNTERS = "k int, c int, hits counter, misses counter, PRIMARY KEY (k, c)"
LISTS = ("k int, c int, s list<int> static, l list<int>, v text, m map<int, text>, "
         "PRIMARY KEY (k, c)")


@pytest.fixture(scope="module")
def session() -> Iterator[Session]:
    """A keyspace of its own on the test server, with the UDT the tables use."""
    yield from keyspace_session(KS, UDT)


@pytest.fixture(scope="module")
def second(second_session: Session) -> Iterator[Session]:
    """The same keyspace on the second cluster."""
    run = second_session.execute
    run(f"DROP KEYSPACE IF EXISTS {KS}")
    run(f"CREATE KEYSPACE {KS} WITH replication = "
        "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    run(UDT)
    yield second_session
    run(f"DROP KEYSPACE IF EXISTS {KS}")


def fresh(session: Session, name: str, columns: str) -> str:
    session.execute(f"DROP TABLE IF EXISTS {KS}.{name}")
    session.execute(f"CREATE TABLE {KS}.{name} ({columns})")
    return f"{KS}.{name}"


def rows(session: Session, table: str) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in session.execute(f"SELECT * FROM {table}"))


def second_cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``python -m cqlcodec copy ...`` from the test server to the second one."""
    host, port = _host_port(SECOND_ADDRESS)
    return cli("copy", *args, "--to-host", host, "--to-port", str(port), "--to-timeout", "30",
               timeout=timeout)


def test_every_kind_with_each_cells_time_and_ttl(session: Session) -> None:
    source = fresh(session, "kinds_src", EVERY_KIND)
    target = fresh(session, "kinds_dst", EVERY_KIND)
    fill_every_kind(session, source)
    started = time.monotonic()
    before = times_of(session, source)
    seen: list[cd.CopyProgress] = []
    result = cd.copy_table(session, source, session, target, splits=5, fetch_size=7,
                           progress=seen.append)
    assert result.complete and not result.failures
    assert result.rows == len(before) and result.splits_total == 5
    assert seen and seen[-1].splits_done == 5 and seen[-1].written == len(before)
    assert_same_times(session, before, target, started)


def test_every_type_and_nulls(session: Session) -> None:
    source = fresh(session, "types_src", ALL_TYPES)
    target = fresh(session, "types_dst", ALL_TYPES)
    fill_all_types(session, source)
    cd.copy_table(session, source, session, target, splits=3)
    assert same_rows(rows_by_key(session, target), rows_by_key(session, source))
    # a null is left unset: no tombstone in the row of nulls (every cell but the key)
    assert session.execute(f"SELECT writetime(a) FROM {target} WHERE k = 30").one()[0] is None


def test_across_clusters_every_kind(session: Session, second: Session) -> None:
    source = fresh(session, "far_src", EVERY_KIND)
    target = fresh(second, "far_dst", EVERY_KIND)
    fill_every_kind(session, source)
    started = time.monotonic()
    before = times_of(session, source)
    result = cd.copy_table(session, source, second, target, splits=4)
    assert result.complete and result.written == len(before)
    assert_same_times(second, before, target, started)
    types_src = fresh(session, "far_types_src", ALL_TYPES)
    types_dst = fresh(second, "far_types_dst", ALL_TYPES)
    fill_all_types(session, types_src)
    cd.copy_table(session, types_src, second, types_dst)
    assert same_rows(rows_by_key(second, types_dst), rows_by_key(session, types_src))


def test_counters_static_columns_and_key_columns_only(session: Session,
                                                        second: Session) -> None:
    source = fresh(session, "counts_src", COUNTERS)
    target = fresh(second, "counts_dst", COUNTERS)
    for k in range(30):
        for c in range(3):
            session.execute(f"UPDATE {source} SET hits = hits + {k * 10 + c - 50}, "
                            f"misses = misses + {c} WHERE k = {k} AND c = {c}")
    cd.copy_table(session, source, second, target, splits=4)
    assert rows(second, target) == rows(session, source)

    keys = "k int, c text, PRIMARY KEY (k, c)"
    only_keys, only_keys_dst = fresh(session, "keys_src", keys), fresh(second, "keys_dst", keys)
    for k in range(50):
        session.execute(f"INSERT INTO {only_keys} (k, c) VALUES ({k}, 'c{k % 7}')")
    result = cd.copy_table(session, only_keys, second, only_keys_dst, splits=3)
    assert result.written == 50 and rows(second, only_keys_dst) == rows(session, only_keys)

    statics = "k int, c int, s text static, ss set<int> static, v int, PRIMARY KEY (k, c)"
    st_src, st_dst = fresh(session, "static_src", statics), fresh(second, "static_dst", statics)
    for k in range(20):
        session.execute(f"INSERT INTO {st_src} (k, s, ss) VALUES ({k}, 's{k}', {{{k}, 1}}) "
                        f"USING TIMESTAMP {1000 + k} AND TTL {40_000 + k}")
        for c in range(k % 4):  # partitions 0, 4, 8... hold their static cells alone
            session.execute(f"INSERT INTO {st_src} (k, c, v) VALUES ({k}, {c}, {c})")
    cd.copy_table(session, st_src, second, st_dst, splits=3, fetch_size=3)
    assert rows(second, st_dst) == rows(session, st_src)
    select = "SELECT k, writetime(s), ttl(s), writetime(ss) FROM {} PER PARTITION LIMIT 1"
    got = sorted(tuple(r) for r in second.execute(select.format(st_dst)))
    want = sorted(tuple(r) for r in session.execute(select.format(st_src)))
    assert [(k, w, ws) for k, w, _, ws in got] == [(k, w, ws) for k, w, _, ws in want]
    assert all(abs(g[2] - w[2]) <= 30 for g, w in zip(got, want))  # TTLs, counting down


def test_columns_where_and_ignore_writetime(session: Session) -> None:
    source = fresh(session, "part_src", "k int PRIMARY KEY, a int, b text, l list<int>")
    target = fresh(session, "part_dst", "k int PRIMARY KEY, a int, l list<int>")
    for k in range(40):
        session.execute(f"INSERT INTO {source} (k, a, b, l) VALUES ({k}, {k}, 'x', [{k}, 1]) "
                        "USING TIMESTAMP 5000 AND TTL 50000")
    with pytest.raises(cd.CopyError, match="no such column"):
        cd.copy_table(session, source, session, target)  # b is not in the target
    result = cd.copy_table(session, source, session, target, columns=["a", "l"],
                           where="a >= 10", ignore_writetime=True)
    assert result.written == 30
    now_us = time.time() * 1e6
    got = list(session.execute(f"SELECT k, a, l, writetime(a), ttl(a) FROM {target}"))
    assert sorted((r[0], r[1], r[2]) for r in got) == [(k, k, [k, 1]) for k in range(10, 40)]
    assert all(r[3] > now_us - 600e6 and r[4] is None for r in got)


def test_command_line_across_clusters_and_state(session: Session, second: Session,
                                                tmp_path: Path) -> None:
    source = fresh(session, "cli_src", EVERY_KIND)
    target = fresh(second, "cli_dst", EVERY_KIND)
    fill_every_kind(session, source)
    started = time.monotonic()
    before = times_of(session, source)
    state = tmp_path / "state"
    done = second_cli(source, target, "--splits", "6", "--state", str(state))
    assert done.returncode == 0, done.stderr
    assert f"copied {len(before)} rows" in done.stderr and "6 of 6 splits" in done.stderr
    assert_same_times(second, before, target, started)
    saved = json.loads((state / "_copy_state.json").read_text())
    assert len(saved["done"]) == 6 and sum(saved["done"].values()) == len(before)
    again = second_cli(source, target, "--state", str(state))
    assert again.returncode == 3 and "holds the state of a copy already" in again.stderr
    resumed = second_cli(source, target, "--state", str(state), "--resume")
    assert resumed.returncode == 0 and "6 copied before" in resumed.stderr, resumed.stderr
    other = second_cli(source, target, "--state", str(state), "--resume", "--columns", "v")
    assert other.returncode == 3 and "another copy" in other.stderr
    assert cli("copy", source, target, "--resume").returncode == 2  # --resume needs --state


def list_times(session: Session, table: str) -> dict[tuple[int, int], tuple[Any, ...]]:
    select = "SELECT k, c, s, l, v, m, writetime(s), writetime(l), writetime(v), writetime(m)"
    return {(r[0], r[1]): tuple(r[2:]) for r in session.execute(f"{select} FROM {table}")}


def fill_lists(session: Session, table: str, partitions: int) -> None:
    insert = session.prepare(f"INSERT INTO {table} (k, c, l, v, m) VALUES (?, ?, ?, ?, ?) "
                             "USING TIMESTAMP ?")
    static = session.prepare(f"UPDATE {table} USING TIMESTAMP ? SET s = ? WHERE k = ?")
    from cassandra.concurrent import execute_concurrent_with_args

    execute_concurrent_with_args(session, static, [(7000 + k, [k, k], k) for k in
                                                   range(partitions)])
    execute_concurrent_with_args(session, insert, [
        (k, c, [k, c, 3], f"v{k}.{c}", {c: "m"}, 10_000 + k * 10 + c)
        for k in range(partitions) for c in range(6)])


def assert_lists_exact(session: Session, source: str, target_session: Session,
                       target: str) -> None:
    """Values equal (no list doubled); write times equal, a list's exact or up to 2 µs
    later (a list written again after a repeat moves by 1 µs)."""
    want, got = list_times(session, source), list_times(target_session, target)
    assert got.keys() == want.keys()
    for key, w in want.items():
        g = got[key]
        assert g[:4] == w[:4], key
        assert g[6] == w[6] and g[7] == w[7], key  # v and m: exact
        for i in (4, 5):  # s and l: per element
            assert (g[i] is None) == (w[i] is None), key
            if w[i] is not None:
                assert len(g[i]) == len(w[i]) and all(0 <= a - b <= 2 for a, b in
                                                      zip(g[i], w[i])), (key, g[i], w[i])


def test_resume_after_sigkill_mid_copy_is_exact(session: Session, second: Session,
                                                tmp_path: Path) -> None:
    source = fresh(session, "kill_src", LISTS)
    target = fresh(second, "kill_dst", LISTS)
    fill_lists(session, source, 400)
    state = tmp_path / "state"
    host, port = _host_port(ADDRESS)
    far_host, far_port = _host_port(SECOND_ADDRESS)
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    args = [sys.executable, "-m", "cqlcodec", "copy", source, target, "--state", str(state),
            "--splits", "16", "--read-concurrency", "1", "--fetch-size", "40", "--rate",
            "600", "--host", host, "--port", str(port), "--to-host", far_host,
            "--to-port", str(far_port), "-q"]
    child = subprocess.Popen(args, env=env, cwd=ROOT, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
    state_file = state / "_copy_state.json"

    def done_rows() -> tuple[int, int]:
        try:
            done = json.loads(state_file.read_text())["done"]
        except (OSError, ValueError):
            return 0, 0
        return len(done), sum(done.values())

    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline and child.poll() is None:
            splits, copied = done_rows()
            written = second.execute(f"SELECT count(*) FROM {target}").one()[0]
            if splits >= 3 and written > copied:
                break
            time.sleep(0.05)
        assert child.poll() is None, "the copy ended before it was killed"
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait(timeout=60)
        assert child.stderr is not None
        child.stderr.close()
    splits, copied = done_rows()
    written = second.execute(f"SELECT count(*) FROM {target}").one()[0]
    assert 3 <= splits < 16 and written > copied, (splits, copied, written)
    done = second_cli(source, target, "--state", str(state), "--resume", "-q")
    assert done.returncode == 0, done.stderr
    assert_lists_exact(session, source, second, target)
    assert len(json.loads(state_file.read_text())["done"]) == 16


def differences(diff: cd.TableDiff) -> list[str]:
    return sorted(json.dumps(d.as_json(), sort_keys=True) for d in diff)


def test_target_unreachable_20_s_mid_copy_and_mid_diff(session: Session) -> None:
    """20 s of the target host unreachable (connections reset, new ones refused) in the
    middle of a copy whose target is reached through the fault proxy, and of a diff
    (paced by ``rate``) whose target is too: the copy waits, goes on, and the target is
    exact (no row lost, no list doubled); the diff reports what it reports without the
    outage."""
    source = fresh(session, "outage_src", LISTS)
    target = fresh(session, "outage_dst", LISTS)
    compared = fresh(session, "outage_ref", LISTS)
    fill_lists(session, source, 150)
    cd.copy_table(session, source, session, compared)
    session.execute(f"DELETE FROM {compared} WHERE k = 9 AND c = 2")
    session.execute(f"UPDATE {compared} SET v = 'x' WHERE k = 140 AND c = 0")
    expected = differences(cd.diff_tables(session, source, session, compared))
    assert len(expected) == 2
    outages: list[threading.Thread] = []
    diffed: list[Any] = []
    split_read = threading.Event()
    with FaultProxy(_host_port(), seed=44) as proxy:
        proxy.latency = 0.005
        cluster = proxied(proxy)
        cd.install(cluster)
        waits: list[str] = []
        try:
            far = cluster.connect()

            def diff() -> None:
                try:
                    diffed.append(differences(cd.diff_tables(
                        session, source, far, compared, splits=8, concurrency=2,
                        fetch_size=20, rate=200, progress=lambda p: split_read.set())))
                except BaseException as exc:  # noqa: BLE001 - asserted below
                    diffed.append(exc)

            differ = threading.Thread(target=diff)
            differ.start()
            assert split_read.wait(60), "the diff read no split"

            def report(p: cd.CopyProgress) -> None:
                if p.waiting:
                    waits.append(p.waiting)
                if p.rows >= 200 and not outages:
                    assert differ.is_alive(), "the diff ended before the outage"
                    outages.append(proxy.outage(20.0))

            result = cd.copy_table(session, source, far, target, splits=8, fetch_size=40,
                                   read_concurrency=2, concurrency=4, progress=report)
            assert outages and proxy.refused > 0, "the outage did not land mid-copy"
            outages[0].join()
            assert result.complete and result.written == 900 and not result.failures
            assert any("waiting for" in w for w in waits), waits[:3]
            differ.join(120)
            assert diffed == [expected]
        finally:
            cluster.shutdown()
    assert_lists_exact(session, source, session, target)


def test_counter_copy_cut_short_resumes_exact(session: Session, tmp_path: Path) -> None:
    """A counter copy stopped with splits partly written: the resume settles those
    splits against the target (source - target) instead of adding their increments
    again, and the counts are the source's."""
    source = fresh(session, "cut_src", COUNTERS)
    target = fresh(session, "cut_dst", COUNTERS)
    from cassandra.concurrent import execute_concurrent_with_args

    both = session.prepare(f"UPDATE {source} SET hits = hits + ?, misses = misses + ? "
                           "WHERE k = ? AND c = ?")
    hits = session.prepare(f"UPDATE {source} SET hits = hits + ? WHERE k = ? AND c = ?")
    execute_concurrent_with_args(session, both, [(k * 7 + c, c - 1, k, c) for k in range(40)
                                                 for c in range(3)])
    execute_concurrent_with_args(session, hits, [(k, k, 5) for k in range(40)])  # misses null

    class Stop(Exception):
        pass

    def stop(p: cd.CopyProgress) -> None:
        if p.written >= 70:
            raise Stop

    state = tmp_path / "state"
    with pytest.raises(Stop):
        cd.copy_table(session, source, session, target, splits=6, fetch_size=10,
                      read_concurrency=3, state=state, progress=stop)
    kept = json.loads((state / "_copy_state.json").read_text())
    cut = set(kept["started"]) - set(kept["done"])
    assert cut and len(kept["done"]) < 6, kept
    result = cd.copy_table(session, source, session, target, state=state, resume=True)
    assert result.complete and result.splits_skipped == len(kept["done"])
    assert rows(session, target) == rows(session, source)
    assert not list(cd.diff_tables(session, source, session, target))


def test_refusals_before_anything_is_copied(session: Session, tmp_path: Path) -> None:
    source = fresh(session, "refuse_src", "k int PRIMARY KEY, v text")
    with pytest.raises(cd.CopyError, match="same table"):
        cd.copy_table(session, source, session, source)
    with pytest.raises(cd.CopyError, match="unknown table nowhere"):
        cd.copy_table(session, source, session, f"{KS}.nowhere")
    with pytest.raises(cd.CopyError, match="unknown column"):
        cd.copy_table(session, source, session, fresh(session, "refuse_dst", "k int PRIMARY KEY"),
                      columns=["nope"])
    done = cli("copy", source, f"{KS}.nowhere")
    assert done.returncode == 3, done.stderr
    state = tmp_path / "state"
    target = fresh(session, "refuse_dst2", "k int PRIMARY KEY, v text")
    done = cli("copy", source, target, "--where", "nope = 1", "--state", str(state))
    assert done.returncode == 3 and "nope" in done.stderr, done.stderr
    assert not (state / "_copy_state.json").exists()  # refused before any state was kept


@pytest.mark.skipif(not AUTH_ADDRESS, reason="set CQLCODEC_AUTH_CASSANDRA (nox sets it)")
def test_into_a_password_protected_cluster(session: Session,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The target needs a login and the source none: ``--to-username`` with
    ``--to-password-env`` (a role that may write the target table); a wrong password
    is status 4, the password never shown; ``diff`` logs in the same way."""
    prepare_server()
    source = fresh(session, "to_auth", "k int PRIMARY KEY, v text")
    for k in range(60):
        session.execute(f"INSERT INTO {source} (k, v) VALUES ({k}, 'to auth {k}') "
                        f"USING TIMESTAMP {5000 + k}")
    host, port = auth_host_port()
    target = f"{AUTH_KEYSPACE}.copy"
    cluster = auth_cluster(READER, READER_PASSWORD)
    try:  # other modules' tests load this table too (MODIFY allows TRUNCATE)
        cluster.connect().execute(f"TRUNCATE {target}", timeout=60)
    finally:
        cluster.shutdown()
    login = ["--to-host", host, "--to-port", str(port), "--to-username", READER,
             "--to-password-env", "CQLCODEC_TEST_COPY_PASSWORD"]
    monkeypatch.setenv("CQLCODEC_TEST_COPY_PASSWORD", WRONG_PASSWORD)
    refused = cli("copy", source, target, *login)
    assert refused.returncode == 4 and WRONG_PASSWORD not in refused.stderr, refused.stderr
    monkeypatch.setenv("CQLCODEC_TEST_COPY_PASSWORD", READER_PASSWORD)
    done = cli("copy", source, target, *login, "--splits", "3")
    assert done.returncode == 0 and "copied 60 rows" in done.stderr, done.stderr
    cluster = auth_cluster(READER, READER_PASSWORD)
    try:
        got = sorted(tuple(r) for r in cluster.connect().execute(
            f"SELECT k, v, writetime(v) FROM {target}"))
    finally:
        cluster.shutdown()
    assert got == [(k, f"to auth {k}", 5000 + k) for k in range(60)]
    # and diff proves it through the same login: equal, write times included
    proved = cli("diff", source, target, *login, "--writetime")
    assert proved.returncode == 0, proved.stderr
    session.execute(f"UPDATE {source} USING TIMESTAMP 9000 SET v = 'newer' WHERE k = 7")
    found = cli("diff", source, target, *login, "--report", "-")
    assert found.returncode == 1 and '"differs"' in found.stdout, found.stderr


def test_to_a_target_over_tls(session: Session, server_pem: str, tmp_path: Path) -> None:
    """TLS on one side only: the source read in plain text, the target reached with
    ``--to-ssl-ca`` (the test server takes TLS on its CQL port too); ``diff`` the same
    way; a target certificate that cannot be verified (``--to-ssl`` with the system's
    CAs) is status 4 before anything is written."""
    source = fresh(session, "tls_src", "k int PRIMARY KEY, v text")
    target = fresh(session, "tls_dst", "k int PRIMARY KEY, v text")
    for k in range(30):
        session.execute(f"INSERT INTO {source} (k, v) VALUES ({k}, 'tls {k}') "
                        f"USING TIMESTAMP {7000 + k}")
    ca = tmp_path / "server.pem"
    ca.write_text(server_pem)
    host, port = _host_port()
    to = ["--to-host", host, "--to-port", str(port)]
    refused = cli("copy", source, target, *to, "--to-ssl")
    assert refused.returncode == 4 and "certificate" in refused.stderr.lower(), refused.stderr
    assert rows(session, target) == []
    done = cli("copy", source, target, *to, "--to-ssl-ca", str(ca), "--splits", "2")
    assert done.returncode == 0 and "copied 30 rows" in done.stderr, done.stderr
    got = sorted(tuple(r) for r in session.execute(f"SELECT k, v, writetime(v) FROM {target}"))
    assert got == [(k, f"tls {k}", 7000 + k) for k in range(30)]
    proved = cli("diff", source, target, *to, "--to-ssl-ca", str(ca), "--writetime")
    assert proved.returncode == 0, proved.stderr
