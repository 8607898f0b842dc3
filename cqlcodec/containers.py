"""Immutable value containers for decoded CQL collections and user-defined types.

* :class:`FrozenMap` is what a ``map`` decodes to where the value must be hashable
  (a set element or a map key): an immutable, insertion-ordered ``Mapping`` that
  compares equal to dicts and other mappings with the same items and is hashable
  when its values are.
* :class:`UdtValue` is the base of the value classes of user-defined types. Each
  UDT type gets one tuple subclass (:func:`udt_class`), created once per type and
  kept in a bounded cache, so values have index access, attribute access and
  ``value["field name"]`` access; they are hashable when their field values are,
  compare equal to plain tuples with the same items (as namedtuples do) and pickle
  by type, not by class name, so no process-wide class registry is needed.

This module is never compiled: it holds user-facing Python classes.
"""

from __future__ import annotations

import keyword
import threading
from collections.abc import ItemsView, Iterable, Iterator, KeysView, Mapping, ValuesView
from operator import itemgetter
from typing import TYPE_CHECKING, Any, ClassVar, Final, TypeVar, overload

if TYPE_CHECKING:
    from cqlcodec.types.model import CqlType

__all__ = ["FrozenMap", "UdtValue", "udt_class"]

_K = TypeVar("_K")
_V = TypeVar("_V")
_T = TypeVar("_T")
_MISSING: Final = object()


class FrozenMap(Mapping[_K, _V]):
    """An immutable, hashable, insertion-ordered mapping.

    Built like ``dict`` from a mapping or an iterable of (key, value) pairs.
    Equality is that of ``dict`` (order-insensitive, equal to any Mapping with
    the same items); the hash is order-insensitive too and needs hashable values.
    """

    __slots__ = ("_d", "_hash")

    _d: dict[_K, _V]
    _hash: int | None

    def __init__(self, items: Mapping[_K, _V] | Iterable[tuple[_K, _V]] = (), /) -> None:
        object.__setattr__(self, "_d", dict(items))
        object.__setattr__(self, "_hash", None)

    @classmethod
    def _wrap(cls, d: dict[_K, _V]) -> FrozenMap[_K, _V]:
        """A FrozenMap that takes ownership of ``d`` (no copy; the caller drops ``d``)."""
        m: FrozenMap[_K, _V] = object.__new__(cls)
        object.__setattr__(m, "_d", d)
        object.__setattr__(m, "_hash", None)
        return m

    def __getitem__(self, key: _K) -> _V:
        return self._d[key]

    def __iter__(self) -> Iterator[_K]:
        return iter(self._d)

    def __len__(self) -> int:
        return len(self._d)

    def __contains__(self, key: object) -> bool:
        return key in self._d

    @overload
    def get(self, key: _K, /) -> _V | None: ...
    @overload
    def get(self, key: _K, default: _V | _T, /) -> _V | _T: ...
    def get(self, key: _K, default: object = None, /) -> object:
        """The value for ``key``, or ``default`` when the map has no such key."""
        return self._d.get(key, default)

    def keys(self) -> KeysView[_K]:
        """A view of the keys, in insertion order (wire order for a decoded map)."""
        return self._d.keys()

    def values(self) -> ValuesView[_V]:
        """A view of the values, in insertion order (wire order for a decoded map)."""
        return self._d.values()

    def items(self) -> ItemsView[_K, _V]:
        """A view of the (key, value) pairs, in insertion order (wire order for a decoded map)."""
        return self._d.items()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FrozenMap):
            return self._d == other._d
        if isinstance(other, dict):
            return self._d == other
        if isinstance(other, Mapping):
            return self._d == dict(other.items())
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        eq = self.__eq__(other)
        if eq is NotImplemented:
            return eq  # type: ignore[no-any-return]
        return not eq

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            h = hash(frozenset(self._d.items()))
            object.__setattr__(self, "_hash", h)
        return h

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"FrozenMap is immutable (cannot set {name!r})")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"FrozenMap is immutable (cannot delete {name!r})")

    def __repr__(self) -> str:
        return f"FrozenMap({self._d!r})"

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        return (FrozenMap, (self._d,))

    def __copy__(self) -> FrozenMap[_K, _V]:
        return self

    def __deepcopy__(self, memo: dict[int, object]) -> FrozenMap[_K, _V]:
        import copy

        return FrozenMap(copy.deepcopy(self._d, memo))


class UdtValue(tuple[Any, ...]):
    """Base class of the value classes of user-defined types (one subclass per type).

    A value is a tuple of the field values in declaration order. Fields are also
    attributes (``v.street``; any name works through ``getattr(v, "zip code")``)
    and keys (``v["street"]``). Construct with positional values in field order
    and/or keyword field names; fields not given are ``None`` (null).
    """

    __slots__ = ()

    _fields: ClassVar[tuple[str, ...]] = ()
    _index: ClassVar[dict[str, int]] = {}
    _type: ClassVar[CqlType | None] = None

    def __new__(cls, *values: object, **fields: object) -> UdtValue:
        n = len(cls._fields)
        if len(values) > n:
            raise TypeError(
                f"{cls.__name__} has {n} fields but {len(values)} values were given")
        if not fields:
            if len(values) == n:
                return tuple.__new__(cls, values)
            return tuple.__new__(cls, values + (None,) * (n - len(values)))
        items: list[object] = list(values) + [None] * (n - len(values))
        for name, v in fields.items():
            i = cls._index.get(name)
            if i is None:
                raise TypeError(f"{cls.__name__} has no field {name!r}")
            if i < len(values):
                raise TypeError(f"{cls.__name__} got field {name!r} twice")
            items[i] = v
        return tuple.__new__(cls, items)

    @classmethod
    def _make(cls, values: Iterable[object]) -> UdtValue:
        """A value from an iterable of exactly the field values, in field order."""
        t = tuple.__new__(cls, values)
        if len(t) != len(cls._fields):
            raise TypeError(f"{cls.__name__} expects {len(cls._fields)} values, got {len(t)}")
        return t

    def _asdict(self) -> dict[str, object]:
        """A dict of field name to value, in field order."""
        return dict(zip(self._fields, self))

    def _replace(self, **fields: object) -> UdtValue:
        """A copy with the given fields replaced."""
        items = list(self)
        for name, v in fields.items():
            i = self._index.get(name)
            if i is None:
                raise TypeError(f"{type(self).__name__} has no field {name!r}")
            items[i] = v
        return tuple.__new__(type(self), items)

    @overload  # type: ignore[override]
    def __getitem__(self, key: str | int) -> Any: ...
    @overload
    def __getitem__(self, key: slice) -> tuple[Any, ...]: ...
    def __getitem__(self, key: str | int | slice) -> Any:
        if isinstance(key, str):
            i = self._index.get(key)
            if i is None:
                raise KeyError(key)
            return tuple.__getitem__(self, i)
        return tuple.__getitem__(self, key)

    def __getattr__(self, name: str) -> Any:
        # only reached for names that are not class attributes: fields whose
        # names collide with the class's own attributes (e.g. "_fields")
        i = type(self)._index.get(name)
        if i is None:
            raise AttributeError(f"{type(self).__name__!r} value has no field {name!r}")
        return tuple.__getitem__(self, i)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} values are immutable")

    def __repr__(self) -> str:
        names = self._fields
        if all(n.isidentifier() and not keyword.iskeyword(n) for n in names):
            inner = ", ".join([f"{n}={v!r}" for n, v in zip(names, self)])
        else:  # still valid constructor syntax, in field order
            inner = "**{" + ", ".join([f"{n!r}: {v!r}" for n, v in zip(names, self)]) + "}"
        return f"{type(self).__name__}({inner})"

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        if self._type is None:
            return (tuple, (tuple(self),))
        return (_restore, (self._type, tuple(self)))

    def __copy__(self) -> UdtValue:
        return self


_BASE_NAMES: Final = frozenset(dir(UdtValue))
_CLASS_LIMIT: Final = 1024
_PROPERTY_FIELDS: Final = 256
_classes: dict[CqlType, type[UdtValue]] = {}
_classes_lock: Final = threading.Lock()


def _class_name(name: str) -> str:
    return name if name.isidentifier() and not keyword.iskeyword(name) else "UserType"


def _new_class(t: CqlType) -> type[UdtValue]:
    names = t.field_names
    cls = type(_class_name(t.name), (UdtValue,), {
        "__slots__": (),
        "__module__": __name__,
        "__doc__": f"Values of the user-defined type {t.cql_name}"
                   + (f" (keyspace {t.keyspace})" if t.keyspace else "") + ".",
        "_fields": names,
        "_index": {n: i for i, n in enumerate(names)},
        "_type": t,
    })
    own = vars(cls)
    # The first _PROPERTY_FIELDS fields get a property (fast attribute access); later
    # ones are found by UdtValue.__getattr__ through _index, so a type with thousands
    # of fields (hostile metadata can declare 65535) does not cost a property each.
    match_args: list[str] = []
    for i, name in enumerate(names):
        # fields override tuple methods such as count/index (as in namedtuple), but
        # never the machinery above; those stay reachable via value["name"]
        if name in own or (name in _BASE_NAMES and name not in ("count", "index")):
            continue
        if i < _PROPERTY_FIELDS or name in ("count", "index"):
            setattr(cls, name, property(itemgetter(i)))
        if i < _PROPERTY_FIELDS and name.isidentifier() and not keyword.iskeyword(name):
            match_args.append(name)
    setattr(cls, "__match_args__", tuple(match_args))
    cls.__qualname__ = cls.__name__
    return cls


def udt_class(t: CqlType) -> type[UdtValue]:
    """The value class of the user-defined type ``t`` (one per type, bounded cache)."""
    cls = _classes.get(t)
    if cls is not None:
        return cls
    with _classes_lock:
        cls = _classes.get(t)
        if cls is None:
            if len(_classes) >= _CLASS_LIMIT:
                for old in list(_classes)[: _CLASS_LIMIT // 8]:
                    del _classes[old]
            cls = _new_class(t)
            _classes[t] = cls
    return cls


def _restore(t: CqlType, values: tuple[object, ...]) -> UdtValue:
    return tuple.__new__(udt_class(t), values)
