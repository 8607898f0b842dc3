"""decode_columns: the columnar result path against the row path, numpy, and Arrow readers.

The correctness contract: for every body, ``decode_columns(body)[i].to_pylist()`` equals
column ``i`` of ``decode_result(body).rows``, and a body the row path refuses is refused
with the same DecodeError. pyarrow, polars and DuckDB are test-only readers (skipped when
not installed).
"""

from __future__ import annotations

import datetime
import decimal
import gc
import random
import struct
import uuid
from typing import Any

import pytest
from fuzz import bodies as B
from fuzz.mutate import mutate
from fuzz.targets import comparable as norm
from hotwire import NO_METADATA, NOT_SET, rows_body
from hypothesis import given, settings
from hypothesis import strategies as st

import cqlcodec
from cqlcodec import ColumnSpec, Prepared, parse_type
from cqlcodec.columnar import arrow as arrow_export

# one value of every CQL type (and nested ones), with the Arrow type each maps to
CASES: list[tuple[str, object, str]] = [
    ("int", -5, "int32"),
    ("bigint", 2**40, "int64"),
    ("counter", -(2**62), "int64"),
    ("smallint", -300, "int16"),
    ("tinyint", -3, "int8"),
    ("double", 1.5, "double"),
    ("float", 0.25, "float"),
    ("boolean", True, "bool"),
    ("text", "h\u00e9llo \u4e2d", "string"),
    ("ascii", "abc", "string"),
    ("blob", b"\x00\xff", "binary"),
    ("uuid", uuid.UUID("3f2504e0-4f89-11d3-9a0c-0305e82c3301"), "extension<arrow.uuid>"),
    ("timeuuid", uuid.UUID("3f2504e0-4f89-11d3-9a0c-0305e82c3301"), "extension<arrow.uuid>"),
    ("timestamp", datetime.datetime(2024, 5, 17, 12, 34, 56, 789000), "timestamp[ms, tz=UTC]"),
    ("date", datetime.date(2024, 5, 17), "date32[day]"),
    ("time", cqlcodec.Time(45296789012345), "time64[ns]"),
    ("duration", cqlcodec.Duration(1, 2, 3000000004), "month_day_nano_interval"),
    ("inet", "2001:db8::1", "string"),
    ("varint", 12345678901234, "int64"),
    ("decimal", decimal.Decimal("12345.6789"), "decimal128(38, 4)"),
    ("list<int>", [1, None, 3], "list<item: int32>"),
    ("set<text>", {"a", "b"}, "list<item: string>"),
    ("map<text, bigint>", {"k": 1, "l": None}, "map<string, int64>"),
    ("tuple<int, text>", (1, "x"), "struct<f0: int32, f1: string>"),
    ("vector<float, 3>", [1.0, 2.5, -1.0], "fixed_size_list<item: float>[3]"),
    ("vector<text, 2>", ["a", "bc"], "fixed_size_list<item: string>[2]"),
    ("frozen<list<set<int>>>", [{1, 2}, {3}], "list<item: list<item: int32>>"),
    ("map<frozen<list<int>>, text>", {(1, 2): "x"}, "map<list<item: int32>, string>"),
]


def col(name: str, t: str) -> tuple[str, str, str, cqlcodec.CqlType]:
    return ("ks", "t", name, parse_type(t))


def every_type_body(rows: int = 3) -> bytes:
    cols = [col(f"c{i}", t) for i, (t, _v, _a) in enumerate(CASES)]
    data = []
    for r in range(rows):
        row: list[bytes | None | int] = []
        for i, (t, v, _a) in enumerate(CASES):
            roll = (r + i) % 5
            row.append(None if roll == 0 else NOT_SET if roll == 4 and r == 2
                       else parse_type(t).serialize(v))
        data.append(row)
    return rows_body(cols, data)


def columns_of(result: Any) -> list[list[object]]:
    rows = result.rows
    return [[row[i] for row in rows] for i in range(len(result.columns))]


def same(a: object, b: object) -> bool:
    """Equal values of equal types, at every nesting level."""
    return norm(a) == norm(b)


def assert_like_rows(body: bytes, pv: int, prepared: Prepared | None = None) -> None:
    expected: Any = None
    expected_error: str | None = None
    try:
        expected = cqlcodec.decode_result(body, pv, prepared)
        if not isinstance(expected, cqlcodec.RowsResult):  # a mutated kind word
            expected_error = f"expected a RESULT of kind Rows (2), got kind {expected.kind}"
    except cqlcodec.DecodeError as exc:
        expected_error = str(exc)
    try:
        batch = cqlcodec.decode_columns(body, pv, prepared)
        got = [c.to_pylist() for c in batch]
    except cqlcodec.DecodeError as exc:
        assert expected_error is not None, f"columnar refused what the row path accepts: {exc}"
        if "hash flooding" in expected_error:
            assert "hash flooding" in str(exc)
        else:
            assert str(exc) == expected_error
        return
    assert expected_error is None, f"columnar accepted what the row path refuses: {expected_error}"
    assert isinstance(expected, cqlcodec.RowsResult)
    assert batch.num_rows == len(batch) == len(expected.rows)
    assert batch.names == expected.column_names
    assert batch.paging_state == expected.paging_state
    assert batch.has_more_pages == expected.has_more_pages
    for i, values in enumerate(columns_of(expected)):
        assert len(got[i]) == len(values)
        for a, b in zip(got[i], values):
            assert same(a, b), (batch.names[i], a, b)
        assert batch[i].null_count == sum(v is None or v is cqlcodec.UNSET for v in values)


def test_every_type_equals_row_path() -> None:
    body = every_type_body()
    assert_like_rows(body, 4)
    batch = cqlcodec.decode_columns(body, 4)
    assert batch["c7"].to_pylist()[1] == CASES[7][1]
    assert [c.name for c in batch] == list(batch.names)
    assert batch[0] is batch["c0"]


@given(st.integers(0, 2**32 - 1), st.sampled_from([3, 4, 5]))
@settings(max_examples=300, deadline=None)
def test_random_schemas_equal_row_path(seed: int, pv: int) -> None:
    rng = random.Random(seed)
    body = B.gen_rows_body(rng, pv, max_rows=8)
    assert_like_rows(body.data, pv)


@given(st.integers(0, 2**32 - 1), st.sampled_from([3, 4, 5]))
@settings(max_examples=300, deadline=None)
def test_hostile_bodies_same_verdict(seed: int, pv: int) -> None:
    rng = random.Random(seed)
    body = B.gen_rows_body(rng, pv, max_rows=8)
    data, _desc = mutate(body.data, body.slots, rng)
    assert_like_rows(data, pv)


def test_prepared_no_metadata_and_paging() -> None:
    cols = [col("a", "int"), col("b", "text")]
    prepared = Prepared([], [ColumnSpec(*c) for c in cols])
    rows = [[struct.pack(">i", i), f"r{i}".encode()] for i in range(5)]
    body = rows_body(cols, rows, flags=NO_METADATA)
    assert_like_rows(body, 4, prepared)
    batch = cqlcodec.decode_columns(body, 4, prepared)
    assert batch["a"].to_pylist() == [0, 1, 2, 3, 4]
    paged = rows_body(cols, rows, paging_state=b"\x01\x02")
    assert cqlcodec.decode_columns(paged, 4).paging_state == b"\x01\x02"
    assert cqlcodec.decode_columns(paged, 4).has_more_pages


def test_not_rows_and_errors() -> None:
    with pytest.raises(cqlcodec.DecodeError, match="kind Rows"):
        cqlcodec.decode_columns(struct.pack(">i", 1), 4)
    bad = rows_body([col("t", "text")], [[b"ok"], [b"\xc3"]])
    with pytest.raises(cqlcodec.DecodeError) as info:
        cqlcodec.decode_columns(bad, 4)
    assert info.value.column == "t" and "row 1" in str(info.value)
    split = rows_body([col("t", "text")], [[b"\xc3"], [b"\xa9"]])  # valid only when joined
    with pytest.raises(cqlcodec.DecodeError, match="row 0"):
        cqlcodec.decode_columns(split, 4)
    truncated = every_type_body()[:-3]
    assert_like_rows(truncated, 4)


def test_unset_cells() -> None:
    body = rows_body([col("a", "int")], [[NOT_SET], [struct.pack(">i", 1)]])
    assert cqlcodec.decode_columns(body, 4)["a"].to_pylist() == [cqlcodec.UNSET, 1]
    assert_like_rows(body, 3)  # -2 before v4: the row path's error


def test_hash_flooding_refused_when_materialised() -> None:
    # 65 uuids sharing one hash: int value differs only above the hashed bits
    t = "set<varint>"
    modulus = (1 << 61) - 1
    values = {5 + k * modulus for k in range(66)}
    body = rows_body([col("s", t)], [[parse_type(t).serialize(values)]])
    with pytest.raises(cqlcodec.DecodeError, match="hash flooding"):
        cqlcodec.decode_result(body, 4)
    batch = cqlcodec.decode_columns(body, 4)  # the buffers hash nothing
    with pytest.raises(cqlcodec.DecodeError, match="hash flooding") as info:
        batch["s"].to_pylist()
    assert info.value.column == "s"


def test_wide_decimal_and_varint_forms() -> None:
    t_dec = parse_type("decimal")
    t_var = parse_type("varint")
    mixed = [decimal.Decimal("1.5"), decimal.Decimal("2.25"), None]
    huge = [10**80, -(10**39), None]  # 77 digits or more: binary (39 to 76: decimal256)
    mid = [10**30, 1, None]
    body = rows_body([col("d", "decimal"), col("v", "varint"), col("m", "varint")],
                     [[None if a is None else t_dec.serialize(a),
                       None if b is None else t_var.serialize(b),
                       None if c is None else t_var.serialize(c)]
                      for a, b, c in zip(mixed, huge, mid)])
    batch = cqlcodec.decode_columns(body, 4)
    assert batch["d"].arrow_format == "u" and batch["d"].to_pylist() == mixed
    assert batch["v"].arrow_format == "z" and batch["v"].to_pylist() == huge
    assert batch["m"].arrow_format == "d:38,0" and batch["m"].to_pylist() == mid
    assert_like_rows(body, 4)


def test_to_numpy() -> None:
    np = pytest.importorskip("numpy")
    cols = [col("i", "int"), col("ts", "timestamp"), col("d", "date"), col("t", "time"),
            col("v", "vector<float, 3>"), col("b", "boolean"), col("s", "text")]
    ts = datetime.datetime(2024, 1, 2, 3, 4, 5, 6000)
    rows: list[list[bytes | None | int]] = [
        [struct.pack(">i", 7), parse_type("timestamp").serialize(ts),
         parse_type("date").serialize(datetime.date(2024, 1, 2)), struct.pack(">q", 5),
         struct.pack(">3f", 1, 2, 3), b"\x01", b"x"],
        [None, None, None, None, None, None, None]]
    batch = cqlcodec.decode_columns(rows_body(cols, rows), 4)
    i = batch["i"].to_numpy()
    assert isinstance(i, np.ma.MaskedArray) and i.dtype == np.int32
    assert i[0] == 7 and i.mask.tolist() == [False, True]
    assert batch["ts"].to_numpy()[0] == np.datetime64("2024-01-02T03:04:05.006", "ms")
    assert batch["d"].to_numpy().dtype == np.dtype("datetime64[D]")
    assert batch["t"].to_numpy()[0] == np.timedelta64(5, "ns")
    v = batch["v"].to_numpy()
    assert v.shape == (2, 3) and v.dtype == np.float32 and v.mask[1].all()
    assert v[0].tolist() == [1.0, 2.0, 3.0]
    assert batch["b"].to_numpy().dtype == np.bool_
    assert batch["s"].to_numpy().tolist() == ["x", None]
    dense = cqlcodec.decode_columns(rows_body([col("v", "vector<double, 2>")],
                                              [[struct.pack(">2d", 1, 2)]] * 4), 4)
    arr = dense["v"].to_numpy()
    assert not isinstance(arr, np.ma.MaskedArray) and arr.shape == (4, 2)


def test_arrow_types_and_values() -> None:
    pa = pytest.importorskip("pyarrow")
    body = every_type_body()
    batch = cqlcodec.decode_columns(body, 4)
    table = pa.table(batch)
    assert table.num_rows == 3
    for i, (_t, _value, arrow_type) in enumerate(CASES):
        column = batch[i]
        arr = pa.array(column)
        assert str(arr.type) == arrow_type, (column.name, arr.type)
        assert str(table.column(i).type) == arrow_type
        assert arr.null_count == column.null_count
        assert [v is None for v in arr.to_pylist()] == [v is None for v in
                                                         [None if x is cqlcodec.UNSET else x
                                                          for x in column.to_pylist()]]
        arr.validate(full=True)
    first: dict[str, Any] = {}
    for column in batch:
        at = [v is not None and v is not cqlcodec.UNSET for v in column.to_pylist()].index(True)
        first[column.name] = table.column(column.name).to_pylist()[at]
    assert first["c0"] == -5 and first["c8"] == CASES[8][1] and first["c16"].months == 1
    assert first["c11"] == CASES[11][1]
    assert first["c13"] == CASES[13][1].replace(tzinfo=datetime.timezone.utc)  # type: ignore[attr-defined]
    assert first["c18"] == CASES[18][1]
    assert first["c19"] == decimal.Decimal("12345.6789")
    assert sorted(first["c21"]) == ["a", "b"]
    assert dict(first["c22"]) == {"k": 1, "l": None}
    assert first["c23"] == {"f0": 1, "f1": "x"}
    assert first["c24"] == [1.0, 2.5, -1.0]
    assert first["c27"] == [([1, 2], "x")]
    stream = pa.RecordBatchReader.from_stream(batch).read_all()
    assert stream.equals(table)
    del table, stream, arr
    gc.collect()
    assert arrow_export.live_exports() == 0


def test_arrow_null_map_key_and_empty_page() -> None:
    pa = pytest.importorskip("pyarrow")
    t = "map<int, int>"
    cell = struct.pack(">i", 1) + struct.pack(">i", -1) + struct.pack(">ii", 4, 7)
    batch = cqlcodec.decode_columns(rows_body([col("m", t)], [[cell]]), 4)
    assert batch["m"].to_pylist() == [{None: 7}]
    assert str(pa.array(batch["m"]).type) == ("list<entries: struct<key: int32, value: int32>"
                                              " not null>")
    empty = cqlcodec.decode_columns(rows_body([col("a", "text"), col("b", "list<int>")], []), 4)
    assert pa.table(empty).num_rows == 0


def test_polars_and_duckdb_read_a_batch() -> None:
    pl = pytest.importorskip("polars")
    duckdb = pytest.importorskip("duckdb")
    cols = [col("i", "int"), col("s", "text"), col("v", "vector<float, 2>"),
            col("d", "duration"), col("u", "uuid")]
    rows: list[list[bytes | None | int]] = []
    for k in range(4):
        rows.append([struct.pack(">i", k), f"s{k}".encode(), struct.pack(">2f", k, -k),
                     parse_type("duration").serialize(cqlcodec.Duration(0, k, 5)),
                     uuid.uuid4().bytes])
    rows.append([None] * 5)
    batch = cqlcodec.decode_columns(rows_body(cols, rows), 4)
    df = batch.to_polars()
    assert df.shape == (5, 5)
    assert df["i"].to_list() == [0, 1, 2, 3, None]
    assert df["d"].struct.field("days").to_list() == [0, 1, 2, 3, None]
    plain = cqlcodec.decode_columns(rows_body(cols[:3], [r[:3] for r in rows]), 4)
    assert pl.DataFrame(plain)["s"].to_list() == ["s0", "s1", "s2", "s3", None]
    rel = duckdb.sql("select sum(i) as total, count(s) as n from plain")
    assert rel.fetchall() == [(6, 4)]


def test_to_pandas() -> None:
    pd = pytest.importorskip("pandas")
    batch = cqlcodec.decode_columns(every_type_body(), 4)
    frame = batch.to_pandas()
    assert isinstance(frame, pd.DataFrame) and frame.shape == (3, len(CASES))
    assert list(frame.columns) == list(batch.names)
