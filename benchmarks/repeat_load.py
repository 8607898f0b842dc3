"""A load with write times run again: what looking up non-frozen lists costs.

Fills a table of ``--rows`` rows (10 a partition, a ``list<int>`` and a text), reads it
with ``writetime``/``ttl`` columns, then loads that data three ways, each timed (wall and
this process's CPU): into an empty table (no lookup), the same data again into the
now full table (every list looked up, none written twice), and into a table that held
one other row when the load began (every list looked up, all written). Needs a server:
``python benchmarks/repeat_load.py --host 127.0.0.1 --port 9042``. Prints one line per
case and the ratio of each to the first, and checks the lists came out exact.
"""

from __future__ import annotations

import argparse
import resource
import time
from typing import Any

KS = "cqlcodec_bench_repeats"


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9042)
    parser.add_argument("--rows", type=int, default=20_000)
    args = parser.parse_args()

    import pyarrow as pa
    from cassandra.cluster import Cluster

    import cqlcodec.driver as cd

    cluster = Cluster([args.host], port=args.port, protocol_version=5)
    cd.install(cluster)
    session = cluster.connect()
    session.execute(f"DROP KEYSPACE IF EXISTS {KS}")
    session.execute(f"CREATE KEYSPACE {KS} WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    for name in ("src", "again", "other"):
        session.execute(f"CREATE TABLE {KS}.{name} (k int, c int, l list<int>, v text, "
                        "PRIMARY KEY (k, c))")
    n = args.rows
    cd.load_table(session, f"{KS}.src", pa.table({
        "k": pa.array([i // 10 for i in range(n)], pa.int32()),
        "c": pa.array([i % 10 for i in range(n)], pa.int32()),
        "l": pa.array([[i, i + 1, i + 2] for i in range(n)], pa.list_(pa.int32())),
        "v": [f"v{i}" for i in range(n)]}))
    data = cd.scan_table(session, f"{KS}.src", writetime=True, ttl=True).to_arrow()
    session.execute(f"INSERT INTO {KS}.other (k, c) VALUES (-1, 0)")
    cases = [("into an empty table", "again"), ("the same data again", "again"),
             ("into a table holding one other row", "other")]
    first: tuple[float, float] | None = None
    for label, table in cases:
        cpu, wall = _cpu(), time.monotonic()
        result: Any = cd.load_table(session, f"{KS}.{table}", data)
        cpu, wall = _cpu() - cpu, time.monotonic() - wall
        first = first or (wall, cpu)
        print(f"{label:36} wall {wall:6.2f} s ({wall / first[0]:4.2f}x)  "
              f"client CPU {cpu:6.2f} s ({cpu / first[1]:4.2f}x)  failures {len(result.failures)}")
    want = sorted(tuple(r) for r in session.execute(f"SELECT k, c, l FROM {KS}.src"))
    for table in ("again", "other"):
        got = sorted(tuple(r) for r in session.execute(
            f"SELECT k, c, l FROM {KS}.{table} WHERE k >= 0 ALLOW FILTERING"))
        print(f"{table}: lists exact: {got == want}")
    session.execute(f"DROP KEYSPACE {KS}")
    cluster.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
