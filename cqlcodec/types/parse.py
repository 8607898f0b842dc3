"""Parsing type text into CqlType: CQL syntax and Java marshal class names.

Two grammars share one entry point, :func:`parse_type`:

* CQL: ``map<text, frozen<list<int>>>``, ``vector<float, 768>``, ``tuple<int, text>``,
  scalar keywords (case-insensitive, ``varchar`` = ``text``), ``"Quoted"`` or bare UDT
  names with an optional ``ks.`` qualification, and ``'org.example.Foo'`` class literals
  (whose content is parsed as a Java class name, as Cassandra does).
* Java: ``org.apache.cassandra.db.marshal.MapType(UTF8Type,Int32Type)``, short or fully
  qualified, including ``UserType(ks,hexname,hexfield:Type,...)`` (``:`` or ``=>``),
  ``FrozenType``, ``ReversedType``, ``VectorType(T,n)`` and ``CompositeType(T1,T2,...)``.
  ``DynamicCompositeType``, ``ColumnToCollectionType`` and unknown dotted class names
  become ``custom_type(<their text>)`` (values are raw bytes); ``EmptyType`` is the
  empty scalar.

``frozen<>`` is accepted around any type; it never changes the bytes.

Text is read as Java when its first name is followed by ``(``, is a known marshal
class name (``Int32Type``, ``org.apache.cassandra.db.marshal.UTF8Type``) or has at
least two dots (``org.example.Foo``); otherwise it is CQL. Every error is a
:class:`TypeParseError` naming the character position. Parsing is a single left to
right pass with nesting bounded by :data:`MAX_TYPE_DEPTH`.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Final, cast

from mypy_extensions import i64

from cqlcodec import kinds as K
from cqlcodec.errors import TypeParseError
from cqlcodec.types.model import (
    CQL_TYPE_KEYWORDS,
    JAVA_PREFIX,
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
from cqlcodec.types.model import MAX_TYPE_DEPTH as TYPE_DEPTH_LIMIT
from cqlcodec.types.names import quoted_identifier

MAX_TYPE_DEPTH: Final = TYPE_DEPTH_LIMIT
"""Deepest allowed nesting (a scalar is one level, ``list<int>`` two): the bound of every
CqlType, however it is made."""

MAX_VECTOR_DIMENSION: Final = 0x7FFFFFFF
"""Largest vector dimension (Cassandra stores it in a Java int)."""

_CACHE_LIMIT: Final = 1024
_CACHE_TEXT_LIMIT: Final = 4096  # longer texts are parsed every time, never cached

_CQL_SCALARS: Final[dict[str, int]] = {
    "ascii": K.ASCII,
    "bigint": K.BIGINT,
    "blob": K.BLOB,
    "boolean": K.BOOLEAN,
    "counter": K.COUNTER,
    "date": K.DATE,
    "decimal": K.DECIMAL,
    "double": K.DOUBLE,
    "duration": K.DURATION,
    "float": K.FLOAT,
    "inet": K.INET,
    "int": K.INT,
    "smallint": K.SMALLINT,
    "text": K.TEXT,
    "varchar": K.TEXT,
    "time": K.TIME,
    "timestamp": K.TIMESTAMP,
    "timeuuid": K.TIMEUUID,
    "tinyint": K.TINYINT,
    "uuid": K.UUID,
    "varint": K.VARINT,
}

# CQL parameterized keywords: name -> (min parameters, max parameters); vector is special
_CQL_PARAMETERIZED: Final[dict[str, tuple[int, int]]] = {
    "list": (1, 1),
    "set": (1, 1),
    "frozen": (1, 1),
    "map": (2, 2),
    "tuple": (1, 1 << 16),
    "vector": (2, 2),
}

_JAVA_SCALARS: Final[dict[str, int]] = {
    **{name: kind for kind, name in K.JAVA_SCALAR_NAMES.items()},
    "DateType": K.TIMESTAMP,  # the legacy name of timestamp
}

_J_LIST: Final = 1
_J_SET: Final = 2
_J_MAP: Final = 3
_J_TUPLE: Final = 4
_J_FROZEN: Final = 5
_J_REVERSED: Final = 6
_J_VECTOR: Final = 7
_J_UDT: Final = 8
_J_OPAQUE: Final = 9  # parameterized, kept as a custom type with its full text
_J_COMPOSITE: Final = 10

_JAVA_PARAMETERIZED: Final[dict[str, int]] = {
    "ListType": _J_LIST,
    "SetType": _J_SET,
    "MapType": _J_MAP,
    "TupleType": _J_TUPLE,
    "FrozenType": _J_FROZEN,
    "ReversedType": _J_REVERSED,
    "VectorType": _J_VECTOR,
    "UserType": _J_UDT,
    "CompositeType": _J_COMPOSITE,
    "DynamicCompositeType": _J_OPAQUE,
    "ColumnToCollectionType": _J_OPAQUE,
}

_SPACE: Final = frozenset(" \t\n\r\f\v")
_DIGITS: Final = frozenset("0123456789")
_HEX: Final = frozenset("0123456789abcdefABCDEF")
_LETTERS: Final = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_IDENT: Final = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
# characters of a Java class name token (Cassandra's TypeParser identifier set, plus '$')
_JAVA_NAME: Final = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-+&$"
)


class _TextCache:
    """A bounded text -> CqlType map that forgets its oldest entry when full."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.entries: dict[str, CqlType] = {}
        self.lock = threading.Lock()

    def get(self, text: str) -> CqlType | None:
        return self.entries.get(text)

    def put(self, text: str, t: CqlType) -> CqlType:
        """Store ``t`` unless another thread stored ``text`` first; return the stored type."""
        if len(text) > _CACHE_TEXT_LIMIT:
            return t
        with self.lock:
            entries = self.entries
            found = entries.get(text)
            if found is not None:
                return found
            while len(entries) >= self.limit:
                del entries[next(iter(entries))]
            entries[text] = t
        return t

    def clear(self) -> None:
        with self.lock:
            self.entries.clear()


_type_cache: Final = _TextCache(_CACHE_LIMIT)
_class_cache: Final = _TextCache(_CACHE_LIMIT)


def parse_type(text: str, user_types: Mapping[str, CqlType] | None = None) -> CqlType:
    """The CqlType described by CQL type text or a Java marshal class name.

    ``user_types`` resolves bare UDT names: its keys are UDT names (as written in
    CQL: lower-case unless they need quoting) or ``keyspace.name``. A quoted name
    that is not in ``user_types`` gives a UDT known only by name. Raises
    :class:`TypeParseError` (naming the position) for anything malformed. The same
    text parsed twice gives the same object (a bounded cache).
    """
    if not isinstance(cast(object, text), str):
        raise TypeError(f"type text must be a str, not {type(text).__name__}")
    if user_types is None:
        found = _type_cache.get(text)
        if found is not None:
            return found
        return _type_cache.put(text, _Parser(text, None).parse_whole(False))
    return _Parser(text, user_types).parse_whole(False)


def parse_class_name(text: str) -> CqlType:
    """The CqlType of a Java marshal class name only (as carried by a custom [option])."""
    found = _class_cache.get(text)
    if found is not None:
        return found
    return _class_cache.put(text, _Parser(text, None).parse_whole(True))


def clear_parse_cache() -> None:
    """Forget every cached parse result (for tests and memory-conscious callers)."""
    _type_cache.clear()
    _class_cache.clear()


def parse_cache_size() -> int:
    """How many parse results the text caches hold now (bounded)."""
    return len(_type_cache.entries) + len(_class_cache.entries)


class _Parser:
    """One parse of one text; positions are character offsets into ``text``."""

    def __init__(self, text: str, user_types: Mapping[str, CqlType] | None) -> None:
        self.text = text
        self.end: i64 = len(text)
        self.user_types = user_types

    def fail(self, message: str, pos: i64) -> TypeParseError:
        return TypeParseError(message, self.text, pos)

    def skip_space(self, pos: i64, stop: i64) -> i64:
        text = self.text
        while pos < stop and text[pos] in _SPACE:
            pos += 1
        return pos

    def span_of(self, chars: frozenset[str], pos: i64, stop: i64) -> i64:
        """The position after the run of ``chars`` starting at ``pos``."""
        text = self.text
        while pos < stop and text[pos] in chars:
            pos += 1
        return pos

    def describe(self, pos: i64, stop: i64) -> str:
        if pos >= stop:
            return "the end of the text"
        return repr(self.text[pos])

    def check_depth(self, depth: i64, pos: i64) -> None:
        if depth >= MAX_TYPE_DEPTH:
            raise self.fail(f"type nested more than {MAX_TYPE_DEPTH} levels deep", pos)

    # ----------------------------------------------------------------- entry

    def parse_whole(self, java_only: bool) -> CqlType:
        end = self.end
        pos = self.skip_space(0, end)
        if pos >= end:
            raise self.fail("empty type text", 0)
        if java_only or self.looks_like_java(pos):
            t, pos = self.java_type(pos, end, 0)
        else:
            t, pos = self.cql_type(pos, 0)
        pos = self.skip_space(pos, end)
        if pos < end:
            raise self.fail(f"unexpected {self.describe(pos, end)} after the type", pos)
        return t

    def looks_like_java(self, pos: i64) -> bool:
        text = self.text
        end = self.end
        name_end = self.span_of(_JAVA_NAME, pos, end)
        if name_end == pos:
            return False
        after = self.skip_space(name_end, end)
        if after < end and text[after] == "(":
            return True
        word = text[pos:name_end]
        if word.lower() in CQL_TYPE_KEYWORDS:
            return False
        short = word[len(JAVA_PREFIX):] if word.startswith(JAVA_PREFIX) else word
        if short in _JAVA_SCALARS or short in _JAVA_PARAMETERIZED:
            return True
        return word.count(".") >= 2

    # ------------------------------------------------------------------- CQL

    def cql_type(self, pos: i64, depth: i64) -> tuple[CqlType, i64]:
        text = self.text
        end = self.end
        pos = self.skip_space(pos, end)
        self.check_depth(depth, pos)
        if pos >= end:
            raise self.fail("expected a type but the text ended", pos)
        ch = text[pos]
        if ch == "'":
            return self.cql_class_literal(pos, depth)
        if ch == '"':
            return self.cql_named(pos)
        if ch not in _LETTERS:
            raise self.fail(f"expected a type, found {ch!r}", pos)
        word_end = self.span_of(_IDENT, pos, end)
        after = self.skip_space(word_end, end)
        if after < end and text[after] == ".":
            return self.cql_named(pos)
        word = text[pos:word_end].lower()
        kind = _CQL_SCALARS.get(word, -1)
        if kind >= 0:
            if after < end and text[after] == "<":
                raise self.fail(f"{word} takes no parameters", after)
            return scalar_type(kind), word_end
        counts = _CQL_PARAMETERIZED.get(word)
        if counts is not None:
            if after >= end or text[after] != "<":
                raise self.fail(f"{word} needs parameters: {word}<...>", after)
            return self.cql_parameterized(word, counts[0], counts[1], after, depth)
        if after < end and text[after] == "<":
            raise self.fail(f"unknown parameterized type {text[pos:word_end]!r}", pos)
        return self.cql_named(pos)

    def cql_parameterized(self, word: str, least: int, most: int, open_pos: i64,
                          depth: i64) -> tuple[CqlType, i64]:
        text = self.text
        end = self.end
        params: list[CqlType] = []
        count = 0
        dimension = 0
        pos = open_pos + 1
        while True:
            pos = self.skip_space(pos, end)
            if count >= most:
                raise self.fail(f"{word} takes {most} parameter{'s' if most > 1 else ''}, "
                                f"found more", pos)
            if word == "vector" and count == 1:
                dimension, pos = self.dimension(pos, end)
            else:
                t, pos = self.cql_type(pos, depth + 1)
                params.append(t)
            count += 1
            pos = self.skip_space(pos, end)
            if pos >= end:
                raise self.fail(f"unclosed {word}<: expected ',' or '>'", pos)
            ch = text[pos]
            if ch == ">":
                break
            if ch != ",":
                raise self.fail(f"expected ',' or '>' in {word}<...>, found {ch!r}", pos)
            pos += 1
        if count < least:
            raise self.fail(f"{word} needs {least} parameter{'s' if least > 1 else ''}, "
                            f"found {count}", pos)
        close = pos + 1
        if word == "list":
            return list_of(params[0]), close
        if word == "set":
            return set_of(params[0]), close
        if word == "map":
            return map_of(params[0], params[1]), close
        if word == "tuple":
            return tuple_of(*params), close
        if word == "vector":
            return vector_of(params[0], dimension), close
        return frozen(params[0]), close

    def dimension(self, pos: i64, stop: i64) -> tuple[int, i64]:
        """A vector dimension: a decimal integer from 1 to MAX_VECTOR_DIMENSION."""
        digits_end = self.span_of(_DIGITS, pos, stop)
        if digits_end == pos:
            raise self.fail(
                f"vector dimension must be a positive integer, found {self.describe(pos, stop)}",
                pos)
        if digits_end < stop and self.text[digits_end] in _JAVA_NAME:
            raise self.fail("vector dimension must be a positive integer", pos)
        digits = self.text[pos:digits_end].lstrip("0")
        if len(digits) > 10 or (digits and int(digits) > MAX_VECTOR_DIMENSION):
            raise self.fail(f"vector dimension is larger than {MAX_VECTOR_DIMENSION}", pos)
        if not digits:
            raise self.fail("vector dimension must be at least 1", pos)
        return int(digits), digits_end

    def cql_identifier(self, pos: i64) -> tuple[str, bool, i64]:
        """A bare (folded to lower case) or double-quoted identifier: (name, quoted, next)."""
        text = self.text
        end = self.end
        if pos < end and text[pos] == '"':
            name, after = quoted_identifier(text, pos)  # self.end is len(text)
            if after < 0:
                raise self.fail("unterminated quoted identifier", pos)
            if not name:
                raise self.fail("empty quoted identifier", pos)
            return name, True, after
        if pos >= end or text[pos] not in _LETTERS:
            raise self.fail(f"expected an identifier, found {self.describe(pos, end)}", pos)
        stop = self.span_of(_IDENT, pos, end)
        return text[pos:stop].lower(), False, stop

    def cql_named(self, pos: i64) -> tuple[CqlType, i64]:
        """A user-defined type name, optionally ``keyspace.``-qualified."""
        text = self.text
        end = self.end
        first, first_quoted, p = self.cql_identifier(pos)
        after = self.skip_space(p, end)
        keyspace = ""
        name = first
        quoted = first_quoted
        if after < end and text[after] == ".":
            keyspace = first
            name, quoted, p = self.cql_identifier(self.skip_space(after + 1, end))
        user_types = self.user_types
        if user_types is not None:
            found: CqlType | None = None
            if keyspace:
                found = user_types.get(keyspace + "." + name)
            if found is None:
                found = user_types.get(name)
            if found is not None:
                if not isinstance(cast(object, found), CqlType):
                    raise TypeError(f"user_types[{name!r}] is not a CqlType")
                return found, p
        if quoted:
            return user_type(keyspace, name, ()), p
        shown = name if not keyspace else keyspace + "." + name
        raise self.fail(
            f"unknown type {shown!r}: write a user-defined type name in double quotes "
            f"(frozen<\"{name}\">) or pass its definition in user_types", pos)

    def cql_class_literal(self, pos: i64, depth: i64) -> tuple[CqlType, i64]:
        """``'org.example.Foo'``: a Java class name inside a CQL string literal."""
        text = self.text
        p = pos + 1
        while True:
            close = text.find("'", p)
            if close < 0:
                raise self.fail("unterminated quoted class name", pos)
            if close + 1 < self.end and text[close + 1] == "'":
                p = close + 2  # an escaped quote: never part of a valid class name
                continue
            break
        start = self.skip_space(pos + 1, close)
        if start >= close:
            raise self.fail("empty quoted class name", pos)
        t, p = self.java_type(start, close, depth)
        p = self.skip_space(p, close)
        if p < close:
            raise self.fail(f"unexpected {self.describe(p, close)} in the quoted class name", p)
        return t, close + 1

    # ------------------------------------------------------------------ Java

    def java_type(self, pos: i64, stop: i64, depth: i64) -> tuple[CqlType, i64]:
        text = self.text
        pos = self.skip_space(pos, stop)
        self.check_depth(depth, pos)
        name_end = self.span_of(_JAVA_NAME, pos, stop)
        if name_end == pos:
            raise self.fail(
                f"expected a marshal class name, found {self.describe(pos, stop)}", pos)
        full = text[pos:name_end]
        short = full[len(JAVA_PREFIX):] if full.startswith(JAVA_PREFIX) else full
        after = self.skip_space(name_end, stop)
        has_args = after < stop and text[after] == "("
        kind = _JAVA_SCALARS.get(short, -1)
        if kind >= 0:
            if has_args:
                raise self.fail(f"{short} takes no parameters", after)
            return scalar_type(kind), name_end
        family = _JAVA_PARAMETERIZED.get(short, 0)
        if family == 0:
            self.check_class_name(full, pos)
            if not has_args:
                return custom_type(full), name_end
            close = self.skip_opaque_args(after, stop, depth)
            return custom_type(text[pos:close]), close
        if not has_args:
            raise self.fail(f"{short} needs parameters: {short}(...)", name_end)
        if family == _J_UDT:
            return self.java_user_type(after, stop, depth)
        if family == _J_VECTOR:
            element, p = self.java_type(after + 1, stop, depth + 1)
            p = self.expect(",", p, stop, "VectorType(type, dimension)")
            dimension, p = self.dimension(self.skip_space(p, stop), stop)
            close = self.expect(")", p, stop, "VectorType(type, dimension)")
            return vector_of(element, dimension), close
        if family == _J_OPAQUE:
            close = self.java_aliased_args(after, stop, depth)
            return custom_type(text[pos:close]), close
        params, close = self.java_args(after, stop, depth)
        count = len(params)
        if family == _J_COMPOSITE:
            return composite_type(*params), close
        if family == _J_TUPLE:
            return tuple_of(*params), close
        if family == _J_MAP:
            if count != 2:
                raise self.fail(f"MapType needs 2 parameters, found {count}", after)
            return map_of(params[0], params[1]), close
        if count != 1:
            raise self.fail(f"{short} needs 1 parameter, found {count}", after)
        inner = params[0]
        if family == _J_LIST:
            return list_of(inner), close
        if family == _J_SET:
            return set_of(inner), close
        if family == _J_REVERSED:
            return reversed_type(inner), close
        return frozen(inner), close

    def check_class_name(self, name: str, pos: i64) -> None:
        """An unknown class must be a dotted Java name: ``org.example.Foo``."""
        if "." not in name:
            raise self.fail(
                f"unknown marshal type {name!r}: custom types need their fully qualified "
                "class name", pos)
        offset: i64 = 0
        for part in name.split("."):
            if not part:
                raise self.fail(f"empty part in the class name {name!r}", pos + offset)
            offset += len(part) + 1

    def expect(self, ch: str, pos: i64, stop: i64, what: str) -> i64:
        pos = self.skip_space(pos, stop)
        if pos >= stop or self.text[pos] != ch:
            raise self.fail(f"expected {ch!r} in {what}, found {self.describe(pos, stop)}", pos)
        return pos + 1

    def java_args(self, open_pos: i64, stop: i64, depth: i64) -> tuple[list[CqlType], i64]:
        """``(T1, T2, ...)`` with at least one type; returns the types and the position after ')'."""
        text = self.text
        params: list[CqlType] = []
        pos = open_pos + 1
        while True:
            t, pos = self.java_type(pos, stop, depth + 1)
            params.append(t)
            pos = self.skip_space(pos, stop)
            if pos >= stop:
                raise self.fail("unclosed '(': expected ',' or ')'", pos)
            ch = text[pos]
            if ch == ")":
                return params, pos + 1
            if ch != ",":
                raise self.fail(f"expected ',' or ')', found {ch!r}", pos)
            pos += 1

    def alias_separator(self, pos: i64, stop: i64) -> i64:
        """The position after ':' or '=>' at ``pos``, or -1 if neither is there."""
        text = self.text
        if pos < stop and text[pos] == ":":
            return pos + 1
        if pos + 1 < stop and text[pos] == "=" and text[pos + 1] == ">":
            return pos + 2
        return -1

    def java_aliased_args(self, open_pos: i64, stop: i64, depth: i64) -> i64:
        """``(alias=>T, hex:T, T, ...)`` of the composite family; returns the position after ')'."""
        text = self.text
        pos = open_pos + 1
        while True:
            pos = self.skip_space(pos, stop)
            alias_end = self.span_of(_JAVA_NAME, pos, stop)
            sep_end = self.alias_separator(self.skip_space(alias_end, stop), stop)
            if sep_end >= 0:
                if alias_end == pos:
                    raise self.fail("empty alias before ':' or '=>'", pos)
                pos = sep_end
            _t, pos = self.java_type(pos, stop, depth + 1)
            pos = self.skip_space(pos, stop)
            if pos >= stop:
                raise self.fail("unclosed '(': expected ',' or ')'", pos)
            ch = text[pos]
            if ch == ")":
                return pos + 1
            if ch != ",":
                raise self.fail(f"expected ',' or ')', found {ch!r}", pos)
            pos += 1

    def skip_opaque_args(self, open_pos: i64, stop: i64, depth: i64) -> i64:
        """Balanced parameters of an unknown class, kept as text; returns the position after ')'."""
        text = self.text
        level: i64 = 0
        pos = open_pos
        while pos < stop:
            ch = text[pos]
            if ch == "(":
                level += 1
                self.check_depth(depth + level, pos)
            elif ch == ")":
                level -= 1
                if level == 0:
                    return pos + 1
            elif ch not in _JAVA_NAME and ch not in _SPACE and ch not in ",:=>":
                raise self.fail(f"unexpected {ch!r} in class parameters", pos)
            pos += 1
        raise self.fail("unclosed '(' in class parameters", open_pos)

    def hex_name(self, pos: i64, stop: i64, what: str) -> tuple[str, i64]:
        """A hex-encoded UTF-8 name (UDT and field names in Java class names)."""
        text = self.text
        pos = self.skip_space(pos, stop)
        hex_end = self.span_of(_HEX, pos, stop)
        if hex_end < stop and text[hex_end] in _JAVA_NAME:
            raise self.fail(f"{what} must be hex-encoded, found {text[hex_end]!r}", hex_end)
        if hex_end == pos:
            raise self.fail(f"expected a hex-encoded {what}, found {self.describe(pos, stop)}",
                            pos)
        if (hex_end - pos) % 2 != 0:
            raise self.fail(f"hex-encoded {what} has an odd number of digits", pos)
        try:
            name = bytes.fromhex(text[pos:hex_end]).decode("utf-8")
        except UnicodeDecodeError:
            raise self.fail(f"hex-encoded {what} is not valid UTF-8", pos) from None
        return name, hex_end

    def java_user_type(self, open_pos: i64, stop: i64, depth: i64) -> tuple[CqlType, i64]:
        """``UserType(keyspace, hexname, hexfield:T, ...)``."""
        text = self.text
        pos = self.skip_space(open_pos + 1, stop)
        ks_end = self.span_of(_IDENT, pos, stop)
        if ks_end == pos:
            raise self.fail(f"expected a keyspace name in UserType(...), found "
                            f"{self.describe(pos, stop)}", pos)
        keyspace = text[pos:ks_end]
        pos = self.expect(",", ks_end, stop, "UserType(keyspace, name, ...)")
        name, pos = self.hex_name(pos, stop, "user type name")
        fields: list[tuple[str, CqlType]] = []
        seen: set[str] = set()
        while True:
            pos = self.skip_space(pos, stop)
            if pos >= stop:
                raise self.fail("unclosed UserType(: expected ',' or ')'", pos)
            ch = text[pos]
            if ch == ")":
                break
            if ch != ",":
                raise self.fail(f"expected ',' or ')' in UserType(...), found {ch!r}", pos)
            field_pos = self.skip_space(pos + 1, stop)
            field, pos = self.hex_name(field_pos, stop, "field name")
            if field in seen:
                raise self.fail(f"duplicate field name {field!r} in user type {name!r}",
                                field_pos)
            seen.add(field)
            sep_end = self.alias_separator(self.skip_space(pos, stop), stop)
            if sep_end < 0:
                raise self.fail("expected ':' or '=>' after a field name in UserType(...)", pos)
            t, pos = self.java_type(sep_end, stop, depth + 1)
            fields.append((field, t))
        return user_type(keyspace, name, fields), pos + 1
