"""tools/driver_suite_compare.py flags what the driver's-suite comparison must flag.

The comparison decides whether cqlcodec's connection class passes the driver's own tests
exactly as the driver's class does: a regression, a missing run, or a run that ran no test
must each make it exit non-zero. Skipped where the tools folder is not next to the tests.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest
from tool_scripts import load_tool_script


@pytest.fixture(scope="module")
def comparison() -> ModuleType:
    return load_tool_script("driver_suite_compare.py", "driver_suite_compare")


def _junit(path: Path, cases: dict[str, str]) -> None:
    """A pytest junit file with one test case per name, of the outcome given."""
    body = {"passed": "", "failed": "<failure message='x'/>", "error": "<error message='x'/>",
            "skipped": "<skipped message='x'/>"}
    lines = [f"<testcase classname='t.C' name='{name}'>{body[outcome]}</testcase>"
             for name, outcome in cases.items()]
    path.write_text("<testsuites><testsuite name='pytest'>" + "".join(lines)
                    + "</testsuite></testsuites>")


def test_same_outcomes_are_no_regression(comparison: ModuleType, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    cases = {"a": "passed", "b": "failed", "c": "skipped", "d": "error"}
    for protocol in ("v4", "v5"):
        _junit(tmp_path / f"{protocol}-driver.xml", cases)
        _junit(tmp_path / f"{protocol}-cqlcodec.xml", cases)
    assert comparison.compare(tmp_path) == 0
    assert "protocol v5: cqlcodec's class: 1 passed, 2 failed, 1 skipped" in capsys.readouterr().out


def test_a_test_passing_only_with_the_driver_class_is_a_regression(
        comparison: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _junit(tmp_path / "v5-driver.xml", {"a": "passed", "b": "failed", "c": "passed"})
    _junit(tmp_path / "v5-cqlcodec.xml", {"a": "failed", "b": "passed"})
    assert comparison.compare(tmp_path) == 2  # "a" failed and "c" is absent
    out = capsys.readouterr().out
    assert "t.C::a: passed with the driver's class, failed with cqlcodec's" in out
    assert "t.C::c: passed with the driver's class, absent with cqlcodec's" in out
    assert "t.C::b: failed with the driver's class, passed with cqlcodec's" in out


@pytest.mark.parametrize("runs", [(), ("v4-driver.xml",), ("v4-cqlcodec.xml",)])
def test_a_missing_run_is_not_a_pass(comparison: ModuleType, tmp_path: Path,
                                     runs: tuple[str, ...]) -> None:
    for name in runs:
        _junit(tmp_path / name, {"a": "passed"})
    assert comparison.compare(tmp_path) > 0


def test_a_run_without_tests_is_not_a_pass(comparison: ModuleType, tmp_path: Path) -> None:
    _junit(tmp_path / "v4-driver.xml", {})
    _junit(tmp_path / "v4-cqlcodec.xml", {})
    assert comparison.compare(tmp_path) > 0


def test_install_runs_are_compared_with_the_driver_class_too(
        comparison: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _junit(tmp_path / "v4-driver.xml", {"a": "passed", "b": "passed"})
    _junit(tmp_path / "v4-cqlcodec.xml", {"a": "passed", "b": "passed"})
    _junit(tmp_path / "v4-install.xml", {"a": "passed", "b": "failed"})
    _junit(tmp_path / "v5-driver.xml", {"a": "passed"})
    _junit(tmp_path / "v5-install.xml", {"a": "passed"})  # an install run alone is enough
    assert comparison.compare(tmp_path) == 1
    out = capsys.readouterr().out
    assert "t.C::b: passed with the driver's class, failed with install()" in out
    assert "protocol v5: install():        1 passed, 0 failed, 0 skipped" in out
