"""Parquet and Arrow files of pages whose varint and decimal types differ
(:mod:`cqlcodec.driver.columnar_files`): one file, one schema, every value exact, and
readable by pyarrow, polars and DuckDB; without a server (pages decoded from bodies)."""

from __future__ import annotations

import decimal
from pathlib import Path
from typing import Any

import pytest
from hotwire import rows_body

import cqlcodec
from cqlcodec import Duration, parse_type

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from cqlcodec.cli.unload_files import write_split  # noqa: E402
from cqlcodec.columnar.stream import StreamSchemaError  # noqa: E402
from cqlcodec.driver.columnar_files import ColumnarFile, common_schema  # noqa: E402

D = decimal.Decimal
COLUMNS = [("v", "varint"), ("d", "decimal"), ("lv", "list<varint>"),
           ("u", "frozen<tuple<varint, decimal, duration>>"), ("mv", "map<varint, decimal>")]
# pages of one split, in order: each needs the same or another type for a column
PAGES: list[list[list[Any]]] = [
    # v int64, d decimal128(38, 2), lv list<int64>
    [[1, D("1.50"), [1, 2], (1, D("0.25"), Duration(1, 2, 3)), {1: D("1.00")}],
     [None, None, None, None, None]],
    # v decimal128(38, 0): the file widens; d the same scale
    [[10**30, D("2.25"), [10**30], (2**64, D("9.99"), Duration(0, 0, -1)), {2: D("2.00")}]],
    # int64 again: cast up to the file's decimal128
    [[-5, D("-0.01"), [], (0, D("0.00"), Duration(0, 0, 0)), {}]],
    # v decimal256 (61 digits) and d of another scale: v binary, d text
    [[-(2**200), D("1.5"), [2**200, None], (-(2**200), D("1E-40"), None), {-(2**200): D("1E+30")}]],
    # v binary (81 digits), d mixed scales in the page (text)
    [[10**80, D("9" * 80), [10**80], (10**80, D("-1E+30"), None), {10**80: D("3")}]],
    # back to int64 and decimal128: cast to the file's binary and text
    [[7, D("7.77"), [7], (7, D("7.77"), Duration(7, 7, 7)), {7: D("7.77")}]],
]


def page(rows: list[list[Any]]) -> Any:
    cols = [("ks", "t", n, parse_type(t)) for n, t in COLUMNS]
    body = rows_body(cols, [[None if v is None else parse_type(t).serialize(v)
                             for v, (_n, t) in zip(row, COLUMNS)] for row in rows])
    return cqlcodec.decode_columns(body, 4)


def expected() -> list[dict[str, Any]]:
    return [dict(zip((n for n, _t in COLUMNS), row)) for rows in PAGES for row in rows]


def comparable(rows: list[dict[str, Any]]) -> list[list[bytes | None]]:
    """Rows as the bytes each value is sent as (decimal scales, signs and every digit
    count; tuples, maps and durations in any Python form the codecs take)."""
    return [[None if row[n] is None else parse_type(t).serialize(row[n]) for n, t in COLUMNS]
            for row in rows]


def test_the_pages_differ() -> None:
    """The premise: these pages give the varint and decimal columns other Arrow types."""
    formats = [tuple(page(p)[n].arrow_format for n in ("v", "d")) for p in PAGES]
    assert formats == [("l", "d:38,2"), ("d:38,0", "d:38,2"), ("l", "d:38,2"),
                       ("d:76,0,256", "d:38,1"), ("z", "u"), ("l", "d:38,2")]


@pytest.mark.parametrize("fmt", ["parquet", "arrow"])
def test_a_split_of_differing_pages_is_one_exact_file(tmp_path: Path, fmt: str) -> None:
    name = f"part-00000.{fmt}"
    rows = write_split(iter([page(p) for p in PAGES]), str(tmp_path), name, fmt)
    assert rows == len(expected())
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]  # no temporary left
    path = tmp_path / name
    table = pq.read_table(path) if fmt == "parquet" else pa.ipc.open_file(path).read_all()
    schema = table.schema
    assert schema.field("v").type == pa.binary()
    assert schema.field("d").type == pa.string()
    assert schema.field("lv").type.value_type == pa.binary()
    assert "decimal256" not in str(schema)
    assert table.column("d").to_pylist()[:3] == ["1.50", None, "2.25"]
    assert table.column("v").to_pylist()[0] == b"\x01"
    # load's reading of the file gives every value back exactly, scales kept
    loaded = back(path, fmt)
    assert comparable(loaded) == comparable(expected())
    readable_elsewhere(path, fmt, table.num_rows)


def back(path: Path, fmt: str) -> list[dict[str, Any]]:
    """The rows of a written file as ``load`` reads them for the table's CQL types."""
    from cqlcodec.columnar.bind_input import arrow_values
    from cqlcodec.driver.parquet_durations import structs_as_intervals

    table = pq.read_table(path) if fmt == "parquet" else pa.ipc.open_file(path).read_all()
    batch = structs_as_intervals(pa, table.combine_chunks().to_batches()[0])
    columns = [arrow_values(batch.column(i), parse_type(t)) for i, (_n, t) in enumerate(COLUMNS)]
    return [dict(zip((n for n, _t in COLUMNS), row)) for row in zip(*columns)]


def readable_elsewhere(path: Path, fmt: str, rows: int) -> None:
    """DuckDB (and for Parquet polars) read every row of the file."""
    duckdb = pytest.importorskip("duckdb")
    if fmt == "parquet":
        pl = pytest.importorskip("polars")
        assert pl.read_parquet(path).height == rows
        assert len(duckdb.sql(f"SELECT * FROM read_parquet('{path}')").fetchall()) == rows
    else:
        assert len(duckdb.from_arrow(pa.ipc.open_file(path).read_all()).fetchall()) == rows


def test_the_file_widens_only_when_a_page_needs_it(tmp_path: Path) -> None:
    """A page of the file's types or narrower ones is cast, not rewritten; a wider one
    rewrites the file once per widening (decimal128 after int64, binary after it)."""
    out = ColumnarFile(str(tmp_path / ".f.tmp"), "parquet", group_rows=2, group_bytes=1 << 30)
    for i, p in enumerate(PAGES):
        out.write(page(p))
        assert out.rewrites == [0, 1, 1, 2, 2, 2][i], i
    final = out.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == [Path(final).name]
    meta = pq.ParquetFile(final).metadata
    assert meta.num_rows == len(expected())
    assert comparable(back(Path(final), "parquet")) == comparable(expected())


def test_a_page_without_rows_does_not_type_the_file(tmp_path: Path) -> None:
    """An empty page's types (int64 for a varint, scale 0) are dropped by the first
    page with rows, which types the file alone."""
    out = ColumnarFile(str(tmp_path / ".f.tmp"), "arrow")
    out.write(page([]))
    out.write(page(PAGES[0]))
    final = out.close()
    schema = pa.ipc.open_file(final).schema
    assert (schema.field("v").type, schema.field("d").type) == (pa.int64(), pa.decimal128(38, 2))
    assert out.rewrites == 0


def test_a_decimal_that_held_no_value_takes_the_pages_scale(tmp_path: Path) -> None:
    """Null decimals and empty maps of decimals type no scale: the first page with values
    there gives the file its scale (no text), and the nulls written before stay null."""
    out = ColumnarFile(str(tmp_path / ".f.tmp"), "parquet")
    first: list[list[Any]] = [[1, None, [], None, {}], [2, None, None, None, None]]
    out.write(page(first))
    out.write(page(PAGES[0]))
    schema = pq.read_schema(out.close())
    assert schema.field("d").type == pa.decimal128(38, 2)
    assert schema.field("mv").type.item_type == pa.decimal128(38, 2)
    rows = [dict(zip((n for n, _t in COLUMNS), r)) for r in first + PAGES[0]]
    assert comparable(back(Path(out.path), "parquet")) == comparable(rows)


def test_abort_leaves_nothing(tmp_path: Path) -> None:
    out = ColumnarFile(str(tmp_path / ".f.tmp"), "parquet")
    for p in PAGES[:4]:
        out.write(page(p))
    out.abort()
    assert list(tmp_path.iterdir()) == []


def test_columns_of_no_common_type_are_named() -> None:
    a = pa.schema([pa.field("x", pa.int64())])
    b = pa.record_batch({"x": pa.array(["1"])})
    with pytest.raises(StreamSchemaError, match="'x'"):
        common_schema(pa, a, b)
    with pytest.raises(StreamSchemaError, match="columns"):
        common_schema(pa, a, pa.record_batch({"y": pa.array([1])}))
    nested = pa.record_batch({"x": pa.array([[1]])})
    with pytest.raises(StreamSchemaError, match="'x'"):
        common_schema(pa, a, nested)
    assert isinstance(StreamSchemaError("x"), cqlcodec.CodecError)


def test_scan_sink_writes_one_widened_file(tmp_path: Path) -> None:
    """``TableScan.to_parquet``'s writer: a single file and a file per split, pages of
    differing types in each."""
    from cqlcodec.driver.scan import ParquetSink

    single = ParquetSink(tmp_path / "one.parquet", {})
    per_split = ParquetSink(str(tmp_path / "dir") + "/", {})
    for i, p in enumerate(PAGES):
        single.write(0, page(p), set())
        per_split.write(i % 2, page(p), {0} if i == len(PAGES) - 1 else set())
    assert single.finish() == [str(tmp_path / "one.parquet")]
    files = per_split.finish()
    assert [Path(f).name for f in files] == ["split-00000.parquet", "split-00001.parquet"]
    assert comparable(back(tmp_path / "one.parquet", "parquet")) == comparable(expected())
    assert sorted(p.name for p in (tmp_path / "dir").iterdir()) == [Path(f).name for f in files]
