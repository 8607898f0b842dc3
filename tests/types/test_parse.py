"""parse_type: CQL type text and Java marshal class names -> CqlType."""

from __future__ import annotations

import random
import threading

import oracle
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from type_strategies import (
    JAVA_SCALAR_NAMES,
    PREFIX,
    java_name,
    keyspaces,
    option_bytes,
    tree,
    type_trees,
    udt_registry,
    user_types_in,
    without_reversed,
)

from cqlcodec import (
    CqlType,
    TypeParseError,
    composite_type,
    custom_type,
    frozen,
    kinds,
    list_of,
    map_of,
    parse_type,
    read_type_option,
    reversed_type,
    scalar_type,
    set_of,
    tuple_of,
    user_type,
    vector_of,
)
from cqlcodec.types import parse as _parse

INT = scalar_type(kinds.INT)
TEXT = scalar_type(kinds.TEXT)
FLOAT = scalar_type(kinds.FLOAT)
ADDR = user_type("ks", "addr", [("num", INT), ("street", TEXT)])

CQL_SCALARS = {
    "ascii": kinds.ASCII, "bigint": kinds.BIGINT, "blob": kinds.BLOB,
    "boolean": kinds.BOOLEAN, "counter": kinds.COUNTER, "date": kinds.DATE,
    "decimal": kinds.DECIMAL, "double": kinds.DOUBLE, "duration": kinds.DURATION,
    "float": kinds.FLOAT, "inet": kinds.INET, "int": kinds.INT, "smallint": kinds.SMALLINT,
    "text": kinds.TEXT, "time": kinds.TIME, "timestamp": kinds.TIMESTAMP,
    "timeuuid": kinds.TIMEUUID, "tinyint": kinds.TINYINT, "uuid": kinds.UUID,
    "varint": kinds.VARINT,
}

CQL_CANONICAL = [
    ("MAP<varchar,int>", "map<text, int>"),
    ("map<text, frozen<list<int>>>", "map<text, frozen<list<int>>>"),
    ("  list < int >  ", "list<int>"),
    ("\tSET<\nbigint\n>", "set<bigint>"),
    ("List<VarChar>", "list<text>"),
    ("vector<float, 768>", "vector<float, 768>"),
    ("VECTOR<FLOAT,3>", "vector<float, 3>"),
    ("vector<float, 003>", "vector<float, 3>"),
    ("vector<text, 2147483647>", "vector<text, 2147483647>"),
    ("vector<vector<int, 2>, 3>", "vector<vector<int, 2>, 3>"),
    ("vector<list<smallint>,1>", "vector<list<smallint>, 1>"),
    ("tuple<int, text>", "tuple<int, text>"),
    ("tuple<int>", "tuple<int>"),
    ("tuple<int,tuple<text,blob>,  map<uuid,inet>>", "tuple<int, tuple<text, blob>, map<uuid, inet>>"),
    ("frozen<map<int, text>>", "frozen<map<int, text>>"),
    ("FROZEN<tuple<int>>", "frozen<tuple<int>>"),
    ("frozen<vector<float,2>>", "frozen<vector<float, 2>>"),
    ("frozen<frozen<list<int>>>", "frozen<frozen<list<int>>>"),
    ("frozen<int>", "frozen<int>"),  # accepted: frozen<> never changes the bytes
    ("map<frozen<set<timeuuid>>, frozen<tuple<date, time, duration>>>",
     "map<frozen<set<timeuuid>>, frozen<tuple<date, time, duration>>>"),
    ('frozen<"MyType">', 'frozen<"MyType">'),
    ('"my""type"', '"my""type"'),
    ('"ks"."Addr"', '"Addr"'),
    ('ks . "Addr"', '"Addr"'),
    ('"address"', "address"),
    ('"int"', '"int"'),
    ('list<"List">', 'list<"List">'),
    ("'org.example.Foo'", "'org.example.Foo'"),
    ("'org.apache.cassandra.db.marshal.Int32Type'", "int"),
    ("' org.apache.cassandra.db.marshal.VectorType(FloatType, 3) '", "vector<float, 3>"),
    ("list<'org.example.Foo'>", "list<'org.example.Foo'>"),
    ("'org.apache.cassandra.db.marshal.EmptyType'", "'org.apache.cassandra.db.marshal.EmptyType'"),
]

JAVA_CANONICAL = [
    ("org.apache.cassandra.db.marshal.VectorType(org.apache.cassandra.db.marshal.FloatType, 3)",
     "vector<float, 3>"),
    ("VectorType(FloatType,3)", "vector<float, 3>"),
    ("VectorType( FloatType , 3 )", "vector<float, 3>"),
    ("VectorType(VectorType(FloatType,2),3)", "vector<vector<float, 2>, 3>"),
    ("VectorType(UTF8Type, 2)", "vector<text, 2>"),
    ("org.apache.cassandra.db.marshal.MapType(org.apache.cassandra.db.marshal.UTF8Type,"
     "org.apache.cassandra.db.marshal.FrozenType(org.apache.cassandra.db.marshal.ListType("
     "org.apache.cassandra.db.marshal.Int32Type)))", "map<text, frozen<list<int>>>"),
    ("SetType(LongType)", "set<bigint>"),
    ("ListType(BytesType)", "list<blob>"),
    ("TupleType(Int32Type,UTF8Type,BooleanType)", "tuple<int, text, boolean>"),
    ("ReversedType(TimestampType)", "timestamp"),
    ("FrozenType(ReversedType(TimestampType))", "frozen<timestamp>"),
    ("DateType", "timestamp"),
    ("UserType(ks,61646472,6e756d:Int32Type,737472656574:UTF8Type)", "addr"),
    ("FrozenType(UserType(ks,61646472,6e756d:Int32Type,737472656574=>UTF8Type))", "frozen<addr>"),
    ("UserType(ks,4d7954797065)", '"MyType"'),
    ("UserType(ks,696e74,78:Int32Type)", '"int"'),
    ("CompositeType(Int32Type,UTF8Type)", ("'org.apache.cassandra.db.marshal.CompositeType("
     "org.apache.cassandra.db.marshal.Int32Type,org.apache.cassandra.db.marshal.UTF8Type)'")),
    ("org.apache.cassandra.db.marshal.CompositeType(org.apache.cassandra.db.marshal.Int32Type)",
     "'org.apache.cassandra.db.marshal.CompositeType(org.apache.cassandra.db.marshal.Int32Type)'"),
    ("DynamicCompositeType(a=>Int32Type,b=>ReversedType(UTF8Type))",
     "'DynamicCompositeType(a=>Int32Type,b=>ReversedType(UTF8Type))'"),
    ("CompositeType(Int32Type,ColumnToCollectionType(6c:ListType(Int32Type)))",
     ("'org.apache.cassandra.db.marshal.CompositeType(org.apache.cassandra.db.marshal.Int32Type,"
      "ColumnToCollectionType(6c:ListType(Int32Type)))'")),
    ("org.example.Foo", "'org.example.Foo'"),
    ("org.apache.cassandra.db.marshal.PointType", "'org.apache.cassandra.db.marshal.PointType'"),
    ("org.apache.cassandra.db.marshal.LexicalUUIDType",
     "'org.apache.cassandra.db.marshal.LexicalUUIDType'"),
    ("org.example.Foo(Int32Type, 3)", "'org.example.Foo(Int32Type, 3)'"),
    ("EmptyType", "'org.apache.cassandra.db.marshal.EmptyType'"),
]

# (text, position of the problem)
MALFORMED = [
    ("", 0),
    ("   ", 0),
    ("map<int>", 7),
    ("map<int, text, blob>", 15),
    ("list<int, int>", 10),
    ("MapType(Int32Type)", 7),
    ("ListType(Int32Type,Int32Type)", 8),
    ("TupleType()", 10),
    ("vector<float, 0>", 14),
    ("vector<float, -1>", 14),
    ("vector<float, 1.5>", 14),
    ("vector<float, 3x>", 14),
    ("vector<float, x>", 14),
    ("vector<float>", 12),
    ("vector<float, 99999999999>", 14),
    ("vector<float, 2147483648>", 14),
    ("VectorType(FloatType, 0)", 22),
    ("VectorType(FloatType, 2147483648)", 22),
    ("VectorType(FloatType)", 20),
    ("VectorType(FloatType, 3, 4)", 23),
    ("list<int", 8),
    ("list<int>>", 9),
    ("MAP<varchar,int", 15),
    ("ListType(Int32Type", 18),
    ("ListType(Int32Type))", 19),
    ("foo<int>", 0),
    ("int x", 4),
    ("list<>", 5),
    ("tuple<>", 6),
    ("int<int>", 3),
    ("list", 4),
    ("ListType", 8),
    ("Int32Type(Int32Type)", 9),
    ("address", 0),
    ("ks.address", 0),
    ("list<address>", 5),
    ('"unterminated', 0),
    ('""', 0),
    ("'org.example.Foo", 0),
    ("''", 0),
    ("'org.x.a''b'", 8),
    ("UserType(ks,6g)", 13),
    ("UserType(ks,616)", 12),
    ("UserType(ks,ff)", 12),
    ("UserType(ks,61,62Int32Type)", 17),
    ("UserType(ks,61,62:Int32Type,62:UTF8Type)", 28),
    ("UserType(ks,61,62)", 17),
    ("UserType(,61)", 9),
    ("Foo", 0),
    ("Foo(Int32Type)", 0),
    ("org..Foo", 4),
    ("map<int,, text>", 8),
    ("list<int;>", 8),
    ("text\x00", 4),
    ("org.example.Foo(a;b)", 17),
    ("org.example.Foo(a", 15),
    ("CompositeType(Int32Type,,UTF8Type)", 24),
    ("DynamicCompositeType(=>Int32Type)", 21),
]


@pytest.mark.parametrize("name, kind", sorted(CQL_SCALARS.items()))
def test_every_cql_scalar(name: str, kind: int) -> None:
    t = parse_type(name)
    assert t.kind == kind and t.cql_name == name and t is scalar_type(kind)
    assert parse_type(name.upper()) is t
    assert parse_type(f"  {name.title()}\n") is t


def test_varchar_is_text() -> None:
    assert parse_type("varchar") is parse_type("text") is TEXT
    assert parse_type("VARCHAR").cql_name == "text"


@pytest.mark.parametrize("kind, short", sorted(JAVA_SCALAR_NAMES.items()))
def test_every_java_scalar(kind: int, short: str) -> None:
    t = parse_type(short)
    assert t.kind == kind and t is scalar_type(kind)
    assert parse_type(PREFIX + short) is t


@pytest.mark.parametrize("text, canonical", CQL_CANONICAL + JAVA_CANONICAL)
def test_canonical_names(text: str, canonical: str) -> None:
    assert parse_type(text).cql_name == canonical


@pytest.mark.parametrize("text, canonical", CQL_CANONICAL + JAVA_CANONICAL)
def test_canonical_name_parses_to_the_same_type(text: str, canonical: str) -> None:
    t = without_reversed(parse_type(text))  # CQL cannot spell ReversedType: names skip it
    udts = {u.name: u for u in user_types_in(t)}
    assert parse_type(canonical, udts) == t


def test_structure_of_parsed_types() -> None:
    assert parse_type("map<text, frozen<list<int>>>") == map_of(TEXT, frozen(list_of(INT)))
    assert parse_type("vector<float, 768>") == vector_of(FLOAT, 768)
    assert parse_type("tuple<int, text>") == tuple_of(INT, TEXT)
    assert parse_type("set<int>") == set_of(INT)
    assert parse_type('frozen<"MyType">') == frozen(user_type("", "MyType", ()))
    assert parse_type('"my""type"') == user_type("", 'my"type', ())
    assert parse_type('ks."MyType"') == user_type("ks", "MyType", ())
    assert parse_type('"Ks"."MyType"') == user_type("Ks", "MyType", ())
    assert parse_type("'org.example.Foo'") == custom_type("org.example.Foo")
    assert parse_type("ReversedType(Int32Type)") == reversed_type(INT)
    assert parse_type("ReversedType(Int32Type)") != INT
    assert parse_type("EmptyType") is scalar_type(kinds.EMPTY)
    assert parse_type("CompositeType(Int32Type, UTF8Type)") == composite_type(INT, TEXT)
    text = "DynamicCompositeType(a=>Int32Type)"
    assert parse_type(text) == custom_type(text)


def test_java_user_type_with_decimal_digit_names() -> None:
    # "addr" hex-encodes to 61646472 and "num" to 6e756d: names the driver turns into ints
    t = parse_type("UserType(ks,61646472,6e756d:Int32Type,737472656574:UTF8Type)")
    assert t == ADDR
    assert t.keyspace == "ks" and t.name == "addr" and t.field_names == ("num", "street")
    assert t.fields == (("num", INT), ("street", TEXT))
    digits = parse_type("UserType(ks,3132,3334:Int32Type)")  # name "12", field "34"
    assert digits == user_type("ks", "12", [("34", INT)])
    assert digits.cql_name == '"12"'
    unicode_name = "адрес"
    hexed = unicode_name.encode().hex()
    assert parse_type(f"UserType(ks,{hexed})") == user_type("ks", unicode_name, ())


def test_driver_crashes_on_digit_only_udt_names_and_we_do_not() -> None:
    text = "UserType(ks,61646472,6e756d:Int32Type)"
    with pytest.raises(AttributeError):  # spec section 11.7: the driver's int() token bug
        oracle.driver_java_type_tree(text)
    assert parse_type(text) == user_type("ks", "addr", [("num", INT)])


def test_driver_accepts_unbalanced_parentheses_and_we_do_not() -> None:
    assert oracle.driver_java_type_tree("ListType(Int32Type") == ("bare", "ListType")  # 11.7
    with pytest.raises(TypeParseError):
        parse_type("ListType(Int32Type")


@pytest.mark.parametrize("text, position", MALFORMED)
def test_malformed_text_names_the_position(text: str, position: int) -> None:
    with pytest.raises(TypeParseError) as info:
        parse_type(text)
    err = info.value
    assert err.position == position, str(err)
    assert err.text == text
    assert f"at position {position}" in str(err)


def test_error_is_a_codec_error_and_a_value_error() -> None:
    from cqlcodec import CodecError

    with pytest.raises(CodecError):
        parse_type("map<int>")
    with pytest.raises(ValueError):
        parse_type("map<int>")


def test_unresolved_bare_name_suggests_quoting_or_user_types() -> None:
    with pytest.raises(TypeParseError) as info:
        parse_type("frozen<address>")
    message = str(info.value)
    assert '"address"' in message and "user_types" in message
    assert info.value.position == 7


def test_nesting_is_bounded() -> None:
    deepest = "list<" * (_parse.MAX_TYPE_DEPTH - 1) + "int" + ">" * (_parse.MAX_TYPE_DEPTH - 1)
    assert parse_type(deepest).cql_name == deepest
    for depth in (_parse.MAX_TYPE_DEPTH, 300, 5000):
        for text in ("list<" * depth + "int" + ">" * depth,
                     "ListType(" * depth + "Int32Type" + ")" * depth,
                     "frozen<tuple<" * depth + "int" + ">>" * depth,
                     "CompositeType(" * depth + "Int32Type" + ")" * depth,
                     "org.example.Foo" + "(" * depth + ")" * depth,
                     "list<" * depth):
            with pytest.raises(TypeParseError, match="nested"):
                parse_type(text)


def test_long_inputs_parse_and_errors_stay_short() -> None:
    wide = "tuple<" + ", ".join(["int"] * 20000) + ">"
    assert parse_type(wide).subtypes == (INT,) * 20000
    with pytest.raises(TypeParseError) as info:
        parse_type(wide[:-1] + ",")
    assert len(str(info.value)) < 400


def test_parse_type_rejects_non_str() -> None:
    with pytest.raises(TypeError):
        parse_type(b"int")  # type: ignore[arg-type]


# ------------------------------------------------------------------ user_types

def test_user_types_resolve_bare_and_qualified_names() -> None:
    udts = {"addr": ADDR}
    assert parse_type("frozen<addr>", udts) == frozen(ADDR)
    assert parse_type("Addr", udts) is ADDR  # unquoted identifiers fold to lower case
    assert parse_type("ks.addr", udts) is ADDR
    assert parse_type("map<int, frozen<addr>>", udts) == map_of(INT, frozen(ADDR))
    other = user_type("other", "addr", [("x", INT)])
    assert parse_type("other.addr", {"other.addr": other, "addr": ADDR}) is other
    assert parse_type("addr", {"other.addr": other, "addr": ADDR}) is ADDR


def test_user_types_quoted_names_are_case_sensitive() -> None:
    my = user_type("ks", "MyType", [("a", INT)])
    assert parse_type('"MyType"', {"MyType": my}) is my
    assert parse_type('"mytype"', {"MyType": my}) == user_type("", "mytype", ())
    with pytest.raises(TypeParseError):
        parse_type("MyType", {"MyType": my})  # folds to mytype


def test_type_keywords_win_over_user_types() -> None:
    named_int = user_type("ks", "int", [("a", INT)])
    assert parse_type("int", {"int": named_int}) is INT
    assert parse_type('"int"', {"int": named_int}) is named_int
    assert named_int.cql_name == '"int"'


def test_results_with_user_types_are_not_cached() -> None:
    first = user_type("ks", "t", [("a", INT)])
    second = user_type("ks", "t", [("b", TEXT)])
    assert parse_type("t", {"t": first}) is first
    assert parse_type("t", {"t": second}) is second
    with pytest.raises(TypeParseError):
        parse_type("t")


# ------------------------------------------------------------------- interning

def test_same_text_gives_the_same_object() -> None:
    for text, _canonical in CQL_CANONICAL + JAVA_CANONICAL:
        assert parse_type(text) is parse_type(text)
    _parse.clear_parse_cache()
    a = parse_type("map<text, frozen<list<int>>>")
    _parse.clear_parse_cache()
    assert parse_type("map<text, frozen<list<int>>>") is a  # the intern table still has it


def test_equal_types_from_every_route_are_one_object() -> None:
    by_cql = parse_type("map<text, frozen<list<int>>>")
    by_java = parse_type("MapType(UTF8Type,FrozenType(ListType(Int32Type)))")
    by_constructor = map_of(TEXT, frozen(list_of(INT)))
    assert by_cql is by_java is by_constructor
    vec = parse_type("vector<float, 3>")
    name = b"org.apache.cassandra.db.marshal.VectorType(org.apache.cassandra.db.marshal.FloatType,3)"
    from_option, _end = read_type_option(b"\x00\x00" + len(name).to_bytes(2, "big") + name, 0)
    assert from_option is vec
    assert hash(from_option) == hash(vec)
    option = bytes.fromhex("0021000d0020 0009".replace(" ", ""))
    assert read_type_option(option, 0)[0] is parse_type("map<varchar, list<int>>")
    udt_option, _ = option_bytes(ADDR)
    assert read_type_option(udt_option, 0)[0] == parse_type(java_name(ADDR)) == ADDR


def test_different_parameterizations_never_collide() -> None:
    texts = ["list<int>", "set<int>", "frozen<list<int>>", "vector<int, 2>", "vector<int, 3>",
             "vector<bigint, 2>", "map<int, text>", "map<text, int>", "tuple<int, text>",
             "tuple<text, int>", "tuple<int>", '"int"', 'ks."int"', "ReversedType(Int32Type)",
             "int", "UserType(ks,61,62:Int32Type)", "UserType(ks,61,63:Int32Type)",
             "UserType(ks2,61,62:Int32Type)", "UserType(ks,61,62:LongType)",
             "'org.example.A'", "'org.example.B'", "EmptyType", "CompositeType(Int32Type)"]
    types = [parse_type(t) for t in texts]
    assert len(set(types)) == len(texts)
    assert len({id(t) for t in types}) == len(texts)


def test_parse_cache_is_bounded() -> None:
    for dim in range(1, 3000):
        parse_type(f"vector<float, {dim}>")
    assert len(_parse._type_cache.entries) <= 1024
    assert _parse.parse_cache_size() <= 2048
    assert parse_type("vector<float, 2999>") == vector_of(FLOAT, 2999)


def test_parse_cache_is_thread_safe() -> None:
    _parse.clear_parse_cache()
    texts = [f"map<int, vector<float, {n}>>" for n in range(1, 201)]
    results: list[list[CqlType]] = []
    errors: list[BaseException] = []

    def work(seed: int) -> None:
        order = list(texts)
        random.Random(seed).shuffle(order)
        try:
            parsed = {text: parse_type(text) for text in order}
            results.append([parsed[text] for text in texts])
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors
    assert len(results) == 8
    for row in results[1:]:
        assert all(a is b for a, b in zip(row, results[0]))


# ------------------------------------------------------------------ properties

@given(type_trees(keyspace=st.sampled_from(["", "ks", "Other_KS"])))
def test_cql_name_round_trip(t: CqlType) -> None:
    registry = udt_registry(t)
    assume(registry is not None)
    assert parse_type(t.cql_name, registry) == t
    if not registry:
        assert parse_type(t.cql_name) == t
        assert parse_type(t.cql_name) is parse_type(t.cql_name)


@given(type_trees(keyspace=keyspaces, with_reversed=True), st.randoms(use_true_random=False))
def test_java_name_round_trip(t: CqlType, rnd: random.Random) -> None:
    text = java_name(t, rnd)
    assert parse_type(text) == t
    assert _parse.parse_class_name(text) == t


@given(type_trees(keyspace=keyspaces, with_reversed=True))
def test_java_names_agree_with_the_driver(t: CqlType) -> None:
    # the driver turns all-digit tokens into ints and then crashes (spec 11.7), and it
    # decodes hex UDT and field names as ASCII (UnicodeDecodeError for other names)
    for u in user_types_in(t):
        assume(not u.name.encode().hex().isdigit())
        assume(all(n.isascii() for n in (u.name, *u.field_names)))
    # and it registers each parsed UDT class by name, so a later keyspace token that
    # spells an earlier UDT's name resolves to that class (spec 11.6)
    udt_names = {u.name for u in user_types_in(t)}
    assume(not any(u.keyspace in udt_names for u in user_types_in(t)))
    text = java_name(t)
    assert oracle.driver_java_type_tree(text) == tree(parse_type(text))


@given(st.text(alphabet="<>(),: \"'.abcdefilmnoprstuvxyzIT0123456789=", max_size=40))
def test_arbitrary_text_parses_or_raises_type_parse_error(text: str) -> None:
    try:
        t = parse_type(text)
    except TypeParseError as exc:
        assert 0 <= exc.position <= len(text)
        return
    assert isinstance(t, CqlType)
