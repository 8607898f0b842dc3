"""Concurrency: caches, bind and decode used from 8 threads at once.

One thread first computes every answer of a mixed workload (deserialize,
serialize, cache lookups by type and by type text, bind, RESULT decoding with
and without a prepared statement's cached parse description, UDT values).
Then 8 threads released together by a barrier run the same workload in
different orders, with the thread switch interval cut to a microsecond, while
one of them keeps shrinking, growing and clearing the caches.  Every answer
must equal the single-thread one, and no cache may ever hold more entries than
its limit.
"""

from __future__ import annotations

import random
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest
from fuzz import bodies as B
from fuzz.model import gen_value_bytes, normalize, random_type
from fuzz.targets import result_form

import cqlcodec
from cqlcodec import CqlType

THREADS = 8
SEED = 20240517
Work = Callable[[], object]


def _outcome(fn: Work) -> object:
    try:
        return ("ok", fn())
    except cqlcodec.CodecError as exc:
        return ("error", type(exc).__name__, str(exc))


def _workload() -> list[tuple[str, Work]]:
    rng = random.Random(SEED)
    work: list[tuple[str, Work]] = []
    for i in range(60):
        t = random_type(rng, 3)
        data, _slots, _v = gen_value_bytes(rng, t)
        tz = i % 3 == 0
        value = t.deserialize(data, tz_aware=tz)

        def de(t: CqlType = t, data: bytes = data, tz: bool = tz) -> object:
            return normalize(t, t.deserialize(data, tz_aware=tz))

        def ser(t: CqlType = t, value: object = value) -> object:
            return t.serialize(value)

        def by_text(t: CqlType = t, data: bytes = data) -> object:
            codec = cqlcodec.find_deserializer(t.cql_name)
            return normalize(t, codec.decode(data, 0, len(data)))

        def lists(t: CqlType = t, data: bytes = data) -> object:
            codecs = cqlcodec.make_deserializers([t, t.cql_name])
            return [normalize(t, c.decode(data, 0, len(data))) for c in codecs]

        def enc(t: CqlType = t, value: object = value) -> object:
            return cqlcodec.make_serializers([t])[0].encode(value)

        work += [(f"deserialize {t}", de), (f"serialize {t}", ser), (f"by text {t}", by_text),
                 (f"lists {t}", lists), (f"find_serializer {t}", enc)]
    for pv in (3, 4, 5):
        for _i in range(8):
            cols = B.random_columns(rng, rng.choice([1, 2, 3]), "ks", "t")
            pbody = B.gen_prepared_body(rng, pv, False, cols)
            prepared = cqlcodec.decode_prepared(pbody.data, pv)
            rows = B.gen_rows_body(rng, pv, cols, no_metadata=True).data
            inline = B.gen_rows_body(rng, pv).data
            first = cqlcodec.decode_result(rows, pv, prepared)
            assert isinstance(first, cqlcodec.RowsResult)
            bind_values = [row[i % len(row)] for i, row in enumerate(first.rows * 4)][
                : len(prepared.bind_columns)] if first.rows else []

            def rows_cached(rows: bytes = rows, pv: int = pv, p: cqlcodec.Prepared = prepared,
                            tz: bool = False) -> object:
                return result_form(cqlcodec.decode_result(rows, pv, p, tz_aware=tz))

            def rows_aware(rows: bytes = rows, pv: int = pv, p: cqlcodec.Prepared = prepared) -> object:
                # a different decode option on the same Prepared replaces its cached description
                return rows_cached(rows, pv, p, True)

            def rows_inline(inline: bytes = inline, pv: int = pv) -> object:
                return result_form(cqlcodec.decode_result(inline, pv))

            def bind(p: cqlcodec.Prepared = prepared, values: list[object] = bind_values) -> object:
                bound = p.bind(values)
                key: object
                try:
                    key = bound.routing_key
                except cqlcodec.CodecError as exc:
                    key = type(exc).__name__
                return (bound.values, key)

            work += [(f"rows v{pv}", rows_cached), (f"rows tz v{pv}", rows_aware),
                     (f"inline rows v{pv}", rows_inline), (f"bind v{pv}", bind)]
    return work


@contextmanager
def _fast_switching() -> Iterator[None]:
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(old)


def test_eight_threads_get_the_single_thread_answers_and_caches_stay_bounded() -> None:
    work = _workload()
    cqlcodec.clear_caches()
    expected = [_outcome(fn) for _name, fn in work]
    limit = cqlcodec.cache_limit()
    barrier = threading.Barrier(THREADS + 1)
    problems: list[str] = []
    max_sizes: dict[str, int] = {}
    stop = threading.Event()
    deadline = time.monotonic() + 5.0

    def worker(index: int) -> None:
        rng = random.Random(index)
        order = list(range(len(work)))
        barrier.wait()
        rounds = 0
        while time.monotonic() < deadline and rounds < 25:
            rng.shuffle(order)
            for i in order:
                name, fn = work[i]
                got = _outcome(fn)
                if got != expected[i]:
                    problems.append(f"thread {index}, {name}: {str(got)[:300]} != "
                                    f"{str(expected[i])[:300]}")
                if index == 0 and rng.random() < 0.02:
                    cqlcodec.set_cache_limit(rng.choice([1, 2, 8, limit]))
                    if rng.random() < 0.3:
                        cqlcodec.clear_caches()
            rounds += 1

    def monitor() -> None:
        barrier.wait()
        while not stop.is_set():
            current = cqlcodec.cache_limit()
            for cache, size in cqlcodec.cache_sizes().items():
                # the limit may just have been lowered: judge against the larger of the two
                bound = max(current, cqlcodec.cache_limit(), limit)
                if size > bound:
                    problems.append(f"cache {cache} holds {size} entries, limit {bound}")
                max_sizes[cache] = max(max_sizes.get(cache, 0), size)
            time.sleep(0.0005)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(THREADS)]
    watcher = threading.Thread(target=monitor)
    try:
        with _fast_switching():
            for th in threads + [watcher]:
                th.start()
            for th in threads:
                th.join(timeout=60)
            stop.set()
            watcher.join(timeout=10)
    finally:
        cqlcodec.set_cache_limit(limit)
    assert not any(th.is_alive() for th in threads), "a worker thread hung"
    assert not problems, f"{len(problems)} problems, first ones:\n" + "\n".join(problems[:10])
    for cache, size in cqlcodec.cache_sizes().items():
        assert size <= limit, (cache, size)


def test_caches_hold_at_most_their_limit_under_concurrent_misses() -> None:
    """16 threads missing the serializer cache at once, 60 times over, with limit 1.

    Found by this test (fixed): the size check and the insert were outside the lock, so
    in the interpreted build two threads that missed at once both inserted.
    """
    rng = random.Random(SEED)
    types = list({random_type(rng, 2) for _i in range(1000)})
    for t in types:
        t.codec()  # built in advance: what races is the cache code itself
    limit = cqlcodec.cache_limit()
    worst = 0
    try:
        with _fast_switching():
            for _attempt in range(60):
                cqlcodec.clear_caches()
                cqlcodec.set_cache_limit(1)
                seen: list[int] = []
                barrier = threading.Barrier(16)

                def worker(index: int, barrier: threading.Barrier = barrier,
                           seen: list[int] = seen) -> None:
                    barrier.wait()
                    for t in types[index * 40:(index + 1) * 40]:
                        cqlcodec.find_serializer(t)
                        seen.append(cqlcodec.cache_sizes()["serializers"])

                threads = [threading.Thread(target=worker, args=(i,)) for i in range(16)]
                for th in threads:
                    th.start()
                for th in threads:
                    th.join(timeout=60)
                worst = max(worst, *seen)
                if worst > 1:
                    break
    finally:
        cqlcodec.set_cache_limit(limit)
    assert worst <= 1, f"the serializer cache held {worst} entries with a limit of 1"


@pytest.mark.parametrize("threads", [THREADS])
def test_udt_values_decoded_in_threads_are_one_class(threads: int) -> None:
    """Fresh UDT types decoded concurrently give values of one class per type, equal to each other."""
    types = [cqlcodec.user_type("ks", f"thr{i}_{time.monotonic_ns()}", [("a", cqlcodec.scalar_type(9))])
             for i in range(50)]
    data = b"\x00\x00\x00\x04\x00\x00\x00\x07"
    out: list[list[object]] = [[] for _i in range(threads)]
    barrier = threading.Barrier(threads)

    def worker(index: int) -> None:
        barrier.wait()
        for t in types:
            out[index].append(t.deserialize(data))

    with _fast_switching():
        ths = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
        for th in ths:
            th.start()
        for th in ths:
            th.join(timeout=60)
    for i in range(len(types)):
        values = [o[i] for o in out]
        assert len({type(v) for v in values}) == 1, [type(v) for v in values]
        assert all(v == values[0] for v in values)
