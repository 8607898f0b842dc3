"""The text formats alone, without a server: every CQL type's values (at any depth, over
each type's whole range) written as ``unload`` writes CSV and JSON lines and read back as
``load`` reads them must bind to the same bytes. The kinds come from cqlcodec's registry
(:data:`cqlcodec.kinds.SCALAR_NAMES`): a kind without a strategy here fails the test."""

from __future__ import annotations

import csv
import datetime
import decimal
import io
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hotwire import rows_body
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cqlcodec
from cqlcodec import Date, Duration, Time, kinds, list_of, map_of, scalar_type, set_of, tuple_of, user_type, vector_of
from cqlcodec.types.model import CqlType

pa = pytest.importorskip("pyarrow")

from cqlcodec.cli.unload_files import open_output, write_csv_stream, write_jsonl  # noqa: E402
from cqlcodec.columnar.bind_input import arrow_values  # noqa: E402
from cqlcodec.driver.sources import SourcePart, open_source  # noqa: E402

K = kinds
NOT_TEXT_KINDS = {K.EMPTY: "no CQL syntax creates a column of it"}


def _duration(sign: int, months: int, days: int, nanos: int) -> Duration:
    return Duration(sign * months, sign * days, sign * nanos)


def _decimal(unscaled: int, scale: int) -> decimal.Decimal:
    return decimal.Decimal(unscaled).scaleb(-scale)


_TEXTS = st.text(st.characters(blacklist_categories=["Cs"]), max_size=12) | st.sampled_from(
    ["", "null", "NULL", '"', '""', "a,b", "line\nbreak", "cr\rlf\r\n", "NaN", "[1, 2]",
     "{'a': 1}", "0x00", "𝄞", " "])
# every scalar kind's values over its whole range, with its edges drawn often
SCALARS: dict[int, st.SearchStrategy[Any]] = {
    K.ASCII: st.text(st.characters(max_codepoint=127, blacklist_categories=["Cs"]),
                     max_size=8) | st.sampled_from(["", '"', ",", "\n"]),
    K.TEXT: _TEXTS,
    K.BIGINT: st.integers(-(2**63), 2**63 - 1),
    K.COUNTER: st.integers(-(2**63), 2**63 - 1),
    K.INT: st.integers(-(2**31), 2**31 - 1),
    K.SMALLINT: st.integers(-(2**15), 2**15 - 1),
    K.TINYINT: st.integers(-128, 127),
    K.BOOLEAN: st.booleans(),
    K.DOUBLE: st.floats() | st.sampled_from([math.nan, math.inf, -math.inf, -0.0, 5e-324]),
    K.FLOAT: st.floats(width=32) | st.sampled_from([math.nan, math.inf, -math.inf, -0.0]),
    K.BLOB: st.binary(max_size=12),
    K.UUID: st.uuids(),
    K.TIMEUUID: st.uuids(version=1),
    K.VARINT: st.integers(-(2**300), 2**300) | st.sampled_from([2**63, -(2**63) - 1, 10**76]),
    K.DECIMAL: st.builds(_decimal, st.integers(-(2**200), 2**200), st.integers(-60, 60)),
    K.INET: st.ip_addresses().map(str),
    K.TIMESTAMP: st.integers(-(2**63), 2**63 - 1) | st.sampled_from(
        [-62_135_596_800_000, -62_135_596_800_001, 253_402_300_799_999, 253_402_300_800_000])
    | st.datetimes(timezones=st.just(datetime.timezone.utc)).map(
        lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000)),
    K.DATE: st.integers(-(2**31), 2**31 - 1).map(Date) | st.dates()
    | st.sampled_from([Date(-719_163), Date(2_932_897)]),
    K.TIME: st.integers(0, 86_399_999_999_999).map(Time),
    K.DURATION: st.builds(_duration, st.sampled_from([1, -1]), st.integers(0, 2**31 - 1),
                          st.integers(0, 2**31 - 1), st.integers(0, 2**63 - 1)),
}
NO_KEYS = {K.DURATION, K.COUNTER}  # no set element, map key (and no counter in collections)


def test_every_scalar_kind_has_values() -> None:
    assert set(SCALARS) | set(NOT_TEXT_KINDS) == set(K.SCALAR_NAMES)


def _udt(fields: list[CqlType]) -> CqlType:
    return user_type("ks", "u", [(f"f{i}", t) for i, t in enumerate(fields)])


def types() -> st.SearchStrategy[CqlType]:
    leaves = st.sampled_from([scalar_type(k) for k in SCALARS if k != K.COUNTER])
    keys = st.sampled_from([scalar_type(k) for k in SCALARS if k not in NO_KEYS])

    def extend(inner: st.SearchStrategy[CqlType]) -> st.SearchStrategy[CqlType]:
        return st.one_of(inner.map(list_of), keys.map(set_of),
                         st.tuples(keys, inner).map(lambda kv: map_of(*kv)),
                         st.lists(inner, min_size=1, max_size=3).map(lambda ts: tuple_of(*ts)),
                         st.lists(inner, min_size=1, max_size=3).map(_udt),
                         st.tuples(inner, st.integers(1, 3)).map(lambda a: vector_of(*a)))

    return st.one_of(st.sampled_from([scalar_type(k) for k in SCALARS]),
                     st.recursive(leaves, extend, max_leaves=4))


def values(t: CqlType) -> st.SearchStrategy[Any]:
    """Values of ``t`` as a user binds them (maps as lists of pairs)."""
    kind = t.kind
    if kind in SCALARS:
        return SCALARS[kind]
    subs = t.subtypes
    if kind == K.LIST:
        return st.lists(values(subs[0]), max_size=3)
    if kind == K.SET:
        return st.lists(values(subs[0]), max_size=3, unique_by=lambda v: subs[0].serialize(v))
    if kind == K.MAP:
        return st.lists(st.tuples(values(subs[0]), values(subs[1])), max_size=3,
                        unique_by=lambda kv: subs[0].serialize(kv[0]))
    if kind == K.VECTOR:
        return st.lists(values(subs[0]), min_size=t.dimension, max_size=t.dimension)
    return st.tuples(*[st.none() | values(s) for s in subs])


@st.composite
def columns(draw: st.DrawFn) -> tuple[CqlType, list[Any]]:
    t = draw(types())
    return t, draw(st.lists(st.none() | values(t), min_size=1, max_size=4))


def batch_of(t: CqlType, rows: list[Any]) -> Any:
    """A ColumnBatch of a key ``k`` and a column ``c`` as the server would send it (a
    row has its key: a CSV line of one null would be an empty line)."""
    key = scalar_type(K.INT)
    cells = [[key.serialize(i), None if v is None else t.serialize(v)]
             for i, v in enumerate(rows)]
    cols = [("ks", "t", "k", key), ("ks", "t", "c", t)]
    return cqlcodec.decode_columns(rows_body(cols, cells), 4)


def read_back(path: Path, fmt: str, t: CqlType) -> list[Any]:
    """The values ``load`` binds for column ``c`` of the file."""
    out: list[Any] = []
    for chunk in open_source(SourcePart(str(path), fmt), 100, {"c": t.cql_name}, {"c": t}):
        data = chunk.data
        column = data["c"] if isinstance(data, dict) else data.column("c")
        out += column if isinstance(column, list) else arrow_values(column, t)
    return out


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(column=columns())
def test_values_survive_the_text_formats(tmp_path: Path, fmt: str,
                                         column: tuple[CqlType, list[Any]]) -> None:
    t, rows = column
    batch = batch_of(t, rows)
    path = tmp_path / f"part.{fmt}"
    with open_output(pa, str(path), None) as sink:
        written = (write_csv_stream if fmt == "csv" else write_jsonl)(pa, iter([batch]), sink)
    assert written == len(rows)
    back = read_back(path, fmt, t)
    want = [None if v is None else t.serialize(one_nan(v, t)) for v in batch.column(1).to_pylist()]
    got = [None if v is None else t.serialize(one_nan(v, t)) for v in back]
    assert got == want, path.read_text("utf-8")


def one_nan(v: Any, t: CqlType) -> Any:
    """``v`` (of CQL type ``t``) with every NaN the same NaN (text keeps no NaN's sign or
    payload, as in cqlsh and dsbulk, Java's NaN) and sets in one order."""
    t = t.unwrapped()
    if v is None:
        return None
    if isinstance(v, float) and math.isnan(v):
        return math.nan
    subs = t.subtypes
    if t.kind == K.MAP:
        items = v.items() if isinstance(v, Mapping) else v
        return [(one_nan(k, subs[0]), one_nan(x, subs[1])) for k, x in items]
    if t.kind == K.SET:  # a set's order: the wire's here, the server sorts its own
        return sorted((one_nan(x, subs[0]) for x in v), key=subs[0].serialize)
    if t.kind in (K.LIST, K.VECTOR):
        return [one_nan(x, subs[0]) for x in v]
    if t.kind == K.UDT and isinstance(v, Mapping):
        return {n: one_nan(v.get(n), s) for n, s in t.fields}
    if t.kind in (K.TUPLE, K.UDT):
        return tuple(one_nan(x, s) for x, s in zip(v, subs))
    return v


def test_csv_keeps_empty_text_apart_from_null(tmp_path: Path) -> None:
    t = scalar_type(K.TEXT)
    path = tmp_path / "part.csv"
    with open_output(pa, str(path), None) as sink:
        write_csv_stream(pa, iter([batch_of(t, ["", None, "x"])]), sink)
    assert path.read_text("utf-8") == '"k","c"\n0,""\n1,\n2,"x"\n'
    assert read_back(path, "csv", t) == ["", None, "x"]


def test_csv_and_jsonl_write_years_outside_1_to_9999_as_java_does(tmp_path: Path) -> None:
    date, stamp = scalar_type(K.DATE), scalar_type(K.TIMESTAMP)
    rows = [[Date(-1_000_000), -62_135_596_800_000], [Date(5_000_000), 2**63 - 1]]
    body = rows_body([("ks", "t", "d", date), ("ks", "t", "s", stamp)],
                     [[date.serialize(d), stamp.serialize(s)] for d, s in rows])
    batch = cqlcodec.decode_columns(body, 4)
    with open_output(pa, str(tmp_path / "a.csv"), None) as sink:
        write_csv_stream(pa, iter([batch]), sink)
    with open_output(pa, str(tmp_path / "a.jsonl"), None) as sink:
        write_jsonl(pa, iter([batch]), sink)
    assert (tmp_path / "a.csv").read_text() == (
        '"d","s"\n"-0768-02-04","0001-01-01 00:00:00.000Z"\n'
        '"+15659-07-15","+292278994-08-17 07:12:55.807Z"\n')
    assert (tmp_path / "a.jsonl").read_text() == (
        '{"d":"-0768-02-04","s":"0001-01-01T00:00:00.000Z"}\n'
        '{"d":"+15659-07-15","s":"+292278994-08-17T07:12:55.807Z"}\n')


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_set_elements_keep_the_servers_order(tmp_path: Path, fmt: str) -> None:
    """Per-element write times (``unload --writetime``) follow the server's order of a
    set's elements, so the text keeps it (a Python set's order is its hashes')."""
    t = cqlcodec.parse_type("set<text>")
    words = [f"w{i:02d}" for i in range(40)]
    path = tmp_path / f"part.{fmt}"
    with open_output(pa, str(path), None) as sink:
        (write_csv_stream if fmt == "csv" else write_jsonl)(pa, iter([batch_of(t, [words])]),
                                                            sink)
    text = path.read_text("utf-8")
    if fmt == "csv":
        cell = list(csv.reader(io.StringIO(text)))[1][1]
    else:
        cell = json.dumps(json.loads(text)["c"])
    assert json.loads(cell) == words
