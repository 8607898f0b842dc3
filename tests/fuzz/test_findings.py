"""Reproducers of problems the fuzzer found in cqlcodec.

Each test states the guarantee that must hold.  While the owning module is not
fixed the test is marked ``xfail(strict=True)`` with the reason, so it turns into
an XPASS failure the moment the fix lands (then drop the marker and the entry
in ``test_fuzz.KNOWN``).
"""

from __future__ import annotations

import struct
import time
import uuid
from collections.abc import Callable

import pytest

import cqlcodec
from cqlcodec import frozen, map_of, scalar_type, set_of, vector_of
from cqlcodec import kinds as K

HASH_MODULUS = (1 << 61) - 1  # CPython: hash(n) == n % (2**61 - 1) for ints, and so for UUIDs


def _collection(elements: list[bytes]) -> bytes:
    return struct.pack(">i", len(elements)) + b"".join(
        struct.pack(">i", len(e)) + e for e in elements)


def _varint(n: int) -> bytes:
    return n.to_bytes((n.bit_length() + 8) // 8, "big", signed=True)


def test_variable_vector_element_length_beyond_int64_is_a_decode_error() -> None:
    """Found by the fuzzer (fixed): compiled, this raised ValueError('int too large to
    convert to i64') from _vector.VariableVectorCodec.decode."""
    t = vector_of(scalar_type(K.TINYINT), 2)
    data = bytes.fromhex("ff8000000000000000") + b"\x01"  # uvint 2**63, then one byte
    with pytest.raises(cqlcodec.DecodeError):
        t.deserialize(data)
    with pytest.raises(cqlcodec.DecodeError):
        t.deserialize(b"\xff" * 9 + b"\x01")  # uvint 2**64 - 1


def _decode_seconds(t: cqlcodec.CqlType, data: bytes) -> float:
    """Best thread CPU time of three decodes (other processes do not count); a DecodeError
    counts as a finished decode."""
    best = float("inf")
    for _i in range(3):
        t0 = time.thread_time()
        try:
            t.deserialize(data)
        except cqlcodec.DecodeError:
            pass
        best = min(best, time.thread_time() - t0)
    return best


def _assert_linear(t: cqlcodec.CqlType, colliding: Callable[[int], bytes],
                   ordinary: Callable[[int], bytes], n: int) -> None:
    """4x the colliding elements may cost ~4x (not 16x), and not much more than ordinary ones."""
    small, large = _decode_seconds(t, colliding(n)), _decode_seconds(t, colliding(4 * n))
    usual = _decode_seconds(t, ordinary(4 * n))
    assert large < 8 * small + 0.002, f"{small:.4f} s for {n} elements, {large:.4f} s for {4 * n}"
    assert large < 15 * usual + 0.005, f"{large:.4f} s colliding vs {usual:.4f} s ordinary"


def _uuids(ints: list[int]) -> bytes:
    return _collection([uuid.UUID(int=k).bytes for k in ints])


def test_set_of_uuids_with_colliding_hashes_decodes_in_linear_time() -> None:
    """Found in session 1 (fixed): a server or proxy can send set<uuid> elements that all
    hash alike (ints congruent modulo 2**61-1); 4000 of them (80 kB) took ~0.4 s, 16000
    ~7 s. Now more than 64 distinct elements sharing a hash are refused at once."""
    t = set_of(scalar_type(K.UUID))
    _assert_linear(t, lambda n: _uuids([k * HASH_MODULUS for k in range(1, n + 1)]),
                   lambda n: _uuids([k * 7919 + (k << 70) for k in range(1, n + 1)]), 1000)
    with pytest.raises(cqlcodec.DecodeError, match=r"more than 64 elements share one hash"):
        t.deserialize(_uuids([k * HASH_MODULUS for k in range(1, 66)]))


def test_hash_groups_up_to_the_limit_and_repeated_elements_still_decode() -> None:
    t = set_of(scalar_type(K.UUID))
    group = [k * HASH_MODULUS for k in range(1, 65)]
    others = [k * 7919 + (k << 70) for k in range(1, 200)]
    assert t.deserialize(_uuids(group + others)) == {uuid.UUID(int=k) for k in group + others}
    repeated = [HASH_MODULUS] * 500 + group
    assert t.deserialize(_uuids(repeated)) == {uuid.UUID(int=k) for k in group}
    # frozensets hash through their elements' hashes, so {k * 2**61-1} all collide too
    nested = set_of(frozen(set_of(scalar_type(K.VARINT))))
    with pytest.raises(cqlcodec.DecodeError, match="hash flooding"):
        nested.deserialize(_collection([_collection([_varint(k * HASH_MODULUS)])
                                        for k in range(1, 70)]))


def test_map_with_varint_keys_with_colliding_hashes_decodes_in_linear_time() -> None:
    t = map_of(scalar_type(K.VARINT), scalar_type(K.INT))
    one = struct.pack(">i", 4) + struct.pack(">i", 1)

    def body(keys: list[int]) -> bytes:
        return struct.pack(">i", len(keys)) + b"".join(
            struct.pack(">i", len(_varint(k))) + _varint(k) + one for k in keys)

    _assert_linear(t, lambda n: body([k * HASH_MODULUS for k in range(1, n + 1)]),
                   lambda n: body([k * HASH_MODULUS + k for k in range(1, n + 1)]), 1000)
    with pytest.raises(cqlcodec.DecodeError, match=r"more than 64 keys share one hash"):
        t.deserialize(body([k * HASH_MODULUS for k in range(1, 100)]))
