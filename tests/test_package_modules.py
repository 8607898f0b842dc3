"""Every module the installed package ships imports, subpackages included, in both builds.

This guards the build configuration rather than the codec: a subpackage left out
of the wheel, or a compiled package ``__init__`` whose ``__path__`` points
elsewhere, leaves modules on disk that cannot be imported. The module list comes
from the files, not from ``pkgutil`` (which walks ``__path__`` and would miss them).
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import re
from pathlib import Path

import pytest

import cqlcodec

PACKAGE_DIR = Path(cqlcodec.__file__ or "").resolve().parent
MODULE_SUFFIXES = (".py", *importlib.machinery.EXTENSION_SUFFIXES)


def modules_on_disk() -> dict[str, Path]:
    """Dotted module name -> the directory it lives in, for every shipped module file."""
    found: dict[str, Path] = {}
    for path in PACKAGE_DIR.rglob("*"):
        rel = path.relative_to(PACKAGE_DIR)
        if "__pycache__" in rel.parts or not path.name.endswith(MODULE_SUFFIXES):
            continue
        stem = path.name.split(".", 1)[0]
        if stem.endswith("__mypyc"):  # the group library, loaded by the modules themselves
            continue
        parts = ["cqlcodec", *rel.parts[:-1], *([] if stem == "__init__" else [stem])]
        found[".".join(parts)] = path.parent
    return found


def test_the_package_ships_its_core_modules() -> None:
    names = modules_on_disk()
    assert {"cqlcodec", "cqlcodec.errors", "cqlcodec.driver", "cqlcodec.__main__"} <= set(names)


# modules of optional extras: without the extra, importing them says which extra to install
EXTRA_MODULES = {"cqlcodec.dask": ("dask", "cqlcodec[dask]"), "cqlcodec.ray": ("ray", "cqlcodec[ray]")}


def test_every_shipped_module_imports() -> None:
    for name in sorted(modules_on_disk()):
        if name in EXTRA_MODULES and importlib.util.find_spec(EXTRA_MODULES[name][0]) is None:
            with pytest.raises(ImportError, match=re.escape(EXTRA_MODULES[name][1])):
                importlib.import_module(name)
            continue
        module = importlib.import_module(name)
        assert module.__name__ == name


def test_every_package_searches_its_own_directory() -> None:
    for name, directory in sorted(modules_on_disk().items()):
        if name in EXTRA_MODULES:
            continue
        module = importlib.import_module(name)
        if hasattr(module, "__path__"):
            search = [Path(entry).resolve() for entry in module.__path__]
            assert directory in search, f"{name}.__path__ = {module.__path__}"


def test_every_directory_with_modules_is_a_regular_package() -> None:
    # setuptools ships only directories with an __init__.py (namespaces = false)
    for name, directory in modules_on_disk().items():
        assert (directory / "__init__.py").is_file(), f"{name}: {directory} has no __init__.py"
