"""Side-by-side benchmark orchestrator: every workload on every implementation, interleaved.

Each implementation lives in its own environment (both drivers install ``cassandra``,
both builds install ``cqlcodec``), so each gets a worker process (``worker.py``) run by
that environment's interpreter. This process, which imports none of them, sends the
workers one timing request at a time: rounds alternate implementations case by case,
and only one worker runs at any moment. Times are thread CPU time with the cyclic GC
off (``timeit``). Per (case, impl) the median over rounds is reported, plus the best.

    python benchmarks/run.py --worker PY=cqlcodec,floor --worker PY2=cqlcodec-pure \\
        --worker PY3=scylla --worker PY4=cassandra,cassandra-py [--full] [--out DIR]

``nox -s bench`` builds the environments and calls this. Output: one table per workload
(Markdown), the targets, ``results.json`` (raw per-round times) and ``ratios.png``.
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

MODES: Final[dict[str, tuple[float, int]]] = {  # mode -> (min_time per repeat, rounds)
    "quick": (0.02, 5),
    "full": (0.2, 7),
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
        env = dict(os.environ)
        env.pop("PYTHONPATH", None)
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        self.proc = subprocess.Popen(
            [python, str(HERE / "worker.py"), *impls],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=cwd, env=env,
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


def targets(results: Results) -> list[Target]:
    out: list[Target] = []

    def at_least(what: str, value: float | None, goal: float) -> None:
        out.append(Target(what, f">= {goal:g}x", value, None if value is None else value >= goal))

    def at_most(what: str, value: float | None, goal: float, unit: str = "x") -> None:
        out.append(Target(what, f"<= {goal:g}{unit}", value, None if value is None else value <= goal))

    def r(case: str, num: str, den: str, num_case: str | None = None) -> float | None:
        n = median_of(results, num_case or case, num)
        d = median_of(results, case, den)
        return None if n is None or d is None or d <= 0 else n / d

    for key, goal in (("a", 3.0), ("b", 2.0), ("c", 2.0), ("d", 10.0), ("e", 2.0)):
        at_least(f"W5 ({key}) prepared, scylla / cqlcodec", r(f"W5/prepared/{key}", S, C), goal)
    at_least("W5 (d) numpy vectors, scylla (lists) / cqlcodec",
             r("W5/prepared-numpy/d", S, C, "W5/prepared/d"), 100.0)
    at_most("W1 1536 -> list, cqlcodec / floor", r("W1/list/1536", C, F), 1.2)
    at_least("W1 1536 -> list, scylla / cqlcodec", r("W1/list/1536", S, C), 15.0)
    numpy_us = median_of(results, "W1/numpy/1536", C)
    at_most("W1 1536 -> numpy, cqlcodec µs", None if numpy_us is None else numpy_us * 1e6, 2.0, " µs")
    at_most("W2 1536 list -> bytes, cqlcodec / Struct.pack", r("W2/list/1536", C, F), 1.2)
    f32_us = median_of(results, "W2/float32/1536", C)
    at_most("W2 1536 float32 array -> bytes, cqlcodec µs", None if f32_us is None else f32_us * 1e6,
            2.0, " µs")
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
    for key in "abcde":
        at_least(f"W5 ({key}) prepared, cqlcodec interpreted / compiled", r(f"W5/prepared/{key}", P, C), 4.0)
    return out


def targets_table(items: list[Target]) -> str:
    rows = []
    for t in items:
        value = "n/a" if t.value is None else (f"{t.value:.2f}" if t.value < 100 else f"{t.value:.0f}")
        status = "n/a" if t.ok is None else ("met" if t.ok else "MISSED")
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
            lines.append(f"- {SHORT.get(name, name)} = {h.IMPL_TITLES.get(name, name)}: python {info['python']}, "
                         f"numpy {info['numpy']}, {details}")
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
GOALS_COMPILED_VS_PURE: Final[dict[str, float]] = {f"W5/prepared/{k}": 4.0 for k in "abcde"}


def chart(results: Results, path: Path, title: str) -> bool:
    """Horizontal log-scale bars of the ratios with the targets; False without matplotlib."""
    try:
        matplotlib: Any = importlib.import_module("matplotlib")
        matplotlib.use("Agg")
        plt: Any = importlib.import_module("matplotlib.pyplot")
    except ImportError:
        return False
    scalar_cases = [f"W3/rowpath/{sc.label}" for sc in wl.SCALAR_CASES] + [
        f"W4/direct/{sc.label}" for sc in wl.SCALAR_CASES]
    panels: list[tuple[str, list[str], str, str, dict[str, float]]] = [
        ("compiled cqlcodec vs scylla-driver Cython (scylla time / cqlcodec time)",
         CHART_CASES, S, C, GOALS_VS_SCYLLA),
        ("interpreted cqlcodec vs cassandra-driver pure-Python path", CHART_CASES, DP, P, GOALS_PURE),
        ("compiled vs interpreted cqlcodec (interpreted time / compiled time)",
         CHART_CASES, P, C, GOALS_COMPILED_VS_PURE),
        ("scalars: scylla-driver Cython / cqlcodec compiled (W3 row path per value, W4 serialize)",
         scalar_cases, S, C, GOALS_VS_SCYLLA),
    ]
    fig, axes = plt.subplots(2, 2, figsize=(16, 13))
    for ax, (ptitle, cases, num, den, goals) in zip(axes.flat, panels):
        labels, values, targets_ = [], [], []
        for cid in cases:
            rv, star = ratio(results, cid, num, den, True)
            if rv is not None:
                labels.append(cid + ("*" if star else ""))
                values.append(rv)
                targets_.append(goals.get(cid))
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
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


# --------------------------------------------------------------------------- main


def parse_args(argv: list[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--worker", action="append", default=[], metavar="PYTHON=IMPL[,IMPL]",
                    help="an interpreter and the impls it hosts (repeatable)")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--quick", dest="mode", action="store_const", const="quick",
                      help="short timings (default): %g s per repeat, %d rounds" % MODES["quick"])
    mode.add_argument("--full", dest="mode", action="store_const", const="full",
                      help="full timings: %g s per repeat, %d rounds" % MODES["full"])
    ap.add_argument("--rounds", type=int, help="override the number of rounds")
    ap.add_argument("--min-time", type=float, help="override the seconds per repeat")
    ap.add_argument("--filter", default="", help="regex on case ids (e.g. 'W5|W6')")
    ap.add_argument("--out", default="bench-results", help="directory for results.json and ratios.png")
    ap.add_argument("--command", default="", help="the command line to record in the results")
    ap.set_defaults(mode="quick")
    return ap.parse_args(argv)


def log(msg: str, stream: IO[str] = sys.stdout) -> None:
    stream.write(msg + "\n")
    stream.flush()


def run(args: argparse.Namespace) -> int:
    min_time, rounds = MODES[args.mode]
    min_time = args.min_time or min_time
    rounds = args.rounds or rounds
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
    status: dict[str, dict[str, dict[str, str]]] = {}
    for w in workers:
        status.update(w.call("build"))
    errors = [(impl, cid, st["error"]) for impl, cases in status.items()
              for cid, st in cases.items() if "error" in st]
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
    results: Results = {}
    for (cid, impl), ts in times.items():
        results.setdefault(cid, {})[impl] = Series(numbers[(cid, impl)], ts)
    derive(results)
    date = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    command = args.command or "python benchmarks/run.py " + " ".join(sys.argv[1:])
    header = (f"## Results: {date}, {mach['cpu']} ({mach['cpus']} CPUs), `{command}`\n\n"
              f"Medians of {rounds} interleaved rounds, thread CPU time, GC off, protocol v4. "
              "Ratios > 1 mean cqlcodec is faster. Columns: "
              + ", ".join(f"{SHORT[i]} = {h.IMPL_TITLES[i]}" for i in impls) + ".")
    log(header + "\n")
    for group in h.GROUPS:
        if any(c.group == group and c.id in results for c in h.CASES):
            log(group_table(results, group, impls) + "\n")
    tgs = targets(results)
    log(targets_table(tgs) + "\n")
    log(summary_table(results) + "\n")
    payload = {
        "meta": {"date": date, "command": command, "mode": args.mode, "rounds": rounds,
                 "min_time": min_time, "machine": mach, "elapsed_s": round(time.time() - started, 1),
                 "timer": "time.thread_time", "gc": "off (timeit)", "protocol_version": 4},
        "environment": infos,
        "status": status,
        "results": {cid: {impl: {"number": s.number, "times": s.times, "median": s.median, "best": s.best}
                          for impl, s in per.items()} for cid, per in results.items()},
        "targets": [t.__dict__ for t in tgs],
    }
    (out_dir / "results.json").write_text(json.dumps(payload, indent=1))
    made = chart(results, out_dir / "ratios.png", f"cqlcodec benchmarks, {date}, {args.mode} mode")
    log(f"raw results: {out_dir / 'results.json'}" + (f"; chart: {out_dir / 'ratios.png'}" if made else
                                                       "; no chart (matplotlib missing)"))
    log(f"total {time.time() - started:.0f} s")
    return 1 if errors else 0


def main(argv: list[str] | None = None) -> int:
    return run(parse_args(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    sys.exit(main())
