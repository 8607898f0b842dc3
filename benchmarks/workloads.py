"""The benchmark workloads, from ``cqlcodec/bench_workloads.py``.

That module is plain standard library and ships in the package so that
``python -m cqlcodec bench`` measures the same inputs. The benchmark workers for the
drivers run in environments without cqlcodec, so it is loaded here by file path
rather than imported through the package.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cqlcodec.bench_workloads import *  # noqa: F403
else:
    _NAME = "cqlcodec_bench_workloads"
    _PATH = Path(__file__).resolve().parent.parent / "cqlcodec" / "bench_workloads.py"
    _spec = importlib.util.spec_from_file_location(_NAME, _PATH)
    _module = importlib.util.module_from_spec(_spec)
    sys.modules[_NAME] = _module
    _spec.loader.exec_module(_module)
    globals().update({k: v for k, v in vars(_module).items() if not k.startswith("__")})
