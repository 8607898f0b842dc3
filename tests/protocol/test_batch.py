"""BATCH statements of bound rows, grouping and cutting: against the driver's own BATCH
encoding (the oracle) and against plain reference implementations."""

from __future__ import annotations

import hashlib
import io
from bisect import bisect_left
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cqlcodec import UNSET, ColumnSpec, Prepared, parse_type
from cqlcodec.protocol.batch import (
    NO_KEY,
    batch_statements,
    key_slots,
    plan_batches,
    ring_slots,
    value_bytes,
)
from cqlcodec.protocol.prepared import Bound

cassandra = pytest.importorskip("cassandra")
from cassandra.protocol import BatchMessage  # noqa: E402
from cassandra.query import UNSET_VALUE, BatchType  # noqa: E402

from cqlcodec.driver.sender import _EncodedBatchMessage  # noqa: E402

QUERY_ID = b"\x01\x02query-id\xff"


def token_of(key: bytes) -> int:
    """A stand-in partitioner: any hash of the key to a signed 64-bit token."""
    return int.from_bytes(hashlib.sha256(key).digest()[:8], "big", signed=True)


def prepared(protocol_version: int = 4, pk: tuple[int, ...] = (0,)) -> Prepared:
    cols = [("k", "bigint"), ("c", "text"), ("v", "blob")]
    return Prepared([ColumnSpec("ks", "t", n, parse_type(c)) for n, c in cols], (), pk,
                    protocol_version)


values_strategy = st.lists(
    st.tuples(st.integers(-2**63, 2**63 - 1),
              st.one_of(st.none(), st.just(UNSET), st.text(max_size=20)),
              st.one_of(st.none(), st.just(UNSET), st.binary(max_size=40))),
    min_size=1, max_size=30)


def bound_rows(p: Prepared, rows: list[tuple[Any, ...]]) -> list[Bound]:
    return [p.bind(list(r)) for r in rows]


def driver_values(b: Bound) -> list[Any]:
    return [UNSET_VALUE if v is UNSET else v for v in b.values]


def driver_body(message: Any, protocol_version: int) -> bytes:
    f = io.BytesIO()
    message.send_body(f, protocol_version)
    return f.getvalue()


@settings(max_examples=60)
@given(values_strategy, st.sampled_from([3, 4, 5]), st.booleans())
def test_encoded_batches_are_the_drivers_bytes(rows: list[tuple[Any, ...]], pv: int,
                                               extras: bool) -> None:
    if pv < 4:  # unset values came with protocol v4
        rows = [tuple(None if v is UNSET else v for v in r) for r in rows]
    bounds = bound_rows(prepared(pv), rows)
    picks = list(range(len(bounds)))[::-1]  # any order of any rows
    theirs = BatchMessage(BatchType.UNLOGGED, [(True, QUERY_ID, driver_values(bounds[i]))
                                               for i in picks],
                          consistency_level=6, serial_consistency_level=9 if extras else None,
                          timestamp=1_700_000_000_123_456 if extras else None,
                          keyspace="ks" if extras and pv >= 5 else None)
    ours = _EncodedBatchMessage(BatchType.UNLOGGED,
                                batch_statements(QUERY_ID, [bounds[i] for i in picks]),
                                consistency_level=6,
                                serial_consistency_level=9 if extras else None,
                                timestamp=1_700_000_000_123_456 if extras else None,
                                keyspace="ks" if extras and pv >= 5 else None)
    assert driver_body(ours, pv) == driver_body(theirs, pv)


def test_batch_statements_limits() -> None:
    bounds = bound_rows(prepared(), [(1, "a", b"b")])
    assert batch_statements(QUERY_ID, []) == b"\x00\x00"
    with pytest.raises(cassandra_free_bind_error()):
        batch_statements(QUERY_ID, bounds * 65536)
    with pytest.raises(cassandra_free_bind_error()):
        batch_statements(b"x" * 65536, bounds)


def cassandra_free_bind_error() -> type[Exception]:
    from cqlcodec import BindValueError

    return BindValueError


@settings(max_examples=60)
@given(st.lists(st.integers(-2**63 + 1, 2**63 - 1), min_size=1, max_size=12, unique=True),
       st.lists(st.one_of(st.none(), st.integers(-2**63, 2**63 - 1)), max_size=40))
def test_ring_slots_find_the_owning_range(ring: list[int], keys: list[int | None]) -> None:
    ring.sort()
    owners = [i * 10 for i in range(len(ring))]
    p = prepared()
    bounds = [p.bind([k, "x", b""]) for k in keys]
    got = ring_slots(bounds, token_of, ring, owners)
    want = []
    for b in bounds:
        if b.values[0] is None:
            want.append(NO_KEY)
            continue
        key = b.routing_key
        assert key is not None
        token = token_of(key)
        at = bisect_left(ring, token)
        want.append(owners[at if at < len(ring) else 0])
    assert got == want


def test_key_slots_share_a_number_per_partition() -> None:
    p = prepared(pk=(0, 1))
    bounds = [p.bind(r) for r in ([1, "a", b""], [2, "a", b""], [1, "a", b"x"], [1, None, b""],
                                  [2, "a", None])]
    assert key_slots(bounds) == [0, 1, 0, NO_KEY, 1]
    assert key_slots([]) == []


def test_value_bytes() -> None:
    p = prepared()
    bounds = [p.bind(r) for r in ([1, "abc", b"12"], [1, None, None], [1, UNSET, b""])]
    assert value_bytes(bounds) == [8 + 3 + 2, 8, -1]


@settings(max_examples=200)
@given(st.lists(st.tuples(st.integers(-1, 4), st.integers(0, 100)), max_size=60),
       st.integers(1, 250))
def test_plan_batches_cuts_each_slot_within_the_budget(rows: list[tuple[int, int]],
                                                       budget: int) -> None:
    slots = [s for s, _ in rows]
    sizes = [n for _, n in rows]
    batches = plan_batches(slots, sizes, budget)
    flat = [i for batch in batches for i in batch]
    assert sorted(flat) == [i for i, s in enumerate(slots) if s != NO_KEY]  # each row once
    for batch in batches:
        assert batch == sorted(batch) and len({slots[i] for i in batch}) == 1
        assert len(batch) == 1 or sum(sizes[i] for i in batch) <= budget
    firsts = [slots[b[0]] for b in batches]
    seen = [s for i, s in enumerate(slots) if s != NO_KEY and s not in slots[:i]]
    assert list(dict.fromkeys(firsts)) == seen  # slots in the order they first appear
