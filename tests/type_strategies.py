"""Test-side generators of CqlType trees and of their text and binary spellings.

The spellings here are written independently of cqlcodec's parser: a Java
marshal class name writer, a binary ``[option]`` writer, and a structural
"tree" description that matches ``oracle._type_tree`` for the driver.
"""

from __future__ import annotations

import random
import string

from hypothesis import strategies as st

from cqlcodec import (
    CqlType,
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

PREFIX = "org.apache.cassandra.db.marshal."

JAVA_SCALAR_NAMES: dict[int, str] = {
    kinds.ASCII: "AsciiType",
    kinds.BIGINT: "LongType",
    kinds.BLOB: "BytesType",
    kinds.BOOLEAN: "BooleanType",
    kinds.COUNTER: "CounterColumnType",
    kinds.DECIMAL: "DecimalType",
    kinds.DOUBLE: "DoubleType",
    kinds.FLOAT: "FloatType",
    kinds.INT: "Int32Type",
    kinds.TEXT: "UTF8Type",
    kinds.TIMESTAMP: "TimestampType",
    kinds.UUID: "UUIDType",
    kinds.VARINT: "IntegerType",
    kinds.TIMEUUID: "TimeUUIDType",
    kinds.INET: "InetAddressType",
    kinds.DATE: "SimpleDateType",
    kinds.TIME: "TimeType",
    kinds.SMALLINT: "ShortType",
    kinds.TINYINT: "ByteType",
    kinds.DURATION: "DurationType",
    kinds.EMPTY: "EmptyType",
}

SCALAR_KINDS: list[int] = sorted(k for k in JAVA_SCALAR_NAMES if k != kinds.EMPTY)
FREEZABLE = {kinds.LIST, kinds.SET, kinds.MAP, kinds.TUPLE, kinds.UDT, kinds.VECTOR}

# UDT and field names: plain, keyword-like, mixed case, quotes, spaces, unicode, digits only
_NAME_ALPHABET = string.ascii_letters + string.digits + '_ "\'.<>,é中'
names = st.one_of(
    st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True),
    st.sampled_from(["int", "list", "text", "varchar", "vector", "frozen", "Address",
                     "6164", "1234", "a b", 'q"uote', "x.y", "ünï"]),
    st.text(_NAME_ALPHABET, min_size=1, max_size=8),
)
keyspaces = st.from_regex(r"[a-zA-Z][a-zA-Z0-9_]{0,8}", fullmatch=True)
custom_names = st.from_regex(r"com\.example\.[A-Z][A-Za-z0-9]{0,10}", fullmatch=True)


def _udt(parts: tuple[str, str, list[tuple[str, CqlType]]]) -> CqlType:
    return user_type(parts[0], parts[1], parts[2])


def _tuple(items: list[CqlType]) -> CqlType:
    return tuple_of(*items)


def _map(kv: tuple[CqlType, CqlType]) -> CqlType:
    return map_of(kv[0], kv[1])


def _vector(args: tuple[CqlType, int]) -> CqlType:
    return vector_of(args[0], args[1])


def type_trees(*, keyspace: st.SearchStrategy[str] = keyspaces, with_frozen: bool = True,
               with_reversed: bool = False, with_custom: bool = True,
               max_leaves: int = 12) -> st.SearchStrategy[CqlType]:
    """Random CqlType trees built with the public constructors."""
    leaf_list = [st.sampled_from([scalar_type(k) for k in SCALAR_KINDS])]
    if with_custom:
        leaf_list.append(custom_names.map(custom_type))
        leaf_list.append(st.just(scalar_type(kinds.EMPTY)))
    leaves = st.one_of(*leaf_list)

    def extend(children: st.SearchStrategy[CqlType]) -> st.SearchStrategy[CqlType]:
        fields = st.lists(st.tuples(names, children), max_size=4, unique_by=lambda f: f[0])
        containers = st.one_of(
            children.map(list_of),
            children.map(set_of),
            st.tuples(children, children).map(_map),
            st.lists(children, min_size=1, max_size=4).map(_tuple),
            st.tuples(keyspace, names, fields).map(_udt),
            st.tuples(children, st.integers(1, 4096)).map(_vector),
        )
        options = [containers]
        if with_frozen:
            options.append(containers.map(frozen))
        if with_reversed:
            options.append(children.map(reversed_type))
        return st.one_of(*options)

    return st.recursive(leaves, extend, max_leaves=max_leaves)


def user_types_in(t: CqlType) -> list[CqlType]:
    """Every user-defined type inside ``t`` (``t`` included), outermost first."""
    found: list[CqlType] = []
    stack = [t]
    while stack:
        cur = stack.pop()
        if cur.kind == kinds.UDT:
            found.append(cur)
        stack.extend(cur.subtypes)
    return found


def udt_registry(t: CqlType) -> dict[str, CqlType] | None:
    """A ``user_types`` mapping (name -> type) for the UDTs of ``t``; None if names clash."""
    registry: dict[str, CqlType] = {}
    for udt in user_types_in(t):
        if registry.setdefault(udt.name, udt) != udt:
            return None
    return registry


def java_name(t: CqlType, rnd: random.Random | None = None) -> str:
    """A Java marshal class name of ``t``; ``rnd`` varies prefixes, spacing and separators."""
    def prefix() -> str:
        return PREFIX if rnd is None or rnd.random() < 0.5 else ""

    def comma() -> str:
        return "," if rnd is None else rnd.choice([",", ", ", " , "])

    kind = t.kind
    if kind in JAVA_SCALAR_NAMES:
        if kind == kinds.TIMESTAMP and rnd is not None and rnd.random() < 0.3:
            return prefix() + "DateType"
        return prefix() + JAVA_SCALAR_NAMES[kind]
    if kind == kinds.CUSTOM:
        return t.name
    subs = [java_name(s, rnd) for s in t.subtypes]
    wrappers = {kinds.LIST: "ListType", kinds.SET: "SetType", kinds.MAP: "MapType",
                kinds.TUPLE: "TupleType", kinds.FROZEN: "FrozenType",
                kinds.REVERSED: "ReversedType"}
    if kind in wrappers:
        return f"{prefix()}{wrappers[kind]}({comma().join(subs)})"
    if kind == kinds.VECTOR:
        return f"{prefix()}VectorType({subs[0]}{comma()}{t.dimension})"
    assert kind == kinds.UDT, t
    parts = [t.keyspace, t.name.encode().hex()]
    for (field, _ftype), sub in zip(t.fields, subs):
        sep = ":" if rnd is None or rnd.random() < 0.7 else "=>"
        parts.append(f"{field.encode().hex()}{sep}{sub}")
    return f"{prefix()}UserType({comma().join(parts)})"


def _string(text: str) -> bytes:
    data = text.encode()
    return len(data).to_bytes(2, "big") + data


def option_bytes(t: CqlType) -> tuple[bytes, CqlType]:
    """The binary [option] of ``t`` and the type reading it must give back.

    frozen<> has no binary form (it is dropped); vectors, reversed, empty and custom
    types travel as custom 0x0000 with their Java class name.
    """
    kind = t.kind
    if kind == kinds.FROZEN:
        return option_bytes(t.subtypes[0])
    if kind in kinds.SCALAR_NAMES and kind != kinds.EMPTY:
        return kind.to_bytes(2, "big"), t
    if kind in (kinds.LIST, kinds.SET, kinds.MAP, kinds.TUPLE, kinds.UDT):
        encoded = [option_bytes(s) for s in t.subtypes]
        body = b"".join(e[0] for e in encoded)
        inner = [e[1] for e in encoded]
        head = kind.to_bytes(2, "big")
        if kind == kinds.LIST:
            return head + body, list_of(inner[0])
        if kind == kinds.SET:
            return head + body, set_of(inner[0])
        if kind == kinds.MAP:
            return head + body, map_of(inner[0], inner[1])
        count = len(inner).to_bytes(2, "big")
        if kind == kinds.TUPLE:
            return head + count + body, tuple_of(*inner)
        fields = b"".join(_string(f) + e[0] for f, e in zip(t.field_names, encoded))
        return (head + _string(t.keyspace) + _string(t.name) + count + fields,
                user_type(t.keyspace, t.name, list(zip(t.field_names, inner))))
    return b"\x00\x00" + _string(java_name(t)), t


def tree(t: CqlType) -> object:
    """``t`` as the nested tuples of ``oracle._type_tree`` (empty is a custom class there)."""
    kind = t.kind
    subs = t.subtypes
    if kind == kinds.EMPTY:
        return ("custom", t.name)
    if kind in kinds.SCALAR_NAMES:
        return ("scalar", t.cql_name)
    if kind == kinds.CUSTOM:
        return ("custom", t.name)
    labels = {kinds.LIST: "list", kinds.SET: "set", kinds.FROZEN: "frozen",
              kinds.REVERSED: "reversed"}
    if kind in labels:
        return (labels[kind], tree(subs[0]))
    if kind == kinds.MAP:
        return ("map", tree(subs[0]), tree(subs[1]))
    if kind == kinds.TUPLE:
        return ("tuple", tuple(tree(s) for s in subs))
    if kind == kinds.VECTOR:
        return ("vector", tree(subs[0]), t.dimension)
    return ("udt", t.keyspace, t.name, tuple((f, tree(s)) for f, s in t.fields))


def without_reversed(t: CqlType) -> CqlType:
    """``t`` with every ReversedType wrapper removed (CQL text cannot spell them)."""
    if t.kind == kinds.REVERSED:
        return without_reversed(t.subtypes[0])
    if not t.subtypes:
        return t
    subs = tuple(without_reversed(s) for s in t.subtypes)
    return _types.make_type(t.kind, subs, t.dimension, t.keyspace, t.name, t.field_names)
