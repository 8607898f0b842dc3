"""Prepared.bind_columnar: many rows bound from columns, against Prepared.bind row by row.

The contract: for any columns, ``bind_columnar(columns)[i]`` has exactly the values and
routing key of ``bind`` given row ``i`` by name, and a failure is the BindError ``bind``
raises for the first failing row (and within it the first failing column), naming the
row. Typed arrays (numpy, pyarrow, polars, pandas, cqlcodec columns) are encoded in
bulk; the results must not differ. pyarrow, polars and pandas are optional here.
"""

from __future__ import annotations

import datetime
import random
from typing import Any

import numpy as np
import pytest
from fuzz.bodies import gen_rows_body, random_columns

import cqlcodec
from cqlcodec import BindError, BindTypeError, BindValueError, ColumnSpec, Prepared, parse_type

COLUMNS = [("k", "int"), ("b", "bigint"), ("s", "smallint"), ("ti", "tinyint"), ("f", "float"),
           ("d", "double"), ("t", "text"), ("ts", "timestamp"), ("v", "vector<float, 3>"),
           ("vd", "vector<double, 2>"), ("vi", "vector<int, 2>"), ("bo", "boolean"), ("dt", "date"),
           ("tm", "time"), ("c", "counter")]


def prepared(cols: list[tuple[str, str]] = COLUMNS, pk: tuple[int, ...] = (0,),
             protocol_version: int = 4) -> Prepared:
    return Prepared([ColumnSpec("ks", "t", n, parse_type(c)) for n, c in cols], (), pk,
                    protocol_version)


def by_row(p: Prepared, rows: list[dict[str, Any]]) -> list[Any]:
    return [p.bind(r) for r in rows]


def assert_same(p: Prepared, columns: Any, rows: list[dict[str, Any]]) -> None:
    """bind_columnar(columns) equals bind(row) for each row (values and routing keys)."""
    got = p.bind_columnar(columns)
    want = by_row(p, rows)
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.values == w.values, f"row {i}: {g.values} != {w.values}"
        assert g.prepared is p
        if p.pk_indexes and w.values[p.pk_indexes[0]] is not None:
            assert g.routing_key == w.routing_key


def routing(b: Any) -> Any:
    try:
        return b.routing_key
    except BindValueError as exc:  # a null partition-key value: no routing key
        return str(exc)


def outcome(call: Any) -> Any:
    try:
        return [(b.values, routing(b)) for b in call()]
    except BindError as exc:
        return (type(exc), exc.column, exc.row, str(exc).split(": ", 1)[-1])


def expected_outcome(p: Prepared, rows: list[dict[str, Any]]) -> Any:
    out = []
    for i, r in enumerate(rows):
        try:
            b = p.bind(r)
        except BindError as exc:
            return (type(exc), exc.column, i, str(exc))
        out.append((b.values, routing(b)))
    return out


# --------------------------------------------------------------------------- numpy

def numpy_columns(n: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Typed numpy columns (bulk paths) and the same rows as Python values for bind."""
    rng = np.random.default_rng(7)
    ms = rng.integers(-2**40, 2**40, n)
    cols: dict[str, Any] = {
        "k": np.arange(n, dtype=np.int32),
        "b": np.ma.masked_array(rng.integers(-2**62, 2**62, n), mask=np.arange(n) % 3 == 1),
        "s": rng.integers(-2**15, 2**15, n).astype(np.int16),
        "ti": rng.integers(-128, 128, n, dtype=np.int64),
        "f": rng.standard_normal(n) * 1e30,
        "d": rng.standard_normal(n).astype(np.float32),
        "t": [f"text {i}" if i % 4 else None for i in range(n)],
        "ts": ms.astype("M8[ms]"),
        "v": rng.standard_normal((n, 3)).astype(np.float32),
        "vd": rng.standard_normal((n, 2)),
        "vi": rng.integers(-2**31, 2**31, (n, 2)),
        "bo": np.arange(n) % 2 == 0,
        "dt": rng.integers(-10**6, 10**6, n).astype("M8[D]"),
        "tm": rng.integers(0, 86_400 * 10**9, n).astype("m8[ns]"),
        "c": np.arange(n, dtype=np.uint32),
    }
    rows = []
    for i in range(n):
        b = cols["b"]
        days = int(cols["dt"][i].astype("i8"))
        rows.append({
            "k": int(cols["k"][i]), "b": None if b.mask[i] else int(b.data[i]), "s": int(cols["s"][i]),
            "ti": int(cols["ti"][i]), "f": float(cols["f"][i]), "d": float(cols["d"][i]),
            "t": cols["t"][i], "ts": int(ms[i]), "v": cols["v"][i].tolist(), "vd": cols["vd"][i].tolist(),
            "vi": cols["vi"][i].tolist(), "bo": bool(cols["bo"][i]), "dt": cqlcodec.Date(days),
            "tm": int(cols["tm"][i].astype("i8")), "c": int(cols["c"][i])})
    return cols, rows


def test_numpy_columns_bind_like_rows() -> None:
    cols, rows = numpy_columns(50)
    assert_same(prepared(), cols, rows)


def test_lists_bind_like_rows() -> None:
    _cols, rows = numpy_columns(20)
    p = prepared()
    assert_same(p, {name: [r[name] for r in rows] for name, _t in COLUMNS}, rows)


def test_missing_columns_are_unset_and_unknown_names_ignored() -> None:
    p = prepared()
    got = p.bind_columnar({"k": [1, 2], "t": ["a", None], "nope": [0, 0]})
    assert [b.values for b in got] == [p.bind({"k": 1, "t": "a"}).values,
                                       p.bind({"k": 2, "t": None}).values]
    assert got[0].values[1] is cqlcodec.UNSET


def test_timestamps_floor_to_milliseconds_and_nat_is_null() -> None:
    p = prepared([("k", "int"), ("ts", "timestamp")])
    micros = np.array(["2020-01-01T00:00:00.001999", "1969-12-31T23:59:59.999001", "NaT",
                       "1900-01-01"], "M8[us]")
    got = p.bind_columnar({"k": [0, 1, 2, 3], "ts": micros})
    want = [datetime.datetime(2020, 1, 1, 0, 0, 0, 1999), datetime.datetime(1969, 12, 31, 23, 59, 59, 999001),
            None, datetime.datetime(1900, 1, 1)]
    assert [b.values[1] for b in got] == [p.bind([i, w]).values[1] for i, w in enumerate(want)]
    for unit in ("s", "ns", "D", "h"):
        arr = np.array([0, 1, -1, 12345], "i8").astype(f"M8[{unit}]")
        py = [datetime.datetime(1970, 1, 1) + datetime.timedelta(microseconds=int(x) // 1000)
              if unit == "ns" else x.astype("M8[us]").item() for x in arr]
        got = p.bind_columnar({"k": [0, 1, 2, 3], "ts": arr})
        assert [b.values[1] for b in got] == [p.bind([0, v]).values[1] for v in py], unit


def test_vector_nulls_from_a_masked_matrix() -> None:
    p = prepared([("k", "int"), ("v", "vector<float, 3>")])
    m = np.ma.masked_array(np.ones((3, 3), np.float32),
                           mask=np.array([[0, 0, 0], [1, 1, 1], [0, 0, 0]], bool))
    got = p.bind_columnar({"k": [0, 1, 2], "v": m})
    assert got[1].values[1] is None and got[0].values == p.bind([0, [1.0, 1.0, 1.0]]).values
    m[2, 1] = np.ma.masked  # one null element: the vector codec refuses it, for that row
    with pytest.raises(BindError) as info:
        p.bind_columnar({"k": [0, 1, 2], "v": m})
    assert info.value.row == 2 and info.value.column == "v"


# --------------------------------------------------------------------------- errors

@pytest.mark.parametrize("column,values,row,cls", [
    ("k", np.array([1, 2, 2**40]), 2, BindValueError),
    ("s", np.array([1, 2**20, 3]), 1, BindValueError),
    ("k", np.array([1.0, 2.0, 3.0]), 0, BindTypeError),
    ("b", np.array([True, False, True]), 0, BindTypeError),
    ("f", np.array([0.0, 1e300, 1.0]), 1, BindValueError),
    ("v", np.zeros((3, 4), np.float32), 0, BindValueError),
    ("vi", np.array([[1, 2], [3, 2**40], [0, 0]]), 1, BindValueError),
    ("vi", np.zeros((3, 2), np.float64), 0, BindTypeError),
    ("t", ["a", "b", 5], 2, BindTypeError),
    ("tm", np.array([0, 86_400 * 10**9, 0], "m8[ns]"), 1, BindValueError),
])
def test_errors_name_the_column_and_the_row(column: str, values: Any, row: int,
                                            cls: type[BindError]) -> None:
    p = prepared()
    with pytest.raises(cls) as info:
        p.bind_columnar({"k": [0, 1, 2], column: values} if column != "k" else {column: values})
    err: BindError = info.value
    assert err.row == row and err.column == column
    assert str(err).startswith(f"row {row}: ")


def test_the_first_failing_row_wins_then_the_first_column() -> None:
    p = prepared([("k", "int"), ("a", "int"), ("t", "text")])
    rows: list[dict[str, Any]] = [{"k": 0, "a": 1, "t": "x"}, {"k": 1, "a": 1, "t": 5},
                                  {"k": 2, "a": "no", "t": "y"}]
    cols = {"k": [0, 1, 2], "a": [1, 1, "no"], "t": ["x", 5, "y"]}
    assert outcome(lambda: p.bind_columnar(cols))[:3] == expected_outcome(p, rows)[:3]
    cols = {"k": [0, 1, 2], "a": [1, "no", 1], "t": ["x", 5, "y"]}
    err = outcome(lambda: p.bind_columnar(cols))
    assert err[1:3] == ("a", 1)


def test_structural_errors() -> None:
    p = prepared([("k", "int"), ("a", "int")])
    with pytest.raises(BindValueError, match="rows"):
        p.bind_columnar({"k": [0, 1], "a": [1]})
    with pytest.raises(BindValueError, match="partition key"):
        p.bind_columnar({"a": [1]})
    with pytest.raises(BindValueError, match="v3"):
        prepared([("k", "int"), ("a", "int")], protocol_version=3).bind_columnar({"k": [1]})
    with pytest.raises(BindTypeError, match="column of values"):
        p.bind_columnar({"k": 5})
    with pytest.raises(BindValueError) as info:
        p.bind_columnar({"k": [0, cqlcodec.UNSET]})
    assert info.value.row == 1
    with pytest.raises(TypeError):
        p.bind_columnar(42)
    assert p.bind_columnar({}) == []


def test_encryption_policy_binds_like_rows() -> None:
    class Xor:
        def contains_column(self, column: tuple[str, str, str]) -> bool:
            return column[2] == "a"

        def column_type(self, column: tuple[str, str, str]) -> cqlcodec.CqlType:
            return parse_type("int")

        def encrypt(self, column: tuple[str, str, str], data: bytes) -> bytes:
            return bytes(b ^ 0x5A for b in data)

        def decrypt(self, column: tuple[str, str, str], data: bytes) -> bytes:
            return bytes(b ^ 0x5A for b in data)

    p = Prepared([ColumnSpec("ks", "t", "k", parse_type("int")), ColumnSpec("ks", "t", "a", parse_type("blob"))],
                 (), [0], 4, column_encryption_policy=Xor())
    assert_same(p, {"k": np.arange(3), "a": np.array([5, 6, 7])},
                [{"k": i, "a": v} for i, v in zip(range(3), [5, 6, 7])])


# --------------------------------------------------------------------------- random schemas

@pytest.mark.parametrize("seed", range(40))
def test_random_schemas_against_bind(seed: int) -> None:
    """Values decoded from random RESULT bodies, bound column-wise (as lists and as the
    decoded ColumnBatch itself) and row-wise: the same values, or the same first error."""
    rng = random.Random(seed)
    pv = rng.choice([4, 5])
    cols = random_columns(rng, rng.choice([1, 2, 4]), "ks", "t")
    body = gen_rows_body(rng, pv, cols, max_rows=8).data
    try:
        result = cqlcodec.decode_result(body, pv)
        batch = cqlcodec.decode_columns(body, pv)
    except cqlcodec.DecodeError:
        pytest.skip("a body the decoders refuse")
    assert isinstance(result, cqlcodec.RowsResult)
    specs = [ColumnSpec(ks, t, name, typ) for ks, t, name, typ in cols]
    p = Prepared(specs, (), [0], pv)
    names = [c.name for c in specs]
    rows = [dict(zip(names, r)) for r in result.rows]
    want = expected_outcome(p, rows)
    as_lists = {n: [r[n] for r in rows] for n in names}
    if not rows:
        assert p.bind_columnar(as_lists) == []
        return
    assert outcome(lambda: p.bind_columnar(as_lists)) == _comparable(want)
    assert outcome(lambda: p.bind_columnar(batch)) == _comparable(want)


def _comparable(want: Any) -> Any:
    if isinstance(want, tuple):
        return (want[0], want[1], want[2], want[3])
    return want


# --------------------------------------------------------------------------- other libraries

def test_pyarrow_arrays_with_nulls() -> None:
    pa = pytest.importorskip("pyarrow")
    p = prepared([("k", "int"), ("b", "bigint"), ("ts", "timestamp"), ("dt", "date"), ("tm", "time"),
                  ("v", "vector<float, 2>"), ("t", "text"), ("bo", "boolean")])
    ts = [datetime.datetime(2020, 1, 1, 1, 2, 3, 4000), None, datetime.datetime(1950, 5, 5)]
    dates = [datetime.date(2000, 1, 1), datetime.date(1800, 1, 1), None]
    times = [datetime.time(1, 2, 3, 4), None, datetime.time(23, 59, 59, 999999)]
    vec = [[1.0, 2.0], None, [3.5, -1.0]]
    cols = {
        "k": pa.chunked_array([pa.array([0, 1], pa.int32()), pa.array([2], pa.int32())]),
        "b": pa.array([None, 5, 6], pa.int64()),
        "ts": pa.array(ts, pa.timestamp("us", tz="UTC")),
        "dt": pa.array(dates, pa.date32()),
        "tm": pa.array(times, pa.time64("us")),
        "v": pa.array(vec, pa.list_(pa.float32(), 2)),
        "t": pa.array(["a", None, "ü"]),
        "bo": pa.array([True, None, False]),
    }
    rows = [{"k": i, "b": [None, 5, 6][i], "ts": ts[i], "dt": dates[i], "tm": times[i], "v": vec[i],
             "t": ["a", None, "ü"][i], "bo": [True, None, False][i]} for i in range(3)]
    assert_same(p, cols, rows)
    assert_same(p, pa.table(cols), rows)


def test_polars_and_pandas_series() -> None:
    pl = pytest.importorskip("polars")
    pd = pytest.importorskip("pandas")
    p = prepared([("k", "int"), ("d", "double"), ("t", "text"), ("v", "vector<float, 2>")])
    rows: list[dict[str, Any]] = [{"k": 0, "d": 1.5, "t": "x", "v": [1.0, 2.0]},
                                  {"k": 1, "d": None, "t": None, "v": [3.0, 4.0]}]
    frame = pl.DataFrame({"k": [0, 1], "d": [1.5, None], "t": ["x", None]}).with_columns(
        pl.Series("v", [[1.0, 2.0], [3.0, 4.0]], dtype=pl.Array(pl.Float32, 2)))
    assert_same(p, frame, rows)
    pdf = pd.DataFrame({"k": [0, 1], "d": [1.5, float("nan")], "t": ["x", None],
                        "v": [np.array([1.0, 2.0]), np.array([3.0, 4.0])]})
    nan_rows = [dict(r, d=float("nan") if r["d"] is None else r["d"]) for r in rows]
    got = p.bind_columnar(pdf)
    assert [b.values for b in got] == [b.values for b in by_row(p, nan_rows)]
    nullable = pd.Series([1, None], dtype="Int64")
    assert [b.values[0] for b in prepared([("k", "bigint")], pk=()).bind_columnar({"k": nullable})] == \
        [b"\x00" * 7 + b"\x01", None]


def test_a_decoded_batch_binds_back() -> None:
    cols, rows = numpy_columns(30)
    p = prepared()
    bound = p.bind_columnar(cols)
    from hotwire import rows_body
    cells: list[list[Any]] = [list(b.values) for b in bound]
    body = rows_body([("ks", "t", c.name, c.type) for c in p.bind_columns], cells)
    batch = cqlcodec.decode_columns(body, 4)
    again = p.bind_columnar(batch)
    assert [b.values for b in again] == [b.values for b in bound]


def test_nulls_bind_as_unset_outside_the_partition_key() -> None:
    """With nulls_unset a null is UNSET (bulk columns and value by value); the partition
    key's null stays null (no routing key); everything else is as bind gives it."""
    from cqlcodec.columnar.bind import ColumnarBinder

    p = prepared([("k", "int"), ("b", "bigint"), ("t", "text"), ("l", "list<int>")])
    columns = {"k": [1, None, 3], "b": np.ma.MaskedArray([1, 2, 3], mask=[False, True, False]),
               "t": ["x", None, ""], "l": [None, [1], []]}
    plain = ColumnarBinder(p, columns).bind_rows(0, 3)
    unset = ColumnarBinder(p, columns, nulls_unset=True).bind_rows(0, 3)
    for a, b in zip(plain, unset):
        assert [cqlcodec.UNSET if v is None and i else v for i, v in enumerate(a.values)] \
            == list(b.values)
    assert unset[1].values[0] is None and unset[1].values[1] is cqlcodec.UNSET
    assert unset[2].values[2] == b"" and unset[0].values[3] is cqlcodec.UNSET
    with pytest.raises(ValueError, match="protocol v3 has no UNSET"):
        ColumnarBinder(prepared([("k", "int")], protocol_version=3), {"k": [1]}, True)
