"""Hostile-input fuzzing of the active build, in a child process.

``CQLCODEC_FUZZ_BUDGET`` (seconds, default 15) and ``CQLCODEC_FUZZ_SEED`` set the
run; ``CQLCODEC_FUZZ_REPORT`` names a file to keep the JSON report in.  The nox
``fuzz`` session runs this with a long budget (``nox -s fuzz -- --budget 600``).

Problems already reproduced by an ``xfail(strict=True)`` test in ``test_findings``
are listed in :data:`KNOWN` and reported, not failed on, so the fuzz run keeps
finding *new* problems while an owner fixes a known one.
"""

from __future__ import annotations

import json
import os
import random
import re

import pytest

import cqlcodec

from .engine import Engine, Recorder, judge_value
from .model import Verdict, ref_decode
from .runner import DEFAULT_SEED, failures_of, spawn

BUDGET = float(os.environ.get("CQLCODEC_FUZZ_BUDGET", "15"))
SEED = int(os.environ.get("CQLCODEC_FUZZ_SEED", str(DEFAULT_SEED)))

# (target regex, problem, detail regex): failures reproduced in test_findings.py
KNOWN: list[tuple[str, str, str]] = []


def _known(failure: dict[str, object]) -> bool:
    return any(re.search(t, str(failure["target"])) and p == failure["problem"]
               and re.search(d, str(failure["detail"])) for t, p, d in KNOWN)


def _describe(failures: list[dict[str, object]]) -> str:
    lines = []
    for f in failures[:25]:
        lines.append(f"- [{f['target']}] {f['problem']} x{f['count']}: "
                     f"{str(f['detail'])[:400]}\n  reproducer: {json.dumps(f['repro'])[:900]}")
    return "\n".join(lines)


def test_fuzz_active_build() -> None:
    """Every entry point, mutated and random input, for BUDGET seconds: no crash, no hang,
    no exception other than DecodeError, no wrong value, no super-linear run."""
    result = spawn(SEED, BUDGET)
    if result.crashed:
        pytest.fail(
            f"the fuzz child {'hung' if result.timed_out else 'died'} "
            f"(return code {result.returncode}) on input:\n{json.dumps(result.crash_repro)}\n"
            f"stderr:\n{result.stderr_tail}", pytrace=False)
    report = result.report
    assert report is not None
    assert report["build"] == ("compiled" if cqlcodec.COMPILED else "pure"), \
        "the fuzz child imported a different build of cqlcodec than the test process"
    out = os.environ.get("CQLCODEC_FUZZ_REPORT")
    if out:
        with open(out, "w") as f:
            json.dump(report, f, indent=1)
    failures = failures_of(report)
    new = [f for f in failures if not _known(f)]
    print(f"\nfuzz {report['build']} seed={SEED} budget={BUDGET}s: "
          f"{report['mutation']['cases']} mutation cases, "
          f"{report['hypothesis']['cases']} hypothesis cases, "
          f"{len(failures) - len(new)} known problem(s); "
          f"unavailable: {report['unavailable_targets']}")
    for s in report["mutation"]["slowest"][:3]:
        print(f"  slowest: {s['seconds'] * 1e3:.2f} ms for {s['size']} bytes ({s['target']})")
    assert not new, "fuzzing found problems:\n" + _describe(new)
    assert not report["hypothesis"]["problems"] or all(
        _known_text(p["error"]) for p in report["hypothesis"]["problems"]), \
        report["hypothesis"]["problems"]


def _known_text(text: str) -> bool:
    return any(re.search(d, text) for _t, _p, d in KNOWN)


# --------------------------------------------------------------------------- the harness itself

def test_child_crash_is_reported_with_its_input() -> None:
    result = spawn(SEED, 5, targets=["selftest_crash"], hypothesis_share=0)
    assert result.crashed and result.returncode != 0
    assert result.crash_repro == {"target": "selftest_crash", "data": "dead"}
    assert "Fatal Python error" in result.stderr_tail or "Segmentation" in result.stderr_tail


def test_child_hang_is_killed_and_reported() -> None:
    result = spawn(SEED, 1, targets=["selftest_hang"], hypothesis_share=0, timeout=4)
    assert result.timed_out and result.crashed
    assert result.crash_repro == {"target": "selftest_hang", "data": "beef"}


def test_engine_judges_every_outcome() -> None:
    """The judge flags wrong exception types, lies in both directions, wrong values and slowness."""
    t = cqlcodec.scalar_type(cqlcodec.kinds.INT)
    engine = Engine(Recorder(None), base_seconds=0.0, per_byte_seconds=0.0)
    accept = Verdict("accept", ("i", 1))
    reject = Verdict("reject", None, "too short")

    def boom() -> object:
        raise IndexError("read past the buffer")

    def decode_error() -> object:
        raise cqlcodec.DecodeError("bad")

    def norm(v: object) -> object:
        return ("i", v)

    cases = [
        (boom, accept, "exception"),
        (decode_error, accept, "rejected-valid"),
        (lambda: 1, reject, "accepted-malformed"),
        (lambda: 2, accept, "wrong-value"),
        (lambda: 1, accept, "slow"),
    ]
    for call, verdict, expected in cases:
        problem = engine.run("selftest", {}, 4, call, judge_value(verdict, norm))
        assert problem is not None and problem.startswith(expected), (expected, problem)
    ok = Engine(Recorder(None))
    assert ok.run("selftest", {}, 4, decode_error, judge_value(reject, norm)) is None
    assert ok.run("selftest", {}, 4, lambda: 1, judge_value(accept, norm)) is None
    assert ref_decode(t, b"\x00\x00\x00\x01").value == ("i", 1)
    assert ref_decode(t, b"\x00\x00\x01").kind == "reject"


def test_reference_accepts_what_it_generates() -> None:
    """The generators and the reference decoder agree on valid input (else the fuzz would lie)."""
    from .bodies import gen_body, ref_result
    from .model import gen_value_bytes, random_type

    rng = random.Random(SEED)
    for _i in range(300):
        t = random_type(rng, 3)
        data, _slots, expected = gen_value_bytes(rng, t)
        verdict = ref_decode(t, data)
        assert verdict.kind == "accept" and verdict.value == expected, (t, data.hex())
    for pv in (3, 4, 5):
        for _i in range(100):
            body = gen_body(rng, pv)
            verdict = ref_result(body.data, pv, None)
            # "either" only where a column type is a class name the codec's parser decides on
            assert verdict.kind == "accept" or "class name" in verdict.reason, body.data.hex()
