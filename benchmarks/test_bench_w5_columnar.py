"""pytest-benchmark: workload group(s) W5 columnar (benchmarks/workloads.py) on every implementation here."""

from __future__ import annotations

from typing import Any

import benchsupport
import pytest


@pytest.mark.parametrize(("case_id", "impl"), benchsupport.params("W5col"))
def test_bench(benchmark: Any, case_id: str, impl: str) -> None:
    benchsupport.run(benchmark, case_id, impl)
