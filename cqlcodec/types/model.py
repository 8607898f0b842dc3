"""CqlType: the immutable, hashable, interned description of a CQL type."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Callable, Final

from cqlcodec import kinds as K
from cqlcodec.errors import DecodeError, UnsupportedTypeError
from cqlcodec.runtime.padding import begin_message
from cqlcodec.runtime.wire import check_protocol_version, wrong_type

if TYPE_CHECKING:  # the codecs layer sits above this one; see register_codec_builder
    from cqlcodec.codecs.base import Codec

_INTERN_LIMIT: Final = 4096
MAX_TYPE_DEPTH: Final = 128
"""The deepest type tree that can be built, parsed or read from metadata (a scalar is one
level, ``list<int>`` two)."""

JAVA_PREFIX: Final = "org.apache.cassandra.db.marshal."
"""The package of Cassandra's marshal classes."""
_intern: dict[tuple[object, ...], CqlType] = {}
# the scalar types, kept out of the eviction so there is one object per scalar kind
_pinned: dict[tuple[object, ...], CqlType] = {}
_intern_lock: Final = threading.Lock()

_IDENT_CHARS: Final = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_")

CQL_TYPE_KEYWORDS: Final = frozenset([
    "ascii", "bigint", "blob", "boolean", "counter", "date", "decimal", "double", "duration",
    "float", "inet", "int", "smallint", "text", "time", "timestamp", "timeuuid", "tinyint",
    "uuid", "varchar", "varint", "list", "set", "map", "tuple", "frozen", "vector",
])
"""Words that name a type in CQL text; a user type with such a name must be quoted."""


def quote_identifier(name: str) -> str:
    """CQL text for an identifier: bare if lower-case [a-z][a-z0-9_]*, else double-quoted.

    Type keywords (``int``, ``list``, ...) are quoted too, so the text parses back
    to the same identifier rather than to the built-in type.
    """
    if (name and "a" <= name[0] <= "z" and all(ch in _IDENT_CHARS for ch in name)
            and name not in CQL_TYPE_KEYWORDS):
        return name
    return '"' + name.replace('"', '""') + '"'


class CqlType:
    """An immutable CQL type: its kind, parameters and canonical CQL name.

    Obtain instances from :func:`cqlcodec.parse_type`, :func:`cqlcodec.read_type_option`
    or the constructors in this module; equal types compare and hash equal, and
    the same description usually returns the very same object (bounded interning).
    """

    def __init__(self, kind: int, cql_name: str, subtypes: tuple[CqlType, ...],
                 dimension: int, keyspace: str, name: str,
                 field_names: tuple[str, ...], key: tuple[object, ...]) -> None:
        # Final: read-only at run time in the compiled build (and early-bound)
        self._kind: Final = kind
        self._cql_name: Final = cql_name
        self._subtypes: Final = subtypes
        self._dimension: Final = dimension
        self._keyspace: Final = keyspace
        self._name: Final = name
        self._field_names: Final = field_names
        self._key: Final = key
        self._hash: Final = hash(key)
        depth = 0
        for sub in subtypes:
            if sub._depth > depth:
                depth = sub._depth
        self._depth: Final[int] = depth + 1
        self._codec: Codec | None = None
        self._variants: dict[int, Codec] = {}

    @property
    def kind(self) -> int:
        """Kind code: the [option] id for scalars and collections (see ``cqlcodec.kinds``)."""
        return self._kind

    @property
    def cql_name(self) -> str:
        """Canonical CQL text, e.g. ``map<text, frozen<list<int>>>``."""
        return self._cql_name

    @property
    def subtypes(self) -> tuple[CqlType, ...]:
        """Parameter types: element, key and value, tuple items, UDT field types, wrapped type."""
        return self._subtypes

    @property
    def dimension(self) -> int:
        """The dimension of a vector type, else 0."""
        return self._dimension

    @property
    def keyspace(self) -> str:
        """The keyspace of a user-defined type ('' if unknown or not a UDT)."""
        return self._keyspace

    @property
    def name(self) -> str:
        """The name of a user-defined type, or the class name of a custom type, else ''."""
        return self._name

    @property
    def field_names(self) -> tuple[str, ...]:
        """The field names of a user-defined type (empty when known only by name)."""
        return self._field_names

    @property
    def fields(self) -> tuple[tuple[str, CqlType], ...]:
        """(field name, field type) pairs of a user-defined type."""
        return tuple(zip(self._field_names, self._subtypes))

    @property
    def fixed_size(self) -> int:
        """Width in bytes of every value if Cassandra treats the type as fixed-size, else -1."""
        kind = self._kind
        if kind == K.FROZEN or kind == K.REVERSED:
            return self._subtypes[0].fixed_size
        if kind == K.VECTOR:
            sub = self._subtypes[0].fixed_size
            return -1 if sub < 0 else sub * self._dimension
        return K.FIXED_SIZES.get(kind, -1)

    def unwrapped(self) -> CqlType:
        """This type without frozen<>/reversed wrappers (same bytes on the wire)."""
        t = self
        while t._kind == K.FROZEN or t._kind == K.REVERSED:
            t = t._subtypes[0]
        return t

    def codec(self, flags: int = 0) -> Codec:
        """The codec of this type for the given decode flags (built once, then reused)."""
        if flags == 0:
            c = self._codec
            if c is None:
                c = _build(self, 0)
                self._codec = c
            return c
        found = self._variants.get(flags)
        if found is None:
            found = _build(self, flags)
            self._variants[flags] = found
        return found

    def serialize(self, value: object, protocol_version: int = 4) -> bytes:
        """Encode ``value`` to the content bytes of this type (no length prefix).

        Raises EncodeError (a TypeError or ValueError) for values that do not fit.
        """
        if protocol_version != 4:
            check_protocol_version(protocol_version)
        if value is None:
            raise wrong_type(self._cql_name, value,
                             "a value (null is sent as length -1, not as content)")
        c = self._codec
        if c is None:
            c = self.codec()
        return c.encode(value)

    def deserialize(self, data: bytes | bytearray | memoryview, protocol_version: int = 4, *,
                    tz_aware: bool = False, numpy: bool = False) -> object:
        """Decode the content bytes of one value of this type.

        ``tz_aware`` returns timestamps as aware UTC datetimes; ``numpy`` returns
        numeric vectors as numpy arrays. Raises DecodeError for malformed bytes.
        """
        if protocol_version != 4:
            check_protocol_version(protocol_version)
        if isinstance(data, bytes):
            buf = data
        elif isinstance(data, (bytearray, memoryview)):
            buf = bytes(data)
        else:
            raise DecodeError(
                f"cannot decode {type(data).__name__} as {self._cql_name}: expected bytes",
                self._cql_name, 0)
        flags = 0
        if tz_aware:
            flags |= 1
        if numpy:
            flags |= 2
        begin_message(len(buf))
        return self.codec(flags).decode(buf, 0, len(buf))

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, CqlType):
            return NotImplemented
        return self._hash == other._hash and self._key == other._key

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return f"CqlType({self._cql_name!r})"

    def __str__(self) -> str:
        return self._cql_name

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        return (_rebuild, (self._kind, self._subtypes, self._dimension, self._keyspace,
                           self._name, self._field_names))


_codec_builders: Final[list[Callable[[CqlType, int], Codec]]] = []


def register_codec_builder(builder: Callable[[CqlType, int], Codec]) -> None:
    """Install the function that builds a type's codec (``cqlcodec.codecs.builder`` does).

    Types describe; codecs implement. The codecs layer imports this one, never the
    reverse, so it registers its builder here when it is imported (importing
    ``cqlcodec`` imports it).
    """
    _codec_builders[:] = [builder]


def _build(t: CqlType, flags: int) -> Codec:
    if not _codec_builders:
        raise RuntimeError("no codec builder is registered: import cqlcodec first")
    return _codec_builders[0](t, flags)


def _cql_name(kind: int, subtypes: tuple[CqlType, ...], dimension: int, keyspace: str,
              name: str) -> str:
    if kind in K.SCALAR_NAMES and kind != K.EMPTY:
        return K.SCALAR_NAMES[kind]
    inner = ", ".join([s.cql_name for s in subtypes])
    if kind == K.LIST:
        return f"list<{inner}>"
    if kind == K.SET:
        return f"set<{inner}>"
    if kind == K.MAP:
        return f"map<{inner}>"
    if kind == K.TUPLE:
        return f"tuple<{inner}>"
    if kind == K.VECTOR:
        return f"vector<{inner}, {dimension}>"
    if kind == K.FROZEN:
        return f"frozen<{inner}>"
    if kind == K.REVERSED:
        return subtypes[0].cql_name
    if kind == K.UDT:
        return quote_identifier(name)
    # custom (and empty): CQL's quoted class-name syntax
    return "'" + name.replace("'", "''") + "'"


def make_type(kind: int, subtypes: tuple[CqlType, ...] = (), dimension: int = 0,
              keyspace: str = "", name: str = "",
              field_names: tuple[str, ...] = ()) -> CqlType:
    """The interned CqlType for a description (no validation: use the typed constructors)."""
    key: tuple[object, ...] = (kind, subtypes, dimension, keyspace, name, field_names)
    found = _intern.get(key)
    if found is not None:
        return found
    found = _pinned.get(key)
    if found is not None:
        return found
    for sub in subtypes:
        if sub._depth >= MAX_TYPE_DEPTH:
            raise UnsupportedTypeError(
                f"type nesting deeper than {MAX_TYPE_DEPTH} levels is not supported")
    t = CqlType(kind, _cql_name(kind, subtypes, dimension, keyspace, name), subtypes,
                dimension, keyspace, name, field_names, key)
    with _intern_lock:
        existing = _intern.get(key)
        if existing is not None:
            return existing
        if len(_intern) >= _INTERN_LIMIT:
            # drop the oldest eighth; interning is an optimisation, equality is structural
            for old in list(_intern)[: _INTERN_LIMIT // 8]:
                del _intern[old]
        _intern[key] = t
    return t


def interned_count() -> int:
    """How many types the intern table holds now (bounded)."""
    return len(_intern)


def _rebuild(kind: int, subtypes: tuple[CqlType, ...], dimension: int, keyspace: str,
             name: str, field_names: tuple[str, ...]) -> CqlType:
    return make_type(kind, subtypes, dimension, keyspace, name, field_names)


def scalar_type(kind: int) -> CqlType:
    """The type of a scalar kind (``cqlcodec.kinds.INT`` etc.)."""
    if kind not in K.SCALAR_NAMES:
        raise ValueError(f"not a scalar kind: {kind:#06x}")
    if kind == K.EMPTY:
        return make_type(K.EMPTY, name="org.apache.cassandra.db.marshal.EmptyType")
    return make_type(kind)


def list_of(element: CqlType) -> CqlType:
    """``list<element>``."""
    return make_type(K.LIST, (element,))


def set_of(element: CqlType) -> CqlType:
    """``set<element>``."""
    return make_type(K.SET, (element,))


def map_of(key: CqlType, value: CqlType) -> CqlType:
    """``map<key, value>``."""
    return make_type(K.MAP, (key, value))


def tuple_of(*items: CqlType) -> CqlType:
    """``tuple<items...>`` (at least one item)."""
    if not items:
        raise ValueError("a tuple type needs at least one item type")
    return make_type(K.TUPLE, tuple(items))


def vector_of(element: CqlType, dimension: int) -> CqlType:
    """``vector<element, dimension>`` (1 <= dimension <= 2**31 - 1, a Java int as in Cassandra)."""
    if dimension < 1 or dimension > 0x7FFFFFFF:
        raise ValueError(f"vector dimension must be from 1 to 2147483647, got {dimension}")
    return make_type(K.VECTOR, (element,), dimension)


def frozen(inner: CqlType) -> CqlType:
    """``frozen<inner>``: the same bytes as ``inner``; kept for the schema meaning."""
    return make_type(K.FROZEN, (inner,))


def reversed_type(inner: CqlType) -> CqlType:
    """Java ``ReversedType(inner)`` (descending clustering order): same bytes as ``inner``."""
    return make_type(K.REVERSED, (inner,))


def user_type(keyspace: str, name: str,
              fields: tuple[tuple[str, CqlType], ...] | list[tuple[str, CqlType]]) -> CqlType:
    """A user-defined type with its fields; ``fields=()`` makes a name-only reference."""
    names = tuple([f[0] for f in fields])
    if len(set(names)) != len(names):
        raise ValueError(f"user type {name!r} has duplicate field names: {names!r}")
    return make_type(K.UDT, tuple([f[1] for f in fields]), 0, keyspace, name, names)


def custom_type(class_name: str) -> CqlType:
    """A custom type known only by its Java class name; its values are raw bytes."""
    return make_type(K.CUSTOM, (), 0, "", class_name)


def composite_type(*components: CqlType) -> CqlType:
    """Java ``CompositeType(components...)`` (at least one): values decode to a tuple of
    the components they carry, a prefix of ``components``."""
    if not components:
        raise ValueError("a composite type needs at least one component type")
    name = JAVA_PREFIX + "CompositeType(" + ",".join([java_name(c) for c in components]) + ")"
    return make_type(K.COMPOSITE, tuple(components), 0, "", name)


_JAVA_WRAPPERS: Final[dict[int, str]] = {
    K.LIST: "ListType", K.SET: "SetType", K.MAP: "MapType", K.TUPLE: "TupleType",
    K.FROZEN: "FrozenType", K.REVERSED: "ReversedType", K.VECTOR: "VectorType",
}


def java_name(t: CqlType) -> str:
    """The Java marshal class name of ``t``, fully qualified and without spaces, as
    Cassandra writes it in schema tables and custom ``[option]``s.

    Custom types give their class name as they were made; a user type needs its
    keyspace to be spelled this way.
    """
    kind = t.kind
    scalar = K.JAVA_SCALAR_NAMES.get(kind)
    if scalar is not None:
        return JAVA_PREFIX + scalar
    if kind == K.CUSTOM or kind == K.COMPOSITE:
        return t.name
    subs = t.subtypes
    if kind == K.UDT:
        parts = [t.keyspace, t.name.encode("utf-8").hex()]
        for field, sub in zip(t.field_names, subs):
            parts.append(field.encode("utf-8").hex() + ":" + java_name(sub))
        return JAVA_PREFIX + "UserType(" + ",".join(parts) + ")"
    inner = ",".join([java_name(sub) for sub in subs])
    if kind == K.VECTOR:
        inner += "," + str(t.dimension)
    return JAVA_PREFIX + _JAVA_WRAPPERS[kind] + "(" + inner + ")"


def _pin_scalars() -> None:
    for kind in K.SCALAR_NAMES:
        t = scalar_type(kind)
        _pinned[t._key] = t


_pin_scalars()
