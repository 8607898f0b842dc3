"""In-tree PEP 517 backend: setuptools, plus the pinned mypy when compiling.

``pip install .`` compiles cqlcodec with mypyc unless ``CQLCODEC_COMPILE=0``.
The compiler is only requested when it is needed, so a pure build works
without mypy; a compiled build that cannot compile fails instead of silently
falling back to a pure wheel.
"""

from __future__ import annotations

import os
from typing import Any

from setuptools import build_meta as _orig
from setuptools.build_meta import *  # noqa: F401,F403  (re-export the other hooks)

MYPY_PIN = "mypy==2.4.1"


def _compiling() -> bool:
    return os.environ.get("CQLCODEC_COMPILE", "1").strip() not in ("0", "false", "no", "")


def get_requires_for_build_wheel(config_settings: Any = None) -> list[str]:
    extra = [MYPY_PIN] if _compiling() else []
    return list(_orig.get_requires_for_build_wheel(config_settings)) + extra


def get_requires_for_build_editable(config_settings: Any = None) -> list[str]:
    extra = [MYPY_PIN] if _compiling() else []
    return list(_orig.get_requires_for_build_editable(config_settings)) + extra


def _require_mypyc() -> None:
    if not _compiling():
        return
    try:
        import mypyc.build  # noqa: F401
    except ImportError as exc:
        raise RuntimeError(
            "cqlcodec: a compiled build was requested but mypyc is not importable "
            f"({exc}). Install {MYPY_PIN} in the build environment, or build the "
            "pure-Python package with CQLCODEC_COMPILE=0."
        ) from exc


def build_wheel(wheel_directory: str, config_settings: Any = None,
                metadata_directory: str | None = None) -> str:
    _require_mypyc()
    return _orig.build_wheel(wheel_directory, config_settings, metadata_directory)


def build_editable(wheel_directory: str, config_settings: Any = None,
                   metadata_directory: str | None = None) -> str:
    _require_mypyc()
    return _orig.build_editable(wheel_directory, config_settings, metadata_directory)
