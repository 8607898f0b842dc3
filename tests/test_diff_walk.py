"""The merge walk and the cell rules of ``diff`` without a server: random source and
target tables (partitions sharing tokens, static cells, static-only partitions, pages
of any size) walked side by side give exactly the differences that set arithmetic on
the two tables gives; and the comparison rules of :mod:`cqlcodec.driver.diff_values`."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pytest
from hotwire import rows_body
from hypothesis import given, settings
from hypothesis import strategies as st

import cqlcodec
from cqlcodec import parse_type
from cqlcodec.cli.connect import target_args
from cqlcodec.cli.main import build_parser, main
from cqlcodec.columnar.batch import ColumnBatch
from cqlcodec.driver.diff_values import DiffLayout, Side, frozen_value, rule_of, same_cell, same_times
from cqlcodec.driver.diff_walk import SplitWalk

TYPES = {"token": "bigint", "k": "int", "c": "int", "s": "text", "v": "int"}
NAMES = list(TYPES)
Partition = tuple[str | None, dict[int, int]]  # static cell, rows (c -> v)


def pages(table: dict[int, Partition], sizes: Sequence[int]) -> list[ColumnBatch]:
    """The table's rows in the server's order (token, then key, then c) as pages of the
    given sizes (cycled); the token of partition k is k // 3, so partitions share tokens."""
    rows: list[list[Any]] = []
    for k in sorted(table, key=lambda k: (k // 3, k)):
        static, cells = table[k]
        if not cells and static is not None:
            rows.append([k // 3, k, None, static, None])
        for c in sorted(cells):
            rows.append([k // 3, k, c, static, cells[c]])
    cols = [("ks", "t", n, parse_type(t)) for n, t in TYPES.items()]
    found: list[ColumnBatch] = []
    at = 0
    for size in [*sizes, *([1] * len(rows))]:
        chunk = rows[at:at + size]
        body = rows_body(cols, [[None if v is None else parse_type(TYPES[n]).serialize(v)
                                 for n, v in zip(NAMES, row)] for row in chunk])
        found.append(cqlcodec.decode_columns(body, 4))
        at += size
        if at >= len(rows):
            break
    return found


def layout() -> DiffLayout:
    types = [parse_type(t) for t in TYPES.values()]
    return DiffLayout(["k"], ["c"], ["s"], ["v"], Side(NAMES, types), Side(NAMES, types),
                      False, False)


def expected(a: dict[int, Partition], b: dict[int, Partition]) -> list[tuple[str, tuple[int, ...], tuple[str, ...]]]:
    found: list[tuple[str, tuple[int, ...], tuple[str, ...]]] = []
    for k in set(a) | set(b):
        sa, ra = a.get(k, (None, {}))
        sb, rb = b.get(k, (None, {}))
        in_a, in_b = k in a and (bool(ra) or sa is not None), k in b and (bool(rb) or sb is not None)
        if in_a and in_b and sa != sb:
            found.append(("differs", (k,), ("s",)))
        if in_a and not in_b and not ra:
            found.append(("missing", (k,), ()))
        if in_b and not in_a and not rb:
            found.append(("extra", (k,), ()))
        for c in set(ra) | set(rb):
            if c not in rb:
                found.append(("missing", (k, c), ()))
            elif c not in ra:
                found.append(("extra", (k, c), ()))
            elif ra[c] != rb[c]:
                found.append(("differs", (k, c), ("v",)))
    return sorted(found)


partitions = st.dictionaries(
    st.integers(0, 12),
    st.tuples(st.one_of(st.none(), st.sampled_from(["x", "y"])),
              st.dictionaries(st.integers(0, 3), st.integers(0, 2), max_size=4)),
    max_size=10)


@settings(max_examples=150, deadline=None)
@given(partitions, partitions, st.lists(st.integers(1, 4), min_size=1, max_size=6),
       st.lists(st.integers(1, 4), min_size=1, max_size=6))
def test_the_walk_finds_what_set_arithmetic_finds(a: dict[int, Partition],
                                                  b: dict[int, Partition],
                                                  sizes_a: list[int], sizes_b: list[int]) -> None:
    walk = SplitWalk(layout(), pages(a, sizes_a), pages(b, sizes_b))
    got = sorted((f.kind, tuple(f.key.values()), tuple(sorted(f.columns))) for f in walk)
    assert got == expected(a, b)
    rows_a = sum(len(r) or (s is not None) for s, r in a.values())
    assert walk.source_rows == rows_a


def test_a_table_equal_to_itself_leaves_nothing_waiting() -> None:
    table: dict[int, Partition] = {k: ("x", {c: c for c in range(3)}) for k in range(12)}
    walk = SplitWalk(layout(), pages(table, [2]), pages(table, [5]))
    assert list(walk) == []
    assert walk.source_rows == walk.target_rows == 36


def test_cell_rules() -> None:
    floats = rule_of("f", parse_type("double"))
    assert same_cell(1.0, 1.0 + 1e-12, floats, 1e-9)
    assert not same_cell(1.0, 1.0 + 1e-12, floats, 0.0)
    assert same_cell(math.nan, math.nan, floats, 0.0)
    assert not same_cell(None, 0.0, floats, 1.0)
    vector = rule_of("v", parse_type("vector<float, 2>"))
    assert same_cell([1.0, 2.0], [1.0, 2.05], vector, 0.1)
    assert not same_cell([1.0, 2.0], [1.0, 2.5], vector, 0.1)
    for t in ("list<int>", "frozen<set<text>>", "map<text, int>"):
        rule = rule_of("c", parse_type(t))
        empty: Any = {} if t.startswith("map") else []
        assert same_cell(None, empty, rule, 0.0) and same_cell(empty, None, rule, 0.0)
    assert not same_cell(None, [1], rule_of("l", parse_type("list<int>")), 0.0)
    tuples = rule_of("t", parse_type("tuple<int, boolean>"))
    assert not same_cell((1, True), (1, False), tuples, 0.0)
    assert same_times([1, 2], [1, 2], None) and not same_times([1, 2], [1, 3], None)
    assert same_times(100, 90, 10.0) and not same_times(100, 89, 10.0)
    assert not same_times(None, 5, 100.0) and same_times(None, None, 0.0)
    assert frozen_value(math.nan) == frozen_value(float("nan"))
    assert frozen_value({"a": [1]}) != frozen_value({"a": [2]})
    assert hash(frozen_value({"a": {1, 2}}))


def test_target_options_default_to_the_source() -> None:
    parser = build_parser()
    args = parser.parse_args(["diff", "a.t", "b.t", "--host", "h1", "--port", "9000",
                              "--username", "u", "--to-port", "9100", "--to-ssl"])
    target = target_args(args)
    assert target is not None
    assert (target.host, target.port, target.username, target.ssl) == (["h1"], 9100, "u", True)
    assert (args.port, args.ssl) == (9000, False)
    assert target_args(parser.parse_args(["diff", "a.t", "b.t"])) is None


def test_resume_needs_a_state_directory(capsys: Any) -> None:
    assert main(["diff", "a.t", "b.t", "--resume"]) == 2
    assert "--state" in capsys.readouterr().err
    # options that cannot go together are refused before connecting
    assert main(["diff", "a.t", "b.t", "--where", "v > 1", "--delete-extra"]) == 2
    err = capsys.readouterr().err
    assert "--delete-extra cannot go with --where" in err, err
    assert main(["diff", "a.t", "b.t", "--fix-counters"]) == 2
    assert "give --fix" in capsys.readouterr().err
    with pytest.raises(SystemExit) as refused:
        main(["diff", "a.t", "b.t", "--rate", "0"])
    assert refused.value.code == 2
    with pytest.raises(SystemExit) as refused:
        main(["diff", "a.t", "b.t", "--to-password", "S3cret"])
    assert refused.value.code == 2 and "S3cret" not in capsys.readouterr().err
