"""Peak memory of one operation of a benchmark case, measured in a fresh process.

Usage: ``python benchmarks/memprobe.py IMPL CASE BODY_FILE``; prints one JSON line.
run.py starts one probe per measurement with the interpreter of the impl's environment.

Method: the probe imports the impl's libraries and builds the case on a 100-row page
(which runs and checks it once, so lazy imports and first-call set-up are done), then
reads the full page from ``BODY_FILE`` into the bench's ``body``, runs a GC collection,
resets the kernel's resident-set high-water mark (``/proc/self/clear_refs``, Linux) and
runs the statement once, keeping its result. Reported: the high-water mark minus the
resident set just before, in bytes, so it counts every allocator alike: pymalloc, malloc
(numpy), the Arrow memory pool and polars' allocator. Where the mark cannot be reset,
``ru_maxrss`` is used instead (the same difference, against the earlier high-water mark).
"""

from __future__ import annotations

import dataclasses
import gc
import json
import os
import resource
import sys
from pathlib import Path

import harness as h
import worker

WARMUP_ROWS = 100


def _status_kb(field: str) -> int:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise OSError(f"/proc/self/status has no {field}")


def _reset_high_water() -> bool:
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def probe(impl: str, case_id: str, body_file: str) -> dict[str, object]:
    """Build ``case_id`` small, swap in the full page, and measure one run of it."""
    case = h.CASES_BY_ID[case_id]
    bench = worker.make_adapter(impl).build(dataclasses.replace(case, nrows=WARMUP_ROWS))
    if "body" not in bench.globals:
        raise SystemExit(f"{impl} {case_id}: the bench has no 'body' to replace")
    bench.globals["body"] = Path(body_file).read_bytes()
    gc.collect()
    if _reset_high_water():
        method = "VmHWM after clear_refs"
        before = _status_kb("VmRSS")
        result = h.run_once(bench)
        peak = _status_kb("VmHWM")
    else:
        method = "ru_maxrss"
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        result = h.run_once(bench)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    after = _status_kb("VmRSS") - before
    del result
    return {"peak": (peak - before) * 1024, "resident_after": after * 1024, "method": method}


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    replies = os.fdopen(os.dup(sys.stdout.fileno()), "w")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # stray prints go to stderr
    replies.write(json.dumps(probe(*argv)) + "\n")
    replies.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
