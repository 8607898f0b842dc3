"""Small requests in driver mode (issue 42): ``server_io.py --only small``.

One-row prepared reads of ``kv (id int PRIMARY KEY, name text, score double, ts timestamp,
tags list<text>)`` (``SMALL_ROWS`` rows, random ids) and single-row inserts, each by the
driver alone and with ``cqlcodec.driver.install(cluster)`` (its connection class too), on
protocol ``--protocol`` (default 5):

* ``read named_tuple 100``: a window of 100 ``execute_async`` futures, the default
  ``named_tuple_factory``;
* ``read tuple 100``: the same with ``tuple_factory``;
* ``read one at a time``: ``session.execute`` one after the other (p50 latency);
* ``insert 100``: single-row prepared inserts, a window of 100.

Each measurement is a fresh process (server_io.py's ``--child``): ``--warmup`` requests,
then ``--requests`` counted ones; client CPU is getrusage (user + sys) of the process,
context switches the voluntary and involuntary ones of every thread of the process
(``/proc/self/task/*/status``, the per-thread form of ``/proc/self/status``), and the
voluntary ones alone (a thread that waits: the wake-ups; the involuntary ones grow with
the machine's load). Rounds are
interleaved (every case once per round, the driver's next to cqlcodec's); medians of
``--runs`` rounds; the ratios are printed against the issue's targets.
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import resource
import statistics
import time
from collections.abc import Callable
from typing import Any

SMALL_ROWS = 10_000
WINDOW = 100
MODES = ("driver", "install")
KINDS = ("read named_tuple 100", "read tuple 100", "read one at a time", "insert 100")
CASES = [f"small {kind} {mode}" for kind in KINDS for mode in MODES]
# (what, kind, measure, target: install / driver at most (or at least, for req/s))
TARGETS = [
    ("CPU/request, 100 in flight, named tuples", "read named_tuple 100", "cpu_per_request", 0.5),
    ("req/s, 100 in flight, named tuples", "read named_tuple 100", "requests_per_s", 1.6),
    ("CPU/request, 100 in flight, tuple_factory", "read tuple 100", "cpu_per_request", 0.8),
    ("CPU/request, one at a time", "read one at a time", "cpu_per_request", 0.7),
    ("p50 latency, one at a time", "read one at a time", "p50_us", 0.85),
    ("CPU/request, single-row insert, 100 in flight", "insert 100", "cpu_per_request", 0.7),
]
MEASURES = ("cpu_per_request", "requests_per_s", "switches_per_request", "voluntary_per_request",
            "p50_us")


def prepare(session: Any) -> None:
    """The kv table with SMALL_ROWS rows (once)."""
    session.execute("CREATE TABLE IF NOT EXISTS kv (id int PRIMARY KEY, name text, score double, "
                    "ts timestamp, tags list<text>)", timeout=120)
    session.execute("CREATE TABLE IF NOT EXISTS kv_written (id int PRIMARY KEY, name text, "
                    "score double, ts timestamp, tags list<text>)", timeout=120)
    done = session.execute("SELECT rows FROM loaded WHERE name = 'kv'").one()
    if done is not None and done.rows == SMALL_ROWS:
        return
    from cassandra.concurrent import execute_concurrent_with_args

    insert = session.prepare("INSERT INTO kv (id, name, score, ts, tags) VALUES (?, ?, ?, ?, ?)")
    execute_concurrent_with_args(session, insert, [_row(i) for i in range(SMALL_ROWS)],
                                 concurrency=64)
    session.execute("INSERT INTO loaded (name, rows) VALUES ('kv', %s)", [SMALL_ROWS])


def _row(i: int) -> tuple[Any, ...]:
    import datetime

    stamp = datetime.datetime(2026, 1, 1) + datetime.timedelta(seconds=i * 37)
    return (i, f"name-{i}", i * 0.25, stamp, [f"t{i % 7}", f"u{i % 11}"])


def switches() -> tuple[int, int]:
    """Context switches of every thread of this process so far: all of them, and the
    voluntary ones."""
    total = voluntary = 0
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/status") as f:
                for line in f:
                    if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                        total += int(line.split()[1])
                        if line.startswith("voluntary"):
                            voluntary += int(line.split()[1])
        except OSError:
            continue
    return total, voluntary


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def child(case: str, session: Any, requests: int, warmup: int) -> dict[str, Any]:
    """Run ``case`` (``small KIND MODE``) on ``session``: the warm-up, then the counted
    requests; client CPU, wall, context switches and (one at a time) p50 latency."""
    import gc

    from cassandra.cluster import EXEC_PROFILE_DEFAULT
    from cassandra.query import tuple_factory

    kind = case[len("small "):].rsplit(" ", 1)[0]
    if kind == "read tuple 100":
        session.get_execution_profile(EXEC_PROFILE_DEFAULT).row_factory = tuple_factory
    if kind.startswith("insert"):
        statement = session.prepare(
            "INSERT INTO kv_written (id, name, score, ts, tags) VALUES (?, ?, ?, ?, ?)")
        rows = [_row(i) for i in range(SMALL_ROWS)]

        def values(i: int) -> Any:
            return rows[i % SMALL_ROWS]
    else:
        statement = session.prepare("SELECT * FROM kv WHERE id = ?")
        keys = [(random.Random(i).randrange(SMALL_ROWS),) for i in range(SMALL_ROWS)]

        def values(i: int) -> Any:
            return keys[i % SMALL_ROWS]
    run: Callable[[int, int], list[float]] = (
        _one_at_a_time if kind == "read one at a time" else _windowed)(session, statement, values)
    run(0, warmup)
    gc.collect()
    cpu0, switches0, wall0 = _cpu(), switches(), time.perf_counter()
    latencies = run(warmup, warmup + requests)
    wall, cpu, switches1 = time.perf_counter() - wall0, _cpu() - cpu0, switches()
    out: dict[str, Any] = {"case": case, "requests": requests, "cpu": cpu, "wall": wall,
                           "cpu_per_request": cpu / requests * 1e6,
                           "requests_per_s": requests / wall,
                           "switches_per_request": (switches1[0] - switches0[0]) / requests,
                           "voluntary_per_request": (switches1[1] - switches0[1]) / requests}
    if latencies:
        out["p50_us"] = statistics.median(latencies) * 1e6
    return out


def _windowed(session: Any, statement: Any,
              values: Callable[[int], Any]) -> Callable[[int, int], list[float]]:
    def run(first: int, end: int) -> list[float]:
        window: collections.deque[Any] = collections.deque()
        for i in range(first, end):
            if len(window) >= WINDOW:
                window.popleft().result()
            window.append(session.execute_async(statement, values(i)))
        while window:
            window.popleft().result()
        return []
    return run


def _one_at_a_time(session: Any, statement: Any,
                   values: Callable[[int], Any]) -> Callable[[int, int], list[float]]:
    def run(first: int, end: int) -> list[float]:
        latencies = []
        clock = time.perf_counter
        for i in range(first, end):
            t0 = clock()
            session.execute(statement, values(i)).one()
            latencies.append(clock() - t0)
        return latencies
    return run


def report(runs: dict[str, list[dict[str, Any]]], args: argparse.Namespace) -> dict[str, Any]:
    """Print the medians per case and the install/driver ratios against the targets."""
    medians = {case: {m: statistics.median(r[m] for r in results) for m in MEASURES
                      if all(m in r for r in results)}
               for case, results in runs.items() if results}
    print(f"\nsmall requests, protocol v{args.protocol}: {args.requests:,} counted after "
          f"{args.warmup:,} warm-up, medians of {args.runs} interleaved rounds")
    print(f"{'case':40s} {'CPU us/req':>10s} {'req/s':>8s} {'switches/req':>12s} "
          f"{'voluntary':>9s} {'p50 us':>8s}")
    for case, m in medians.items():
        p50 = f"{m['p50_us']:8.0f}" if "p50_us" in m else f"{'':8s}"
        print(f"{case:40s} {m['cpu_per_request']:10.1f} {m['requests_per_s']:8.0f} "
              f"{m['switches_per_request']:12.2f} {m.get('voluntary_per_request', 0):9.2f} {p50}")
    print(f"\n{'install() / driver':48s} {'ratio':>6s} {'target':>7s}  met")
    ratios = []
    for label, kind, measure, target in TARGETS:
        ours, theirs = medians.get(f"small {kind} install"), medians.get(f"small {kind} driver")
        if not ours or not theirs or measure not in ours:
            continue
        ratio = ours[measure] / theirs[measure]
        higher = measure == "requests_per_s"
        met = ratio >= target if higher else ratio <= target
        shown = f"{'>=' if higher else '<='}{target:g}"
        print(f"{label:48s} {ratio:6.2f} {shown:>7s}  {'yes' if met else 'NO'}")
        ratios.append({"what": label, "ratio": ratio, "target": shown, "met": met})
    for kind in KINDS:
        ours, theirs = medians.get(f"small {kind} install"), medians.get(f"small {kind} driver")
        if ours and theirs:
            print(f"context switches per request, {kind}: driver "
                  f"{theirs['switches_per_request']:.2f}, install {ours['switches_per_request']:.2f}"
                  f" (voluntary: {theirs.get('voluntary_per_request', 0):.2f}, "
                  f"{ours.get('voluntary_per_request', 0):.2f})")
    return {"medians": medians, "ratios": ratios}
