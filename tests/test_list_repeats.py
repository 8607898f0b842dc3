"""How a non-frozen list written with its source write times is written again
(:func:`cqlcodec.driver.list_repeats.decide`), and protocol v3's statements of fewer
columns for rows with nulls; the server's side is in tests/integration/test_repeats.py."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cqlcodec.driver.columns import _PLAIN_INSERT
from cqlcodec.driver.list_repeats import OWN_WINDOW_US, SKIP, ListPlan, decide


def test_nothing_there_is_written_as_the_source_has_it() -> None:
    assert decide(None, [5, 5]) is None
    assert decide([], [5, 5]) is None


def test_a_whole_copy_there_is_not_written_again() -> None:
    assert decide([5, 5, 5], [5, 5, 5]) is SKIP
    assert decide([6, 6, 6], [5, 5, 5]) is SKIP  # a copy written again 1 µs later
    assert decide([9, 9], [3, 9]) is SKIP        # element runs written again whole


def test_a_doubled_or_partial_copy_is_rewritten_1_us_after_the_latest() -> None:
    assert decide([5] * 6, [5, 5, 5]) == ListPlan(times=(6, 6, 6), delete_at=5)
    assert decide([3], [3, 9]) == ListPlan(times=(10, 10), delete_at=9)
    assert decide([6] * 4, [5, 5]) == ListPlan(times=(7, 7), delete_at=6)


def test_older_elements_are_deleted_below_the_source() -> None:
    assert decide([1, 2], [5, 7]) == ListPlan(delete_at=4)


def test_a_newer_write_in_the_target_wins() -> None:
    assert decide([5 + OWN_WINDOW_US + 1], [5, 5]) is SKIP


@given(st.lists(st.integers(0, 10**6), min_size=1, max_size=8), st.integers(1, 4))
def test_writing_again_converges_in_one_rewrite(source: list[int], copies: int) -> None:
    """Whatever number of earlier whole copies landed, one rewrite leaves a state that
    the next repeat leaves alone, at most 1 µs after the latest source time."""
    there = source * copies
    plan = decide(there, source)
    if copies == 1:
        assert plan is SKIP
        return
    assert plan is not None and plan.times is not None and plan.delete_at is not None
    assert plan.delete_at >= max(there) and min(plan.times) > plan.delete_at
    assert plan.times == (max(source) + 1,) * len(source)
    assert decide(list(plan.times), source) is SKIP


@pytest.mark.parametrize(("text", "table", "rest"), [
    ("INSERT INTO ks.t (a, b) VALUES (?, ?)", "ks.t", ""),
    ('insert into "Ks"."T t" ("a,b", c) values (?,?) USING TTL 5;', '"Ks"."T t"', " USING TTL 5"),
    ("INSERT INTO t (a) VALUES (?) IF NOT EXISTS", "t", " IF NOT EXISTS"),
])
def test_plain_inserts_are_recognised(text: str, table: str, rest: str) -> None:
    match = _PLAIN_INSERT.match(text)
    assert match is not None
    assert (match.group("table"), match.group("rest")) == (table, rest)


@pytest.mark.parametrize("text", ["UPDATE t SET a = ? WHERE k = ?",
                                  "INSERT INTO t (a, b) VALUES (?, 3)",
                                  "INSERT INTO t JSON ?"])
def test_other_statements_are_not_taken_for_plain_inserts(text: str) -> None:
    match = _PLAIN_INSERT.match(text)
    assert match is None or match.group("markers").replace(" ", "").split(",") != ["?", "?"]
