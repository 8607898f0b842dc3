"""The bounded serializer / deserializer caches."""

from __future__ import annotations

import threading
from typing import Iterator

import pytest

import cqlcodec
from cqlcodec import (
    cache_limit,
    cache_sizes,
    clear_caches,
    find_deserializer,
    find_serializer,
    make_deserializers,
    make_serializers,
    parse_type,
    set_cache_limit,
)


@pytest.fixture(autouse=True)
def _restore_limit() -> Iterator[None]:
    old = cache_limit()
    yield
    set_cache_limit(old)


def test_default_limit() -> None:
    from cqlcodec.codecs.cache import DEFAULT_CACHE_LIMIT

    assert DEFAULT_CACHE_LIMIT == 256
    assert cache_limit() >= 1


def test_find_serializer_is_cached_and_correct() -> None:
    t = parse_type("map<text, int>")
    s = find_serializer(t)
    assert find_serializer(t) is s
    assert find_serializer("map<text, int>") is s
    assert s.encode({"a": 1}) == t.serialize({"a": 1})


def test_find_deserializer_keys_on_flags() -> None:
    t = parse_type("timestamp")
    naive = find_deserializer(t)
    aware = find_deserializer(t, tz_aware=True)
    assert naive is not aware
    assert find_deserializer(t) is naive and find_deserializer(t, tz_aware=True) is aware
    data = t.serialize(0)
    assert naive.decode(data, 0, 8).tzinfo is None  # type: ignore[attr-defined]
    assert aware.decode(data, 0, 8).tzinfo is not None  # type: ignore[attr-defined]


def test_parameterizations_never_collide() -> None:
    pairs = [("list<int>", "list<bigint>"), ("map<int, text>", "map<text, int>"),
             ("vector<float, 3>", "vector<float, 4>"), ("tuple<int>", "tuple<int, int>")]
    for a, b in pairs:
        assert find_serializer(a) is not find_serializer(b)
        assert find_deserializer(a) is not find_deserializer(b)
    u1 = cqlcodec.user_type("ks", "u", [("a", parse_type("int"))])
    u2 = cqlcodec.user_type("ks", "u", [("a", parse_type("text"))])
    assert find_serializer(u1).encode({"a": 1}) != find_serializer(u2).encode({"a": "x"})
    assert find_serializer(u1) is not find_serializer(u2)


def test_make_lists_are_shared_tuples() -> None:
    types = [parse_type("int"), parse_type("text")]
    ser = make_serializers(types)
    assert isinstance(ser, tuple) and len(ser) == 2
    assert make_serializers(tuple(types)) is ser
    assert make_serializers(["int", "text"]) is ser
    assert ser[0] is find_serializer(types[0])
    des = make_deserializers(types)
    assert make_deserializers(types) is des
    assert make_deserializers(types, numpy_vectors=True) is not des
    assert make_serializers([]) == ()


def test_bad_arguments() -> None:
    with pytest.raises(TypeError):
        find_serializer(5)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        make_serializers("int")
    with pytest.raises(cqlcodec.TypeParseError):
        find_deserializer("list<")
    for bad in (0, -1):
        with pytest.raises(ValueError):
            set_cache_limit(bad)
    for wrong in ("10", 2.0, None):
        with pytest.raises(TypeError):
            set_cache_limit(wrong)  # type: ignore[arg-type]


def test_sizes_and_clear() -> None:
    clear_caches()
    assert cache_sizes() == {"serializers": 0, "deserializers": 0, "serializer_lists": 0,
                             "deserializer_lists": 0}
    make_serializers(["int", "bigint"])
    make_deserializers(["int"])
    sizes = cache_sizes()
    assert sizes["serializers"] == 2 and sizes["serializer_lists"] == 1
    assert sizes["deserializers"] == 1 and sizes["deserializer_lists"] == 1
    clear_caches()
    assert sum(cache_sizes().values()) == 0


def _many_types(n: int) -> list[cqlcodec.CqlType]:
    return [parse_type(f"vector<int, {i + 1}>") for i in range(n)]


def test_caches_are_bounded_without_clearing_everything() -> None:
    clear_caches()
    set_cache_limit(16)
    types = _many_types(100)
    for i, t in enumerate(types):
        find_serializer(t)
        find_deserializer(t)
        make_serializers([t])
        make_deserializers(types[i: i + 2])
        sizes = cache_sizes()
        assert all(size <= 16 for size in sizes.values()), sizes
    sizes = cache_sizes()
    assert all(size >= 16 * 3 // 4 - 1 for size in sizes.values()), sizes
    # the newest entries survive eviction
    last = find_serializer(types[-1])
    assert find_serializer(types[-1]) is last


def test_lowering_the_limit_trims() -> None:
    clear_caches()
    for t in _many_types(20):
        find_serializer(t)
    set_cache_limit(5)
    assert cache_sizes()["serializers"] == 5


def test_threads_hammering_a_small_cache() -> None:
    clear_caches()
    set_cache_limit(8)
    types = _many_types(40)
    errors: list[BaseException] = []

    def work(offset: int) -> None:
        try:
            for k in range(400):
                t = types[(k * 7 + offset) % len(types)]
                assert find_deserializer(t).cql_name == t.cql_name
                assert make_serializers([t, types[0]])[0].cql_name == t.cql_name
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
    assert all(size <= 8 for size in cache_sizes().values())
