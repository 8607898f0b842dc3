"""pytest-benchmark glue: which implementations this interpreter has, and one test body.

Run: ``pytest benchmarks --benchmark-timer=time.thread_time --benchmark-disable-gc``
(add ``--benchmark-group-by=group`` for one table per case). The tests cover the
implementations importable here: the installed cqlcodec build, the floors and, if a
driver is installed, its Cython and pure-Python paths. ``nox -s bench`` is the
side-by-side run of all of them in separate environments.
"""

from __future__ import annotations

import importlib
from functools import lru_cache
from typing import Any

import harness as h
import pytest


@lru_cache(maxsize=None)
def available_impls() -> tuple[str, ...]:
    """The implementations this interpreter can run."""
    impls: list[str] = []
    try:
        cq: Any = importlib.import_module("cqlcodec")
    except ImportError:
        pass
    else:
        impls.append(h.IMPL_CQLCODEC if cq.COMPILED else h.IMPL_CQLCODEC_PURE)
    try:
        importlib.import_module("cassandra.protocol")
    except ImportError:
        pass
    else:
        try:
            importlib.import_module("cassandra.protocol_features")
            impls.append(h.IMPL_SCYLLA)
        except ImportError:
            impls += [h.IMPL_CASSANDRA, h.IMPL_CASSANDRA_PY]
    try:
        importlib.import_module("numpy")
        impls.append(h.IMPL_FLOOR)
    except ImportError:
        pass
    return tuple(impls)


@lru_cache(maxsize=None)
def adapter(impl: str) -> h.Adapter:
    """The (cached) adapter of ``impl``."""
    import worker

    return worker.make_adapter(impl)


def params(*groups: str) -> list[Any]:
    """pytest params (case id, impl) for the cases of ``groups``."""
    return [pytest.param(c.id, impl, id=f"{c.id}-{impl}")
            for c in h.CASES if c.group in groups for impl in available_impls()]


def run(benchmark: Any, case_id: str, impl: str) -> None:
    """Build (and check) the bench, then let pytest-benchmark time it."""
    try:
        ad = adapter(impl)
    except RuntimeError as exc:  # e.g. a driver without its Cython extensions
        pytest.skip(str(exc))
    try:
        bench = ad.build(h.CASES_BY_ID[case_id])
    except h.Unsupported as exc:
        pytest.skip(f"{impl}: {exc}")
    except h.PeerFails as exc:  # the implementation's own failure, reported, never timed
        pytest.xfail(f"{impl}: {exc}")
    benchmark.group = case_id
    benchmark.extra_info["impl"] = impl
    benchmark.extra_info["path"] = bench.note
    benchmark(h.function_of(bench))
