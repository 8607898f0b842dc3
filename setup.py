"""Build script: compiles cqlcodec's modules with mypyc unless CQLCODEC_COMPILE=0.

All compiled modules go into one mypyc group, ``cqlcodec._native``, so calls
between them are early-bound and the shared library stays inside the package.
Modules listed in ``INTERPRETED`` are never compiled: the package entry point,
the CLI, the optional numpy and driver glue, the librt fallback shim and the
user-facing value classes.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
PACKAGE = "cqlcodec"
INTERPRETED = {
    "__init__",
    "__main__",
    "_version",
    "errors",
    "values",
    "_librt_shim",
    "_interp_fast",
    "numpy_support",
    "driver",
    "containers",
    # the package entry point of the columnar subpackage
    "columnar.__init__",
    # public ColumnBatch/Column: per-call glue (capsule dunders, pandas/polars); no per-cell work
    "columnar.batch",
    # Arrow C data interface through ctypes (callbacks, structs): stdlib glue, not hot
    "columnar.arrow",
    # numpy views of finished buffers: imports numpy
    "columnar.numpy_conv",
}
PURE_HINT = "Set CQLCODEC_COMPILE=0 to install the pure-Python build instead."


def compiling() -> bool:
    return os.environ.get("CQLCODEC_COMPILE", "1").strip() not in ("0", "false", "no", "")


def module_key(path: Path) -> str:
    """``columnar.walk`` for ``cqlcodec/columnar/walk.py`` (the keys of INTERPRETED)."""
    return ".".join(path.relative_to(HERE / PACKAGE).with_suffix("").parts)


def compiled_sources() -> list[str]:
    """Every module of the package and its subpackages, except those in INTERPRETED."""
    return sorted(
        p.relative_to(HERE).as_posix()
        for p in (HERE / PACKAGE).rglob("*.py")
        if module_key(p) not in INTERPRETED
    )


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
