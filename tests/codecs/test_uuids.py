"""Scalar codecs: uuid and timeuuid (cqlcodec.codecs.uuids)."""

from __future__ import annotations

import uuid

import pytest
from scalar_checks import check, dec, enc, encode_error

from cqlcodec.errors import EncodeTypeError, EncodeValueError

# --- uuid, timeuuid ---------------------------------------------------------------------------

def test_uuid_vectors() -> None:
    u = uuid.UUID("3f2504e0-4f89-11d3-9a0c-0305e82c3301")
    check("uuid", u, "3f2504e04f8911d39a0c0305e82c3301")
    check("uuid", uuid.UUID(int=0), "00" * 16)
    check("uuid", uuid.UUID(int=2**128 - 1), "ff" * 16)
    v4 = uuid.UUID("c2cd1d8e-6a7a-4c8e-9f5e-3d3b1c2f8a77")
    check("uuid", v4, "c2cd1d8e6a7a4c8e9f5e3d3b1c2f8a77")


def test_decoded_uuid_is_a_complete_uuid() -> None:
    import copy
    import pickle

    data = bytes.fromhex("3f2504e04f8911d39a0c0305e82c3301")
    got = dec("uuid", data)
    ref = uuid.UUID(bytes=data)
    assert type(got) is uuid.UUID
    assert got == ref and hash(got) == hash(ref) and str(got) == str(ref)
    assert got.is_safe is ref.is_safe
    assert got.version == 1 and got.time == ref.time
    assert pickle.loads(pickle.dumps(got)) == ref
    assert copy.deepcopy(got) == ref
    with pytest.raises(TypeError):
        got.int = 5  # type: ignore[misc]


def test_uuid_errors() -> None:
    for name in ("uuid", "timeuuid"):
        for bad in ("3f2504e0-4f89-11d3-9a0c-0305e82c3301", b"\x00" * 16, 5, None):
            encode_error(name, bad, EncodeTypeError)


def test_timeuuid_requires_version_1() -> None:
    v1 = uuid.UUID("3f2504e0-4f89-11d3-9a0c-0305e82c3301")
    check("timeuuid", v1, "3f2504e04f8911d39a0c0305e82c3301")
    t = uuid.uuid1()
    assert enc("timeuuid", t) == t.bytes
    encode_error("timeuuid", uuid.uuid4(), EncodeValueError, "version 1")
    encode_error("timeuuid", uuid.UUID(int=0), EncodeValueError, "version 1")
    # version nibble 1 but not the RFC 4122 variant
    encode_error("timeuuid", uuid.UUID("3f2504e0-4f89-11d3-1a0c-0305e82c3301"), EncodeValueError)
    # decoding does not judge what the server stored
    assert dec("timeuuid", uuid.UUID(int=5).bytes) == uuid.UUID(int=5)
