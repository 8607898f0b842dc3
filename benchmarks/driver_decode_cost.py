"""Client CPU of driver mode: captured RESULT pages decoded by the driver alone and by an
installed session's protocol handler, for several builds of cqlcodec side by side.

Capture once (needs a running Cassandra 5 and ``CQLCODEC_CASSANDRA=host:port``)::

    python benchmarks/driver_decode_cost.py capture pages.bin

writes the RESULT messages (frame bodies, metadata inline: unprepared ``SELECT``) of
2000 rows x (int, vector<float, 768>) and 10000 mixed rows, at protocol v4 and v5.
Then compare builds, each given as a Python interpreter and an optional source tree::

    python benchmarks/driver_decode_cost.py compare pages.bin \\
        --build old=/venv-old/bin/python --build new=/venv-new/bin/python --rounds 5

Each round runs every build once in a fresh process (builds interleaved); a process
decodes every page with the plain driver handler and with the installed one in turns,
GC disabled while timed, and reports the best time of each. Printed: per workload and
build, installed / plain (client CPU of driver mode relative to the driver alone) and
the build's installed time relative to the first build's.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import pickle
import random
import subprocess
import sys
import time
from typing import Any

KEYSPACE = "cqlcodec_cost"
# name -> (column definitions, column names, rows, fetch size)
WORKLOADS: dict[str, tuple[str, str, int, int]] = {
    "vector768": ("k int PRIMARY KEY, emb vector<float, 768>", "k, emb", 2000, 1000),
    "mixed": ("k int PRIMARY KEY, name text, amount double, total bigint, flag boolean, "
              "id uuid, created timestamp, tags set<text>, counts map<text, int>",
              "k, name, amount, total, flag, id, created, tags, counts", 10000, 5000),
}
RESULT_OPCODE = 0x08


def _row(name: str, rnd: random.Random, k: int) -> tuple[Any, ...]:
    import datetime
    import uuid
    if name == "vector768":
        return (k, [rnd.randint(-1000, 1000) / 64.0 for _j in range(768)])
    return (k, f"name-{k}", rnd.random() * 1000, rnd.getrandbits(62), k % 2 == 0,
            uuid.UUID(int=rnd.getrandbits(128)), datetime.datetime(2024, 1, 1, 0, 0, k % 60),
            {f"t{j}" for j in range(k % 4 + 1)}, {f"c{j}": j for j in range(3)})


def capture(path: str) -> None:
    from cassandra.cluster import Cluster
    from cassandra.protocol import ProtocolHandler
    from cassandra.query import SimpleStatement

    host, _, port = os.environ["CQLCODEC_CASSANDRA"].rpartition(":")
    pages: list[tuple[str, int, int, int, bytes]] = []
    grabbed: list[tuple[int, int, int, bytes]] = []
    real = ProtocolHandler.decode_message.__func__

    def grab(cls: Any, protocol_version: int, user_type_map: Any, stream_id: int,
             flags: int, opcode: int, body: bytes, *args: Any) -> Any:
        if opcode == RESULT_OPCODE:
            grabbed.append((protocol_version, flags, opcode, bytes(body)))
        return real(cls, protocol_version, user_type_map, stream_id, flags, opcode, body,
                    *args)

    for version in (4, 5):
        cluster = Cluster([host or "127.0.0.1"], port=int(port), protocol_version=version)
        session = cluster.connect()
        if version == 4:
            session.execute(f"CREATE KEYSPACE IF NOT EXISTS {KEYSPACE} WITH replication = "
                            "{'class': 'SimpleStrategy', 'replication_factor': 1}")
            for name, (columns, names, rows, _fetch) in WORKLOADS.items():
                session.execute(f"DROP TABLE IF EXISTS {KEYSPACE}.{name}", timeout=60)
                session.execute(f"CREATE TABLE {KEYSPACE}.{name} ({columns})", timeout=60)
                marks = ", ".join(["?"] * len(names.split(", ")))
                insert = session.prepare(
                    f"INSERT INTO {KEYSPACE}.{name} ({names}) VALUES ({marks})")
                rnd = random.Random(1)
                futures = []
                for k in range(rows):
                    futures.append(session.execute_async(insert, _row(name, rnd, k)))
                    if len(futures) >= 200:
                        for fut in futures:
                            fut.result()
                        futures = []
                for fut in futures:
                    fut.result()
        ProtocolHandler.decode_message = classmethod(grab)
        try:
            for name, (_columns, _names, rows, fetch) in WORKLOADS.items():
                grabbed.clear()
                statement = SimpleStatement(f"SELECT * FROM {KEYSPACE}.{name}", fetch_size=fetch)
                assert len(list(session.execute(statement))) == rows
                pages.extend((name, pv, fl, op, b) for pv, fl, op, b in grabbed
                             if b[:4] == b"\x00\x00\x00\x02")
        finally:
            ProtocolHandler.decode_message = classmethod(real)
        cluster.shutdown()
    with open(path, "wb") as out:
        pickle.dump(pages, out)
    print(f"{len(pages)} pages, {sum(len(p[4]) for p in pages)} bytes -> {path}")


def measure(path: str, repeat: int) -> dict[str, dict[str, float]]:
    """Best seconds per (workload, protocol version) to decode its pages, plain and
    installed (cqlcodec imported from this process's path)."""
    from cassandra.protocol import ProtocolHandler

    import cqlcodec.driver.installer as drv

    with open(path, "rb") as f:
        pages: list[tuple[str, int, int, int, bytes]] = pickle.load(f)
    installed = drv._handler_class(ProtocolHandler, drv.Options(False, False))
    handlers = {"plain": ProtocolHandler, "installed": installed}
    groups: dict[str, list[tuple[int, int, int, bytes]]] = {}
    for name, pv, flags, opcode, body in pages:
        groups.setdefault(f"{name} v{pv}", []).append((pv, flags, opcode, body))
    best: dict[str, dict[str, float]] = {g: {m: float("inf") for m in handlers} for g in groups}
    for group, messages in groups.items():  # once each: caches, and the same rows
        rows = {m: [h.decode_message(pv, {}, 0, fl, op, b, None, None).parsed_rows
                    for pv, fl, op, b in messages] for m, h in handlers.items()}
        assert rows["plain"] == rows["installed"], group
    gc.collect()
    for _r in range(repeat):
        for group, messages in groups.items():
            for mode, handler in handlers.items():
                gc.disable()
                t0 = time.perf_counter()
                for pv, fl, op, b in messages:
                    handler.decode_message(pv, {}, 0, fl, op, b, None, None)
                t1 = time.perf_counter()
                gc.enable()
                best[group][mode] = min(best[group][mode], t1 - t0)
                gc.collect()
    return best


def compare(path: str, builds: list[tuple[str, str, str]], rounds: int, repeat: int) -> None:
    results: dict[str, list[dict[str, dict[str, float]]]] = {b[0]: [] for b in builds}
    for _round in range(rounds):
        for label, python, tree in builds:
            env = dict(os.environ)
            if tree:
                env["PYTHONPATH"] = tree
            out = subprocess.run([python, __file__, "measure", path, "--repeat", str(repeat)],
                                 env=env, capture_output=True, text=True, check=True,
                                 cwd="/" if not tree else tree)
            results[label].append(json.loads(out.stdout.strip().splitlines()[-1]))
    first = builds[0][0]
    groups = list(results[first][0])
    print(f"{'workload':18} {'build':8} {'plain ms':>9} {'installed ms':>13} "
          f"{'installed/plain':>16} {'installed vs ' + first:>18}")
    for group in groups:
        base = min(r[group]["installed"] for r in results[first])
        for label, _python, _tree in builds:
            plain = min(r[group]["plain"] for r in results[label])
            inst = min(r[group]["installed"] for r in results[label])
            print(f"{group:18} {label:8} {plain * 1e3:9.2f} {inst * 1e3:13.2f} "
                  f"{inst / plain:16.3f} {inst / base:18.3f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    cap = sub.add_parser("capture")
    cap.add_argument("path")
    mea = sub.add_parser("measure")
    mea.add_argument("path")
    mea.add_argument("--repeat", type=int, default=5)
    com = sub.add_parser("compare")
    com.add_argument("path")
    com.add_argument("--build", action="append", required=True,
                     help="label=python[:source tree put first on PYTHONPATH]")
    com.add_argument("--rounds", type=int, default=3)
    com.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    if args.command == "capture":
        capture(args.path)
    elif args.command == "measure":
        print(json.dumps(measure(args.path, args.repeat)))
    else:
        builds = []
        for spec in args.build:
            label, _, rest = spec.partition("=")
            python, _, tree = rest.partition(":")
            builds.append((label, python, tree))
        compare(args.path, builds, args.rounds, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
