"""What Cassandra sends and the driver reads, cqlcodec reads too: short tuple values,
CompositeType columns and types nested far deeper than the 32 levels once accepted.

Byte strings marked "Cassandra 5.0.9" were read back from a real server (see
tests/integration/test_compat_core.py, which checks them against it).
"""

from __future__ import annotations

import io
import pickle
import sys
from typing import Any

import oracle
import pytest
from cassandra.protocol import ProtocolHandler, ResultMessage
from childproc import describe, run_python
from fuzz.model import write_option
from fuzz.refwire import Writer
from integration.compare import assert_same

import cqlcodec
import cqlcodec.driver.installer as drv
from cqlcodec import (
    CqlType,
    DecodeError,
    EncodeTypeError,
    EncodeValueError,
    TypeParseError,
    UnsupportedTypeError,
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
from cqlcodec.errors import TypeTooDeepError
from cqlcodec.types.model import MAX_TYPE_DEPTH, java_name

INT = scalar_type(kinds.INT)
TEXT = scalar_type(kinds.TEXT)
ASCII = scalar_type(kinds.ASCII)
BOOL = scalar_type(kinds.BOOLEAN)
DATE = scalar_type(kinds.DATE)
M = "org.apache.cassandra.db.marshal."
COMP = composite_type(TEXT, INT)
COMP_JAVA = f"{M}CompositeType({M}UTF8Type,{M}Int32Type)"


def h(text: str) -> bytes:
    return bytes.fromhex(text.replace(" ", ""))


def i32(n: int) -> bytes:
    return n.to_bytes(4, "big", signed=True)


def rows_body(cols: list[tuple[str, CqlType]], cells: list[list[bytes | None]]) -> bytes:
    """A RESULT Rows body (kind included) with inline metadata."""
    w = Writer()
    w.i32(2)
    w.i32(1)
    w.i32(len(cols))
    w.string("ks")
    w.string("t")
    for name, t in cols:
        w.string(name)
        write_option(w, t)
    w.i32(len(cells))
    for row in cells:
        for cell in row:
            w.raw(i32(-1) if cell is None else i32(len(cell)) + cell)
    return w.getvalue()


# --------------------------------------------------------------------------- short tuples

TUPLE = tuple_of(ASCII, INT, BOOL)
SHORT_TUPLES = [  # (content, value): stored by Cassandra 5.0.9 as the client wrote them
    ("00000003 626172 00000004 000001c8", ("bar", 456, None)),  # INSERT ... (('bar', 456))
    ("00000003 62617a", ("baz", None, None)),  # the driver binding ('baz',)
    ("00000001 61 ffffffff ffffffff", ("a", None, None)),  # ('a', null, null): not short
]


@pytest.mark.parametrize("data,value", SHORT_TUPLES)
def test_short_tuple_values_decode_like_the_driver(data: str, value: tuple[object, ...]) -> None:
    assert TUPLE.deserialize(h(data)) == value
    assert oracle.deserialize_java(java_name(TUPLE), h(data)) == value


def test_short_tuples_encode_like_the_driver() -> None:
    """Cassandra keeps a short value short, so it is another partition key than the padded
    one: binding must write exactly what the driver writes."""
    for value in [("baz",), ("bar", 456), ("q", None), ("q", 7, True), ()]:
        assert TUPLE.serialize(value) == oracle.serialize_java(java_name(TUPLE), value)


def test_short_tuples_pad_whatever_they_lack() -> None:
    """A value may end after any of its components (Cassandra stores such values), in
    one value and in rows."""
    assert tuple_of(*[INT] * 14).deserialize(i32(-1)) == (None,) * 14
    wide = tuple_of(*[INT] * 0xFFFF)
    body = rows_body([("t", wide)], [[i32(-1)]] * 3)
    result = cqlcodec.decode_result(body, 4)
    assert isinstance(result, cqlcodec.RowsResult)
    assert result.rows == [((None,) * 0xFFFF,)] * 3
    batch = cqlcodec.decode_columns(body, 4)
    assert batch.num_rows == 3 and batch.to_pydict()["t"] == [(None,) * 0xFFFF] * 3


def _cell(*fields: bytes | None) -> bytes:
    return b"".join(i32(-1) if f is None else i32(len(f)) + f for f in fields)


@pytest.mark.parametrize("wide", [
    tuple_of(INT, *[TEXT] * 19),
    user_type("ks", "grown31", [("f0", INT)] + [(f"f{i}", TEXT) for i in range(1, 31)]),
], ids=["tuple", "udt"])
def test_columns_read_short_values_with_nulls_as_rows_do(wide: CqlType) -> None:
    """The columnar decoders (the compiled walk, the interpreted vectorised one) read short
    values, null fields, null values and empty values as the row decoder does."""
    n = len(wide.subtypes)
    cells: list[list[bytes | None]] = [
        [i32(1), _cell(i32(7))],  # 1 of n fields
        [i32(2), None],  # a null value
        [i32(3), _cell(None)],  # 1 field, null
        [i32(4), _cell(i32(8), *[b"x"] * (n - 1))],  # every field
        [i32(5), _cell(i32(9), None, b"y")],  # 3 fields, a null inside
        [i32(6), b""],  # an empty value
    ] * 50
    body = rows_body([("k", INT), ("v", wide)], cells)
    result = cqlcodec.decode_result(body, 4)
    assert isinstance(result, cqlcodec.RowsResult)
    expected = [tuple(row[1]) if row[1] is not None else None for row in result.rows]
    assert expected[:6] == [(7,) + (None,) * (n - 1), None, (None,) * n,
                            (8,) + ("x",) * (n - 1), (9, None, "y") + (None,) * (n - 3), None]
    columns = cqlcodec.decode_columns(body, 4).to_pydict()["v"]
    assert [tuple(v) if v is not None else None for v in columns] == expected


def test_short_tuples_in_rows_and_inside_collections() -> None:
    t = list_of(frozen(TUPLE))
    inner = h(SHORT_TUPLES[0][0])
    data = i32(2) + i32(len(inner)) + inner + i32(-1)
    assert t.deserialize(data) == [("bar", 456, None), None]
    keyed = set_of(frozen(TUPLE))
    assert keyed.deserialize(i32(1) + i32(len(inner)) + inner) == {("bar", 456, None)}
    result = cqlcodec.decode_result(rows_body([("k", INT), ("t", TUPLE)],
                                              [[i32(1), inner], [i32(2), h("0000000171")]]), 4)
    assert isinstance(result, cqlcodec.RowsResult)
    assert result.rows == [(1, ("bar", 456, None)), (2, ("q", None, None))]


# --------------------------------------------------------------------------- CompositeType

def test_composite_type_names() -> None:
    for text in ["CompositeType(UTF8Type,Int32Type)", "CompositeType( UTF8Type , Int32Type )",
                 COMP_JAVA, f"'{COMP_JAVA}'", "'CompositeType(UTF8Type, Int32Type)'"]:
        assert parse_type(text) == COMP  # interning is bounded: equal, usually identical
    assert COMP.kind == kinds.COMPOSITE and COMP.subtypes == (TEXT, INT)
    assert COMP.name == COMP_JAVA == java_name(COMP)
    assert COMP.cql_name == f"'{COMP_JAVA}'"  # as Cassandra shows it in system_schema
    assert parse_type(COMP.cql_name) == COMP
    assert pickle.loads(pickle.dumps(COMP)) == COMP and COMP.fixed_size == -1
    option = b"\x00\x00" + len(COMP_JAVA).to_bytes(2, "big") + COMP_JAVA.encode()
    assert read_type_option(option, 0) == (COMP, len(option))
    nested = composite_type(reversed_type(INT), frozen(list_of(TEXT)), COMP,
                            user_type("ks", "u", [("f", INT)]), vector_of(BOOL, 2))
    assert parse_type(nested.cql_name) is nested
    assert parse_type(java_name(nested)) is nested
    with pytest.raises(ValueError):
        composite_type()
    with pytest.raises(TypeParseError):
        parse_type("CompositeType(a=>Int32Type)")  # aliases belong to DynamicCompositeType


VALID_COMPOSITES = [  # (content, value); the first four were stored by Cassandra 5.0.9
    ("0003666f6f00 0004000000070 0", ("foo", 7)),
    ("0003666f6f01", ("foo",)),  # a prefix, end-of-component 1
    ("0003666f6f00 000000", ("foo", None)),  # an empty int component
    ("ffff 0003666f6f00", ("foo",)),  # Cassandra's static marker
    ("000000", ("",)),
    ("0003666f6f01 0004000000070 0", ("foo", 7)),  # only unvalidated literals store this
    ("0003666f6f00 00040000000 7ff", ("foo", 7)),
    ("ffff", ()),
]


@pytest.mark.parametrize("data,value", VALID_COMPOSITES)
def test_composite_values_decode_like_the_driver(data: str, value: tuple[object, ...]) -> None:
    decoded = COMP.deserialize(h(data))
    assert type(decoded) is tuple and decoded == value
    if not data.startswith("ffff"):  # the driver reads the static marker as a length
        assert oracle.deserialize_java(COMP_JAVA, h(data)) == value
    assert COMP.deserialize(b"") is None


BAD_COMPOSITES = [  # (content, offset of the problem, message)
    ("0003666f6f", 0, "exceed the 3 bytes that remain"),  # no end-of-component byte
    ("0003666f", 0, "exceed the 2 bytes that remain"),
    ("00", 0, "needs 2 bytes for the length of component 0"),
    ("0003666f6f00 00", 6, "needs 2 bytes for the length of component 1"),
    ("0003666f6f00 0004000000070 0 0000 00", 13, "more than the 2 components"),
    ("0003666f6f00 0003000007 00", 8, "int"),  # a 3-byte int component
    ("0003ff0000 00", 2, "UTF-8"),
    ("ffff ffff", 2, "exceed the 0 bytes that remain"),
]


@pytest.mark.parametrize("data,offset,message", BAD_COMPOSITES)
def test_malformed_composites_name_type_and_offset(data: str, offset: int, message: str) -> None:
    with pytest.raises(DecodeError, match=message) as info:
        COMP.deserialize(h(data))
    assert info.value.offset == offset
    assert info.value.cql_type in (COMP.cql_name, "int", "text")
    body = rows_body([("k", INT), ("c", COMP)], [[i32(1), h(data)]])
    with pytest.raises(DecodeError) as rows_info:
        cqlcodec.decode_result(body, 4)
    assert rows_info.value.column == "c"


def test_composite_encoding_is_what_cassandra_builds() -> None:
    assert COMP.serialize(("foo", 7)) == h("0003666f6f00 00040000000700")
    assert COMP.serialize(["foo"]) == h("0003666f6f00")
    assert COMP.serialize(("", None)) == h("000000 000000")
    assert COMP.serialize(()) == b""
    for _data, value in VALID_COMPOSITES[:3]:
        assert COMP.deserialize(COMP.serialize(value)) == value
    with pytest.raises(EncodeValueError, match="3 items"):
        COMP.serialize(("a", 1, 2))
    for bad in ["foo", b"\x00\x01a\x00", {"a": 1}, 7]:
        with pytest.raises(EncodeTypeError):
            COMP.serialize(bad)
    with pytest.raises(EncodeTypeError):
        COMP.serialize(("foo", "7"))
    blob = composite_type(scalar_type(kinds.BLOB), scalar_type(kinds.BLOB))
    assert len(blob.serialize((b"x", b"y" * 0xFFFF))) == 4 + 2 + 0xFFFF + 1
    assert blob.deserialize(blob.serialize((b"x" * 0xFFFE,))) == (b"x" * 0xFFFE,)
    with pytest.raises(EncodeValueError, match="at most 65534 bytes"):  # the static marker
        blob.serialize((b"x" * 0xFFFF,))
    with pytest.raises(EncodeValueError, match="at most 65535 bytes"):
        blob.serialize((b"", b"y" * 0x10000))


def test_composites_inside_collections() -> None:
    value = COMP.serialize(("a", 1))
    s = set_of(COMP)
    assert s.deserialize(i32(2) + i32(len(value)) + value + i32(4) + h("00016100")) == {
        ("a", 1), ("a",)}
    assert s.serialize({("a", 1)}) == i32(1) + i32(len(value)) + value
    m = map_of(COMP, composite_type(list_of(INT)))
    inner = list_of(INT).serialize([1, 2])
    cv = len(inner).to_bytes(2, "big") + inner + b"\x00"
    assert m.deserialize(i32(1) + i32(len(value)) + value + i32(len(cv)) + cv) == {
        ("a", 1): ([1, 2],)}
    hashable = set_of(composite_type(frozen(list_of(INT))))
    assert hashable.deserialize(i32(1) + i32(len(cv)) + cv) == {((1, 2),)}


def test_dynamic_composite_type_stays_opaque() -> None:
    """The drivers cannot read DynamicCompositeType values (the Cython driver reads them as
    CompositeType and fails on aliased components; the pure driver has no decoder), so
    there is nothing exact to match: its values stay raw bytes."""
    text = f"{M}DynamicCompositeType(s=>{M}UTF8Type,i=>{M}Int32Type)"
    t = parse_type(text)
    assert t == custom_type(text) and t.kind == kinds.CUSTOM
    value = h("8073 0003666f6f00 8069 00040000000700")  # stored by Cassandra 5.0.9
    assert t.deserialize(value) == value
    assert t.serialize(value) == value


def test_driver_mode_returns_the_drivers_composite_values() -> None:
    """Through the installed protocol handler, RESULT rows give what the driver gives."""
    date_comp = composite_type(DATE, TEXT, INT)
    cells: list[list[bytes | None]] = [
        [i32(1), h("0003666f6f00 00040000000700"), h("000480000001 00 000178 01")],
        [i32(2), h("0003666f6f01"), h("000480000000 00")],
        [i32(3), None, h("0000 00")]]
    body = rows_body([("k", INT), ("c", COMP), ("d", date_comp)], cells)
    handler = drv._handler_class(ProtocolHandler, drv.Options(False, False))
    codec_class = handler.message_types_by_opcode[ResultMessage.opcode]
    assert isinstance(codec_class, type) and issubclass(codec_class, ResultMessage)
    messages = []
    saved = oracle._save_registries()  # reading metadata registers the driver's type classes
    try:
        for message_class in (ResultMessage, codec_class):
            f = io.BytesIO(body)
            f.read(4)
            msg = message_class(2)
            msg.recv_results_rows(f, 4, {}, None, None)
            messages.append(msg)
    finally:
        oracle._restore_registries(saved)
    expected, actual = messages
    assert len(actual.parsed_rows) == 3
    for e, a in zip(expected.parsed_rows, actual.parsed_rows):
        assert_same(e, a, "row")
    assert expected.column_types is not None
    assert drv.cql_type_of(expected.column_types[2]) == date_comp


# --------------------------------------------------------------------------- deep nesting

def _nest(depth: int, make: Any, leaf: CqlType = INT) -> CqlType:
    t = leaf
    for _i in range(depth - 1):
        t = make(t)
    return t


def test_33_levels_of_tuples_work_everywhere() -> None:
    """32 tuples around an int: in Cassandra and the driver since ever, refused before."""
    t = _nest(33, tuple_of)
    text = "frozen<tuple<" * 32 + "int" + ">>" * 32
    assert parse_type(text).unwrapped().kind == kinds.TUPLE
    w = Writer()
    write_option(w, t)
    assert read_type_option(w.getvalue(), 0)[0] == t
    value: object = 7
    for _i in range(32):
        value = (value,)
    data = t.serialize(value)
    assert t.deserialize(data) == value
    assert oracle.deserialize_java(java_name(t), data) == value


DEEP_CHILD = """
import sys, threading
import cqlcodec
from cqlcodec import kinds as K
from cqlcodec import (composite_type, frozen, list_of, map_of, parse_type, read_type_option,
                      scalar_type, set_of, tuple_of, user_type, vector_of)
from cqlcodec.types.model import MAX_TYPE_DEPTH as D
from fuzz.model import wire_type, write_option
from fuzz.refwire import Writer

INT = scalar_type(K.INT)
makers = {
    "tuple": (lambda t, i: tuple_of(t), lambda v: (v,), 1),
    "composite": (lambda t, i: composite_type(t), lambda v: (v,), 1),
    "udt": (lambda t, i: user_type("ks", "u%d" % i, [("f", t)]), lambda v: (v,), 1),
    "map": (lambda t, i: map_of(INT, t), lambda v: {1: v}, 1),
    "list": (lambda t, i: list_of(t), lambda v: [v], 1),
    "frozen set": (lambda t, i: set_of(frozen(t)), lambda v: frozenset([v]), 2),
    "vector": (lambda t, i: vector_of(t, 1), lambda v: [v], 1),
}
results = []

def run():
    for name, (make, wrap, per_step) in makers.items():
        t, v = INT, 7
        for i in range((D - 1) // per_step):
            t, v = make(t, i), wrap(v)
        try:
            make(t, -1)
            results.append(name + ": one level more was accepted")
        except cqlcodec.UnsupportedTypeError:
            pass
        data = t.serialize(v)
        if t.deserialize(data) != v:
            results.append(name + ": wrong value")
        w = Writer()
        write_option(w, t)
        cqlcodec.types.parse.clear_parse_cache()
        if read_type_option(w.getvalue(), 0)[0] != wire_type(t):
            results.append(name + ": [option] differs")
        if name != "udt":
            cqlcodec.types.parse.clear_parse_cache()
            if parse_type(t.cql_name) != t:
                results.append(name + ": text differs")
        results.append(name + " ok")

threading.stack_size(512 * 1024)
thread = threading.Thread(target=run)
thread.start()
thread.join()
print("\\n".join(results), flush=True)
"""


def test_the_deepest_types_work_in_a_thread_with_a_small_stack() -> None:
    """MAX_TYPE_DEPTH levels of every container: made, encoded, decoded, read from metadata
    and parsed from text in a thread with a 512 KiB stack (the compiled build recurses on
    the C stack; Python 3.10 interpreted needs about 200 KiB here, 3.11+ about 100 KiB),
    in a child process so that an overflow is seen, not suffered."""
    proc = run_python(DEEP_CHILD, timeout=300)
    assert proc.returncode == 0, describe(proc)
    lines = proc.stdout.splitlines()
    assert len(lines) == 7 and all(line.endswith(" ok") for line in lines), describe(proc)


def test_the_deepest_types_fit_the_default_recursion_limit() -> None:
    """Interpreted, every level costs Python frames: building the codec of the deepest type
    and encoding the deepest UDT take 4 per level, ~520 frames at 128 levels, which leaves
    the caller ~480 of the default limit of 1000 (256 levels would not fit at all)."""
    counter = iter(range(MAX_TYPE_DEPTH))
    t = _nest(MAX_TYPE_DEPTH, lambda s: user_type("ks", f"fresh{next(counter)}", [("f", s)]))
    value: object = 7
    for _i in range(MAX_TYPE_DEPTH - 1):
        value = (value,)
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    try:  # the codecs are built here, from 300 frames deep
        data = _within_frames(300, lambda: t.serialize(value))
        assert _within_frames(300, lambda: t.deserialize(data)) == value
    finally:
        sys.setrecursionlimit(old)


def _within_frames(depth: int, call: Any) -> Any:
    """``call()`` made ``depth`` Python frames deep."""
    if depth <= 0:
        return call()
    return _within_frames(depth - 1, call)


@pytest.mark.parametrize("text", [
    "list<" * MAX_TYPE_DEPTH + "int" + ">" * MAX_TYPE_DEPTH,
    "frozen<tuple<" * 64 + "int" + ">>" * 64,
    "CompositeType(" * MAX_TYPE_DEPTH + "Int32Type" + ")" * MAX_TYPE_DEPTH,
    "TupleType(" * 500 + "Int32Type" + ")" * 500,
])
def test_one_level_too_deep_is_refused_cleanly(text: str) -> None:
    with pytest.raises(TypeParseError, match="nested more than 128 levels"):
        parse_type(text)
    option = b"\x00\x31\x00\x01" * MAX_TYPE_DEPTH + b"\x00\x09"
    with pytest.raises(TypeTooDeepError) as info:
        read_type_option(option, 0)
    assert isinstance(info.value, DecodeError) and isinstance(info.value, UnsupportedTypeError)
    assert info.value.offset == 4 * MAX_TYPE_DEPTH
    body = rows_body([("deep", INT)], [])
    body = body[:body.index(b"deep") + 4] + option + i32(0)
    with pytest.raises(TypeTooDeepError) as rows_info:
        cqlcodec.decode_result(body, 4)
    assert rows_info.value.offset == body.index(option) + 4 * MAX_TYPE_DEPTH
    with pytest.raises(UnsupportedTypeError):
        tuple_of(_nest(MAX_TYPE_DEPTH, tuple_of))
