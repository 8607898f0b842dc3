"""Whole tables from the command line against a real server: ``python -m cqlcodec
unload`` (Parquet, Parquet with ``--writetime --ttl``, JSON lines, CSV) vs ``cqlsh COPY TO``
(CSV), ``python -m cqlcodec load`` (Parquet, CSV; CSV with ``--max-errors``, clean and with
an unreadable second line, so read line by line) vs ``cqlsh COPY FROM`` (the same rows as
CSV), ``python -m cqlcodec copy`` into a second table (with write times, and
``--ignore-writetime``) vs the ``unload`` + ``load`` that do the same through files and vs
the ``load`` alone, and the peak RSS of ``unload`` at two table sizes.

Every case is one command run as a child process, interleaved with its counterpart,
``--runs`` times (median reported): wall time, client CPU (user + system of the command
and every process it waited for, so cqlsh's worker processes count), peak RSS, and the
server's CPU over the same interval (``/proc`` of the process listening on ``--port``), also
per row: on one machine the server's CPU per row bounds the rows/s of both tools. Every
case starts on a quiet server (no flush or compaction left from the case before: its CPU
below 8% of a core for two seconds running), after one untimed unload that warms the
server's JIT; the server's CPU while it settles after a case (the flushes and compactions a
load leaves) is reported too.

    python benchmarks/table_io.py --port 9042 --cqlsh /path/to/cqlsh [--rows 200000]
        [--runs 3] [--rss-rows 1000000] [--only copy|diff]

``--only copy`` runs only the copy comparison (``copy`` against ``unload --writetime
--ttl`` + ``load`` of its files, and against ``load`` alone), no cqlsh.
``--only diff`` runs the cases of ``python -m cqlcodec diff`` instead: the diff of two equal
tables against reading both at once with ``scan_table`` (two scans side by side in one
process, every batch taken), interleaved, and with ``--rss-rows N`` the peak RSS of a diff
of two equal tables of N rows beside that of ``--rows`` rows.

``nox -s bench_tables`` starts a server with 16 vnodes, installs the compiled build and
cqlsh 6.2.2 in its own venv, and runs this. Results: bench-results/table_io.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any

KEYSPACE = "cqlcodec_bench_tables"
SMALL = ("k bigint PRIMARY KEY, a int, b int, c bigint, d double, e float, f text, "
         "g boolean, h smallint, i bigint")
TICKS = os.sysconf("SC_CLK_TCK")


def small_table(n: int, start: int = 0) -> Any:
    """``n`` rows of ten small columns (the issue's calibration table)."""
    import numpy as np
    import pyarrow as pa

    r = np.arange(start, start + n)
    return pa.table({
        "k": r.astype(np.int64), "a": r.astype(np.int32), "b": (r * 2).astype(np.int32),
        "c": r * 3, "d": r * 0.5, "e": (r * 0.25).astype(np.float32),
        "f": pa.array([f"value-{x}" for x in r.tolist()]), "g": r % 2 == 0,
        "h": (r % 1000).astype(np.int16), "i": r * 7})


def server_pid(port: int) -> int | None:
    """The pid of the process listening on TCP ``port`` (through /proc), if visible."""
    inodes: set[str] = set()
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(name) as f:
                next(f)
                for line in f:
                    fields = line.split()
                    if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                        inodes.add(fields[9])
        except OSError:
            continue
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
                if link.startswith("socket:[") and link[8:-1] in inodes:
                    return int(pid)
        except OSError:
            continue
    return None


def process_cpu(pid: int | None) -> float:
    """User + system CPU seconds of a process so far (0 when unknown)."""
    if pid is None:
        return 0.0
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICKS
    except OSError:
        return 0.0


def settle(server: int | None, limit: float = 180.0) -> float:
    """Waits until the server is quiet (under 8% of a core for two one-second windows
    running, at most ``limit`` seconds); the CPU seconds it spent meanwhile."""
    if server is None:
        return 0.0
    first = process_cpu(server)
    deadline = time.monotonic() + limit
    calm = 0
    while calm < 2 and time.monotonic() < deadline:
        before = process_cpu(server)
        time.sleep(1.0)
        calm = calm + 1 if process_cpu(server) - before < 0.08 else 0
    return process_cpu(server) - first


def measure(command: list[str], server: int | None, env: dict[str, str] | None = None,
            done: str = "", timeout: float = 900.0, cwd: str | None = None) -> dict[str, float]:
    """Runs ``command`` in ``cwd``; its wall time, CPU (with the processes it waited for),
    peak RSS and the server's CPU meanwhile. A failing command is an error unless its
    output holds ``done`` (cqlsh exits non-zero after rows were retried, yet all imported)."""
    before_server = process_cpu(server)
    # output to files, not pipes: cqlsh's progress lines fill a pipe read only at the end
    with tempfile.TemporaryFile() as out_file, tempfile.TemporaryFile() as err_file:
        started = time.perf_counter()
        proc = subprocess.Popen(command, stdout=out_file, stderr=err_file, env=env, cwd=cwd)
        timer = threading.Timer(timeout, proc.kill)  # cqlsh COPY can hang on a lost worker
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        wall = time.perf_counter() - started
        out_file.seek(0)
        err_file.seek(0)
        out = out_file.read().decode(errors="replace")
        err = err_file.read().decode(errors="replace")
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0 and not (done and done in out + err):
        raise RuntimeError(f"{' '.join(command)} failed ({proc.returncode}): {err[-2000:]} {out[-500:]}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
            "rss_mb": usage.ru_maxrss / 1024, "server_cpu": process_cpu(server) - before_server}


def setup(args: argparse.Namespace, work: str) -> None:
    """The tables (source, load target, RSS tables) and the Parquet and CSV files."""
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq
    from cassandra.cluster import Cluster

    import cqlcodec.driver as cd

    cluster = Cluster([args.host], port=args.port, connect_timeout=30)
    cd.install(cluster)
    session = cluster.connect()
    session.default_timeout = 120
    session.execute(f"CREATE KEYSPACE IF NOT EXISTS {KEYSPACE} WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    data = small_table(args.rows)
    pq.write_table(data, os.path.join(work, "data.parquet"))
    pcsv.write_csv(data, os.path.join(work, "data.csv"))
    with open(os.path.join(work, "data.csv"), "rb") as f:  # the same rows after a bad line
        header, rows = f.readline(), f.read()
    with open(os.path.join(work, "data-bad-line.csv"), "wb") as f:
        f.write(header + b'-1,"unclosed\n' + rows)
    tables = [("source", args.rows), ("target", 0)]
    if args.rss_rows:
        tables.append(("big", args.rss_rows))
    if args.only == "diff":  # equal twins of the tables a diff compares
        tables = [("source", args.rows), ("twin", args.rows)]
        if args.rss_rows:
            tables += [("big", args.rss_rows), ("big_twin", args.rss_rows)]
    for name, rows in tables:
        if args.reuse and rows and session.cluster.metadata.keyspaces[KEYSPACE].tables.get(name):
            continue
        session.execute(f"DROP TABLE IF EXISTS {KEYSPACE}.{name}")
        session.execute(f"CREATE TABLE {KEYSPACE}.{name} ({SMALL})")
        for start in range(0, rows, 200_000):
            cd.load_table(session, f"{KEYSPACE}.{name}",
                          small_table(min(200_000, rows - start), start))
    cluster.shutdown()


def truncate(args: argparse.Namespace, table: str) -> None:
    from cassandra.cluster import Cluster

    cluster = Cluster([args.host], port=args.port, connect_timeout=30)
    session = cluster.connect()
    session.execute(f"TRUNCATE {KEYSPACE}.{table}", timeout=120)
    cluster.shutdown()


def in_child(args: argparse.Namespace, step: str, *extra: str) -> None:
    """Runs a setup step in a child process, so that this process stays small (a child
    forked from a big parent would start with the parent's RSS)."""
    subprocess.run([sys.executable, __file__, "--step", step, "--host", args.host,
                    "--port", str(args.port), "--rows", str(args.rows),
                    "--rss-rows", str(args.rss_rows), "--only", args.only, *extra], check=True)


def scan_both(args: argparse.Namespace) -> None:
    """Reads the tables named in ``--table`` (two, comma-separated) at once with
    ``scan_table``, each in a thread of its own, every batch taken: what a diff reads."""
    from cassandra.cluster import Cluster

    import cqlcodec.driver as cd

    cluster = Cluster([args.host], port=args.port, connect_timeout=30)
    cd.install(cluster)
    session = cluster.connect()
    counts: list[int] = []

    def read(table: str) -> None:
        counts.append(sum(len(b) for b in cd.scan_table(session, table, concurrency=4,
                                                          retries=8)))

    threads = [threading.Thread(target=read, args=(f"{KEYSPACE}.{t}",))
               for t in args.table.split(",")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    cluster.shutdown()
    if len(counts) != len(threads):
        raise SystemExit("a scan failed")


def diff_cases(args: argparse.Namespace, run: Any, py: str, conn: list[str],
               options: list[str]) -> None:
    """One round of the ``--only diff`` cases."""
    run("diff equal tables", [py, "-m", "cqlcodec", "diff", f"{KEYSPACE}.source",
                              f"{KEYSPACE}.twin", *options, *conn])
    run("scan both tables", [py, os.path.abspath(__file__), "--step", "scan-both", "--host",
                             args.host, "--port", str(args.port), "--table", "source,twin"])
    if args.rss_rows:
        run("diff big tables", [py, "-m", "cqlcodec", "diff", f"{KEYSPACE}.big",
                                f"{KEYSPACE}.big_twin", *options, *conn])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9042)
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--rss-rows", type=int, default=0,
                        help="also unload a table of this many rows and compare peak RSS")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cqlsh", default=shutil.which("cqlsh") or "cqlsh")
    parser.add_argument("--out", default="bench-results/table_io.json")
    parser.add_argument("--unload-options", default="",
                        help="more options for unload, e.g. '--concurrency 4'")
    parser.add_argument("--reuse", action="store_true",
                        help="keep the source tables of an earlier run (same --rows)")
    parser.add_argument("--only", choices=["io", "copy", "diff"], default="io",
                        help="io (default): unload and load against cqlsh, and copy; copy: "
                             "only the cases of the copy comparison (no cqlsh); diff: the "
                             "diff of two equal tables against scanning both")
    parser.add_argument("--step", help=argparse.SUPPRESS)
    parser.add_argument("--work", help=argparse.SUPPRESS)
    parser.add_argument("--table", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.step == "setup":
        setup(args, args.work)
        return 0
    if args.step == "truncate":
        truncate(args, args.table)
        return 0
    if args.step == "scan-both":
        scan_both(args)
        return 0
    server = server_pid(args.port)
    cores = os.cpu_count() or 1
    work = tempfile.mkdtemp(prefix="cqlcodec-table-io-")
    py = sys.executable
    conn = ["--host", args.host, "--port", str(args.port), "--quiet"]
    unload_options = ["--retries", "8", *args.unload_options.split()]
    cqlsh = [args.cqlsh, args.host, str(args.port), "--request-timeout", "120", "-e"]
    cqlsh_env = dict(os.environ, CQLSH_NO_BUNDLED="TRUE")
    try:
        in_child(args, "setup", "--work", work, *(["--reuse"] if args.reuse else []))
        results: dict[str, list[dict[str, float]]] = {}

        # `python -m` puts the working directory first on sys.path: run every command in the
        # scratch directory, so that it imports the installed build, never the source tree
        build = subprocess.run([py, "-c", "import cqlcodec; print(cqlcodec.COMPILED)"], cwd=work,
                               capture_output=True, text=True, check=True).stdout.strip()
        print(f"cqlcodec build of the commands: {'compiled' if build == 'True' else 'interpreted'}",
              flush=True)

        def run(case: str, command: list[str], env: dict[str, str] | None = None,
                done: str = "") -> None:
            settle(server)
            m = measure(command, server, env, done, cwd=work)
            m["server_settle"] = settle(server)
            results.setdefault(case, []).append(m)
            print(f"{case}: {json.dumps(m)}", flush=True)

        settle(server)  # the setup's flushes and compactions
        warm = os.path.join(work, "warm-up")  # the server's JIT, before any timed read
        measure([py, "-m", "cqlcodec", "unload", f"{KEYSPACE}.source", "-o", warm, "--format",
                 "csv", *unload_options, *conn], server, cwd=work)
        shutil.rmtree(warm)

        for _ in range(args.runs if args.only == "diff" else 0):
            diff_cases(args, run, py, conn, unload_options)
        for i in range(args.runs if args.only in ("io", "copy") else 0):
            out = os.path.join(work, f"unload-{i}")
            run("unload cqlcodec parquet", [py, "-m", "cqlcodec", "unload",
                                            f"{KEYSPACE}.source", "-o", out, *unload_options, *conn])
            shutil.rmtree(out)
            unloads = (("unload cqlcodec parquet --writetime --ttl", ["--writetime", "--ttl"]),
                       ("unload cqlcodec jsonl", ["--format", "jsonl"]),
                       ("unload cqlcodec csv", ["--format", "csv"]))
            for case, extra in unloads[:1] if args.only == "copy" else unloads:
                run(case, [py, "-m", "cqlcodec", "unload", f"{KEYSPACE}.source", "-o", out,
                           *extra, *unload_options, *conn])
                if "--writetime" in extra:  # loaded back: the files-between half of a copy
                    in_child(args, "truncate", "--table", "target")
                    run("load cqlcodec parquet with write times",
                        [py, "-m", "cqlcodec", "load", f"{KEYSPACE}.target", out, *conn])
                shutil.rmtree(out)
            for case, extra in (("copy cqlcodec", []),
                                ("copy cqlcodec --ignore-writetime", ["--ignore-writetime"])):
                in_child(args, "truncate", "--table", "target")
                run(case, [py, "-m", "cqlcodec", "copy", f"{KEYSPACE}.source",
                           f"{KEYSPACE}.target", *extra, *conn])
            in_child(args, "truncate", "--table", "target")
            run("load cqlcodec parquet", [py, "-m", "cqlcodec", "load", f"{KEYSPACE}.target",
                                          os.path.join(work, "data.parquet"), *conn])
            if args.only == "copy":
                continue
            csv_out = os.path.join(work, f"copy-to-{i}.csv")
            run("cqlsh COPY TO csv", [*cqlsh, f"COPY {KEYSPACE}.source TO '{csv_out}' "
                                      "WITH HEADER = true"], cqlsh_env, f"{args.rows} rows exported")
            os.unlink(csv_out)
            in_child(args, "truncate", "--table", "target")
            run("load cqlcodec csv", [py, "-m", "cqlcodec", "load", f"{KEYSPACE}.target",
                                      os.path.join(work, "data.csv"), *conn])
            in_child(args, "truncate", "--table", "target")
            run("load cqlcodec csv --max-errors", [
                py, "-m", "cqlcodec", "load", f"{KEYSPACE}.target",
                os.path.join(work, "data.csv"), "--max-errors", "10", *conn])
            in_child(args, "truncate", "--table", "target")
            run("load cqlcodec csv --max-errors, bad 2nd line", [
                py, "-m", "cqlcodec", "load", f"{KEYSPACE}.target",
                os.path.join(work, "data-bad-line.csv"), "--max-errors", "10",
                *conn[:-1]], done="1 bad rows")  # not --quiet: the summary says it
            in_child(args, "truncate", "--table", "target")
            run("cqlsh COPY FROM csv", [*cqlsh, f"COPY {KEYSPACE}.target FROM "
                                        f"'{os.path.join(work, 'data.csv')}' WITH HEADER = true"],
                cqlsh_env, f"{args.rows} rows imported")
            if args.rss_rows:
                for name, label in (("source", "unload small table"), ("big", "unload big table")):
                    out = os.path.join(work, f"rss-{name}-{i}")
                    run(label, [py, "-m", "cqlcodec", "unload", f"{KEYSPACE}.{name}", "-o", out,
                                *unload_options, *conn])
                    shutil.rmtree(out)
        report(args, results, cores)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def report(args: argparse.Namespace, results: dict[str, list[dict[str, float]]], cores: int) -> None:
    medians = {case: {key: statistics.median(r[key] for r in runs) for key in runs[0]}
               for case, runs in results.items()}
    rows_of = {"unload big table": args.rss_rows, "diff big tables": args.rss_rows}
    print(f"{args.rows:,} rows x 10 small columns, median of {args.runs} interleaved runs, "
          f"{cores} cores\n")
    print(f"{'case':<42} {'wall s':>8} {'rows/s':>10} {'CPU s':>7} {'CPU/row us':>11} "
          f"{'RSS MB':>7} {'server CPU s':>13} {'server CPU/row us':>18} "
          f"{'server % of machine':>20} {'server settling s':>18}")
    for case, m in medians.items():
        rows = rows_of.get(case, args.rows)
        print(f"{case:<42} {m['wall']:>8.2f} {rows / m['wall']:>10,.0f} {m['cpu']:>7.2f} "
              f"{m['cpu'] / rows * 1e6:>11.1f} {m['rss_mb']:>7.0f} {m['server_cpu']:>13.2f} "
              f"{m['server_cpu'] / rows * 1e6:>18.1f} "
              f"{100 * m['server_cpu'] / m['wall'] / cores:>19.0f}% "
              f"{m['server_settle']:>18.2f}")
    ratios: dict[str, float] = {}

    def ratio(name: str, theirs: str, ours: str, key: str) -> None:
        if theirs in medians and ours in medians and medians[ours][key] > 0:
            ratios[name] = medians[theirs][key] / medians[ours][key]

    ratio("unload rows/s vs COPY TO", "cqlsh COPY TO csv", "unload cqlcodec parquet", "wall")
    ratio("load rows/s vs COPY FROM", "cqlsh COPY FROM csv", "load cqlcodec parquet", "wall")
    ratio("unload jsonl rows/s vs COPY TO (target >= 3)", "cqlsh COPY TO csv",
          "unload cqlcodec jsonl", "wall")
    ratio("unload csv rows/s vs COPY TO (target >= 3)", "cqlsh COPY TO csv",
          "unload cqlcodec csv", "wall")
    ratio("load csv rows/s vs COPY FROM (target >= 2)", "cqlsh COPY FROM csv",
          "load cqlcodec csv", "wall")
    ratio("load csv --max-errors time / plain (the same fast path)",
          "load cqlcodec csv --max-errors", "load cqlcodec csv", "wall")
    ratio("load csv read line by line time / plain", "load cqlcodec csv --max-errors, bad 2nd line",
          "load cqlcodec csv", "wall")
    ratio("unload --writetime --ttl time / plain (target <= 1.5)",
          "unload cqlcodec parquet --writetime --ttl", "unload cqlcodec parquet", "wall")
    ratio("load client CPU/row lower than COPY FROM", "cqlsh COPY FROM csv",
          "load cqlcodec parquet", "cpu")
    ratio("unload client CPU/row lower than COPY TO", "cqlsh COPY TO csv",
          "unload cqlcodec parquet", "cpu")
    ratio("unload csv: server CPU/row lower than for COPY TO", "cqlsh COPY TO csv",
          "unload cqlcodec csv", "server_cpu")
    ratio("load csv: server CPU/row lower than for COPY FROM", "cqlsh COPY FROM csv",
          "load cqlcodec csv", "server_cpu")
    ratio("unload jsonl client CPU / csv", "unload cqlcodec jsonl", "unload cqlcodec csv", "cpu")
    copy_ratios(medians, ratios)
    ratio("diff of equal tables time / scanning both (target <= 1.3)", "diff equal tables",
          "scan both tables", "wall")
    if "diff big tables" in medians and "diff equal tables" in medians:
        ratios["diff peak RSS big/small tables (target <= 1.2)"] = (
            medians["diff big tables"]["rss_mb"] / medians["diff equal tables"]["rss_mb"])
    if "unload big table" in medians and "unload small table" in medians:
        ratios["unload peak RSS big/small table"] = (medians["unload big table"]["rss_mb"]
                                                     / medians["unload small table"]["rss_mb"])
    print()
    for name, value in ratios.items():
        print(f"{name}: {value:.2f}x")
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w") as f:
        json.dump({"rows": args.rows, "rss_rows": args.rss_rows, "runs": results,
                   "medians": medians, "ratios": ratios, "cores": cores,
                   "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}, f, indent=1)


def copy_ratios(medians: dict[str, dict[str, float]], ratios: dict[str, float]) -> None:
    """Issue 44: ``copy`` (no files between) against ``unload`` + ``load`` of the same
    rows, and against the ``load`` alone (the server-bound half), with write times and
    without."""
    pairs = (("copy cqlcodec", "unload cqlcodec parquet --writetime --ttl",
              "load cqlcodec parquet with write times", "with write times"),
             ("copy cqlcodec --ignore-writetime", "unload cqlcodec parquet",
              "load cqlcodec parquet", "--ignore-writetime"))
    for copy, unload, load, label in pairs:
        if not all(case in medians for case in (copy, unload, load)):
            continue
        wall = medians[copy]["wall"]
        ratios[f"copy {label} wall / (unload + load) (target <= 0.7)"] = \
            wall / (medians[unload]["wall"] + medians[load]["wall"])
        ratios[f"copy {label} wall / load alone (target <= 1.2)"] = wall / medians[load]["wall"]


if __name__ == "__main__":
    sys.exit(main())
