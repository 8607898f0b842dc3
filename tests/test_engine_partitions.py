"""How the Dask and Ray sources group splits into partitions, without a server: the
fallback to the splits themselves where the server has no size estimate."""

from __future__ import annotations

import logging

import pytest

pytest.importorskip("cassandra")

from cqlcodec.driver.partitions import (  # noqa: E402
    estimates_usable,
    even_groups,
    fallback_split_count,
)
from cqlcodec.driver.splits import MAX_TOKEN, MIN_TOKEN, TokenSplit  # noqa: E402


def _ring(n: int, rows: int) -> list[TokenSplit]:
    step = (MAX_TOKEN - MIN_TOKEN) // n
    ends = [MIN_TOKEN + step * (i + 1) for i in range(n - 1)] + [MAX_TOKEN]
    starts = [MIN_TOKEN, *ends[:-1]]
    return [TokenSplit(s, e, ("127.0.0.1",), rows, rows * 10) for s, e in zip(starts, ends)]


def test_zero_estimates_are_not_usable_and_the_decision_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="cqlcodec.driver"):
        assert not estimates_usable(_ring(6, 0), "ks.fresh", "cqlcodec.dask")
    assert "no size estimates for ks.fresh" in caplog.text and "6 partitions" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="cqlcodec.driver"):
        assert estimates_usable(_ring(6, 1), "ks.t", "cqlcodec.dask")
    assert caplog.text == ""


def test_at_least_two_splits_per_worker() -> None:
    assert fallback_split_count(16, 2) == 16
    assert fallback_split_count(16, 20) == 40
    assert fallback_split_count(16, 0) == 16


@pytest.mark.parametrize("splits, count", [(10, 4), (10, 10), (10, 64), (3, 1), (1, 5)])
def test_even_groups_are_contiguous_runs_covering_every_split_once(splits: int, count: int) -> None:
    ring = _ring(splits, 0)
    groups = even_groups(ring, count)
    assert len(groups) == max(1, min(count, splits))
    assert [s for g in groups for s in g] == ring
    sizes = [len(g) for g in groups]
    assert max(sizes) - min(sizes) <= 1
