"""Encoding at the boundaries: nothing is silently truncated or wrapped.

Every encoder is driven across its limits (hypothesis around each boundary plus
the boundary values themselves) through every path a value can take: the scalar
codec, an element of a collection, a vector's fast path, a numpy array, and a
prepared statement's bind.  Inside the range the value must round-trip exactly;
outside it the result must be EncodeValueError (EncodeTypeError for a wrong
Python type; BindValueError/BindTypeError through bind) — never a wrapped or
truncated value and never another exception type.  mypyc's native integers wrap
or are undefined on overflow in C, so these checks matter most for the compiled
build.
"""

from __future__ import annotations

import datetime
import decimal
import math
import struct
import uuid
from collections.abc import Callable

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import cqlcodec
from cqlcodec import CqlType, list_of, map_of, scalar_type, set_of, tuple_of, user_type, vector_of
from cqlcodec import kinds as K

np = pytest.importorskip("numpy")

INT_KINDS: dict[int, int] = {K.TINYINT: 8, K.SMALLINT: 16, K.INT: 32, K.BIGINT: 64, K.COUNTER: 64}


def _bits_range(bits: int) -> tuple[int, int]:
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def _near_limits(bits: int) -> st.SearchStrategy[int]:
    lo, hi = _bits_range(bits)
    edges = [lo, hi, lo - 1, hi + 1, 2 * hi + 1, 2 * hi + 2, -2 * hi - 2, 1 << 64, -(1 << 64),
             (1 << 63), -(1 << 63) - 1, 10**30]
    return st.one_of(st.sampled_from(edges), st.integers(lo - 300, lo + 300),
                     st.integers(hi - 300, hi + 300), st.integers(-(1 << 130), 1 << 130))


def _prepared(t: CqlType) -> cqlcodec.Prepared:
    return cqlcodec.Prepared([cqlcodec.ColumnSpec("ks", "t", "c", t)])


def _paths(t: CqlType) -> list[tuple[str, CqlType, Callable[[object], object]]]:
    """(name, type to decode with, encoder) for each path a scalar value can take."""
    lt = list_of(t)
    st_ = set_of(t)
    mt = map_of(t, t)
    tt = tuple_of(t, t)
    ut = user_type("ks", "bounds", [("f", t)])
    vt = vector_of(t, 3)
    p = _prepared(t)
    return [
        ("serialize", t, lambda v: t.serialize(v)),
        ("list element", lt, lambda v: lt.serialize([v])),
        ("set element", st_, lambda v: st_.serialize([v])),
        ("map key and value", mt, lambda v: mt.serialize([(v, v)])),
        ("tuple field", tt, lambda v: tt.serialize((v, v))),
        ("udt field", ut, lambda v: ut.serialize({"f": v})),
        ("vector", vt, lambda v: vt.serialize([v, v, v])),
        ("bind", t, lambda v: p.bind([v]).values[0]),
    ]


def _expect_range(paths: list[tuple[str, CqlType, Callable[[object], object]]], value: object,
                  in_range: bool, decoded: Callable[[object], object] | None = None,
                  error: type[BaseException] = cqlcodec.EncodeValueError) -> None:
    for name, _t, encode in paths:
        if in_range:
            encode(value)
            continue
        bind_error = cqlcodec.BindValueError if error is cqlcodec.EncodeValueError else cqlcodec.BindTypeError
        expected = bind_error if name == "bind" else error
        with pytest.raises(expected):
            out = encode(value)
            pytest.fail(f"{name}: {value!r} encoded as {out!r}")


@pytest.mark.parametrize("kind", list(INT_KINDS), ids=[K.SCALAR_NAMES[k] for k in INT_KINDS])
def test_integer_widths_never_wrap(kind: int) -> None:
    bits = INT_KINDS[kind]
    t = scalar_type(kind)
    lo, hi = _bits_range(bits)
    paths = _paths(t)

    @given(_near_limits(bits))
    @example(lo - 1)
    @example(hi + 1)
    def check(v: int) -> None:
        ok = lo <= v <= hi
        _expect_range(paths, v, ok)
        if ok:
            assert t.deserialize(t.serialize(v)) == v
            assert t.serialize(v) == v.to_bytes(bits // 8, "big", signed=True)
            vt = vector_of(t, 3)
            assert vt.deserialize(vt.serialize([v, lo, hi])) == [v, lo, hi]

    check()


@pytest.mark.parametrize("kind", list(INT_KINDS), ids=[K.SCALAR_NAMES[k] for k in INT_KINDS])
def test_integer_columns_refuse_other_python_types(kind: int) -> None:
    t = scalar_type(kind)
    for bad in (True, 1.0, 1.5, "1", b"\x01", None, decimal.Decimal(1), [1]):
        paths = [p for p in _paths(t) if bad is not None or p[0] in ("list element", "vector")]
        if bad is None:
            paths = [p for p in paths if p[0] == "vector"]
        _expect_range(paths, bad, False, error=cqlcodec.EncodeTypeError)


class _Index:
    def __init__(self, v: int) -> None:
        self.v = v

    def __index__(self) -> int:
        return self.v


@pytest.mark.parametrize("kind", [K.TINYINT, K.SMALLINT, K.INT, K.BIGINT])
def test_index_objects_and_numpy_integers_are_range_checked(kind: int) -> None:
    bits = INT_KINDS[kind]
    lo, hi = _bits_range(bits)
    t = scalar_type(kind)
    for v in (lo, hi):
        assert t.deserialize(t.serialize(_Index(v))) == v
        assert t.deserialize(t.serialize(np.int64(v))) == v
    for v in (lo - 1, hi + 1):
        _expect_range(_paths(t), _Index(v), False)
        if -(1 << 63) <= v < (1 << 63):
            _expect_range(_paths(t), np.int64(v), False)
    _expect_range(_paths(t), np.uint64((1 << 64) - 1), False)


@pytest.mark.parametrize("kind,dtype", [(K.INT, "int64"), (K.INT, "uint32"), (K.BIGINT, "uint64"),
                                        (K.INT, ">i8"), (K.BIGINT, "<u8")])
def test_numpy_integer_arrays_never_wrap_into_int_vectors(kind: int, dtype: str) -> None:
    bits = INT_KINDS[kind]
    lo, hi = _bits_range(bits)
    t = vector_of(scalar_type(kind), 3)
    info = np.iinfo(np.dtype(dtype))
    fits = [max(lo, int(info.min)), 0, min(hi, int(info.max))]
    assert t.deserialize(t.serialize(np.array(fits, dtype=dtype))) == fits
    for bad in (hi + 1, lo - 1):
        if info.min <= bad <= info.max:
            with pytest.raises(cqlcodec.EncodeValueError):
                t.serialize(np.array([0, bad, 0], dtype=dtype))
    with pytest.raises(cqlcodec.EncodeTypeError):
        t.serialize(np.array([0.0, 1.5, 2.0]))


def _f32(x: float) -> float:
    """x rounded to float32 the IEEE way (what the wire can carry), or None on overflow."""
    with np.errstate(over="ignore"):
        return float(np.float32(x))


@given(st.one_of(st.floats(allow_nan=False, allow_infinity=False, width=64),
                 st.sampled_from([3.4028234663852886e38, 3.4028235677973362e38, 3.4028235677973366e38,
                                  3.5e38, 1e39, -3.5e38, 1.401298464324817e-45, 7e-46, 1e-46,
                                  -1e-46, 1.1754942106924411e-38, 5e-324, 0.0, -0.0])))
def test_float32_overflow_is_an_error_and_denormals_round(x: float) -> None:
    t = scalar_type(K.FLOAT)
    overflow = math.isinf(_f32(x)) if not math.isinf(x) else False
    paths = _paths(t)
    if overflow:
        _expect_range(paths, x, False)
        with pytest.raises(cqlcodec.EncodeValueError):
            vector_of(t, 3).serialize(np.array([0.0, x, 0.0]))
        return
    got = t.deserialize(t.serialize(x))
    assert isinstance(got, float)
    assert struct.pack(">f", got) == struct.pack(">f", _f32(x))  # IEEE rounding, sign kept
    assert vector_of(t, 3).deserialize(vector_of(t, 3).serialize([x, x, x])) == [got] * 3
    assert vector_of(t, 3).deserialize(vector_of(t, 3).serialize(np.array([x] * 3))) == [got] * 3


def test_float_special_values_and_huge_ints() -> None:
    for kind in (K.FLOAT, K.DOUBLE):
        t = scalar_type(kind)
        for v in (math.inf, -math.inf):
            assert t.deserialize(t.serialize(v)) == v
        assert math.isnan(t.deserialize(t.serialize(math.nan)))  # type: ignore[arg-type]
        _expect_range(_paths(t), 10**400, False)  # an int too large for a double
    assert scalar_type(K.DOUBLE).deserialize(scalar_type(K.DOUBLE).serialize(2**1023)) == 2.0**1023
    _expect_range(_paths(scalar_type(K.FLOAT)), 2**128, False)


@given(st.one_of(st.integers(-(1 << 4000), 1 << 4000),
                 st.integers(0, 4000).map(lambda k: (1 << k) - 1),
                 st.integers(0, 4000).map(lambda k: -(1 << k))))
def test_varint_is_never_truncated(v: int) -> None:
    t = scalar_type(K.VARINT)
    data = t.serialize(v)
    assert t.deserialize(data) == v
    assert len(data) == (v.bit_length() + 8) // 8 if v >= 0 else len(data) == ((-v - 1).bit_length() + 8) // 8


@given(st.integers(-(1 << 33), 1 << 33), st.integers(-(1 << 200), 1 << 200))
def test_decimal_scale_limits(exponent: int, unscaled: int) -> None:
    t = scalar_type(K.DECIMAL)
    digits = tuple(int(c) for c in str(abs(unscaled)))
    value = decimal.Decimal((1 if unscaled < 0 else 0, digits, exponent))
    scale = -exponent
    if -(1 << 31) <= scale < (1 << 31):
        assert t.deserialize(t.serialize(value)) == value
    else:
        _expect_range(_paths(t), value, False)


def test_decimal_specials_are_refused() -> None:
    t = scalar_type(K.DECIMAL)
    for bad in (decimal.Decimal("NaN"), decimal.Decimal("sNaN"), decimal.Decimal("Infinity"),
                decimal.Decimal("-Infinity")):
        _expect_range(_paths(t), bad, False)
    _expect_range([p for p in _paths(t) if p[0] != "set element"], 1.5, False,
                  error=cqlcodec.EncodeTypeError)


def test_date_bounds() -> None:
    t = scalar_type(K.DATE)
    lo, hi = -(1 << 31), (1 << 31) - 1
    for days in (lo, hi, 0, -1):
        v = cqlcodec.Date(days)
        got = t.deserialize(t.serialize(v))
        assert getattr(got, "days", None) == days or got == v.date()
    for days in (lo - 1, hi + 1, 1 << 40):
        try:
            value = cqlcodec.Date(days)
        except ValueError:
            continue  # Date itself refuses it: nothing can reach the encoder
        _expect_range(_paths(t), value, False)
    assert t.deserialize(t.serialize(datetime.date.max)) == datetime.date.max
    assert t.deserialize(t.serialize(datetime.date.min)) == datetime.date.min


@given(st.one_of(st.integers(-(1 << 65), 1 << 65),
                 st.sampled_from([0, 86_399_999_999_999, 86_400 * 10**9, -1, (1 << 63), -(1 << 63)])))
def test_time_bounds(ns: int) -> None:
    t = scalar_type(K.TIME)
    if 0 <= ns < 86_400 * 10**9:
        got = t.deserialize(t.serialize(ns))
        assert getattr(got, "nanoseconds") == ns
    else:
        _expect_range(_paths(t), ns, False)


@given(st.one_of(st.integers(-(1 << 65), 1 << 65),
                 st.sampled_from([(1 << 63) - 1, -(1 << 63), 1 << 63, -(1 << 63) - 1,
                                  -62_135_596_800_000, 253_402_300_799_999])))
def test_timestamp_bounds(ms: int) -> None:
    t = scalar_type(K.TIMESTAMP)
    if -(1 << 63) <= ms < (1 << 63):
        got = t.deserialize(t.serialize(ms))
        if isinstance(got, datetime.datetime):
            delta = got - datetime.datetime(1970, 1, 1)
            assert delta // datetime.timedelta(milliseconds=1) == ms
        else:
            assert got == ms
    else:
        _expect_range(_paths(t), ms, False)


def test_timestamp_datetimes_at_the_edges() -> None:
    t = scalar_type(K.TIMESTAMP)
    for dt in (datetime.datetime.min, datetime.datetime.max.replace(microsecond=999000),
               datetime.datetime(1969, 12, 31, 23, 59, 59, 999000),
               datetime.datetime(2000, 1, 1, tzinfo=datetime.timezone(datetime.timedelta(hours=-14)))):
        got = t.deserialize(t.serialize(dt), tz_aware=dt.tzinfo is not None)
        assert got == dt


INT32 = st.integers(-(1 << 31), (1 << 31) - 1)


@given(st.one_of(INT32, st.sampled_from([1 << 31, -(1 << 31) - 1])),
       st.one_of(INT32, st.sampled_from([1 << 31, -(1 << 31) - 1])),
       st.one_of(st.integers(-(1 << 63), (1 << 63) - 1), st.sampled_from([1 << 63, -(1 << 63) - 1])))
def test_duration_components(months: int, days: int, nanos: int) -> None:
    t = scalar_type(K.DURATION)
    fits = (-(1 << 31) <= months < (1 << 31) and -(1 << 31) <= days < (1 << 31)
            and -(1 << 63) <= nanos < (1 << 63))
    one_sign = (months >= 0 and days >= 0 and nanos >= 0) or (months <= 0 and days <= 0 and nanos <= 0)

    class D:
        pass

    value = D()
    value.months, value.days, value.nanoseconds = months, days, nanos  # type: ignore[attr-defined]
    if fits and one_sign:
        got = t.deserialize(t.serialize(value))
        assert (got.months, got.days, got.nanoseconds) == (months, days, nanos)  # type: ignore[attr-defined]
    else:
        paths = [p for p in _paths(t) if p[0] not in ("set element", "map key and value")]
        _expect_range(paths, value, False)


def test_inet_strings_that_are_not_addresses() -> None:
    t = scalar_type(K.INET)
    for bad in ("127.1", "0x7f.0.0.1", "1", "256.0.0.1", "1.2.3.4 ", "::1%eth0", "1.2.3.4:80",
                "", "::ffff:1.2.3.256", "1:2:3:4:5:6:7:8:9"):
        _expect_range(_paths(t), bad, False)
    _expect_range([p for p in _paths(t) if p[0] != "set element"], b"\x7f\x00\x00\x01", False,
                  error=cqlcodec.EncodeTypeError)
    assert t.deserialize(t.serialize("::ffff:1.2.3.4")) == "::ffff:1.2.3.4"


def test_ascii_text_and_blob_types() -> None:
    a = scalar_type(K.ASCII)
    _expect_range(_paths(a), "caf\u00e9", False)
    assert a.deserialize(a.serialize("\x00\x7f")) == "\x00\x7f"
    txt = scalar_type(K.TEXT)
    _expect_range(_paths(txt), "\ud800", False)
    blob = scalar_type(K.BLOB)
    _expect_range([p for p in _paths(blob) if p[0] != "set element"], 5, False,
                  error=cqlcodec.EncodeTypeError)
    boolean = scalar_type(K.BOOLEAN)
    _expect_range([p for p in _paths(boolean) if p[0] != "vector"], 2, False,
                  error=cqlcodec.EncodeTypeError)


@pytest.mark.parametrize("elem", [K.FLOAT, K.DOUBLE, K.INT, K.BIGINT, K.TEXT, K.SMALLINT])
@pytest.mark.parametrize("dim", [1, 3, 1000])
def test_vector_dimension_is_exact(elem: int, dim: int) -> None:
    t = vector_of(scalar_type(elem), dim)
    one: object = "a" if elem == K.TEXT else 1
    t.serialize([one] * dim)
    for n in (0, dim - 1, dim + 1, 2 * dim):
        if n == dim:
            continue
        with pytest.raises(cqlcodec.EncodeValueError):
            t.serialize([one] * n)
        with pytest.raises(cqlcodec.BindValueError):
            _prepared(t).bind([[one] * n])
    with pytest.raises(cqlcodec.EncodeTypeError):
        t.serialize([None] * dim)
    if elem in (K.FLOAT, K.DOUBLE, K.INT, K.BIGINT):
        with pytest.raises(cqlcodec.EncodeValueError):
            t.serialize(np.zeros(dim + 1))
        with pytest.raises(cqlcodec.EncodeValueError):
            t.serialize(np.zeros((dim, 1)))


def test_tuple_and_udt_arity() -> None:
    t = tuple_of(scalar_type(K.INT), scalar_type(K.INT))
    with pytest.raises(cqlcodec.EncodeValueError):
        t.serialize((1, 2, 3))
    u = user_type("ks", "u", [("a", scalar_type(K.INT))])
    with pytest.raises(cqlcodec.EncodeValueError):
        u.serialize({"a": 1, "b": 2})


def test_uuid_and_timeuuid() -> None:
    tu = scalar_type(K.TIMEUUID)
    _expect_range(_paths(tu), uuid.uuid4(), False)
    v1 = uuid.uuid1()
    assert tu.deserialize(tu.serialize(v1)) == v1
    _expect_range([p for p in _paths(scalar_type(K.UUID)) if p[0] != "set element"],
                  "12345678-1234-5678-1234-567812345678", False, error=cqlcodec.EncodeTypeError)
