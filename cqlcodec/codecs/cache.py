"""Bounded, thread-safe caches of per-type serializers and deserializers.

A serializer or deserializer is the :class:`~cqlcodec.codecs.base.Codec` of a type
(``encode``/``encode_into`` and ``decode``). The caches map a type (or a tuple
of types) plus the decode flags to codecs, so a driver that sees the same
column types over and over looks them up with one dictionary read.

* Keys are the :class:`CqlType` objects themselves: equality is structural, so
  different parameterizations (``list<int>`` and ``list<bigint>``, two UDTs of
  the same name with different fields) never share an entry, and the key holds
  a strong reference (no ``id()`` reuse).
* Each cache holds at most :func:`cache_limit` entries (256 by default,
  change it with :func:`set_cache_limit`). When a cache is full the oldest
  quarter of its entries is dropped; the rest stay.
* A hit is one dictionary read, with no lock. A miss builds the codec outside
  the lock and inserts it (evicting first if needed) under the lock, so a cache
  never holds more than its limit. Two threads missing the same key at once may
  both build a codec; the last one stored wins, which is harmless because
  codecs are stateless.
* The sequences returned by ``make_*`` are tuples shared between callers.
"""

from __future__ import annotations

import threading
from typing import Final, Sequence, TypeVar, cast

from cqlcodec.codecs.base import FLAG_NUMPY, FLAG_TZ_AWARE, Codec
from cqlcodec.types.model import CqlType
from cqlcodec.types.parse import parse_type

DEFAULT_CACHE_LIMIT: Final = 256

K = TypeVar("K")
V = TypeVar("V")

_lock: Final = threading.Lock()
_serializers: dict[CqlType, Codec] = {}
_deserializers: dict[tuple[CqlType, int], Codec] = {}
_serializer_lists: dict[tuple[CqlType, ...], tuple[Codec, ...]] = {}
_deserializer_lists: dict[tuple[tuple[CqlType, ...], int], tuple[Codec, ...]] = {}


class _Limit:
    """Holder of the mutable cache limit (a native attribute read on each insert)."""

    def __init__(self) -> None:
        self.value = DEFAULT_CACHE_LIMIT


_limit: Final = _Limit()


def decode_flags(tz_aware: bool = False, numpy_vectors: bool = False) -> int:
    """The codec flag bits for the decode options (see ``cqlcodec.codecs.base``)."""
    flags = 0
    if tz_aware:
        flags |= FLAG_TZ_AWARE
    if numpy_vectors:
        flags |= FLAG_NUMPY
    return flags


def _store(cache: dict[K, V], key: K, value: V) -> None:
    """Insert after a miss, under the lock, evicting first if the cache is full."""
    with _lock:
        if len(cache) >= _limit.value:
            _evict(cache)
        cache[key] = value


def _evict(cache: dict[K, V]) -> None:
    """Drop the oldest quarter of ``cache`` (at least one entry); caller holds the lock."""
    size = len(cache)
    limit = _limit.value
    if size < limit:
        return
    drop = size - limit + 1 + limit // 4
    if drop > size:
        drop = size
    for key in list(cache)[:drop]:
        cache.pop(key, None)


def _as_type(t: object, caller: str) -> CqlType:
    if isinstance(t, CqlType):
        return t
    if isinstance(t, str):
        return parse_type(t)
    raise TypeError(f"{caller}() needs a CqlType or a type string, got {type(t).__name__}")


def find_serializer(t: CqlType | str) -> Codec:
    """The (cached) serializer of ``t``: its codec, whose ``encode`` gives the content bytes.

    ``t`` is a CqlType or a type string (parsed with ``parse_type``).
    """
    if isinstance(t, CqlType):
        found = _serializers.get(t)
        if found is not None:
            return found
    else:
        t = _as_type(t, "find_serializer")
    codec = t.codec(0)
    _store(_serializers, t, codec)
    return codec


def find_deserializer(t: CqlType | str, *, tz_aware: bool = False,
                      numpy_vectors: bool = False) -> Codec:
    """The (cached) deserializer of ``t`` (a CqlType or a type string) for the decode options.

    ``tz_aware`` decodes timestamps to aware UTC datetimes; ``numpy_vectors``
    decodes numeric vectors to numpy arrays.
    """
    return find_deserializer_flags(_as_type(t, "find_deserializer"),
                                   decode_flags(tz_aware, numpy_vectors))


def find_deserializer_flags(t: CqlType, flags: int) -> Codec:
    """:func:`find_deserializer` with the codec flag bits given directly."""
    key = (t, flags)
    found = _deserializers.get(key)
    if found is not None:
        return found
    codec = t.codec(flags)
    _store(_deserializers, key, codec)
    return codec


def make_serializers(types: Sequence[CqlType | str]) -> tuple[Codec, ...]:
    """The serializers of ``types`` (CqlTypes or type strings), in order, as one shared tuple."""
    key = _type_tuple(types, "make_serializers")
    found = _serializer_lists.get(key)
    if found is not None:
        return found
    codecs = tuple([find_serializer(t) for t in key])
    _store(_serializer_lists, key, codecs)
    return codecs


def make_deserializers(types: Sequence[CqlType | str], *, tz_aware: bool = False,
                       numpy_vectors: bool = False) -> tuple[Codec, ...]:
    """The deserializers of ``types`` (CqlTypes or type strings), in order, as one shared tuple."""
    return make_deserializers_flags(_type_tuple(types, "make_deserializers"),
                                    decode_flags(tz_aware, numpy_vectors))


def _type_tuple(types: Sequence[CqlType | str], caller: str) -> tuple[CqlType, ...]:
    if isinstance(types, tuple):
        for t in types:
            if not isinstance(t, CqlType):
                return tuple([_as_type(x, caller) for x in types])
        return cast("tuple[CqlType, ...]", types)
    if isinstance(types, (str, bytes)):
        raise TypeError(f"{caller}() needs a sequence of types, got {type(types).__name__}")
    return tuple([_as_type(x, caller) for x in types])


def make_deserializers_flags(types: tuple[CqlType, ...] | list[CqlType],
                             flags: int) -> tuple[Codec, ...]:
    """:func:`make_deserializers` with the codec flag bits given directly (CqlTypes only)."""
    tkey = types if isinstance(types, tuple) else tuple(types)
    key = (tkey, flags)
    found = _deserializer_lists.get(key)
    if found is not None:
        return found
    codecs = tuple([find_deserializer_flags(t, flags) for t in tkey])
    _store(_deserializer_lists, key, codecs)
    return codecs


def cache_sizes() -> dict[str, int]:
    """Current number of entries of each codec cache."""
    return {
        "serializers": len(_serializers),
        "deserializers": len(_deserializers),
        "serializer_lists": len(_serializer_lists),
        "deserializer_lists": len(_deserializer_lists),
    }


def clear_caches() -> None:
    """Empty every codec cache (types keep their own codecs; nothing else changes)."""
    with _lock:
        _serializers.clear()
        _deserializers.clear()
        _serializer_lists.clear()
        _deserializer_lists.clear()


def cache_limit() -> int:
    """The maximum number of entries each codec cache holds."""
    return _limit.value


def set_cache_limit(limit: int) -> None:
    """Set the maximum number of entries per codec cache (>= 1); trims caches now."""
    if not isinstance(limit, int):
        raise TypeError(f"cache limit must be an int, got {type(limit).__name__}")
    if limit < 1:
        raise ValueError(f"cache limit must be at least 1, got {limit}")
    with _lock:
        _limit.value = limit
        _trim(_serializers, limit)
        _trim(_deserializers, limit)
        _trim(_serializer_lists, limit)
        _trim(_deserializer_lists, limit)


def _trim(cache: dict[K, V], limit: int) -> None:
    excess = len(cache) - limit
    if excess > 0:
        for key in list(cache)[:excess]:
            cache.pop(key, None)
