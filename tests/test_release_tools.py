"""The checks tools/wheels.py (``nox -s wheels``) relies on flag what they must.

Skipped where the tools folder is not next to the tests (cibuildwheel copies
only the tests and the leak tool).
"""

from __future__ import annotations

import warnings
import zipfile
from pathlib import Path
from types import ModuleType

import pytest
from tool_scripts import load_tool_script


@pytest.fixture(scope="module")
def wheels() -> ModuleType:
    return load_tool_script("wheels.py", "release_wheels")


@pytest.mark.parametrize("name", ["cc", "gcc", "gcc-12", "c++", "g++-12", "cpp", "clang", "clang-15",
                                  "x86_64-linux-gnu-gcc-12", "x86_64-linux-gnu-ld.gold", "ld",
                                  "ld.bfd", "as", "zig", "tcc"])
def test_compilers_and_linkers_are_kept_off_the_test_path(wheels: ModuleType, name: str) -> None:
    assert wheels.COMPILER.match(name)


@pytest.mark.parametrize("name", ["python3", "pip", "pytest", "bash", "gcc-ar-12", "c++filt",
                                  "objdump", "ccache-swig", "tar"])
def test_ordinary_programs_stay_on_the_test_path(wheels: ModuleType, name: str) -> None:
    assert not wheels.COMPILER.match(name)


GOOD = ["cqlcodec/__init__.py", "cqlcodec/py.typed", "cqlcodec-0.1.0.dist-info/licenses/LICENSE",
        "cqlcodec-0.1.0.dist-info/METADATA"]
SO = "cqlcodec/_wire.cpython-311-x86_64-linux-gnu.so"


def _problems(wheels: ModuleType, tmp_path: Path, kind: str, names: list[str]) -> list[str]:
    path = tmp_path / f"cqlcodec-0.1.0-{kind}.whl"
    with zipfile.ZipFile(path, "w") as zf, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns about the deliberate duplicate
        for name in names:
            zf.writestr(name, b"x")
    art = wheels.Artefact(path, kind)
    wheels.check_contents(art)
    assert art.ok == (not art.notes)
    return list(art.notes)


def test_clean_wheels_pass(wheels: ModuleType, tmp_path: Path) -> None:
    assert _problems(wheels, tmp_path, "pure", GOOD) == []
    assert _problems(wheels, tmp_path, "compiled", [*GOOD, SO]) == []


@pytest.mark.parametrize("kind,names,expected", [
    ("compiled", [*GOOD, SO, "cqlcodec/_wire.py", "cqlcodec/_wire.py"], "duplicate entries"),
    ("compiled", [*GOOD, SO, "cqlcodec/_wire.c"], "C sources or objects"),
    ("pure", [n for n in GOOD if "LICENSE" not in n], "no LICENSE"),
    ("pure", [n for n in GOOD if "py.typed" not in n], "no py.typed"),
    ("compiled", GOOD, "0 extension modules in a compiled wheel"),
    ("pure", [*GOOD, SO], "1 extension modules in a pure wheel"),
])
def test_bad_wheels_are_flagged(wheels: ModuleType, tmp_path: Path, kind: str, names: list[str],
                                expected: str) -> None:
    problems = _problems(wheels, tmp_path, kind, names)
    assert len(problems) == 1 and expected in problems[0], problems
