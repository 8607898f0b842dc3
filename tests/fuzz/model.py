"""An independent reference of CQL value encodings for the fuzzer.

Three things, all written from the spec and not from cqlcodec:

* :func:`random_type` draws a CqlType from a rich universe (every scalar,
  nested collections, tuples, UDTs, fixed and variable vectors, frozen and
  reversed wrappers, CompositeType, custom and empty types).
* :func:`gen_content` writes valid content bytes for a type and returns the
  value they stand for, in *normal form* (plain nested tuples, see below).
* :func:`ref_decode` says what any input must give: a :class:`Verdict` that is
  ``accept`` (with the normal-form value), ``reject`` (cqlcodec must raise
  DecodeError) or ``either`` (the spec leaves the choice to the codec, so only
  the exception type is checked).  :func:`normalize` turns what cqlcodec
  returned into the same normal form, guided by the type, and raises
  :class:`NormError` when a value has the wrong Python type.

Where the spec leaves a choice to the codec, the reference follows the decision
cqlcodec documents in its module docstrings (e.g. a time outside one day, a
decimal without unscaled bytes, a ``-2`` element length and mixed-sign durations
are DecodeErrors; a timestamp outside datetime's range is its int milliseconds),
so the fuzzer also checks that the documentation is true.

Normal form: ``None``, or a tuple whose first item is a tag: ``("i", int)``,
``("b", bool)``, ``("f", bits)``, ``("s", str)``, ``("y", bytes)``,
``("d", scale, unscaled)``, ``("D", days)``, ``("T", nanos)``, ``("ts", millis)``,
``("u", bytes)``, ``("n", packed address)``, ``("du", months, days, nanos)``,
``("L", items)``, ``("S", frozenset)``, ``("M", frozenset of pairs)``,
``("R", fields)``, ``("C", components present)``.  Inside set elements and map keys
(``hctx``) floats and decimals compare by value, as Python's set and dict do.
"""

from __future__ import annotations

import datetime
import decimal
import ipaddress
import math
import random
import struct
import sys
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import cqlcodec
from cqlcodec import (
    CqlType,
    composite_type,
    custom_type,
    frozen,
    list_of,
    map_of,
    reversed_type,
    scalar_type,
    set_of,
    tuple_of,
    user_type,
    vector_of,
)
from cqlcodec import kinds as K
from cqlcodec.runtime.padding import PADDING_FLOOR, PADDING_PER_BYTE

from .refwire import Reader, Reject, Writer, vint_bytes

INT_WIDTHS: dict[int, int] = {K.TINYINT: 1, K.SMALLINT: 2, K.INT: 4, K.BIGINT: 8, K.COUNTER: 8}
SCALARS: list[int] = [k for k in K.SCALAR_NAMES if k != K.EMPTY]
NANOS_PER_DAY = 86_400 * 10**9
# datetime's range in milliseconds since the epoch (year 1 to year 9999)
TS_MIN = -62_135_596_800_000
TS_MAX = 253_402_300_799_999
_EPOCH = datetime.datetime(1970, 1, 1)
_EPOCH_DATE = datetime.date(1970, 1, 1)
JAVA_SCALARS: dict[int, str] = {
    K.ASCII: "AsciiType", K.BIGINT: "LongType", K.BLOB: "BytesType", K.BOOLEAN: "BooleanType",
    K.COUNTER: "CounterColumnType", K.DATE: "SimpleDateType", K.DECIMAL: "DecimalType",
    K.DOUBLE: "DoubleType", K.DURATION: "DurationType", K.FLOAT: "FloatType",
    K.INET: "InetAddressType", K.INT: "Int32Type", K.SMALLINT: "ShortType", K.TEXT: "UTF8Type",
    K.TIME: "TimeType", K.TIMESTAMP: "TimestampType", K.TIMEUUID: "TimeUUIDType",
    K.TINYINT: "ByteType", K.UUID: "UUIDType", K.VARINT: "IntegerType", K.EMPTY: "EmptyType",
}
MARSHAL = "org.apache.cassandra.db.marshal."
LOG10_2 = 0.30102999566398120


class NormError(Exception):
    """cqlcodec returned a value of the wrong Python type or shape for its CQL type."""


@dataclass
class Verdict:
    """What the reference says about an input."""

    kind: str  # "accept" | "reject" | "either"
    value: object = None
    reason: str = ""


@dataclass
class Ctx:
    """Decoding context: collects the reasons that make an input's outcome a free choice."""

    ambiguous: list[str] = field(default_factory=list)
    # missing trailing tuple/UDT fields the message may still pad (cqlcodec.runtime.padding)
    padding_left: int = PADDING_FLOOR

    def either(self, why: str) -> None:
        self.ambiguous.append(why)


def padding_budget(nbytes: int) -> int:
    """The missing trailing fields a message of ``nbytes`` bytes may pad."""
    return PADDING_FLOOR + PADDING_PER_BYTE * nbytes


# --------------------------------------------------------------------------- types

def random_type(rng: random.Random, depth: int = 3, *, udt_counter: list[int] | None = None) -> CqlType:
    """A random CqlType, at most ``depth`` levels of parameterized types deep."""
    counter = udt_counter if udt_counter is not None else [0]
    roll = rng.random()
    if depth <= 0 or roll < 0.45:
        r = rng.random()
        if r < 0.03:
            return scalar_type(K.EMPTY)
        if r < 0.06:
            return custom_type(rng.choice(["com.example.Opaque", "org.example.Point",
                                           MARSHAL + "PointType"]))
        return scalar_type(rng.choice(SCALARS))
    sub = depth - 1
    choice = rng.randrange(10)
    if choice == 0:
        return list_of(random_type(rng, sub, udt_counter=counter))
    if choice == 1:
        return set_of(random_type(rng, sub, udt_counter=counter))
    if choice == 2:
        return map_of(random_type(rng, sub, udt_counter=counter),
                      random_type(rng, sub, udt_counter=counter))
    if choice == 3:
        n = rng.choice([1, 1, 2, 3, 4, 7])
        return tuple_of(*[random_type(rng, sub, udt_counter=counter) for _i in range(n)])
    if choice == 4:
        counter[0] += 1
        n = rng.choice([1, 2, 3, 5])
        names = [rng.choice(["a", "b", "x", "Name", "with space", "é", "0"]) + str(i)
                 for i in range(n)]
        return user_type("ks" + str(rng.randrange(3)), "udt" + str(counter[0]),
                         [(nm, random_type(rng, sub, udt_counter=counter)) for nm in names])
    if choice in (5, 6):
        fixed = [K.FLOAT, K.DOUBLE, K.INT, K.BIGINT, K.BOOLEAN, K.UUID, K.TIMESTAMP,
                 K.TIMEUUID, K.COUNTER]
        if choice == 5:
            elem = scalar_type(rng.choice(fixed))
            if rng.random() < 0.2:
                elem = vector_of(elem, rng.randint(1, 3))
        else:
            elem = random_type(rng, sub, udt_counter=counter)
        return vector_of(elem, rng.choice([1, 2, 3, 5, 8, 16]))
    if choice == 7:
        return frozen(random_type(rng, sub, udt_counter=counter))
    if choice == 8:
        return reversed_type(random_type(rng, sub, udt_counter=counter))
    if rng.random() < 0.5:
        n = rng.choice([1, 1, 2, 3, 4])
        return composite_type(*[random_type(rng, sub, udt_counter=counter) for _i in range(n)])
    return scalar_type(rng.choice(SCALARS))


def constructor_expr(t: CqlType) -> str:
    """Python source that rebuilds ``t`` from cqlcodec's constructors (for reproducers)."""
    k = t.kind
    subs = t.subtypes
    if k == K.LIST:
        return f"list_of({constructor_expr(subs[0])})"
    if k == K.SET:
        return f"set_of({constructor_expr(subs[0])})"
    if k == K.MAP:
        return f"map_of({constructor_expr(subs[0])}, {constructor_expr(subs[1])})"
    if k == K.TUPLE:
        return "tuple_of(" + ", ".join(constructor_expr(s) for s in subs) + ")"
    if k == K.UDT:
        fields = ", ".join(f"({n!r}, {constructor_expr(s)})" for n, s in t.fields)
        return f"user_type({t.keyspace!r}, {t.name!r}, [{fields}])"
    if k == K.VECTOR:
        return f"vector_of({constructor_expr(subs[0])}, {t.dimension})"
    if k == K.FROZEN:
        return f"frozen({constructor_expr(subs[0])})"
    if k == K.REVERSED:
        return f"reversed_type({constructor_expr(subs[0])})"
    if k == K.CUSTOM:
        return f"custom_type({t.name!r})"
    if k == K.COMPOSITE:
        return "composite_type(" + ", ".join(constructor_expr(s) for s in subs) + ")"
    return f"scalar_type({k:#06x})"


def eval_type(expr: str) -> CqlType:
    """Inverse of :func:`constructor_expr`."""
    names: dict[str, Any] = {
        "list_of": list_of, "set_of": set_of, "map_of": map_of, "tuple_of": tuple_of,
        "user_type": user_type, "vector_of": vector_of, "frozen": frozen,
        "reversed_type": reversed_type, "custom_type": custom_type, "scalar_type": scalar_type,
        "composite_type": composite_type,
    }
    t = eval(expr, {"__builtins__": {}}, names)  # noqa: S307 - our own reproducer text
    assert isinstance(t, CqlType)
    return t


def java_name(t: CqlType) -> str:
    """The Java marshal class name of ``t`` (as found in custom [option]s and schema tables)."""
    k = t.kind
    subs = t.subtypes
    if k in JAVA_SCALARS:
        return MARSHAL + JAVA_SCALARS[k]
    inner = ",".join(java_name(s) for s in subs)
    if k == K.LIST:
        return f"{MARSHAL}ListType({inner})"
    if k == K.SET:
        return f"{MARSHAL}SetType({inner})"
    if k == K.MAP:
        return f"{MARSHAL}MapType({inner})"
    if k == K.TUPLE:
        return f"{MARSHAL}TupleType({inner})"
    if k == K.FROZEN:
        return f"{MARSHAL}FrozenType({inner})"
    if k == K.REVERSED:
        return f"{MARSHAL}ReversedType({inner})"
    if k == K.VECTOR:
        return f"{MARSHAL}VectorType({inner},{t.dimension})"
    if k == K.COMPOSITE:
        return f"{MARSHAL}CompositeType({inner})"
    if k == K.UDT:
        parts = [t.keyspace, t.name.encode("utf-8").hex()]
        parts += [f"{n.encode('utf-8').hex()}:{java_name(s)}" for n, s in t.fields]
        return f"{MARSHAL}UserType({','.join(parts)})"
    return t.name


def write_option(w: Writer, t: CqlType) -> None:
    """Append the binary ``[option]`` of ``t`` (frozen is not signalled on the wire)."""
    k = t.kind
    if k == K.FROZEN:
        write_option(w, t.subtypes[0])
        return
    if k in (K.REVERSED, K.VECTOR, K.CUSTOM, K.EMPTY, K.COMPOSITE):
        w.short(0, slot=False)
        w.string(java_name(t))
        return
    w.short(k, slot=False)
    if k in (K.LIST, K.SET):
        write_option(w, t.subtypes[0])
    elif k == K.MAP:
        write_option(w, t.subtypes[0])
        write_option(w, t.subtypes[1])
    elif k == K.TUPLE:
        w.short(len(t.subtypes))
        for s in t.subtypes:
            write_option(w, s)
    elif k == K.UDT:
        w.string(t.keyspace)
        w.string(t.name)
        w.short(len(t.subtypes))
        for n, s in t.fields:
            w.string(n)
            write_option(w, s)


def wire_type(t: CqlType) -> CqlType:
    """What a type looks like after a trip through a binary [option]: frozen dropped."""
    k = t.kind
    subs = t.subtypes
    if k == K.FROZEN:
        return wire_type(subs[0])
    if k == K.LIST:
        return list_of(wire_type(subs[0]))
    if k == K.SET:
        return set_of(wire_type(subs[0]))
    if k == K.MAP:
        return map_of(wire_type(subs[0]), wire_type(subs[1]))
    if k == K.TUPLE:
        return tuple_of(*[wire_type(s) for s in subs])
    if k == K.UDT:
        return user_type(t.keyspace, t.name, [(n, wire_type(s)) for n, s in t.fields])
    return t


def read_option_ref(r: Reader, depth: int = 0) -> CqlType | None:
    """Reference [option] reader: the type, or None when the outcome depends on a
    custom class name (parsed by cqlcodec's own parser). Malformed input raises Reject."""
    k = r.short("option id")
    if depth > 20:
        # how deep a type may nest is the codec's choice (it must be bounded)
        _skip_option(r, k, depth)
        return None
    if k == K.CUSTOM:
        return parse_java_ref(r.string("custom class name"))
    if k in K.SCALAR_NAMES and k != K.EMPTY:
        return scalar_type(k)
    if k == 0x000A:
        return scalar_type(K.TEXT)
    if k in (K.LIST, K.SET):
        sub = read_option_ref(r, depth + 1)
        if sub is None:
            return None
        return list_of(sub) if k == K.LIST else set_of(sub)
    if k == K.MAP:
        key = read_option_ref(r, depth + 1)
        val = read_option_ref(r, depth + 1)
        if key is None or val is None:
            return None
        return map_of(key, val)
    if k == K.TUPLE:
        n = r.short("tuple size")
        items = [read_option_ref(r, depth + 1) for _i in range(n)]
        if n == 0:
            return None  # a tuple without items: the codec decides
        if any(i is None for i in items):
            return None
        return tuple_of(*[i for i in items if i is not None])
    if k == K.UDT:
        ks = r.string("udt keyspace")
        name = r.string("udt name")
        n = r.short("udt size")
        fields: list[tuple[str, CqlType | None]] = []
        for _i in range(n):
            fname = r.string("udt field")
            fields.append((fname, read_option_ref(r, depth + 1)))
        names = [f[0] for f in fields]
        if n == 0 or len(set(names)) != len(names) or any(f[1] is None for f in fields):
            return None
        return user_type(ks, name, [(f[0], f[1]) for f in fields if f[1] is not None])
    raise Reject(f"unknown option id {k:#06x}")


_JAVA_KINDS: dict[str, int] = {v: k for k, v in JAVA_SCALARS.items()}


def parse_java_ref(text: str) -> CqlType | None:
    """The type of a Java marshal class name as :func:`java_name` writes them; None if the
    name is anything else (then how it parses is cqlcodec's parser's business)."""
    try:
        t, pos = _java(text, 0, 0)
    except (ValueError, IndexError, KeyError, UnicodeDecodeError, RecursionError):
        return None
    return t if pos == len(text) else None


def _java(text: str, pos: int, depth: int) -> tuple[CqlType | None, int]:
    if depth > 20:
        raise ValueError("deep")
    start = pos
    while pos < len(text) and text[pos] not in "(),:":
        pos += 1
    name = text[start:pos]
    short = name[len(MARSHAL):] if name.startswith(MARSHAL) else None
    if pos >= len(text) or text[pos] != "(":
        if short is None:
            parts = name.split(".")
            if len(parts) < 3 or not all(p.isidentifier() and p.isascii() for p in parts):
                raise ValueError("not a plain class name: the codec's parser decides")
            return custom_type(name), pos
        return scalar_type(_JAVA_KINDS[short]), pos
    if short is None:
        raise ValueError("parameters of an unknown class")
    pos += 1
    if short == "UserType":
        comma = text.index(",", pos)
        ks = text[pos:comma]
        if not ks or not all(c.isascii() and (c.isalnum() or c == "_") for c in ks):
            raise ValueError("keyspace name: the codec's parser decides")
        comma2 = text.index(",", comma + 1)
        name_ = bytes.fromhex(text[comma + 1:comma2]).decode("utf-8")
        pos = comma2 + 1
        fields: list[tuple[str, CqlType]] = []
        while True:
            colon = text.index(":", pos)
            fname = bytes.fromhex(text[pos:colon]).decode("utf-8")
            ft, pos = _java(text, colon + 1, depth + 1)
            if ft is None:
                raise ValueError("field")
            fields.append((fname, ft))
            if text[pos] == ")":
                return user_type(ks, name_, fields), pos + 1
            if text[pos] != ",":
                raise ValueError("separator")
            pos += 1
    params: list[CqlType] = []
    dim = -1
    while True:
        if short == "VectorType" and params:
            close = text.index(")", pos)
            if not text[pos:close].isdigit() or not text[pos:close].isascii():
                raise ValueError("dimension")
            dim = int(text[pos:close])
            pos = close
        else:
            p, pos = _java(text, pos, depth + 1)
            if p is None:
                raise ValueError("param")
            params.append(p)
        if text[pos] == ")":
            pos += 1
            break
        if text[pos] != ",":
            raise ValueError("separator")
        pos += 1
    if short == "ListType" and len(params) == 1:
        return list_of(params[0]), pos
    if short == "SetType" and len(params) == 1:
        return set_of(params[0]), pos
    if short == "MapType" and len(params) == 2:
        return map_of(params[0], params[1]), pos
    if short == "TupleType" and params:
        return tuple_of(*params), pos
    if short == "FrozenType" and len(params) == 1:
        if params[0].unwrapped().kind not in (K.LIST, K.SET, K.MAP, K.TUPLE, K.UDT, K.VECTOR):
            raise ValueError("frozen scalar: the codec's parser decides")
        return frozen(params[0]), pos
    if short == "ReversedType" and len(params) == 1:
        return reversed_type(params[0]), pos
    if short == "VectorType" and len(params) == 1 and dim >= 1:
        return vector_of(params[0], dim), pos
    if short == "CompositeType" and params:
        return composite_type(*params), pos
    raise ValueError(short)


def _skip_option(r: Reader, k: int, depth: int) -> None:
    """Read past an option whose type the reference does not build (may still Reject)."""
    if depth > 100_000:
        raise Reject("absurdly deep option")  # never reached: inputs are far smaller
    while True:  # iterative over the common single-child chains, recursive otherwise
        if k == K.CUSTOM:
            r.string("custom class name")
            return
        if (k in K.SCALAR_NAMES and k != K.EMPTY) or k == 0x000A:
            return
        if k in (K.LIST, K.SET):
            k = r.short("option id")
            continue
        if k == K.MAP:
            _skip_option(r, r.short("option id"), depth + 1)
            k = r.short("option id")
            continue
        if k == K.TUPLE:
            n = r.short("tuple size")
            for _i in range(n):
                _skip_option(r, r.short("option id"), depth + 1)
            return
        if k == K.UDT:
            r.string("udt keyspace")
            r.string("udt name")
            n = r.short("udt size")
            for _i in range(n):
                r.string("udt field")
                _skip_option(r, r.short("option id"), depth + 1)
            return
        raise Reject(f"unknown option id {k:#06x}")


# --------------------------------------------------------------------------- values

def _f64_bits(v: float) -> object:
    return "nan" if math.isnan(v) else struct.pack(">d", v)


def _float_norm(v: float, hctx: bool) -> tuple[object, ...]:
    if hctx:
        return ("f", "nan" if math.isnan(v) else v + 0.0)
    return ("f", _f64_bits(v))


def _decimal_norm(scale: int, unscaled: int, hctx: bool) -> tuple[object, ...]:
    if hctx:
        if unscaled == 0:
            return ("d", 0, 0)
        while unscaled % 10 == 0:
            unscaled //= 10
            scale -= 1
    return ("d", scale, unscaled)


def _edge_int(rng: random.Random, bits: int) -> int:
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return rng.choice([lo, hi, 0, -1, 1, lo + 1, hi - 1, rng.randint(lo, hi),
                       max(lo, min(hi, rng.randint(-300, 300)))])


def gen_content(w: Writer, rng: random.Random, t: CqlType, budget: list[int]) -> object:
    """Append valid content bytes of ``t`` to ``w``; return the value in normal form.

    ``budget`` is a one-item list bounding how many collection elements remain to be made.
    """
    return _gen(w, rng, t, budget, False)


def _gen(w: Writer, rng: random.Random, t: CqlType, budget: list[int], hctx: bool) -> object:
    t = t.unwrapped()
    k = t.kind
    if k in INT_WIDTHS:
        width = INT_WIDTHS[k]
        v = _edge_int(rng, width * 8)
        w.raw(v.to_bytes(width, "big", signed=True))
        return ("i", v)
    if k == K.VARINT:
        n = rng.choice([1, 1, 2, 3, 8, 9, 17, 40, 300, 1900])
        data = rng.randbytes(n)
        w.raw(data)
        return ("i", int.from_bytes(data, "big", signed=True))
    if k == K.BOOLEAN:
        b = rng.random() < 0.5
        w.byte(1 if b else 0)
        return ("b", b)
    if k == K.FLOAT:
        data = rng.choice([rng.randbytes(4), struct.pack(">f", rng.uniform(-1e6, 1e6)),
                           bytes.fromhex("80000000"), bytes.fromhex("7f800000"),
                           bytes.fromhex("00000001"), bytes.fromhex("7fc00000")])
        w.raw(data)
        return _float_norm(struct.unpack(">f", data)[0], hctx)
    if k == K.DOUBLE:
        data = rng.choice([rng.randbytes(8), struct.pack(">d", rng.uniform(-1e9, 1e9)),
                           bytes.fromhex("8000000000000000"), bytes.fromhex("0000000000000001")])
        w.raw(data)
        return _float_norm(struct.unpack(">d", data)[0], hctx)
    if k == K.TEXT:
        s = "".join(rng.choice(["a", "é", "中", "\U0001f600", "\x00", " ", "z"])
                    for _i in range(rng.choice([0, 1, 3, 10, 10, 10, 700])))
        w.raw(s.encode("utf-8"))
        return ("s", s)
    if k == K.ASCII:
        s = "".join(chr(rng.randrange(128)) for _i in range(rng.choice([0, 1, 5, 12])))
        w.raw(s.encode("ascii"))
        return ("s", s)
    if k in (K.BLOB, K.CUSTOM):
        data = rng.randbytes(rng.choice([0, 1, 4, 16]))
        w.raw(data)
        if not data and k == K.CUSTOM:
            w.byte(7)  # an empty custom value is ambiguous (None or b''): avoid it here
            return ("y", b"\x07")
        return ("y", data)
    if k == K.DATE:
        u = rng.choice([rng.randrange(1 << 32), 1 << 31, 0, (1 << 32) - 1, (1 << 31) + 20000])
        w.raw(u.to_bytes(4, "big"))
        return ("D", u - (1 << 31))
    if k == K.TIME:
        ns = rng.choice([0, NANOS_PER_DAY - 1, rng.randrange(NANOS_PER_DAY)])
        w.raw(ns.to_bytes(8, "big", signed=True))
        return ("T", ns)
    if k == K.TIMESTAMP:
        ms = rng.choice([0, -1, TS_MIN, TS_MAX, rng.randint(TS_MIN, TS_MAX),
                         rng.randint(-10**12, 10**12)])
        w.raw(ms.to_bytes(8, "big", signed=True))
        return ("ts", ms)
    if k == K.UUID:
        data = rng.randbytes(16)
        w.raw(data)
        return ("u", data)
    if k == K.TIMEUUID:
        tu = bytearray(rng.randbytes(16))
        tu[6] = (tu[6] & 0x0F) | 0x10
        tu[8] = (tu[8] & 0x3F) | 0x80
        w.raw(bytes(tu))
        return ("u", bytes(tu))
    if k == K.INET:
        data = rng.randbytes(rng.choice([4, 16]))
        w.raw(data)
        return ("n", data)
    if k == K.DECIMAL:
        scale = _edge_int(rng, 32)
        n = rng.choice([1, 1, 2, 5, 13, 255, 256, 261, 1700])
        un = rng.randbytes(n)
        w.raw(scale.to_bytes(4, "big", signed=True) + un)
        return _decimal_norm(scale, int.from_bytes(un, "big", signed=True), hctx)
    if k == K.DURATION:
        sign = rng.choice([1, -1])
        m = sign * rng.choice([0, 1, 12, (1 << 31) - 1, rng.randrange(1 << 31)])
        d = sign * rng.choice([0, 1, 30, rng.randrange(1 << 31)])
        ns = sign * rng.choice([0, 1, rng.randrange(1 << 63)])
        w.raw(vint_bytes(m) + vint_bytes(d) + vint_bytes(ns))
        return ("du", m, d, ns)
    if k == K.EMPTY:
        return None
    if k in (K.LIST, K.SET):
        return _gen_list(w, rng, t, budget, hctx)
    if k == K.MAP:
        return _gen_map(w, rng, t, budget, hctx)
    if k in (K.TUPLE, K.UDT):
        return _gen_fields(w, rng, t, budget, hctx)
    if k == K.VECTOR:
        return _gen_vector(w, rng, t, budget, hctx)
    if k == K.COMPOSITE:
        return _gen_composite(w, rng, t, budget, hctx)
    raise AssertionError(f"no generator for {t}")


def _element(w: Writer, rng: random.Random, t: CqlType, budget: list[int], hctx: bool,
             null_ok: bool) -> object:
    """One length-prefixed [bytes] element; None for null or an empty non-string value."""
    if null_ok and rng.random() < 0.08:
        w.i32(-1)
        return None
    at = w.begin_i32_len()
    v = _gen(w, rng, t, budget, hctx)
    w.end_i32_len(at)
    if w.buf[at:at + 4] == b"\x00\x00\x00\x00":
        return _empty_value(t)
    return v


def _empty_value(t: CqlType) -> object:
    k = t.unwrapped().kind
    if k == K.BLOB:
        return ("y", b"")
    if k in (K.TEXT, K.ASCII):
        return ("s", "")
    return None


def _count(rng: random.Random, budget: list[int]) -> int:
    n = min(rng.choice([0, 1, 2, 3, 5, 9]), max(budget[0], 0))
    budget[0] -= n
    return n


def _gen_list(w: Writer, rng: random.Random, t: CqlType, budget: list[int], hctx: bool) -> object:
    n = _count(rng, budget)
    w.i32(n)
    is_set = t.kind == K.SET
    sub = t.subtypes[0]
    items = [_element(w, rng, sub, budget, hctx or is_set, True) for _i in range(n)]
    if is_set:
        return ("S", frozenset(items))
    return ("L", tuple(items))


def _gen_map(w: Writer, rng: random.Random, t: CqlType, budget: list[int], hctx: bool) -> object:
    n = _count(rng, budget)
    w.i32(n)
    out: dict[object, object] = {}
    for _i in range(n):
        key = _element(w, rng, t.subtypes[0], budget, True, True)
        out[key] = _element(w, rng, t.subtypes[1], budget, hctx, True)
    return ("M", frozenset(out.items()))


def _gen_fields(w: Writer, rng: random.Random, t: CqlType, budget: list[int], hctx: bool) -> object:
    subs = t.subtypes
    present = len(subs)
    if rng.random() < 0.15:  # UDTs written before ALTER TYPE ... ADD, tuples written short
        present = rng.randint(1, len(subs))
    values: list[object] = []
    for s in subs[:present]:
        values.append(_element(w, rng, s, budget, hctx, True))
    values += [None] * (len(subs) - present)
    return ("R", tuple(values))


def _gen_composite(w: Writer, rng: random.Random, t: CqlType, budget: list[int],
                   hctx: bool) -> object:
    """Cassandra's CompositeType layout: [0xFFFF static marker], then per component
    an unsigned short length, the bytes and an end-of-component byte; a prefix of the
    components may be present."""
    subs = t.subtypes
    present = len(subs) if rng.random() < 0.7 else rng.randint(0, len(subs))
    if rng.random() < 0.1:
        w.raw(b"\xff\xff")
    items: list[object] = []
    for i, sub in enumerate(subs[:present]):
        inner = Writer()
        v = _gen(inner, rng, sub, budget, hctx)
        if not len(inner):
            v = _empty_value(sub)
        w.short(len(inner))
        base = len(w)
        w.raw(inner.getvalue())
        w.slots.extend(s._replace(offset=s.offset + base) for s in inner.slots)
        last = i == present - 1
        w.byte(rng.choice([0, 0, 0, 1, 0xFF]) if last or rng.random() < 0.1 else 0)
        items.append(v)
    return ("C", tuple(items))


def _gen_vector(w: Writer, rng: random.Random, t: CqlType, budget: list[int], hctx: bool) -> object:
    sub = t.subtypes[0]
    items: list[object] = []
    if sub.fixed_size >= 0:
        for _i in range(t.dimension):
            items.append(_gen(w, rng, sub, budget, hctx))
        return ("L", tuple(items))
    for _i in range(t.dimension):
        inner = Writer()
        v = _gen(inner, rng, sub, budget, hctx)
        for _attempt in range(20):  # an empty element content is ambiguous: avoid it
            if len(inner):
                break
            inner = Writer()
            v = _gen(inner, rng, sub, budget, hctx)
        w.uvint(len(inner))
        base = len(w)
        w.raw(inner.getvalue())
        w.slots.extend(s._replace(offset=s.offset + base) for s in inner.slots)
        items.append(v)
    return ("L", tuple(items))


def gen_value_bytes(rng: random.Random, t: CqlType, max_elements: int = 40) -> tuple[bytes, list[Any], object]:
    """Valid content of ``t``: (bytes, slots, expected normal-form value)."""
    w = Writer()
    v = gen_content(w, rng, t, [max_elements])
    data = w.getvalue()
    if not data:
        v = _empty_value(t)
    return data, w.slots, v


# --------------------------------------------------------------------------- reference decoder

def ref_decode(t: CqlType, data: bytes) -> Verdict:
    """What ``t.deserialize(data)`` must do."""
    ctx = Ctx(padding_left=padding_budget(len(data)))
    try:
        v = _dec(ctx, t, data, 0, len(data), False, 0)
    except Reject as exc:
        return Verdict("reject", None, str(exc))
    except RecursionError:
        return Verdict("either", None, "reference recursion limit")
    if ctx.ambiguous:
        return Verdict("either", v, "; ".join(ctx.ambiguous[:3]))
    return Verdict("accept", v)


def _dec(ctx: Ctx, t: CqlType, data: bytes, pos: int, n: int, hctx: bool, depth: int) -> object:
    t = t.unwrapped()
    k = t.kind
    if n == 0:
        return _empty_value(t)
    end = pos + n
    raw = data[pos:end]
    if k in INT_WIDTHS:
        if n != INT_WIDTHS[k]:
            raise Reject(f"{t.cql_name} of {n} bytes")
        return ("i", int.from_bytes(raw, "big", signed=True))
    if k == K.VARINT:
        return ("i", int.from_bytes(raw, "big", signed=True))
    if k == K.BOOLEAN:
        if n != 1:
            raise Reject(f"boolean of {n} bytes")
        return ("b", raw[0] != 0)  # cqlcodec: any non-zero byte is true
    if k == K.FLOAT:
        if n != 4:
            raise Reject(f"float of {n} bytes")
        return _float_norm(struct.unpack(">f", raw)[0], hctx)
    if k == K.DOUBLE:
        if n != 8:
            raise Reject(f"double of {n} bytes")
        return _float_norm(struct.unpack(">d", raw)[0], hctx)
    if k == K.TEXT:
        try:
            return ("s", raw.decode("utf-8"))
        except UnicodeDecodeError:
            raise Reject("invalid UTF-8") from None
    if k == K.ASCII:
        if any(b > 0x7F for b in raw):
            raise Reject("non-ASCII byte in ascii")
        return ("s", raw.decode("ascii"))
    if k in (K.BLOB, K.CUSTOM):
        return ("y", raw)
    if k == K.DATE:
        if n != 4:
            raise Reject(f"date of {n} bytes")
        return ("D", int.from_bytes(raw, "big") - (1 << 31))
    if k == K.TIME:
        if n != 8:
            raise Reject(f"time of {n} bytes")
        ns = int.from_bytes(raw, "big", signed=True)
        if not 0 <= ns < NANOS_PER_DAY:
            raise Reject("time outside a day")
        return ("T", ns)
    if k == K.TIMESTAMP:
        if n != 8:
            raise Reject(f"timestamp of {n} bytes")
        # cqlcodec: outside datetime's range the value is the int milliseconds
        return ("ts", int.from_bytes(raw, "big", signed=True))
    if k in (K.UUID, K.TIMEUUID):
        if n != 16:
            raise Reject(f"uuid of {n} bytes")
        return ("u", raw)  # cqlcodec does not check a timeuuid's version when decoding
    if k == K.INET:
        if n not in (4, 16):
            raise Reject(f"inet of {n} bytes")
        return ("n", raw)
    if k == K.DECIMAL:
        if n < 4:
            raise Reject(f"decimal of {n} bytes")
        if n == 4:
            raise Reject("decimal without unscaled bytes")
        scale = int.from_bytes(raw[:4], "big", signed=True)
        unscaled = int.from_bytes(raw[4:], "big", signed=True)
        _check_digits(ctx, unscaled)
        return _decimal_norm(scale, unscaled, hctx)
    if k == K.DURATION:
        r = Reader(data, pos, end)
        m, d, ns = r.vint("months"), r.vint("days"), r.vint("nanos")
        if r.remaining():
            raise Reject("bytes after duration")
        if not (-(1 << 31) <= m < 1 << 31 and -(1 << 31) <= d < 1 << 31):
            raise Reject("duration months/days outside int32")
        if not ((m >= 0 and d >= 0 and ns >= 0) or (m <= 0 and d <= 0 and ns <= 0)):
            raise Reject("duration components of mixed signs")
        return ("du", m, d, ns)
    if k == K.EMPTY:
        raise Reject("non-empty value of the empty type")
    if depth > 150:
        ctx.either("very deep value")
    if k in (K.LIST, K.SET):
        return _dec_list(ctx, t, data, pos, end, hctx, depth)
    if k == K.MAP:
        return _dec_map(ctx, t, data, pos, end, hctx, depth)
    if k in (K.TUPLE, K.UDT):
        return _dec_fields(ctx, t, data, pos, end, hctx, depth)
    if k == K.VECTOR:
        return _dec_vector(ctx, t, data, pos, end, hctx, depth)
    if k == K.COMPOSITE:
        return _dec_composite(ctx, t, data, pos, end, hctx, depth)
    raise AssertionError(f"no reference decoder for {t}")


def _check_digits(ctx: Ctx, unscaled: int) -> None:
    """Converting a huge binary integer to decimal digits is quadratic in CPython, so a codec
    may refuse decimals with more digits than int_max_str_digits (4300): either outcome is
    fine here, and test_scaling checks that whichever is chosen stays linear."""
    get_limit = getattr(sys, "get_int_max_str_digits", None)
    limit = get_limit() if get_limit is not None else 4300
    if abs(unscaled).bit_length() * LOG10_2 + 1 > min(limit or 4300, 4300):
        ctx.either("decimal with more than about int_max_str_digits digits")


def _dec_element(ctx: Ctx, r: Reader, t: CqlType, hctx: bool, depth: int) -> object:
    size = r.i32("element length")
    if size == -1:
        return None
    if size < -1:  # cqlcodec: -2 (not set) is an error inside a value
        raise Reject(f"element length {size}")
    if size > r.remaining():
        raise Reject("element longer than the data")
    start = r.pos
    r.pos += size
    return _dec(ctx, t, r.data, start, size, hctx, depth + 1)


def _dec_count(r: Reader, per_item: int) -> int:
    count = r.i32("count")
    if count < 0:
        raise Reject(f"negative count {count}")
    if count * per_item > r.remaining():
        raise Reject(f"count {count} larger than the data can hold")
    return count


def _dec_list(ctx: Ctx, t: CqlType, data: bytes, pos: int, end: int, hctx: bool, depth: int) -> object:
    r = Reader(data, pos, end)
    count = _dec_count(r, 4)
    is_set = t.kind == K.SET
    items = [_dec_element(ctx, r, t.subtypes[0], hctx or is_set, depth) for _i in range(count)]
    if r.remaining():
        raise Reject("bytes after the last element")
    if is_set:
        return ("S", frozenset(items))
    return ("L", tuple(items))


def _dec_map(ctx: Ctx, t: CqlType, data: bytes, pos: int, end: int, hctx: bool, depth: int) -> object:
    r = Reader(data, pos, end)
    count = _dec_count(r, 8)
    out: dict[object, object] = {}
    for _i in range(count):
        key = _dec_element(ctx, r, t.subtypes[0], True, depth)
        out[key] = _dec_element(ctx, r, t.subtypes[1], hctx, depth)
    if r.remaining():
        raise Reject("bytes after the last entry")
    return ("M", frozenset(out.items()))


def _dec_fields(ctx: Ctx, t: CqlType, data: bytes, pos: int, end: int, hctx: bool, depth: int) -> object:
    r = Reader(data, pos, end)
    values: list[object] = []
    for s in t.subtypes:
        if not r.remaining():
            break
        values.append(_dec_element(ctx, r, s, hctx, depth))
    if r.remaining():
        raise Reject("bytes after the last field")
    missing = len(t.subtypes) - len(values)
    ctx.padding_left -= missing
    if ctx.padding_left < 0:
        raise Reject(f"{missing} missing fields exceed the message's padding budget")
    values += [None] * missing
    return ("R", tuple(values))


def _dec_composite(ctx: Ctx, t: CqlType, data: bytes, pos: int, end: int, hctx: bool,
                   depth: int) -> object:
    r = Reader(data, pos, end)
    if end - pos >= 2 and data[pos:pos + 2] == b"\xff\xff":
        r.pos += 2  # Cassandra's static marker
    items: list[object] = []
    while r.remaining():
        if len(items) == len(t.subtypes):
            raise Reject("more components than the composite type has")
        size = r.short("component length")
        if size + 1 > r.remaining():
            raise Reject("component and its end-of-component byte beyond the data")
        start = r.pos
        r.pos += size + 1  # any end-of-component byte
        items.append(_dec(ctx, t.subtypes[len(items)], data, start, size, hctx, depth + 1))
    return ("C", tuple(items))


def _dec_vector(ctx: Ctx, t: CqlType, data: bytes, pos: int, end: int, hctx: bool, depth: int) -> object:
    sub = t.subtypes[0]
    dim = t.dimension
    size = sub.fixed_size
    if size >= 0:
        if size == 0 or end - pos != dim * size:
            raise Reject(f"fixed vector of {end - pos} bytes, needs {dim * size}")
        return ("L", tuple(_dec(ctx, sub, data, pos + i * size, size, hctx, depth + 1)
                           for i in range(dim)))
    r = Reader(data, pos, end)
    items: list[object] = []
    for _i in range(dim):
        if not r.remaining():
            raise Reject("vector ends early")
        n = r.uvint("vector element length")
        if n > r.remaining():
            raise Reject("vector element longer than the data")
        start = r.pos
        r.pos += n
        if n == 0:
            ctx.either("empty vector element")
        items.append(_dec(ctx, sub, data, start, n, hctx, depth + 1))
    if r.remaining():
        raise Reject("bytes after the last vector element")
    return ("L", tuple(items))


# --------------------------------------------------------------------------- normalize cqlcodec's values

def normalize(t: CqlType, v: object, hctx: bool = False) -> object:
    """The normal form of a value cqlcodec decoded as ``t``; NormError if it has the wrong shape."""
    if v is None:
        return None
    t = t.unwrapped()
    k = t.kind
    if k in INT_WIDTHS or k == K.VARINT:
        if type(v) is not int:
            raise NormError(f"{t.cql_name} decoded to {type(v).__name__}, expected int")
        return ("i", v)
    if k == K.BOOLEAN:
        if type(v) is not bool:
            raise NormError(f"boolean decoded to {type(v).__name__}")
        return ("b", v)
    if k in (K.FLOAT, K.DOUBLE):
        if type(v) is not float:
            if type(v).__module__ == "numpy":
                return _float_norm(float(v), hctx)  # type: ignore[arg-type]
            raise NormError(f"{t.cql_name} decoded to {type(v).__name__}")
        return _float_norm(v, hctx)
    if k in (K.TEXT, K.ASCII):
        if type(v) is not str:
            raise NormError(f"{t.cql_name} decoded to {type(v).__name__}")
        return ("s", v)
    if k in (K.BLOB, K.CUSTOM):
        if type(v) is not bytes:
            raise NormError(f"{t.cql_name} decoded to {type(v).__name__}")
        return ("y", v)
    if k == K.DATE:
        return ("D", _date_days(v))
    if k == K.TIME:
        return ("T", _time_nanos(v))
    if k == K.TIMESTAMP:
        return ("ts", _timestamp_millis(v))
    if k in (K.UUID, K.TIMEUUID):
        if not isinstance(v, uuid.UUID):
            raise NormError(f"{t.cql_name} decoded to {type(v).__name__}")
        return ("u", v.bytes)
    if k == K.INET:
        if type(v) is not str:
            raise NormError(f"inet decoded to {type(v).__name__}")
        try:
            return ("n", ipaddress.ip_address(v).packed)
        except ValueError:
            raise NormError(f"inet decoded to the non-address {v!r}") from None
    if k == K.DECIMAL:
        if not isinstance(v, decimal.Decimal) or not v.is_finite():
            raise NormError(f"decimal decoded to {v!r}")
        sign, digits, exp = v.as_tuple()
        assert isinstance(exp, int)
        unscaled = int("".join(map(str, digits)) or "0")
        return _decimal_norm(-exp, -unscaled if sign else unscaled, hctx)
    if k == K.DURATION:
        try:
            return ("du", getattr(v, "months"), getattr(v, "days"), getattr(v, "nanoseconds"))
        except AttributeError:
            raise NormError(f"duration decoded to {type(v).__name__}") from None
    if k in (K.LIST, K.VECTOR):
        if hasattr(v, "tolist") and type(v).__module__ == "numpy":
            v = v.tolist()
        if not isinstance(v, (list, tuple)) or (hctx and not isinstance(v, tuple)):
            raise NormError(f"{t.cql_name} decoded to {type(v).__name__}")
        if k == K.VECTOR and len(v) != t.dimension:
            raise NormError(f"{t.cql_name} decoded to {len(v)} items")
        return ("L", tuple(normalize(t.subtypes[0], x, hctx) for x in v))
    if k == K.SET:
        if not isinstance(v, (set, frozenset)) or (hctx and not isinstance(v, frozenset)):
            raise NormError(f"set decoded to {type(v).__name__}")
        return ("S", frozenset(normalize(t.subtypes[0], x, True) for x in v))
    if k == K.MAP:
        if not isinstance(v, Mapping):
            raise NormError(f"map decoded to {type(v).__name__}")
        if hctx:
            hash(v)
        out: dict[object, object] = {}
        for key, val in v.items():
            out[normalize(t.subtypes[0], key, True)] = normalize(t.subtypes[1], val, hctx)
        return ("M", frozenset(out.items()))
    if k in (K.TUPLE, K.UDT):
        items = _field_values(t, v)
        if hctx:
            hash(v)
        return ("R", tuple(normalize(s, x, hctx) for s, x in zip(t.subtypes, items)))
    if k == K.COMPOSITE:
        if type(v) is not tuple or len(v) > len(t.subtypes):
            raise NormError(f"{t.cql_name} decoded to {v!r}")
        if hctx:
            hash(v)
        return ("C", tuple(normalize(s, x, hctx) for s, x in zip(t.subtypes, v)))
    raise NormError(f"no normal form for {t.cql_name}")


def _field_values(t: CqlType, v: object) -> list[object]:
    n = len(t.subtypes)
    if t.kind == K.TUPLE:
        if not isinstance(v, tuple):
            raise NormError(f"tuple decoded to {type(v).__name__}")
        items = list(v)
    else:
        try:
            items = [v[i] for i in range(n)]  # type: ignore[index]
            by_name = [getattr(v, name) for name in t.field_names if name.isidentifier()]
        except (TypeError, IndexError, AttributeError) as exc:
            raise NormError(f"UDT value {type(v).__name__} lacks index/attribute access: {exc}") from None
        named = [items[i] for i, name in enumerate(t.field_names) if name.isidentifier()]
        if any(a is not b for a, b in zip(named, by_name)):
            raise NormError("UDT attribute and index access disagree")
    if len(items) != n:
        raise NormError(f"{t.cql_name} decoded to {len(items)} fields, expected {n}")
    return items


def _date_days(v: object) -> int:
    if type(v) is datetime.date:
        return (v - _EPOCH_DATE).days
    days = getattr(v, "days_from_epoch", None)
    if days is None:
        days = getattr(v, "days", None)
    if type(v).__module__.startswith("cqlcodec") and isinstance(days, int):
        return days
    raise NormError(f"date decoded to {type(v).__name__}")


def _time_nanos(v: object) -> int:
    for attr in ("nanoseconds", "nanosecond_time", "ns"):
        ns = getattr(v, attr, None)
        if isinstance(ns, int) and type(v).__module__.startswith("cqlcodec"):
            return ns
    raise NormError(f"time decoded to {type(v).__name__}")


def _timestamp_millis(v: object) -> int:
    if type(v) is int and not TS_MIN <= v <= TS_MAX:
        return v  # cqlcodec's documented form outside datetime's range
    if not isinstance(v, datetime.datetime):
        raise NormError(f"timestamp decoded to {type(v).__name__}")
    if v.tzinfo is not None:
        off = v.utcoffset()
        v = v.replace(tzinfo=None) - (off if off is not None else datetime.timedelta(0))
    delta = v - _EPOCH
    us = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    if us % 1000:
        raise NormError(f"timestamp with sub-millisecond part {v!r}")
    return us // 1000


def same(expected: object, actual: object) -> bool:
    """Normal forms compare with ==, which already treats NaN bit patterns as equal strings."""
    return expected == actual


__all__ = ["Verdict", "NormError", "random_type", "gen_value_bytes", "ref_decode", "normalize",
           "constructor_expr", "eval_type", "java_name", "write_option", "read_option_ref",
           "wire_type", "cqlcodec"]
