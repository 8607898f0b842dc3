"""Runs fuzz cases against cqlcodec and judges them.

A case is one call into cqlcodec with hostile input.  The judge compares the
outcome with the reference verdict:

* an exception other than the allowed cqlcodec error      -> ``exception``
* DecodeError although the reference accepts the input     -> ``rejected-valid``
* a value although the reference rejects the input         -> ``accepted-malformed``
* a value that differs from the reference's                -> ``wrong-value``
* a value of the wrong Python type or shape                -> ``wrong-shape``
* a run slower than ``base + per_byte * len(input)``        -> ``slow``

Before each call the case's reproducer is written to a shared memory-mapped
file (:class:`Recorder`), so a parent process can name the input that crashed
or hung a child.
"""

from __future__ import annotations

import json
import mmap
import os
import struct
import time
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import cqlcodec

from .model import NormError, Verdict

RECORD_SIZE = 1 << 20


class Recorder:
    """Keeps the current case's reproducer in a file-backed shared mapping."""

    def __init__(self, path: str | None) -> None:
        self._map: mmap.mmap | None = None
        if path:
            with open(path, "wb") as f:
                f.write(b"\x00" * RECORD_SIZE)
            fd = os.open(path, os.O_RDWR)
            try:
                self._map = mmap.mmap(fd, RECORD_SIZE)
            finally:
                os.close(fd)

    def record(self, repro: dict[str, object]) -> None:
        if self._map is None:
            return
        data = json.dumps(repro).encode()[: RECORD_SIZE - 8]
        self._map[4:4 + len(data)] = data
        self._map[0:4] = struct.pack(">I", len(data))

    @staticmethod
    def read(path: str) -> dict[str, object] | None:
        try:
            with open(path, "rb") as f:
                raw = f.read(RECORD_SIZE)
        except OSError:
            return None
        if len(raw) < 4:
            return None
        n = struct.unpack(">I", raw[:4])[0]
        if not n:
            return None
        try:
            out = json.loads(raw[4:4 + n].decode())
        except ValueError:
            return None
        return out if isinstance(out, dict) else None


@dataclass
class Failure:
    """One distinct problem, with the first (or, for hypothesis, the last = shrunk) reproducer."""

    target: str
    problem: str
    detail: str
    repro: dict[str, object]
    count: int = 1


@dataclass
class Slow:
    seconds: float
    size: int
    target: str
    repro: dict[str, object]


@dataclass
class Engine:
    """Executes and judges cases; collects statistics, failures and the slowest cases."""

    recorder: Recorder = field(default_factory=lambda: Recorder(None))
    base_seconds: float = 0.25
    per_byte_seconds: float = 20e-6
    keep_last: bool = False  # hypothesis mode: keep the last (shrunk) reproducer
    stats: dict[str, Counter[str]] = field(default_factory=dict)
    failures: dict[tuple[str, str, str], Failure] = field(default_factory=dict)
    slowest: list[Slow] = field(default_factory=list)
    worst_ratio: list[Slow] = field(default_factory=list)
    cases: int = 0

    def run(self, target: str, repro: dict[str, object], size: int, call: Callable[[], object],
            judge: Callable[[object, BaseException | None], tuple[str, str] | None],
            allowed: tuple[type[BaseException], ...] = (cqlcodec.DecodeError,)) -> str | None:
        """Run one case; returns a problem description or None."""
        repro = {"target": target, **repro}
        self.recorder.record(repro)
        self.cases += 1
        counter = self.stats.setdefault(target, Counter())
        value: object = None
        error: BaseException | None = None
        t0 = time.perf_counter()
        try:
            value = call()
        except allowed as exc:
            error = exc
        except Exception as exc:  # noqa: BLE001 - judging every exception type is the point
            error = exc
        elapsed = time.perf_counter() - t0
        if elapsed > 0.02 or elapsed > self.base_seconds + self.per_byte_seconds * size:
            elapsed = min(elapsed, _retime(call))  # first use (imports, codec build) or noise
        self._timing(elapsed, size, target, repro)
        problem: tuple[str, str] | None
        if error is not None and not isinstance(error, allowed):
            tb = "".join(traceback.format_exception(type(error), error, error.__traceback__)[-3:])
            problem = ("exception", f"{type(error).__module__}.{type(error).__qualname__}: "
                                    f"{str(error)[:200]}\n{tb[-600:]}")
        else:
            try:
                problem = judge(value, error)
            except NormError as exc:
                problem = ("wrong-shape", str(exc))
            except Exception as exc:  # noqa: BLE001 - e.g. an unhashable set element
                problem = ("wrong-shape", f"{type(exc).__name__} while checking the value: {exc}")
        if elapsed > self.base_seconds + self.per_byte_seconds * size:
            problem = problem or ("slow", f"{elapsed:.3f} s for {size} bytes")
        counter["rejected" if error is not None else "decoded"] += 1
        if problem is None:
            return None
        kind, detail = problem
        counter["FAIL " + kind] += 1
        key = (target, kind, _signature(detail))
        found = self.failures.get(key)
        if found is None:
            self.failures[key] = Failure(target, kind, detail, repro)
        else:
            found.count += 1
            if self.keep_last:
                found.repro = repro
                found.detail = detail
        return f"{kind}: {detail}"

    def _timing(self, elapsed: float, size: int, target: str, repro: dict[str, object]) -> None:
        if len(self.slowest) < 5 or elapsed > self.slowest[-1].seconds:
            self.slowest.append(Slow(elapsed, size, target, _short(repro)))
            self.slowest.sort(key=lambda s: -s.seconds)
            del self.slowest[5:]
        ratio = elapsed / (size + 256)
        if len(self.worst_ratio) < 5 or ratio > self.worst_ratio[-1].seconds / (self.worst_ratio[-1].size + 256):
            self.worst_ratio.append(Slow(elapsed, size, target, _short(repro)))
            self.worst_ratio.sort(key=lambda s: -s.seconds / (s.size + 256))
            del self.worst_ratio[5:]

    def report(self) -> dict[str, Any]:
        return {
            "cases": self.cases,
            "stats": {k: dict(v) for k, v in sorted(self.stats.items())},
            "failures": [f.__dict__ for f in self.failures.values()],
            "slowest": [s.__dict__ for s in self.slowest],
            "worst_seconds_per_byte": [s.__dict__ for s in self.worst_ratio],
        }


def _retime(call: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    try:
        call()
    except Exception:  # noqa: BLE001 - only the time matters here
        pass
    return time.perf_counter() - t0


def _signature(detail: str) -> str:
    """Groups failures that differ only in numbers and offsets."""
    head = detail.split("\n", 1)[0]
    return "".join("#" if c.isdigit() else c for c in head)[:90]


def _short(repro: dict[str, object]) -> dict[str, object]:
    out = dict(repro)
    for key, v in out.items():
        if isinstance(v, str) and len(v) > 200:
            out[key] = v[:200] + f"...({len(v)} chars)"
    return out


def judge_value(verdict: Verdict, normalize: Callable[[object], object],
                ) -> Callable[[object, BaseException | None], tuple[str, str] | None]:
    """A judge comparing a decode outcome with the reference verdict."""

    def judge(value: object, error: BaseException | None) -> tuple[str, str] | None:
        if error is not None:
            if verdict.kind == "accept":
                return ("rejected-valid", f"{type(error).__name__}: {str(error)[:200]}")
            return None
        if verdict.kind == "reject":
            return ("accepted-malformed", f"{verdict.reason}; got {_brief(value)}")
        actual = normalize(value)
        if verdict.kind == "accept" and actual != verdict.value:
            return ("wrong-value", f"expected {_brief(verdict.value)}, got {_brief(actual)}")
        return None

    return judge


def _brief(v: object) -> str:
    text = repr(v)
    return text if len(text) < 300 else text[:300] + "..."
