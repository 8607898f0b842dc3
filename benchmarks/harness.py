"""The benchmark cases, the timing primitive and the result checks shared by every runner.

A :class:`Case` names one workload input (``W5/prepared/c``, ``W1/direct/1536`` ...).
An implementation adapter turns a case into a :class:`Bench`: a statement and the
globals it runs with, exactly what ``timeit`` times (a direct call of a bound
callable, no wrapper). Building a Bench runs it once and checks its result against
the expected value, so a wrong implementation can never produce a number.
"""

from __future__ import annotations

import gc
import math
import time
import timeit
import uuid
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from typing import Any, Callable, Final, Protocol

import workloads as wl

IMPL_CQLCODEC: Final = "cqlcodec"
IMPL_CQLCODEC_PURE: Final = "cqlcodec-pure"
IMPL_SCYLLA: Final = "scylla"
IMPL_CASSANDRA: Final = "cassandra"
IMPL_CASSANDRA_PY: Final = "cassandra-py"
IMPL_FLOOR: Final = "floor"
IMPLS: Final = (
    IMPL_CQLCODEC,
    IMPL_CQLCODEC_PURE,
    IMPL_SCYLLA,
    IMPL_CASSANDRA,
    IMPL_CASSANDRA_PY,
    IMPL_FLOOR,
)
IMPL_TITLES: Final[dict[str, str]] = {
    IMPL_CQLCODEC: "cqlcodec compiled",
    IMPL_CQLCODEC_PURE: "cqlcodec interpreted",
    IMPL_SCYLLA: "scylla-driver (Cython)",
    IMPL_CASSANDRA: "cassandra-driver (Cython)",
    IMPL_CASSANDRA_PY: "cassandra-driver (pure-Python path)",
    IMPL_FLOOR: "floor (stdlib/numpy)",
}


class Unsupported(Exception):
    """The implementation has no equivalent of this case (reported as n/a)."""


class CheckFailed(AssertionError):
    """A benchmark's result differs from the expected value."""


class PeerFails(Exception):
    """The implementation's own code raises on this case (reported as 'fails', not timed)."""


@dataclass(frozen=True)
class Case:
    """One workload input; ``kind`` selects what the adapters build."""

    id: str
    group: str
    kind: str
    dim: int = 0
    index: int = 0
    nrows: int = 0
    key: str = ""
    flag: bool = False

    @property
    def scalar(self) -> wl.ScalarCase:
        """The W3/W4 case this refers to (``kind`` scalar_*)."""
        return wl.SCALAR_CASES[self.index]

    @property
    def memory(self) -> bool:
        """Whether run.py also measures the peak memory of one operation (W7)."""
        return self.group == "W7"


@dataclass(frozen=True)
class Derived:
    """A figure computed from two measured cases: ``(t(big) - t(small)) / (k_big - k_small)``."""

    id: str
    group: str
    small: str
    big: str
    k_small: int
    k_big: int


@dataclass
class Bench:
    """A timed statement, its globals, and a description of the path it takes.

    ``clock`` is ``"thread"`` (the calling thread's CPU time) or ``"process"`` (every
    thread's, for libraries that convert in thread pools: pyarrow, polars).
    ``warmup=False`` skips the untimed loops before each timing (for operations that
    take a large part of a second each, where a warm-up only costs time).
    """

    stmt: str
    globals: dict[str, object] = field(default_factory=dict)
    note: str = ""
    clock: str = "thread"
    warmup: bool = True


class Adapter(Protocol):
    """One implementation (cqlcodec build, driver path, floor)."""

    name: str

    def build(self, case: Case) -> Bench:
        """The Bench of ``case``, already checked; raises Unsupported if there is none."""
        ...

    def info(self) -> dict[str, object]:
        """Versions and the active code path, for the environment report."""
        ...


def _vector_cases() -> list[Case]:
    out: list[Case] = []
    for dim in wl.VECTOR_DIMS:
        out.append(Case(f"W1/list/{dim}", "W1", "vec_decode", dim=dim))
        out.append(Case(f"W1/numpy/{dim}", "W1", "vec_decode_numpy", dim=dim))
        out.append(Case(f"W1/rows1/{dim}", "W1", "vec_rows", dim=dim, nrows=1))
        out.append(Case(f"W1/rows{wl.ROW_PATH_K_VECTOR}/{dim}", "W1", "vec_rows", dim=dim,
                        nrows=wl.ROW_PATH_K_VECTOR))
    for dim in wl.VECTOR_DIMS:
        out.append(Case(f"W2/list/{dim}", "W2", "vec_encode", dim=dim))
        out.append(Case(f"W2/float32/{dim}", "W2", "vec_encode_f32", dim=dim))
    return out


def _scalar_cases() -> list[Case]:
    out: list[Case] = []
    for i, sc in enumerate(wl.SCALAR_CASES):
        out.append(Case(f"W3/direct/{sc.label}", "W3", "scalar_decode", index=i))
        out.append(Case(f"W3/rows1/{sc.label}", "W3", "scalar_rows", index=i, nrows=1))
        out.append(Case(f"W3/rows{wl.ROW_PATH_K_SCALAR}/{sc.label}", "W3", "scalar_rows", index=i,
                        nrows=wl.ROW_PATH_K_SCALAR))
    for i, sc in enumerate(wl.SCALAR_CASES):
        out.append(Case(f"W4/direct/{sc.label}", "W4", "scalar_encode", index=i))
    return out


def _rows_cases() -> list[Case]:
    out = [Case(f"W5/prepared/{k}", "W5", "rows", key=k, flag=True) for k in wl.ROWS_SPECS]
    out.append(Case("W5/prepared-numpy/d", "W5", "rows_numpy", key="d", flag=True))
    out += [Case(f"W5/unprepared/{k}", "W5", "rows", key=k, flag=False) for k in wl.ROWS_SPECS]
    return out


def _columnar_cases() -> list[Case]:
    out = [Case(f"W5/columnar/{k}", "W5col", "columns", key=k) for k in "bcde"]
    out += [Case(f"W5/columnar-numpy/{k}", "W5col", "columns_numpy", key=k) for k in "bce"]
    return out


def _frame_cases() -> list[Case]:
    return [
        Case("W7/rows-pandas", "W7", "rows_frame", key="pandas", nrows=wl.W7_ROWS),
        Case("W7/pandas", "W7", "frame", key="pandas", nrows=wl.W7_ROWS),
        Case("W7/polars", "W7", "frame", key="polars", nrows=wl.W7_ROWS),
    ]


def _bind_cases() -> list[Case]:
    out = [Case(f"W6/bind/{k}", "W6", "bind", key=k) for k in wl.BIND_SPECS]
    out += [Case(f"W6/rebind/{k}", "W6", "bind", key=k, flag=True) for k in wl.BIND_SPECS]
    return out


PARSE_DESC_COLUMNS: Final = (5, 10, 20, 50)


def _cache_cases() -> list[Case]:
    out = [Case("cache/find_deserializer", "cache", "find_deserializer")]
    out += [Case(f"cache/make_deserializers/{n}", "cache", "make_deserializers", nrows=n)
            for n in (5, 10)]
    for n in PARSE_DESC_COLUMNS:
        out.append(Case(f"cache/parse-desc-cached/{n}", "cache", "parse_desc", nrows=n, flag=True))
        out.append(Case(f"cache/parse-desc-uncached/{n}", "cache", "parse_desc", nrows=n))
    return out


CASES: Final[list[Case]] = (
    _vector_cases() + _scalar_cases() + _rows_cases() + _columnar_cases() + _bind_cases()
    + _frame_cases() + _cache_cases()
)
CASES_BY_ID: Final[dict[str, Case]] = {c.id: c for c in CASES}
GROUPS: Final = ("W1", "W2", "W3", "W4", "W5", "W5col", "W6", "W7", "cache")
GROUP_TITLES: Final[dict[str, str]] = {
    "W1": "W1 vector<float,D> deserialize",
    "W2": "W2 vector<float,D> serialize",
    "W3": "W3 scalar/collection deserialize",
    "W4": "W4 scalar/collection serialize",
    "W5": "W5 RESULT/Rows end to end",
    "W5col": "W5 columnar: decode_columns vs the row paths and the drivers' NumpyProtocolHandler",
    "W6": "W6 bind",
    "W7": "W7 one page of 100,000 rows x 10 mixed columns into a DataFrame",
    "cache": "cache lookups and parse descriptions",
}


def _derived() -> list[Derived]:
    out: list[Derived] = []
    for dim in wl.VECTOR_DIMS:
        k = wl.ROW_PATH_K_VECTOR
        out.append(Derived(f"W1/rowpath/{dim}", "W1", f"W1/rows1/{dim}", f"W1/rows{k}/{dim}", 1, k))
    for sc in wl.SCALAR_CASES:
        k = wl.ROW_PATH_K_SCALAR
        out.append(Derived(f"W3/rowpath/{sc.label}", "W3", f"W3/rows1/{sc.label}",
                           f"W3/rows{k}/{sc.label}", 1, k))
    return out


DERIVED: Final[list[Derived]] = _derived()


# --------------------------------------------------------------------------- timing


def make_timer(bench: Bench) -> timeit.Timer:
    """A ``timeit.Timer`` on the bench's CPU clock (GC off while timing, timeit's default)."""
    clock = time.process_time if bench.clock == "process" else time.thread_time
    return timeit.Timer(bench.stmt, globals=bench.globals, timer=clock)


def calibrate(bench: Bench, min_time: float) -> int:
    """The loop count that makes one repeat take at least ``min_time`` seconds of CPU time.

    The count grows until a run takes a tenth of ``min_time`` (a single cold iteration
    says little: caches are cold after the other workers ran) and is then scaled up.
    """
    timer = make_timer(bench)
    timer.timeit(1)  # warm up: first-call costs, caches
    number = 1
    while True:
        elapsed = timer.timeit(number)
        if elapsed >= min_time:
            return number
        if elapsed < min_time / 10:
            number *= 10 if elapsed < min_time / 100 else 2
        else:
            return max(1, math.ceil(number * min_time * 1.05 / elapsed))


def measure(bench: Bench, number: int, repeat: int = 1) -> list[float]:
    """``repeat`` timings of ``number`` loops, as seconds per operation.

    Each timing follows a collection of the cyclic GC and (unless ``bench.warmup`` is
    off) an untimed warm-up of a tenth of the loops, so the timed loops start with warm
    caches.
    """
    timer = make_timer(bench)
    out = []
    for _i in range(repeat):
        gc.collect()
        if bench.warmup:
            timer.timeit(max(1, number // 10))
        out.append(timer.timeit(number) / number)
    return out


def function_of(bench: Bench) -> Callable[[], object]:
    """The statement as a zero-argument function (for pytest-benchmark)."""
    body = "\n".join("    " + line for line in bench.stmt.splitlines())
    namespace = dict(bench.globals)
    exec(f"def _bench_fn():\n{body}\n", namespace)
    fn = namespace["_bench_fn"]
    assert callable(fn)
    return fn


# --------------------------------------------------------------------------- checks


def normalize(value: object) -> object:
    """Map driver-specific value classes onto the builtins the workloads expect.

    cassandra.util.Date becomes datetime.date; numpy arrays become lists; sequences
    are compared element-wise (rows may be tuples or lists).
    """
    cls = type(value).__name__
    if cls == "Date" and hasattr(value, "date"):
        result = value.date()
        assert isinstance(result, date)
        return result
    if cls == "ndarray" and hasattr(value, "tolist"):
        listed: object = value.tolist()
        return listed
    if isinstance(value, (list, tuple)):
        return [normalize(v) for v in value]
    if isinstance(value, dict):
        return {normalize(k): normalize(v) for k, v in value.items()}
    return value


def check(what: str, got: object, expected: object) -> None:
    """Raise CheckFailed unless ``got`` equals ``expected`` after :func:`normalize`."""
    if normalize(got) != normalize(expected):
        raise CheckFailed(f"{what}: result differs from the expected value: "
                          f"got {_short(got)}, expected {_short(expected)}")


def transpose(rows: list[wl.Row]) -> list[list[object]]:
    """The columns of ``rows``, as lists."""
    width = len(rows[0]) if rows else 0
    return [[row[i] for row in rows] for i in range(width)]


def _like(got: object, expected: object) -> object:
    """``got`` (a cell read back from a DataFrame) in the Python type of ``expected``.

    numpy scalars become Python scalars, 16 bytes become a UUID where a UUID is
    expected, and an aware datetime (pandas Timestamp included) becomes naive UTC.
    """
    if got is None or expected is None:
        return got
    item = getattr(got, "item", None)
    if callable(item) and type(got).__module__ == "numpy":
        got = item()
    if isinstance(expected, uuid.UUID) and isinstance(got, (bytes, bytearray)) and len(got) == 16:
        return uuid.UUID(bytes=bytes(got))
    if isinstance(expected, datetime) and isinstance(got, datetime) and got.tzinfo is not None:
        return got.astimezone(timezone.utc).replace(tzinfo=None)
    return got


def check_frame(what: str, frame: Any, names: list[str], rows: list[wl.Row]) -> None:
    """Raise CheckFailed unless the pandas or polars DataFrame ``frame`` holds ``rows``
    (column names ``names``), cell by cell after :func:`_like` and :func:`normalize`."""
    if list(frame.columns) != names or len(frame) != len(rows):
        raise CheckFailed(f"{what}: DataFrame has columns {list(frame.columns)} and {len(frame)} rows, "
                          f"expected {names} and {len(rows)} rows")
    for name, column in zip(names, transpose(rows)):
        got = frame[name].to_list()
        check(f"{what} column {name}", [_like(g, e) for g, e in zip(got, column)], column)


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 160 else text[:157] + "..."


def run_once(bench: Bench) -> object:
    """Execute the statement once and return the value of its last expression statement."""
    lines = bench.stmt.splitlines()
    namespace = dict(bench.globals)
    if len(lines) > 1:
        exec("\n".join(lines[:-1]), namespace)
    return eval(lines[-1], namespace)
