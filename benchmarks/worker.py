"""One benchmark worker: runs inside one implementation's environment, driven by run.py.

Usage: ``python benchmarks/worker.py IMPL [IMPL ...]``. Reads one JSON command per
line on stdin and answers one JSON line on stdout:

* ``{"op": "info"}`` -> versions and active code paths of every impl;
* ``{"op": "build", "filter": regex}`` -> builds (and checks) every case whose id
  matches: ``{impl: {case: status}}`` with status ``{"ok": note}``, ``{"na": reason}``,
  ``{"fails": message}`` (the implementation's own code raises) or ``{"error": message}``;
* ``{"op": "calibrate", "impl", "case", "min_time"}`` -> ``{"number": n}``;
* ``{"op": "measure", "impl", "case", "number", "repeat"}`` -> ``{"times": [s/op, ...]}``;
* ``{"op": "quit"}``.

Anything the code under test prints goes to stderr, never into the reply channel.
"""

from __future__ import annotations

import gc
import json
import os
import platform
import re
import sys
import traceback
from importlib import metadata
from typing import IO, Any

import harness as h
import workloads as wl


def make_adapter(impl: str) -> h.Adapter:
    """The adapter of ``impl`` (imports only what that impl needs)."""
    if impl in (h.IMPL_CQLCODEC, h.IMPL_CQLCODEC_PURE):
        import adapter_cqlcodec

        return adapter_cqlcodec.CqlcodecAdapter(impl)
    if impl in (h.IMPL_SCYLLA, h.IMPL_CASSANDRA, h.IMPL_CASSANDRA_PY):
        import adapter_driver

        return adapter_driver.adapter(impl)
    if impl == h.IMPL_FLOOR:
        import adapter_floor

        return adapter_floor.FloorAdapter()
    raise SystemExit(f"unknown impl {impl!r}; known: {', '.join(h.IMPLS)}")


class Worker:
    """Holds the adapters and the built benches of this process."""

    def __init__(self, impls: list[str]) -> None:
        self.adapters = {impl: make_adapter(impl) for impl in impls}
        self.benches: dict[tuple[str, str], h.Bench] = {}

    def info(self) -> dict[str, Any]:
        numpy_version = None
        try:
            import numpy

            numpy_version = numpy.__version__
        except ImportError:
            pass
        frames = {}
        for dist in ("pandas", "pyarrow", "polars"):
            try:
                frames[dist] = metadata.version(dist)
            except metadata.PackageNotFoundError:
                pass
        return {
            "python": sys.version.split()[0],
            "implementation": platform.python_implementation(),
            "executable": sys.executable,
            "numpy": numpy_version,
            "dataframes": frames,
            "impls": {name: a.info() for name, a in self.adapters.items()},
        }

    def build(self, pattern: str = "") -> dict[str, dict[str, dict[str, str]]]:
        wanted = re.compile(pattern) if pattern else None
        out: dict[str, dict[str, dict[str, str]]] = {}
        for impl, adapter in self.adapters.items():
            status: dict[str, dict[str, str]] = {}
            for case in h.CASES:
                if wanted is not None and not wanted.search(case.id):
                    continue
                try:
                    bench = adapter.build(case)
                except h.Unsupported as exc:
                    status[case.id] = {"na": str(exc)}
                except h.PeerFails as exc:
                    status[case.id] = {"fails": str(exc)[:800]}
                except Exception as exc:  # a wrong or crashing implementation: reported, not timed
                    detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
                    status[case.id] = {"error": detail[:800]}
                else:
                    self.benches[(impl, case.id)] = bench
                    status[case.id] = {"ok": bench.note}
            out[impl] = status
        # measure() runs gc.collect() before every timing: drop the W7 page's expected rows
        # (only the checks need them) and move what stays (modules, benches: pandas, pyarrow
        # and polars alone are ~80k objects) out of the collector's sight.
        wl.page_case.cache_clear()
        gc.collect()
        gc.freeze()
        return out

    def handle(self, cmd: dict[str, Any]) -> dict[str, Any]:
        op = cmd["op"]
        if op == "info":
            return self.info()
        if op == "build":
            return self.build(str(cmd.get("filter", "")))
        bench = self.benches[(cmd["impl"], cmd["case"])]
        if op == "calibrate":
            return {"number": h.calibrate(bench, float(cmd["min_time"]))}
        if op == "measure":
            return {"times": h.measure(bench, int(cmd["number"]), int(cmd.get("repeat", 1)))}
        raise ValueError(f"unknown op {op!r}")


def serve(worker: Worker, commands: IO[str], replies: IO[str]) -> None:
    """Answer commands until ``quit`` or end of input."""
    for line in commands:
        cmd = json.loads(line)
        if cmd["op"] == "quit":
            return
        try:
            reply: dict[str, Any] = {"ok": worker.handle(cmd)}
        except Exception as exc:
            reply = {"fail": "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))}
        replies.write(json.dumps(reply) + "\n")
        replies.flush()


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    replies = os.fdopen(os.dup(sys.stdout.fileno()), "w")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # stray prints go to stderr
    try:
        worker = Worker(argv)
    except Exception as exc:
        replies.write(json.dumps({"fail": f"{type(exc).__name__}: {exc}"}) + "\n")
        replies.flush()
        return 1
    replies.write(json.dumps({"ok": "ready"}) + "\n")
    replies.flush()
    serve(worker, sys.stdin, replies)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
