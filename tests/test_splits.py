"""Token splits without a server: the range checks, the coverage proof, table names."""

from __future__ import annotations

import pickle

import pytest

pytest.importorskip("cassandra")

from cqlcodec.driver.splits import (  # noqa: E402
    MAX_TOKEN,
    MIN_TOKEN,
    SplitPlanError,
    TokenSplit,
    _split_name,
    check_coverage,
)


def test_a_split_is_a_nonempty_range_inside_the_ring() -> None:
    split = TokenSplit(MIN_TOKEN, 0, ("127.0.0.1",), 10, 100)
    assert split.width == 2**63 and str(split) == f"token range ({MIN_TOKEN}, 0]"
    assert pickle.loads(pickle.dumps(split)) == split and hash(split) == hash(TokenSplit(
        MIN_TOKEN, 0, ("127.0.0.1",), 10, 100))
    for start, end in [(0, 0), (5, 4), (MIN_TOKEN - 1, 0), (0, MAX_TOKEN + 1)]:
        with pytest.raises(SplitPlanError, match="start < end"):
            TokenSplit(start, end)


def test_coverage_is_proved() -> None:
    whole = [TokenSplit(MIN_TOKEN, -5), TokenSplit(-5, 7), TokenSplit(7, MAX_TOKEN)]
    check_coverage(whole)
    check_coverage(list(reversed(whole)))  # order does not matter
    with pytest.raises(SplitPlanError, match=r"gap in the splits: \(-5, -4\]"):
        check_coverage([TokenSplit(MIN_TOKEN, -5), TokenSplit(-4, MAX_TOKEN)])
    with pytest.raises(SplitPlanError, match="overlap in the splits"):
        check_coverage([TokenSplit(MIN_TOKEN, 5), TokenSplit(4, MAX_TOKEN)])
    with pytest.raises(SplitPlanError, match=f"gap in the splits: \\({MIN_TOKEN}, -5\\]"):
        check_coverage(whole[1:])
    with pytest.raises(SplitPlanError, match=f"gap in the splits: \\(7, {MAX_TOKEN}\\]"):
        check_coverage(whole[:2])
    with pytest.raises(SplitPlanError, match="no splits"):
        check_coverage([])
    check_coverage(whole[1:2], whole_ring=False)  # a part of the ring: only overlaps count
    with pytest.raises(SplitPlanError, match="overlap"):
        check_coverage([TokenSplit(0, 5), TokenSplit(3, 9)], whole_ring=False)


def test_table_names() -> None:
    assert _split_name("ks.t", None) == ("ks", "t")
    assert _split_name("KS.Tab", None) == ("ks", "tab")
    assert _split_name('"MyKs"."My ""T"""', None) == ("MyKs", 'My "T"')
    assert _split_name(" t ", "session_ks") == ("session_ks", "t")
    for bad in ["t", "a.b.c", "ks.", ".t", '"ks.t', ""]:
        with pytest.raises(SplitPlanError):
            _split_name(bad, None)
