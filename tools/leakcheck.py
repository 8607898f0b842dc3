#!/usr/bin/env python3
"""Leak check: a million cqlcodec operations of every kind, resident memory after each batch.

    python tools/leakcheck.py [--ops 1000000] [--batches 20] [--warmup 4] [--tolerance-mib 4]

Runs against the cqlcodec importable from this interpreter and insists on the
compiled build (``--allow-pure`` to run it interpreted).  The operations cover
encode and decode of every type (scalars, collections, tuples, UDTs, fixed and
variable vectors, numpy vectors), cache lookups by type and by text, bind (by
position, by name, with a column-encryption policy, with errors), RESULT
decoding of every kind (inline metadata, cached no-metadata descriptions,
prepared), [option] and type-text parsing, fresh types, and the error paths of
all of them (malformed bytes, out-of-range and wrongly typed values).

After each batch it collects garbage and prints the resident set size (RSS,
from /proc/self/statm) and the number of live Python memory blocks. Then it runs
each operation 1000 more times on its own and lists any that leaves blocks behind
(a leak of one object per call shows as ~1000 blocks). It exits 1 if RSS after
the warm-up batches grows by more than the tolerance, if live blocks keep growing,
or if an operation leaks; 0 otherwise.
"""

from __future__ import annotations

import argparse
import datetime
import decimal
import gc
import os
import resource
import struct
import sys
import time
import uuid
from collections.abc import Callable
from functools import partial

import cqlcodec
from cqlcodec import (
    ColumnSpec,
    CqlType,
    Prepared,
    list_of,
    map_of,
    parse_type,
    scalar_type,
    set_of,
    tuple_of,
    user_type,
    vector_of,
)
from cqlcodec import kinds as K
from cqlcodec.codecs.base import Codec

Op = Callable[[], object]


def rss_kib() -> int:
    """Current resident set size in KiB."""
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * (resource.getpagesize() // 1024)


def _i32(v: int) -> bytes:
    return struct.pack(">i", v)


def _string(s: str) -> bytes:
    data = s.encode()
    return struct.pack(">H", len(data)) + data


class XorPolicy:
    """A toy column-encryption policy: XOR with a constant byte."""

    def __init__(self, column: tuple[str, str, str], plaintext: CqlType) -> None:
        self.column = column
        self.plaintext = plaintext

    def contains_column(self, column: tuple[str, str, str]) -> bool:
        return column == self.column

    def column_type(self, column: tuple[str, str, str]) -> CqlType:
        return self.plaintext

    def encrypt(self, column: tuple[str, str, str], data: bytes) -> bytes:
        return bytes(b ^ 0x5A for b in data)

    def decrypt(self, column: tuple[str, str, str], data: bytes) -> bytes:
        return bytes(b ^ 0x5A for b in data)


def _values() -> list[tuple[CqlType, object]]:
    """A value of every type, nested ones included."""
    s = scalar_type
    udt = user_type("ks", "address", [("street", s(K.TEXT)), ("zip", s(K.INT)),
                                      ("tags", set_of(s(K.TEXT)))])
    return [
        (s(K.ASCII), "abc"), (s(K.BIGINT), -(1 << 62)), (s(K.BLOB), b"\x00\xff" * 8),
        (s(K.BOOLEAN), True), (s(K.COUNTER), 7), (s(K.DATE), datetime.date(2024, 5, 17)),
        (s(K.DATE), cqlcodec.Date(-(1 << 31))), (s(K.DECIMAL), decimal.Decimal("-12.3400")),
        (s(K.DOUBLE), 2.5), (s(K.DURATION), cqlcodec.Duration(1, 2, 3)), (s(K.FLOAT), 1.5),
        (s(K.INET), "::ffff:1.2.3.4"), (s(K.INET), "10.0.0.1"), (s(K.INT), -5),
        (s(K.SMALLINT), 300), (s(K.TEXT), "h\u00e9llo \U0001f600"),
        (s(K.TIME), cqlcodec.Time(123_456_789)), (s(K.TIMESTAMP), datetime.datetime(2001, 2, 3, 4, 5, 6, 7000)),
        (s(K.TIMESTAMP), 1 << 62), (s(K.TIMEUUID), uuid.UUID("e1b5a6b0-1dd2-11b2-8000-000000000000")),
        (s(K.TINYINT), -128), (s(K.UUID), uuid.UUID(int=12345)), (s(K.VARINT), 10**40),
        (list_of(s(K.INT)), list(range(20))), (set_of(s(K.TEXT)), {"a", "b", "c"}),
        (map_of(s(K.TEXT), list_of(s(K.DOUBLE))), {"x": [1.0, 2.0], "y": []}),
        (set_of(list_of(s(K.INT))), {(1, 2), (3,)}),
        (map_of(map_of(s(K.INT), s(K.INT)), s(K.TEXT)), {cqlcodec.FrozenMap({1: 2}): "v"}),
        (tuple_of(s(K.INT), s(K.TEXT), s(K.BOOLEAN)), (1, None, False)),
        (udt, {"street": "Main", "zip": 12345, "tags": {"home"}}),
        (list_of(udt), [("a", 1, None), ("b", None, {"x"})]),
        (vector_of(s(K.FLOAT), 768), [0.25] * 768), (vector_of(s(K.DOUBLE), 16), [1.0] * 16),
        (vector_of(s(K.INT), 8), list(range(8))), (vector_of(s(K.BIGINT), 4), [1, 2, 3, 4]),
        (vector_of(s(K.TEXT), 3), ["a", "bc", ""]), (vector_of(s(K.SMALLINT), 2), [1, -1]),
        (vector_of(list_of(s(K.INT)), 2), [[1], [2, 3]]),
        (vector_of(vector_of(s(K.FLOAT), 2), 2), [[1.0, 2.0], [3.0, 4.0]]),
        (s(K.DECIMAL), decimal.Decimal(10) ** 50),
    ]


def _codec_ops() -> list[tuple[str, Op]]:
    ops: list[tuple[str, Op]] = []
    try:
        import numpy
    except ImportError:  # numpy is optional
        numpy = None  # type: ignore[assignment]
    for t, v in _values():
        data = t.serialize(v)
        ser = cqlcodec.find_serializer(t)
        des = cqlcodec.find_deserializer(t)
        text = t.cql_name
        ops += [
            (f"serialize {text}", partial(t.serialize, v)),
            (f"deserialize {text}", partial(t.deserialize, data)),
            (f"deserialize tz {text}", partial(_deserialize_aware, t, data)),
            (f"codec {text}", partial(_codec_round_trip, ser, des, v)),
            (f"truncated {text}", partial(_swallow, partial(t.deserialize, data[:-1] + b"\xff" * 3))),
            (f"wrong type {text}", partial(_swallow, partial(t.serialize, object()))),
        ]
        try:
            parse_type(text)
            ops.append((f"find by text {text}", partial(cqlcodec.find_deserializer, text)))
        except cqlcodec.TypeParseError:
            pass  # a UDT name needs its definition to parse
        if t.kind == K.VECTOR and numpy is not None and t.subtypes[0].kind in (K.FLOAT, K.DOUBLE, K.INT, K.BIGINT):
            arr = numpy.asarray(v)
            ops += [(f"numpy {text}", partial(_deserialize_numpy, t, data)),
                    (f"numpy encode {text}", partial(t.serialize, arr))]
    ops += [
        ("int out of range", lambda: _swallow(lambda: scalar_type(K.INT).serialize(1 << 31))),
        ("float32 overflow", lambda: _swallow(lambda: scalar_type(K.FLOAT).serialize(1e39))),
        ("vector dimension", lambda: _swallow(lambda: vector_of(scalar_type(K.FLOAT), 3).serialize([1.0]))),
        ("hostile count", lambda: _swallow(lambda: list_of(scalar_type(K.INT)).deserialize(_i32(0x7FFFFFFF)))),
        ("hostile vector element length", lambda: _swallow(lambda: vector_of(scalar_type(K.TEXT), 2)
                                                           .deserialize(bytes.fromhex("ff8000000000000000") + b"ab"))),
        ("hostile duration months", lambda: _swallow(lambda: scalar_type(K.DURATION)
                                                     .deserialize(bytes.fromhex("ff8000000000000000") + b"\0\0"))),
        ("decimal with a 64-bit unscaled value", lambda: scalar_type(K.DECIMAL).deserialize(
            _i32(2) + (2**62 + 5).to_bytes(8, "big"))),
        ("varint beyond 64 bits", lambda: scalar_type(K.VARINT).deserialize((2**70).to_bytes(10, "big"))),
        ("make_serializers", lambda: cqlcodec.make_serializers([scalar_type(K.INT), "text", "list<int>"])),
        ("make_deserializers", lambda: cqlcodec.make_deserializers(["map<int, text>", "vector<float, 3>"])),
    ]
    return ops


def _deserialize_aware(t: CqlType, data: bytes) -> object:
    return t.deserialize(data, 5, tz_aware=True)


def _deserialize_numpy(t: CqlType, data: bytes) -> object:
    return t.deserialize(data, numpy=True)


def _codec_round_trip(ser: Codec, des: Codec, value: object) -> object:
    data = ser.encode(value)
    return des.decode(data, 0, len(data))


def _swallow(fn: Callable[[], object]) -> object:
    try:
        return fn()
    except cqlcodec.CodecError as exc:
        return exc


def _statement_ops() -> list[tuple[str, Op]]:
    s = scalar_type
    cols = [ColumnSpec("ks", "t", "id", s(K.UUID)), ColumnSpec("ks", "t", "n", s(K.INT)),
            ColumnSpec("ks", "t", "v", vector_of(s(K.FLOAT), 16)),
            ColumnSpec("ks", "t", "tags", set_of(s(K.TEXT)))]
    results = [ColumnSpec("ks", "t", "n", s(K.INT)), ColumnSpec("ks", "t", "name", s(K.TEXT)),
               ColumnSpec("ks", "t", "m", map_of(s(K.TEXT), s(K.BIGINT)))]
    prep = Prepared(cols, results, [0, 1], 4, b"qid")
    policy = XorPolicy(("ks", "t", "secret"), s(K.TEXT))
    secret_cols = [ColumnSpec("ks", "t", "secret", s(K.BLOB)), ColumnSpec("ks", "t", "n", s(K.INT))]
    enc_prep = Prepared(secret_cols, secret_cols, [1], 4, b"q2", None, policy)
    values = [uuid.UUID(int=1), 7, [0.5] * 16, {"a", "b"}]
    by_name = {"id": uuid.UUID(int=2), "n": 1, "v": [1.0] * 16}

    row = (_i32(4) + _i32(42) + _i32(5) + b"hello"
           + _i32(4 + 4 + 1 + 4 + 8) + _i32(1) + _i32(1) + b"k" + _i32(8) + struct.pack(">q", 9))
    nomd = _i32(2) + _i32(4) + _i32(3) + _i32(50) + row * 50
    inline = (_i32(2) + _i32(1) + _i32(2) + _string("ks") + _string("t") + _string("a") + b"\x00\x09"
              + _string("b") + b"\x00\x00" + _string("org.apache.cassandra.db.marshal.VectorType("
                                                    "org.apache.cassandra.db.marshal.FloatType, 2)")
              + _i32(20) + (_i32(4) + _i32(1) + _i32(8) + struct.pack(">ff", 1.0, 2.0)) * 20)
    enc_cell = bytes(b ^ 0x5A for b in b"plain")
    enc_rows = (_i32(2) + _i32(4) + _i32(2) + _i32(3)
                + (_i32(len(enc_cell)) + enc_cell + _i32(4) + _i32(1)) * 2 + _i32(-1) + _i32(-1))
    prepared_body = (_string("qid") + _i32(1) + _i32(1) + _i32(1) + struct.pack(">H", 0)
                     + _string("ks") + _string("t") + _string("a") + b"\x00\x09"
                     + _i32(4) + _i32(0))
    others = [_i32(1), _i32(3) + _string("ks"),
              _i32(5) + _string("CREATED") + _string("FUNCTION") + _string("ks") + _string("f")
              + struct.pack(">H", 2) + _string("int") + _string("frozen<list<text>>"),
              _i32(4) + prepared_body]
    counter = [0]
    # fresh types and type texts: more distinct ones than the intern table (4096), the UDT
    # class cache (1024) and the parse caches (1024) hold, so every bounded cache is
    # evicting by the end of the warm-up; 16 per call so that happens early
    fresh_names = 6000
    fresh_texts = 2500

    def fresh_types() -> object:
        out = []
        for _k in range(16):
            counter[0] += 1
            t = user_type("ks", f"fresh{counter[0] % fresh_names}", [("a", s(K.INT)), ("b", s(K.TEXT))])
            out.append(t.deserialize(_i32(4) + _i32(1) + _i32(1) + b"x"))
            out.append(parse_type(f"vector<float, {1 + counter[0] % fresh_texts}>"))
        return out

    return [
        ("bind", lambda: prep.bind(values).values),
        ("bind by name + routing key", lambda: prep.bind(by_name).routing_key),
        ("bind error", lambda: _swallow(lambda: prep.bind([uuid.UUID(int=1), "x"]))),
        ("bind too many", lambda: _swallow(lambda: prep.bind([1, 2, 3, 4, 5]))),
        ("bind encrypted", lambda: enc_prep.bind(["plain", 3]).values),
        ("rows no-metadata (cached description)", lambda: cqlcodec.decode_result(nomd, 4, prep)),
        ("rows no-metadata dict rows", lambda: cqlcodec.decode_result(nomd, 4, prep,
                                                                       row_factory=cqlcodec.dict_factory)),
        ("rows inline metadata", lambda: cqlcodec.decode_result(inline, 4)),
        ("rows encrypted", lambda: cqlcodec.decode_result(enc_rows, 4, enc_prep)),
        ("other results", lambda: [cqlcodec.decode_result(b, 4) for b in others]),
        ("decode_prepared", lambda: cqlcodec.decode_prepared(prepared_body, 4)),
        ("malformed rows", lambda: _swallow(lambda: cqlcodec.decode_result(nomd[:-3], 4, prep))),
        ("malformed body", lambda: _swallow(lambda: cqlcodec.decode_result(_i32(9), 4))),
        ("read_type_option", lambda: cqlcodec.read_type_option(
            b"\x00\x21\x00\x0d\x00\x20\x00\x30" + _string("ks") + _string("u") + b"\x00\x01"
            + _string("f") + b"\x00\x09", 0)),
        ("parse_type", lambda: parse_type("map<text, frozen<list<tuple<int, vector<float, 3>>>>>")),
        ("fresh UDT types and type texts", fresh_types),
        ("clear caches", lambda: cqlcodec.clear_caches() if counter[0] % 97 == 0 else None),
    ]


def per_op(ops: list[tuple[str, Op]], repeat: int) -> int:
    """Run each operation ``repeat`` times; report those that leave Python objects behind.

    ``sys.getallocatedblocks()`` counts live pymalloc blocks: an operation that leaks one
    object per call grows it by about ``repeat``. Operations that fill bounded caches
    (fresh types) grow it until the caches are full, so they are run twice first.
    """
    leaking = 0
    for name, op in ops:
        if name.startswith("fresh"):
            continue  # fills bounded caches by design; the batch mode covers it
        for _k in range(max(200, repeat // 4)):
            op()
        gc.collect()
        before = sys.getallocatedblocks()
        for _k in range(repeat):
            op()
        gc.collect()
        grown = sys.getallocatedblocks() - before
        if grown > repeat // 10:
            leaking += 1
            print(f"leak? {grown:>8} blocks after {repeat} x {name}")
    print(f"leakcheck --per-op: {leaking} of {len(ops)} operations left blocks behind")
    return 1 if leaking else 0


def workload() -> list[tuple[str, Op]]:
    """Every operation, each a zero-argument callable."""
    return _codec_ops() + _statement_ops()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    parser.add_argument("--ops", type=int, default=1_000_000)
    parser.add_argument("--batches", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=4, help="batches before the baseline")
    parser.add_argument("--tolerance-mib", type=float, default=4.0)
    parser.add_argument("--allow-pure", action="store_true")
    parser.add_argument("--per-op", type=int, default=0, metavar="N",
                        help="instead: run each operation N times and list those that leave "
                             "allocated blocks behind (finds the leaking operation)")
    parser.add_argument("--per-op-after", type=int, default=1000, metavar="N",
                        help="after the batches, the same per-operation check (0: skip)")
    args = parser.parse_args(argv)
    if not cqlcodec.COMPILED and not args.allow_pure:
        print("leakcheck: the compiled build is not active (use --allow-pure to run anyway)",
              file=sys.stderr)
        return 2
    ops = workload()
    for _name, op in ops:
        op()
    if args.per_op:
        return per_op(ops, args.per_op)
    per_batch = max(1, args.ops // args.batches)
    build = "compiled" if cqlcodec.COMPILED else "pure"
    print(f"leakcheck: cqlcodec {cqlcodec.__version__} ({build}), {len(ops)} kinds of operation, "
          f"{args.batches} batches of {per_batch} ops")
    print(f"{'batch':>5} {'ops':>10} {'RSS MiB':>9} {'delta KiB':>10} {'blocks':>9} {'s':>6}")
    baseline = -1
    base_blocks = -1
    worst = 0
    done = 0
    start = rss_kib()
    i = 0
    for batch in range(1, args.batches + 1):
        t0 = time.perf_counter()
        for _k in range(per_batch):
            ops[i][1]()
            i += 1
            if i == len(ops):
                i = 0
        done += per_batch
        gc.collect()
        rss = rss_kib()
        if batch == args.warmup:
            baseline = rss
            base_blocks = sys.getallocatedblocks()
        delta = rss - baseline if baseline >= 0 else rss - start
        if baseline >= 0:
            worst = max(worst, delta)
        print(f"{batch:>5} {done:>10} {rss / 1024:>9.1f} {delta:>10} {sys.getallocatedblocks():>9} "
              f"{time.perf_counter() - t0:>6.2f}", flush=True)
    limit = int(args.tolerance_mib * 1024)
    # live Python objects: a leak of one object per operation kind and pass over the
    # workload shows as steady growth; bounded caches only wobble around their size
    passes = (done - per_batch * args.warmup) / len(ops)
    block_growth = sys.getallocatedblocks() - base_blocks
    block_limit = int(passes / 2) + 20000  # bounded caches (fresh types) wobble by ~10k
    ok = worst <= limit and block_growth <= block_limit
    print(f"leakcheck: {'OK' if ok else 'LEAK'}: RSS {start / 1024:.1f} MiB at start, "
          f"{baseline / 1024:.1f} MiB after warm-up, {rss / 1024:.1f} MiB after {done} ops; "
          f"largest growth after warm-up {worst} KiB (tolerance {limit} KiB); "
          f"allocated blocks grew by {block_growth} (tolerance {block_limit})")
    if args.per_op_after:
        print(f"leakcheck: each operation {args.per_op_after} more times, counting live blocks")
        ok = per_op(ops, args.per_op_after) == 0 and ok
    return 0 if ok else 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
