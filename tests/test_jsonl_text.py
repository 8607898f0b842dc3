"""``unload --format jsonl`` builds its lines column by column with pyarrow: the bytes
must be those of encoding each row's dict of :func:`cqlcodec.driver.json_values.to_json`
values, for every CQL type, nulls, text that needs escapes and floats of every kind."""

from __future__ import annotations

import datetime
import decimal
import ipaddress
import json
import math
import os
import subprocess
import sys
import textwrap
import uuid
from typing import Any

import pytest
from hotwire import rows_body
from hypothesis import given, settings
from hypothesis import strategies as st

import cqlcodec
from cqlcodec import parse_type
from cqlcodec.types.model import CqlType, user_type
from cqlcodec.values import Duration, Time

pa = pytest.importorskip("pyarrow")

from cqlcodec.cli.jsonl_text import jsonl_buffer, reference_lines  # noqa: E402

ADDR = user_type("ks", "addr", [("street", parse_type("text")), ("n", parse_type("int"))])
TEXTS = ["plain", "", 'a "quote"', "back\\slash", "tab\tnew\nline\x00\x1f", "é ü 漢 \x7f \u2028",
         "😀"]
FLOATS = [0.0, -0.0, 0.5, 1.0, 1e16, 1e-5, 123.456, 0.1, 1e308, 5e-324, math.pi]
FLOATS32 = [0.0, -0.0, 0.5, 1.0, 1e16, 1e-5, 123.456, 0.1, 3e38, 1e-45, math.pi]


def batch_of(columns: list[tuple[str, CqlType]], rows: list[list[Any]]) -> Any:
    """A ColumnBatch of ``rows`` (None: null) as the server would send it."""
    cols = [("ks", "t", name, t) for name, t in columns]
    cells = [[None if v is None else t.serialize(v) for (_, t), v in zip(columns, row)]
             for row in rows]
    return cqlcodec.decode_columns(rows_body(cols, cells), 4)


def same_as_reference(batch: Any) -> str:
    text: str = jsonl_buffer(pa, batch).to_pybytes().decode("utf-8")
    assert text == "".join(reference_lines(batch))
    return text


def test_scalars_text_and_floats_with_and_without_nulls() -> None:
    columns = [(n, parse_type(t)) for n, t in (
        ("k", "bigint"), ("i", "int"), ("s", "smallint"), ("ti", "tinyint"), ("b", "boolean"),
        ("t", "text"), ("a", "ascii"), ("d", "double"), ("f", "float"), ("plain", "text"))]
    rows = [[-(2 ** 63) + r, 2 ** 31 - 1 - r, -(2 ** 15) + r, 127 - r, r % 2 == 0,
             TEXTS[r % len(TEXTS)], "ascii \"x\"", FLOATS[r % len(FLOATS)],
             FLOATS32[r % len(FLOATS)], f"v{r}"] for r in range(len(FLOATS) * 2)]
    text = same_as_reference(batch_of(columns, rows))
    assert json.loads(text.splitlines()[0])["k"] == -(2 ** 63)
    with_nulls = rows + [[None] * len(columns)]
    same_as_reference(batch_of(columns, with_nulls))
    plain_text_nulls: list[list[Any]] = [[r, None if r % 3 else f"v{r}"] for r in range(9)]
    same_as_reference(batch_of([("k", parse_type("int")), ("t", parse_type("text"))],
                               plain_text_nulls))


def test_floats_that_json_cannot_hold_are_strings() -> None:
    columns = [("d", parse_type("double")), ("f", parse_type("float"))]
    rows: list[list[Any]] = [[math.nan, math.inf], [-math.inf, math.nan], [1.5, -math.inf], [None, 0.1]]
    lines = same_as_reference(batch_of(columns, rows)).splitlines()
    assert lines[0] == '{"d":"NaN","f":"Infinity"}'
    assert lines[3] == '{"d":null,"f":0.10000000149011612}'


EDGES = [1e-4, 9.999999999999999e-05, 0.00012, 1e-5, 1e9, 9999999999.5, 1e10, 1.5e10, 1e15,
         9007199254740993.0, 1e16, 1e17, -1e-4, -0.0, 0.0, 2.0 ** -1074, 1.7976931348623157e308,
         0.30000000000000004, 100.0, -250.0]


def test_floats_at_the_edges_of_each_layout() -> None:
    """Around the magnitudes where repr and Arrow change between plain digits and an
    exponent (1e-4, 1e10, 1e16), and integral values."""
    columns = [("d", parse_type("double")), ("f", parse_type("float"))]
    same_as_reference(batch_of(columns, [[v, v if abs(v) < 3e38 else None] for v in EDGES]))


def test_plain_and_integral_floats_are_written_by_arrow_alone(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Plain decimals, integral values (``.0`` added), zeros and nulls never take the
    value-by-value path; one value with an exponent sends its column there."""
    from cqlcodec.cli import jsonl_text

    columns = [("d", parse_type("double")), ("f", parse_type("float"))]
    plain: list[list[Any]] = [[v, v] for v in (0.5, -2.25, 100.0, -0.0, 0.0, 0.001, 12345.75)]
    plain.append([None, None])
    monkeypatch.setattr(jsonl_text, "_float_text", _no_float_text)
    same_as_reference(batch_of(columns, plain))
    same_as_reference(batch_of(columns, [[None, None]] * 3))
    with pytest.raises(AssertionError, match="value by value"):
        jsonl_buffer(pa, batch_of(columns, [*plain, [1e-7, 0.5]]))


def test_this_pyarrow_lays_out_doubles_as_repr_in_the_range_kept() -> None:
    """Where it does not, every float column goes the slower, regex-checked way; the
    fast way must be the one these tests (and users) get."""
    from cqlcodec.cli import jsonl_text

    assert jsonl_text._arrow_lays_out_as_repr(pa, jsonl_text._kernels())


@settings(max_examples=30, deadline=None)
@given(doubles=st.lists(st.floats() | st.none(), min_size=1, max_size=100))
def test_a_pyarrow_with_another_layout_is_checked_text_by_text(
        doubles: list[float | None]) -> None:
    """With the layout check failing, Arrow's texts are kept only where a regex finds them
    laid out as repr's: the lines stay the same."""
    from cqlcodec.cli import jsonl_text

    columns = [("d", parse_type("double")), ("f", parse_type("float"))]
    rows: list[list[Any]] = [[v, v if v is None or abs(v) < 3e38 else None]
                             for v in [*doubles, *EDGES]]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(jsonl_text, "_LAYOUT_CHECKED", [False])
        same_as_reference(batch_of(columns, rows))


def test_a_pyarrow_without_the_kernel_module_names_uses_pyarrow_compute(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from cqlcodec.cli import jsonl_text

    pytest.importorskip("pyarrow.compute")  # it imports these names from pyarrow._compute
    kernels = pytest.importorskip("pyarrow._compute")
    monkeypatch.delattr(kernels, "MatchSubstringOptions")
    assert jsonl_text._kernels().__name__ == "pyarrow.compute"
    columns = [("i", parse_type("int")), ("d", parse_type("double")), ("t", parse_type("text"))]
    same_as_reference(batch_of(columns, [[1, 2.0, "a"], [None, None, None], [3, 1e-9, "b"]]))


def _no_float_text(value: float | None) -> str:
    raise AssertionError(f"{value!r} was written value by value")


@settings(max_examples=60, deadline=None)
@given(doubles=st.lists(st.floats() | st.none(), min_size=1, max_size=200),
       floats=st.lists(st.floats(width=32) | st.none(), min_size=1, max_size=200))
def test_any_float_column_is_written_as_json_writes_it(doubles: list[float | None],
                                                       floats: list[float | None]) -> None:
    n = min(len(doubles), len(floats))
    columns = [("d", parse_type("double")), ("f", parse_type("float"))]
    same_as_reference(batch_of(columns, [[d, f] for d, f in zip(doubles[:n], floats[:n])]))


def test_every_other_type_goes_through_to_json() -> None:
    columns = [(n, parse_type(t)) for n, t in (
        ("bl", "blob"), ("de", "decimal"), ("vi", "varint"), ("u", "uuid"), ("tu", "timeuuid"),
        ("ip", "inet"), ("ts", "timestamp"), ("dt", "date"), ("tm", "time"), ("du", "duration"),
        ("l", "list<int>"), ("st", "set<text>"), ("mt", "map<text, int>"),
        ("mi", "map<int, frozen<list<text>>>"), ("tp", "tuple<int, text, double>"),
        ("vec", "vector<float, 3>"), ("cn", "counter"))] + [("ad", ADDR)]
    row = [b"\x00\xff", decimal.Decimal("1.50"), 2 ** 70, uuid.UUID(int=7),
           uuid.UUID("d2177dd0-eaa2-11de-a572-001b779c76e3"), ipaddress.ip_address("::1"),
           datetime.datetime(2024, 5, 17, 10, 0, 0, 123000), datetime.date(2024, 2, 29),
           Time(36_000_000_000_123), Duration(1, 2, 3), [1, 2], ["a", 'q"'], {"k": 1},
           {1: ["x"]}, (1, "t", 0.5), [0.5, 1.0, 2.0], 42, {"street": "s", "n": None}]
    lines = same_as_reference(batch_of(columns, [row, [None] * len(columns)])).splitlines()
    assert json.loads(lines[0])["de"] == "1.50"
    assert lines[1] == "{" + ",".join(f'"{n}":null' for n, _ in columns) + "}"


def test_a_repeated_name_keeps_one_key_as_the_row_dict_does() -> None:
    columns = [("v", parse_type("int")), ("v", parse_type("text"))]
    lines = same_as_reference(batch_of(columns, [[1, "a"], [2, "b"]])).splitlines()
    assert lines == ['{"v":"a"}', '{"v":"b"}']


def test_writing_lines_does_not_import_pandas() -> None:
    """pyarrow imports pandas (about half a second of CPU) when it converts Python values;
    the lines of every kind of column are made without that, and without the kernel
    wrappers of ``pyarrow.compute`` (70 ms), in a fresh process."""
    pytest.importorskip("pandas")
    script = textwrap.dedent("""
        import sys
        import pyarrow as pa
        from test_jsonl_text import batch_of, parse_type
        from cqlcodec.cli.jsonl_text import jsonl_buffer
        columns = [(n, parse_type(t)) for n, t in (("i", "int"), ("b", "boolean"), ("t", "text"),
                   ("q", "text"), ("d", "double"), ("f", "float"), ("l", "list<int>"))]
        rows = [[1, True, "a", 'q"', 0.5, 1e-7, [1]], [None, None, None, None, None, None, None],
                [2, False, "b", "x", float("nan"), 3.0, []]]
        assert "pandas" not in sys.modules and "pyarrow.compute" not in sys.modules
        jsonl_buffer(pa, batch_of(columns, rows))
        print("pandas" in sys.modules, "pyarrow.compute" in sys.modules)
    """)
    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([here, *(p for p in sys.path if p)]))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False False"
