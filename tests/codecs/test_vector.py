"""vector<T, n>: both layouts, the numeric fast paths, dimension and element checks."""

from __future__ import annotations

import datetime
import decimal
import math
import struct
import uuid
from collections.abc import Iterator
from typing import Any

import oracle
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cqlcodec import (
    CqlType,
    DecodeError,
    Duration,
    EncodeTypeError,
    EncodeValueError,
    UnsupportedTypeError,
    kinds,
    list_of,
    map_of,
    scalar_type,
    set_of,
    tuple_of,
    user_type,
    vector_of,
)
from cqlcodec.codecs.base import FLAG_HASHABLE

M = "org.apache.cassandra.db.marshal."
S = scalar_type
FLOAT, DOUBLE, INT, BIGINT = S(kinds.FLOAT), S(kinds.DOUBLE), S(kinds.INT), S(kinds.BIGINT)
TEXT = S(kinds.TEXT)
F32_OVERFLOW = 3.4028235677973366e38  # 2**128 - 2**103


def h(text: str) -> bytes:
    return bytes.fromhex(text.replace(" ", ""))


def uvint(n: int) -> bytes:
    """[unsigned vint], written independently of cqlcodec."""
    for extra in range(9):
        if extra == 8 or n < 1 << (7 * (extra + 1)):
            break
    if extra == 0:
        return bytes([n])
    if extra == 8:
        return b"\xff" + n.to_bytes(8, "big")
    first = ((0xFF00 >> extra) & 0xFF) | (n >> (8 * extra))
    return bytes([first]) + (n & ((1 << (8 * extra)) - 1)).to_bytes(extra, "big")


def f32(x: float) -> float:
    value: float = struct.unpack(">f", struct.pack(">f", x))[0]
    return value


# --- spec examples and layouts ------------------------------------------------------------------

def test_spec_examples() -> None:
    assert vector_of(FLOAT, 3).serialize([1.0, 2.5, -1]) == h("3f800000 40200000 bf800000")
    assert vector_of(TEXT, 2).serialize(["a", "bc"]) == h("01 61 02 6263")
    assert vector_of(S(kinds.SMALLINT), 2).serialize([1, -1]) == h("02 0001 02 ffff")
    assert vector_of(list_of(INT), 1).serialize([[7]]) == h("0c 00000001 00000004 00000007")
    assert vector_of(TEXT, 2).deserialize(h("01 61 02 6263")) == ["a", "bc"]
    assert vector_of(FLOAT, 3).deserialize(h("3f800000 40200000 bf800000")) == [1.0, 2.5, -1.0]


FIXED_CASES: list[tuple[int, list[object]]] = [
    (kinds.BOOLEAN, [True, False, True]),
    (kinds.INT, [0, -1, 2**31 - 1, -(2**31)]),
    (kinds.BIGINT, [0, -1, 2**63 - 1, -(2**63)]),
    (kinds.COUNTER, [5, -5]),
    (kinds.FLOAT, [0.0, -0.0, 1.5, math.inf, -math.inf, f32(3.4e38)]),
    (kinds.DOUBLE, [0.0, -0.0, 1e308, -5e-324, math.inf]),
    (kinds.TIMESTAMP, [datetime.datetime(2024, 5, 17, 12, 0, 0, 123000),
                       datetime.datetime(1900, 1, 1)]),
    (kinds.UUID, [uuid.UUID(int=1), uuid.UUID(int=2**128 - 1)]),
    (kinds.TIMEUUID, [uuid.UUID("3f2504e0-4f89-11d3-9a0c-0305e82c3301")]),
]


@pytest.mark.parametrize(("kind", "values"), FIXED_CASES,
                         ids=[kinds.SCALAR_NAMES[k] for k, _v in FIXED_CASES])
def test_fixed_size_layout_has_no_prefixes(kind: int, values: list[object]) -> None:
    sub = S(kind)
    t = vector_of(sub, len(values))
    assert t.fixed_size == sub.fixed_size * len(values) and sub.fixed_size > 0
    data = t.serialize(values)
    assert data == b"".join(sub.serialize(v) for v in values)
    back = t.deserialize(data)
    assert isinstance(back, list) and len(back) == len(values)
    assert t.serialize(back) == data


VARIABLE_CASES: list[tuple[CqlType, list[object]]] = [
    (S(kinds.SMALLINT), [1, -1, 32767]),
    (S(kinds.TINYINT), [0, -128]),
    (S(kinds.DATE), [datetime.date(2024, 5, 17), datetime.date(1, 1, 1)]),
    (S(kinds.TIME), [0, 86_399_999_999_999]),
    (TEXT, ["", "é中", "x" * 200]),
    (S(kinds.ASCII), ["abc"]),
    (S(kinds.BLOB), [b"", b"\x00" * 130]),
    (S(kinds.VARINT), [0, -1, 2**200]),
    (S(kinds.DECIMAL), [decimal.Decimal("1.5"), decimal.Decimal("-1E-30")]),
    (S(kinds.DURATION), [Duration(1, 2, 3), Duration(-1, -2, -3)]),
    (S(kinds.INET), ["127.0.0.1", "::1"]),
    (list_of(INT), [[1, 2], [], [None]]),
    (set_of(TEXT), [{"a"}, set()]),
    (map_of(TEXT, INT), [{"a": 1}]),
    (tuple_of(INT, TEXT), [(1, "a"), (None, None)]),
    (user_type("ks", "u", [("a", INT)]), [{"a": 1}, (2,)]),
    (vector_of(TEXT, 2), [["a", "b"], ["", "c"]]),
]


@pytest.mark.parametrize(("sub", "values"), VARIABLE_CASES,
                         ids=[t.cql_name for t, _v in VARIABLE_CASES])
def test_variable_size_layout_prefixes_each_element(sub: CqlType, values: list[object]) -> None:
    assert sub.fixed_size < 0
    t = vector_of(sub, len(values))
    data = t.serialize(values)
    parts = [sub.serialize(v) for v in values]
    assert data == b"".join(uvint(len(p)) + p for p in parts)
    back = t.deserialize(data)
    assert isinstance(back, list) and len(back) == len(values)
    assert t.serialize(back) == data


def test_vector_of_fixed_vectors_is_fixed() -> None:
    t = vector_of(vector_of(FLOAT, 2), 3)
    assert t.fixed_size == 24
    data = t.serialize([[1, 2], [3, 4], [5, 6]])
    assert data == struct.pack(">6f", 1, 2, 3, 4, 5, 6)
    assert t.deserialize(data) == [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
    with pytest.raises(EncodeValueError, match="expected 2 elements, observed 3"):
        t.serialize([[1, 2], [3, 4], [5, 6, 7]])


def test_uvint_lengths_across_boundaries() -> None:
    t = vector_of(S(kinds.BLOB), 4)
    values: list[object] = [b"a" * 127, b"b" * 128, b"c" * 16383, b"d" * 16384]
    data = t.serialize(values)
    assert data == b"".join(uvint(len(v)) + v for v in values if isinstance(v, bytes))
    assert data[:1] == b"\x7f" and data[128:130] == h("8080")
    assert t.deserialize(data) == values


@pytest.mark.parametrize("sub", [FLOAT, DOUBLE, INT, BIGINT, S(kinds.BOOLEAN), S(kinds.UUID),
                                 S(kinds.SMALLINT), TEXT, S(kinds.VARINT), list_of(INT)])
def test_driver_agrees(sub: CqlType) -> None:
    samples: dict[str, list[object]] = {
        "float": [1.5, -2.25, 0.0], "double": [1e-300, -2.5, 7.0], "int": [1, -2, 3],
        "bigint": [2**40, -2, 0], "boolean": [True, False, True],
        "uuid": [uuid.UUID(int=i) for i in (1, 2, 3)], "smallint": [1, -1, 300],
        "text": ["a", "", "中"], "varint": [0, -(2**70), 5], "list<int>": [[1], [], [2, 3]],
    }
    values = samples[sub.cql_name]
    java = {"float": "FloatType", "double": "DoubleType", "int": "Int32Type",
            "bigint": "LongType", "boolean": "BooleanType", "uuid": "UUIDType",
            "smallint": "ShortType", "text": "UTF8Type", "varint": "IntegerType",
            "list<int>": f"ListType({M}Int32Type)"}[sub.cql_name]
    vt = oracle.vector_type(M + java, len(values))
    t = vector_of(sub, len(values))
    data = t.serialize(values)
    assert data == vt.serialize(values, 4)
    assert t.deserialize(data) == vt.deserialize(data, 4)


# --- values and flags ---------------------------------------------------------------------------

def test_decode_values_and_hashable_variant() -> None:
    t = vector_of(INT, 3)
    data = h("00000001 ffffffff 80000000")
    assert t.deserialize(data) == [1, -1, -(2**31)]
    assert t.codec(FLAG_HASHABLE).decode(data, 0, len(data)) == (1, -1, -(2**31))
    t2 = vector_of(TEXT, 2)
    assert t2.codec(FLAG_HASHABLE).decode(h("01 61 00"), 0, 3) == ("a", "")
    t3 = set_of(vector_of(FLOAT, 2))
    assert t3.deserialize(t3.serialize([[1.0, 2.0]])) == {(1.0, 2.0)}


def test_decode_at_an_offset() -> None:
    c = vector_of(DOUBLE, 2).codec()
    buf = b"\xaa" * 5 + struct.pack(">2d", 1.5, -2.0) + b"\xbb" * 3
    assert c.decode(buf, 5, 16) == [1.5, -2.0]
    c2 = vector_of(TEXT, 2).codec()
    assert c2.decode(b"zz" + h("01 61 01 62") + b"zz", 2, 4) == ["a", "b"]


def test_special_floats_round_trip_bit_exact() -> None:
    t = vector_of(FLOAT, 4)
    data = h("7fc00000 ff800000 80000000 00000001")  # nan, -inf, -0.0, smallest subnormal
    back: Any = t.deserialize(data)
    assert math.isnan(back[0]) and back[1] == -math.inf
    assert math.copysign(1.0, back[2]) == -1.0
    assert t.serialize(back) == data
    t2 = vector_of(DOUBLE, 1)
    assert t2.serialize(t2.deserialize(h("7ff8000000000001"))) == h("7ff8000000000001")


# --- encoding inputs and errors ------------------------------------------------------------------

class Seq:
    def __init__(self, items: list[object]) -> None:
        self.items = items

    def __iter__(self) -> Iterator[object]:
        return iter(self.items)


@pytest.mark.parametrize("sub", [FLOAT, DOUBLE, INT, BIGINT, S(kinds.BOOLEAN), TEXT])
def test_input_shapes(sub: CqlType) -> None:
    samples: dict[str, list[object]] = {
        "float": [1.0, 2.0], "double": [1.0, 2.0], "int": [1, 2], "bigint": [1, 2],
        "boolean": [True, False], "text": ["a", "b"]}
    value = samples[sub.cql_name]
    t = vector_of(sub, 2)
    want = t.serialize(value)
    assert t.serialize(tuple(value)) == want
    assert t.serialize(Seq(value)) == want
    assert t.serialize(iter(value)) == want
    for bad in ("ab", b"ab", bytearray(b"ab"), memoryview(b"ab"), {1: 2}, 5, 1.5):
        with pytest.raises(EncodeTypeError):
            t.serialize(bad)
    for wrong in ([], value[:1], value * 2):
        with pytest.raises(EncodeValueError, match=f"expected 2 elements, observed {len(wrong)}"):
            t.serialize(wrong)
    for null_at in range(2):
        with_null = list(value)
        with_null[null_at] = None
        with pytest.raises(EncodeTypeError, match="null"):
            t.serialize(with_null)


@pytest.mark.parametrize("dim", [1, 2, 7, 64, 1536])
@pytest.mark.parametrize("sub", [FLOAT, DOUBLE, INT, BIGINT])
def test_bools_are_refused_like_the_element_codec(sub: CqlType, dim: int) -> None:
    t = vector_of(sub, dim)
    base: list[object] = [1.0 if sub in (FLOAT, DOUBLE) else 1] * dim
    assert t.serialize(base) == sub.serialize(base[0]) * dim
    for pos in sorted({0, dim // 2, dim - 1}):
        for b in (True, False):
            bad = list(base)
            bad[pos] = b
            with pytest.raises(EncodeTypeError):
                t.serialize(bad)
            with pytest.raises(EncodeTypeError):
                list_of(t).serialize([bad])


@pytest.mark.parametrize("sub", [FLOAT, DOUBLE, INT, BIGINT])
def test_zeros_and_ones_without_bools_encode(sub: CqlType) -> None:
    # 0 and 1 look like bools to the interpreted build's cheap pre-check
    one: object = 1.0 if sub in (FLOAT, DOUBLE) else 1
    zero: object = 0.0 if sub in (FLOAT, DOUBLE) else 0
    values = [one, zero] * 20 + [one]
    t = vector_of(sub, len(values))
    assert t.serialize(values) == b"".join(sub.serialize(v) for v in values)


def test_float32_overflow() -> None:
    t = vector_of(FLOAT, 3)
    for big in (1e39, -1e39, F32_OVERFLOW, -F32_OVERFLOW, 1e308, 2**200):
        with pytest.raises(EncodeValueError):
            t.serialize([0.5, big, 0.5])
        with pytest.raises(EncodeValueError):
            list_of(t).serialize([[big, 0.5, 0.5]])
    below = math.nextafter(F32_OVERFLOW, 0.0)
    assert t.serialize([below, -below, 0.0]) == h("7f7fffff ff7fffff 00000000")
    assert t.serialize([math.inf, -math.inf, math.nan])[:8] == h("7f800000 ff800000")
    with pytest.raises(EncodeValueError):
        t.serialize([2**1100, 1.0, 1.0])


def test_int_ranges() -> None:
    with pytest.raises(EncodeValueError):
        vector_of(INT, 2).serialize([1, 2**31])
    with pytest.raises(EncodeValueError):
        vector_of(INT, 2).serialize([-(2**31) - 1, 1])
    with pytest.raises(EncodeValueError):
        vector_of(BIGINT, 2).serialize([2**63, 1])
    with pytest.raises(EncodeValueError):
        vector_of(BIGINT, 2).serialize([1, -(2**63) - 1])
    with pytest.raises(EncodeValueError):
        vector_of(BIGINT, 1).serialize([2**100])
    with pytest.raises(EncodeTypeError):
        vector_of(INT, 2).serialize([1, 2.0])
    with pytest.raises(EncodeTypeError):
        vector_of(BIGINT, 2).serialize(["1", 2])


class Index:
    def __init__(self, n: int) -> None:
        self.n = n

    def __index__(self) -> int:
        return self.n


def test_element_codec_conversions() -> None:
    assert vector_of(FLOAT, 2).serialize([1, decimal.Decimal("2.5")]) == h("3f800000 40200000")
    assert vector_of(DOUBLE, 2).serialize([1, 2**60]) == struct.pack(">2d", 1, 2**60)
    assert vector_of(INT, 2).serialize([Index(3), 4]) == h("00000003 00000004")
    assert vector_of(BIGINT, 1).serialize([Index(-1)]) == h("ffffffffffffffff")

    class F(float):
        pass

    assert vector_of(FLOAT, 1).serialize([F(1.0)]) == h("3f800000")
    with pytest.raises(EncodeValueError):
        vector_of(FLOAT, 1).serialize([F(1e300)])


def test_inet_and_variable_element_errors() -> None:
    with pytest.raises(EncodeValueError):
        vector_of(S(kinds.INET), 1).serialize(["not an address"])
    with pytest.raises(EncodeTypeError):
        vector_of(TEXT, 1).serialize([5])
    with pytest.raises(EncodeValueError):
        vector_of(S(kinds.SMALLINT), 1).serialize([40000])


# --- malformed bytes ----------------------------------------------------------------------------

@pytest.mark.parametrize("sub", [FLOAT, DOUBLE, INT, BIGINT, S(kinds.BOOLEAN), S(kinds.UUID),
                                 vector_of(INT, 2)])
def test_fixed_layout_needs_the_exact_size(sub: CqlType) -> None:
    t = vector_of(sub, 3)
    size = t.fixed_size
    for n in (1, size - 1, size + 1, 2 * size):
        with pytest.raises(DecodeError, match=f"expected {size} bytes"):
            t.deserialize(bytes(n))


MALFORMED_VARIABLE = [
    (vector_of(TEXT, 2), "01 61"),                   # one element missing
    (vector_of(TEXT, 2), "01 61 01 62 00"),          # trailing byte
    (vector_of(TEXT, 2), "01 61 05 62"),             # element longer than the rest
    (vector_of(TEXT, 2), "01 61 80"),                # truncated vint
    (vector_of(TEXT, 2), "ff ffffffffffffffff 00"),  # huge vint length
    (vector_of(TEXT, 3), "01 61"),                   # fewer bytes than elements
    (vector_of(S(kinds.SMALLINT), 1), "03 000100"),  # element of the wrong width
    (vector_of(list_of(INT), 1), "04 00000001"),     # bad nested element
]


@pytest.mark.parametrize(("t", "hexbytes"), MALFORMED_VARIABLE)
def test_variable_layout_malformed(t: CqlType, hexbytes: str) -> None:
    with pytest.raises(DecodeError):
        t.deserialize(h(hexbytes))


def test_every_truncation_is_a_decode_error() -> None:
    for t, value in [(vector_of(TEXT, 3), ["a", "bb", ""]),
                     (vector_of(list_of(INT), 2), [[1], [2, 3]]),
                     (vector_of(FLOAT, 3), [1.0, 2.0, 3.0])]:
        data = t.serialize(value)
        for cut in range(1, len(data)):
            with pytest.raises(DecodeError):
                t.deserialize(data[:cut])


def test_dimension_limits() -> None:
    with pytest.raises(ValueError):
        vector_of(FLOAT, 0)
    from cqlcodec.types.model import make_type

    huge = make_type(kinds.VECTOR, (FLOAT,), 2**40)
    with pytest.raises(UnsupportedTypeError):
        huge.serialize([1.0])


# --- properties ------------------------------------------------------------------------------

float32s = st.floats(width=32, allow_nan=False)


@given(st.lists(float32s, min_size=1, max_size=300))
def test_float_vectors_match_struct_and_driver(values: list[float]) -> None:
    t = vector_of(FLOAT, len(values))
    data = t.serialize(values)
    assert data == struct.pack(f">{len(values)}f", *values)
    assert t.deserialize(data) == values
    assert data == oracle.vector_type(M + "FloatType", len(values)).serialize(values, 4)


@given(st.lists(st.floats(allow_nan=False), min_size=1, max_size=100))
def test_float_vectors_from_doubles_round_or_refuse(values: list[float]) -> None:
    t = vector_of(FLOAT, len(values))
    try:
        want = struct.pack(f">{len(values)}f", *values)
    except OverflowError:
        with pytest.raises(EncodeValueError):
            t.serialize(values)
        return
    assert t.serialize(values) == want


@given(st.lists(st.integers(-(2**63), 2**63 - 1), min_size=1, max_size=200),
       st.sampled_from([INT, BIGINT]))
def test_int_vectors_match_struct_or_refuse(values: list[int], sub: CqlType) -> None:
    t = vector_of(sub, len(values))
    fmt = ">%d%s" % (len(values), "i" if sub is INT else "q")
    try:
        want = struct.pack(fmt, *values)
    except struct.error:
        with pytest.raises(EncodeValueError):
            t.serialize(values)
        return
    assert t.serialize(values) == want
    assert t.deserialize(want) == values


@given(st.lists(st.one_of(st.integers(-5, 5), st.booleans(), st.just(0.0), st.just(1.0)),
                min_size=1, max_size=50),
       st.sampled_from([FLOAT, DOUBLE, INT, BIGINT]))
def test_mixed_inputs_behave_like_the_element_codec(values: list[object], sub: CqlType) -> None:
    t = vector_of(sub, len(values))
    try:
        want = b"".join(sub.serialize(v) for v in values)
    except (EncodeTypeError, EncodeValueError) as exc:
        with pytest.raises(type(exc)):
            t.serialize(values)
        return
    assert t.serialize(values) == want
