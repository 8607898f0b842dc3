"""Test configuration shared by every test module.

The suite runs against an installed cqlcodec. ``CQLCODEC_EXPECT`` (set by the
nox sessions) names the build that must be active; every test fails if it is not.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

import cqlcodec

# CI runs every property in six unit sessions (4 Pythons x compiled, 2 x interpreted), each
# with its own random seed: 6 x 60 = 360 examples per property per run (the `fuzz` session
# runs the hostile-input properties with the `long` profile)
settings.register_profile("ci", max_examples=60, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=60, deadline=None)
settings.register_profile("long", max_examples=3000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

BUILD = "compiled" if cqlcodec.COMPILED else "pure"


def pytest_report_header(config: pytest.Config) -> list[str]:
    location = os.path.dirname(cqlcodec.__file__ or "?")
    return [f"cqlcodec {cqlcodec.__version__}: build={BUILD} COMPILED={cqlcodec.COMPILED} ({location})"]


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("compiled_only") and not cqlcodec.COMPILED:
        pytest.skip("needs the compiled build")
    if item.get_closest_marker("interpreted_only") and cqlcodec.COMPILED:
        pytest.skip("needs the interpreted build")


@pytest.fixture(autouse=True, scope="session")
def _expected_build() -> None:
    expected = os.environ.get("CQLCODEC_EXPECT")
    if expected and expected != BUILD:
        pytest.fail(f"CQLCODEC_EXPECT={expected} but the {BUILD} build of cqlcodec is active "
                    f"({cqlcodec.__file__})", pytrace=False)
