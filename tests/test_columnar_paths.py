"""decode_columns' page decoders, each against the row path on the same bodies.

Two decoders turn a page's cells into column builders: the walk
(``cqlcodec.columnar.walk.walk_rows``; compiled in the compiled build: the slot walk
of ``cqlcodec.columnar.slots``, else the checked walk) and the
interpreted build's numpy decoder (``cqlcodec.columnar.vectorised``), which finds
the row starts one of several ways (a regular layout, guessed lengths, a pattern,
an exact scan) and checks the guess against the length words. Every decoder and
every way, forced one at a time, must give the row path's values or, for a body the
row path refuses, a DecodeError; a way may decline a page (None), never get it wrong.
"""

from __future__ import annotations

import datetime
import decimal
import random
import struct
import uuid
from typing import Any, Callable, Sequence

import pytest
from fuzz import bodies as B
from fuzz.mutate import mutate
from hotwire import NOT_SET, Cell, rows_body
from hypothesis import given, settings
from hypothesis import strategies as st
from test_columnar import assert_like_rows, col, same

import cqlcodec
from cqlcodec import parse_type
from cqlcodec.columnar import walk
from cqlcodec.columnar.builders import column_pylist
from cqlcodec.protocol.results import read_rows_header

try:
    from cqlcodec.columnar import vectorised

    HAVE_NUMPY = True
except ImportError:  # no numpy: the walk only
    HAVE_NUMPY = False

WAYS = {} if not HAVE_NUMPY else {
    "regular": vectorised.REGULAR, "low byte": vectorised.LOW_BYTE,
    "whole word": vectorised.WHOLE_WORD, "pattern": vectorised.PATTERN,
    "exact": vectorised.EXACT}
DECODERS = ["walk", "slot walk", "checked walk", "numpy"] + [f"numpy {name}" for name in WAYS]


def columns_by(body: bytes, pv: int, how: str) -> list[list[Any]] | None:
    """The columns' values through one decoder (None: the decoder declines the page)."""
    end = len(body)
    head = read_rows_header(body, 4, end, pv, None, 0, None)
    if how == "walk":
        nodes, unset, _n = walk.walk_rows(body, head.rows_at, end, head.desc, False)
    elif how in ("slot walk", "checked walk"):
        nrows, pos = walk.rows_count(body, head.rows_at, end, len(head.desc.codecs))
        if how == "checked walk":
            nodes, unset, _n = walk.checked_walk(body, pos, end, nrows, head.desc, False)
        else:
            if nrows == 0:
                return None
            slotted = walk.slot_walk(body, pos, end, nrows, head.desc, False)
            if slotted is None:
                return None
            nodes, unset = slotted, [[] for _node in slotted]
    else:
        if not HAVE_NUMPY:
            return None
        ways = None if how == "numpy" else (WAYS[how.split(" ", 1)[1]],)
        done = vectorised.decode_rows(body, head.rows_at, end, head.desc, False, ways)
        if done is None:
            return None
        nodes, unset, _n = done
    return [column_pylist(node, rows, cqlcodec.UNSET) for node, rows in zip(nodes, unset)]


def check_decoders(body: bytes, pv: int) -> dict[str, bool]:
    """Every decoder gives the row path's columns, or refuses what it refuses; which
    decoders took the page."""
    assert_like_rows(body, pv)  # decode_columns itself: the same values or the same error
    if body[:4] != struct.pack(">i", 2):  # a mutated kind word
        return {}
    expected: list[list[object]] | None = None
    try:
        result: Any = cqlcodec.decode_result(body, pv)
        if isinstance(result, cqlcodec.RowsResult):
            expected = [[row[i] for row in result.rows] for i in range(len(result.columns))]
    except cqlcodec.DecodeError:
        pass
    took: dict[str, bool] = {}
    for how in DECODERS:
        try:
            got = columns_by(body, pv, how)
        except cqlcodec.DecodeError as exc:
            assert expected is None, f"{how} refused what the row path accepts: {exc}"
            took[how] = True
            continue
        took[how] = got is not None
        if got is None:  # the numpy decoder and the slot walk leave pages to the walk
            assert how not in ("walk", "checked walk")
            assert how != "numpy exact" or expected is None or not any(expected), how
            continue
        assert expected is not None, f"{how} accepted what the row path refuses"
        assert len(got) == len(expected)
        for values, want in zip(got, expected):
            assert len(values) == len(want)
            for a, b in zip(values, want):
                assert same(a, b), (how, a, b)
    return took


@given(st.integers(0, 2**32 - 1), st.sampled_from([3, 4, 5]), st.booleans())
@settings(max_examples=150, deadline=None)
def test_random_pages_every_decoder(seed: int, pv: int, mutated: bool) -> None:
    rng = random.Random(seed)
    body = B.gen_rows_body(rng, pv, max_rows=rng.choice([6, 30, 70]))
    data = mutate(body.data, body.slots, rng)[0] if mutated else body.data
    check_decoders(data, pv)


# --- pages of flat types, with nulls, empty and not-set cells, long values -----------------

def _value(t: str, rng: random.Random, long: bool) -> object:
    if t in ("int", "bigint", "smallint", "tinyint", "varint"):
        bits = {"int": 31, "bigint": 63, "smallint": 15, "tinyint": 7,
                "varint": rng.choice([7, 40, 63, 100])}[t]
        return rng.randint(-(2 ** bits), 2 ** bits - 1)
    if t in ("double", "float"):
        return struct.unpack(">f", struct.pack(">f", rng.uniform(-1e6, 1e6)))[0]
    if t == "boolean":
        return rng.random() < 0.5
    if t == "uuid":
        return uuid.UUID(int=rng.getrandbits(128))
    if t == "timeuuid":
        return uuid.uuid1(node=rng.getrandbits(48), clock_seq=rng.getrandbits(14))
    if t == "timestamp":
        return datetime.datetime(1970, 1, 1) + datetime.timedelta(milliseconds=rng.randint(0, 2**41))
    if t == "date":
        return datetime.date(1970, 1, 1) + datetime.timedelta(days=rng.randint(-10**5, 10**5))
    if t == "time":
        return cqlcodec.Time(rng.randint(0, 86400 * 10**9 - 1))
    if t in ("text", "ascii", "blob"):
        size = rng.choice([300, 1000]) if long else rng.randint(0, 24)
        chars = "ab\u00e9\u4e2d" if t == "text" else "abcxyz"
        text = "".join(rng.choice(chars) for _ in range(size))
        return text.encode() if t == "blob" else text
    if t == "decimal":
        return decimal.Decimal(rng.randint(-10**9, 10**9)).scaleb(-rng.choice([4, 4, 4, 2]))
    if t.startswith("vector<float"):
        return [float(rng.randint(-9, 9)) for _ in range(3)]
    if t.startswith("list"):
        return [rng.randint(0, 9) for _ in range(rng.randint(0, 3))]
    raise AssertionError(t)


FLAT = ["int", "bigint", "double", "float", "smallint", "tinyint", "boolean", "uuid",
        "timeuuid", "timestamp", "date", "time", "text", "ascii", "blob", "varint", "decimal",
        "vector<float, 3>", "list<int>"]


def flat_page(rng: random.Random, types: list[str], nrows: int, nulls: float,
              odd: float = 0.0, long: float = 0.0) -> bytes:
    """``nrows`` rows of ``types``: each cell null with probability ``nulls``; empty or
    not set with probability ``odd``; text, ascii and blob values of 300+ bytes with
    probability ``long``."""
    cols = [col(f"c{i}", t) for i, t in enumerate(types)]
    rows: list[list[Cell]] = []
    for _r in range(nrows):
        row: list[Cell] = []
        for t in types:
            roll = rng.random()
            if roll < nulls:
                row.append(None)
            elif roll < nulls + odd:
                row.append(b"" if rng.random() < 0.5 else NOT_SET)
            else:
                data = parse_type(t).serialize(_value(t, rng, rng.random() < long))
                assert isinstance(data, bytes)
                row.append(data)
        rows.append(row)
    return rows_body(cols, rows)


@given(st.integers(0, 2**32 - 1), st.sampled_from([3, 4]))
@settings(max_examples=120, deadline=None)
def test_flat_pages_every_decoder(seed: int, pv: int) -> None:
    rng = random.Random(seed)
    types = [rng.choice(FLAT) for _ in range(rng.randint(1, 6))]
    body = flat_page(rng, types, rng.choice([1, 9, 40, 150]), rng.choice([0, 0, 0.05, 0.5]),
                     rng.choice([0, 0, 0.05]), rng.choice([0, 0, 0.1]))
    check_decoders(body, pv)


@given(st.integers(0, 2**32 - 1))
@settings(max_examples=40, deadline=None)
def test_wide_flat_pages_every_decoder(seed: int) -> None:
    # more columns than one slot group holds: the slot walk goes group by group per row
    rng = random.Random(seed)
    types = [rng.choice(FLAT) for _ in range(rng.randint(9, 30))]
    body = flat_page(rng, types, rng.choice([1, 7, 40]), rng.choice([0, 0.1, 0.5]),
                     rng.choice([0, 0, 0.05]), rng.choice([0, 0.1]))
    check_decoders(body, 4)


def test_slot_walk_takes_flat_pages_and_leaves_not_set_cells() -> None:
    rng = random.Random(11)
    mixed = ["int", "bigint", "double", "text", "boolean"]
    for types, nulls in ((mixed, 0.0), (mixed, 0.2), (FLAT, 0.1), (FLAT * 3, 0.3)):
        took = _took(flat_page(rng, types, 60, nulls, long=0.1))
        assert took["slot walk"], (types, nulls)
    body = rows_body([col("a", "int"), col("b", "text")], [[NOT_SET, b"x"], [b"\0\0\0\1", NOT_SET]])
    took = _took(body)
    assert not took["slot walk"] and took["checked walk"]


def _took(body: bytes) -> dict[str, bool]:
    took = check_decoders(body, 4)
    assert took["walk"] and took.get("numpy", True)
    return took


@pytest.mark.skipif(not HAVE_NUMPY, reason="numpy is not installed")
def test_which_ways_take_which_pages() -> None:
    rng = random.Random(7)
    fixed = ["int", "double", "uuid", "vector<float, 3>", "boolean", "date"]
    took = _took(flat_page(rng, fixed, 50, 0))
    assert took["numpy regular"] and not took["numpy low byte"]
    took = _took(flat_page(rng, fixed, 50, 0.2))  # nulls: rows of different sizes
    assert not took["numpy regular"] and took["numpy exact"]
    assert took["numpy pattern"] == vectorised.ATOMIC_GROUPS  # the pattern needs Python 3.11+
    mixed = ["int", "bigint", "double", "text", "boolean"]
    took = _took(flat_page(rng, mixed, 50, 0))
    assert took["numpy low byte"] and took["numpy whole word"]
    assert took["numpy pattern"] == vectorised.ATOMIC_GROUPS
    took = _took(flat_page(rng, mixed, 50, 0, long=0.3))  # values of 256 bytes or more
    assert not took["numpy low byte"] and took["numpy whole word"] and not took["numpy pattern"]
    took = _took(flat_page(rng, mixed, 50, 0.2, long=0.3))
    assert not took["numpy whole word"] and took["numpy exact"]


def test_wrong_guesses_are_refused() -> None:
    # a 260-byte text: the guess from the length word's last byte (4) is wrong, and
    # the text is made of bytes that look like rows of the guessed layout
    fake_row = struct.pack(">ii", 4, 7) + struct.pack(">i", 1) + b"x"
    text = (fake_row * 30)[:260]
    cols = [col("a", "int"), col("t", "blob"), col("b", "int")]
    rows: list[list[Cell]] = [[struct.pack(">i", r), text, struct.pack(">i", -r)]
                              for r in range(12)]
    check_decoders(rows_body(cols, rows), 4)
    # a null int shifts the rest of the row by 4 bytes: fixed widths are checked
    rows[3][0] = None
    check_decoders(rows_body(cols, rows), 4)


@pytest.mark.parametrize("where", ["everywhere", "late", "early", "last"])
def test_fixed_runs_with_nulls(where: str) -> None:
    """The walk's fixed-width runs: rows read cell by cell for nulls (records), the
    switch to writing straight into the builders after many such rows, and a run that
    ends too near the end of the body for the 8-byte check."""
    rng = random.Random(where)
    types = ["int", "bigint", "double", "text", "boolean", "uuid", "date", "time", "smallint"]
    nrows = 120
    body_rows: list[list[Cell]] = []
    for r in range(nrows):
        null_here = {"everywhere": rng.random() < 0.5, "late": r > 90 and rng.random() < 0.7,
                     "early": r < 20, "last": r == nrows - 1}[where]
        body_rows.append([None if null_here and rng.random() < 0.6 else
                          parse_type(t).serialize(_value(t, rng, False)) for t in types])
    body = rows_body([col(f"c{i}", t) for i, t in enumerate(types)], body_rows)
    check_decoders(body, 4)


def _int_text_page(cells: Sequence[tuple[Cell, Cell]]) -> bytes:
    return rows_body([col("i", "int"), col("t", "text")], [list(c) for c in cells])


BAD: dict[str, Callable[[], tuple[bytes, int]]] = {
    "not set before v4": lambda: (_int_text_page([(NOT_SET, b"a")] * 20), 3),
    "truncated": lambda: (_int_text_page([(struct.pack(">i", 1), b"abc")] * 20)[:-2], 4),
    "trailing bytes": lambda: (_int_text_page([(struct.pack(">i", 1), b"abc")] * 20) + b"\0", 4),
    "length -3": lambda: (_int_text_page([(struct.pack(">i", 1), b"a")] * 19
                                         + [(struct.pack(">i", 1), -3)]), 4),
    "int of 3 bytes": lambda: (_int_text_page([(struct.pack(">i", 1), b"a")] * 19
                                              + [(b"\0\0\1", b"a")]), 4),
    "split UTF-8": lambda: (_int_text_page([(None, b"\xc3")] + [(None, b"\xa9")] * 19), 4),
    "bad UTF-8": lambda: (_int_text_page([(None, b"ok")] * 19 + [(None, b"\xff")]), 4),
    "row count too large": lambda: (rows_body([col("i", "int")], [[b"\0\0\0\1"]] * 20,
                                              row_count=21), 4),
    "time outside a day": lambda: (rows_body([col("t", "time")], [[struct.pack(">q", 1)]] * 19
                                             + [[struct.pack(">q", 86400 * 10**9)]]), 4),
    "ascii byte 0x80": lambda: (rows_body([col("a", "ascii")], [[b"a"]] * 19 + [[b"\x80"]]), 4),
    "short decimal": lambda: (rows_body([col("d", "decimal")], [[b"\0\0\0\1\1"]] * 19
                                        + [[b"\0\0\0\1"]]), 4),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_pages_refused_by_every_decoder(name: str) -> None:
    body, pv = BAD[name]()
    with pytest.raises(cqlcodec.DecodeError):
        cqlcodec.decode_result(body, pv)
    check_decoders(body, pv)


def test_wide_vector_column_of_nulls() -> None:
    body = rows_body([col("v", "vector<float, 5000>"), col("i", "int")],
                     [[None, struct.pack(">i", 1)], [None, None]])
    assert columns_by(body, 4, "numpy") in (None, [[None, None], [1, None]])
    check_decoders(body, 4)


@pytest.mark.parametrize("rows", [1, 40])
def test_decimal_scales_decide_the_arrow_form(rows: int) -> None:
    t = parse_type("decimal")
    cases: dict[str, list[decimal.Decimal | None]] = {
        "d:38,4": [decimal.Decimal("1.2345"), decimal.Decimal("-2.0000"), None],
        "d:38,0": [decimal.Decimal("12"), decimal.Decimal(-(2**63))],
        "u": [decimal.Decimal("1E+1"), decimal.Decimal("1.2345")],  # scales -1 and 4
    }
    for fmt, values in cases.items():
        column = [v for v in values for _r in range(rows)]
        body = rows_body([col("d", "decimal")],
                         [[None if v is None else bytes(t.serialize(v))] for v in column])
        for how in DECODERS:
            got = columns_by(body, 4, how)
            if got is not None:
                assert got[0] == column
        batch = cqlcodec.decode_columns(body, 4)
        assert batch["d"].arrow_format == fmt
        assert batch["d"].to_pylist() == column


@pytest.mark.skipif(cqlcodec.COMPILED or not HAVE_NUMPY,
                    reason="the numpy decoder serves the interpreted build")
def test_interpreted_build_decodes_with_numpy() -> None:
    body = flat_page(random.Random(1), ["int", "text", "decimal", "varint"], 60, 0.1)
    head = read_rows_header(body, 4, len(body), 4, None, 0, None)
    assert walk.vectorised_rows(body, head.rows_at, len(body), head.desc, False) is not None
    assert_like_rows(body, 4)
    small = flat_page(random.Random(1), ["int", "text", "decimal", "varint"], 49, 0.1)
    head = read_rows_header(small, 4, len(small), 4, None, 0, None)  # numpy costs more here
    assert walk.vectorised_rows(small, head.rows_at, len(small), head.desc, False) is None
    assert_like_rows(small, 4)
