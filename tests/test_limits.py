"""Resource bounds on hostile input.

* Decoding never allocates more than a small multiple of the input size, whatever
  the length words and counts claim: measured with tracemalloc (peak of traced
  Python allocations) in-process, in both builds, and with the resident set size
  of a fresh child process for the compiled build.
* Deep nesting is bounded with a clear error: TypeParseError for type text,
  DecodeError for binary metadata, UnsupportedTypeError for types built in code;
  never RecursionError, never a crash.
"""

from __future__ import annotations

import struct
import time
import tracemalloc
from collections.abc import Callable

import pytest
from childproc import describe, run_python
from fuzz.model import write_option
from fuzz.refwire import Writer

import cqlcodec
from cqlcodec import (
    CqlType,
    list_of,
    map_of,
    scalar_type,
    set_of,
    tuple_of,
    user_type,
    vector_of,
)
from cqlcodec import kinds as K
from cqlcodec.errors import TypeTooDeepError
from cqlcodec.runtime.padding import PADDING_FLOOR, PADDING_PER_BYTE
from cqlcodec.types.model import MAX_TYPE_DEPTH

BIG = 0x7FFFFFFF
PER_BYTE = 32  # Python objects cost up to ~28x their wire size (a list of empty sets)
BASE = 256 * 1024
INT = scalar_type(K.INT)
TEXT = scalar_type(K.TEXT)


def _i32(v: int) -> bytes:
    return struct.pack(">i", v)


def _coll(elements: list[bytes]) -> bytes:
    return _i32(len(elements)) + b"".join(_i32(len(e)) + e for e in elements)


def traced_peak(fn: Callable[[], object]) -> tuple[int, BaseException | None]:
    """Peak traced allocation (bytes) while running ``fn`` and the exception it raised."""
    error: BaseException | None = None
    tracemalloc.start()
    tracemalloc.reset_peak()
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - returned to the caller for checking
        error = exc
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak, error


# --------------------------------------------------------------------------- lying length words

HOSTILE_VALUES: list[tuple[str, CqlType, bytes]] = [
    ("list count 2**31-1", list_of(INT), _i32(BIG) + _i32(4) + _i32(7)),
    ("set count 2**31-1", set_of(TEXT), _i32(BIG) + _i32(1) + b"a"),
    ("map count 2**31-1", map_of(INT, INT), _i32(BIG) + _i32(4) + _i32(1)),
    ("map count 2**30", map_of(INT, TEXT), _i32(1 << 30) + bytes(64)),
    ("inner list count 2**31-1", list_of(list_of(INT)), _i32(1) + _i32(8) + _i32(BIG) + _i32(0)),
    ("element length 2**31-1", list_of(TEXT), _i32(1) + _i32(BIG) + b"abc"),
    ("element length -3", list_of(TEXT), _i32(1) + _i32(-3) + b"abc"),
    ("element length -2**31", list_of(INT), _i32(2) + _i32(-(1 << 31)) + bytes(8)),
    ("tuple field length 2**31-1", tuple_of(INT, TEXT), _i32(4) + _i32(1) + _i32(BIG) + b"x"),
    ("udt field length 2**31-1", user_type("ks", "u", [("a", TEXT)]), _i32(BIG) + b"xyz"),
    ("fixed vector dimension 2**31-1", vector_of(scalar_type(K.FLOAT), BIG), bytes(16)),
    ("variable vector dimension 2**31-1", vector_of(TEXT, BIG), b"\x01a\x01b"),
    ("vector element length 2**62", vector_of(TEXT, 2), b"\xfe" + (1 << 48).to_bytes(7, "big") + b"ab"),
    ("vector of lists, inner count 2**31-1", vector_of(list_of(INT), 2),
     b"\x08" + _i32(BIG) + _i32(4) + b"\x04" + _i32(0)),
    ("nested map count in set", set_of(map_of(INT, INT)), _i32(1) + _i32(12) + _i32(BIG) + bytes(8)),
]


@pytest.mark.parametrize("name,t,data", HOSTILE_VALUES, ids=[c[0] for c in HOSTILE_VALUES])
def test_lying_counts_and_lengths_allocate_nothing_big(name: str, t: CqlType, data: bytes) -> None:
    t.deserialize(b"")  # build the codec outside the measurement
    peak, error = traced_peak(lambda: t.deserialize(data))
    assert isinstance(error, cqlcodec.DecodeError), f"{name}: {error!r}"
    assert peak < BASE + PER_BYTE * len(data), f"{name}: peak {peak} bytes for {len(data)}"


def _rows_body(cols: list[tuple[str, CqlType]], nrows: int, cells: bytes,
               flags: int = 1, count: int | None = None) -> bytes:
    w = Writer()
    w.i32(2)
    w.i32(flags)
    w.i32(len(cols) if count is None else count)
    if flags & 1:
        w.string("ks")
        w.string("t")
    for name, t in cols:
        w.string(name)
        write_option(w, t)
    w.i32(nrows)
    w.raw(cells)
    return w.getvalue()


def _prepared_body(nbind: int, pk_count: int) -> bytes:
    w = Writer()
    w.short_bytes(b"id")
    w.i32(1)
    w.i32(nbind)
    w.i32(pk_count)
    w.short(0)
    w.string("ks")
    w.string("t")
    w.string("a")
    w.short(K.INT)
    return w.getvalue()


HOSTILE_BODIES: list[tuple[str, bytes]] = [
    ("rows_count 2**31-1, one column", _rows_body([("a", INT)], BIG, _i32(4) + _i32(1))),
    ("rows_count 2**31-1, no columns", _rows_body([], BIG, b"")),
    ("rows_count 2**31-1, three columns", _rows_body([("a", INT), ("b", TEXT), ("c", INT)], BIG,
                                                     _i32(-1) * 3)),
    ("columns_count 2**31-1", _rows_body([("a", INT)], 0, b"", count=BIG)),
    ("columns_count 2**31-1, per-column specs", _rows_body([("a", INT)], 0, b"", flags=0, count=BIG)),
    ("paging_state length 2**31-1", _i32(2) + _i32(2) + _i32(0) + _i32(BIG) + b"abc"),
    ("new_metadata_id length 0xffff", _i32(2) + _i32(8) + _i32(0) + b"\xff\xff" + b"ab"),
    ("cell length 2**31-1", _rows_body([("a", TEXT)], 1, _i32(BIG) + b"abc")),
    ("column name length 0xffff", _i32(2) + _i32(1) + _i32(1) + b"\x00\x02ks\x00\x01t\xff\xffab"),
    ("udt field count 0xffff", _i32(2) + _i32(1) + _i32(1) + b"\x00\x02ks\x00\x01t\x00\x01a"
     + struct.pack(">H", 0x30) + b"\x00\x02ks\x00\x01u\xff\xff\x00\x01f\x00\x09"),
    ("tuple item count 0xffff", _i32(2) + _i32(1) + _i32(1) + b"\x00\x02ks\x00\x01t\x00\x01a"
     + b"\x00\x31\xff\xff\x00\x09\x00\x09"),
    ("vector dimension 2**31-1 in metadata, short cell",
     _rows_body([("v", vector_of(scalar_type(K.FLOAT), BIG))], 1, _i32(8) + bytes(8))),
    ("schema change argument count 0xffff", _i32(5) + b"\x00\x07CREATED\x00\x08FUNCTION\x00\x02ks"
     + b"\x00\x01f\xff\xff\x00\x03int"),
]


@pytest.mark.parametrize("name,body", HOSTILE_BODIES, ids=[c[0] for c in HOSTILE_BODIES])
def test_lying_result_bodies_allocate_nothing_big(name: str, body: bytes) -> None:
    peak, error = traced_peak(lambda: cqlcodec.decode_result(body, 4))
    assert isinstance(error, cqlcodec.DecodeError), f"{name}: {error!r}"
    assert peak < BASE + PER_BYTE * len(body), f"{name}: peak {peak} bytes for {len(body)}"


@pytest.mark.parametrize("nbind,pk_count", [(BIG, 1), (1, BIG), (1, 0x10000)])
def test_lying_prepared_bodies_allocate_nothing_big(nbind: int, pk_count: int) -> None:
    body = _prepared_body(nbind, pk_count)
    peak, error = traced_peak(lambda: cqlcodec.decode_prepared(body, 4))
    assert isinstance(error, cqlcodec.DecodeError), repr(error)
    assert peak < BASE + PER_BYTE * len(body)


# --------------------------------------------------------------------------- honest input

N = 4000
HONEST: list[tuple[str, CqlType, bytes]] = [
    ("list of empty sets", list_of(set_of(INT)), _coll([_i32(0)] * N)),
    ("list of empty maps", list_of(map_of(INT, INT)), _coll([_i32(0)] * N)),
    ("set of lists", set_of(list_of(INT)), _coll([_i32(1) + _i32(4) + _i32(i) for i in range(N)])),
    ("list of one-char texts", list_of(TEXT), _coll([b"a"] * N)),
    ("list of decimals", list_of(scalar_type(K.DECIMAL)), _coll([_i32(1) + b"\x05"] * N)),
    ("list of durations", list_of(scalar_type(K.DURATION)), _coll([b"\x00\x00\x02"] * N)),
    ("list of half-empty UDT values", list_of(user_type("ks", "pair", [("a", INT), ("b", INT)])),
     _coll([_i32(-1)] * N)),
    ("list of null-component tuples", list_of(tuple_of(INT, INT)), _coll([_i32(-1) * 2] * N)),
    ("list of small vectors", list_of(vector_of(scalar_type(K.FLOAT), 1)), _coll([bytes(4)] * N)),
    ("map of timestamps", map_of(INT, scalar_type(K.TIMESTAMP)),
     _i32(N) + b"".join(_i32(4) + _i32(i) + _i32(8) + bytes(8) for i in range(N))),
]


@pytest.mark.parametrize("name,t,data", HONEST, ids=[c[0] for c in HONEST])
def test_honest_values_cost_a_small_multiple_of_their_size(name: str, t: CqlType, data: bytes) -> None:
    t.deserialize(b"")
    peak, error = traced_peak(lambda: t.deserialize(data))
    assert error is None, repr(error)
    assert peak < BASE + PER_BYTE * len(data), f"{name}: peak {peak} for {len(data)} bytes"


def _short_page(t: CqlType, nrows: int) -> bytes:
    """A page of ``nrows`` values of ``t`` that hold only their first field (null)."""
    return _rows_body([("v", t)], nrows, (_i32(4) + _i32(-1)) * nrows)


@pytest.mark.parametrize("wide,nrows,columnar", [
    (tuple_of(*[INT] * 1024), 500, False),
    (user_type("ks", "wide1024", [(f"f{i}", INT) for i in range(1024)]), 2000, False),
    (tuple_of(*[INT] * 1024), 500, True),
], ids=["tuple-rows", "udt-rows", "tuple-columns"])
def test_padding_beyond_the_message_budget_is_refused(wide: CqlType, nrows: int,
                                                      columnar: bool) -> None:
    """Metadata declaring 1024 fields and a page of 8-byte values lacking 1023 each: the
    message pads no more than its budget (PADDING_FLOOR + PADDING_PER_BYTE per byte),
    then fails, its memory bounded by that budget."""
    body = _short_page(wide, nrows)
    budget = PADDING_FLOOR + PADDING_PER_BYTE * len(body)
    assert nrows * 1023 > budget
    decode = cqlcodec.decode_columns if columnar else cqlcodec.decode_result
    decode(_rows_body([("v", wide)], 0, b""), 4)  # the value class, built once
    peak, error = traced_peak(lambda: decode(body, 4))
    assert isinstance(error, cqlcodec.DecodeError), repr(error)
    assert "ends after 1 of 1024" in str(error) and "padding budget" in str(error)
    # a padded field costs a pointer in a row, its width and validity byte in a column
    # (twice that while a growing buffer moves)
    per_field = 24 if columnar else 9
    assert peak < BASE + PER_BYTE * len(body) + per_field * budget, f"peak {peak} bytes"


REAL_SHORT_VALUES = [
    # a UDT row written before ALTER TYPE ... ADD of 30 fields (1 of 31)
    ("udt after 30 fields added", user_type("ks", "u31", [(f"f{i}", INT) for i in range(31)])),
    ("udt after 300 fields added", user_type("ks", "u301", [(f"f{i}", INT) for i in range(301)])),
    ("20-component tuple written with 1", tuple_of(*[TEXT] * 20)),
    ("tuple<int x 40> bound with 1", tuple_of(*[INT] * 40)),
]


@pytest.mark.parametrize("name,t", REAL_SHORT_VALUES, ids=[c[0] for c in REAL_SHORT_VALUES])
def test_pages_of_short_values_a_server_stores_decode(name: str, t: CqlType) -> None:
    """Pages of 5000 values that lack all their fields but the first stay far within the
    padding budget, through rows and columns; so does one value of 65535 fields."""
    nrows = 5000
    body = _short_page(t, nrows)
    nfields = len(t.subtypes)
    expected = tuple([None] * nfields)
    result = cqlcodec.decode_result(body, 4)
    assert isinstance(result, cqlcodec.RowsResult) and len(result.rows) == nrows
    assert all(tuple(row[0]) == expected for row in result.rows)
    batch = cqlcodec.decode_columns(body, 4)
    assert batch.num_rows == nrows
    column = batch.to_pydict()["v"]
    assert tuple(column[0]) == expected and tuple(column[-1]) == expected
    assert nrows * (nfields - 1) < PADDING_FLOOR + PADDING_PER_BYTE * len(body)


@pytest.mark.parametrize("wide", [
    user_type("ks", "w65535", [(f"f{i}", INT) for i in range(0xFFFF)]),
    tuple_of(*[INT] * 0xFFFF),
], ids=["udt", "tuple"])
def test_values_of_65535_fields_lacking_all_but_one_decode(wide: CqlType) -> None:
    one = _i32(-1)
    assert tuple(wide.deserialize(one)) == (None,) * 0xFFFF  # type: ignore[arg-type]
    result = cqlcodec.decode_result(_short_page(wide, 16), 4)
    assert isinstance(result, cqlcodec.RowsResult)
    assert [tuple(row[0]) for row in result.rows] == [(None,) * 0xFFFF] * 16


@pytest.mark.parametrize("wide", [
    user_type("ks", "wide_meta", [(f"f{i}", INT) for i in range(0xFFFF)]),
    tuple_of(*[INT] * 0xFFFF),
], ids=["udt", "tuple"])
def test_metadata_declaring_65535_fields_costs_a_small_multiple_of_its_size(wide: CqlType) -> None:
    """The value class, codec and type of a 65535-field UDT or tuple, built while decoding
    the metadata that declares it (nothing cached yet), stay within the same bound."""
    body = _rows_body([("w", wide)], 0, b"")
    peak, error = traced_peak(lambda: cqlcodec.decode_result(body, 4))
    assert error is None, repr(error)
    assert peak < BASE + PER_BYTE * len(body), f"peak {peak} bytes for a {len(body)}-byte body"


def test_wide_udt_fields_beyond_the_first_256_are_attributes_too() -> None:
    names = [f"f{i}" for i in range(300)]
    names[280] = "count"  # a field named like a tuple method still wins over the method
    u = user_type("ks", "wide300", [(n, INT) for n in names])
    value = u.deserialize(b"".join(_i32(4) + _i32(i) for i in range(300)))
    assert isinstance(value, cqlcodec.UdtValue)
    assert getattr(value, "f0") == 0 and getattr(value, "f299") == 299
    assert getattr(value, "count") == 280 and value["f299"] == 299
    with pytest.raises(AttributeError):
        getattr(value, "f300")


# --------------------------------------------------------------------------- nesting

@pytest.mark.parametrize("depth", [MAX_TYPE_DEPTH, 1000, 100_000])
def test_deep_type_text_is_a_type_parse_error(depth: int) -> None:
    """``depth`` wrappers around int: one level more than MAX_TYPE_DEPTH, and far more."""
    texts = ["list<" * depth + "int" + ">" * depth,
             "tuple<" * depth + "int" + ">" * depth,
             "frozen<" * depth + "list<int>" + ">" * depth,
             "org.apache.cassandra.db.marshal.ListType(" * depth + "Int32Type" + ")" * depth,
             "map<int," * depth + "int" + ">" * depth]
    for text in texts:
        t0 = time.perf_counter()
        with pytest.raises(cqlcodec.TypeParseError):
            cqlcodec.parse_type(text)
        assert time.perf_counter() - t0 < 1.0


def _nested_option(depth: int, head: bytes, tail: bytes = b"") -> bytes:
    return head * depth + b"\x00\x09" + tail * depth


NESTED_OPTIONS: list[tuple[str, Callable[[int], bytes]]] = [
    ("list", lambda d: _nested_option(d, b"\x00\x20")),
    ("set", lambda d: _nested_option(d, b"\x00\x22")),
    ("map value", lambda d: _nested_option(d, b"\x00\x21\x00\x09")),
    ("tuple", lambda d: _nested_option(d, b"\x00\x31\x00\x01")),
    ("udt", lambda d: _nested_option(d, b"\x00\x30\x00\x02ks\x00\x01u\x00\x01\x00\x01f")),
    ("custom list", lambda d: b"\x00\x00" + struct.pack(">H", min(0xFFFF, 10 * d + 9))
     + (b"ListType(" * d + b"Int32Type" + b")" * d)[:0xFFFF]),
]


@pytest.mark.parametrize("depth", [MAX_TYPE_DEPTH, 1000, 30_000])
@pytest.mark.parametrize("name,make", NESTED_OPTIONS, ids=[c[0] for c in NESTED_OPTIONS])
def test_deep_binary_options_are_decode_errors(name: str, make: Callable[[int], bytes],
                                               depth: int) -> None:
    buf = make(depth)
    body = _i32(2) + _i32(1) + _i32(1) + b"\x00\x02ks\x00\x01t\x00\x01c" + buf + _i32(0)
    t0 = time.perf_counter()
    if name.startswith("custom"):
        # a class name cqlcodec cannot read is an opaque custom type (raw bytes), by design
        try:
            t, _end = cqlcodec.read_type_option(buf, 0)
            assert t.kind == K.CUSTOM, t
            cqlcodec.decode_result(body, 4)
        except cqlcodec.DecodeError:
            pass
    else:
        with pytest.raises(TypeTooDeepError):
            cqlcodec.read_type_option(buf, 0)
        with pytest.raises(TypeTooDeepError):
            cqlcodec.decode_result(body, 4)
    assert time.perf_counter() - t0 < 2.0


def test_deep_values_within_the_limits_decode() -> None:
    """The deepest type binary metadata may carry still decodes (no recursion trouble)."""
    t: CqlType = INT
    data = _i32(7)
    for _i in range(MAX_TYPE_DEPTH - 1):
        t = list_of(t)
        data = _i32(1) + _i32(len(data)) + data
    buf = Writer()
    write_option(buf, t)
    parsed, _end = cqlcodec.read_type_option(buf.getvalue(), 0)
    assert parsed == t
    value = t.deserialize(data)
    for _i in range(MAX_TYPE_DEPTH - 1):
        assert isinstance(value, list) and len(value) == 1
        value = value[0]
    assert value == 7


DEEP_CHILD = """
import cqlcodec
from cqlcodec import kinds as K
from cqlcodec import list_of, map_of, scalar_type, set_of, tuple_of, user_type, vector_of
makers = {
    "list": list_of, "set": set_of, "tuple": tuple_of,
    "map": lambda t: map_of(scalar_type(K.INT), t),
    "udt": lambda t: user_type("ks", "u", [("f", t)]),
    "vector": lambda t: vector_of(t, 1),
}
# (name, depth): 2000 levels overflow the interpreter's recursion limit; 30000 vectors
# overflow the C stack of the compiled build (building the types is quadratic: keep it rare)
cases = [(name, depth) for name in makers for depth in (150, 2000)]
if cqlcodec.COMPILED:
    cases.append(("vector", 30000))
for name, depth in cases:
    make = makers[name]
    t = scalar_type(K.INT)
    try:
        for _i in range(depth):
            t = make(t)
    except cqlcodec.CodecError:
        print(name, depth, "construct", "CodecError", flush=True)
        continue
    for what, call in (("deserialize", lambda: t.deserialize(b"\\x00\\x00\\x00\\x01")),
                       ("serialize", lambda: t.serialize([1]))):
        try:
            call()
            outcome = "ok"
        except cqlcodec.CodecError as exc:
            outcome = "CodecError"
        except BaseException as exc:
            outcome = type(exc).__name__
        print(name, depth, what, outcome, flush=True)
"""


def test_types_built_too_deep_in_code_fail_cleanly() -> None:
    """Deep types made with the constructors are refused (or work), in a child
    process so that a C stack overflow in the compiled build is seen, not suffered."""
    proc = run_python(DEEP_CHILD, timeout=300)
    assert proc.returncode == 0, describe(proc)
    bad = [line for line in proc.stdout.splitlines()
           if line.split()[-1] not in ("ok", "CodecError")]
    assert not bad, "\n".join(bad)


# --------------------------------------------------------------------------- RSS in a child

RSS_CHILD = """
import resource, struct, gc
import cqlcodec
from test_limits import HOSTILE_VALUES, HOSTILE_BODIES

def rss_kib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * (resource.getpagesize() // 1024)

for name, t, data in HOSTILE_VALUES:
    try:
        t.deserialize(data)
    except cqlcodec.CodecError:
        pass
gc.collect()
before_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
before = rss_kib()
for _round in range(200):
    for name, t, data in HOSTILE_VALUES:
        try:
            t.deserialize(data)
        except cqlcodec.DecodeError:
            pass
    for name, body in HOSTILE_BODIES:
        try:
            cqlcodec.decode_result(body, 4)
        except cqlcodec.DecodeError:
            pass
gc.collect()
after_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(before, rss_kib(), before_peak, after_peak)
"""


@pytest.mark.compiled_only
def test_hostile_input_leaves_resident_memory_flat_in_a_child() -> None:
    """Max RSS (getrusage) of a fresh process grows by < 16 MiB over 200 rounds of every
    hostile value and body above: nothing is allocated from a lying length, nothing leaks."""
    proc = run_python(RSS_CHILD, timeout=300)
    assert proc.returncode == 0, describe(proc)
    before, after, before_peak, after_peak = (int(x) for x in proc.stdout.split())
    assert after_peak - before_peak < 16 * 1024, proc.stdout
    assert after - before < 8 * 1024, proc.stdout


NESTED_SHORT = [
    ("tuple", tuple_of(INT, INT, INT), _i32(4) + _i32(-1)),
    ("list of tuples", list_of(tuple_of(INT, INT)), _coll([_i32(-1)])),
    ("set of udts", set_of(user_type("ks", "pair", [("a", INT), ("b", INT)])), _coll([_i32(-1)])),
    ("map to tuples", map_of(INT, tuple_of(INT, TEXT)), _i32(1) + _i32(4) + _i32(7) + _i32(4) + _i32(-1)),
    ("vector of tuples", vector_of(tuple_of(INT, INT), 1), b"\x04" + _i32(-1)),
]


@pytest.mark.parametrize("name,t,value", NESTED_SHORT, ids=[c[0] for c in NESTED_SHORT])
def test_a_page_with_tuples_anywhere_starts_its_own_padding_budget(name: str, t: CqlType,
                                                                    value: bytes) -> None:
    """Only a page whose columns hold a tuple or UDT somewhere starts a padding budget; one
    that does must, however deeply nested: after this thread's budget ran out, a page of
    short values of ``t`` decodes, and a page without tuples leaves the budget alone."""
    from cqlcodec.protocol.rows import may_pad
    from cqlcodec.runtime import padding

    assert may_pad(t) and not may_pad(list_of(map_of(INT, TEXT)))
    body = _rows_body([("k", INT), ("v", t)], 1, _i32(4) + _i32(1) + _i32(len(value)) + value)
    padding.begin_message(0)
    padding.spend_padding("tuple<int>", 0, PADDING_FLOOR, PADDING_FLOOR + 1, False)
    plain = _rows_body([("k", INT), ("m", list_of(map_of(INT, TEXT)))], 1,
                       _i32(4) + _i32(1) + _i32(-1))
    assert cqlcodec.decode_result(plain, 4).rows == [(1, None)]  # type: ignore[union-attr]
    with pytest.raises(cqlcodec.DecodeError, match="padding budget"):
        padding.spend_padding("tuple<int>", 0, 1, 2, False)  # still spent
    result = cqlcodec.decode_result(body, 4)
    assert isinstance(result, cqlcodec.RowsResult) and len(result.rows) == 1
