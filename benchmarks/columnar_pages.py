"""Wide and long pages through ``decode_columns``: cost per cell and peak memory.

    python benchmarks/columnar_pages.py [--quick]      (a cqlcodec build importable)

Pages with unprepared metadata, cells from W5 (c)'s five types (int, bigint, double,
text of 8-24 characters, boolean):

* W5 (c) itself: 1,000 rows x 5 columns, the yardstick;
* wide: 5,000 rows x 100 columns (W5 (c)'s five, twenty times);
* text: one text column of W5 (c)'s values, 1,000 rows, and long: the same column
  with 50 MB of text in one page (3.1 million values).

For each it prints the decode time per cell (best of several, thread CPU time) and
its ratio to its yardstick (wide: W5 (c); long: the 1,000-row text page; goal:
within 1.3x), then, in a fresh child process that reads the body from a file, the
peak RSS that decoding added over the body alone, against the size of the column
buffers the page decodes into (goal: within 1.2x).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import timeit
from pathlib import Path

import workloads as W

import cqlcodec

HERE = Path(__file__).resolve().parent
FIVE = "c_int int, c_bigint bigint, c_double double, c_text text, c_boolean boolean"


def text_page(nbytes: int) -> bytes:
    """One text column of W5 (c)'s text values, repeated until they hold ``nbytes``."""
    values = [str(row[3]).encode() for row in W.rows_case("c").rows]
    head = W.rows_body(W.columns_of("c_text text"), [], False)[:-4]
    cells: list[bytes] = []
    size = 0
    while size < nbytes:
        for v in values:
            cells.append(len(v).to_bytes(4, "big") + v)
            size += len(v)
    return head + len(cells).to_bytes(4, "big") + b"".join(cells)


def page(name: str) -> bytes:
    """The body of page ``name`` (``w5c``, ``wide``, ``text`` or ``long``)."""
    if name == "w5c":
        return W.rows_case("c").unprepared
    if name == "wide":
        five = W.columns_of(FIVE)
        columns = [(f"{col}_{i}", spec) for i in range(20) for col, spec in five]
        return W.rows_body(columns, W.gen_rows(columns, 5000, W.SEED + 900), False)
    if name == "text":
        return text_page(1)
    if name == "long":
        return text_page(50_000_000)
    raise ValueError(name)


def buffers_size(batch: cqlcodec.ColumnBatch) -> int:
    """Bytes of every Arrow buffer of the batch's columns."""
    total = 0
    for column in batch:
        node = column._node  # noqa: SLF001 - the buffers themselves, not a conversion
        total += sum(len(b) for b in node.buffers() if b is not None)
        total += len(node.vbytes) if node.nulls else 0
    return total


def per_cell(body: bytes, quick: bool) -> tuple[float, int]:
    """Best time per cell in ns (thread CPU time) and the number of cells."""
    batch = cqlcodec.decode_columns(body, 4)
    cells = batch.num_rows * len(batch.names)
    timer = timeit.Timer(lambda: cqlcodec.decode_columns(body, 4), timer=time.thread_time)
    number, _ = timer.autorange()
    best = min(timer.repeat(3 if quick else 7, number)) / number
    return best / cells * 1e9, cells


def high_water_mark() -> int:
    """This process's peak RSS in bytes: VmHWM, which, unlike ``ru_maxrss``, does not
    carry the parent's peak across exec."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def child(path: str) -> None:
    """Peak RSS added by one decode of the body in file ``path`` (a fresh process)."""
    fd = os.open(path, os.O_RDONLY)
    try:  # one allocation of the body's size (a buffered read may hold two copies)
        body = os.read(fd, os.fstat(fd).st_size)
    finally:
        os.close(fd)
    before = high_water_mark()
    batch = cqlcodec.decode_columns(body, 4)
    after = high_water_mark()
    print(json.dumps({"added": after - before, "buffers": buffers_size(batch)}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child)
        return
    from cqlcodec.runtime.build import COMPILED

    print(f"cqlcodec {'compiled' if COMPILED else 'interpreted'} build, {cqlcodec.__file__}")
    yardstick: dict[str, float] = {}
    for name, label, against in (("w5c", "W5 (c) 1,000 x 5", "w5c"),
                                 ("wide", "wide 5,000 x 100", "w5c"),
                                 ("text", "text 1,000 x 1", "text"),
                                 ("long", "long text, 50 MB", "text")):
        body = page(name)
        ns, cells = per_cell(body, args.quick)
        yardstick.setdefault(name, ns)
        with tempfile.NamedTemporaryFile(suffix=".body") as f:
            f.write(body)
            f.flush()
            done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", f.name],
                                  capture_output=True, text=True, check=True, cwd=HERE)
        mem = json.loads(done.stdout)
        print(f"{label:18} {len(body) / 1e6:7.2f} MB body {cells:10,} cells "
              f"{ns:6.2f} ns/cell = {ns / yardstick[against]:4.2f}x {against} (goal <= 1.3x); "
              f"decoding added {mem['added'] / 1e6:6.2f} MB peak RSS = "
              f"{mem['added'] / mem['buffers']:4.2f}x the {mem['buffers'] / 1e6:.2f} MB of column "
              "buffers (goal <= 1.2x)")


if __name__ == "__main__":
    main()
