"""Columnar IO against a real server: whole queries into DataFrames, matrices into tables.

Reads ``--rows`` rows (default 100,000) of W5 (a)'s ten mixed columns into pandas and
polars, with ``cqlcodec.driver.execute_columns`` and with the driver's
``list(session.execute(...))`` + DataFrame; inserts ``--rows`` rows of
``(int, vector<float, 768>)`` from a numpy matrix with ``insert_columns`` and with the
driver's ``execute_concurrent_with_args`` binding each row. Every measurement runs in a
fresh child process (after its imports and connection, and a collection of the cyclic
GC, as ``harness.py`` does before every timing): client process CPU time, wall
time, peak RSS (``ru_maxrss``) and its growth during the measurement, and the CPU of
each client thread (the caller, the driver's event loop). Medians of ``--runs``
interleaved runs; ``--profile`` adds a cProfile of the caller thread of each case.

    python benchmarks/server_io.py --host 127.0.0.1 --port 9042 [--rows N] [--runs N]

``--only readpath --rows 200000`` measures the connection read path instead: 20,000 rows of
``vector<float, 768>`` into one numpy matrix and ``--rows`` mixed rows into pandas, both
with ``execute_columns``, on protocol v4 and v5, through the driver's connection class
and through ``cqlcodec.driver.connection_class()``; it prints the v5/v4 and
cqlcodec/driver client CPU ratios.

``--only peers`` measures cqlcodec against the native clients (``server_peers.py``:
acsylla, scyllapy, rsylla, all on protocol v4) in the same run: the 20,000 vectors into
numpy and the mixed rows into pandas (cqlcodec ``execute_columns`` with its connection
class on v4 and v5), and plain rows (the driver's, with ``install()``, on v5, against
rsylla's). It prints the ratios with the targets of issue 32; a peer that is not
installed or cannot do a read gets a cell saying so. It also reads the driver's own rows
end to end in driver mode (10,000 mixed rows, 2,000 vector rows, ``--protocol``) with the
driver alone, with ``install()`` and with ``install(connection=False)``.

``--only small`` measures small requests in driver mode (issue 42, ``server_small.py``):
one-row prepared reads of a 5-column table at 100 in flight (named tuples and tuples),
one at a time (p50 latency) and single-row inserts, the driver alone and with
``install()``, client CPU and context switches per request (``--requests``, ``--warmup``).

``--only requests`` measures small requests (one-row reads by key, one-row inserts) on
cqlcodec's own request path (``cqlcodec.aio.connect``) against the driver, the native
clients (acsylla, scyllapy, rsylla, scylladb-rs-driver) and an asyncio floor, 100 in
flight and one at a time (``--requests``, ``--warmup``), and two large
``aio.execute_columns`` reads on the request path against today's path
(``server_requests.py``).

``nox -s bench_server`` starts a server, installs the compiled build and runs this.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import functools
import gc
import importlib.util
import io
import json
import os
import pstats
import resource
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import server_small  # this directory's (sys.path[0] when run as a script)

KEYSPACE = "cqlcodec_bench"
DIM = 768
CONCURRENCY = 64
FETCH_SIZE = 5000
READS = ["read driver + pandas", "read cqlcodec -> pandas", "read driver + polars",
         "read cqlcodec -> polars"]
INSERTS = ["insert driver execute_concurrent_with_args", "insert cqlcodec insert_columns",
           "insert cqlcodec insert_columns batch_by_replica"]
# the connection read path (issue 32): each read on protocol v4 and v5, through the
# driver's own connection class and through cqlcodec.driver.connection_class()
VECTOR_ROWS = 20_000
READPATH = [f"readpath {what} v{v} {conn}" for what in ("vectors", "mixed") for v in (4, 5)
            for conn in ("driver", "cqlcodec")]
# asyncio (--only aio): AIO_REQUESTS single-partition queries in flight on one loop, and a
# whole-table scan with async for against the synchronous scan
AIO_REQUESTS = 1000
# "aio floor ..." is the driver's request path alone: the same requests sent with send_columnar
# (execute_columns' own send) and counted by a driver callback, with no asyncio object per
# request and no decode, the least any design over the driver's ResponseFuture can cost
AIO_REQUEST_CASES = ["aio run_in_executor + sync execute_columns", "aio acsylla execute",
                     "aio execute_columns", "aio floor: send_columnar + a callback"]
AIO = [*AIO_REQUEST_CASES[:3], "scan sync to_arrow", "scan aio to_arrow", "scan aio with a loop-lag probe"]
# driver mode end to end (issue 32: never slower than the driver, cqlcodec's connection
# class on and off): the driver's own rows of DRIVER_MODE_ROWS[what] rows, read by the driver
# alone, with install() and with install(connection=False), on --protocol
DRIVER_MODE_ROWS = {"mixed": 10_000, "vectors": 2_000}
DRIVER_MODE = [f"driver mode {what} {mode}" for what in DRIVER_MODE_ROWS
               for mode in ("driver", "install", "install-no-class")]
# the native clients against cqlcodec (issue 32's targets)
PEER_NAMES = ("acsylla", "scyllapy", "rsylla")
PEERS = ([f"readpath vectors v{v} cqlcodec" for v in (4, 5)] + [f"peer vectors {p}" for p in PEER_NAMES]
         + [f"readpath mixed v{v} cqlcodec" for v in (4, 5)] + [f"peer mixed {p}" for p in PEER_NAMES]
         + ["rows driver install v5", "peer rows rsylla"] + DRIVER_MODE)
PEER_TARGETS = [  # (what, cqlcodec case, other case, ratio at most)
    ("vectors v5/v4", "readpath vectors v5 cqlcodec", "readpath vectors v4 cqlcodec", 1.1),
    ("mixed -> pandas v5/v4", "readpath mixed v5 cqlcodec", "readpath mixed v4 cqlcodec", 1.1),
    ("vectors, v5 / acsylla", "readpath vectors v5 cqlcodec", "peer vectors acsylla", 0.8),
    ("vectors, v5 / scyllapy", "readpath vectors v5 cqlcodec", "peer vectors scyllapy", None),
    ("vectors, v5 / rsylla", "readpath vectors v5 cqlcodec", "peer vectors rsylla", None),
    ("mixed -> pandas, v5 / acsylla", "readpath mixed v5 cqlcodec", "peer mixed acsylla", 0.1),
    ("mixed -> pandas, v5 / scyllapy", "readpath mixed v5 cqlcodec", "peer mixed scyllapy", None),
    ("mixed -> pandas, v5 / rsylla", "readpath mixed v5 cqlcodec", "peer mixed rsylla", None),
    ("rows, install() v5 / rsylla", "rows driver install v5", "peer rows rsylla", 1.0),
    *[(f"{what} {DRIVER_MODE_ROWS[what]:,}, {mode} / driver", f"driver mode {what} {mode}",
       f"driver mode {what} driver", 1.0)
      for what in DRIVER_MODE_ROWS for mode in ("install", "install-no-class")],
]
RATIOS = [("aio run_in_executor + sync execute_columns", "aio execute_columns"),
          ("aio acsylla execute", "aio execute_columns"),
          ("aio acsylla execute", "aio floor: send_columnar + a callback"),
          ("scan sync to_arrow", "scan aio to_arrow"),
          ("read driver + pandas", "read cqlcodec -> pandas"),
          ("read driver + polars", "read cqlcodec -> polars"),
          ("insert driver execute_concurrent_with_args", "insert cqlcodec insert_columns"),
          ("insert driver execute_concurrent_with_args", "insert cqlcodec insert_columns batch_by_replica")]


def _mixed_columns() -> list[tuple[str, Any]]:
    from cqlcodec import bench_workloads as W

    return W.columns_of(W.ROWS_SPECS["a"][0])


def _connect(args: argparse.Namespace, keyspace: str | None = KEYSPACE) -> tuple[Any, Any]:
    from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
    from cassandra.policies import RoundRobinPolicy

    import cqlcodec.driver as drv

    protocol = args.protocol
    reactor = Cluster.connection_class
    if args.case.startswith("readpath"):
        _kind, _what, version, conn = args.case.split()
        protocol = int(version[1:])
        reactor = drv.connection_class() if conn == "cqlcodec" else reactor
    if args.case == "rows driver install v5":
        protocol = 5
    mode = args.case.rsplit(" ", 1)[-1] if args.case.startswith("driver mode") else ""
    profile = ExecutionProfile(load_balancing_policy=RoundRobinPolicy(), request_timeout=120)
    cluster = Cluster([args.host], port=args.port, protocol_version=protocol,
                      execution_profiles={EXEC_PROFILE_DEFAULT: profile}, connect_timeout=30,
                      connection_class=reactor)
    if args.case == "rows driver install v5" or (
            args.case.startswith("small") and args.case.endswith(" install")):
        drv.install(cluster)  # its connection class too
    elif mode in ("install", "install-no-class"):
        drv.install(cluster, connection=mode == "install")
    return cluster, cluster.connect(keyspace)


def _matrix(rows: int) -> Any:
    import numpy

    return numpy.random.default_rng(768).standard_normal((rows, DIM), dtype=numpy.float32)


def prepare_data(args: argparse.Namespace) -> None:
    """Create the keyspace and tables, and load the mixed rows (once per row count)."""
    import cqlcodec.driver as drv
    from cqlcodec import bench_workloads as W

    cluster, session = _connect(args, None)
    try:
        session.execute(f"CREATE KEYSPACE IF NOT EXISTS {KEYSPACE} WITH replication = "
                        "{'class': 'SimpleStrategy', 'replication_factor': 1}", timeout=120)
        session.set_keyspace(KEYSPACE)
        columns = _mixed_columns()
        ddl = ", ".join(f"{name} {spec}" for name, spec in columns)
        session.execute(f"CREATE TABLE IF NOT EXISTS mixed (id int PRIMARY KEY, {ddl})", timeout=120)
        session.execute(f"CREATE TABLE IF NOT EXISTS emb (k int PRIMARY KEY, v vector<float, {DIM}>)",
                        timeout=120)
        session.execute("CREATE TABLE IF NOT EXISTS loaded (name text PRIMARY KEY, rows int)", timeout=120)
        if getattr(args, "only", None) in ("readpath", "peers"):  # scan_io.py has no --only
            _prepare_vectors(session)
        if getattr(args, "only", None) == "small":
            server_small.prepare(session)
            return
        done = session.execute("SELECT rows FROM loaded WHERE name = 'mixed'").one()
        if done is not None and done.rows == args.rows:
            return
        session.execute("TRUNCATE mixed", timeout=120)
        rows = W.gen_rows(columns, args.rows, W.SEED + ord("a"))
        data: dict[str, Any] = {"id": list(range(args.rows))}
        for i, (name, _spec) in enumerate(columns):
            data[name] = [row[i] for row in rows]
        insert = session.prepare(f"INSERT INTO mixed (id, {', '.join(n for n, _s in columns)}) "
                                 f"VALUES (?, {', '.join('?' for _c in columns)})")
        drv.insert_columns(session, insert, data, batch_by_replica=True, batch_bytes=4096)
        session.execute("INSERT INTO loaded (name, rows) VALUES ('mixed', %s)", [args.rows])
    finally:
        cluster.shutdown()


def _prepare_vectors(session: Any) -> None:
    """``VECTOR_ROWS`` rows of ``vector<float, 768>`` in ``emb_read`` (once)."""
    import numpy

    import cqlcodec.driver as drv

    session.execute(f"CREATE TABLE IF NOT EXISTS emb_read (k int PRIMARY KEY, v vector<float, {DIM}>)",
                    timeout=120)
    done = session.execute("SELECT rows FROM loaded WHERE name = 'emb_read'").one()
    if done is not None and done.rows == VECTOR_ROWS:
        return
    insert = session.prepare("INSERT INTO emb_read (k, v) VALUES (?, ?)")
    keys = numpy.arange(VECTOR_ROWS, dtype=numpy.int32)
    drv.insert_columns(session, insert, {"k": keys, "v": _matrix(VECTOR_ROWS)}, concurrency=CONCURRENCY)
    session.execute("INSERT INTO loaded (name, rows) VALUES ('emb_read', %s)", [VECTOR_ROWS])


# --------------------------------------------------------------------------- one case

def _thread_cpu() -> dict[str, float]:
    """CPU seconds of each live thread of this process, by Python thread name."""
    tick = os.sysconf("SC_CLK_TCK")
    names = {t.native_id: t.name for t in threading.enumerate()}
    out: dict[str, float] = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        name = names.get(int(tid), "other")
        name = "caller" if name == "MainThread" else name
        out[name] = out.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / tick
    return out


def _run_case(case: str, args: argparse.Namespace, session: Any) -> Any:
    import numpy

    import cqlcodec.driver as drv

    names = [name for name, _spec in _mixed_columns()]
    query = f"SELECT {', '.join(names)} FROM mixed"
    if case == "read driver + pandas":
        import pandas
        from cassandra.query import SimpleStatement

        rows = list(session.execute(SimpleStatement(query, fetch_size=FETCH_SIZE)))
        return pandas.DataFrame(rows)
    if case == "rows driver install v5":
        from cassandra.query import SimpleStatement

        return list(session.execute(SimpleStatement(query, fetch_size=FETCH_SIZE)))
    if case.startswith("driver mode"):
        from cassandra.query import SimpleStatement

        what = case.split()[2]
        limit = DRIVER_MODE_ROWS[what]
        read = f"SELECT k, v FROM emb_read LIMIT {limit}" if what == "vectors" else f"{query} LIMIT {limit}"
        return list(session.execute(SimpleStatement(read, fetch_size=FETCH_SIZE)))
    if case == "read driver + polars":
        import polars
        from cassandra.query import SimpleStatement

        rows = list(session.execute(SimpleStatement(query, fetch_size=FETCH_SIZE)))
        return polars.DataFrame([tuple(r) for r in rows], schema=names, orient="row", strict=False,
                                infer_schema_length=None)
    if case.startswith("readpath vectors"):
        pages = drv.execute_columns(session, "SELECT v FROM emb_read", fetch_size=FETCH_SIZE)
        return pages.to_numpy(["v"])["v"]  # one matrix, filled page by page
    if case.startswith("readpath mixed"):
        return drv.execute_columns(session, query, fetch_size=FETCH_SIZE).to_pandas()
    if case == "read cqlcodec -> pandas":
        return drv.execute_columns(session, query, fetch_size=FETCH_SIZE).to_pandas()
    if case == "read cqlcodec -> polars":
        return drv.execute_columns(session, query, fetch_size=FETCH_SIZE).to_polars()
    if case.startswith(("aio", "scan")):
        return _run_aio_case(case, args, session, names)
    matrix = args.matrix
    insert = session.prepare("INSERT INTO emb (k, v) VALUES (?, ?)")
    if case == "insert driver execute_concurrent_with_args":
        from cassandra.concurrent import execute_concurrent_with_args

        params = args.params  # Python lists, made before the clock starts
        return execute_concurrent_with_args(session, insert, params, concurrency=CONCURRENCY)
    keys = numpy.arange(len(matrix), dtype=numpy.int32)
    if case == "insert cqlcodec insert_columns":
        return drv.insert_columns(session, insert, {"k": keys, "v": matrix}, concurrency=CONCURRENCY)
    if case == "insert cqlcodec insert_columns batch_by_replica":
        return drv.insert_columns(session, insert, {"k": keys, "v": matrix}, concurrency=CONCURRENCY,
                                  batch_by_replica=True, batch_bytes=40_000)
    raise SystemExit(f"unknown case {case!r}")


def _run_aio_case(case: str, args: argparse.Namespace, session: Any, names: list[str]) -> Any:
    """The asyncio cases: AIO_REQUESTS concurrent single-partition reads on one loop
    (cqlcodec.aio, the sync API through the loop's default executor, acsylla), and a
    whole-table scan (sync, async for, async for with a task measuring how late a 5 ms
    sleep wakes)."""
    import asyncio

    import cqlcodec.driver as drv
    from cqlcodec import aio

    keys = [k * 7919 % args.rows for k in range(AIO_REQUESTS)]
    if case == "scan sync to_arrow":
        return drv.scan_table(session, f"{KEYSPACE}.mixed").to_arrow()

    async def main() -> Any:
        loop = asyncio.get_running_loop()
        if case == "aio execute_columns":
            query = args.statement
            return await asyncio.gather(*(aio.execute_columns(session, query, [k]) for k in keys))
        if case == "aio run_in_executor + sync execute_columns":
            query = args.statement
            return await asyncio.gather(*(
                loop.run_in_executor(None, functools.partial(drv.execute_columns, session, query, [k]))
                for k in keys))
        if case == "aio floor: send_columnar + a callback":
            return await _sent_and_counted(session, args.statement, keys)
        if case == "aio acsylla execute":
            prepared = args.acsylla_statement

            async def one(k: int) -> Any:
                statement = prepared.bind()
                statement.bind(0, k)
                return [row.as_tuple() for row in await args.acsylla_session.execute(statement)]
            return await asyncio.gather(*(one(k) for k in keys))
        if case == "scan aio to_arrow":
            return await aio.scan_table(session, f"{KEYSPACE}.mixed").to_arrow()
        late: list[float] = []
        done = asyncio.Event()

        async def probe() -> None:
            while not done.is_set():
                before = loop.time()
                await asyncio.sleep(0.005)
                late.append(loop.time() - before - 0.005)
        prober = asyncio.ensure_future(probe())
        rows = 0
        async for batch in aio.scan_table(session, f"{KEYSPACE}.mixed"):
            rows += len(batch)
        done.set()
        await prober
        late.sort()
        args.lateness_ms = {"p50": late[len(late) // 2] * 1e3, "p99": late[int(len(late) * 0.99)] * 1e3,
                            "max": late[-1] * 1e3, "wakes": len(late)}
        return [None] * rows

    if case == "aio acsylla execute":
        return args.acsylla_loop.run_until_complete(main())
    return asyncio.run(main())


async def _sent_and_counted(session: Any, statement: Any, keys: list[int]) -> list[None]:
    """Every request sent with ``send_columnar`` from the loop, one driver callback
    counting the answers (no asyncio future, task or decode per request); the loop is
    woken once, by the last answer."""
    import asyncio

    from cqlcodec.driver.columns import send_columnar

    loop = asyncio.get_running_loop()
    finished: asyncio.Future[None] = loop.create_future()
    left = [len(keys)]

    def answered(_outcome: object) -> None:
        left[0] -= 1
        if left[0] == 0:
            loop.call_soon_threadsafe(finished.set_result, None)
    for k in keys:
        send_columnar(session, statement, [k]).add_callbacks(answered, answered)
    await finished
    return [None] * len(keys)


def _prepare_aio_case(case: str, args: argparse.Namespace, session: Any) -> None:
    """What an asyncio case needs before the clock starts: the prepared statement, and
    acsylla's session on its loop (a warm-up request on each)."""
    # every column but the decimal, which acsylla 1.x fails to decode (UnicodeDecodeError)
    query = (f"SELECT {', '.join(n for n, spec in _mixed_columns() if spec.name != 'decimal')} "
             "FROM mixed WHERE id = ?")
    if case == "aio acsylla execute":
        import asyncio
        import importlib

        acsylla = importlib.import_module("acsylla")  # pip install acsylla (not a nox dependency)

        async def connect() -> Any:
            cluster = acsylla.create_cluster([args.host], port=args.port,
                                             protocol_version=min(args.protocol, 4),  # its v5 is DSE only
                                             request_timeout=120)
            acsylla_session = await cluster.create_session(keyspace=KEYSPACE)
            statement = await acsylla_session.create_prepared(query)
            warm = statement.bind()
            warm.bind(0, 1)
            await acsylla_session.execute(warm)
            return acsylla_session, statement
        args.acsylla_loop = asyncio.new_event_loop()
        args.acsylla_session, args.acsylla_statement = args.acsylla_loop.run_until_complete(connect())
    else:
        args.statement = session.prepare(query)
        session.execute(args.statement, [1])


def child(args: argparse.Namespace) -> None:
    """Measure one case in this fresh process and print one JSON line."""
    import numpy  # noqa: F401  (imported by both paths; kept out of the measurement)
    import pandas  # noqa: F401
    import polars  # noqa: F401
    import pyarrow  # noqa: F401

    import cqlcodec.driver  # noqa: F401

    case = args.case
    if case.startswith("peer "):
        _peer_child(args)
        return
    if case.startswith("insert"):
        args.matrix = _matrix(args.rows)
        if "driver" in case:
            args.params = [(k, row) for k, row in enumerate(args.matrix.tolist())]
    cluster, session = _connect(args)
    try:
        session.execute("SELECT release_version FROM system.local")
        if case.startswith("small"):
            print(json.dumps(server_small.child(case, session, args.requests, args.warmup)))
            return
        if case.startswith("aio"):
            _prepare_aio_case(case, args, session)
        out = _measure(case, args, lambda: _run_case(case, args, session))
        if hasattr(args, "lateness_ms"):
            out["lateness_ms"] = args.lateness_ms
        print(json.dumps(out))
    finally:
        cluster.shutdown()


def _peer_child(args: argparse.Namespace) -> None:
    """One native client's read (``peer WHAT NAME``); a read it cannot do prints the reason."""
    from server_peers import UNREADABLE, PeerCannot, open_peer

    _kind, what, peer = args.case.split()
    unreadable = UNREADABLE.get(peer, {})
    names = [name for name, spec in _mixed_columns() if spec.name not in unreadable]
    query = "SELECT v FROM emb_read" if what == "vectors" else f"SELECT {', '.join(names)} FROM mixed"
    note = "" if what == "vectors" else "; ".join(f"without its {t} column: {why}" for t, why in unreadable.items())
    loop = asyncio.new_event_loop()
    try:
        read, close = loop.run_until_complete(
            open_peer(peer, what, args.host, args.port, KEYSPACE, query, DIM, FETCH_SIZE))
    except PeerCannot as exc:
        print(json.dumps({"case": args.case, "cannot": str(exc)}))
        return
    try:
        print(json.dumps(dict(_measure(args.case, args, lambda: loop.run_until_complete(read())),
                              note=note)))
    except Exception as exc:  # the peer's own error for a read it cannot do goes in the cell
        print(json.dumps({"case": args.case, "cannot": f"{type(exc).__name__}: {exc}"[:160]}))
    finally:
        loop.run_until_complete(close())
        loop.close()


def _measure(case: str, args: argparse.Namespace, read: Callable[[], Any]) -> dict[str, Any]:
    """Client CPU (getrusage user+sys of this process), wall time, RSS and thread CPU of ``read()``."""
    # The imports and the connection leave the collector's counters where any next
    # allocation may start a full collection of their ~95,000 objects (30-90 ms here):
    # measured, it landed in one case's window and not in another's by chance.
    gc.collect()
    threads0 = _thread_cpu()
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    profiler = cProfile.Profile() if args.profile else None
    wall0, cpu0 = time.perf_counter(), time.process_time()
    if profiler is not None:
        profiler.enable()
    result = read()
    if profiler is not None:
        profiler.disable()
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    threads = {name: round(v - threads0.get(name, 0.0), 3) for name, v in _thread_cpu().items()}
    rows = len(result) if hasattr(result, "__len__") else getattr(result, "rows", 0)
    out: dict[str, Any] = {"case": case, "rows": rows, "cpu": cpu, "wall": wall,
                           "rss_peak_mb": rss / 1024, "rss_growth_mb": (rss - rss0) / 1024,
                           "threads": threads}
    if profiler is not None:
        text = io.StringIO()
        pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(18)
        out["profile"] = text.getvalue()
    return out


# --------------------------------------------------------------------------- driver

def _spawn(case: str, args: argparse.Namespace, profile: bool = False) -> dict[str, Any]:
    command = [sys.executable, os.path.abspath(__file__), "--child", "--case", case, "--host", args.host,
               "--port", str(args.port), "--rows", str(args.rows), "--protocol", str(args.protocol),
               "--requests", str(args.requests), "--warmup", str(args.warmup)]
    if profile:
        command.append("--profile")
    return run_json_child(case, command)


def run_json_child(case: str, command: list[str]) -> dict[str, Any]:
    """Run a measuring child process and return the JSON of its last ``{`` line."""
    done = subprocess.run(command, capture_output=True, text=True, timeout=1800)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        raise SystemExit(f"{case} failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}")
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def _print_peer_targets(medians: dict[str, dict[str, float]], cannot: dict[str, str],
                        notes: dict[str, str]) -> list[dict[str, Any]]:
    """The client CPU ratios of cqlcodec to the native clients, against issue 32's targets."""
    print(f"\n{'cqlcodec / other, client CPU':32s} {'cqlcodec s':>10s} {'other s':>8s} {'ratio':>6s} "
          f"{'target':>7s}  met")
    out: list[dict[str, Any]] = []
    for label, ours, other, target in PEER_TARGETS:
        row: dict[str, Any] = {"what": label, "cqlcodec": ours, "other": other, "target": target}
        if ours in medians and other in medians:
            row["ratio"] = medians[ours]["cpu"] / medians[other]["cpu"]
            met = "" if target is None else ("yes" if row["ratio"] <= target else "NO")
            shown = "" if target is None else f"<={target:g}"
            row["note"] = notes.get(other, "")
            print(f"{label:32s} {medians[ours]['cpu']:10.3f} {medians[other]['cpu']:8.3f} "
                  f"{row['ratio']:6.2f} {shown:>7s}  {met}  {row['note']}")
        else:
            row["cannot"] = cannot.get(other) or cannot.get(ours, "not measured")
            print(f"{label:32s} {other} cannot: {row['cannot']}")
        out.append(row)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9042)
    parser.add_argument("--protocol", type=int, default=5)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", choices=["read", "insert", "readpath", "peers", "aio",
                                           "aio-requests", "small", "requests"], default=None)
    parser.add_argument("--requests", type=int, default=20_000,
                        help="--only small, requests: counted requests (100 in flight)")
    parser.add_argument("--warmup", type=int, default=2_000,
                        help="--only small, requests: warm-up requests")
    parser.add_argument("--small-kind", action="append", default=[],
                        help="--only small: run only the cases whose name holds this "
                             "(e.g. 'insert'); repeatable")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--out", default="bench-results")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--case", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    if args.only == "requests":  # small requests on cqlcodec's own request path (issue 43)
        from server_requests import run_group

        run_group(args.host, args.port, args.protocol, args.runs, args.out, args.requests,
                  args.warmup)
        return
    import cassandra

    import cqlcodec

    prepare_data(args)
    cases = ((READS if args.only in (None, "read") else [])
             + (INSERTS if args.only in (None, "insert") else [])
             + (READPATH if args.only == "readpath" else [])
             + (PEERS if args.only == "peers" else [])
             + (AIO if args.only in (None, "aio") else [])
             + (AIO_REQUEST_CASES if args.only == "aio-requests" else [])
             + ([case for case in server_small.CASES
                  if not args.small_kind or any(kind in case for kind in args.small_kind)]
                if args.only == "small" else []))
    if "aio acsylla execute" in cases and importlib.util.find_spec("acsylla") is None:
        print("acsylla is not installed (pip install acsylla): its case is left out")
        cases.remove("aio acsylla execute")
    runs: dict[str, list[dict[str, Any]]] = {case: [] for case in cases}
    cannot: dict[str, str] = {}  # a peer's read it cannot do: the reason, once
    for run in range(args.runs):
        for case in cases:
            if case in cannot:
                continue
            r = _spawn(case, args)
            if "cannot" in r:
                cannot[case] = r["cannot"]
                del runs[case]
                print(f"run {run + 1}/{args.runs} {case:52s} cannot: {r['cannot']}", flush=True)
                continue
            runs[case].append(r)
            if case.startswith("small"):
                print(f"run {run + 1}/{args.runs} {case:40s} cpu {r['cpu_per_request']:7.1f} us/req  "
                      f"{r['requests_per_s']:7.0f} req/s  {r['switches_per_request']:5.2f} "
                      f"switches/req ({r['voluntary_per_request']:5.2f} voluntary)", flush=True)
                continue
            lag = (f"  loop lateness p50 {r['lateness_ms']['p50']:.1f} ms p99 {r['lateness_ms']['p99']:.1f} ms "
                   f"max {r['lateness_ms']['max']:.1f} ms" if "lateness_ms" in r else "")
            print(f"run {run + 1}/{args.runs} {case:52s} cpu {r['cpu']:7.2f} s  wall {r['wall']:7.2f} s  "
                  f"peak RSS {r['rss_peak_mb']:7.1f} MB (+{r['rss_growth_mb']:.1f}){lag}", flush=True)
    if args.only == "small":
        small = server_small.report(runs, args)
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "server_small.json"), "w") as f:
            json.dump({"runs": runs, **small, "compiled": cqlcodec.COMPILED,
                       "driver": cassandra.__version__, "protocol": args.protocol,
                       "time": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}, f, indent=1)
        return
    medians = {case: {key: statistics.median(r[key] for r in results)
                      for key in ("cpu", "wall", "rss_peak_mb", "rss_growth_mb")}
               for case, results in runs.items()}
    print(f"\n{args.rows:,} rows, medians of {args.runs} runs; cqlcodec compiled={cqlcodec.COMPILED}, "
          f"driver {cassandra.__version__}, protocol v{args.protocol}")
    print(f"{'case':52s} {'CPU s':>8s} {'CPU/row us':>10s} {'wall s':>8s} {'peak RSS MB':>12s} {'growth MB':>10s}")
    for case, m in medians.items():
        print(f"{case:52s} {m['cpu']:8.2f} {m['cpu'] / args.rows * 1e6:10.1f} {m['wall']:8.2f} "
              f"{m['rss_peak_mb']:12.1f} {m['rss_growth_mb']:10.1f}")
    ratios = []
    for base, new in RATIOS:
        if base in medians and new in medians:
            b, n = medians[base], medians[new]
            ratios.append({"baseline": base, "cqlcodec": new, "cpu_ratio": b["cpu"] / n["cpu"],
                           "wall_ratio": b["wall"] / n["wall"],
                           "rss_peak_fraction": n["rss_peak_mb"] / b["rss_peak_mb"],
                           "rss_growth_fraction": n["rss_growth_mb"] / max(b["rss_growth_mb"], 1e-9)})
            r = ratios[-1]
            print(f"{new} vs {base}: client CPU {r['cpu_ratio']:.2f}x lower, wall {r['wall_ratio']:.2f}x, "
                  f"peak RSS {r['rss_peak_fraction']:.2f} of it (growth {r['rss_growth_fraction']:.2f})")
    notes = {case: results[0].get("note", "") for case, results in runs.items()}
    peer_ratios = _print_peer_targets(medians, cannot, notes) if args.only == "peers" else []
    for what in ("vectors", "mixed"):
        cells = {case: medians[case]["cpu"] for case in cases if case.startswith(f"readpath {what}")}
        if len(cells) == 4:
            cpu = {tuple(case.split()[2:]): value for case, value in cells.items()}
            for conn in ("driver", "cqlcodec"):
                ratios.append({"read": what, "connection": conn,
                               "v5_over_v4_cpu": cpu[("v5", conn)] / cpu[("v4", conn)]})
                print(f"readpath {what}, {conn} connection: client CPU v5/v4 = "
                      f"{ratios[-1]['v5_over_v4_cpu']:.2f}")
            for v in ("v4", "v5"):
                ratios.append({"read": what, "protocol": v,
                               "cqlcodec_over_driver_cpu": cpu[(v, "cqlcodec")] / cpu[(v, "driver")]})
                print(f"readpath {what}, {v}: client CPU cqlcodec connection / driver's = "
                      f"{ratios[-1]['cqlcodec_over_driver_cpu']:.2f}")
    profiles = {}
    if args.profile:
        for case in medians:
            profiles[case] = _spawn(case, args, profile=True)
            print(f"\n=== {case}: thread CPU {profiles[case]['threads']}\n{profiles[case]['profile']}")
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "server_io.json"), "w") as f:
        json.dump({"rows": args.rows, "runs": runs, "medians": medians, "ratios": ratios,
                   "peer_ratios": peer_ratios, "cannot": cannot, "profiles": profiles, "compiled": cqlcodec.COMPILED,
                   "driver": cassandra.__version__, "protocol": args.protocol,
                   "time": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}, f, indent=1)


if __name__ == "__main__":
    main()
