"""Small requests against a real server (issue 43): one-row reads by key and one-row
inserts through cqlcodec's own request path (``cqlcodec.aio.connect``) against the driver
and the native clients, client CPU per request (getrusage user+sys of the process), the
server's CPU per request when it runs on this machine (its process found by the port it
listens on, in ``/proc``) and requests/s, with 100 requests in flight and one at a time
(there also each request's latency: its median and 99th centile); and two large reads
through ``aio.execute_columns`` on the request path against today's (the driver's) path.

Table ``kv (id int PRIMARY KEY, name text, score double, ts timestamp, tags list<text>)``
with ``KV_ROWS`` rows; prepared ``SELECT * FROM kv WHERE id = ?`` on spread keys
(``requests ...`` cases), prepared ``INSERT INTO kv_ins (id, name, n) VALUES (?, ?, ?)``
(``inserts ...`` cases). Each case runs in a fresh process: connect, prepare, ``--warmup``
requests, then ``--requests`` counted ones (a tenth of them one at a time). Cases
(``--protocol`` is the driver's and cqlcodec's second version; the native clients speak v4):

* ``driver``: ``execute_async`` with a window of 100 futures (one at a time:
  ``session.execute``); ``driver+install``: the same with ``cqlcodec.driver.install``;
* ``cqlcodec vN``: ``FastSession.execute`` from 100 worker coroutines (one: 1 worker);
* ``floor vN``: the least an asyncio client with this codec can cost: the request path's
  own connection with a statement bound by ``cqlcodec.Prepared`` and the answers decoded
  by ``decode_result`` into tuples (reads and inserts), no routing, retries, timeouts,
  client timestamps or row factory; it asks for what the driver's default profile asks
  (consistency ``LOCAL_ONE``, the session's page size), so the server does the same work
  for it as for the request path;
* ``paired <kind> v4``: the floor, ``floor+`` and ``cqlcodec v4`` in one process on one
  loop, in ``SLICES`` rounds of slices each of a quarter of ``--requests`` (the order turned
  every round): the server's own drift (its JIT, collections and compactions move its CPU
  per request by 15% and more between cases seconds apart) falls on all alike; the
  median over the rounds of the request path's req/s and CPU per request against the
  floor's, and ``floor+``'s: the floor plus three of the request path's duties done as it
  does them (the driver's client timestamp on a write, the profile's timeout, the
  session's query plan), what they cost before any other;
* ``acsylla``, ``scyllapy``, ``rsylla``, ``scylladb-rs`` (ScyllaDB's Rust-based Python
  driver, package ``scylladb-rs-driver``, module ``scylla``): 100 worker coroutines (one:
  1), when installed;
* ``columns vectors <path>``: 20,000 rows of ``vector<float, 768>`` (server_io.py's
  ``emb_read``), ``columns mixed <path>``: ``LARGE_ROWS`` rows of ten columns (its
  ``mixed``), each read whole once by ``aio.execute_columns`` on the driver session
  (``driver``, today's path) or on a FastSession (``cqlcodec``), at ``--protocol``:
  client CPU and wall time of the read.

Run by ``server_io.py --only requests`` (``nox -s bench_server -- --only requests``), or
alone: ``python benchmarks/server_requests.py --port 9042 [--runs 3]``.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import importlib.util
import json
import os
import resource
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

KEYSPACE = "cqlcodec_bench"
KV_ROWS = 10_000
WARMUP = 2_000
COUNTED = {"100": 20_000, "1": 2_000}
WINDOW = 100
SLICES = 20  # of each client in a paired case
QUERY = "SELECT * FROM kv WHERE id = ?"
INSERT = "INSERT INTO kv_ins (id, name, n) VALUES (?, ?, ?)"
INSERT_NAMES = ("id", "name", "n")  # ints and text: every client maps Python's int and str
PEERS = ("acsylla", "scyllapy", "rsylla", "scylladb-rs")
PEER_MODULES = {"scylladb-rs": "scylla"}  # pip install scylladb-rs-driver
LARGE_ROWS = 200_000
LARGE_QUERIES = {"vectors": "SELECT k, v FROM emb_read", "mixed": "SELECT * FROM mixed"}


def _installed(peer: str) -> bool:
    return importlib.util.find_spec(PEER_MODULES.get(peer, peer)) is not None


def cases(protocol: int, large: bool = True, only: list[str] | None = None) -> list[str]:
    """Every case name: ``requests|inserts <client> <in flight>``, ``columns <what> <path>``
    (``only``: of these clients alone, e.g. ``["cqlcodec v4", "acsylla"]``)."""
    clients = ["driver", "driver+install", "cqlcodec v4", f"cqlcodec v{protocol}", "floor v4",
               f"floor v{protocol}",
               *[p for p in PEERS if _installed(p)]]
    clients = [c for c in dict.fromkeys(clients) if only is None or c in only]
    out = [f"{kind} {c} {n}" for kind in ("requests", "inserts") for n in ("100", "1")
           for c in clients]
    if "cqlcodec v4" in clients and "floor v4" in clients:
        out += ["paired requests v4", "paired inserts v4"]
    if large:
        out += [f"columns {what} {path}" for what in LARGE_QUERIES for path in ("driver", "cqlcodec")]
    return out


def prepare_kv(host: str, port: int) -> None:
    """The kv table with its rows (once)."""
    from cassandra.cluster import Cluster

    cluster = Cluster([host], port=port, protocol_version=4, connect_timeout=30)
    try:
        s = cluster.connect()
        s.execute(f"CREATE KEYSPACE IF NOT EXISTS {KEYSPACE} WITH replication = "
                  "{'class': 'SimpleStrategy', 'replication_factor': 1}", timeout=120)
        s.set_keyspace(KEYSPACE)
        s.execute("CREATE TABLE IF NOT EXISTS kv (id int PRIMARY KEY, name text, score double, "
                  "ts timestamp, tags list<text>)", timeout=120)
        s.execute("CREATE TABLE IF NOT EXISTS loaded (name text PRIMARY KEY, rows int)", timeout=120)
        s.execute("CREATE TABLE IF NOT EXISTS kv_ins (id int PRIMARY KEY, name text, n int)",
                  timeout=120)
        done = s.execute("SELECT rows FROM loaded WHERE name = 'kv'").one()
        if done is not None and done.rows == KV_ROWS:
            return
        insert = s.prepare("INSERT INTO kv (id, name, score, ts, tags) VALUES (?, ?, ?, ?, ?)")
        from cassandra.concurrent import execute_concurrent_with_args

        base = datetime.datetime(2026, 1, 1)
        execute_concurrent_with_args(s, insert, [
            (k, f"name {k}", k / 7, base + datetime.timedelta(seconds=k), [f"t{k % 5}", "x"])
            for k in range(KV_ROWS)], concurrency=100)
        s.execute("INSERT INTO loaded (name, rows) VALUES ('kv', %s)", [KV_ROWS])
    finally:
        cluster.shutdown()


def _keys(n: int) -> list[int]:
    return [k * 7919 % KV_ROWS for k in range(n)]


def _insert_values(k: int) -> tuple[int, str, int]:
    return k, f"name {k}", 3 * k


def _read_values(k: int) -> tuple[int]:
    return (k,)


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def server_pid(host: str, port: int) -> int | None:
    """The PID of the process of this machine listening on TCP ``port`` (Linux's
    ``/proc``), when ``host`` is this machine and the process can be read; else None."""
    if host not in ("127.0.0.1", "localhost", "::1"):
        return None
    sockets = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                rows = f.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            cols = row.split()
            if cols[3] == "0A" and int(cols[1].rsplit(":", 1)[1], 16) == port:  # LISTEN
                sockets.add(f"socket:[{cols[9]}]")
    if not sockets:
        return None
    for pid in (p for p in os.listdir("/proc") if p.isdigit()):
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}") in sockets:
                    return int(pid)
            except OSError:
                continue
    return None


SERVER: dict[str, int | None] = {"pid": None}  # the server's PID, when it runs here


def _server_cpu() -> float:
    """The server process's CPU time so far (user + system, seconds), -1.0 when it does
    not run on this machine."""
    pid = SERVER["pid"]
    if pid is None:
        return -1.0
    try:
        with open(f"/proc/{pid}/stat") as f:
            cols = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return -1.0
    return (int(cols[11]) + int(cols[12])) / os.sysconf("SC_CLK_TCK")


LATENCIES: list[float] = []  # one at a time: each request's wall time (seconds)


async def _workers(one: Any, keys: list[int], workers: int) -> None:
    it = iter(keys)
    if workers == 1:  # one at a time: each request's latency kept too
        clock = time.perf_counter
        for k in it:
            started = clock()
            await one(k)
            LATENCIES.append(clock() - started)
        return

    async def worker() -> None:
        for k in it:
            await one(k)
    await asyncio.gather(*(worker() for _ in range(workers)))


def _driver_window(session: Any, ps: Any, keys: list[int], window: int,
                   values: Callable[[int], tuple[Any, ...]]) -> None:
    done = threading.Event()
    lock = threading.Lock()
    it = iter(keys)
    left = [len(keys)]
    errors: list[BaseException] = []

    def start() -> None:
        with lock:
            k = next(it, None)
        if k is not None:
            session.execute_async(ps, values(k)).add_callbacks(ok, fail)

    def ok(_rows: Any) -> None:
        with lock:
            left[0] -= 1
            last = left[0] == 0
        if last:
            done.set()
        else:
            start()

    def fail(exc: BaseException) -> None:
        errors.append(exc)
        done.set()
    for _ in range(min(window, len(keys))):
        start()
    done.wait()
    if errors:
        raise errors[0]


def _measure(run: Any, inflight: str) -> dict[str, float]:
    run(_keys(WARMUP if inflight == "100" else max(1, WARMUP // 10)))
    keys = _keys(COUNTED[inflight])
    LATENCIES.clear()
    server0, cpu0, wall0 = _server_cpu(), _cpu(), time.perf_counter()
    run(keys)
    cpu, wall, server = _cpu() - cpu0, time.perf_counter() - wall0, _server_cpu() - server0
    out = {"cpu_us": cpu / len(keys) * 1e6, "req_s": len(keys) / wall, "requests": len(keys)}
    if server0 >= 0:  # the server's CPU per request (its clock ticks: 10 ms)
        out["server_cpu_us"] = server / len(keys) * 1e6
    if len(LATENCIES) == len(keys):  # one at a time: the latency's median and 99th centile
        cuts = statistics.quantiles(LATENCIES, n=100)
        out["p50_us"], out["p99_us"] = cuts[49] * 1e6, cuts[98] * 1e6
    return out


def _cluster(host: str, port: int, protocol: int, timeout: float = 120) -> Any:
    """The driver ``Cluster`` every case of ours runs on: one round-robin default profile
    with a request timeout of ``timeout`` seconds."""
    from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
    from cassandra.policies import RoundRobinPolicy

    profile = ExecutionProfile(load_balancing_policy=RoundRobinPolicy(), request_timeout=timeout)
    return Cluster([host], port=port, protocol_version=protocol, connect_timeout=30,
                   execution_profiles={EXEC_PROFILE_DEFAULT: profile})


def child(case: str, host: str, port: int, protocol: int = 5) -> dict[str, Any]:
    """Measure one case in this process."""
    SERVER["pid"] = server_pid(host, port)
    kind, client, *rest = case.split()
    if kind == "columns":
        return _columns(client, rest[0], host, port, protocol)
    if kind == "paired":
        return _paired(client, host, port)
    inflight = rest[-1]
    version = rest[0] if len(rest) == 2 else ""
    workers = WINDOW if inflight == "100" else 1
    query = INSERT if kind == "inserts" else QUERY
    values = _insert_values if kind == "inserts" else _read_values
    if client in PEERS:
        return _peer(client, host, port, inflight, workers, kind)
    protocol = int(version[1:]) if version else 5
    cluster = _cluster(host, port, protocol)
    if client == "driver+install":
        import cqlcodec.driver

        cqlcodec.driver.install(cluster)
    session = cluster.connect(KEYSPACE)
    ps = session.prepare(query)
    try:
        if client.startswith("driver"):
            if inflight == "1":
                def sync(keys: list[int]) -> None:
                    clock = time.perf_counter
                    for k in keys:
                        started = clock()
                        session.execute(ps, values(k))
                        LATENCIES.append(clock() - started)
                return _measure(sync, inflight)
            return _measure(lambda keys: _driver_window(session, ps, keys, WINDOW, values),
                            inflight)
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        if client == "cqlcodec":
            from cqlcodec import aio

            fast = loop.run_until_complete(aio.connect(session))

            async def one(k: int) -> None:
                await fast.execute(ps, values(k))
            out = _measure(lambda keys: loop.run_until_complete(_workers(one, keys, workers)),
                           inflight)
            loop.run_until_complete(fast.close())
            return out
        one, close = _floor_one(loop, session, ps, values)
        out = _measure(lambda keys: loop.run_until_complete(_workers(one, keys, workers)),
                       inflight)
        close()
        return out
    finally:
        cluster.shutdown()


def _paired(kind: str, host: str, port: int) -> dict[str, Any]:
    """The floor, ``floor+`` and the request path (v4, 100 in flight) in ``SLICES``
    rounds of slices each of a quarter of ``COUNTED["100"]`` requests on one loop, the order
    turned every round: each slice's req/s and CPU per request, and the medians over the
    rounds of the request path's and ``floor+``'s against the floor's."""
    from cqlcodec import aio

    inserts = kind == "inserts"
    values = _insert_values if inserts else _read_values
    cluster = _cluster(host, port, 4)
    session = cluster.connect(KEYSPACE)
    ps = session.prepare(INSERT if inserts else QUERY)
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        floor, close = _floor_one(loop, session, ps, values)
        floor_plus, close_plus = _floor_one(loop, session, ps, values, duties=True)
        fast = loop.run_until_complete(aio.connect(session))

        async def ours(k: int) -> None:
            await fast.execute(ps, values(k))
        clients = {"floor": floor, "floor+": floor_plus, "ours": ours}
        names = list(clients)
        for one in clients.values():
            loop.run_until_complete(_workers(one, _keys(WARMUP), WINDOW))
        keys = _keys(max(1, COUNTED["100"] // 4))
        got: dict[str, dict[str, list[float]]] = {
            name: {"req_s": [], "cpu_us": [], "server_cpu_us": []} for name in clients}
        for i in range(SLICES):
            turn = i % len(names)
            for name in names[turn:] + names[:turn]:
                server0, cpu0, wall0 = _server_cpu(), _cpu(), time.perf_counter()
                loop.run_until_complete(_workers(clients[name], keys, WINDOW))
                cpu, wall = _cpu() - cpu0, time.perf_counter() - wall0
                server = _server_cpu() - server0
                got[name]["req_s"].append(len(keys) / wall)
                got[name]["cpu_us"].append(cpu / len(keys) * 1e6)
                if server0 >= 0:
                    got[name]["server_cpu_us"].append(server / len(keys) * 1e6)
        loop.run_until_complete(fast.close())
        close()
        close_plus()
    finally:
        cluster.shutdown()

    def ratio(what: str, client: str = "ours") -> float:
        return statistics.median(a / b for a, b in zip(got[client][what], got["floor"][what]))
    out = {"req_s_ratio": ratio("req_s"), "cpu_ratio": ratio("cpu_us"),
           "plus_req_s_ratio": ratio("req_s", "floor+"),
           "plus_cpu_ratio": ratio("cpu_us", "floor+"),
           "ours_req_s": statistics.median(got["ours"]["req_s"]),
           "floor_req_s": statistics.median(got["floor"]["req_s"]), "slices": got}
    if got["ours"]["server_cpu_us"] and sum(got["floor"]["server_cpu_us"]) > 0:
        # the server's CPU per request, summed over the slices (a slice is a few of its
        # 10 ms clock ticks)
        out["server_cpu_ratio"] = sum(got["ours"]["server_cpu_us"]) / \
            sum(got["floor"]["server_cpu_us"])
        out["plus_server_cpu_ratio"] = sum(got["floor+"]["server_cpu_us"]) / \
            sum(got["floor"]["server_cpu_us"])
    return out


def _columns(what: str, path: str, host: str, port: int, protocol: int) -> dict[str, float]:
    """One whole read of ``LARGE_QUERIES[what]`` by ``aio.execute_columns`` on the driver
    session or on a FastSession: client CPU and wall time of the read (after a warm-up
    read of a few rows on the same path)."""
    from cqlcodec import aio

    cluster = _cluster(host, port, protocol, 300)
    session = cluster.connect(KEYSPACE)
    query = LARGE_QUERIES[what]

    async def main() -> dict[str, float]:
        target: Any = session if path == "driver" else await aio.connect(session)
        await aio.execute_columns(target, query, limit=10)
        cpu0, wall0 = _cpu(), time.perf_counter()
        pages = await aio.execute_columns(target, query)
        cpu, wall = _cpu() - cpu0, time.perf_counter() - wall0
        rows = sum(batch.num_rows for batch in pages)
        if path != "driver":
            await target.close()
        return {"cpu_s": cpu, "wall_s": wall, "rows": rows}
    try:
        return asyncio.run(main())
    finally:
        cluster.shutdown()


def _floor_one(loop: asyncio.AbstractEventLoop, session: Any, ps: Any,
               values: Callable[[int], tuple[Any, ...]],
               duties: bool = False) -> tuple[Any, Callable[[], None]]:
    """The floor's request (a coroutine function of the key) and its connection's close,
    at the session's protocol version. It asks for the default profile's consistency and
    the session's page size, as the request path does for ``ps`` (the server's work is
    the same), but at v5 for rows with their column specs, as at v4 (the request path
    asks for them without: ``cqlcodec.Prepared`` made from a driver statement has no
    result columns to read them by). ``duties`` (``floor+``): each request also does
    three things the request path does for every call, with its own functions: the
    session's query plan asked for its first host, the driver's client timestamp on a
    write (the cluster's generator, under its lock) and the profile's request timeout
    (a deadline kept by the connection); its parameters are made per request, with the
    session's page size read then, as the request path reads it."""
    import cqlcodec
    from cqlcodec.driver.columns import prepared_of
    from cqlcodec.requests.frames import OP_EXECUTE, OP_RESULT, Parameters, execute_body
    from cqlcodec.requests.handshake import open_connection

    version = session.cluster.protocol_version
    host = next(iter(session.cluster.metadata.all_hosts()))
    conn = loop.run_until_complete(open_connection(loop, host, session.cluster, version, 1024,
                                                   KEYSPACE, 30))
    ours = prepared_of(ps)
    ours = cqlcodec.Prepared(ours.bind_columns, [], ours.pk_indexes, version, ps.query_id)
    metadata_id = ps.result_metadata_id if version >= 5 else None
    from cassandra.cluster import EXEC_PROFILE_DEFAULT

    consistency = session.get_execution_profile(EXEC_PROFILE_DEFAULT).consistency_level
    params = Parameters(int(consistency), None, session.default_fetch_size, None, None, None,
                        False)
    decode = cqlcodec.decode_result

    async def one(k: int) -> None:
        if not conn.has_room():
            await conn.wait_slot()
        frame = await conn.request(OP_EXECUTE, execute_body(version, ps.query_id, metadata_id,
                                                            params, ours.bind(values(k)).values))
        assert frame.opcode == OP_RESULT
        decode(frame.body, version)
    if not duties:
        return one, conn.close
    from cqlcodec.requests.routing import first_host, query_plan
    from cqlcodec.requests.statements import Request, client_timestamp

    generator = session.cluster.timestamp_generator
    probe = Request(OP_EXECUTE, "", ps, None, session, EXEC_PROFILE_DEFAULT)
    timeout = probe.timeout
    write = not ps.result_metadata  # a SELECT is sent without a client timestamp

    async def one_plus(k: int) -> None:
        first_host(query_plan(session, probe))
        if not conn.has_room():
            await conn.wait_slot()
        p = Parameters(int(consistency), None, session.default_fetch_size, None,
                       client_timestamp(generator) if write else None, None, False)
        frame = await conn.request(OP_EXECUTE, execute_body(version, ps.query_id, metadata_id,
                                                            p, ours.bind(values(k)).values),
                                   0, timeout)
        assert frame.opcode == OP_RESULT
        decode(frame.body, version)
    return one_plus, conn.close


def _peer(peer: str, host: str, port: int, inflight: str, workers: int,
          kind: str = "requests") -> dict[str, float]:
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    inserts = kind == "inserts"
    query = INSERT if inserts else QUERY
    if peer == "acsylla":
        acsylla = importlib.import_module("acsylla")  # pip install acsylla (not a nox dependency)

        async def open_acsylla() -> Any:
            cluster = acsylla.create_cluster([host], port=port, protocol_version=4,
                                             request_timeout=120)
            session = await cluster.create_session(keyspace=KEYSPACE)
            return session, await session.create_prepared(query)
        session, prepared = loop.run_until_complete(open_acsylla())

        async def one(k: int) -> None:
            statement = prepared.bind()
            if inserts:
                statement.bind_list(list(_insert_values(k)))
                await session.execute(statement)
                return
            statement.bind(0, k)
            [row.as_tuple() for row in await session.execute(statement)]
    elif peer == "scyllapy":
        scyllapy = importlib.import_module("scyllapy")  # pip install scyllapy (not a nox dependency)

        async def open_scyllapy() -> Any:
            scylla = scyllapy.Scylla([f"{host}:{port}"], keyspace=KEYSPACE)
            await scylla.startup()
            return scylla, await scylla.prepare(query)
        scylla, prepared = loop.run_until_complete(open_scyllapy())

        async def one(k: int) -> None:
            if inserts:
                await scylla.execute(prepared, list(_insert_values(k)))
                return
            (await scylla.execute(prepared, [k])).all()
    elif peer == "rsylla":
        rsylla = importlib.import_module("rsylla")  # pip install rsylla (not a nox dependency)

        async def open_rsylla() -> Any:
            session = await rsylla.SessionBuilder().known_node(f"{host}:{port}") \
                .use_keyspace(KEYSPACE, False).build()
            return session, await session.prepare(query)
        session, prepared = loop.run_until_complete(open_rsylla())

        async def one(k: int) -> None:
            if inserts:
                await session.execute_prepared(prepared, dict(zip(INSERT_NAMES, _insert_values(k))))
                return
            [row.columns() for row in (await session.execute_prepared(prepared, {"id": k})).rows()]
    else:  # pip install scylladb-rs-driver (alpha; module scylla; protocol v4)
        builder = importlib.import_module("scylla.session_builder")

        async def open_scylladb_rs() -> Any:
            session = await builder.SessionBuilder().contact_points([f"{host}:{port}"]).connect()
            await session.use_keyspace(KEYSPACE)
            return session, await session.prepare(query)
        session, prepared = loop.run_until_complete(open_scylladb_rs())

        async def one(k: int) -> None:
            if inserts:
                await session.execute(prepared, list(_insert_values(k)))
                return
            list((await session.execute(prepared, [k])).iter_current_page())
    return _measure(lambda keys: loop.run_until_complete(_workers(one, keys, workers)), inflight)


def prepare_large(host: str, port: int, protocol: int) -> None:
    """The large reads' tables (server_io.py's ``emb_read`` and ``mixed`` with
    ``LARGE_ROWS`` rows; loaded once)."""
    import server_io  # this directory's (sys.path[0] when run as a script)

    server_io.prepare_data(argparse.Namespace(host=host, port=port, protocol=protocol,
                                              rows=LARGE_ROWS, only="readpath", case=""))


def _line(case: str, got: dict[str, Any]) -> str:
    if case.startswith("paired"):
        server, plus_server = (
            f", server CPU/request {got[key]:.2f}x" if key in got else ""
            for key in ("server_cpu_ratio", "plus_server_cpu_ratio"))
        return (f"request path / floor: req/s {got['req_s_ratio']:.2f}x, CPU/request "
                f"{got['cpu_ratio']:.2f}x{server} ({got['ours_req_s']:.0f} / "
                f"{got['floor_req_s']:.0f} req/s); floor+ / floor: req/s "
                f"{got['plus_req_s_ratio']:.2f}x, CPU/request {got['plus_cpu_ratio']:.2f}x"
                f"{plus_server}")
    if case.startswith("columns"):
        return f"{got['cpu_s']:8.2f} s CPU {got['wall_s']:8.2f} s wall {got['rows']:9.0f} rows"
    latency = f"  p50 {got['p50_us']:7.1f} us p99 {got['p99_us']:7.1f} us" if "p50_us" in got else ""
    server = f"  server {got['server_cpu_us']:6.1f} us" if "server_cpu_us" in got else ""
    return f"{got['cpu_us']:8.1f} us CPU/request {got['req_s']:9.0f} req/s{server}{latency}"


def round_order(names: list[str], r: int) -> list[str]:
    """The cases of round ``r`` (from 0): each group of cases measured alike (the same
    kind and number in flight, or the large reads) in its order turned by ``r`` places,
    so that no client always runs first in its group, right after another kind of load
    (inserts, large reads) that leaves the server busy with what followed it."""
    groups: dict[str, list[str]] = {}
    for case in names:
        parts = case.split()
        key = parts[0] if parts[0] == "columns" else f"{parts[0]} {parts[-1]}"
        groups.setdefault(key, []).append(case)
    out: list[str] = []
    for group in groups.values():
        turn = r % len(group)
        out += group[turn:] + group[:turn]
    return out


def run_group(host: str, port: int, protocol: int, runs: int, out_dir: str,
              requests: int | None = None, warmup: int | None = None,
              large: bool = True, clients: list[str] | None = None) -> dict[str, Any]:
    """Every case ``runs`` times, rounds interleaved (each group's order turned by one
    place per round: :func:`round_order`), fresh processes; prints and returns
    the medians and the ratios of cqlcodec's path to the others. ``requests``: counted
    requests with 100 in flight (a tenth one at a time); ``warmup``: requests before them;
    ``large``: the two large ``execute_columns`` reads too."""
    import cqlcodec

    prepare_kv(host, port)
    if large:
        prepare_large(host, port, protocol)
    names = cases(protocol, large, clients)
    sizes = []
    if requests is not None:
        sizes += ["--requests", str(requests)]
    if warmup is not None:
        sizes += ["--warmup", str(warmup)]
    results: dict[str, list[dict[str, Any]]] = {c: [] for c in names}
    cannot: dict[str, str] = {}
    for r in range(runs):
        for case in round_order(names, r):
            if case in cannot:
                continue
            done = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", case,
                                   "--host", host, "--port", str(port), "--protocol",
                                   str(protocol), *sizes],
                                  capture_output=True, text=True, timeout=900)
            lines = [x for x in done.stdout.splitlines() if x.startswith("{")]
            if done.returncode != 0 or not lines:
                cannot[case] = (done.stderr.strip().splitlines() or ["failed"])[-1][:160]
                print(f"run {r + 1}/{runs} {case:34s} cannot: {cannot[case]}", flush=True)
                continue
            got = json.loads(lines[-1])
            results[case].append(got)
            print(f"run {r + 1}/{runs} {case:34s} {_line(case, got)}", flush=True)
    keys = {"cpu_us", "req_s", "cpu_s", "wall_s", "req_s_ratio", "cpu_ratio", "p50_us", "p99_us",
            "server_cpu_us", "server_cpu_ratio", "plus_req_s_ratio", "plus_cpu_ratio",
            "plus_server_cpu_ratio"}
    medians = {c: {k: statistics.median(x[k] for x in v) for k in keys
                   if all(k in x for x in v)} for c, v in results.items() if v}
    print(f"\nmedians of {runs} runs; cqlcodec compiled={cqlcodec.COMPILED}")
    for c, m in medians.items():
        print(f"{c:34s} " + "  ".join(f"{k} {v:10.2f}" for k, v in sorted(m.items())))
    ratios = []
    for kind in ("requests", "inserts"):
        for n in ("100", "1"):
            for ours_client in ("cqlcodec v4", f"cqlcodec v{protocol}"):
                ours = f"{kind} {ours_client} {n}"
                for other in dict.fromkeys(("driver", "driver+install", "floor v4",
                                            f"floor v{protocol}", *PEERS)):
                    key = f"{kind} {other} {n}"
                    if ours in medians and key in medians:
                        ratios.append({"kind": kind, "in_flight": n, "ours": ours_client,
                                       "other": other,
                                       "cpu_ratio": medians[ours]["cpu_us"] / medians[key]["cpu_us"],
                                       "req_s_ratio": medians[ours]["req_s"] / medians[key]["req_s"]})
                        extra = ""
                        if "p50_us" in medians[ours] and "p50_us" in medians[key]:
                            ratios[-1]["p50_ratio"] = medians[ours]["p50_us"] / medians[key]["p50_us"]
                            extra = f", p50 latency {ratios[-1]['p50_ratio']:.2f}x"
                        if "server_cpu_us" in medians[ours] and "server_cpu_us" in medians[key] \
                                and medians[key]["server_cpu_us"] > 0:
                            ratios[-1]["server_cpu_ratio"] = \
                                medians[ours]["server_cpu_us"] / medians[key]["server_cpu_us"]
                            extra += f", server CPU/request {ratios[-1]['server_cpu_ratio']:.2f}x"
                        print(f"{kind} {n:>3s} in flight, {ours_client} / {other:15s}: CPU "
                              f"{ratios[-1]['cpu_ratio']:.2f}x, req/s {ratios[-1]['req_s_ratio']:.2f}x"
                              f"{extra}")
                if ours_client == f"cqlcodec v{protocol}":
                    break
    for what in LARGE_QUERIES:
        ours, today = f"columns {what} cqlcodec", f"columns {what} driver"
        if ours in medians and today in medians:
            ratios.append({"kind": "columns", "what": what,
                           "cpu_ratio": medians[ours]["cpu_s"] / medians[today]["cpu_s"],
                           "wall_ratio": medians[ours]["wall_s"] / medians[today]["wall_s"]})
            print(f"columns {what}: request path / today's path: client CPU "
                  f"{ratios[-1]['cpu_ratio']:.2f}x, wall {ratios[-1]['wall_ratio']:.2f}x")
    for kind in ("requests", "inserts"):
        m = medians.get(f"paired {kind} v4", {})
        # the request path's ratios to the floor in the paired slices, then floor+'s
        for client, key in (("cqlcodec v4", ""), ("floor+ v4", "plus_")):
            if f"{key}req_s_ratio" not in m:
                continue
            ratios.append({"kind": kind, "in_flight": "100", "ours": client,
                           "other": "floor v4, paired", "cpu_ratio": m[f"{key}cpu_ratio"],
                           "req_s_ratio": m[f"{key}req_s_ratio"]})
            server = ""
            if f"{key}server_cpu_ratio" in m:
                ratios[-1]["server_cpu_ratio"] = m[f"{key}server_cpu_ratio"]
                server = f", server CPU/request {m[f'{key}server_cpu_ratio']:.2f}x"
            print(f"{kind} 100 in flight, {client} / floor v4 in the same slices of one "
                  f"process: CPU {m[f'{key}cpu_ratio']:.2f}x, req/s "
                  f"{m[f'{key}req_s_ratio']:.2f}x{server}")
    for case, why in cannot.items():
        print(f"not run: {case}: {why}")
    os.makedirs(out_dir, exist_ok=True)
    report = {"runs": results, "medians": medians, "ratios": ratios, "cannot": cannot,
              "compiled": cqlcodec.COMPILED, "protocol": protocol,
              "time": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    with open(os.path.join(out_dir, "server_requests.json"), "w") as f:
        json.dump(report, f, indent=1)
    return report


def main() -> None:
    global WARMUP
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9042)
    parser.add_argument("--protocol", type=int, default=5)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--requests", type=int, default=COUNTED["100"],
                        help="counted requests with 100 in flight (a tenth one at a time)")
    parser.add_argument("--warmup", type=int, default=WARMUP)
    parser.add_argument("--no-large", action="store_true", help="leave out the columns cases")
    parser.add_argument("--out", default="bench-results")
    parser.add_argument("--clients", default="",
                        help="comma-separated clients to run alone (e.g. 'cqlcodec v4,acsylla')")
    parser.add_argument("--child", default="")
    args = parser.parse_args()
    if args.child:
        COUNTED["100"], COUNTED["1"] = args.requests, max(1, args.requests // 10)
        WARMUP = args.warmup
        print(json.dumps(child(args.child, args.host, args.port, args.protocol)))
        return
    run_group(args.host, args.port, args.protocol, args.runs, args.out, args.requests,
              args.warmup, not args.no_large,
              [c.strip() for c in args.clients.split(",")] if args.clients else None)


if __name__ == "__main__":
    main()
