"""Prepared.bind: every type by position and by name, UNSET rules, errors, routing keys."""

from __future__ import annotations

import datetime
import decimal
import random
import struct
import uuid
from collections import OrderedDict
from typing import Any, Iterator, Mapping

import oracle
import pytest
from hotwire import SAMPLES, Col, prepared_body
from hypothesis import given
from hypothesis import strategies as st

import cqlcodec
from cqlcodec import (
    UNSET,
    BindError,
    BindTypeError,
    BindValueError,
    Bound,
    ColumnSpec,
    EncodeError,
    Prepared,
    decode_prepared,
    parse_type,
)

INT = parse_type("int")
TEXT = parse_type("text")
BIGINT = parse_type("bigint")


def make(cols: list[Col], pk: list[int], pv: int = 4) -> tuple[Prepared, bytes]:
    """Our Prepared and the PREPARED RESULT body it came from (for the driver)."""
    body = prepared_body(b"\x01" * 16, cols, pk if pv >= 4 else [], [], pv)
    prep = decode_prepared(body[4:], pv)
    if pv < 4 and pk:  # v3 carries no pk indexes; give them directly
        prep = Prepared(prep.bind_columns, (), pk, pv, prep.query_id)
    return prep, body


def i32(v: int) -> bytes:
    return struct.pack(">i", v)


# --- every type, by position and by name -----------------------------------------------------

@pytest.mark.parametrize("type_name,values", SAMPLES)
@pytest.mark.parametrize("pv", [3, 4, 5])
def test_every_sample_type(type_name: str, values: list[object], pv: int) -> None:
    t = parse_type(type_name)
    cols: list[Col] = [("ks", "t", "k", INT), ("ks", "t", "v", t)]
    prep, body = make(cols, [0], pv)
    for v in values:
        expected = [i32(7), t.serialize(v)]
        by_pos = prep.bind([7, v])
        by_name = prep.bind({"v": v, "k": 7})
        assert by_pos.values == expected == by_name.values
        driver_values, driver_key = oracle.driver_bind(body, pv, [7, v])
        assert driver_values == expected
        if pv >= 4:
            assert by_pos.routing_key == driver_key == i32(7)
        assert prep.bind((7, v)).values == expected
        assert prep.bind([7, None]).values == [i32(7), None]


W6A: list[tuple[str, str]] = [("c_int", "int"), ("c_bigint", "bigint"), ("c_double", "double"),
                              ("c_float", "float"), ("c_text", "text"),
                              ("c_boolean", "boolean"), ("c_uuid", "uuid"),
                              ("c_timestamp", "timestamp"), ("c_decimal", "decimal"),
                              ("c_date", "date")]


def _w6a_values(seed: int) -> list[object]:
    rng = random.Random(seed)
    return [rng.randint(-2**31, 2**31 - 1), rng.randint(-2**63, 2**63 - 1),
            rng.uniform(-1e6, 1e6), struct.unpack(">f", struct.pack(">f", rng.uniform(-1, 1)))[0],
            "".join(rng.choice("abcdef0123") for _ in range(rng.randint(8, 24))),
            rng.random() < 0.5, uuid.UUID(int=rng.getrandbits(128)),
            datetime.datetime(1970, 1, 1) + datetime.timedelta(
                milliseconds=rng.randint(1_500_000_000_000, 1_800_000_000_000)),
            decimal.Decimal(rng.randint(-10**9, 10**9)).scaleb(-4),
            datetime.date(1970, 1, 1) + datetime.timedelta(days=rng.randint(10000, 25000))]


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("pv", [3, 4, 5])
def test_w6a_matches_driver(seed: int, pv: int) -> None:
    cols: list[Col] = [("peerbench", "t", n, parse_type(s)) for n, s in W6A]
    prep, body = make(cols, [0], pv)
    values = _w6a_values(seed)
    ours = prep.bind(values)
    theirs, key = oracle.driver_bind(body, pv, values)
    assert ours.values == theirs
    assert ours.routing_key == (key if pv >= 4 else ours.values[0])
    named = prep.bind({n: v for (n, _s), v in zip(W6A, values)})
    assert named.values == theirs


def test_w6b_vector_bind_matches_driver() -> None:
    cols: list[Col] = [("peerbench", "t", "id", INT), ("peerbench", "t", "name", TEXT),
                       ("peerbench", "t", "ts", BIGINT),
                       ("peerbench", "t", "embedding", parse_type("vector<float, 1536>"))]
    prep, body = make(cols, [0])
    rng = random.Random(3)
    vec = [struct.unpack(">f", struct.pack(">f", rng.uniform(-1, 1)))[0] for _ in range(1536)]
    values = [5, "name", 2**40, vec]
    theirs, key = oracle.driver_bind(body, 4, values)
    ours = prep.bind(values)
    assert ours.values == theirs and ours.routing_key == key
    assert ours.values[3] == struct.pack(">1536f", *vec)


@given(st.lists(st.one_of(st.none(), st.integers(-2**31, 2**31 - 1)), min_size=0, max_size=6),
       st.sampled_from([4, 5]))
def test_random_int_binds_match_driver(values: list[int | None], pv: int) -> None:
    cols: list[Col] = [("ks", "t", f"c{i}", INT) for i in range(6)]
    prep, body = make(cols, [], pv)
    theirs, _key = oracle.driver_bind(body, pv, values)
    assert prep.bind(values).values == theirs


@given(st.dictionaries(st.sampled_from(["a", "b", "c", "zz"]), st.text(max_size=10)))
def test_random_mapping_binds_match_driver(values: dict[str, str]) -> None:
    cols: list[Col] = [("ks", "t", n, TEXT) for n in ["a", "b", "c"]]
    prep, body = make(cols, [])
    theirs, _key = oracle.driver_bind(body, 4, values)
    assert prep.bind(values).values == theirs


# --- UNSET and missing values -------------------------------------------------------------

COLS3: list[Col] = [("ks", "t", "pk", INT), ("ks", "t", "a", TEXT), ("ks", "t", "b", BIGINT)]


@pytest.mark.parametrize("pv", [4, 5])
def test_missing_values_are_unset_on_v4(pv: int) -> None:
    prep, body = make(COLS3, [0], pv)
    assert prep.bind([1]).values == [i32(1), UNSET, UNSET]
    assert prep.bind([1, "x"]).values == [i32(1), b"x", UNSET]
    assert prep.bind({"pk": 1, "b": 2}).values == [i32(1), UNSET, struct.pack(">q", 2)]
    assert prep.bind([1, UNSET, None]).values == [i32(1), UNSET, None]
    assert prep.bind({"pk": 1, "a": UNSET}).values == [i32(1), UNSET, UNSET]
    theirs, _key = oracle.driver_bind(body, pv, [1])
    assert theirs == [i32(1), UNSET, UNSET]
    theirs, _key = oracle.driver_bind(body, pv, {"pk": 1, "b": 2})
    assert theirs == prep.bind({"pk": 1, "b": 2}).values


def test_extra_mapping_keys_are_ignored() -> None:
    prep, _body = make(COLS3, [0])
    assert prep.bind({"pk": 1, "a": "x", "b": 2, "zzz": object()}).values == [
        i32(1), b"x", struct.pack(">q", 2)]


def test_other_mappings_work() -> None:
    class M(Mapping[str, object]):
        def __init__(self, d: dict[str, object]) -> None:
            self.d = d

        def __getitem__(self, k: str) -> object:
            return self.d[k]

        def __iter__(self) -> Iterator[str]:
            return iter(self.d)

        def __len__(self) -> int:
            return len(self.d)

    prep, _body = make(COLS3, [0])
    assert prep.bind(M({"pk": 3})).values == [i32(3), UNSET, UNSET]
    assert prep.bind(OrderedDict(pk=3, a="q")).values == [i32(3), b"q", UNSET]


def test_v3_rules() -> None:
    prep, _body = make(COLS3, [0], 3)
    assert prep.bind([1, "x", 2]).values == [i32(1), b"x", struct.pack(">q", 2)]
    with pytest.raises(BindValueError, match="too few values"):
        prep.bind([1, "x"])
    with pytest.raises(BindValueError, match='no value for column "b"'):
        prep.bind({"pk": 1, "a": "x"})
    with pytest.raises(BindValueError, match="UNSET needs protocol v4"):
        prep.bind([1, UNSET, 2])
    with pytest.raises(BindValueError, match="UNSET needs protocol v4"):
        prep.bind({"pk": 1, "a": UNSET, "b": 2})


@pytest.mark.parametrize("pv", [4, 5])
def test_unset_refused_for_partition_key(pv: int) -> None:
    prep, _body = make(COLS3, [0, 2], pv)
    for values in ([UNSET, "x", 1], [1, "x"], {"pk": 1, "a": "x"}, {"b": 1},
                   {"pk": UNSET, "b": 2}):
        with pytest.raises(BindValueError, match="partition key"):
            prep.bind(values)
    with pytest.raises(BindValueError, match="partition key"):
        prep.bind(None)


def test_bind_none_and_empty() -> None:
    prep, _body = make(COLS3, [])
    assert prep.bind(None).values == [UNSET, UNSET, UNSET]
    assert prep.bind().values == [UNSET, UNSET, UNSET]
    assert prep.bind([]).values == [UNSET, UNSET, UNSET]
    empty = Prepared([], (), [], 3)
    assert empty.bind(None).values == [] and empty.bind([]).values == []


def test_too_many_values() -> None:
    prep, _body = make(COLS3, [0])
    with pytest.raises(BindValueError, match="too many values to bind: got 4"):
        prep.bind([1, "a", 2, 3])


@pytest.mark.parametrize("bad", ["abc", b"abc", 5, object(), (x for x in [1])])
def test_values_must_be_sequence_or_mapping(bad: object) -> None:
    prep, _body = make(COLS3, [0])
    with pytest.raises(BindTypeError, match="sequence or a mapping"):
        prep.bind(bad)  # type: ignore[arg-type]


def test_other_sequences_work() -> None:
    import collections

    prep, _body = make(COLS3, [0])
    assert prep.bind(collections.deque([1, "x"])).values == [i32(1), b"x", UNSET]
    assert prep.bind(range(1, 2)).values == [i32(1), UNSET, UNSET]


# --- errors -----------------------------------------------------------------------------------

def test_wrong_type_error() -> None:
    prep, _body = make(COLS3, [0])
    with pytest.raises(BindTypeError) as info:
        prep.bind([1, 42])
    err = info.value
    assert isinstance(err, BindError) and isinstance(err, EncodeError)
    assert isinstance(err, TypeError) and isinstance(err, cqlcodec.CodecError)
    text = str(err)
    assert '"a"' in text and "text" in text and "int" in text
    assert err.column == "a" and err.cql_type == "text" and err.value_type == "int"
    assert isinstance(err.__cause__, cqlcodec.EncodeTypeError)


def test_out_of_range_error() -> None:
    prep, _body = make(COLS3, [0])
    with pytest.raises(BindValueError) as info:
        prep.bind([2**31, "x"])
    err = info.value
    assert isinstance(err, ValueError) and isinstance(err, EncodeError)
    assert '"pk"' in str(err) and "int" in str(err) and str(2**31) in str(err)
    assert err.column == "pk" and err.cql_type == "int" and err.value_type == "int"
    assert isinstance(err.__cause__, cqlcodec.EncodeValueError)


@pytest.mark.parametrize("type_name,bad,kind", [
    ("float", 1e300, BindValueError), ("int", True, BindTypeError),
    ("inet", "not an address", BindValueError), ("vector<float, 3>", [1.0], BindValueError),
    ("decimal", decimal.Decimal("NaN"), BindValueError), ("text", b"bytes", BindTypeError),
    ("ascii", "é", BindValueError), ("list<int>", [1, "x"], BindTypeError),
    ("text", "\ud800", BindValueError), ("uuid", "not a uuid", BindTypeError),
    ("bigint", 2**63, BindValueError), ("boolean", 1, BindTypeError),
    ("double", "1.0", BindTypeError), ("blob", "text", BindTypeError),
])
def test_every_failure_is_a_bind_error(type_name: str, bad: object, kind: type[BindError]) -> None:
    t = parse_type(type_name)
    prep, _body = make([("ks", "t", "col", t)], [])
    with pytest.raises(kind) as info:
        prep.bind([bad])
    assert '"col"' in str(info.value) and info.value.cql_type == t.cql_name
    assert info.value.__cause__ is not None
    with pytest.raises(kind):
        prep.bind({"col": bad})


# --- routing key and the EXECUTE values block --------------------------------------------------

@pytest.mark.parametrize("pk", [[0], [1, 0], [2, 0, 1]])
def test_routing_keys_match_driver(pk: list[int]) -> None:
    prep, body = make(COLS3, pk)
    values: list[object] = [1, "x", 2**33]
    ours = prep.bind(values)
    _theirs, key = oracle.driver_bind(body, 4, values)
    assert ours.routing_key == key
    assert ours.routing_key is ours.routing_key  # computed once


def test_composite_routing_key_layout() -> None:
    prep, _body = make([("ks", "t", "a", INT), ("ks", "t", "b", TEXT)], [1, 0])
    assert prep.bind([1, "x"]).routing_key == bytes.fromhex("0001 78 00 0004 00000001 00")


def test_null_partition_key_component() -> None:
    prep, _body = make(COLS3, [0, 1])
    bound = prep.bind([1, None, 3])
    with pytest.raises(BindValueError, match='"a".*null'):
        _ = bound.routing_key
    single, _body = make(COLS3, [1])
    with pytest.raises(BindValueError, match="null"):
        _ = single.bind([1, None]).routing_key


def test_no_routing_key_without_pk_indexes() -> None:
    prep, _body = make(COLS3, [])
    assert prep.bind([1]).routing_key is None


def test_values_block() -> None:
    prep, _body = make(COLS3, [0])
    bound = prep.bind([5, None])
    assert isinstance(bound, Bound) and bound.prepared is prep
    assert bound.values_block() == (b"\x00\x03" + i32(4) + i32(5) + i32(-1) + i32(-2))
    assert Prepared([]).bind([]).values_block() == b"\x00\x00"


def test_serializers_are_built_once_per_prepared() -> None:
    def cached(p: Prepared) -> tuple[object, ...] | None:
        return p._serializers

    prep, _body = make(COLS3, [0])
    assert cached(prep) is None
    prep.bind([1])
    first = cached(prep)
    assert first is not None and len(first) == 3
    prep.bind([2, "y", 3])
    assert cached(prep) is first


def test_udt_bind() -> None:
    udt = cqlcodec.user_type("ks", "addr", [("street", TEXT), ("zip", INT)])
    prep, _body = make([("ks", "t", "u", udt)], [])
    expected = udt.serialize({"street": "Main", "zip": 1})
    assert prep.bind([{"street": "Main", "zip": 1}]).values == [expected]
    assert prep.bind({"u": ("Main", 1)}).values == [expected]


def test_duration_and_time_values() -> None:
    dur = parse_type("duration")
    tm = parse_type("time")
    prep, _body = make([("ks", "t", "d", dur), ("ks", "t", "tm", tm)], [])
    values: list[Any] = [cqlcodec.values.Duration(1, 2, 3), cqlcodec.values.Time(5)]
    out = prep.bind(values).values
    assert out == [dur.serialize(values[0]), tm.serialize(values[1])]
    assert out == [oracle.serialize("org.apache.cassandra.db.marshal.DurationType",
                                    oracle.driver_duration(1, 2, 3)),
                   oracle.serialize("org.apache.cassandra.db.marshal.TimeType", 5)]


def test_column_spec_from_driver_style_use() -> None:
    cols = [ColumnSpec("ks", "t", "a", INT)]
    assert Prepared(cols, protocol_version=4).bind([1]).values == [i32(1)]
