"""decode_result: every RESULT kind, every rows flag, validation, the driver as oracle."""

from __future__ import annotations

import datetime
import random
import uuid
from typing import Any

import oracle
import pytest
from hotwire import (
    CONTINUOUS_PAGING,
    GLOBAL_TABLES_SPEC,
    LAST_CONTINUOUS_PAGE,
    NO_METADATA,
    NOT_SET,
    SAMPLES,
    Cell,
    Col,
    i32,
    java_name,
    plain,
    rows_body,
    schema_change_body,
    string,
    u32,
)
from hypothesis import given
from hypothesis import strategies as st

import cqlcodec
from cqlcodec import (
    UNSET,
    ColumnSpec,
    CqlType,
    DecodeError,
    Prepared,
    RowsResult,
    SchemaChangeResult,
    SetKeyspaceResult,
    VoidResult,
    decode_result,
    decode_rows_result,
    dict_factory,
    named_tuple_factory,
    parse_type,
    tuple_factory,
)

INT = parse_type("int")
TEXT = parse_type("text")
BIGINT = parse_type("bigint")

W5_COLS: list[Col] = [("ks", "t", "c_int", INT), ("ks", "t", "c_bigint", BIGINT),
                      ("ks", "t", "c_double", parse_type("double")), ("ks", "t", "c_text", TEXT),
                      ("ks", "t", "c_boolean", parse_type("boolean"))]


def specs(cols: list[Col]) -> tuple[ColumnSpec, ...]:
    return tuple(ColumnSpec(*c) for c in cols)


def enc(t: CqlType, v: object) -> bytes:
    """Content bytes from the driver (independent of cqlcodec's encoders)."""
    return oracle.serialize(java_name(t), v)


def w5_rows(n: int, null_frac: float = 0.0, seed: int = 7) -> tuple[list[list[Cell]], list[tuple[object, ...]]]:
    rng = random.Random(seed)
    cells: list[list[Cell]] = []
    values: list[tuple[object, ...]] = []
    for _r in range(n):
        row_v = [rng.randint(-2**31, 2**31 - 1), rng.randint(-2**63, 2**63 - 1),
                 rng.uniform(-1e6, 1e6), "".join(rng.choice("abcXYZ09") for _ in range(rng.randint(0, 20))),
                 rng.random() < 0.5]
        vals: list[object] = []
        row_c: list[Cell] = []
        for (_k, _t, _n, t), v in zip(W5_COLS, row_v):
            if rng.random() < null_frac:
                vals.append(None)
                row_c.append(None)
            else:
                vals.append(v)
                row_c.append(enc(t, v))
        cells.append(row_c)
        values.append(tuple(vals))
    return cells, values


# --- simple kinds ---------------------------------------------------------------------

@pytest.mark.parametrize("pv", [3, 4, 5])
def test_void(pv: int) -> None:
    r = decode_result(i32(1), pv)
    assert isinstance(r, VoidResult) and r.kind == 1 and r == VoidResult()
    with pytest.raises(DecodeError, match="trailing"):
        decode_result(i32(1) + b"\x00", pv)


@pytest.mark.parametrize("pv", [3, 4, 5])
def test_set_keyspace(pv: int) -> None:
    r = decode_result(i32(3) + string("Mÿ ks"), pv)
    assert isinstance(r, SetKeyspaceResult) and r.keyspace == "Mÿ ks" and r.kind == 3
    with pytest.raises(DecodeError):
        decode_result(i32(3) + string("ks")[:-1], pv)
    with pytest.raises(DecodeError, match="trailing"):
        decode_result(i32(3) + string("ks") + b"x", pv)


@pytest.mark.parametrize("target,name,args", [
    ("KEYSPACE", None, None), ("TABLE", "tbl", None), ("TYPE", "udt", None),
    ("FUNCTION", "fn", ["int", "frozen<list<text>>"]), ("AGGREGATE", "agg", []),
])
@pytest.mark.parametrize("change", ["CREATED", "UPDATED", "DROPPED"])
def test_schema_change(change: str, target: str, name: str | None, args: list[str] | None) -> None:
    body = schema_change_body(change, target, "ks", name, args)
    r = decode_result(body, 4)
    assert isinstance(r, SchemaChangeResult) and r.kind == 5
    assert (r.change_type, r.target, r.keyspace) == (change, target, "ks")
    assert r.name == (name or "")
    assert r.argument_types == tuple(args or [])
    event = oracle.driver_result(body, 4).schema_change_event
    assert event["change_type"] == change and event["target_type"] == target
    for cut in range(4, len(body)):
        with pytest.raises(DecodeError):
            decode_result(body[:cut], 4)
    with pytest.raises(DecodeError, match="trailing"):
        decode_result(body + b"\x00", 4)


def test_schema_change_unknown_target() -> None:
    with pytest.raises(DecodeError, match="target"):
        decode_result(schema_change_body("CREATED", "INDEX", "ks", "x"), 4)


@pytest.mark.parametrize("kind", [0, 6, -1, 0x7FFFFFFF])
def test_unknown_kind(kind: int) -> None:
    with pytest.raises(DecodeError, match="kind"):
        decode_result(i32(kind), 4)


@pytest.mark.parametrize("body", [b"", b"\x00\x00\x00"])
def test_short_kind(body: bytes) -> None:
    with pytest.raises(DecodeError):
        decode_result(body, 4)


def test_bad_protocol_version() -> None:
    with pytest.raises(cqlcodec.ProtocolVersionError):
        decode_result(i32(1), 2)
    with pytest.raises(cqlcodec.ProtocolVersionError):
        decode_result(i32(1), 6)


def test_accepts_bytearray_and_memoryview() -> None:
    body = rows_body(W5_COLS[:1], [[enc(INT, 4)]])
    for b in (bytearray(body), memoryview(body)):
        r = decode_result(b, 4)
        assert isinstance(r, RowsResult) and r.rows == [(4,)]


# --- rows: flags and metadata -----------------------------------------------------------

@pytest.mark.parametrize("pv", [3, 4, 5])
@pytest.mark.parametrize("global_spec", [False, True])
@pytest.mark.parametrize("paging", [None, b"", b"\x01\x02state"])
@pytest.mark.parametrize("new_id", [None, b"\x09" * 16])
@pytest.mark.parametrize("page", [None, 0, 7])
def test_rows_flag_combinations(pv: int, global_spec: bool, paging: bytes | None,
                                new_id: bytes | None, page: int | None) -> None:
    cells, values = w5_rows(3, 0.2)
    flags = GLOBAL_TABLES_SPEC if global_spec else 0
    body = rows_body(W5_COLS, cells, flags=flags, paging_state=paging, new_metadata_id=new_id,
                     continuous_page=page)
    r = decode_result(body, pv)
    assert isinstance(r, RowsResult) and r.kind == 2
    assert r.columns == specs(W5_COLS)
    assert r.column_names == tuple(c[2] for c in W5_COLS)
    assert r.column_types == tuple(c[3] for c in W5_COLS)
    assert r.rows == values and list(r) == values and len(r) == 3
    assert r.paging_state == paging
    assert r.has_more_pages == (paging is not None)
    assert r.new_metadata_id == new_id
    assert r.continuous_page == page
    assert r.last_continuous_page is False
    if page is None and (new_id is None):
        names, rows = oracle.driver_rows(body, pv)
        assert names == list(r.column_names) and rows == values


@pytest.mark.parametrize("pv", [3, 4, 5])
@pytest.mark.parametrize("paging", [None, b"more"])
@pytest.mark.parametrize("page", [None, 3])
def test_rows_no_metadata(pv: int, paging: bytes | None, page: int | None) -> None:
    cells, values = w5_rows(4, 0.3, seed=11)
    prep = Prepared([], specs(W5_COLS), [], pv)
    body = rows_body(W5_COLS, cells, flags=NO_METADATA, paging_state=paging,
                     continuous_page=page)
    r = decode_result(body, pv, prep)
    assert isinstance(r, RowsResult)
    assert r.rows == values and r.columns == prep.result_columns
    assert r.paging_state == paging and r.continuous_page == page
    if page is None:
        inline = oracle.driver_result(rows_body(W5_COLS, cells), pv)
        names, rows = oracle.driver_rows(body, pv, inline.column_metadata)
        assert rows == values


def test_last_continuous_page_flag() -> None:
    body = rows_body(W5_COLS[:1], [[enc(INT, 1)]], flags=LAST_CONTINUOUS_PAGE,
                     continuous_page=9)
    r = decode_rows_result(body, 4)
    assert r.continuous_page == 9 and r.last_continuous_page
    assert r.flags == LAST_CONTINUOUS_PAGE | CONTINUOUS_PAGING


def test_unknown_rows_flags_are_ignored() -> None:
    body = rows_body(W5_COLS[:1], [[enc(INT, 1)]], flags=0x0100)
    assert decode_rows_result(body, 4).rows == [(1,)]


def test_no_metadata_with_metadata_changed_is_refused() -> None:
    body = i32(2) + i32(NO_METADATA | 0x0008) + i32(1) + b"\x00\x02id" + i32(0)
    prep = Prepared([], specs(W5_COLS[:1]))
    with pytest.raises(DecodeError, match="metadata_changed"):
        decode_result(body, 5, prep)


def test_no_metadata_needs_prepared() -> None:
    body = rows_body(W5_COLS, [], flags=NO_METADATA)
    with pytest.raises(DecodeError, match="no prepared statement"):
        decode_result(body, 4)


def test_no_metadata_column_count_must_match() -> None:
    prep = Prepared([], specs(W5_COLS[:2]))
    body = rows_body(W5_COLS, [], flags=NO_METADATA)
    with pytest.raises(DecodeError, match="columns_count 5"):
        decode_result(body, 4, prep)


def test_inline_metadata_wins_over_prepared() -> None:
    prep = Prepared([], specs(W5_COLS))
    body = rows_body([("a", "b", "x", TEXT)], [[b"hi"]])
    r = decode_rows_result(body, 4, prep)
    assert r.rows == [("hi",)] and r.column_names == ("x",)
    assert prep._rows_desc is None  # inline metadata never fills the cache


def test_negative_paging_state_length() -> None:
    body = rows_body(W5_COLS[:1], [], paging_state=-1)
    r = decode_rows_result(body, 4)
    assert r.paging_state is None and r.has_more_pages
    with pytest.raises(DecodeError, match="paging_state"):
        decode_result(rows_body(W5_COLS[:1], [], paging_state=-2), 4)
    with pytest.raises(DecodeError, match="paging_state"):
        decode_result(rows_body(W5_COLS[:1], [], paging_state=1000), 4)


# --- rows: cell lengths and counts ---------------------------------------------------------

@pytest.mark.parametrize("pv", [4, 5])
def test_not_set_cells_decode_as_unset(pv: int) -> None:
    body = rows_body(W5_COLS[:2], [[NOT_SET, None], [enc(INT, 3), NOT_SET]])
    r = decode_rows_result(body, pv)
    assert r.rows == [(UNSET, None), (3, UNSET)]


def test_not_set_cell_on_v3_is_an_error() -> None:
    body = rows_body(W5_COLS[:2], [[enc(INT, 1), enc(BIGINT, 2)], [enc(INT, 3), NOT_SET]])
    with pytest.raises(DecodeError) as info:
        decode_result(body, 3)
    err = info.value
    assert err.column == "c_bigint" and "row 1" in str(err) and "v4" in str(err)
    assert err.offset == len(body) - 4


@pytest.mark.parametrize("length", [-3, -100, -(2**31)])
def test_invalid_negative_length(length: int) -> None:
    body = rows_body(W5_COLS[:1], [[enc(INT, 1)], [length]])
    with pytest.raises(DecodeError, match=f"invalid value length {length}") as info:
        decode_result(body, 4)
    assert info.value.column == "c_int" and "row 1" in str(info.value)
    assert info.value.offset == len(body) - 4


def test_value_longer_than_body() -> None:
    body = rows_body(W5_COLS[:1], [[i32(1)]])[:-8] + i32(5) + b"\x00\x00\x00\x01"
    with pytest.raises(DecodeError, match="5 bytes but only 4 remain"):
        decode_result(body, 4)


@pytest.mark.parametrize("count", [2, 1000, 2**31 - 1])
def test_row_count_that_cannot_fit(count: int) -> None:
    body = rows_body(W5_COLS, [], row_count=count)
    with pytest.raises(DecodeError, match="cannot fit"):
        decode_result(body, 4)


def test_negative_row_count() -> None:
    with pytest.raises(DecodeError, match="negative rows_count"):
        decode_result(rows_body(W5_COLS, [], row_count=-1), 4)


def test_rows_without_columns() -> None:
    assert decode_rows_result(rows_body([], []), 4).rows == []
    with pytest.raises(DecodeError, match="no columns"):
        decode_result(rows_body([], [], row_count=3), 4)


@pytest.mark.parametrize("count", [-1, 6, 10**6, 2**31 - 1])
def test_column_count_that_cannot_fit(count: int) -> None:
    body = rows_body(W5_COLS, [], column_count=count, flags=GLOBAL_TABLES_SPEC)
    with pytest.raises(DecodeError):
        decode_result(body, 4)


def test_trailing_bytes_after_rows() -> None:
    cells, _values = w5_rows(2)
    with pytest.raises(DecodeError, match="trailing"):
        decode_result(rows_body(W5_COLS, cells) + b"\x00", 4)


@pytest.mark.parametrize("no_metadata", [False, True])
def test_every_truncation_is_a_decode_error(no_metadata: bool) -> None:
    cells, _values = w5_rows(3, 0.2)
    prep = Prepared([], specs(W5_COLS))
    body = rows_body(W5_COLS, cells, flags=NO_METADATA if no_metadata else 0,
                     paging_state=b"ps")
    decode_result(body, 4, prep)
    for cut in range(len(body)):
        with pytest.raises(DecodeError):
            decode_result(body[:cut], 4, prep)


def test_codec_errors_get_column_context() -> None:
    cols: list[Col] = [("ks", "t", "a", INT), ("ks", "t", "b", TEXT)]
    body = rows_body(cols, [[enc(INT, 1), b"ok"], [enc(INT, 2), b"\xff\xfe"]])
    with pytest.raises(DecodeError) as info:
        decode_result(body, 4)
    err = info.value
    text = str(err)
    assert 'column "b"' in text and "(text)" in text and "row 1" in text
    assert err.column == "b" and err.cql_type == "text"
    assert isinstance(err.__cause__, DecodeError)
    assert err.offset is not None and err.offset >= len(body) - 2


def test_wrong_width_cell() -> None:
    body = rows_body(W5_COLS[:1], [[b"\x00\x00\x01"]])
    with pytest.raises(DecodeError, match='column "c_int"'):
        decode_result(body, 4)


def test_empty_cells() -> None:
    cols: list[Col] = [("k", "t", "i", INT), ("k", "t", "s", TEXT),
                       ("k", "t", "b", parse_type("blob"))]
    r = decode_rows_result(rows_body(cols, [[b"", b"", b""]]), 4)
    assert r.rows == [(None, "", b"")]


# --- rows: values against the driver ---------------------------------------------------------

@pytest.mark.parametrize("type_name,values", SAMPLES)
@pytest.mark.parametrize("pv", [3, 4, 5])
def test_every_sample_type_matches_driver(type_name: str, values: list[object], pv: int) -> None:
    t = parse_type(type_name)
    cols: list[Col] = [("ks", "tbl", "k", INT), ("ks", "tbl", "v", t)]
    cells: list[list[Cell]] = [[enc(INT, i), enc(t, v)] for i, v in enumerate(values)]
    cells.append([enc(INT, 99), None])
    body = rows_body(cols, cells)
    ours = decode_rows_result(body, pv)
    assert ours.column_types == (INT, t)
    _names, rows = oracle.driver_rows(body, pv)
    assert [plain(r) for r in ours.rows] == [oracle.driver_plain(r) for r in rows]
    prep = Prepared([], ours.columns, [], pv)
    again = decode_rows_result(rows_body(cols, cells, flags=NO_METADATA), pv, prep)
    assert again.rows == ours.rows


@pytest.mark.parametrize("key,nrows,null_frac", [("b", 100, 0.0), ("c", 1000, 0.0),
                                                 ("e", 1000, 0.2)])
@pytest.mark.parametrize("prepared", [False, True])
def test_w5_bodies_match_driver(key: str, nrows: int, null_frac: float, prepared: bool) -> None:
    cells, values = w5_rows(nrows, null_frac, seed=ord(key))
    inline = rows_body(W5_COLS, cells, flags=GLOBAL_TABLES_SPEC)
    if prepared:
        prep = Prepared([], specs(W5_COLS))
        body = rows_body(W5_COLS, cells, flags=NO_METADATA)
        r = decode_rows_result(body, 4, prep)
        r2 = decode_rows_result(body, 4, prep)
        assert r2.rows == r.rows
        meta = oracle.driver_result(inline, 4).column_metadata
        _n, rows = oracle.driver_rows(body, 4, meta)
    else:
        r = decode_rows_result(inline, 4)
        _n, rows = oracle.driver_rows(inline, 4)
    assert r.rows == values == rows


def test_w5a_mixed_row_matches_driver() -> None:
    import decimal

    cols: list[Col] = [("peerbench", "t", n, parse_type(s)) for n, s in [
        ("c_int", "int"), ("c_bigint", "bigint"), ("c_double", "double"), ("c_float", "float"),
        ("c_text", "text"), ("c_boolean", "boolean"), ("c_uuid", "uuid"),
        ("c_timestamp", "timestamp"), ("c_decimal", "decimal"), ("c_date", "date")]]
    vals: list[object] = [-5, 2**40, 1.25, 0.5, "hello", True, uuid.UUID(int=12345),
                          datetime.datetime(2030, 1, 2, 3, 4, 5, 6000),
                          decimal.Decimal("-12.3400"), datetime.date(2000, 2, 29)]
    body = rows_body(cols, [[enc(c[3], v) for c, v in zip(cols, vals)]], flags=GLOBAL_TABLES_SPEC)
    r = decode_rows_result(body, 4)
    _n, rows = oracle.driver_rows(body, 4)
    assert r.rows == [tuple(vals)]
    assert [plain(x) for x in r.rows] == [oracle.driver_plain(x) for x in rows]


_CELL_TYPES = [(s, parse_type(s)) for s in ["int", "bigint", "text", "boolean", "double",
                                                 "float", "smallint", "blob", "uuid"]]


@st.composite
def _rows_case(draw: st.DrawFn) -> tuple[list[Col], list[list[Cell]]]:
    ncols = draw(st.integers(1, 6))
    cols: list[Col] = []
    for i in range(ncols):
        _name, t = draw(st.sampled_from(_CELL_TYPES))
        cols.append(("ks", "t", f"c{i}", t))
    values = {
        "int": st.integers(-2**31, 2**31 - 1), "bigint": st.integers(-2**63, 2**63 - 1),
        "smallint": st.integers(-2**15, 2**15 - 1), "text": st.text(max_size=20),
        "boolean": st.booleans(), "double": st.floats(allow_nan=False),
        "float": st.floats(width=32, allow_nan=False), "blob": st.binary(max_size=20),
        "uuid": st.uuids(),
    }
    nrows = draw(st.integers(0, 12))
    cells: list[list[Cell]] = []
    for _r in range(nrows):
        row: list[Cell] = []
        for c in cols:
            if draw(st.integers(0, 9)) == 0:
                row.append(None)
            else:
                row.append(enc(c[3], draw(values[c[3].cql_name])))
        cells.append(row)
    return cols, cells


@given(_rows_case(), st.sampled_from([3, 4, 5]), st.booleans())
def test_random_rows_match_driver(case: tuple[list[Col], list[list[Cell]]], pv: int,
                                  no_metadata: bool) -> None:
    cols, cells = case
    inline = rows_body(cols, cells)
    if no_metadata:
        prep = Prepared([], specs(cols), [], pv)
        r = decode_rows_result(rows_body(cols, cells, flags=NO_METADATA), pv, prep)
    else:
        r = decode_rows_result(inline, pv)
    _n, rows = oracle.driver_rows(inline, pv)
    assert r.rows == rows


@given(st.binary(max_size=80), st.sampled_from([3, 4, 5]))
def test_garbage_after_kind_raises_only_decode_error(tail: bytes, pv: int) -> None:
    prep = Prepared([], specs(W5_COLS[:2]), [], pv)
    for kind in range(1, 6):
        try:
            decode_result(i32(kind) + tail, pv, prep)
        except DecodeError:
            pass


# --- rows: parse-description cache ----------------------------------------------------------

def cached_desc(prep: Prepared) -> object:
    return prep._rows_desc


def test_parse_description_is_cached_on_prepared() -> None:
    prep = Prepared([], specs(W5_COLS))
    cells, _values = w5_rows(2)
    body = rows_body(W5_COLS, cells, flags=NO_METADATA)
    assert cached_desc(prep) is None
    decode_result(body, 4, prep)
    first = cached_desc(prep)
    assert first is not None
    decode_result(body, 4, prep)
    assert cached_desc(prep) is first
    decode_result(body, 4, prep, tz_aware=True)
    assert cached_desc(prep) is not first  # other decode options, other description
    second = cached_desc(prep)
    decode_result(body, 5, prep)
    assert cached_desc(prep) is not second  # other protocol version
    inline = rows_body(W5_COLS, cells)
    third = cached_desc(prep)
    decode_result(inline, 5, prep)
    assert cached_desc(prep) is third


# --- row factories and decode options ------------------------------------------------------------

def test_row_factories() -> None:
    cols: list[Col] = [("k", "t", "id", INT), ("k", "t", "count(*)", BIGINT),
                       ("k", "t", "class", TEXT), ("k", "t", "1st", TEXT),
                       ("k", "t", "id", TEXT), ("k", "t", "Mixed Case", INT),
                       ("k", "t", "", INT)]
    cells: list[list[Cell]] = [[enc(INT, 1), enc(BIGINT, 2), b"c", b"f", b"i", enc(INT, 3),
                                enc(INT, 4)]]
    body = rows_body(cols, cells)
    assert decode_rows_result(body, 4, row_factory=tuple_factory).rows == [
        (1, 2, "c", "f", "i", 3, 4)]
    d = decode_rows_result(body, 4, row_factory=dict_factory).rows[0]
    assert d == {"id": "i", "count(*)": 2, "class": "c", "1st": "f", "Mixed Case": 3, "": 4}
    row = decode_rows_result(body, 4, row_factory=named_tuple_factory).rows[0]
    assert tuple(row) == (1, 2, "c", "f", "i", 3, 4)
    assert row.id == 1 and row.count == 2 and row.Mixed_Case == 3
    assert row[2] == "c" and row[3] == "f"
    again = decode_rows_result(body, 4, row_factory=named_tuple_factory).rows[0]
    assert type(again) is type(row)  # the class is cached


def test_custom_row_factory() -> None:
    seen: list[tuple[str, ...]] = []

    def factory(names: tuple[str, ...], rows: list[tuple[object, ...]]) -> list[Any]:
        seen.append(names)
        return [list(r) for r in rows]

    body = rows_body(W5_COLS[:1], [[enc(INT, 1)]])
    assert decode_rows_result(body, 4, row_factory=factory).rows == [[1]]
    assert seen == [("c_int",)]


def test_tz_aware_timestamps() -> None:
    t = parse_type("timestamp")
    ts = datetime.datetime(2024, 5, 17, 12, 0)
    body = rows_body([("k", "t", "ts", t)], [[enc(t, ts)]])
    assert decode_rows_result(body, 4).rows == [(ts,)]
    aware = decode_rows_result(body, 4, tz_aware=True).rows[0][0]
    assert isinstance(aware, datetime.datetime)
    assert aware == ts.replace(tzinfo=datetime.timezone.utc)


def test_numpy_vectors() -> None:
    np = pytest.importorskip("numpy")
    t = parse_type("vector<float, 3>")
    body = rows_body([("k", "t", "v", t)], [[enc(t, [1.0, 2.0, 3.0])], [None]])
    as_list = decode_rows_result(body, 4).rows
    assert as_list == [([1.0, 2.0, 3.0],), (None,)]
    arr = decode_rows_result(body, 4, numpy_vectors=True).rows[0][0]
    assert isinstance(arr, np.ndarray)
    assert arr.tolist() == [1.0, 2.0, 3.0]


def test_decode_rows_result_refuses_other_kinds() -> None:
    with pytest.raises(DecodeError, match="Rows"):
        decode_rows_result(i32(1), 4)


def test_failed_body_returns_nothing_and_keeps_cache_consistent() -> None:
    prep = Prepared([], specs(W5_COLS))
    cells, values = w5_rows(3)
    good = rows_body(W5_COLS, cells, flags=NO_METADATA)
    bad = good[:-1]
    with pytest.raises(DecodeError):
        decode_result(bad, 4, prep)
    assert decode_rows_result(good, 4, prep).rows == values


# --- the fast row loops agree with the checked loop ---------------------------------------------

_ODD_CELLS: dict[str, list[Cell]] = {
    "int": [b"", b"\x00\x01", b"\x00" * 5], "bigint": [b"", b"\x01"], "double": [b""],
    "float": [b"\x00\x00"], "boolean": [b"", b"\x02", b"\x00\x00"], "smallint": [b"\x01"],
    "text": [b"", b"\xc3", b"\xff"], "blob": [b""], "uuid": [b"", b"\x00" * 15],
}


@st.composite
def _odd_rows_case(draw: st.DrawFn) -> tuple[list[Col], list[list[Cell]], int]:
    cols, cells = draw(_rows_case())
    odd = draw(st.integers(0, 3))
    for _k in range(odd):
        if not cells:
            break
        r = draw(st.integers(0, len(cells) - 1))
        c = draw(st.integers(0, len(cols) - 1))
        name = cols[c][3].cql_name
        choice: Cell = draw(st.sampled_from(_ODD_CELLS[name] + [None, NOT_SET, -3]))
        cells[r][c] = choice
    return cols, cells, draw(st.sampled_from([3, 4, 5]))


def _outcome(fn: Any) -> object:
    try:
        return ("ok", fn())
    except DecodeError as exc:
        return ("error", str(exc), exc.column, exc.offset)


@given(_odd_rows_case())
def test_fast_loops_match_checked_loop(case: tuple[list[Col], list[list[Cell]], int]) -> None:
    from cqlcodec.protocol.rows import build_rows_desc, decode_checked, decode_rows

    cols, cells, pv = case
    body = rows_body(cols, cells, flags=NO_METADATA, kind=False)
    pos = 8 + 4  # flags, columns_count, rows_count
    nrows = len(cells)
    desc = build_rows_desc(specs(cols), pv, None, 0)

    def checked() -> object:
        rows: list[tuple[object, ...]] = [()] * nrows
        end = decode_checked(body, pos, len(body), 0, nrows, desc, rows)
        return rows, end

    def fast() -> object:
        return decode_rows(body, pos, len(body), nrows, desc)

    assert _outcome(fast) == _outcome(checked)


def test_all_fixed_columns_with_nulls_and_empties() -> None:
    cols: list[Col] = [("k", "t", "a", INT), ("k", "t", "b", BIGINT),
                       ("k", "t", "c", parse_type("boolean"))]
    cells: list[list[Cell]] = []
    expected: list[tuple[object, ...]] = []
    for i in range(50):
        row: list[Cell] = [enc(INT, i), enc(BIGINT, -i), enc(cols[2][3], i % 2 == 0)]
        vals: list[object] = [i, -i, i % 2 == 0]
        if i % 7 == 3:
            row[1], vals[1] = None, None
        if i % 11 == 5:
            row[0], vals[0] = b"", None
        cells.append(row)
        expected.append(tuple(vals))
    r = decode_rows_result(rows_body(cols, cells), 4)
    assert r.rows == expected
    _n, rows = oracle.driver_rows(rows_body(cols, [[c if c != b"" else None for c in row]
                                                   for row in cells]), 4)
    assert rows == expected


def i64(v: int) -> bytes:
    return v.to_bytes(8, "big", signed=True)


_CONVERTED = [parse_type(s) for s in ["int", "uuid", "timeuuid", "timestamp", "date", "text"]]
_CONVERTED_CELLS: dict[str, list[Cell]] = {
    "uuid": [bytes(range(16)), b"\xff" * 16, b"", None],
    "timeuuid": [uuid.uuid1(node=1, clock_seq=2).bytes, b"", None],
    "timestamp": [i64(0), i64(1715949296789), i64(-62135596800000), i64(253402300799999),
                  i64(-62135596800001), i64(253402300800000), i64(-2**63), i64(2**63 - 1),
                  b"", None],
    "date": [u32(2**31), u32(2**31 - 719162), u32(2**31 + 2932896), u32(2**31 - 719163),
             u32(2**31 + 2932897), u32(0), u32(2**32 - 1), b"", None],
}


@pytest.mark.parametrize("tz_aware", [False, True])
@pytest.mark.parametrize("no_metadata", [False, True])
def test_uuid_timestamp_date_rows_decode_as_their_codecs(tz_aware: bool, no_metadata: bool) -> None:
    """Rows of uuid/timeuuid/timestamp/date columns (edge values: the ends of datetime's and
    date's ranges and beyond, empty and null cells) decode exactly as each value's codec does;
    the interpreted build converts these columns inline in its generated row loop."""
    cols: list[Col] = [("ks", "t", f"c{i}", t) for i, t in enumerate(_CONVERTED)]
    rng = random.Random(7)
    cells: list[list[Cell]] = []
    for r in range(60):
        row: list[Cell] = [i32(r)]
        for t in _CONVERTED[1:-1]:
            row.append(rng.choice(_CONVERTED_CELLS[t.cql_name]))
        row.append(b"x" * (r % 3))
        cells.append(row)
    if no_metadata:
        prep = Prepared([], specs(cols), [], 4)
        result = decode_rows_result(rows_body(cols, cells, flags=NO_METADATA), 4, prep,
                                    tz_aware=tz_aware)
    else:
        result = decode_rows_result(rows_body(cols, cells), 4, tz_aware=tz_aware)
    expected = [tuple(t.deserialize(c, tz_aware=tz_aware) if isinstance(c, bytes) else None
                      for t, c in zip(_CONVERTED, row)) for row in cells]
    assert result.rows == expected
    for got, want in zip(result.rows, expected):
        assert [type(v) for v in got] == [type(v) for v in want]
