"""Whole-table reads on Dask and Ray against a single-process scan, side by side.

Fills ``--rows`` rows (default 1,000,000) of ten mixed columns into
``cqlcodec_bench_engines.mixed`` (once; kept for later runs), then reads the whole
table, interleaved, ``--runs`` times each (the first run of each is a warm-up that
opens the workers' sessions and is not counted):

* ``scan_table``: :func:`cqlcodec.driver.scan_table` in this process, into one Arrow
  table (its default concurrency);
* ``dask``: :func:`cqlcodec.dask.read_table` on a ``distributed.LocalCluster`` of
  ``--workers`` processes (1 thread each), partitions persisted on the workers;
* ``ray``: :func:`cqlcodec.ray.read_table` on ``ray.init(num_cpus=--workers)``,
  materialized in Ray's object store.

Each prints rows/s and its ratio to ``scan_table`` of the same run; results in
``bench-results/engines.json``.

    python benchmarks/engine_scan.py --host 127.0.0.1 --port 9042 [--rows N] [--splits N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from typing import Any

KEYSPACE = "cqlcodec_bench_engines"
TABLE = f"{KEYSPACE}.mixed"


def fill(session: Any, rows: int) -> None:
    """Create and fill the table unless it already holds ``rows`` rows."""
    import datetime
    import uuid

    import numpy as np

    from cqlcodec.driver import insert_columns

    session.execute(f"CREATE KEYSPACE IF NOT EXISTS {KEYSPACE} WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 1}", timeout=60)
    session.execute(f"CREATE TABLE IF NOT EXISTS {KEYSPACE}.filled (name text PRIMARY KEY, rows bigint)")
    done = session.execute(f"SELECT rows FROM {KEYSPACE}.filled WHERE name = 'mixed'").one()
    if done is not None and done.rows == rows:
        return
    session.execute(f"DROP TABLE IF EXISTS {TABLE}", timeout=120)
    session.execute(f"CREATE TABLE {TABLE} (k bigint PRIMARY KEY, i int, s smallint, f double, "
                    "r float, b boolean, t text, ts timestamp, u uuid, l list<int>)", timeout=60)
    insert = session.prepare(f"INSERT INTO {TABLE} (k, i, s, f, r, b, t, ts, u, l) "
                             "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
    chunk = 50_000
    base = np.datetime64("2024-01-01T00:00:00", "ms")
    for start in range(0, rows, chunk):
        k = np.arange(start, min(rows, start + chunk), dtype=np.int64)
        columns = {
            "k": k, "i": (k * 7).astype(np.int32), "s": (k % 30000).astype(np.int16),
            "f": k / 3.0, "r": (k % 1000).astype(np.float32), "b": k % 2 == 0,
            "t": [f"name {v} " + "x" * int(v % 24) for v in k.tolist()],
            "ts": base + k.astype("timedelta64[ms]"),
            "u": [uuid.UUID(int=int(v) * 7919 + 1) for v in k.tolist()],
            "l": [[int(v), int(v) + 1] for v in k.tolist()],
        }
        insert_columns(session, insert, columns, concurrency=32, batch_by_replica=True)
        print(f"  filled {min(rows, start + chunk):,} rows", flush=True)
    session.execute(f"INSERT INTO {KEYSPACE}.filled (name, rows) VALUES ('mixed', {rows})")
    del datetime


def main() -> None:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9042)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--splits", type=int, default=16)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--runs", type=int, default=3, help="runs per case, the first a warm-up")
    parser.add_argument("--out", default="bench-results/engines.json")
    parser.add_argument("--fill-only", action="store_true", help="create and fill the table, then stop")
    args = parser.parse_args()

    import distributed
    import ray

    import cqlcodec
    import cqlcodec.dask
    import cqlcodec.ray
    from cqlcodec.driver import plan_splits, scan_table, session_for

    connect = {"contact_points": [args.host], "port": args.port, "protocol_version": 5,
               "connect_timeout": 30, "control_connection_timeout": 30}
    session = session_for(connect)
    fill(session, args.rows)
    if args.fill_only:
        return
    session.cluster.refresh_schema_metadata()
    splits = plan_splits(session, TABLE, args.splits)
    print(f"cqlcodec {'compiled' if cqlcodec.COMPILED else 'interpreted'}, {args.rows:,} rows, "
          f"{len(splits)} splits, {args.workers} workers", flush=True)

    cluster = distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1,
                                       processes=True, dashboard_address=None)
    client = distributed.Client(cluster)
    ray.init(num_cpus=args.workers, include_dashboard=False, log_to_driver=False,
             configure_logging=False)
    ray.data.DataContext.get_current().enable_progress_bars = False

    def run_scan() -> int:
        # batches into one Arrow table (TableScan.to_arrow's stream aborted once in a
        # process that had Ray loaded: see the distrib report)
        import pyarrow

        tables = [pyarrow.table(b) for b in scan_table(session, TABLE, splits=splits) if len(b)]
        return int(pyarrow.concat_tables(tables).num_rows)

    def run_dask() -> int:
        ddf = cqlcodec.dask.read_table(connect, TABLE, splits=splits, split_rows=None)
        persisted = client.persist(ddf)
        distributed.wait(persisted)
        rows = int(persisted.map_partitions(len).compute().sum())
        client.cancel(persisted)
        return rows

    def run_ray() -> int:
        ds = cqlcodec.ray.read_table(connect, TABLE, splits=splits,
                                     override_num_blocks=len(splits)).materialize()
        return int(ds.count())

    cases = {"scan_table": run_scan, "dask": run_dask, "ray": run_ray}
    times: dict[str, list[float]] = {name: [] for name in cases}
    for run in range(args.runs):
        for name, case in cases.items():
            start = time.perf_counter()
            rows = case()
            elapsed = time.perf_counter() - start
            assert rows == args.rows, f"{name}: {rows} rows, expected {args.rows}"
            if run:
                times[name].append(elapsed)
            print(f"  run {run} {name}: {elapsed:.2f} s{' (warm-up)' if not run else ''}", flush=True)
    base = statistics.median(times["scan_table"])
    results = {}
    print(f"\n{'case':<12} {'median s':>9} {'rows/s':>12} {'vs scan_table':>14}")
    for name in cases:
        median = statistics.median(times[name])
        results[name] = {"seconds": times[name], "median": median, "rows_per_s": args.rows / median,
                         "ratio": base / median}
        print(f"{name:<12} {median:>9.2f} {args.rows / median:>12,.0f} {base / median:>13.2f}x")
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w") as f:
        json.dump({"rows": args.rows, "splits": len(splits), "workers": args.workers,
                   "compiled": cqlcodec.COMPILED, "results": results}, f, indent=2)
    ray.shutdown()
    client.close()
    cluster.close()


if __name__ == "__main__":
    main()
