"""Quick side-by-side timing of the columnar path (one process, thread CPU time, best of 7).

    PYTHONPATH=<cqlcodec build>:benchmarks python benchmarks/columnar_quick.py

Prints µs per page for W5 (c), (d), (e) and W7 (100,000 rows of W5 (a)'s ten columns):
cqlcodec's row path (``decode_result``), ``decode_columns``, ``decode_columns`` plus
``to_numpy`` of every column, and cassandra-driver's row path when it is installed.
"""

from __future__ import annotations

import time
import timeit
import tracemalloc
from typing import Any, Callable

import workloads as W

import cqlcodec


def best(fn: Callable[[], object], repeat: int = 7) -> float:
    timer = timeit.Timer(fn, timer=time.thread_time)
    number, _ = timer.autorange()
    return min(timer.repeat(repeat, number)) / number * 1e6


def peak(fn: Callable[[], object]) -> int:
    tracemalloc.start()
    keep = fn()
    size = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    del keep
    return size


def driver_rows() -> Callable[[bytes], object] | None:
    try:
        from cassandra.protocol import ProtocolHandler
    except ImportError:
        return None

    def decode(body: bytes) -> object:
        msg: Any = ProtocolHandler.decode_message(4, {}, 0, 0, 0x08, body, None, None)
        return msg.parsed_rows

    return decode


def w7_body() -> bytes:
    return W.page_case().unprepared


def one_case(label: str, body: bytes, drv: Callable[[bytes], object] | None) -> None:
    rows = best(lambda: cqlcodec.decode_result(body, 4))
    cols = best(lambda: cqlcodec.decode_columns(body, 4))
    numpy_all = best(lambda: [c.to_numpy() for c in cqlcodec.decode_columns(body, 4)])
    line = (f"{label}: rows {rows:9.1f} µs  columns {cols:9.1f} µs ({rows / cols:5.2f}x)"
            f"  columns+to_numpy {numpy_all:9.1f} µs")
    if drv is not None:
        d = best(lambda: drv(body))
        line += f"  driver rows {d:9.1f} µs (columns {d / cols:5.2f}x faster)"
    print(line, flush=True)
    if not label.startswith("W7"):
        return
    try:
        import pandas
    except ImportError:
        return

    frame = best(lambda: cqlcodec.decode_columns(body, 4).to_pandas(), 3)
    print(f"  to_pandas {frame:9.1f} µs; peak memory: columns "
          f"{peak(lambda: cqlcodec.decode_columns(body, 4).to_pandas()) / 1e6:.1f} MB, "
          f"rows + DataFrame "
          f"{peak(lambda: pandas.DataFrame(cqlcodec.decode_rows_result(body, 4).rows)) / 1e6:.1f} MB",
          flush=True)
    if drv is not None:
        d = best(lambda: pandas.DataFrame(drv(body)), 3)
        print(f"  driver rows + DataFrame {d:9.1f} µs ({d / frame:5.2f}x)", flush=True)


def main() -> None:
    drv = driver_rows()
    print(f"cqlcodec compiled: {cqlcodec.COMPILED}")
    cases = [(f"W5 ({k})", W.rows_case(k).unprepared) for k in "cde"]
    cases.append(("W7 100k x 10", w7_body()))
    for label, body in cases:
        one_case(label, body, drv)


if __name__ == "__main__":
    main()
