"""The density profile behind split sizes: system.size_estimates rows -> cut points."""

from __future__ import annotations

import pytest

from cqlcodec.driver.estimates import RING_MAX, RING_MIN, DensityProfile, SizeEstimate

RING = RING_MAX - RING_MIN


def shares(profile: DensityProfile, cuts: list[int]) -> list[float]:
    bounds = [RING_MIN, *cuts, RING_MAX]
    return [profile.rows(lo, hi) for lo, hi in zip(bounds, bounds[1:])]


def test_without_estimates_the_ring_is_cut_evenly() -> None:
    profile = DensityProfile([])
    assert not profile.has_estimates and profile.rows(RING_MIN, RING_MAX) == 0
    assert profile.cuts(4) == [RING_MIN + RING * k // 4 for k in (1, 2, 3)]
    assert profile.cuts(1) == []
    zero = DensityProfile([SizeEstimate(RING_MIN, 0, 0, 100), SizeEstimate(0, RING_MAX, 0, 100)])
    assert not zero.has_estimates and zero.cuts(2) == [RING_MIN + RING // 2]


def test_an_even_table_is_cut_evenly_and_its_totals_kept() -> None:
    profile = DensityProfile([SizeEstimate(RING_MIN, 0, 500, 40), SizeEstimate(0, RING_MAX, 500, 40)])
    assert profile.rows(RING_MIN, RING_MAX) == pytest.approx(1000)
    assert profile.bytes(RING_MIN, RING_MAX) == pytest.approx(40_000)
    assert shares(profile, profile.cuts(8)) == pytest.approx([125] * 8, rel=1e-6)


def test_a_hot_range_gets_the_cuts() -> None:
    # 9/10 of the partitions in the first eighth of the ring
    eighth = RING_MIN + RING // 8
    profile = DensityProfile([SizeEstimate(RING_MIN, eighth, 9000, 10),
                              SizeEstimate(eighth, RING_MAX, 1000, 10)])
    cuts = profile.cuts(10)
    assert len(cuts) == 9 and cuts == sorted(cuts)
    assert sum(1 for c in cuts if c < eighth) >= 7
    parts = shares(profile, cuts)
    assert sum(parts) == pytest.approx(10_000)
    assert max(parts) < 2.5 * min(parts)  # equal-ish, bounded by the stale floor


def test_the_wrapping_range_and_other_nodes_ranges() -> None:
    # one node's view: its range wraps around the ring; the rest of the ring is unknown
    start, end = RING_MAX - RING // 4, RING_MIN + RING // 4
    profile = DensityProfile([SizeEstimate(start, end, 2000, 8)])
    assert profile.has_estimates
    assert profile.rows(start, RING_MAX) + profile.rows(RING_MIN, end) == pytest.approx(2000)
    # the unknown half gets the mean density of the known half
    assert profile.rows(RING_MIN, RING_MAX) == pytest.approx(4000)
    assert profile.mean_bytes == pytest.approx(8)


def test_overlapping_rows_count_once() -> None:
    a = SizeEstimate(RING_MIN, 0, 100, 1)
    profile = DensityProfile([a, a, SizeEstimate(-10, RING_MAX, 100, 1)])
    assert profile.rows(RING_MIN, RING_MAX) == pytest.approx(200, rel=1e-6)


def test_cuts_stay_inside_the_ring_and_distinct() -> None:
    tiny = DensityProfile([SizeEstimate(0, 10, 10**6, 1)])  # everything in ten tokens
    cuts = tiny.cuts(1000)
    assert cuts == sorted(set(cuts)) and all(RING_MIN < c < RING_MAX for c in cuts)
