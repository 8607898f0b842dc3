"""The differences a diff keeps on disk between its phases: read back as they were
written, in order, in chunks, and nothing left behind."""

from __future__ import annotations

import math
import os
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from cqlcodec.driver.diff_read import Difference
from cqlcodec.driver.diff_spill import DifferenceSpill

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2 ** 70), 2 ** 70) | st.text()
    | st.floats(allow_nan=False),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                 max_size=3),
    max_leaves=8)
DIFFERENCES = st.builds(
    Difference, st.sampled_from(["missing", "extra", "differs"]),
    st.dictionaries(st.text(max_size=4), JSON_VALUES, max_size=3),
    st.dictionaries(st.text(max_size=4), st.tuples(JSON_VALUES, JSON_VALUES), max_size=3),
    st.integers(-(2 ** 63), 2 ** 63 - 1), st.booleans())


@settings(max_examples=30, deadline=None)
@given(groups=st.lists(st.lists(DIFFERENCES, max_size=6), max_size=5),
       size=st.integers(1, 7), limit=st.sampled_from([0, 4, 1000]))
def test_differences_come_back_in_order_in_chunks(groups: list[list[Difference]],
                                                 size: int, limit: int) -> None:
    with DifferenceSpill(limit=limit) as spill:
        for group in groups:
            spill.add(group)
        chunks = list(spill.chunks(size))
    written = [d for group in groups for d in group]
    assert spill.on_disk == (len(written) > limit)
    assert [d for chunk in chunks for d in chunk] == written
    assert spill.count == len(written)
    assert all(len(c) >= size for c in chunks[:-1]) and all(chunks)
    # a chunk grows past the size only to keep a token's differences together
    assert all(len(c) <= size or c[size - 1].token == c[size].token for c in chunks)
    ends = [(a[-1].token, b[0].token) for a, b in zip(chunks, chunks[1:])]
    assert all(x != y for x, y in ends)


def test_a_few_differences_stay_in_memory(tmp_path: Path) -> None:
    d = [Difference("extra", {"k": i}, {}, i) for i in range(3)]
    with DifferenceSpill(tmp_path, limit=3) as spill:
        spill.add(d)
        assert (spill.on_disk, list(spill.chunks())) == (False, [d])
        spill.add([Difference("extra", {"k": 3}, {}, 3)])  # past the limit: all to the file
        assert (spill.on_disk, [x for c in spill.chunks(10) for x in c][:3]) == (True, d)


def test_a_read_left_part_way_does_not_lose_what_is_added_after(tmp_path: Path) -> None:
    d = [Difference("missing", {"k": i}, {}, i) for i in range(5)]
    with DifferenceSpill(tmp_path, limit=1) as spill:
        spill.add(d[:3])
        assert spill.on_disk
        first = next(spill.chunks(2))  # two read, the third not yet
        spill.add(d[3:])
        assert first == d[:2]
        assert [x for c in spill.chunks(10) for x in c] == d
    assert os.listdir(tmp_path) == []  # an anonymous file: nothing left in the directory


def test_special_floats_and_big_integers_are_kept() -> None:
    d = Difference("differs", {"k": 2 ** 65}, {"f": (math.inf, -0.0), "g": (math.nan, 1.5)}, -7,
                   True)
    with DifferenceSpill(limit=0) as spill:
        spill.add([d])
        (back,), = list(spill.chunks())
    assert back.key == {"k": 2 ** 65} and back.token == -7 and back.partition
    assert back.columns["f"] == (math.inf, -0.0) and math.copysign(1, back.columns["f"][1]) < 0
    assert math.isnan(back.columns["g"][0]) and back.columns["g"][1] == 1.5
