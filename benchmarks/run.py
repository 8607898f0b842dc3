"""Side-by-side benchmark orchestrator: every workload on every implementation, interleaved.

Each implementation lives in its own environment (both drivers install ``cassandra``,
both builds install ``cqlcodec``), so each gets a worker process (``worker.py``) run by
that environment's interpreter. This process, which imports none of them, sends the
workers one timing request at a time: rounds alternate implementations case by case,
and only one worker runs at any moment. Times are thread CPU time with the cyclic GC
off (``timeit``); W7 (DataFrames, converted in thread pools) takes the process CPU time.
Per (case, impl) the median over rounds is reported, plus the best. W7 also gets its
peak memory, one fresh ``memprobe.py`` process per measurement.

    python benchmarks/run.py --worker PY=cqlcodec,floor --worker PY2=cqlcodec-pure \\
        --worker PY3=scylla --worker PY4=cassandra,cassandra-py [--full] [--out DIR]

``nox -s bench`` builds the environments and calls this. Output: one table per workload
(Markdown), the targets, ``results.json`` (raw per-round times, memory) and ``ratios.png``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any, Final

import harness as h
import workloads as wl

HERE: Final = Path(__file__).resolve().parent

C: Final = h.IMPL_CQLCODEC
P: Final = h.IMPL_CQLCODEC_PURE
S: Final = h.IMPL_SCYLLA
D: Final = h.IMPL_CASSANDRA
DP: Final = h.IMPL_CASSANDRA_PY
F: Final = h.IMPL_FLOOR
SHORT: Final[dict[str, str]] = {C: "C", P: "P", S: "S", D: "D", DP: "DP", F: "F"}

MODES: Final[dict[str, tuple[float, int, int]]] = {  # mode -> (min_time per repeat, rounds, memory probes)
    "quick": (0.02, 5, 1),
    "full": (0.2, 7, 3),
}

# When a peer has no equivalent of a case (numpy output), its list path is the yardstick.
PEER_FALLBACK: Final[dict[str, str]] = {
    **{f"W1/numpy/{d}": f"W1/list/{d}" for d in (4, 128, 768, 1536)},
    **{f"W2/float32/{d}": f"W2/list/{d}" for d in (4, 128, 768, 1536)},
    "W5/prepared-numpy/d": "W5/prepared/d",
}

# (label, numerator impl, denominator impl, can use PEER_FALLBACK for the numerator)
RATIOS: Final[list[tuple[str, str, str, bool]]] = [
    ("S/C", S, C, True),
    ("D/C", D, C, True),
    ("DP/P", DP, P, True),
    ("P/C", P, C, False),
    ("C/F", C, F, False),
]


# --------------------------------------------------------------------------- workers


class WorkerProc:
    """A worker subprocess speaking JSON lines."""

    def __init__(self, python: str, impls: list[str], cwd: Path) -> None:
        if os.sep in python:
            python = os.path.abspath(python)
        self.python = python
        self.impls = impls
        self.cwd = cwd
        self.env = dict(os.environ)
        self.env.pop("PYTHONPATH", None)
        self.env["PYTHONDONTWRITEBYTECODE"] = "1"
        self.proc = subprocess.Popen(
            [python, str(HERE / "worker.py"), *impls],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=cwd, env=self.env,
        )
        ready = self._read()
        if "fail" in ready:
            raise SystemExit(f"worker {impls} ({python}) failed to start: {ready['fail']}")

    def _read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"worker {self.impls} ({self.python}) died (exit {self.proc.wait()})")
        reply: dict[str, Any] = json.loads(line)
        return reply

    def call(self, op: str, **args: object) -> Any:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"op": op, **args}) + "\n")
        self.proc.stdin.flush()
        reply = self._read()
        if "fail" in reply:
            raise SystemExit(f"worker {self.impls}: {op} failed:\n{reply['fail']}")
        return reply["ok"]

    def probe_memory(self, impl: str, case: str, body_file: Path) -> dict[str, Any]:
        """Peak memory of one operation, in a fresh process of this environment (memprobe.py)."""
        done = subprocess.run([self.python, str(HERE / "memprobe.py"), impl, case, str(body_file)],
                              stdout=subprocess.PIPE, text=True, cwd=self.cwd, env=self.env, timeout=900)
        lines = done.stdout.strip().splitlines()
        if done.returncode != 0 or not lines:
            raise SystemExit(f"memory probe {impl} {case} ({self.python}) failed (exit {done.returncode})")
        reply: dict[str, Any] = json.loads(lines[-1])
        return reply

    def close(self) -> None:
        try:
            self.call_quit()
        finally:
            self.proc.wait(timeout=60)

    def call_quit(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"op": "quit"}) + "\n")
        self.proc.stdin.close()


# --------------------------------------------------------------------------- results


@dataclass
class Series:
    """The per-round seconds/op of one (case, impl)."""

    number: int
    times: list[float]

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def best(self) -> float:
        return min(self.times)


Results = dict[str, dict[str, Series]]  # case id -> impl -> series
Memory = dict[str, dict[str, list[int]]]  # case id -> impl -> peak bytes per probe
Status = dict[str, dict[str, dict[str, str]]]  # impl -> case id -> {"ok"|"na"|"fails"|"error": text}


def derive(results: Results) -> None:
    """Add the per-value row-path figures: per round (t(K) - t(1)) / (K - 1)."""
    for d in h.DERIVED:
        small, big = results.get(d.small, {}), results.get(d.big, {})
        for impl in set(small) & set(big):
            pairs = zip(small[impl].times, big[impl].times)
            times = [(b - s) / (d.k_big - d.k_small) for s, b in pairs]
            results.setdefault(d.id, {})[impl] = Series(0, times)


def median_of(results: Results, case: str, impl: str) -> float | None:
    series = results.get(case, {}).get(impl)
    return series.median if series else None


def memory_of(memory: Memory, case: str, impl: str) -> float | None:
    peaks = memory.get(case, {}).get(impl)
    return float(statistics.median(peaks)) if peaks else None


def ratio(results: Results, case: str, num: str, den: str, fallback: bool) -> tuple[float | None, bool]:
    """``num / den`` medians; second item tells whether the numerator came from PEER_FALLBACK."""
    d = median_of(results, case, den)
    n = median_of(results, case, num)
    used_fallback = False
    if n is None and fallback and case in PEER_FALLBACK:
        n = median_of(results, PEER_FALLBACK[case], num)
        used_fallback = n is not None
    if n is None or d is None or d <= 0:
        return None, False
    return n / d, used_fallback


# --------------------------------------------------------------------------- formatting


def fmt_time(seconds: float | None) -> str:
    if seconds is None:
        return "n/a"
    us = seconds * 1e6
    if us < 1:
        return f"{us:.3f}"
    if us < 10:
        return f"{us:.2f}"
    if us < 100:
        return f"{us:.1f}"
    return f"{us:,.0f}"


def fmt_ratio(r: float | None, starred: bool = False) -> str:
    if r is None:
        return ""
    text = f"{r:.2f}x" if r < 10 else f"{r:.1f}x" if r < 100 else f"{r:.0f}x"
    return text + ("*" if starred else "")


def table_rows(group: str) -> list[str]:
    """The case ids shown in the table of ``group`` (raw row-path bodies stay in the JSON)."""
    shown = [c.id for c in h.CASES if c.group == group and c.kind not in ("vec_rows", "scalar_rows")]
    derived = [d.id for d in h.DERIVED if d.group == group]
    if group == "W1":  # list, numpy, row path per dimension
        out = []
        for dim in (4, 128, 768, 1536):
            out += [f"W1/list/{dim}", f"W1/numpy/{dim}", f"W1/rowpath/{dim}"]
        return out
    if group == "W3":
        out = []
        for cid in shown:
            label = cid.split("/", 2)[2]
            out += [cid, f"W3/rowpath/{label}"]
        return out
    return shown + derived


def markdown_table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(headers[i]), *(len(r[i]) for r in rows)) if rows else len(headers[i])
              for i in range(len(headers))]
    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.ljust(w) if i == 0 else c.rjust(w)
                                 for i, (c, w) in enumerate(zip(cells, widths))) + " |"
    sep = "|" + "|".join("-" * (w + 1) + (":" if i else "-") for i, w in enumerate(widths)) + "|"
    return "\n".join([line(headers), sep, *(line(r) for r in rows)])


def group_table(results: Results, group: str, impls: list[str]) -> str:
    cases = [c for c in table_rows(group) if c in results]
    present = [i for i in impls if any(i in results[c] for c in cases)]
    ratios = [r for r in RATIOS if r[1] in present and r[2] in present]
    per_value = group in ("W1", "W2", "W5") and C in present
    headers = ["case", *(SHORT[i] + " µs" for i in present),
               *(["C ns/value"] if per_value else []), *(r[0] for r in ratios)]
    rows = []
    starred = False
    for cid in cases:
        row = [cid.split("/", 1)[1]]
        row += [fmt_time(median_of(results, cid, i)) for i in present]
        if per_value:
            t, count = median_of(results, cid, C), values_per_op(cid)
            row.append("" if t is None or not count else f"{t * 1e9 / count:.1f}")
        for _label, num, den, fb in ratios:
            r, star = ratio(results, cid, num, den, fb)
            starred |= star
            row.append(fmt_ratio(r, star))
        rows.append(row)
    out = f"### {h.GROUP_TITLES[group]}\n\n" + markdown_table(headers, rows)
    if group in ("W1", "W3"):
        out += ("\n\n`rowpath` = per value through the RESULT/Rows decoder, "
                "(t(K rows) - t(1 row)) / (K - 1), K = 64 (W1) or 1000 (W3).")
    if group == "W5":
        out += "\n\nµs per message; values = rows x columns (a 10, b 500, c 5000, d 200, e 5000)."
    if starred:
        out += "\n\n`*` the peer has no numpy input/output: compared with its list path."
    return out


def values_per_op(case_id: str) -> int:
    """Values one operation of a W1/W2/W5 case produces or consumes (vector elements, cells)."""
    group, _kind, key = case_id.split("/", 2)
    if group in ("W1", "W2"):
        return int(key)
    if group == "W5":
        rc = wl.ROWS_SPECS[key]
        return rc[1] * len(wl.columns_of(rc[0]))
    return 0


def _cell(results: Results, status: Status, case: str, impl: str) -> str:
    """A time cell: the median, or 'fails' when the implementation's own code failed."""
    if "fails" in status.get(impl, {}).get(case, {}):
        return "fails"
    return fmt_time(median_of(results, case, impl))


def _over(results: Results, num_case: str, num: str, case: str, den: str) -> str:
    n, d = median_of(results, num_case, num), median_of(results, case, den)
    return "" if n is None or d is None or d <= 0 else fmt_ratio(n / d)


COLUMNAR_ROWS: Final[list[tuple[str, str, str]]] = [  # label, case, W5 key
    ("(b) 100 x 5", "W5/columnar/b", "b"),
    ("(c) 1000 x 5", "W5/columnar/c", "c"),
    ("(d) 100 x (int, vector<float,768>) as a float32 matrix", "W5/columnar/d", "d"),
    ("(e) 1000 x 5, 20 % nulls", "W5/columnar/e", "e"),
    ("(b) + to_numpy() of every column", "W5/columnar-numpy/b", "b"),
    ("(c) + to_numpy() of every column", "W5/columnar-numpy/c", "c"),
    ("(e) + to_numpy() of every column", "W5/columnar-numpy/e", "e"),
]


def columnar_table(results: Results, status: Status) -> str:
    """W5 through decode_columns next to the row paths and the drivers' NumpyProtocolHandler."""
    headers = ["W5 case", "C µs", "floor µs", "P µs", "S numpy µs", "D numpy µs", "S rows µs", "C rows µs",
               "P rows µs", "C / floor", "S rows / C", "S numpy / C", "C rows / C", "P rows / P"]
    rows = []
    for label, cid, key in COLUMNAR_ROWS:
        if cid not in results:
            continue
        handler, row_case = f"W5/columnar/{key}", f"W5/prepared/{key}"
        rows.append([label, _cell(results, status, cid, C), _cell(results, status, cid, F),
                     _cell(results, status, cid, P),
                     _cell(results, status, handler, S), _cell(results, status, handler, D),
                     _cell(results, status, row_case, S), _cell(results, status, row_case, C),
                     _cell(results, status, row_case, P), _over(results, cid, C, cid, F),
                     _over(results, row_case, S, cid, C), _over(results, handler, S, cid, C),
                     _over(results, row_case, C, cid, C), _over(results, row_case, P, cid, P)])
    return (f"### {h.GROUP_TITLES['W5col']}\n\n" + markdown_table(headers, rows) + "\n\n"
            "floor = a compiled walk that reads every cell's length word and steps over its "
            "bytes, nothing else ((d): one `frombuffer('>f4').astype(float32)` of the same "
            "values); C/P = `decode_columns(body, 4, prepared)` (compiled/interpreted; (d): "
            "`['embedding'].to_numpy()`, a (100, 768) float32 array); S/D numpy = the drivers' "
            "`NumpyProtocolHandler` on the same body ((d): plus `numpy.array(..., float32)` of its "
            "object array of lists); rows = the row paths of the W5 table (`W5/prepared/*`).")


FRAME_ROWS: Final[list[tuple[str, str]]] = [
    ("rows + pandas.DataFrame(rows)", "W7/rows-pandas"),
    ("decode_columns(...).to_pandas()", "W7/pandas"),
    ("decode_columns(...).to_polars()", "W7/polars"),
]


def frames_table(results: Results, memory: Memory, page_bytes: int) -> str:
    """W7: time and peak memory of each path into a DataFrame, against scylla's rows + DataFrame."""
    headers = ["W7 path", "C ms", "P ms", "S ms", "C peak MB", "P peak MB", "S peak MB",
               "S / C time", "S / C memory"]

    def ms(case: str, impl: str) -> str:
        t = median_of(results, case, impl)
        return "" if t is None else f"{t * 1e3:,.1f}"

    def mb(case: str, impl: str) -> str:
        m = memory_of(memory, case, impl)
        return "" if m is None else f"{m / 1e6:,.1f}"

    yard = "W7/rows-pandas"
    s_peak = memory_of(memory, yard, S)
    rows = []
    for label, cid in FRAME_ROWS:
        if cid not in results:
            continue
        c_peak = memory_of(memory, cid, C)
        rows.append([label, ms(cid, C), ms(cid, P), ms(cid, S), mb(cid, C), mb(cid, P), mb(cid, S),
                     _over(results, yard, S, cid, C),
                     "" if s_peak is None or not c_peak else fmt_ratio(s_peak / c_peak)])
    return (f"### {h.GROUP_TITLES['W7']}\n\n" + markdown_table(headers, rows) + "\n\n"
            f"ms of process CPU time (all threads) per page of {page_bytes / 1e6:.1f} MB; "
            "S = scylla-driver Cython rows, "
            "C/P = cqlcodec (rows: `decode_result`). Peak = resident-set high-water mark of one "
            "operation over the resident set before it, in a fresh process (`memprobe.py`). "
            "Ratios: scylla's rows + DataFrame over each C path.")


SUMMARY_ROWS: Final[list[tuple[str, str]]] = [
    ("W1 vector<float,1536> -> list", "W1/list/1536"),
    ("W1 vector<float,1536> -> numpy array", "W1/numpy/1536"),
    ("W2 vector<float,1536> <- list", "W2/list/1536"),
    ("W2 vector<float,1536> <- float32 array", "W2/float32/1536"),
    ("W5 (a) 1 row x 10 cols, prepared", "W5/prepared/a"),
    ("W5 (b) 100 x 5, prepared", "W5/prepared/b"),
    ("W5 (c) 1000 x 5, prepared", "W5/prepared/c"),
    ("W5 (d) 100 x (int, vector<float,768>)", "W5/prepared/d"),
    ("W5 (d) with numpy vectors", "W5/prepared-numpy/d"),
    ("W5 (e) 1000 x 5, 20 % nulls", "W5/prepared/e"),
    ("W6 (a) bind 10 mixed scalars", "W6/bind/a"),
    ("W6 (b) bind vector<float,1536> + 3 scalars", "W6/bind/b"),
    ("cached parse description, 10 columns", "cache/parse-desc-cached/10"),
]


def summary_table(results: Results) -> str:
    """The headline rows: µs medians of every implementation and the two main ratios."""
    impls = [S, D, DP, C, P]
    headers = ["workload (µs)", "scylla Cython", "cassandra Cython", "cassandra pure",
               "cqlcodec compiled", "cqlcodec interpreted", "scylla / compiled", "pure / interpreted"]
    rows = []
    for label, cid in SUMMARY_ROWS:
        if cid not in results:
            continue
        row = [label]
        for impl in impls:
            value = median_of(results, cid, impl)
            if value is None and impl in (S, D, DP) and cid in PEER_FALLBACK:
                row.append("(list: " + fmt_time(median_of(results, PEER_FALLBACK[cid], impl)) + ")")
            else:
                row.append(fmt_time(value))
        for num, den in ((S, C), (DP, P)):
            r, star = ratio(results, cid, num, den, True)
            row.append(fmt_ratio(r, star))
        rows.append(row)
    return "### Summary\n\n" + markdown_table(headers, rows)


# --------------------------------------------------------------------------- targets


@dataclass
class Target:
    what: str
    goal: str
    value: float | None
    ok: bool | None


INFO: Final = "(information)"


def targets(results: Results, memory: Memory) -> list[Target]:
    out: list[Target] = []

    def at_least(what: str, value: float | None, goal: float) -> None:
        out.append(Target(what, f">= {goal:g}x", value, None if value is None else value >= goal))

    def at_most(what: str, value: float | None, goal: float, unit: str = "x") -> None:
        out.append(Target(what, f"<= {goal:g}{unit}", value, None if value is None else value <= goal))

    def r(case: str, num: str, den: str, num_case: str | None = None) -> float | None:
        n = median_of(results, num_case or case, num)
        d = median_of(results, case, den)
        return None if n is None or d is None or d <= 0 else n / d

    def mem(case: str, num: str, den: str, num_case: str) -> float | None:
        n, d = memory_of(memory, num_case, num), memory_of(memory, case, den)
        return None if n is None or d is None or d <= 0 else n / d

    for key, goal in (("a", 3.0), ("b", 2.0), ("c", 2.0), ("d", 10.0), ("e", 2.0)):
        at_least(f"W5 ({key}) prepared, scylla / cqlcodec", r(f"W5/prepared/{key}", S, C), goal)
    at_least("W5 (d) numpy vectors, scylla (lists) / cqlcodec",
             r("W5/prepared-numpy/d", S, C, "W5/prepared/d"), 100.0)
    at_most("W1 1536 -> list, cqlcodec / floor", r("W1/list/1536", C, F), 1.2)
    at_least("W1 1536 -> list, scylla / cqlcodec", r("W1/list/1536", S, C), 15.0)
    at_most("W1 1536 -> numpy, cqlcodec / floor (frombuffer + astype)", r("W1/numpy/1536", C, F), 1.5)
    at_most("W2 1536 list -> bytes, cqlcodec / Struct.pack", r("W2/list/1536", C, F), 1.2)
    at_most("W2 1536 float32 array -> bytes, cqlcodec / floor (astype('>f4').tobytes())",
            r("W2/float32/1536", C, F), 1.5)
    at_least("W6 (a) bind, scylla / cqlcodec", r("W6/bind/a", S, C), 4.0)
    at_least("W6 (b) bind, scylla / cqlcodec", r("W6/bind/b", S, C), 10.0)
    def worst(what: str, pairs: list[tuple[str, float | None]]) -> None:
        known = [(v, label) for label, v in pairs if v is not None]
        if not known:
            out.append(Target(what, ">= 1x each", None, None))
            return
        value, label = min(known)
        met = sum(v >= 1.0 for v, _label in known)
        out.append(Target(f"{what}: {met}/{len(pairs)} met, slowest {label}", ">= 1x each", value,
                          value >= 1.0 and len(known) == len(pairs)))

    worst("W3 scalars, scylla row path / cqlcodec row path per value",
          [(sc.label, r(f"W3/rowpath/{sc.label}", S, C)) for sc in wl.SCALAR_CASES])
    worst("W4 scalars, scylla serialize / cqlcodec serialize",
          [(sc.label, r(f"W4/direct/{sc.label}", S, C)) for sc in wl.SCALAR_CASES])
    for key in "abcde":
        at_least(f"W5 ({key}) prepared, cassandra pure path / cqlcodec interpreted",
                 r(f"W5/prepared/{key}", DP, P), 3.0)
    for cid in ("W1/list/1536", "W1/rowpath/1536", "W2/list/1536"):
        at_least(f"{cid}, cassandra pure path / cqlcodec interpreted", r(cid, DP, P), 10.0)
    for key in "ce":
        at_most(f"W5 ({key}) columnar, cqlcodec decode_columns / length-word floor",
                r(f"W5/columnar/{key}", C, F), 1.5)
        at_least(f"W5 ({key}) columnar, scylla row path / cqlcodec decode_columns",
                 r(f"W5/columnar/{key}", S, C, f"W5/prepared/{key}"), 10.0)
        at_least(f"W5 ({key}) columnar, scylla NumpyProtocolHandler / cqlcodec decode_columns",
                 r(f"W5/columnar/{key}", S, C), 3.0)
    at_least("W5 (d) columnar (100, 768) float32 matrix, scylla row path / cqlcodec",
             r("W5/columnar/d", S, C, "W5/prepared/d"), 300.0)
    at_most("W5 (d) columnar matrix, cqlcodec / floor (one frombuffer + astype)",
            r("W5/columnar/d", C, F), 1.5)
    at_least("W7 to pandas, scylla rows + DataFrame / cqlcodec to_pandas (time)",
             r("W7/pandas", S, C, "W7/rows-pandas"), 10.0)
    at_least("W7 to pandas, peak memory scylla rows + DataFrame / cqlcodec to_pandas (goal: <= 1/5)",
             mem("W7/pandas", S, C, "W7/rows-pandas"), 5.0)
    at_least("W5 (c) interpreted, cqlcodec row path / decode_columns",
             r("W5/columnar/c", P, P, "W5/prepared/c"), 2.0)
    worst("W5 interpreted, cqlcodec row path / decode_columns, every page",
          [(f"({key})", r(f"W5/columnar/{key}", P, P, f"W5/prepared/{key}")) for key in "bce"])
    for key in "abcde":  # the retired ">= 4x" target: kept as information
        out.append(Target(f"W5 ({key}) prepared, cqlcodec interpreted / compiled", INFO,
                          r(f"W5/prepared/{key}", P, C), None))
    return out


def targets_table(items: list[Target]) -> str:
    rows = []
    for t in items:
        value = "n/a" if t.value is None else (f"{t.value:.2f}" if t.value < 100 else f"{t.value:.0f}")
        status = "" if t.goal == INFO else "n/a" if t.ok is None else ("met" if t.ok else "MISSED")
        rows.append([t.what, t.goal, value, status])
    return "### Targets (medians of this run)\n\n" + markdown_table(["target", "goal", "measured", ""], rows)


# --------------------------------------------------------------------------- environment


def machine() -> dict[str, object]:
    model = platform.processor() or "?"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"platform": platform.platform(), "cpu": model, "cpus": os.cpu_count(),
            "loadavg": os.getloadavg() if hasattr(os, "getloadavg") else None}


def env_report(infos: list[dict[str, Any]], mach: dict[str, object]) -> str:
    lines = [f"machine: {mach['cpu']} x {mach['cpus']}, {mach['platform']}"]
    for info in infos:
        for name, item in info["impls"].items():
            details = ", ".join(f"{k}={v}" for k, v in item.items() if k not in ("impl",))
            frames = "".join(f"{dist} {version}, " for dist, version in info.get("dataframes", {}).items())
            lines.append(f"- {SHORT.get(name, name)} = {h.IMPL_TITLES.get(name, name)}: python {info['python']}, "
                         f"numpy {info['numpy']}, {frames}{details}")
    return "\n".join(lines)


# --------------------------------------------------------------------------- chart


CHART_CASES: Final = [
    "W1/list/1536", "W1/rowpath/1536", "W1/numpy/1536", "W2/list/1536", "W2/float32/1536",
    "W5/prepared/a", "W5/prepared/b", "W5/prepared/c", "W5/prepared/d", "W5/prepared-numpy/d",
    "W5/prepared/e", "W5/unprepared/c", "W6/bind/a", "W6/bind/b",
]
GOALS_VS_SCYLLA: Final[dict[str, float]] = {
    "W5/prepared/a": 3.0, "W5/prepared/b": 2.0, "W5/prepared/c": 2.0, "W5/prepared/d": 10.0,
    "W5/prepared/e": 2.0, "W5/prepared-numpy/d": 100.0, "W1/list/1536": 15.0,
    "W6/bind/a": 4.0, "W6/bind/b": 10.0,
    **{f"W3/rowpath/{sc.label}": 1.0 for sc in wl.SCALAR_CASES},
    **{f"W4/direct/{sc.label}": 1.0 for sc in wl.SCALAR_CASES},
}
GOALS_PURE: Final[dict[str, float]] = {
    **{f"W5/prepared/{k}": 3.0 for k in "abcde"},
    "W1/list/1536": 10.0, "W1/rowpath/1536": 10.0, "W2/list/1536": 10.0,
}
Bar = tuple[str, float | None, float | None]  # label, ratio, goal


def _ratio_bars(results: Results, cases: list[str], num: str, den: str, goals: dict[str, float]) -> list[Bar]:
    bars: list[Bar] = []
    for cid in cases:
        rv, star = ratio(results, cid, num, den, True)
        bars.append((cid + ("*" if star else ""), rv, goals.get(cid)))
    return bars


def _columnar_bars(results: Results, memory: Memory) -> list[Bar]:
    """scylla-driver / compiled cqlcodec on the columnar cases, with the columnar targets."""
    def over(num_case: str, case: str) -> float | None:
        n, d = median_of(results, num_case, S), median_of(results, case, C)
        return None if n is None or d is None or d <= 0 else n / d

    bars: list[Bar] = []
    for key in "bcde":
        goal = {"c": 10.0, "e": 10.0, "d": 300.0}.get(key)
        bars.append((f"W5 ({key}) columnar vs scylla rows", over(f"W5/prepared/{key}", f"W5/columnar/{key}"), goal))
        bars.append((f"W5 ({key}) columnar vs scylla NumpyProtocolHandler",
                     over(f"W5/columnar/{key}", f"W5/columnar/{key}"), 3.0 if key in "ce" else None))
    for lib in ("pandas", "polars"):
        bars.append((f"W7 to_{lib} time vs scylla rows + pandas.DataFrame",
                     over("W7/rows-pandas", f"W7/{lib}"), 10.0 if lib == "pandas" else None))
        n, d = memory_of(memory, "W7/rows-pandas", S), memory_of(memory, f"W7/{lib}", C)
        bars.append((f"W7 to_{lib} peak memory vs scylla rows + pandas.DataFrame",
                     None if n is None or not d else n / d, 5.0 if lib == "pandas" else None))
    return bars


def chart(results: Results, memory: Memory, path: Path, title: str) -> bool:
    """Horizontal log-scale bars of the ratios with the targets; False without matplotlib."""
    try:
        matplotlib: Any = importlib.import_module("matplotlib")
        matplotlib.use("Agg")
        plt: Any = importlib.import_module("matplotlib.pyplot")
    except ImportError:
        return False
    scalar_cases = [f"W3/rowpath/{sc.label}" for sc in wl.SCALAR_CASES] + [
        f"W4/direct/{sc.label}" for sc in wl.SCALAR_CASES]
    interpreted: list[Bar] = []
    for key in "bcde":
        n, d = median_of(results, f"W5/prepared/{key}", P), median_of(results, f"W5/columnar/{key}", P)
        interpreted.append((f"W5 ({key}) interpreted: row path / decode_columns",
                            None if n is None or d is None or d <= 0 else n / d, 3.0 if key == "c" else None))
    panels: list[tuple[str, list[Bar]]] = [
        ("compiled cqlcodec vs scylla-driver Cython (scylla time / cqlcodec time)",
         _ratio_bars(results, CHART_CASES, S, C, GOALS_VS_SCYLLA)),
        ("interpreted cqlcodec vs cassandra-driver pure-Python path",
         _ratio_bars(results, CHART_CASES, DP, P, GOALS_PURE)),
        ("compiled vs interpreted cqlcodec (interpreted time / compiled time; no target)",
         _ratio_bars(results, CHART_CASES, P, C, {})),
        ("scalars: scylla-driver Cython / cqlcodec compiled (W3 row path per value, W4 serialize)",
         _ratio_bars(results, scalar_cases, S, C, GOALS_VS_SCYLLA)),
        ("columnar: scylla-driver / cqlcodec compiled (time; W7 also peak memory)",
         _columnar_bars(results, memory)),
        ("columnar, interpreted cqlcodec: its row path / decode_columns", interpreted),
    ]
    fig, axes = plt.subplots(3, 2, figsize=(16, 19))
    for ax, (ptitle, bars) in zip(axes.flat, panels):
        known = [(label, v, g) for label, v, g in bars if v is not None]
        labels = [label for label, _v, _g in known]
        values = [v for _label, v, _g in known if v is not None]
        targets_ = [g for _label, _v, g in known]
        ypos = list(range(len(labels)))[::-1]
        colors = ["tab:gray" if g is None else "tab:green" if v >= g else "tab:red"
                  for v, g in zip(values, targets_)]
        ax.barh(ypos, values, color=colors)
        for y, g in zip(ypos, targets_):
            if g is not None:
                ax.plot([g, g], [y - 0.42, y + 0.42], color="black", linewidth=2)
        ax.set_yticks(ypos)
        ax.set_yticklabels(labels, fontsize=8)
        ax.set_xscale("log")
        ax.axvline(1.0, color="black", linewidth=0.6, linestyle=":")
        for y, v in zip(ypos, values):
            ax.text(v, y, f" {v:.2f}x" if v < 10 else f" {v:.0f}x", va="center", fontsize=7)
        ax.set_title(ptitle, fontsize=10)
        ax.set_xlabel("ratio (> 1: cqlcodec faster); black tick = target; green met, red missed",
                      fontsize=8)
        if values:
            ax.set_xlim(min(0.5, min(values) / 1.5), max(max(values), *(g or 1 for g in targets_)) * 3)
    fig.suptitle(title + "\n* peer has no numpy path: compared with its list path", fontsize=11)
    fig.tight_layout(rect=(0, 0, 1, 0.975))
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


# --------------------------------------------------------------------------- main


def parse_args(argv: list[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--worker", action="append", default=[], metavar="PYTHON=IMPL[,IMPL]",
                    help="an interpreter and the impls it hosts (repeatable)")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--quick", dest="mode", action="store_const", const="quick",
                      help="short timings (default): %g s per repeat, %d rounds, %d memory probe(s)"
                      % MODES["quick"])
    mode.add_argument("--full", dest="mode", action="store_const", const="full",
                      help="full timings: %g s per repeat, %d rounds, %d memory probe(s)" % MODES["full"])
    ap.add_argument("--rounds", type=int, help="override the number of rounds")
    ap.add_argument("--min-time", type=float, help="override the seconds per repeat")
    ap.add_argument("--memory-probes", type=int, help="override the memory probes per (W7 case, impl)")
    ap.add_argument("--filter", default="", help="regex on case ids (e.g. 'W5|W6')")
    ap.add_argument("--out", default="bench-results", help="directory for results.json and ratios.png")
    ap.add_argument("--command", default="", help="the command line to record in the results")
    ap.set_defaults(mode="quick")
    return ap.parse_args(argv)


def log(msg: str, stream: IO[str] = sys.stdout) -> None:
    stream.write(msg + "\n")
    stream.flush()


def run(args: argparse.Namespace) -> int:
    min_time, rounds, probes = MODES[args.mode]
    min_time = args.min_time or min_time
    rounds = args.rounds or rounds
    args.memory_probes = probes if args.memory_probes is None else args.memory_probes
    if not args.worker:
        raise SystemExit("give at least one --worker PYTHON=IMPL[,IMPL]")
    out_dir = Path(args.out).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    started = time.time()
    workers: list[WorkerProc] = []
    for spec in args.worker:
        python, _sep, impls = spec.partition("=")
        workers.append(WorkerProc(python, impls.split(","), out_dir))
    try:
        return _run(args, workers, min_time, rounds, out_dir, started)
    finally:
        for w in workers:
            w.close()


def _run(args: argparse.Namespace, workers: list[WorkerProc], min_time: float, rounds: int,
         out_dir: Path, started: float) -> int:
    mach = machine()
    infos = [w.call("info") for w in workers]
    log("## Environment\n\n" + env_report(infos, mach) + "\n")
    by_impl: dict[str, WorkerProc] = {i: w for w in workers for i in w.impls}
    impls: list[str] = [i for i in h.IMPLS if i in by_impl]
    pattern = re.compile(args.filter) if args.filter else None
    status: Status = {}
    for w in workers:
        status.update(w.call("build", filter=args.filter))
    log(f"built and checked in {time.time() - started:.0f} s")
    errors = [(impl, cid, st["error"]) for impl, cases in status.items()
              for cid, st in cases.items() if "error" in st]
    fails = [(impl, cid, st["fails"]) for impl, cases in status.items()
             for cid, st in cases.items() if "fails" in st]
    planned = [(c.id, i) for c in h.CASES for i in impls
               if "ok" in status[i].get(c.id, {}) and (pattern is None or pattern.search(c.id))]
    log(f"{len(planned)} (case, impl) pairs, {rounds} rounds, {min_time:g} s per timing "
        f"({args.mode} mode); {len(errors)} check failures")
    for impl, cid, err in errors:
        log(f"  CHECK FAILED {impl} {cid}: {err}")
    numbers: dict[tuple[str, str], int] = {}
    for cid, impl in planned:
        numbers[(cid, impl)] = by_impl[impl].call("calibrate", impl=impl, case=cid, min_time=min_time)["number"]
    log(f"calibrated in {time.time() - started:.0f} s")
    times: dict[tuple[str, str], list[float]] = {key: [] for key in planned}
    cases = list(dict.fromkeys(cid for cid, _impl in planned))
    for rnd in range(rounds):
        t0 = time.time()
        for n, cid in enumerate(cases):
            order = [i for i in impls if (cid, i) in times]
            shift = (rnd + n) % len(order)
            for impl in order[shift:] + order[:shift]:
                got = by_impl[impl].call("measure", impl=impl, case=cid, number=numbers[(cid, impl)])
                times[(cid, impl)] += got["times"]
        log(f"round {rnd + 1}/{rounds}: {time.time() - t0:.0f} s")
    memory, page_bytes = measure_memory(planned, by_impl, args.memory_probes, out_dir)
    results: Results = {}
    for (cid, impl), ts in times.items():
        results.setdefault(cid, {})[impl] = Series(numbers[(cid, impl)], ts)
    derive(results)
    date = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    command = args.command or "python benchmarks/run.py " + " ".join(sys.argv[1:])
    header = (f"## Results: {date}, {mach['cpu']} ({mach['cpus']} CPUs), `{command}`\n\n"
              f"Medians of {rounds} interleaved rounds, thread CPU time (W7: process CPU time), GC off, "
              "protocol v4. "
              "Ratios > 1 mean cqlcodec is faster. Columns: "
              + ", ".join(f"{SHORT[i]} = {h.IMPL_TITLES[i]}" for i in impls) + ".")
    log(header + "\n")
    for group in h.GROUPS:
        if not any(c.group == group and c.id in results for c in h.CASES):
            continue
        if group == "W5col":
            log(columnar_table(results, status) + "\n")
        elif group == "W7":
            log(frames_table(results, memory, page_bytes) + "\n")
        else:
            log(group_table(results, group, impls) + "\n")
    if fails:
        log("### Implementations that fail\n\n" + "\n".join(
            f"- {SHORT[impl]} {cid}: {text}" for impl, cid, text in fails) + "\n")
    tgs = targets(results, memory)
    log(targets_table(tgs) + "\n")
    log(summary_table(results) + "\n")
    payload = {
        "meta": {"date": date, "command": command, "mode": args.mode, "rounds": rounds,
                 "min_time": min_time, "machine": mach, "elapsed_s": round(time.time() - started, 1),
                 "timer": "time.thread_time (W7: time.process_time)", "gc": "off (timeit)",
                 "protocol_version": 4, "memory_probes": args.memory_probes,
                 "memory_method": "resident-set high-water mark over the resident set before one "
                                  "operation, fresh process per probe (memprobe.py)"},
        "environment": infos,
        "status": status,
        "results": {cid: {impl: {"number": s.number, "times": s.times, "median": s.median, "best": s.best}
                          for impl, s in per.items()} for cid, per in results.items()},
        "memory": {cid: {impl: {"peaks": peaks, "median": memory_of(memory, cid, impl)}
                         for impl, peaks in per_impl.items()} for cid, per_impl in memory.items()},
        "targets": [t.__dict__ for t in tgs],
    }
    (out_dir / "results.json").write_text(json.dumps(payload, indent=1))
    made = chart(results, memory, out_dir / "ratios.png", f"cqlcodec benchmarks, {date}, {args.mode} mode")
    log(f"raw results: {out_dir / 'results.json'}" + (f"; chart: {out_dir / 'ratios.png'}" if made else
                                                       "; no chart (matplotlib missing)"))
    log(f"total {time.time() - started:.0f} s")
    return 1 if errors else 0


def measure_memory(planned: list[tuple[str, str]], by_impl: dict[str, WorkerProc], probes: int,
                   out_dir: Path) -> tuple[Memory, int]:
    """Peak memory of one operation of every planned W7 (case, impl), ``probes`` fresh
    processes each, alternating implementations; and the size of the W7 page."""
    pairs = [(cid, impl) for cid, impl in planned if h.CASES_BY_ID[cid].memory]
    memory: Memory = {}
    if not pairs or probes <= 0:
        return memory, 0
    t0 = time.time()
    body_file = out_dir / "w7-page.bin"
    page = wl.page_case().prepared
    body_file.write_bytes(page)
    try:
        for _probe in range(probes):
            for cid, impl in pairs:
                got = by_impl[impl].probe_memory(impl, cid, body_file)
                memory.setdefault(cid, {}).setdefault(impl, []).append(int(got["peak"]))
    finally:
        body_file.unlink()
    log(f"memory: {probes} probe(s) x {len(pairs)} (case, impl) in {time.time() - t0:.0f} s")
    return memory, len(page)


def main(argv: list[str] | None = None) -> int:
    return run(parse_args(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    sys.exit(main())
