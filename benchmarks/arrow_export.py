"""The Arrow export of one W5 (c) page through pyarrow-owned structs against the ctypes
structs, side by side in one process (thread CPU time, best of 7, interleaved rounds).

    PYTHONPATH=<cqlcodec build> python benchmarks/arrow_export.py

Prints µs per call of ``pyarrow.record_batch(batch)`` and ``pyarrow.table(batch)``: the
"pyarrow" column is what cqlcodec does when pyarrow is installed (arrays made with
``pyarrow.Array.from_buffers``), the "ctypes" column the same call over the structs
that cqlcodec fills with ctypes (what it does without pyarrow).
"""

from __future__ import annotations

import time
import timeit
from collections.abc import Callable

import pyarrow

import cqlcodec
from cqlcodec import bench_workloads
from cqlcodec.columnar import arrow


class _Array:
    def __init__(self, capsules: tuple[object, object]) -> None:
        self.capsules = capsules

    def __arrow_c_array__(self, requested_schema: object | None = None) -> tuple[object, object]:
        return self.capsules


class _Stream:
    def __init__(self, capsule: object) -> None:
        self.capsule = capsule

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        return self.capsule


def best(fn: Callable[[], object], rounds: int = 7) -> float:
    timer = timeit.Timer(fn, timer=time.thread_time)
    number, _ = timer.autorange()
    return min(timer.repeat(rounds, number)) / number * 1e6


def main() -> None:
    batch = cqlcodec.decode_columns(bench_workloads.rows_case("c").unprepared, 4)
    calls: dict[str, tuple[Callable[[], object], Callable[[], object]]] = {
        "pyarrow.record_batch": (
            lambda: pyarrow.record_batch(batch),
            lambda: pyarrow.record_batch(_Array(arrow.array_capsules(batch._field())))),
        "pyarrow.table": (
            lambda: pyarrow.table(batch),
            lambda: pyarrow.table(_Stream(arrow.stream_capsule(batch._field())))),
    }
    for new, old in calls.values():
        assert new().equals(old())  # type: ignore[attr-defined]
    print(f"cqlcodec compiled={cqlcodec.COMPILED}, pyarrow {pyarrow.__version__}, "
          f"W5 (c): {batch.num_rows} rows x {len(batch.names)} columns")
    print(f"{'call':<22} {'pyarrow µs':>11} {'ctypes µs':>10} {'ctypes/pyarrow':>15}")
    for name, (new, old) in calls.items():
        times: dict[str, list[float]] = {"new": [], "old": []}
        for _ in range(3):  # interleaved
            times["new"].append(best(new))
            times["old"].append(best(old))
        n, o = min(times["new"]), min(times["old"])
        print(f"{name:<22} {n:>11.1f} {o:>10.1f} {o / n:>14.2f}x")


if __name__ == "__main__":
    main()
