"""Codecs of the composite CQL types: list, set, map, tuple and user-defined types.

Wire format (protocol v3-v5; cqlcodec does not speak v1/v2):

* list/set: ``[int] n`` then n elements, each a ``[bytes]`` (``[int]`` length,
  -1 = null); map: ``[int] n`` then n (key, value) pairs of ``[bytes]``.
* tuple and UDT: one ``[bytes]`` per field, no count. A value may carry fewer
  fields than its type (UDT values written before ``ALTER TYPE ... ADD``; tuples
  that a driver or a CQL literal wrote short, which Cassandra stores as they are);
  the missing trailing fields decode as null.

Decisions where the drivers disagree or are lax (spec sections 3.2-3.5 and 11):

* ``None`` elements, keys, values and fields encode as null (length -1) and
  decode as ``None``; any other negative element length (including -2,
  "not set") is a DecodeError. A count that cannot fit in the remaining bytes is
  refused before anything is allocated; truncation and trailing bytes are
  DecodeErrors naming the type and the absolute byte offset.
* Encoding accepts any iterable except str/bytes-like objects and mappings for
  list and set, a Mapping or an iterable of (key, value) pairs for map, any
  sequence for tuple (fewer items than components encode a short value, as the
  drivers and CQL literals do: Cassandra keeps it short, so padding it would make
  a different primary key; more items are an EncodeValueError), and for
  a UDT a Mapping by field name (missing keys are null, unknown keys an
  EncodeValueError naming them), a namedtuple-like tuple with ``_fields`` (by
  name, same rules), a plain tuple/list/sequence (by position, padded with
  nulls), or any other object by attribute (missing attributes are null; an
  object with none of the fields is an EncodeTypeError).
* Decoded values: list -> ``list``, set -> ``set``, map -> ``dict`` (wire order),
  tuple -> ``tuple``, UDT -> the type's :class:`cqlcodec.containers.UdtValue`
  subclass. With FLAG_HASHABLE (set elements, map keys) lists decode to tuples,
  sets to frozensets and maps to :class:`cqlcodec.FrozenMap`. A UDT known only
  by name (no fields) raises UnsupportedTypeError on encode and decode.
* Hostile input stays linear and small: a set or map of a type whose hashes
  whoever wrote the bytes can choose (uuid, varint, decimal, tuples, ...) may
  not have more than ``HASH_GROUP_LIMIT`` elements/keys sharing one hash value
  (builtin set/dict insertion is quadratic in such a group). A tuple or UDT value
  may lack any number of trailing fields; what one message may pad in all is
  bounded by :mod:`cqlcodec.runtime.padding` (far above what a server stores), so
  metadata declaring thousands of fields cannot turn each small cell of a page into
  a huge value.
* Nesting: types are at most ``MAX_TYPE_DEPTH`` levels deep (enforced when
  they are made); as a backstop every composite codec records its depth when it
  is built and refuses deeper nesting (UnsupportedTypeError), so decoding and
  encoding recursion stays far from the C stack limit in the compiled build.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from mypy_extensions import i64

from cqlcodec.codecs.base import FLAG_HASHABLE, Codec
from cqlcodec.containers import FrozenMap, UdtValue, udt_class
from cqlcodec.errors import DecodeError, UnsupportedTypeError
from cqlcodec.runtime.buffers import BytesWriter, read_i32_be, write_i32_be
from cqlcodec.runtime.build import COMPILED
from cqlcodec.runtime.padding import spend_padding
from cqlcodec.runtime.wire import malformed, out_of_range, short_repr, wrong_type
from cqlcodec.types.model import MAX_TYPE_DEPTH, CqlType

MAX_NESTING: Final = MAX_TYPE_DEPTH
"""Deepest nesting of composite types (list, set, map, tuple, UDT, vector) accepted."""

HASH_GROUP_LIMIT: Final = 64
"""Most elements of one decoded set (keys of one map) that may share a hash value."""

INT32_MAX: Final = 0x7FFFFFFF
_MISSING: Final = object()
_frozen_map: Final = FrozenMap._wrap


class CompositeCodec(Codec):
    """Base of the codecs of types that contain other types; ``depth`` >= 1."""

    def __init__(self, cql_name: str, fixed_size: i64, children: list[Codec]) -> None:
        super().__init__(cql_name, fixed_size)
        self.depth: i64 = nesting_depth(cql_name, children)

    def encode(self, value: object) -> bytes:
        w = BytesWriter()
        self.encode_into(w, value)
        return w.getvalue()


def nesting_depth(cql_name: str, children: list[Codec]) -> i64:
    """1 + the deepest child composite; UnsupportedTypeError beyond MAX_NESTING."""
    deepest: i64 = 0
    for c in children:
        if isinstance(c, CompositeCodec) and c.depth > deepest:
            deepest = c.depth
    if deepest >= MAX_NESTING:
        raise UnsupportedTypeError(
            f"{cql_name[:200]} nests composite types more than {MAX_NESTING} levels deep")
    return deepest + 1


# --- shared helpers -------------------------------------------------------------------------

def sequence_items(cql_name: str, value: object, expected: str) -> list[object]:
    """The items of an iterable that is not text, bytes or a mapping, as a list."""
    if isinstance(value, list):
        return value
    if isinstance(value, tuple):
        return list(value)
    if (isinstance(value, (str, bytes, bytearray, memoryview)) or isinstance(value, Mapping)
            or not isinstance(value, Iterable)):
        raise wrong_type(cql_name, value, expected)
    return list(value)


def put(w: BytesWriter, c: Codec, v: object) -> None:
    """Append ``v`` as a ``[bytes]`` element of codec ``c`` (None is null, -1).

    Fixed-size codecs write their known width first; otherwise the compiled build
    back-patches the length (no intermediate bytes) and the interpreted build
    encodes to bytes first (fewer Python-level calls).
    """
    if v is None:
        write_i32_be(w, -1)
        return
    size: int = c.fixed_size
    if size >= 0:
        write_i32_be(w, size)
        c.encode_into(w, v)
    elif COMPILED:
        c.encode_value_into(w, v)
    else:
        b = c.encode(v)
        write_i32_be(w, len(b))
        w.write(b)


def write_count(w: BytesWriter, cql_name: str, value: object, n: int) -> None:
    """Write an ``[int]`` element count."""
    if n > INT32_MAX:
        raise out_of_range(cql_name, value, f"{n} elements do not fit an [int] count")
    write_i32_be(w, n)


def read_count(buf: bytes, pos: i64, end: i64, cql_name: str, min_item: i64) -> i64:
    """Read an ``[int]`` count of items each at least ``min_item`` bytes long.

    Refuses counts that are negative or could not fit in the bytes that remain,
    so nothing is ever allocated from an unchecked count.
    """
    if end - pos < 4:
        raise malformed(cql_name, pos,
                        f"needs 4 bytes for the element count but only {end - pos} remain")
    count: int = read_i32_be(buf, pos)
    if count < 0:
        raise malformed(cql_name, pos, f"negative element count {count}")
    if count * min_item > end - pos - 4:
        raise malformed(cql_name, pos,
                        f"element count {count} cannot fit in the {end - pos - 4} bytes that remain")
    return count


def bad_length(cql_name: str, p: i64, ln: i64, end: i64) -> DecodeError:
    """The error for an element ``[bytes]`` length at ``p`` that is invalid or too long."""
    if ln < 0:
        return malformed(cql_name, p, f"invalid element length {ln} (only -1, null, is allowed)")
    return malformed(cql_name, p,
                     f"element length {ln} exceeds the {end - p - 4} bytes that remain")


def truncated(cql_name: str, p: i64, end: i64) -> DecodeError:
    return malformed(cql_name, p,
                     f"truncated: needs 4 bytes for an element length but only {end - p} remain")


def trailing(cql_name: str, p: i64, end: i64) -> DecodeError:
    return malformed(cql_name, p, f"{end - p} unexpected trailing bytes")


# element types whose decoded values hash through a keyed hash (str, bytes, datetime) or
# through an integer of at most 64 bits (few values can share a hash): no flooding guard
_HASH_SAFE: Final = frozenset([
    "ascii", "text", "varchar", "blob", "boolean", "tinyint", "smallint", "int", "bigint",
    "counter", "float", "double", "timestamp", "date", "time", "inet",
])


_NO_GROUPS: Final[dict[int, int]] = {}  # stands in when no guard is needed; never written


def hash_guarded(elem: Codec) -> bool:
    """Whether the bytes can choose the hashes of ``elem``'s values (uuid, varint, ...)."""
    return elem.cql_name not in _HASH_SAFE


def flooded(groups: dict[int, int], item: object) -> bool:
    """Count ``item``, just added as a new distinct element, in its hash group; True once
    the group exceeds HASH_GROUP_LIMIT (callers skip repeated equal items: each of those
    costs one comparison)."""
    h = hash(item)
    size = groups.get(h, 0) + 1
    groups[h] = size
    return size > HASH_GROUP_LIMIT


def hash_flood(cql_name: str, p: i64, what: str) -> DecodeError:
    return DecodeError(
        f"refused {cql_name} at offset {p}: more than {HASH_GROUP_LIMIT} {what} share one "
        "hash value (hash flooding; decoding them into a set/dict would take quadratic time)",
        cql_name, p)


# --- list and set ---------------------------------------------------------------------------

# element types whose null-free runs the interpreted build decodes with one struct call
_RUN_CODES: Final[dict[str, tuple[str, int]]] = {
    "int": ("i", 4), "bigint": ("q", 8), "counter": ("q", 8), "double": ("d", 8),
    "float": ("f", 4), "boolean": ("?", 1),
}
_RUN_MAX: Final = 64


class FixedRun:
    """The interpreted build's grouped path: ``count`` (<= 64) elements of one fixed-size
    numeric type, every one ``[int] size`` + value, read with one cached ``struct.Struct``.

    Returns None (the caller then takes the element loop, which also reports errors)
    unless the elements fill the content exactly and every length word is ``size``.
    """

    def __init__(self, code: str, size: int) -> None:
        self.code = code
        self.size = size
        self.structs: dict[int, tuple[struct.Struct, tuple[int, ...]]] = {}

    def decode(self, buf: bytes, p: int, count: int, end: int) -> list[object] | None:
        if count > _RUN_MAX or count * (4 + self.size) != end - p:
            return None
        entry = self.structs.get(count)
        if entry is None:
            entry = (struct.Struct(">" + ("i" + self.code) * count), (self.size,) * count)
            self.structs[count] = entry
        values = entry[0].unpack_from(buf, p)
        if values[0::2] != entry[1]:
            return None
        return list(values[1::2])


def fixed_run(elem: Codec) -> FixedRun | None:
    """A FixedRun for ``elem`` in the interpreted build, else None."""
    if COMPILED or isinstance(elem, CompositeCodec):
        return None
    spec = _RUN_CODES.get(elem.cql_name)
    if spec is None or spec[1] != elem.fixed_size:
        return None
    return FixedRun(spec[0], spec[1])


class ListCodec(CompositeCodec):
    """``list<T>``: decodes to ``list`` (``tuple`` with FLAG_HASHABLE)."""

    def __init__(self, cql_name: str, elem: Codec, flags: int) -> None:
        super().__init__(cql_name, -1, [elem])
        self.elem: Final = elem
        self.hashable: Final = (flags & FLAG_HASHABLE) != 0
        self.run: Final = fixed_run(elem)

    def encode_into(self, w: BytesWriter, value: object) -> None:
        items = sequence_items(self.cql_name, value, "a sequence (list, tuple, ...)")
        write_count(w, self.cql_name, value, len(items))
        elem = self.elem
        for e in items:
            put(w, elem, e)

    def decode(self, buf: bytes, pos: i64, n: i64) -> object:
        if n == 0:
            return None
        cql_name = self.cql_name
        end = pos + n
        count = read_count(buf, pos, end, cql_name, 4)
        p: i64 = pos + 4
        run = self.run
        if run is not None:
            found = run.decode(buf, p, count, end)
            if found is not None:
                return tuple(found) if self.hashable else found
        elem = self.elem
        out: list[object] = []
        for _i in range(count):
            if end - p < 4:
                raise truncated(cql_name, p, end)
            ln: int = read_i32_be(buf, p)
            if ln < 0 or ln > end - p - 4:
                if ln == -1:
                    out.append(None)
                    p += 4
                    continue
                raise bad_length(cql_name, p, ln, end)
            p += 4
            out.append(elem.decode(buf, p, ln))
            p += ln
        if p != end:
            raise trailing(cql_name, p, end)
        if self.hashable:
            return tuple(out)
        return out


class SetCodec(CompositeCodec):
    """``set<T>``: decodes to ``set`` (``frozenset`` with FLAG_HASHABLE)."""

    def __init__(self, cql_name: str, elem: Codec, flags: int) -> None:
        super().__init__(cql_name, -1, [elem])
        self.elem: Final = elem
        self.hashable: Final = (flags & FLAG_HASHABLE) != 0
        self.run: Final = fixed_run(elem)
        self.guard: Final = hash_guarded(elem)

    def encode_into(self, w: BytesWriter, value: object) -> None:
        if isinstance(value, (set, frozenset)):
            write_count(w, self.cql_name, value, len(value))
            elem = self.elem
            for e in value:
                put(w, elem, e)
            return
        items = sequence_items(self.cql_name, value, "a set or another iterable")
        write_count(w, self.cql_name, value, len(items))
        elem = self.elem
        for e in items:
            put(w, elem, e)

    def decode(self, buf: bytes, pos: i64, n: i64) -> object:
        if n == 0:
            return None
        cql_name = self.cql_name
        end = pos + n
        count = read_count(buf, pos, end, cql_name, 4)
        p: i64 = pos + 4
        run = self.run
        if run is not None:
            found = run.decode(buf, p, count, end)
            if found is not None:
                return frozenset(found) if self.hashable else set(found)
        elem = self.elem
        out: set[object] = set()
        guard = self.guard and count > HASH_GROUP_LIMIT
        groups: dict[int, int] = {} if guard else _NO_GROUPS
        for _i in range(count):
            if end - p < 4:
                raise truncated(cql_name, p, end)
            ln: int = read_i32_be(buf, p)
            item: object = None
            if ln < 0 or ln > end - p - 4:
                if ln != -1:
                    raise bad_length(cql_name, p, ln, end)
                p += 4
            else:
                p += 4
                item = elem.decode(buf, p, ln)
                p += ln
            size = len(out)
            try:
                out.add(item)
            except TypeError:
                raise malformed(cql_name, p, f"set element {short_repr(item)} is not hashable")
            if guard and len(out) > size and flooded(groups, item):
                raise hash_flood(cql_name, p, "elements")
        if p != end:
            raise trailing(cql_name, p, end)
        if self.hashable:
            return frozenset(out)
        return out


# --- map ------------------------------------------------------------------------------------

class MapCodec(CompositeCodec):
    """``map<K, V>``: decodes to ``dict`` in wire order (FrozenMap with FLAG_HASHABLE)."""

    def __init__(self, cql_name: str, key: Codec, value: Codec, flags: int) -> None:
        super().__init__(cql_name, -1, [key, value])
        self.key: Final = key
        self.value: Final = value
        self.hashable: Final = (flags & FLAG_HASHABLE) != 0
        self.guard: Final = hash_guarded(key)

    def encode_into(self, w: BytesWriter, value: object) -> None:
        kc = self.key
        vc = self.value
        if isinstance(value, dict):
            write_count(w, self.cql_name, value, len(value))
            for k, v in value.items():
                put(w, kc, k)
                put(w, vc, v)
            return
        pairs = self._pairs(value)
        write_count(w, self.cql_name, value, len(pairs))
        for pair in pairs:
            put(w, kc, pair[0])
            put(w, vc, pair[1])

    def _pairs(self, value: object) -> list[tuple[object, object]]:
        if isinstance(value, Mapping):
            return list(value.items())
        if isinstance(value, (str, bytes, bytearray, memoryview)) or not isinstance(
                value, Iterable):
            raise wrong_type(self.cql_name, value, "a mapping or an iterable of (key, value) pairs")
        raw = list(value)
        pairs: list[tuple[object, object]] = []
        for item in raw:
            if isinstance(item, (tuple, list)) and len(item) == 2:
                pairs.append((item[0], item[1]))
            else:
                raise wrong_type(self.cql_name, value,
                                 f"a mapping or (key, value) pairs, found item {short_repr(item)}")
        return pairs

    def decode(self, buf: bytes, pos: i64, n: i64) -> object:
        if n == 0:
            return None
        cql_name = self.cql_name
        end = pos + n
        count = read_count(buf, pos, end, cql_name, 8)
        p: i64 = pos + 4
        kc = self.key
        vc = self.value
        out: dict[object, object] = {}
        guard = self.guard and count > HASH_GROUP_LIMIT
        groups: dict[int, int] = {} if guard else _NO_GROUPS
        for _i in range(count):
            if end - p < 4:
                raise truncated(cql_name, p, end)
            ln: int = read_i32_be(buf, p)
            k: object = None
            if ln < 0 or ln > end - p - 4:
                if ln != -1:
                    raise bad_length(cql_name, p, ln, end)
                p += 4
            else:
                p += 4
                k = kc.decode(buf, p, ln)
                p += ln
            if end - p < 4:
                raise truncated(cql_name, p, end)
            ln = read_i32_be(buf, p)
            v: object = None
            if ln < 0 or ln > end - p - 4:
                if ln != -1:
                    raise bad_length(cql_name, p, ln, end)
                p += 4
            else:
                p += 4
                v = vc.decode(buf, p, ln)
                p += ln
            size = len(out)
            try:
                out[k] = v
            except TypeError:
                raise malformed(cql_name, p, f"map key {short_repr(k)} is not hashable")
            if guard and len(out) > size and flooded(groups, k):
                raise hash_flood(cql_name, p, "keys")
        if p != end:
            raise trailing(cql_name, p, end)
        if self.hashable:
            return _frozen_map(out)
        return out


# --- tuple and UDT --------------------------------------------------------------------------

def decode_fields(cql_name: str, fields: list[Codec], buf: bytes, pos: i64, n: i64,
                  udt: bool) -> list[object]:
    """Decode the ``[bytes]`` fields of a tuple or UDT value; extra bytes are an error.

    The value may end after any number of fields: the missing trailing ones are None,
    drawn from the message's padding budget (``udt`` only chooses the wording of errors).
    """
    end = pos + n
    p = pos
    out: list[object] = []
    for c in fields:
        if p == end:
            missing = len(fields) - len(out)
            spend_padding(cql_name, p, missing, len(fields), udt)
            out.extend([None] * missing)
            return out
        if end - p < 4:
            raise truncated(cql_name, p, end)
        ln: int = read_i32_be(buf, p)
        if ln < 0 or ln > end - p - 4:
            if ln != -1:
                raise bad_length(cql_name, p, ln, end)
            out.append(None)
            p += 4
            continue
        p += 4
        out.append(c.decode(buf, p, ln))
        p += ln
    if p != end:
        raise malformed(cql_name, p,
                        f"{end - p} bytes remain after the last of {len(fields)} fields")
    return out


class TupleCodec(CompositeCodec):
    """``tuple<...>``: any sequence encodes (a short one as a short value); decodes to
    ``tuple``, with None for the components a short value lacks."""

    def __init__(self, cql_name: str, items: list[Codec]) -> None:
        super().__init__(cql_name, -1, items)
        self.items: Final = items

    def encode_into(self, w: BytesWriter, value: object) -> None:
        values = sequence_items(self.cql_name, value, "a tuple or another sequence")
        codecs = self.items
        if len(values) > len(codecs):
            raise out_of_range(self.cql_name, value,
                               f"{len(values)} items for a tuple of {len(codecs)}")
        i = 0
        for v in values:
            put(w, codecs[i], v)
            i += 1

    def decode(self, buf: bytes, pos: i64, n: i64) -> object:
        if n == 0:
            return None
        return tuple(decode_fields(self.cql_name, self.items, buf, pos, n, False))


class UdtCodec(CompositeCodec):
    """A user-defined type: encodes mappings, records, sequences or objects; decodes to
    the type's :class:`~cqlcodec.containers.UdtValue` subclass."""

    def __init__(self, t: CqlType, fields: list[Codec]) -> None:
        super().__init__(t.cql_name, -1, fields)
        self.fields: Final = fields
        self.names: Final = list(t.field_names)
        self.names_tuple: Final = t.field_names
        self.name_set: Final = frozenset(t.field_names)
        self.known: Final = len(t.field_names) > 0 and len(t.field_names) == len(fields)
        self.value_class: type[UdtValue] | None = udt_class(t) if self.known else None
        self.udt_type: Final = t

    def _unknown(self) -> UnsupportedTypeError:
        t = self.udt_type
        where = f"{t.keyspace}.{t.name}" if t.keyspace else t.name
        return UnsupportedTypeError(
            f"user type {where} is known only by name (its fields are unknown), "
            "so its values cannot be encoded or decoded")

    def encode_into(self, w: BytesWriter, value: object) -> None:
        if not self.known:
            raise self._unknown()
        if isinstance(value, tuple):
            if type(value) is not tuple:
                fields = getattr(value, "_fields", None)
                if isinstance(fields, tuple) and fields != self.names_tuple:
                    self._encode_record(w, value, fields)
                    return
            self._encode_positional(w, value, list(value))
            return
        if isinstance(value, dict):
            self._encode_mapping(w, value, value)
            return
        if isinstance(value, Mapping):
            self._encode_mapping(w, value, dict(value.items()))
            return
        if isinstance(value, list):
            self._encode_positional(w, value, value)
            return
        if isinstance(value, (str, bytes, bytearray, memoryview)):
            raise wrong_type(self.cql_name, value,
                             "a mapping, a record/object with the fields, or a tuple")
        if isinstance(value, Sequence):
            self._encode_positional(w, value, list(value))
            return
        self._encode_attributes(w, value)

    def _encode_positional(self, w: BytesWriter, value: object, values: list[object]) -> None:
        codecs = self.fields
        if len(values) > len(codecs):
            raise out_of_range(self.cql_name, value,
                               f"{len(values)} values for a user type of {len(codecs)} fields")
        i = 0
        for v in values:
            put(w, codecs[i], v)
            i += 1
        while i < len(codecs):
            write_i32_be(w, -1)
            i += 1

    def _encode_mapping(self, w: BytesWriter, value: object, d: dict[object, object]) -> None:
        codecs = self.fields
        found = 0
        i = 0
        for name in self.names:
            v = d.get(name, _MISSING)
            if v is _MISSING:
                write_i32_be(w, -1)
            else:
                found += 1
                put(w, codecs[i], v)
            i += 1
        if found != len(d):
            self._raise_unknown_names(value, list(d))

    def _encode_record(self, w: BytesWriter, value: object, fields: tuple[object, ...]) -> None:
        names = self.name_set
        extra = [f for f in fields if f not in names]
        if extra:
            self._raise_unknown_names(value, extra)
        self._encode_attributes(w, value)

    def _raise_unknown_names(self, value: object, keys: list[object]) -> None:
        names = self.name_set
        unknown = [k for k in keys if k not in names]
        raise out_of_range(self.cql_name, value,
                           f"unknown field(s) {', '.join([repr(k) for k in unknown])[:200]}; "
                           f"the fields are {', '.join(self.names)[:200]}")

    def _encode_attributes(self, w: BytesWriter, value: object) -> None:
        codecs = self.fields
        found = 0
        i = 0
        for name in self.names:
            v = getattr(value, name, _MISSING)
            if v is _MISSING:
                write_i32_be(w, -1)
            else:
                found += 1
                put(w, codecs[i], v)
            i += 1
        if found == 0:
            raise wrong_type(self.cql_name, value,
                             "a mapping, a record/object with the fields, or a tuple "
                             "(the object has none of the fields)")

    def decode(self, buf: bytes, pos: i64, n: i64) -> object:
        cls = self.value_class
        if cls is None:
            raise self._unknown()
        if n == 0:
            return None
        values = decode_fields(self.cql_name, self.fields, buf, pos, n, True)
        return tuple.__new__(cls, values)
