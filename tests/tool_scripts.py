"""Load a script of the repository's tools/ folder as a module, for the tests of that script."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

TOOLS = Path(__file__).resolve().parent.parent / "tools"


def load_tool_script(file_name: str, module_name: str) -> ModuleType:
    """``tools/<file_name>`` imported as ``module_name``; the test skips where it is absent.

    The tools folder is not next to the tests where cibuildwheel copies only the tests.
    """
    script = TOOLS / file_name
    if not script.is_file():
        pytest.skip(f"tools/{file_name} is not next to the tests")
    spec = importlib.util.spec_from_file_location(module_name, script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module
