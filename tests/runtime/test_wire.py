"""The vint helpers of cqlcodec.runtime.wire: [unsigned vint] and zigzag [vint], spec section 1."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cqlcodec.errors import DecodeError
from cqlcodec.runtime.buffers import BytesWriter
from cqlcodec.runtime.wire import read_uvint, read_vint, uvint_size, write_uvint, zigzag

# spec section 1 tables plus every length boundary: 2**(7k) - 1 and 2**(7k)
UVINT_VECTORS: list[tuple[int, str]] = [
    (0, "00"),
    (1, "01"),
    (127, "7f"),
    (128, "8080"),
    (255, "80ff"),
    (16383, "bfff"),
    (16384, "c04000"),
    (2**21 - 1, "dfffff"),
    (2**21, "e0200000"),
    (2**28 - 1, "efffffff"),
    (2**28, "f010000000"),
    (2**35 - 1, "f7ffffffff"),
    (2**35, "f80800000000"),
    (2**42 - 1, "fbffffffffff"),
    (2**42, "fc0400000000" "00"),
    (2**49 - 1, "fdffffffffffff"),
    (2**49, "fe020000000000" "00"),
    (2**56 - 1, "feffffffffffffff"),
    (2**56, "ff0100000000000000"),
    (2**63, "ff8000000000000000"),
    (2**64 - 1, "ff" + "ff" * 8),
]

VINT_VECTORS: list[tuple[int, str]] = [
    (0, "00"),
    (-1, "01"),
    (1, "02"),
    (63, "7e"),
    (-64, "7f"),
    (64, "8080"),
    (-65, "8081"),
    (2**31 - 1, "f0fffffffe"),
    (-(2**31), "f0ffffffff"),
    (2**63 - 1, "ff" + "ff" * 7 + "fe"),
    (-(2**63), "ff" + "ff" * 8),
]


def _write(value: int) -> bytes:
    w = BytesWriter()
    write_uvint(w, value)
    return w.getvalue()


@pytest.mark.parametrize(("value", "hexed"), UVINT_VECTORS)
def test_uvint_vectors(value: int, hexed: str) -> None:
    data = bytes.fromhex(hexed)
    assert _write(value) == data
    assert uvint_size(value) == len(data)
    assert read_uvint(data, 0, len(data), "t") == (value, len(data))


@pytest.mark.parametrize(("value", "hexed"), VINT_VECTORS)
def test_vint_vectors(value: int, hexed: str) -> None:
    data = bytes.fromhex(hexed)
    assert _write(zigzag(value)) == data
    assert read_vint(data, 0, len(data), "t") == (value, len(data))


def test_uvint_reads_at_an_offset_and_stops_at_its_end() -> None:
    data = b"\xaa\xaa" + bytes.fromhex("c04000") + b"\x07"
    assert read_uvint(data, 2, len(data), "t") == (16384, 5)
    assert read_uvint(data, 5, len(data), "t") == (7, 6)


def test_uvint_accepts_non_minimal_encodings() -> None:
    # Cassandra's reader does not insist on the shortest form
    assert read_uvint(bytes.fromhex("8001"), 0, 2, "t") == (1, 2)
    assert read_uvint(bytes.fromhex("ff0000000000000001"), 0, 9, "t") == (1, 9)


@pytest.mark.parametrize("hexed", ["", "80", "c040", "ff" + "ff" * 7, "fe" + "00" * 6])
def test_truncated_uvint_raises_decode_error(hexed: str) -> None:
    data = bytes.fromhex(hexed)
    with pytest.raises(DecodeError, match="what-is-read"):
        read_uvint(data, 0, len(data), "what-is-read")


def test_uvint_respects_end_before_the_buffer_end() -> None:
    data = bytes.fromhex("c04000")
    with pytest.raises(DecodeError) as info:
        read_uvint(data, 0, 2, "t")
    assert info.value.offset == 0
    with pytest.raises(DecodeError) as info:
        read_uvint(b"\x00\x00\x80", 2, 3, "t")
    assert info.value.offset == 2


@given(st.integers(min_value=0, max_value=2**64 - 1))
def test_uvint_round_trip(value: int) -> None:
    data = _write(value)
    assert len(data) == uvint_size(value)
    assert read_uvint(data, 0, len(data), "t") == (value, len(data))
    # the first byte's leading ones count the extra bytes
    first = data[0]
    extra = 0
    while extra < 8 and first & (0x80 >> extra):
        extra += 1
    assert len(data) == extra + 1


@given(st.integers(min_value=-(2**63), max_value=2**63 - 1))
def test_vint_round_trip(value: int) -> None:
    z = zigzag(value)
    assert 0 <= z < 2**64
    assert z == (value << 1 if value >= 0 else ((-value) << 1) - 1)
    data = _write(z)
    assert read_vint(data, 0, len(data), "t") == (value, len(data))


@given(st.integers(min_value=0, max_value=2**64 - 1))
def test_uvint_size_is_minimal(value: int) -> None:
    size = uvint_size(value)
    capacity = 64 if size == 9 else 7 * size
    assert value < 2**capacity
    if size > 1:
        assert value >= 2 ** (7 * (size - 1))
