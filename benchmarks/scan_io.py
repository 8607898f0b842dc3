"""Whole-table reads against a real server: ``scan_table`` vs one ``execute_columns`` query.

Reads every row of the ``--rows`` x 10 mixed columns table of benchmarks/server_io.py
(loaded once) into one pyarrow Table, with one ``execute_columns`` query (one page in
flight against one node) and with ``scan_table`` (token-range splits, several in
flight). Each measurement runs in a fresh child process (after its imports and
connection): wall time and client CPU (every thread of the process). Medians of
``--runs`` interleaved runs, and the ratios.

    python benchmarks/scan_io.py --host 127.0.0.1 --port 9042 [--rows N] [--runs N]

``nox -s bench_scan`` starts a server (16 vnodes), installs the compiled build and runs this.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from server_io import _connect, _mixed_columns, prepare_data, run_json_child  # noqa: E402

FETCH_SIZE = 5000
CASES = ["execute_columns (one query)", "scan_table"]


def _run_case(case: str, args: argparse.Namespace, session: Any) -> Any:
    import cqlcodec.driver as drv

    names = [name for name, _spec in _mixed_columns()]
    if case == "execute_columns (one query)":
        return drv.execute_columns(session, f"SELECT {', '.join(names)} FROM mixed",
                                   fetch_size=FETCH_SIZE).to_arrow()
    if case == "scan_table":
        return drv.scan_table(session, "mixed", names, fetch_size=FETCH_SIZE,
                              splits=args.splits, concurrency=args.concurrency).to_arrow()
    raise SystemExit(f"unknown case {case!r}")


def child(args: argparse.Namespace) -> None:
    """Measure one case in this fresh process and print one JSON line."""
    import pyarrow  # noqa: F401

    import cqlcodec.driver  # noqa: F401

    cluster, session = _connect(args)
    try:
        session.execute("SELECT release_version FROM system.local")
        wall0, cpu0 = time.perf_counter(), time.process_time()
        table = _run_case(args.case, args, session)
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        print(json.dumps({"case": args.case, "rows": table.num_rows, "wall": wall, "cpu": cpu}))
    finally:
        cluster.shutdown()


def _spawn(case: str, args: argparse.Namespace) -> dict[str, Any]:
    command = [sys.executable, os.path.abspath(__file__), "--child", "--case", case,
               "--host", args.host, "--port", str(args.port), "--rows", str(args.rows),
               "--protocol", str(args.protocol)]
    if args.splits:
        command += ["--splits", str(args.splits)]
    if args.concurrency:
        command += ["--concurrency", str(args.concurrency)]
    return run_json_child(case, command)


def main() -> None:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9042)
    parser.add_argument("--protocol", type=int, default=5)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--splits", type=int, default=0, help="scan_table splits (default: its own)")
    parser.add_argument("--concurrency", type=int, default=0, help="scan_table concurrency")
    parser.add_argument("--skip-load", action="store_true",
                        help="read the mixed table as it is (no reload; rows as found)")
    parser.add_argument("--out", default="bench-results")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--case", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.splits = args.splits or None
    args.concurrency = args.concurrency or None
    if args.child:
        child(args)
        return
    t0 = time.perf_counter()
    if not args.skip_load:
        prepare_data(args)
        print(f"data ready ({args.rows:,} rows x 10 mixed columns) in "
              f"{time.perf_counter() - t0:.1f} s", flush=True)
    results: dict[str, list[dict[str, Any]]] = {case: [] for case in CASES}
    for run in range(args.runs):
        for case in CASES if run % 2 == 0 else CASES[::-1]:  # interleaved, alternating order
            r = _spawn(case, args)
            if args.skip_load:
                args.rows = r["rows"]  # both cases must read the same rows
            assert r["rows"] == args.rows, f"{case}: {r['rows']} rows, expected {args.rows}"
            results[case].append(r)
            print(f"  run {run + 1} {case:28} wall {r['wall']:6.2f} s  cpu {r['cpu']:6.2f} s",
                  flush=True)
    medians = {case: {k: statistics.median(r[k] for r in rs) for k in ("wall", "cpu")}
               for case, rs in results.items()}
    print(f"\n{args.rows:,} rows x 10 mixed columns into one pyarrow Table "
          f"(medians of {args.runs} interleaved runs)")
    print(f"{'case':28} {'wall s':>8} {'cpu s':>8} {'cpu us/row':>11}")
    for case, m in medians.items():
        print(f"{case:28} {m['wall']:8.2f} {m['cpu']:8.2f} {1e6 * m['cpu'] / args.rows:11.2f}")
    one, scan = medians[CASES[0]], medians[CASES[1]]
    print(f"scan_table vs one query: wall {one['wall'] / scan['wall']:.2f}x faster, "
          f"client CPU per row {scan['cpu'] / one['cpu']:.2f}x of the one query's")
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "scan_io.json"), "w") as f:
        json.dump({"rows": args.rows, "runs": results, "medians": medians}, f, indent=1)


if __name__ == "__main__":
    main()
