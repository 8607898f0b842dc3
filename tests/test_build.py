"""The build itself: which implementation is active, version, packaging facts."""

from __future__ import annotations

import ast
import importlib
import os
import pathlib
import re

import pytest

import cqlcodec

CORE_MODULES = ["cqlcodec.codecs.base", "cqlcodec.types.model", "cqlcodec.runtime.wire", "cqlcodec.codecs.builder"]


def test_version_is_pep440() -> None:
    assert re.fullmatch(r"\d+\.\d+\.\d+([ab]\d+|rc\d+|\.dev\d+)?", cqlcodec.__version__)


def test_compiled_flag_matches_loaded_modules() -> None:
    suffixes = {pathlib.Path(importlib.import_module(m).__file__ or "").suffix for m in CORE_MODULES}
    if cqlcodec.COMPILED:
        assert suffixes <= {".so", ".pyd"}, suffixes
    else:
        assert suffixes == {".py"}, suffixes


@pytest.mark.compiled_only
def test_compiled_build_loads_extension_modules() -> None:
    for name in CORE_MODULES:
        module = importlib.import_module(name)
        assert (module.__file__ or "").endswith((".so", ".pyd")), module.__file__
    # compiled functions are builtins, not Python functions
    from cqlcodec.runtime import wire as _wire

    assert type(_wire.check_protocol_version).__name__ == "builtin_function_or_method"


@pytest.mark.compiled_only
def test_group_library_stays_inside_the_package() -> None:
    package_dir = pathlib.Path(cqlcodec.__file__ or "").parent
    assert list(package_dir.glob("_native__mypyc*")), "the mypyc group library is missing"
    site = package_dir.parent
    strays = [p.name for p in site.glob("*__mypyc*") if p.is_file()]
    assert not strays, f"stray top-level mypyc libraries: {strays}"


@pytest.mark.interpreted_only
def test_interpreted_build_has_no_extensions() -> None:
    package_dir = pathlib.Path(cqlcodec.__file__ or "").parent
    assert not list(package_dir.rglob("*.so")) and not list(package_dir.rglob("*.pyd"))


def test_expected_build_env_is_honoured() -> None:
    expected = os.environ.get("CQLCODEC_EXPECT")
    if expected is None:
        pytest.skip("CQLCODEC_EXPECT not set (not run by nox)")
    assert expected == ("compiled" if cqlcodec.COMPILED else "pure")


def test_sources_ship_with_py_typed() -> None:
    package_dir = pathlib.Path(cqlcodec.__file__ or "").parent
    assert (package_dir / "py.typed").is_file()
    assert (package_dir / "types" / "model.py").is_file()


def _source_docstrings(module_name: str) -> dict[str, str]:
    """Docstrings of the top-level defs and classes in a module's shipped .py source."""
    package_dir = pathlib.Path(cqlcodec.__file__ or "").parent
    source = package_dir.joinpath(*module_name.split(".")[1:]).with_suffix(".py")
    tree = ast.parse(source.read_text(encoding="utf-8"))
    return {
        node.name: ast.get_docstring(node) or ""
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.ClassDef))
    }


def test_every_public_name_is_exported_and_documented() -> None:
    # mypyc drops __doc__ of compiled functions and classes, so read the shipped
    # sources, which are the same in both builds.
    for name in cqlcodec.__all__:
        assert hasattr(cqlcodec, name), name
        obj = getattr(cqlcodec, name)
        module_name = getattr(obj, "__module__", None)
        if not callable(obj) or name.startswith("__") or not module_name:
            continue
        if not module_name.startswith("cqlcodec"):
            continue
        docs = _source_docstrings(module_name)
        defined_as = getattr(obj, "__name__", name)
        assert docs.get(defined_as, "").strip(), f"{name} ({module_name}) has no docstring"


def test_errors_share_one_base() -> None:
    for name in cqlcodec.__all__:
        obj = getattr(cqlcodec, name)
        if isinstance(obj, type) and issubclass(obj, BaseException):
            assert issubclass(obj, cqlcodec.CodecError), name
