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
    "__main__": "command-line tool: argparse and timeit, nothing per value",
    "_version": "one string",
    "bench_workloads": "benchmark inputs, stdlib only; benchmarks/ loads it by path",
    "errors": "exception classes users catch and subclass",
    "values": "value classes users may subclass and pickle",
    "containers": "FrozenMap/UdtValue: tuple/Mapping subclasses built with type()",
    "driver": "patches the drivers' classes at run time (monkeypatching needs Python classes)",
    "codecs.numpy_vectors": "calls numpy, which compiled code cannot speed up",
    "runtime.librt_shim": "struct-based stand-in for librt where librt is missing (PyPy)",
    "protocol.interp_fast": "the interpreted build's own fast paths (unused when compiled)",
    "codecs.__init__": "package docstring only",
    "protocol.__init__": "package docstring only",
    "runtime.__init__": "package docstring only",
    "types.__init__": "package docstring only",
    "columnar.__init__": "package docstring and re-exports only",
    "columnar.batch": "ColumnBatch/Column: per-call glue (capsule dunders, pandas/polars), nothing per cell",
    "columnar.arrow": "the Arrow C data interface through ctypes (structs, callbacks): per column, not per cell",
    "columnar.numpy_conv": "numpy views of finished buffers: calls numpy",
    "columnar.vectorised": "the interpreted build's numpy page decoding (unused when compiled)",
}
PURE_HINT = "Set CQLCODEC_COMPILE=0 to install the pure-Python build instead."


def compiling() -> bool:
    return os.environ.get("CQLCODEC_COMPILE", "1").strip() not in ("0", "false", "no", "")


def module_name(path: Path) -> str:
    """``cqlcodec/codecs/fixed.py`` -> ``codecs.fixed``; a package's ``__init__`` keeps its dots."""
    rel = path.relative_to(HERE / PACKAGE).with_suffix("")
    return ".".join(rel.parts)


def compiled_sources() -> list[str]:
    found = sorted((HERE / PACKAGE).rglob("*.py"))
    names = {module_name(p) for p in found}
    unknown = set(INTERPRETED) - names
    if unknown:
        raise SystemExit(f"cqlcodec: setup.py INTERPRETED names missing modules: {sorted(unknown)}")
    return [str(p.relative_to(HERE)) for p in found if module_name(p) not in INTERPRETED]


class LoudBuildExt(build_ext):
    """build_ext that turns any compiler failure into a clear, fatal message."""

    def run(self) -> None:
        try:
            super().run()
        except BaseException as exc:
            raise SystemExit(
                f"cqlcodec: compiling the mypyc extensions failed: {exc}\n{PURE_HINT}"
            ) from exc


def ext_modules() -> list[object]:
    if not compiling():
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        # setuptools runs this file once while asking for build requirements,
        # before the pinned mypy is installed; the backend's build_wheel then
        # insists that mypyc is importable, so this never yields a pure wheel.
        if "egg_info" in sys.argv or "dist_info" in sys.argv:
            return []
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
