"""Decoding time is linear in the input.

Fuzz inputs are small, so a quadratic path hides in them.  Here every kind of
input that can grow — element counts, string lengths, column counts and names,
type widths, row counts — is decoded at size n and 8n; the time may grow by at
most 32x (linear: 8x, quadratic: 64x).  The time is the best thread CPU time of
five runs, so other processes on the machine barely matter.
"""

from __future__ import annotations

import decimal
import struct
import time
from collections.abc import Callable

import pytest

import cqlcodec
from cqlcodec import CqlType, list_of, map_of, scalar_type, set_of, tuple_of, vector_of
from cqlcodec import kinds as K

from .refwire import Writer

INT = scalar_type(K.INT)
TEXT = scalar_type(K.TEXT)
GROWTH = 8
ALLOWED = 32.0  # linear is 8x; caches and the allocator add some; quadratic is 64x


def _i32(v: int) -> bytes:
    return struct.pack(">i", v)


def _coll(elements: list[bytes]) -> bytes:
    return _i32(len(elements)) + b"".join(_i32(len(e)) + e for e in elements)


def _best(fn: Callable[[], object], rounds: int = 5) -> float:
    """Best CPU time of this thread over ``rounds`` runs (other processes do not count)."""
    best = float("inf")
    for _i in range(rounds):
        t0 = time.thread_time()
        fn()
        best = min(best, time.thread_time() - t0)
    return best


def _value(t: CqlType, data: bytes) -> Callable[[], object]:
    return lambda: t.deserialize(data)


def _rows(ncols: int, nrows: int, name: Callable[[int], str] = lambda i: f"c{i}",
          factory: object = cqlcodec.tuple_factory) -> Callable[[], object]:
    w = Writer()
    w.i32(2)
    w.i32(1)
    w.i32(ncols)
    w.string("ks")
    w.string("t")
    for i in range(ncols):
        w.string(name(i))
        w.short(K.INT)
    w.i32(nrows)
    w.raw((_i32(4) + _i32(7)) * ncols * nrows)
    body = w.getvalue()
    return lambda: cqlcodec.decode_result(body, 4, row_factory=factory)  # type: ignore[arg-type]


def _udt_option(n: int) -> bytes:
    w = Writer()
    w.short(K.UDT)
    w.string("ks")
    w.string("u")
    w.short(n)
    for i in range(n):
        w.string(f"f{i}")
        w.short(K.INT)
    return w.getvalue()


def _prepared(n: int) -> bytes:
    w = Writer()
    w.short_bytes(b"id")
    w.i32(1)
    w.i32(n)
    w.i32(0)
    w.string("ks")
    w.string("t")
    for i in range(n):
        w.string(f"p{i}")
        w.short(K.TEXT)
    w.i32(4)
    w.i32(0)
    return w.getvalue()


CASES: dict[str, tuple[int, Callable[[int], Callable[[], object]]]] = {
    "list<int> elements": (4000, lambda n: _value(list_of(INT), _coll([_i32(i) for i in range(n)]))),
    "set<bigint> elements": (4000, lambda n: _value(set_of(scalar_type(K.BIGINT)),
                                                    _coll([struct.pack(">q", i * 7919) for i in range(n)]))),
    "map<text, int> entries": (2000, lambda n: _value(map_of(TEXT, INT), _i32(n) + b"".join(
        _i32(len(str(i))) + str(i).encode() + _i32(4) + _i32(i) for i in range(n)))),
    "list<list<int>> lists": (2000, lambda n: _value(list_of(list_of(INT)),
                                                     _coll([_i32(1) + _i32(4) + _i32(i) for i in range(n)]))),
    "vector<float, n>": (4000, lambda n: _value(vector_of(scalar_type(K.FLOAT), n), bytes(4 * n))),
    "vector<text, n>": (2000, lambda n: _value(vector_of(TEXT, n), b"\x01a" * n)),
    "tuple<int x n>": (500, lambda n: _value(tuple_of(*[INT] * n), (_i32(4) + _i32(1)) * n)),
    "text bytes": (100_000, lambda n: _value(TEXT, "\u00e9".encode() * n)),
    "ascii bytes": (100_000, lambda n: _value(scalar_type(K.ASCII), b"a" * n)),
    "blob bytes": (100_000, lambda n: _value(scalar_type(K.BLOB), b"\x00" * n)),
    "varint bytes": (20_000, lambda n: _value(scalar_type(K.VARINT), b"\x7f" + b"\xab" * n)),
    "rows": (2000, lambda n: _rows(3, n)),
    "columns": (500, lambda n: _rows(n, 1)),
    "column name length": (8000, lambda n: _rows(1, 1, lambda i: "a" * n)),
    "column name length, dict rows": (8000, lambda n: _rows(1, 1, lambda i: "a" * n,
                                                              cqlcodec.dict_factory)),
    "many columns, named tuple rows": (300, lambda n: _rows(n, 2, factory=cqlcodec.named_tuple_factory)),
    "udt [option] fields": (500, lambda n: (lambda buf: lambda: cqlcodec.read_type_option(buf, 0))(
        _udt_option(n))),
    "tuple [option] items": (2000, lambda n: (lambda buf: lambda: cqlcodec.read_type_option(buf, 0))(
        b"\x00\x31" + struct.pack(">H", n) + b"\x00\x09" * n)),
    # texts longer than 4096 characters are never cached, so each call really parses
    "tuple type text": (1000, lambda n: (lambda s: lambda: cqlcodec.parse_type(s))(
        "tuple<" + ", ".join(["int"] * n) + ">")),
    "Java class name": (500, lambda n: (lambda s: lambda: cqlcodec.parse_type(s))(
        "org.apache.cassandra.db.marshal.TupleType(" + ",".join(["Int32Type"] * n) + ")")),
    "prepared bind columns": (500, lambda n: (lambda b: lambda: cqlcodec.decode_prepared(b, 4))(
        _prepared(n))),
}


@pytest.mark.parametrize("name", list(CASES))
def test_decoding_time_is_linear(name: str) -> None:
    n, make = CASES[name]
    small, large = make(n), make(n * GROWTH)
    small()
    large()
    t_small, t_large = _best(small), _best(large)
    assert t_large < ALLOWED * t_small + 0.005, (
        f"{name}: {t_small * 1e3:.2f} ms at n={n}, {t_large * 1e3:.2f} ms at n={n * GROWTH}")


def test_hostile_column_names_with_named_tuple_rows_are_linear() -> None:
    small = _rows(1, 1, lambda i: "!" * 2000 + "a", cqlcodec.named_tuple_factory)
    large = _rows(1, 1, lambda i: "!" * 16000 + "a", cqlcodec.named_tuple_factory)
    t_small, t_large = _best(small), _best(large, 1)
    assert t_large < ALLOWED * t_small + 0.005, (t_small, t_large)


def test_decimal_with_thousands_of_digits_decodes_or_is_a_decode_error() -> None:
    """More digits than int->str converts (4300) must not surface as ValueError."""
    t = scalar_type(K.DECIMAL)
    unscaled = b"\x01" + bytes(2000)  # 2**16000: 4817 digits
    try:
        value = t.deserialize(_i32(3) + unscaled)
    except cqlcodec.DecodeError:
        return
    assert value == decimal.Decimal(int.from_bytes(unscaled, "big")).scaleb(
        -3, decimal.Context(prec=10_000))


def test_decimal_decoding_time_is_linear_or_refused() -> None:
    """Binary-to-decimal conversion is quadratic in CPython: huge decimals must be refused
    (cqlcodec applies sys.get_int_max_str_digits()) rather than cost minutes."""
    t = scalar_type(K.DECIMAL)

    def run(nbytes: int) -> Callable[[], object]:
        data = _i32(0) + b"\x7f" + b"\xab" * nbytes

        def call() -> object:
            try:
                return t.deserialize(data)
            except cqlcodec.DecodeError:
                return None  # refusing huge decimals is a fine way to stay linear

        return call

    t_small, t_large = _best(run(1500)), _best(run(1500 * GROWTH), 1)
    assert t_large < ALLOWED * t_small + 0.005, (t_small, t_large)
