"""The CqlType model: immutability, equality, hashing, pickling, constructors, interning."""

from __future__ import annotations

import copy
import pickle

import pytest
from hypothesis import given
from type_strategies import keyspaces, type_trees

from cqlcodec import (
    CqlType,
    DecodeError,
    EncodeTypeError,
    ProtocolVersionError,
    custom_type,
    frozen,
    kinds,
    list_of,
    map_of,
    reversed_type,
    scalar_type,
    set_of,
    tuple_of,
    user_type,
    vector_of,
)
from cqlcodec.types import model as _types

INT = scalar_type(kinds.INT)
TEXT = scalar_type(kinds.TEXT)
FLOAT = scalar_type(kinds.FLOAT)
SMALLINT = scalar_type(kinds.SMALLINT)
ADDR = user_type("ks", "addr", [("num", INT), ("street", TEXT)])

SAMPLES = [
    INT,
    TEXT,
    scalar_type(kinds.EMPTY),
    list_of(INT),
    set_of(TEXT),
    map_of(TEXT, frozen(list_of(INT))),
    tuple_of(INT, TEXT),
    vector_of(FLOAT, 3),
    vector_of(vector_of(FLOAT, 2), 3),
    frozen(ADDR),
    ADDR,
    user_type("", "name_only", ()),
    reversed_type(INT),
    custom_type("org.example.Foo"),
]

PROPERTIES = ["kind", "cql_name", "subtypes", "dimension", "keyspace", "name", "field_names",
              "fields", "fixed_size"]


@pytest.mark.parametrize("prop", PROPERTIES)
def test_properties_cannot_be_set_or_deleted(prop: str) -> None:
    t = list_of(INT)
    before = getattr(t, prop)
    with pytest.raises(AttributeError):
        setattr(t, prop, before)
    with pytest.raises(AttributeError):
        delattr(t, prop)
    assert getattr(t, prop) == before


def test_cql_name_is_read_only() -> None:
    t = map_of(TEXT, INT)
    with pytest.raises(AttributeError):
        t.cql_name = "int"  # type: ignore[misc]
    assert t.cql_name == "map<text, int>"


@pytest.mark.parametrize("t", SAMPLES, ids=str)
def test_equal_descriptions_are_equal_and_hash_equal(t: CqlType) -> None:
    again = _types.make_type(t.kind, t.subtypes, t.dimension, t.keyspace, t.name, t.field_names)
    assert again == t and hash(again) == hash(t)
    assert not (again != t)
    assert {t: 1}[again] == 1


def test_equality_is_structural_after_eviction() -> None:
    old = map_of(TEXT, vector_of(FLOAT, 999_999))
    old_hash = hash(old)
    for dim in range(1, 6000):  # pushes `old` out of the intern table
        vector_of(INT, dim)
    new = map_of(TEXT, vector_of(FLOAT, 999_999))
    assert new == old and hash(new) == old_hash
    assert {old: "x"}[new] == "x"


def test_scalars_stay_one_object_per_kind() -> None:
    before = {k: scalar_type(k) for k in kinds.SCALAR_NAMES}
    for dim in range(1, 6000):
        vector_of(SMALLINT, dim)
    for k, t in before.items():
        assert scalar_type(k) is t
        assert _types.make_type(t.kind, (), 0, "", t.name) is t


def test_interning_is_bounded() -> None:
    for dim in range(1, 12000):
        vector_of(TEXT, dim)
    assert _types.interned_count() <= 4096


def test_different_types_differ() -> None:
    distinct = [
        list_of(INT), set_of(INT), frozen(list_of(INT)), vector_of(INT, 2), vector_of(INT, 3),
        tuple_of(INT), tuple_of(INT, INT), map_of(INT, TEXT), map_of(TEXT, INT), INT,
        reversed_type(INT), frozen(reversed_type(list_of(INT))),
        user_type("ks", "a", [("x", INT)]), user_type("ks2", "a", [("x", INT)]),
        user_type("ks", "b", [("x", INT)]), user_type("ks", "a", [("y", INT)]),
        user_type("ks", "a", [("x", TEXT)]), user_type("ks", "a", ()),
        custom_type("org.example.A"), custom_type("org.example.B"), scalar_type(kinds.EMPTY),
    ]
    assert len(set(distinct)) == len(distinct)
    for i, a in enumerate(distinct):
        for b in distinct[i + 1:]:
            assert a != b and not (a == b)


def test_comparison_with_other_objects() -> None:
    assert INT != "int"
    assert not (INT == "int")  # noqa: SIM201
    assert INT.__eq__("int") is NotImplemented


@pytest.mark.parametrize("t", SAMPLES, ids=str)
def test_pickle_round_trip(t: CqlType) -> None:
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        back = pickle.loads(pickle.dumps(t, protocol))
        assert back == t and hash(back) == hash(t)
        assert back.cql_name == t.cql_name and back.fields == t.fields
    assert copy.copy(t) == t and copy.deepcopy(t) == t


def test_pickled_scalars_come_back_as_the_same_object() -> None:
    for kind in kinds.SCALAR_NAMES:
        t = scalar_type(kind)
        assert pickle.loads(pickle.dumps(t)) is t


@given(type_trees(keyspace=keyspaces, with_reversed=True))
def test_pickle_round_trip_random(t: CqlType) -> None:
    assert pickle.loads(pickle.dumps(t)) == t


def test_constructor_validation() -> None:
    with pytest.raises(ValueError):
        scalar_type(kinds.LIST)
    with pytest.raises(ValueError):
        scalar_type(kinds.CUSTOM)
    with pytest.raises(ValueError):
        tuple_of()
    for dim in (0, -1):
        with pytest.raises(ValueError):
            vector_of(FLOAT, dim)
    with pytest.raises(ValueError, match="duplicate"):
        user_type("ks", "t", [("a", INT), ("a", TEXT)])


def test_cql_names() -> None:
    assert map_of(TEXT, frozen(list_of(INT))).cql_name == "map<text, frozen<list<int>>>"
    assert vector_of(FLOAT, 3).cql_name == "vector<float, 3>"
    assert tuple_of(INT, TEXT).cql_name == "tuple<int, text>"
    assert frozen(ADDR).cql_name == "frozen<addr>"
    assert reversed_type(INT).cql_name == "int"
    assert custom_type("org.example.Foo").cql_name == "'org.example.Foo'"
    assert custom_type("it's").cql_name == "'it''s'"
    assert scalar_type(kinds.EMPTY).cql_name == "'org.apache.cassandra.db.marshal.EmptyType'"
    assert str(list_of(INT)) == "list<int>"
    assert repr(list_of(INT)) == "CqlType('list<int>')"


@pytest.mark.parametrize("name, quoted", [
    ("addr", "addr"), ("a_1", "a_1"), ("Addr", '"Addr"'), ("1a", '"1a"'), ("a b", '"a b"'),
    ('q"t', '"q""t"'), ("", '""'), ("int", '"int"'), ("varchar", '"varchar"'),
    ("frozen", '"frozen"'), ("vector", '"vector"'), ("_a", '"_a"'), ("é", '"é"'),
])
def test_quote_identifier(name: str, quoted: str) -> None:
    assert _types.quote_identifier(name) == quoted
    assert user_type("ks", name, ()).cql_name == quoted


def test_accessors() -> None:
    assert ADDR.kind == kinds.UDT and ADDR.keyspace == "ks" and ADDR.name == "addr"
    assert ADDR.field_names == ("num", "street")
    assert ADDR.fields == (("num", INT), ("street", TEXT))
    assert ADDR.subtypes == (INT, TEXT)
    v = vector_of(FLOAT, 3)
    assert v.dimension == 3 and v.subtypes == (FLOAT,) and INT.dimension == 0
    assert custom_type("org.example.Foo").name == "org.example.Foo"
    # equal, not always the same object: the bounded intern table may have dropped the
    # list<int> that an interned reversed<list<int>> holds (test_interning_is_bounded fills it)
    unwrapped = frozen(reversed_type(list_of(INT))).unwrapped()
    assert unwrapped == list_of(INT) and unwrapped.kind == kinds.LIST
    assert INT.unwrapped() is INT


@pytest.mark.parametrize("t, size", [
    (INT, 4), (scalar_type(kinds.BIGINT), 8), (scalar_type(kinds.UUID), 16),
    (scalar_type(kinds.BOOLEAN), 1), (TEXT, -1), (SMALLINT, -1),
    (scalar_type(kinds.DATE), -1), (scalar_type(kinds.TIME), -1),
    (vector_of(FLOAT, 3), 12), (vector_of(vector_of(FLOAT, 2), 3), 24),
    (vector_of(SMALLINT, 2), -1), (frozen(vector_of(INT, 2)), 8), (reversed_type(INT), 4),
    (list_of(INT), -1), (ADDR, -1), (custom_type("org.example.Foo"), -1),
])
def test_fixed_size(t: CqlType, size: int) -> None:
    assert t.fixed_size == size


def test_serialize_and_deserialize_check_their_arguments_first() -> None:
    with pytest.raises(ProtocolVersionError):
        INT.serialize(1, protocol_version=2)
    with pytest.raises(ProtocolVersionError):
        INT.deserialize(b"\x00\x00\x00\x01", protocol_version=6)
    with pytest.raises(EncodeTypeError):
        INT.serialize(None)
    with pytest.raises(DecodeError):
        INT.deserialize("abcd")  # type: ignore[arg-type]


@pytest.mark.compiled_only
def test_compiled_type_has_no_writable_state() -> None:
    t = list_of(INT)
    for attr in ("_kind", "_cql_name", "_subtypes", "_key", "_hash", "anything"):
        with pytest.raises(AttributeError):
            setattr(t, attr, 1)
    assert t.cql_name == "list<int>" and t.kind == kinds.LIST


def test_vector_dimension_is_a_java_int() -> None:
    assert vector_of(FLOAT, 2**31 - 1).dimension == 2**31 - 1
    for dim in (2**31, 2**64, 10**30):
        with pytest.raises(ValueError):
            vector_of(FLOAT, dim)
