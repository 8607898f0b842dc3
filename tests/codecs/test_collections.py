"""list, set, map, tuple and user-defined types: bytes, values, errors, containers."""

from __future__ import annotations

import collections
import copy
import dataclasses
import pickle
from collections.abc import Iterator, Mapping
from typing import Any

import oracle
import pytest

from cqlcodec import (
    CqlType,
    DecodeError,
    EncodeError,
    EncodeTypeError,
    EncodeValueError,
    FrozenMap,
    UdtValue,
    UnsupportedTypeError,
    frozen,
    kinds,
    list_of,
    map_of,
    scalar_type,
    set_of,
    tuple_of,
    udt_class,
    user_type,
    vector_of,
)
from cqlcodec.codecs.base import FLAG_HASHABLE
from cqlcodec.types.model import MAX_TYPE_DEPTH

INT = scalar_type(kinds.INT)
TEXT = scalar_type(kinds.TEXT)
BOOL = scalar_type(kinds.BOOLEAN)
BIGINT = scalar_type(kinds.BIGINT)
FLOAT = scalar_type(kinds.FLOAT)
BLOB = scalar_type(kinds.BLOB)


def h(text: str) -> bytes:
    return bytes.fromhex(text.replace(" ", ""))


def i32(n: int) -> str:
    return (n & 0xFFFFFFFF).to_bytes(4, "big").hex()


ADDRESS = user_type("ks", "address", [("street", TEXT), ("zip code", INT), ("count", INT)])


# --- hand-written byte vectors ----------------------------------------------------------------

BYTE_VECTORS: list[tuple[CqlType, object, str]] = [
    (list_of(INT), [], "00000000"),
    (list_of(INT), [1, 2], "00000002 00000004 00000001 00000004 00000002"),
    (list_of(INT), [1, None, 3], "00000003 00000004 00000001 ffffffff 00000004 00000003"),
    (list_of(TEXT), ["", "ab"], "00000002 00000000 00000002 6162"),
    (set_of(INT), [7], "00000001 00000004 00000007"),
    (map_of(TEXT, INT), {"a": 1, "": -1},
     "00000002 00000001 61 00000004 00000001 00000000 00000004 ffffffff"),
    (map_of(INT, TEXT), {1: None}, "00000001 00000004 00000001 ffffffff"),
    (list_of(list_of(INT)), [[1], []],
     "00000002 0000000c 00000001 00000004 00000001 00000004 00000000"),
    (map_of(TEXT, list_of(INT)), {"k": [5]},
     "00000001 00000001 6b 0000000c 00000001 00000004 00000005"),
    (tuple_of(INT, TEXT, BOOL), (1, "x", True), "00000004 00000001 00000001 78 00000001 01"),
    (tuple_of(INT, TEXT), (None, None), "ffffffff ffffffff"),
    (tuple_of(list_of(INT)), ([],), "00000004 00000000"),
    (ADDRESS, ("Main", 5, 2), "00000004 4d61696e 00000004 00000005 00000004 00000002"),
    (ADDRESS, {"street": "Main"}, "00000004 4d61696e ffffffff ffffffff"),
    (frozen(list_of(INT)), [9], "00000001 00000004 00000009"),
    (list_of(vector_of(FLOAT, 2)), [[1.0, -1.0]], "00000001 00000008 3f800000 bf800000"),
]


@pytest.mark.parametrize(("t", "value", "hexbytes"), BYTE_VECTORS,
                         ids=[f"{t.cql_name}-{i}" for i, (t, _v, _h) in enumerate(BYTE_VECTORS)])
def test_byte_vectors(t: CqlType, value: object, hexbytes: str) -> None:
    data = h(hexbytes)
    assert t.serialize(value) == data
    for pv in (3, 4, 5):
        assert t.serialize(value, pv) == data
    decoded = t.deserialize(data)
    assert t.serialize(decoded) == data


def test_decoded_values() -> None:
    assert list_of(INT).deserialize(h("00000003 00000004 00000001 ffffffff 00000004 00000003")) \
        == [1, None, 3]
    assert set_of(INT).deserialize(h("00000002 00000004 00000001 00000004 00000002")) == {1, 2}
    m = map_of(TEXT, INT).deserialize(h("00000002 00000001 62 00000004 00000001"
                                        " 00000001 61 ffffffff"))
    assert type(m) is dict and m == {"b": 1, "a": None} and list(m) == ["b", "a"]
    t = tuple_of(INT, TEXT, BOOL).deserialize(h("00000004 00000001 ffffffff ffffffff"))
    assert t == (1, None, None) and type(t) is tuple
    assert tuple_of(INT, TEXT, BOOL).deserialize(h("00000004 00000001")) == (1, None, None)
    short_udt = ADDRESS.deserialize(h("00000004 4d61696e"))  # written before ALTER TYPE ADD
    assert isinstance(short_udt, tuple) and tuple(short_udt) == ("Main", None, None)
    assert type(list_of(INT).deserialize(h("00000000"))) is list
    assert type(set_of(INT).deserialize(h("00000000"))) is set


def test_empty_content_is_none() -> None:
    for t in (list_of(INT), set_of(INT), map_of(INT, INT), tuple_of(INT), ADDRESS,
              vector_of(INT, 2), vector_of(TEXT, 2)):
        assert t.deserialize(b"") is None


def test_zero_length_elements_follow_the_element_type() -> None:
    # an empty element is an empty value of the element type: None for int, "" for text
    assert list_of(INT).deserialize(h("00000001 00000000")) == [None]
    assert list_of(TEXT).deserialize(h("00000001 00000000")) == [""]
    assert list_of(BLOB).deserialize(h("00000001 00000000")) == [b""]


def test_driver_agrees_on_null_free_values() -> None:
    cases: list[tuple[CqlType, str, object]] = [
        (list_of(INT), "org.apache.cassandra.db.marshal.ListType(org.apache.cassandra.db.marshal"
                       ".Int32Type)", [1, -2, 3]),
        (map_of(TEXT, INT), "org.apache.cassandra.db.marshal.MapType(org.apache.cassandra.db."
                            "marshal.UTF8Type,org.apache.cassandra.db.marshal.Int32Type)",
         {"a": 1, "b": 2}),
        (tuple_of(INT, TEXT), "org.apache.cassandra.db.marshal.TupleType(org.apache.cassandra"
                              ".db.marshal.Int32Type,org.apache.cassandra.db.marshal.UTF8Type)",
         (4, "four")),
    ]
    for t, java, value in cases:
        assert t.serialize(value) == oracle.serialize(java, value)


# --- hashable decoding --------------------------------------------------------------------------

def test_set_of_frozen_collections_decodes_hashable() -> None:
    t = set_of(frozen(list_of(INT)))
    assert t.deserialize(t.serialize([[1, 2], [3]])) == {(1, 2), (3,)}
    t2 = set_of(frozen(set_of(INT)))
    got = t2.deserialize(t2.serialize([{1, 2}]))
    assert got == {frozenset({1, 2})}
    t3 = map_of(frozen(map_of(TEXT, list_of(INT))), INT)
    got3 = t3.deserialize(t3.serialize([({"a": [1]}, 5)]))
    assert isinstance(got3, dict)
    (key, val), = got3.items()
    assert isinstance(key, FrozenMap) and key == {"a": (1,)} and val == 5
    t4 = set_of(frozen(tuple_of(INT, list_of(INT))))
    assert t4.deserialize(t4.serialize([(1, [2])])) == {(1, (2,))}
    t5 = set_of(vector_of(INT, 2))
    assert t5.deserialize(t5.serialize([[1, 2]])) == {(1, 2)}


def test_hashable_flag_variants() -> None:
    assert list_of(INT).codec(FLAG_HASHABLE).decode(h("00000001 00000004 00000001"), 0, 12) \
        == (1,)
    fs = set_of(INT).codec(FLAG_HASHABLE).decode(h("00000001 00000004 00000001"), 0, 12)
    assert type(fs) is frozenset
    fm = map_of(INT, INT).codec(FLAG_HASHABLE).decode(
        h("00000001 00000004 00000001 00000004 00000002"), 0, 20)
    assert type(fm) is FrozenMap and hash(fm) == hash(FrozenMap({1: 2}))


def test_set_dedups_and_udt_in_set_is_hashable() -> None:
    t = set_of(INT)
    assert t.deserialize(h("00000002 00000004 00000001 00000004 00000001")) == {1}
    t2 = set_of(frozen(ADDRESS))
    got = t2.deserialize(t2.serialize([("a", 1, 2)]))
    assert isinstance(got, set)
    (v,), = [list(got)]
    assert v.street == "a" and hash(v) == hash(("a", 1, 2))


# --- malformed bytes ------------------------------------------------------------------------------

MALFORMED: list[tuple[CqlType, str, int]] = [
    (list_of(INT), "000000", 0),                                 # no room for the count
    (list_of(INT), "ffffffff", 0),                               # negative count
    (list_of(INT), "7fffffff 00000000", 0),                      # count larger than the buffer
    (list_of(INT), "00000002 00000004 00000001", 12),            # truncated before element 2
    (list_of(INT), "00000001 00000004 000000", 4),               # element longer than the rest
    (list_of(INT), "00000001 fffffffe", 4),                      # -2 (not set) is not an element
    (list_of(INT), "00000001 80000000", 4),                      # other negative length
    (list_of(INT), "00000001 00000004 00000001 00", 12),         # trailing byte
    (list_of(INT), "00000001 00000003 000001", 8),               # element of the wrong width
    (set_of(INT), "00000002 00000004 00000001", 12),
    (set_of(INT), "00000001 fffffffe", 4),
    (map_of(INT, INT), "00000001 00000004 00000001", 12),        # value missing
    (map_of(INT, INT), "00000002 00000004 00000001 00000004 00000001", 20),  # second key missing
    (map_of(INT, INT), "00000003 00000004 00000001 00000004 00000001", 0),  # count*8 too big
    (map_of(INT, INT), "00000001 00000004 00000001 fffffffd", 12),
    (map_of(INT, INT), "00000001 00000004 00000001 00000004 00000002 ff", 20),
    (tuple_of(INT), "00000004 00000001 00000004 00000002", 8),   # more fields than the type
    (tuple_of(INT, INT), "00000004 00000001 0000", 8),           # truncated length word
    (tuple_of(INT), "fffffffe", 0),
    (tuple_of(INT), "00000008 00000001", 0),                     # field longer than the rest
    (ADDRESS, "00000000 00000000 00000000 00000000", 12),        # more fields than the type
]


@pytest.mark.parametrize(("t", "hexbytes", "offset"), MALFORMED,
                         ids=[f"{t.cql_name}-{i}" for i, (t, _b, _o) in enumerate(MALFORMED)])
def test_malformed_bytes_raise_decode_error(t: CqlType, hexbytes: str, offset: int) -> None:
    data = h(hexbytes)
    with pytest.raises(DecodeError) as info:
        t.deserialize(data)
    assert info.value.offset == offset
    assert info.value.cql_type is not None


RUN_CASES: list[tuple[CqlType, list[object]]] = [
    (INT, [0, -1, 2**31 - 1, -(2**31), 7]),
    (BIGINT, [0, -1, 2**63 - 1, -(2**63)]),
    (scalar_type(kinds.COUNTER), [3, -3]),
    (scalar_type(kinds.DOUBLE), [0.0, -0.0, 1.5, float("inf")]),
    (FLOAT, [0.0, -2.5, float("-inf")]),
    (BOOL, [True, False]),
]


@pytest.mark.parametrize(("sub", "values"), RUN_CASES, ids=[t.cql_name for t, _v in RUN_CASES])
def test_fixed_size_element_runs(sub: CqlType, values: list[object]) -> None:
    # the interpreted build decodes these with one struct call when there is no null
    for n in (0, 1, 2, 10, 63, 64, 65, 100):
        items = (values * 100)[:n]
        for t in (list_of(sub), set_of(sub)):
            data = t.serialize(items)
            want: object = items if t.kind == kinds.LIST else set(items)
            assert t.deserialize(data) == want
            if n:
                with_null = [*items[:-1], None]
                data = t.serialize(with_null)
                assert t.deserialize(data) == (with_null if t.kind == kinds.LIST
                                               else set(with_null))
                with pytest.raises(DecodeError):
                    t.deserialize(data[:-1])
                with pytest.raises(DecodeError):
                    t.deserialize(t.serialize(items) + b"\x00")
    size = sub.fixed_size
    wide = "00000002" + (i32(size + 1) + "00" * (size + 1)) * 2
    with pytest.raises(DecodeError):
        list_of(sub).deserialize(h(wide))


def test_boolean_elements_accept_any_nonzero_byte() -> None:
    assert list_of(BOOL).deserialize(h("00000002 00000001 02 00000001 00")) == [True, False]


def test_decode_error_offsets_are_absolute_inside_nesting() -> None:
    t = list_of(list_of(INT))
    data = h("00000001 0000000c 00000001 00000005 00000001")  # inner element too long
    with pytest.raises(DecodeError) as info:
        t.deserialize(data)
    assert info.value.offset == 12 and info.value.cql_type == "list<int>"


def test_huge_count_is_refused_before_allocating() -> None:
    t = list_of(list_of(list_of(INT)))
    with pytest.raises(DecodeError, match="cannot fit"):
        t.deserialize(h("7fffffff"))
    with pytest.raises(DecodeError, match="cannot fit"):
        map_of(INT, INT).deserialize(h("10000000") + bytes(64))


def test_every_truncation_of_a_nested_value_is_a_decode_error() -> None:
    t = map_of(TEXT, frozen(list_of(tuple_of(INT, TEXT))))
    data = t.serialize({"a": [(1, "x"), (None, "yz")], "b": []})
    for cut in range(1, len(data)):
        with pytest.raises(DecodeError):
            t.deserialize(data[:cut])
    with pytest.raises(DecodeError):
        t.deserialize(data + b"\x00")


# --- encoding inputs --------------------------------------------------------------------------

class Gen:
    """An iterable that is not a sequence."""

    def __init__(self, items: list[object]) -> None:
        self.items = items

    def __iter__(self) -> Iterator[object]:
        return iter(self.items)


def test_list_accepts_iterables_and_refuses_strings_and_mappings() -> None:
    t = list_of(INT)
    want = t.serialize([1, 2, 3])
    assert t.serialize((1, 2, 3)) == want
    assert t.serialize(range(1, 4)) == want
    assert t.serialize(collections.deque([1, 2, 3])) == want
    assert t.serialize(Gen([1, 2, 3])) == want
    for bad in ("123", b"\x01", bytearray(b"\x01"), memoryview(b"\x01"), {1: 2}, 5, None):
        with pytest.raises(EncodeTypeError):
            t.serialize(bad)


def test_set_accepts_any_iterable() -> None:
    t = set_of(INT)
    assert t.deserialize(t.serialize({1, 2})) == {1, 2}
    assert t.deserialize(t.serialize(frozenset({3}))) == {3}
    assert t.deserialize(t.serialize([4, 5])) == {4, 5}
    assert t.deserialize(t.serialize(Gen([6]))) == {6}
    for bad in ("ab", b"ab", {1: 1}, 3.5):
        with pytest.raises(EncodeTypeError):
            t.serialize(bad)


def test_element_errors_propagate() -> None:
    with pytest.raises(EncodeTypeError):
        list_of(INT).serialize([1, "2"])
    with pytest.raises(EncodeTypeError):
        list_of(INT).serialize([True])
    with pytest.raises(EncodeValueError):
        list_of(INT).serialize([2**31])
    with pytest.raises(EncodeValueError):
        set_of(FLOAT).serialize([1e300])


class Pairs(Mapping[str, object]):
    def __init__(self, d: dict[str, object]) -> None:
        self.d = d

    def __getitem__(self, k: str) -> object:
        return self.d[k]

    def __iter__(self) -> Iterator[str]:
        return iter(self.d)

    def __len__(self) -> int:
        return len(self.d)


def test_map_accepts_mappings_and_pairs() -> None:
    t = map_of(TEXT, INT)
    want = t.serialize({"a": 1, "b": 2})
    assert t.serialize([("a", 1), ("b", 2)]) == want
    assert t.serialize([["a", 1], ["b", 2]]) == want
    assert t.serialize(Pairs({"a": 1, "b": 2})) == want
    assert t.serialize(FrozenMap({"a": 1, "b": 2})) == want
    assert t.serialize(collections.OrderedDict([("a", 1), ("b", 2)])) == want
    assert t.serialize(iter([("a", 1), ("b", 2)])) == want
    for bad in ([("a", 1, 2)], ["ab"], [1], "ab", b"ab", 7):
        with pytest.raises(EncodeTypeError):
            t.serialize(bad)
    with pytest.raises(EncodeTypeError):
        t.serialize({1: 1})


def test_tuple_lengths() -> None:
    t = tuple_of(INT, TEXT)
    assert t.serialize([1, "a"]) == t.serialize((1, "a"))
    assert t.serialize(()) == b""
    with pytest.raises(EncodeValueError, match="3 items"):
        t.serialize((1, "a", 2))
    for bad in ("ab", {0: 1}, 5):
        with pytest.raises(EncodeTypeError):
            t.serialize(bad)


def test_tuple_value_missing_components_decodes_as_none() -> None:
    """Cassandra stores and returns tuple values shorter than their type (the drivers pad
    them with None), however many components they lack."""
    t = tuple_of(INT, TEXT, BOOL)
    assert t.deserialize(h("00000004 00000001 00000001 61")) == (1, "a", None)
    assert tuple_of(*[INT] * 13).deserialize(h("ffffffff")) == (None,) * 13
    assert tuple_of(*[INT] * 40).deserialize(h("00000004 00000007")) == (7,) + (None,) * 39
    wide = tuple_of(*[INT] * 0xFFFF)
    assert wide.deserialize(h("ffffffff")) == (None,) * 0xFFFF


def test_short_tuple_sequences_encode_short_values() -> None:
    """Fewer items than components: a short value, as the drivers and CQL literals write
    it (Cassandra keeps it short, so a padded value would be another primary key)."""
    t = tuple_of(INT, TEXT, BOOL)
    assert t.serialize((1,)) == h("00000004 00000001")
    assert t.serialize([1, None]) == h("00000004 00000001 ffffffff")
    assert t.deserialize(t.serialize((1,))) == (1, None, None)


# --- user-defined types ---------------------------------------------------------------------

Rec: Any = collections.namedtuple("Rec", ["count", "street"])


@dataclasses.dataclass
class Obj:
    street: str
    count: int


def test_udt_inputs() -> None:
    full = ADDRESS.serialize(("Main", 5, 2))
    assert ADDRESS.serialize(["Main", 5, 2]) == full
    assert ADDRESS.serialize({"street": "Main", "zip code": 5, "count": 2}) == full
    assert ADDRESS.serialize(Pairs({"street": "Main", "zip code": 5, "count": 2})) == full
    value = ADDRESS.deserialize(full)
    assert ADDRESS.serialize(value) == full
    cls = udt_class(ADDRESS)
    assert ADDRESS.serialize(cls("Main", count=2, **{"zip code": 5})) == full
    # a namedtuple with other fields is matched by name; missing fields are null
    assert ADDRESS.serialize(Rec(2, "Main")) == ADDRESS.serialize(
        {"street": "Main", "count": 2})
    assert ADDRESS.serialize(Obj("Main", 2)) == ADDRESS.serialize({"street": "Main", "count": 2})
    assert ADDRESS.serialize(("Main",)) == ADDRESS.serialize({"street": "Main"})


def test_udt_input_errors() -> None:
    with pytest.raises(EncodeValueError, match="'zip'"):
        ADDRESS.serialize({"street": "x", "zip": 1})
    with pytest.raises(EncodeValueError, match="4 values"):
        ADDRESS.serialize(("a", 1, 2, 3))
    with pytest.raises(EncodeValueError, match="'other'"):
        other: Any = collections.namedtuple("other", ["street", "other"])
        ADDRESS.serialize(other("a", 1))
    for bad in ("Main", b"x", 5, object()):
        with pytest.raises(EncodeTypeError):
            ADDRESS.serialize(bad)
    with pytest.raises(EncodeTypeError):
        ADDRESS.serialize({"street": 5})


def test_udt_decode_fewer_fields_than_the_type() -> None:
    v: Any = ADDRESS.deserialize(h("00000001 41"))
    assert v == ("A", None, None)
    assert v.street == "A" and v["zip code"] is None


def test_udt_known_only_by_name() -> None:
    ref = user_type("ks", "later", ())
    with pytest.raises(UnsupportedTypeError, match="ks.later"):
        ref.serialize({})
    with pytest.raises(UnsupportedTypeError):
        ref.deserialize(h("00000000"))
    with pytest.raises(UnsupportedTypeError):
        list_of(ref).serialize([{}])


def test_udt_value_class() -> None:
    v: Any = ADDRESS.deserialize(ADDRESS.serialize(("Main", 5, 2)))
    cls = udt_class(ADDRESS)
    got: object = v
    assert type(got) is cls and isinstance(got, UdtValue) and isinstance(got, tuple)
    assert cls is udt_class(ADDRESS)
    assert cls.__name__ == "address"
    assert v._fields == ("street", "zip code", "count")
    assert v[0] == v.street == v["street"] == "Main"
    assert getattr(v, "zip code") == v["zip code"] == v[1] == 5
    assert v.count == 2  # a field named like a tuple method wins, as in namedtuple
    assert v._asdict() == {"street": "Main", "zip code": 5, "count": 2}
    assert v == ("Main", 5, 2) and hash(v) == hash(("Main", 5, 2))
    assert v._replace(street="Side") == ("Side", 5, 2)
    assert repr(v) == "address(**{'street': 'Main', 'zip code': 5, 'count': 2})"
    assert cls("x") == ("x", None, None)
    with pytest.raises(TypeError):
        cls(1, 2, 3, 4)
    with pytest.raises(TypeError):
        cls(nope=1)
    with pytest.raises(KeyError):
        v["nope"]
    with pytest.raises(AttributeError):
        getattr(v, "nope")
    with pytest.raises(AttributeError):
        v.street = "x"
    for proto in range(pickle.HIGHEST_PROTOCOL + 1):
        back = pickle.loads(pickle.dumps(v, proto))
        assert back == v and type(back) is cls
    assert copy.copy(v) is v and copy.deepcopy(v) == v


def test_udt_value_plain_names_and_reserved_names() -> None:
    point = user_type("geo", "point", [("x", INT), ("y", INT)])
    p: Any = point.deserialize(point.serialize({"x": 1, "y": 2}))
    assert repr(p) == "point(x=1, y=2)"
    assert p.x == 1 and p.y == 2
    assert type(p).__match_args__ == ("x", "y")
    odd = user_type("ks", "odd", [("_fields", INT), ("index", INT), ("class", INT)])
    o: Any = odd.deserialize(odd.serialize((1, 2, 3)))
    assert o._fields == ("_fields", "index", "class")  # the machinery is not shadowed
    assert o["_fields"] == 1 and o.index == 2 and getattr(o, "class") == 3
    unhashable = user_type("ks", "u", [("l", list_of(INT))])
    u: Any = unhashable.deserialize(unhashable.serialize(([1],)))
    with pytest.raises(TypeError):
        hash(u)


def test_udt_class_cache_is_bounded() -> None:
    from cqlcodec import containers

    for i in range(containers._CLASS_LIMIT + 50):
        udt_class(user_type("bound", f"t{i}", [("a", INT)]))
    assert len(containers._classes) <= containers._CLASS_LIMIT


def test_udt_driver_agrees_on_full_tuples() -> None:
    # (the driver cannot parse UDT names whose hex spelling is all digits, spec 11.7)
    zone = user_type("ks", "zone", [("street", TEXT), ("zip code", INT), ("count", INT)])
    java = ("org.apache.cassandra.db.marshal.UserType(ks,7a6f6e65,"
            "737472656574:org.apache.cassandra.db.marshal.UTF8Type,"
            "7a697020636f6465:org.apache.cassandra.db.marshal.Int32Type,"
            "636f756e74:org.apache.cassandra.db.marshal.Int32Type)")
    assert zone.serialize(("Main", 5, 2)) == oracle.serialize_java(java, ("Main", 5, 2))
    back = oracle.deserialize_java(java, zone.serialize(("Main", 5, 2)))
    assert tuple(back) == zone.deserialize(zone.serialize(("Main", 5, 2)))


# --- FrozenMap ------------------------------------------------------------------------------------

def test_frozen_map() -> None:
    m: FrozenMap[str, int] = FrozenMap({"b": 2, "a": 1})
    assert list(m) == ["b", "a"] and list(m.items()) == [("b", 2), ("a", 1)]
    assert m == {"a": 1, "b": 2} and {"a": 1, "b": 2} == m
    assert m == FrozenMap([("a", 1), ("b", 2)])
    assert m == Pairs({"a": 1, "b": 2})
    assert m != {"a": 1} and m != [("a", 1), ("b", 2)]
    assert hash(m) == hash(FrozenMap({"a": 1, "b": 2}))
    assert len({m, FrozenMap({"a": 1, "b": 2})}) == 1
    assert m["a"] == 1 and m.get("z") is None and m.get("z", 5) == 5 and "a" in m
    assert len(m) == 2 and isinstance(m, Mapping)
    assert repr(m) == "FrozenMap({'b': 2, 'a': 1})"
    assert pickle.loads(pickle.dumps(m)) == m
    assert copy.copy(m) is m and copy.deepcopy(m) == m
    with pytest.raises(AttributeError):
        setattr(m, "x", 1)
    with pytest.raises(TypeError):
        m["c"] = 3  # type: ignore[index]
    with pytest.raises(TypeError):
        hash(FrozenMap({"a": [1]}))
    assert FrozenMap() == {}


# --- nesting depth ----------------------------------------------------------------------------

def _nested(depth: int, make: Any) -> CqlType:
    t = INT
    for _i in range(depth):
        t = make(t)
    return t


@pytest.mark.parametrize("make", [list_of, set_of, tuple_of, lambda t: map_of(INT, t),
                                  lambda t: vector_of(t, 1),
                                  lambda t: user_type("ks", "n", [("f", t)])])
def test_nesting_limit(make: Any) -> None:
    # the deepest type that can be made (MAX_TYPE_DEPTH levels, leaf included) works
    # in both builds; anything deeper is refused, by the type or by its codec
    levels = MAX_TYPE_DEPTH - 1
    ok = _nested(levels, make)
    value: object = 1
    for _i in range(levels):
        value = {1: value} if ok.kind == kinds.MAP else [value]
    data = ok.serialize(value)
    assert ok.serialize(ok.deserialize(data)) == data
    with pytest.raises(UnsupportedTypeError):
        _nested(levels + 1, make).codec()
    with pytest.raises(UnsupportedTypeError):
        _nested(3 * levels, make).codec()


def test_encode_errors_are_codec_errors() -> None:
    with pytest.raises(EncodeError):
        list_of(INT).serialize(object())
