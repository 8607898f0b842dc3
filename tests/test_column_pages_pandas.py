"""In-memory edges of query results: a consumed ColumnPages says so, duration columns in
pandas are Duration objects (printable, and loadable again), varints of up to 76 digits
are Arrow decimal256(76, 0) numbers (binary beyond, and in polars)."""

from __future__ import annotations

import struct
from collections.abc import Sequence

import pytest
from hotwire import Cell, rows_body
from test_columnar import col

import cqlcodec
from cqlcodec import parse_type
from cqlcodec.errors import CodecError
from cqlcodec.values import Duration

pa = pytest.importorskip("pyarrow")
pd = pytest.importorskip("pandas")
pytest.importorskip("cassandra")

from cqlcodec.columnar.unify import arrow_table_of  # noqa: E402
from cqlcodec.driver.columns import ColumnPages, ResultConsumedError  # noqa: E402
from cqlcodec.driver.sources import pandas_record_batch  # noqa: E402


def _body(cql: str, values: Sequence[object]) -> bytes:
    t = parse_type(cql)
    cells: list[Cell] = [None if v is None else bytes(t.serialize(v)) for v in values]
    return rows_body([col("k", "int"), col("c", cql)],
                     [[struct.pack(">i", i), cell] for i, cell in enumerate(cells)])


def _pages(*bodies: bytes) -> ColumnPages:
    return ColumnPages.of_batches([cqlcodec.decode_columns(body, 4) for body in bodies])


COLLECTORS = ["to_arrow", "to_pandas", "to_polars", "to_numpy"]


@pytest.mark.parametrize("second", COLLECTORS)
@pytest.mark.parametrize("first", COLLECTORS)
def test_a_second_collect_names_the_first(first: str, second: str) -> None:
    if "to_polars" in (first, second):
        pytest.importorskip("polars")
    pages = _pages(_body("int", [1, 2]), _body("int", [3]))
    getattr(pages, first)()
    with pytest.raises(ResultConsumedError, match=rf"already consumed by {first}\(\)") as info:
        getattr(pages, second)()
    assert isinstance(info.value, CodecError) and info.value.consumed_by == f"{first}()"


def test_iterating_to_the_end_consumes_and_a_partial_read_leaves_the_rest() -> None:
    pages = _pages(_body("int", [1, 2]), _body("int", [3]))
    assert len(next(pages)) == 2
    assert pages.to_arrow().column("c").to_pylist() == [3]  # the remaining page
    pages = _pages(_body("int", [1]))
    assert [len(b) for b in pages] == [1]
    with pytest.raises(ResultConsumedError, match="already consumed by iteration"):
        pages.to_pandas()
    with pytest.raises(ResultConsumedError, match="already consumed by iteration"):
        pa.table(pages)


def test_an_empty_result_gives_one_empty_table_then_refuses() -> None:
    pages = _pages(_body("int", []))
    assert pages.to_arrow().num_rows == 0
    with pytest.raises(ResultConsumedError, match=r"to_arrow\(\)"):
        pages.to_arrow()


DURATIONS = [Duration(1, 2, 3), None, Duration(-14, -3, -(10**15)), Duration(0, 0, 0)]


def test_a_duration_column_prints_and_loads_back() -> None:
    frame = _pages(_body("duration", DURATIONS[:2]), _body("duration", DURATIONS[2:])).to_pandas()
    assert frame["c"].dtype == object and list(frame["c"]) == DURATIONS
    text = repr(frame)  # ArrowDtype intervals raised NotImplementedError here
    assert "Duration(months=1, days=2, nanoseconds=3)" in text
    assert "Duration(months=-14, days=-3, nanoseconds=-1000000000000000)" in frame.to_string()
    batch = pandas_record_batch(pa, frame)  # what load_table reads from a DataFrame
    assert batch.schema.field("c").type == pa.month_day_nano_interval()
    from cqlcodec.columnar.bind_input import arrow_values

    assert [None if v is None else Duration(*v) for v in
            arrow_values(batch.column(1), parse_type("duration"))] == DURATIONS
    assert cqlcodec.decode_columns(_body("duration", DURATIONS), 4).to_pandas()["c"].tolist() \
        == DURATIONS


def test_durations_inside_collections_stay_arrow_columns() -> None:
    frame = _pages(_body("list<duration>", [[Duration(1, 2, 3)], None])).to_pandas()
    assert isinstance(frame["c"].dtype, pd.ArrowDtype)
    repr(frame)


def test_a_column_mixing_durations_and_others_is_refused_by_name() -> None:
    frame = pd.DataFrame({"c": [Duration(1, 2, 3), "soon"]})
    with pytest.raises(CodecError, match='column "c".*str among Duration'):
        pandas_record_batch(pa, frame)


BIG = 10**76 - 1


@pytest.mark.parametrize("values,fmt", [
    ([2**63 - 1, -(2**63), None], "l"),
    ([10**38 - 1, -(10**38 - 1), None], "d:38,0"),
    ([10**38, 1, None], "d:76,0,256"),
    ([BIG, -BIG, 2**200, None], "d:76,0,256"),
    ([BIG + 1, 1, None], "z"),  # one value of 77 digits: the whole page is binary
    ([-(BIG + 1), 1], "z"),
])
def test_varint_pages_take_the_narrowest_exact_form(values: list[int | None], fmt: str) -> None:
    batch = cqlcodec.decode_columns(_body("varint", values), 4)
    assert batch["c"].arrow_format == fmt
    assert batch["c"].to_pylist() == values
    column = pa.table(batch).column("c")
    if fmt == "z":
        assert column.type == pa.binary()
        assert [None if v is None else int.from_bytes(v, "big", signed=True)
                for v in column.to_pylist()] == values
    else:
        assert [None if v is None else int(v) for v in column.to_pylist()] == values
    if fmt == "d:76,0,256":
        assert column.type == pa.decimal256(76, 0)
        frame = batch.to_pandas()
        assert str(frame["c"].dtype) == "decimal256(76, 0)[pyarrow]"
        assert int(frame["c"].dropna().sum()) == sum(v for v in values if v is not None)


def test_polars_gets_wide_varints_as_binary() -> None:
    pl = pytest.importorskip("polars")
    values = [10**60, None, -5]
    frame = cqlcodec.decode_columns(_body("varint", values), 4).to_polars()
    assert frame["c"].dtype == pl.Binary
    assert [None if v is None else int.from_bytes(v, "big", signed=True)
            for v in frame["c"].to_list()] == values


@pytest.mark.parametrize("pages,arrow_type", [
    ([[1], [10**40]], "decimal256(76, 0)"),
    ([[10**20], [10**40], [3]], "decimal256(76, 0)"),
    ([[10**20], [4]], "decimal128(38, 0)"),
    ([[10**40], [10**80]], "binary"),
])
def test_pages_of_varints_unify_exactly(pages: list[list[int]], arrow_type: str) -> None:
    table = arrow_table_of([cqlcodec.decode_columns(_body("varint", p), 4) for p in pages])
    column = table.column("c")
    assert str(column.type) == arrow_type
    got = [int.from_bytes(v, "big", signed=True) if isinstance(v, bytes) else int(v)
           for v in column.to_pylist()]
    assert got == [v for p in pages for v in p]
