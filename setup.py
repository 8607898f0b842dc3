"""Build script: compiles cqlcodec's modules with mypyc unless CQLCODEC_COMPILE=0.

Every module under cqlcodec/, subpackages included, goes into one mypyc group,
``cqlcodec._native``, so calls between them are early-bound (across subpackages too)
and the shared library stays inside the package. ``INTERPRETED`` lists the modules
that are never compiled, each with its reason.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
PACKAGE = "cqlcodec"
# Modules never compiled, each with its reason; every other module under cqlcodec/
# (found recursively) is compiled.
INTERPRETED: dict[str, str] = {
    "__init__": "entry point: checks that the build is whole and re-exports the API",
    "__main__": "python -m cqlcodec: hands over to cqlcodec.cli",
    "cli.main": "command-line tool: argparse, nothing per value",
    "cli.codec_commands": "command-line tool: argparse and timeit, nothing per value",
    "cli.table_commands": "command-line tool: threads driving driver sessions and files",
    "cli.connect": "command-line tool: opens a driver session",
    "cli.diff_command": "command-line tool: argparse and a report file, per difference",
    "driver.diff_fix": "drives load_table and DELETEs per difference found, nothing per value",
    "cli.progress": "command-line tool: a progress line on stderr",
    "cli.unload_files": "command-line tool: files, a manifest and pyarrow writers",
    "cli.jsonl_text": "JSON lines through pyarrow compute calls, per column of a page",
    "cli.exits": "command-line tool: exit status constants",
    "driver.batching": "reads the drivers' schema metadata and exceptions",
    "driver.sources": "opens files and tables with pyarrow, per chunk",
    "driver.parquet_durations": "rebuilds pyarrow arrays of durations for Parquet, per batch",
    "driver.columnar_files": "pyarrow writers, schemas and casts of Parquet and Arrow files, per page",
    "driver.load": "drives a driver session chunk by chunk",
    "driver.copy": "drives two driver sessions split by split, page by page",
    "runtime.state_files": "JSON files written once per split; subclassed by interpreted modules",
    "cli.copy_command": "command-line tool: two driver sessions and a state directory",
    "aio.bridge": "asyncio glue over the driver's ResponseFuture callbacks: per request, not per value",
    "aio.columns": "asyncio glue: coroutines and async iterators over driver requests, per page",
    "aio.scan": "asyncio glue: tasks reading the splits of a scan, per page",
    "aio.load": "asyncio glue: drives the shared insert/load steps, per chunk",
    "_version": "one string",
    "bench_workloads": "benchmark inputs, stdlib only; benchmarks/ loads it by path",
    "errors": "exception classes users catch and subclass",
    "values": "value classes users may subclass and pickle",
    "containers": "FrozenMap/UdtValue: tuple/Mapping subclasses built with type()",
    "driver.installer": "patches the drivers' classes at run time (monkeypatching needs Python classes)",
    "codecs.numpy_vectors": "calls numpy, which compiled code cannot speed up",
    "runtime.librt_shim": "struct-based stand-in for librt where librt is missing (PyPy)",
    "protocol.interp_fast": "the interpreted build's own fast paths (unused when compiled)",
    "columnar.batch": "ColumnBatch/Column: per-call glue (capsule dunders, pandas/polars), nothing per cell",
    "columnar.arrow": "the Arrow C data interface through ctypes (structs, callbacks): per column, not per cell",
    "columnar.numpy_conv": "numpy views of finished buffers: calls numpy",
    "columnar.bind_input": "reads numpy, pyarrow, polars and pandas columns and converts them with numpy",
    "columnar.arrow_numbers": "numpy views of pyarrow buffers: calls numpy per column",
    "columnar.unify": "pyarrow casts per column of a finished result (calls pyarrow)",
    "columnar.stream": "an Arrow C stream through ctypes callbacks: per page, not per cell",
    "columnar.ctypes_guard": "ctypes callbacks whose first bytecodes must take a pending exception",
    "columnar.pyarrow_export": "builds pyarrow arrays over finished buffers: calls pyarrow per column",
    "columnar.export": "per-call choice between pyarrow's and the ctypes capsules",
    "driver.columns": "subclasses the drivers' RESULT message and calls their session internals at run time",
    "columnar.vectorised": "the interpreted build's numpy page decoding (unused when compiled)",
    "driver.connect": "driver Cluster/Session objects, a per-process session cache and atexit: I/O glue",
    "driver.arrow_io": "pyarrow tables per page and the driver's session calls: per page, not per cell",
    "dask": "Dask glue (from_map, map_partitions), per partition; subclasses nothing compiled",
    "ray": "subclasses ray.data.Datasource/Datasink (Python classes), per block",
    "driver.splits": "reads the drivers' token map and schema metadata; per split, not per row",
    "driver.scan": "driver sessions, threads and retries; per page, not per row",
    "connection.driver_class": "builds the drivers' connection classes at run time (type() "
                               "over any reactor); per read: the reassembler it calls is compiled",
    "connection.direct_write": "methods put into the drivers' libev connection class at run "
                               "time (a compiled function does not bind as a method)",
    "connection.skip_metadata": "subclasses the drivers' ExecuteMessage and list (a statement's "
                                "result columns with their id); per request, not per row",
    "driver.sender": "subclasses the drivers' BatchStatement and BatchMessage; per request, not per row",
}
PURE_HINT = "Set CQLCODEC_COMPILE=0 to install the pure-Python build instead."


def compiling() -> bool:
    return os.environ.get("CQLCODEC_COMPILE", "1").strip() not in ("0", "false", "no", "")


def module_name(path: Path) -> str:
    """Dotted module path relative to the package: ``driver``, ``codecs.fixed``, ``types.__init__``."""
    return ".".join(path.relative_to(HERE / PACKAGE).with_suffix("").parts)


def compiled_sources() -> list[str]:
    """Every module under the package, in any subpackage, minus ``INTERPRETED``.

    Package ``__init__`` modules always stay interpreted: mypyc 2.4.1 derives a
    compiled package's ``__path__`` as if the group library sat above the
    package (``cqlcodec/cqlcodec/sub``), and then its submodules cannot be imported.
    """
    found = sorted((HERE / PACKAGE).rglob("*.py"))
    unknown = set(INTERPRETED) - {module_name(p) for p in found}
    if unknown:
        raise SystemExit(f"cqlcodec: setup.py INTERPRETED names missing modules: {sorted(unknown)}")
    return [p.relative_to(HERE).as_posix() for p in found
            if p.stem != "__init__" and module_name(p) not in INTERPRETED]


class LoudBuildExt(build_ext):
    """build_ext that turns any compiler failure into a clear, fatal message."""

    def run(self) -> None:
        try:
            super().run()
        except BaseException as exc:
            raise SystemExit(
                f"cqlcodec: compiling the mypyc extensions failed: {exc}\n{PURE_HINT}"
            ) from exc


# Commands that write only metadata or the source archive: they need no
# extensions, and the sdist must carry the .py sources, never generated C.
# (setuptools runs egg_info while asking for build requirements, before the
# pinned mypy is installed; the backend's build_wheel then insists that mypyc
# is importable, so this never yields a pure wheel.)
NO_EXTENSION_COMMANDS = {"egg_info", "dist_info", "sdist"}


def ext_modules() -> list[object]:
    if not compiling() or NO_EXTENSION_COMMANDS.intersection(sys.argv[1:]):
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        raise SystemExit(f"cqlcodec: mypyc is not installed. {PURE_HINT}")
    opt_level = os.environ.get("MYPYC_OPT_LEVEL", "3")
    return list(
        mypycify(
            ["--strict", "--config-file", str(HERE / "pyproject.toml"), *compiled_sources()],
            opt_level=opt_level,
            group_name=f"{PACKAGE}._native",
        )
    )


setup(ext_modules=ext_modules(), cmdclass={"build_ext": LoudBuildExt})
