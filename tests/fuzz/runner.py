"""Fuzz runner: the process that feeds hostile input to cqlcodec.

Run it as a *child* process (see :func:`spawn`) so that a segfault or a hang in
the compiled build is observed by the parent, which then reads the reproducer
of the case that was running from the record file.

    python -c 'from fuzz.runner import main; main()' --seed 1 --budget 60 --report r.json
"""

from __future__ import annotations

import argparse
import faulthandler
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Any

import cqlcodec

from . import hyp
from .engine import Engine, Recorder
from .targets import SELFTESTS, TARGETS, available_targets

DEFAULT_SEED = 20240517


def run(seed: int, budget: float, record: str | None = None,
        targets: list[str] | None = None, hypothesis_share: float = 0.3) -> dict[str, Any]:
    """Fuzz for about ``budget`` seconds; returns the report."""
    started = time.monotonic()
    recorder = Recorder(record)
    engine = Engine(recorder=recorder)
    available = available_targets()
    chosen = targets or list(TARGETS)
    active = [t for t in chosen if available.get(t) or t in SELFTESTS]
    master = random.Random(seed)
    deadline = started + budget * (1 - hypothesis_share)
    rounds = 0
    per_target_time: dict[str, float] = {t: 0.0 for t in active}
    while active and time.monotonic() < deadline:
        # fair share of time: the target that has had the least time goes next
        name = min(active, key=per_target_time.__getitem__)
        case_seed = master.getrandbits(64)
        t0 = time.monotonic()
        rng = random.Random(case_seed)
        recorder.record({"target": name, "case_seed": case_seed, "seed": seed})
        (TARGETS.get(name) or SELFTESTS[name])(engine, rng)
        per_target_time[name] += time.monotonic() - t0
        rounds += 1
    hyp_engine = Engine(recorder=recorder, keep_last=True)
    hyp_problems: list[dict[str, str]] = []
    hyp_rounds = 0
    hyp_deadline = started + budget
    examples = 40
    while time.monotonic() < hyp_deadline and hypothesis_share > 0:
        hyp_problems += hyp.run_all(hyp_engine, seed + hyp_rounds, examples)
        hyp_rounds += 1
        examples = min(examples * 2, 400)
    report: dict[str, Any] = {
        "build": "compiled" if cqlcodec.COMPILED else "pure",
        "python": sys.version.split()[0],
        "seed": seed,
        "budget": budget,
        "elapsed": round(time.monotonic() - started, 2),
        "rounds": rounds,
        "seconds_per_target": {k: round(v, 2) for k, v in per_target_time.items()},
        "unavailable_targets": sorted(t for t, ok in available.items() if not ok),
        "mutation": engine.report(),
        "hypothesis": {"rounds": hyp_rounds, "problems": hyp_problems, **hyp_engine.report()},
    }
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--budget", type=float, default=20.0, help="seconds")
    parser.add_argument("--report", help="write the JSON report here (default: stdout)")
    parser.add_argument("--record", help="file that holds the current case's reproducer")
    parser.add_argument("--targets", help="comma-separated subset of " + ",".join(TARGETS))
    parser.add_argument("--hypothesis-share", type=float, default=0.3)
    args = parser.parse_args(argv)
    faulthandler.enable()
    report = run(args.seed, args.budget, args.record,
                 args.targets.split(",") if args.targets else None, args.hypothesis_share)
    text = json.dumps(report, indent=1, default=repr)
    if args.report:
        with open(args.report, "w") as f:
            f.write(text)
    else:
        print(text)
    return 0


@dataclass
class ChildResult:
    """What the parent saw: the report, or how the child died and on which input."""

    returncode: int
    report: dict[str, Any] | None
    crash_repro: dict[str, object] | None
    stderr_tail: str
    timed_out: bool

    @property
    def crashed(self) -> bool:
        return self.timed_out or self.returncode != 0 or self.report is None


def spawn(seed: int, budget: float, targets: list[str] | None = None,
          hypothesis_share: float = 0.3, timeout: float | None = None) -> ChildResult:
    """Run the fuzzer in a child process with this process's sys.path and build."""
    tests_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with tempfile.TemporaryDirectory(prefix="cqlfuzz-") as tmp:
        report_path = os.path.join(tmp, "report.json")
        record_path = os.path.join(tmp, "record.bin")
        boot = ("import sys, json, os; sys.path[:] = json.loads(os.environ['CQLFUZZ_PATH']); "
                "from fuzz.runner import main; sys.exit(main())")
        cmd = [sys.executable, "-c", boot, "--seed", str(seed), "--budget", str(budget),
               "--report", report_path, "--record", record_path,
               "--hypothesis-share", str(hypothesis_share)]
        if targets:
            cmd += ["--targets", ",".join(targets)]
        env = dict(os.environ)
        env["CQLFUZZ_PATH"] = json.dumps([tests_dir] + [p for p in sys.path if p != tests_dir])
        env.setdefault("PYTHONFAULTHANDLER", "1")
        timed_out = False
        with open(os.path.join(tmp, "stderr"), "w+") as err:
            proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, env=env,
                                    cwd=tmp, start_new_session=True)
            try:
                proc.wait(timeout=timeout if timeout is not None else budget * 3 + 120)
            except subprocess.TimeoutExpired:
                timed_out = True
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            err.seek(0)
            stderr_tail = err.read()[-4000:]
        report = None
        if os.path.exists(report_path):
            with open(report_path) as f:
                report = json.load(f)
        repro = Recorder.read(record_path) if (timed_out or proc.returncode != 0) else None
        return ChildResult(proc.returncode, report, repro, stderr_tail, timed_out)


def failures_of(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Every failure in a report (mutation and hypothesis parts)."""
    out: list[dict[str, Any]] = list(report["mutation"]["failures"])
    out += report["hypothesis"]["failures"]
    return out
