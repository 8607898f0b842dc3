"""The pieces of columnar IO that need no server: the many-batch Arrow stream, the raw
RESULT pages kept by the per-request protocol handler, and a page cut to a row limit."""

from __future__ import annotations

import decimal
import gc
import struct
from typing import Any

import pytest
from cassandra.protocol import ProtocolHandler, _ProtocolHandler
from hotwire import rows_body

import cqlcodec
from cqlcodec import parse_type
from cqlcodec.columnar.stream import (
    StreamSchemaError,
    ctypes_stream_capsule_of,
    live_streams,
    stream_capsule_of,
)
from cqlcodec.columnar.unify import arrow_table_of
from cqlcodec.driver.columns import RawPage, _first_rows, columnar_handler

COLS = [("ks", "t", "k", parse_type("int")), ("ks", "t", "d", parse_type("decimal")),
        ("ks", "t", "s", parse_type("text"))]


def page(first: int, count: int, scale: int = 2, paging: bytes | None = None) -> bytes:
    dec = parse_type("decimal")
    rows: list[list[Any]] = [[struct.pack(">i", i), dec.serialize(decimal.Decimal(i).scaleb(-scale)),
                              f"row {i}".encode()] for i in range(first, first + count)]
    return rows_body(COLS, rows, paging_state=paging)


def batches(*bodies: bytes) -> list[cqlcodec.ColumnBatch]:
    return [cqlcodec.decode_columns(b, 4) for b in bodies]


class Exported:
    def __init__(self, items: list[cqlcodec.ColumnBatch]) -> None:
        self.items = items

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        it = iter(self.items)
        return stream_capsule_of(it, next(it))


def test_pyarrow_reads_every_batch_of_a_stream() -> None:
    pa = pytest.importorskip("pyarrow")
    items = batches(page(0, 3), page(3, 0), page(3, 4))
    table = pa.RecordBatchReader.from_stream(Exported(items)).read_all()
    assert table.num_rows == 7
    assert table.column("k").to_pylist() == list(range(7))
    assert str(table.schema.field("d").type) == "decimal128(38, 2)"
    del table
    gc.collect()
    assert live_streams() == 0


def test_a_batch_of_another_type_is_cast_exactly_or_refused() -> None:
    pa = pytest.importorskip("pyarrow")
    widened = pa.RecordBatchReader.from_stream(Exported(batches(page(0, 2, scale=4), page(2, 2, scale=1))))
    assert widened.read_all().column("d").to_pylist() == [
        decimal.Decimal(i).scaleb(-s) for i, s in [(0, 4), (1, 4), (2, 1), (3, 1)]]
    narrowed = pa.RecordBatchReader.from_stream(Exported(batches(page(0, 2, scale=1), page(2, 2, scale=4))))
    with pytest.raises(pa.ArrowInvalid, match='column "d".*cast exactly'):
        narrowed.read_all()


def varint_pages(*values: int) -> list[cqlcodec.ColumnBatch]:
    t = parse_type("varint")
    return batches(*(rows_body([("ks", "t", "v", t)], [[t.serialize(v)]]) for v in values))


@pytest.mark.parametrize("consume", ["table", "reader"])
def test_a_stream_failing_part_way_raises_in_pyarrow(consume: str) -> None:
    # pyarrow releases a failed stream while its exception is pending; a ctypes release
    # callback cannot run then (the process used to abort)
    pa = pytest.importorskip("pyarrow")
    items = varint_pages(1, 2**300)  # int64 on the first page, binary on the second
    with pytest.raises(pa.ArrowInvalid, match='column "v".*cast exactly'):
        if consume == "table":
            pa.table(Exported(items))
        else:
            pa.RecordBatchReader.from_stream(Exported(items)).read_all()


def test_the_ctypes_stream_failing_part_way_raises_in_polars() -> None:
    pl = pytest.importorskip("polars")
    items = varint_pages(1, 2**300)

    class CtypesExported:
        def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
            it = iter(items)
            return ctypes_stream_capsule_of(it, next(it))

    with pytest.raises(Exception, match='column "v"'):
        pl.DataFrame(CtypesExported())
    gc.collect()
    assert live_streams() == 0


def test_pages_of_different_varint_types_make_one_exact_table() -> None:
    pa = pytest.importorskip("pyarrow")
    table = arrow_table_of(varint_pages(1, -(2**300), 3))
    assert table.schema.field("v").type == pa.binary()
    assert [int.from_bytes(v, "big", signed=True) for v in table.column("v").to_pylist()] == [
        1, -(2**300), 3]
    decimals = arrow_table_of(batches(page(0, 2, scale=1), page(2, 2, scale=4)))
    assert decimals.schema.field("d").type == pa.string()  # as one page of both scales
    assert decimals.column("d").to_pylist() == ["0.0", "0.1", "0.0002", "0.0003"]
    same = arrow_table_of(batches(page(0, 2, scale=3), page(2, 2, scale=3), page(4, 0)))
    assert same.schema.field("d").type == pa.decimal128(38, 3)


def test_polars_reads_a_stream() -> None:
    pl = pytest.importorskip("polars")
    frame = pl.DataFrame(Exported(batches(page(0, 3), page(3, 2))))
    assert frame["s"].to_list() == [f"row {i}" for i in range(5)]


def test_stream_errors_name_the_column_without_pyarrow(monkeypatch: pytest.MonkeyPatch) -> None:
    pl = pytest.importorskip("polars")
    import sys

    items = batches(page(0, 2, scale=1), page(2, 2, scale=4))
    monkeypatch.setitem(sys.modules, "pyarrow", None)

    class Exported:
        def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
            it = iter(items)
            return stream_capsule_of(it, next(it))  # no pyarrow: the ctypes stream

    with pytest.raises(Exception, match='column "d".*install pyarrow'):
        pl.DataFrame(Exported())
    assert issubclass(StreamSchemaError, cqlcodec.CodecError)


@pytest.mark.parametrize("handler", [ProtocolHandler, _ProtocolHandler])
def test_the_columnar_handler_keeps_rows_bodies_raw(handler: Any) -> None:
    body = page(0, 5, paging=b"\x01\x02")
    columnar = columnar_handler(handler)
    assert columnar_handler(handler) is columnar
    args: tuple[Any, ...] = (4, {}, 0, 0, 0x08, body, None, None)
    try:
        msg = columnar.decode_message(*args)
    except TypeError:  # scylla-driver passes protocol features too
        msg = columnar.decode_message(4, None, *args[1:])
    raw = msg.parsed_rows
    assert isinstance(raw, RawPage) and raw.body == body and raw.num_rows == 5
    assert msg.paging_state == b"\x01\x02"
    assert raw.decode()["k"].to_pylist() == list(range(5))
    assert raw.decode(2)["s"].to_pylist() == ["row 0", "row 1"]


def test_a_page_cut_to_its_first_rows() -> None:
    body = page(0, 6)
    raw = RawPage(body, 4, None)
    cut = _first_rows(body, raw.rows_at, 4)
    assert cqlcodec.decode_result(cut, 4).rows == cqlcodec.decode_result(body, 4).rows[:4]  # type: ignore[union-attr]


def test_a_malformed_page_raises_when_decoded() -> None:
    raw = RawPage(b"\x00\x00\x00\x02\x00\x00", 4, None)
    with pytest.raises(cqlcodec.DecodeError):
        raw.decode()
