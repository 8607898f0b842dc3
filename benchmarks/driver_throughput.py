"""Rows per second of a paged read through the driver, with and without cqlcodec.

Needs a running Cassandra 5 (``tools/cassandra.sh``) and ``CQLCODEC_CASSANDRA=host:port``::

    CQLCODEC_CASSANDRA=127.0.0.1:29042 python benchmarks/driver_throughput.py [--rows 10000]

For each table (scalars, collections, vector<float, 768>) the same prepared
``SELECT`` reads ``--rows`` rows in pages of ``--fetch-size`` with a session of the
driver alone, one with ``cqlcodec.driver.install`` (the driver's value classes) and
one with ``plain_values=True``; the modes take turns, and the best of ``--repeat``
full reads of each is reported (start the server with ``CASS_FAST_START=0`` so that
its JIT is the normal one).
Every mode's rows are checked against the driver's before any number is printed.
Then one page is captured and each session's protocol handler decodes it alone
(client-side decoding only, without the server and the network).
"""

from __future__ import annotations

import argparse
import datetime
import io
import os
import random
import sys
import time
import uuid
from collections.abc import Callable
from typing import Any

from cassandra.cluster import Cluster, ResponseFuture, Session
from cassandra.protocol import ResultMessage, _ProtocolHandler

import cqlcodec
import cqlcodec.driver

KEYSPACE = "cqlcodec_bench"
TABLES: dict[str, tuple[str, str, Callable[[random.Random, int], tuple[Any, ...]]]] = {
    "scalars": (
        "p int, c int, name text, amount double, total bigint, flag boolean, id uuid, "
        "created timestamp, PRIMARY KEY (p, c)",
        "name, amount, total, flag, id, created",
        lambda rnd, i: (f"name-{i}", rnd.random() * 1000, rnd.getrandbits(62), i % 2 == 0,
                        uuid.UUID(int=rnd.getrandbits(128)),
                        datetime.datetime(2024, 1, 1, 0, 0, i % 60)),
    ),
    "collections": (
        "p int, c int, tags set<text>, counts map<text, int>, days list<date>, PRIMARY KEY (p, c)",
        "tags, counts, days",
        lambda rnd, i: ({f"t{j}" for j in range(i % 5 + 1)}, {f"k{j}": j for j in range(4)},
                        [datetime.date(2020, 1, 1 + j) for j in range(3)]),
    ),
    "vector768": (
        "p int, c int, emb vector<float, 768>, PRIMARY KEY (p, c)",
        "emb",
        lambda rnd, i: ([rnd.randint(-1000, 1000) / 64.0 for _j in range(768)],),
    ),
}


def _connect(address: str, mode: str) -> tuple[Cluster, Session]:
    host, _, port = address.rpartition(":")
    cluster = Cluster([host or "127.0.0.1"], port=int(port), protocol_version=5)
    if mode == "cqlcodec":
        cqlcodec.driver.install(cluster)
    elif mode == "cqlcodec-plain":
        cqlcodec.driver.install(cluster, plain_values=True)
    return cluster, cluster.connect()


def _fill(session: Session, rows: int) -> None:
    session.execute(f"CREATE KEYSPACE IF NOT EXISTS {KEYSPACE} WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    session.set_keyspace(KEYSPACE)
    for table, (columns, names, make) in TABLES.items():
        session.execute(f"CREATE TABLE IF NOT EXISTS {table} ({columns})")
        have = session.execute(f"SELECT count(*) FROM {table} WHERE p = 0").one()[0]
        if have == rows:
            continue
        session.execute(f"TRUNCATE {table}")
        marks = ", ".join("?" for _n in names.split(","))
        insert = session.prepare(f"INSERT INTO {table} (p, c, {names}) VALUES (0, ?, {marks})")
        rnd = random.Random(table)
        pending: list[ResponseFuture] = []
        for i in range(rows):
            pending.append(session.execute_async(insert, (i, *make(rnd, i))))
            if len(pending) >= 256:
                for f in pending:
                    f.result()
                pending = []
        for f in pending:
            f.result()


def _read_all(session: Session, table: str, fetch_size: int) -> list[Any]:
    ps = session.prepare(f"SELECT * FROM {table} WHERE p = 0")
    ps.fetch_size = fetch_size
    result = session.execute(ps)
    rows: list[Any] = list(result.current_rows)
    while result.has_more_pages:
        result.fetch_next_page()
        rows.extend(result.current_rows)
    return rows


def _capture_page(session: Session, table: str, fetch_size: int
                  ) -> tuple[bytes, int, list[Any]]:
    """One RESULT Rows body (the first page) of the table, as the server sent it."""
    captured: list[tuple[bytes, int]] = []
    real = cqlcodec.decode_rows_result

    def grab(body: Any, protocol_version: int, *args: Any, **kwargs: Any) -> Any:
        captured.append((bytes(body), protocol_version))
        return real(body, protocol_version, *args, **kwargs)

    ps = session.prepare(f"SELECT * FROM {table} WHERE p = 0")
    ps.fetch_size = fetch_size
    setattr(cqlcodec, "decode_rows_result", grab)
    try:
        session.execute(ps)
    finally:
        setattr(cqlcodec, "decode_rows_result", real)
    body, protocol_version = captured[-1]
    return body, protocol_version, list(ps.result_metadata or [])


def _decode_us_per_row(handler: type[_ProtocolHandler], body: bytes, protocol_version: int,
                       metadata: list[Any], repeat: int) -> float:
    """Best time of the handler's RESULT message decoding this body, per row, in µs."""
    message_class = handler.message_types_by_opcode[ResultMessage.opcode]
    assert issubclass(message_class, ResultMessage)
    best = float("inf")
    rows = 1
    for _r in range(repeat):
        f = io.BytesIO(body)
        f.read(4)  # the kind, as recv_body leaves it
        t0 = time.perf_counter()
        message = message_class(2)
        message.recv_results_rows(f, protocol_version, {}, metadata, None)
        best = min(best, time.perf_counter() - t0)
        rows = max(1, len(message.parsed_rows))
    return best / rows * 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--fetch-size", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)
    address = os.environ.get("CQLCODEC_CASSANDRA", "")
    if not address:
        print("set CQLCODEC_CASSANDRA=host:port (tools/cassandra.sh starts a server)",
              file=sys.stderr)
        return 2
    modes = ["driver", "cqlcodec", "cqlcodec-plain"]
    sessions = {m: _connect(address, m) for m in modes}
    try:
        _fill(sessions["cqlcodec"][1], args.rows)
        for _cluster, session in sessions.values():
            session.set_keyspace(KEYSPACE)
        print(f"driver {cqlcodec.driver.driver_name()} {cqlcodec.driver.driver_version()}, "
              f"cqlcodec {'compiled' if cqlcodec.COMPILED else 'interpreted'}, "
              f"{args.rows} rows, pages of {args.fetch_size}, best of {args.repeat}")
        print(f"{'table':<12}" + "".join(f"{m + ' rows/s':>22}" for m in modes)
              + f"{'speedup':>10}")
        for table in TABLES:
            reference = _read_all(sessions["driver"][1], table, args.fetch_size)
            assert len(reference) == args.rows, (table, len(reference))
            for mode in modes:
                rows = _read_all(sessions[mode][1], table, args.fetch_size)
                if mode == "cqlcodec":
                    assert rows == reference, f"{table}: cqlcodec rows differ from the driver's"
                else:
                    assert len(rows) == len(reference)
            times: dict[str, list[float]] = {m: [] for m in modes}
            for _r in range(args.repeat):  # modes interleaved: the server warms up for all
                for mode in modes:
                    t0 = time.perf_counter()
                    _read_all(sessions[mode][1], table, args.fetch_size)
                    times[mode].append(time.perf_counter() - t0)
            best = {m: args.rows / min(times[m]) for m in modes}
            print(f"{table:<12}" + "".join(f"{best[m]:>22,.0f}" for m in modes)
                  + f"{best['cqlcodec'] / best['driver']:>9.2f}x")
        print(f"\nclient-side decoding of one {args.fetch_size}-row page (µs per row, best of "
              f"{args.repeat * 3}):")
        print(f"{'table':<12}" + "".join(f"{m:>22}" for m in modes) + f"{'speedup':>10}")
        for table in TABLES:
            body, protocol_version, metadata = _capture_page(
                sessions["cqlcodec"][1], table, args.fetch_size)
            per_row = {m: _decode_us_per_row(sessions[m][1].client_protocol_handler, body,
                                             protocol_version, metadata, args.repeat * 3)
                       for m in modes}
            print(f"{table:<12}" + "".join(f"{per_row[m]:>22.2f}" for m in modes)
                  + f"{per_row['driver'] / per_row['cqlcodec']:>9.2f}x")
    finally:
        for cluster, _session in sessions.values():
            cluster.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
