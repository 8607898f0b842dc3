"""Large frame bodies filled in place: ordinary ``bytes``, the same frames in any chunking,
the socket's buffers dropped as they come, errors found while filling raised where the
connection handles them."""

from __future__ import annotations

import random
import sys
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cqlcodec.connection import FrameReassembler
from cqlcodec.connection.large_bodies import FILL_FROM, copy_into, fills_in_place, new_body
from cqlcodec.connection.reassembler import CRC32_SEED, crc24
from cqlcodec.errors import FramingError

needs_fill = pytest.mark.skipif(not fills_in_place(), reason="bodies are joined here (no ctypes)")


def _frame(version: int, stream: int, body: bytes) -> bytes:
    return (bytes([0x80 | version, 0]) + stream.to_bytes(2, "big") + bytes([8])
            + len(body).to_bytes(4, "big") + body)


def _segments(stream: bytes, size: int) -> bytes:
    """``stream`` as uncompressed v5 segments of ``size`` bytes of payload (the last
    one shorter); none is marked self-contained."""
    out = []
    for at in range(0, len(stream), size):
        payload = stream[at:at + size]
        header = len(payload)
        out.append(header.to_bytes(3, "little") + crc24(header, 3).to_bytes(3, "little")
                   + payload + (zlib.crc32(payload, CRC32_SEED) & 0xFFFFFFFF).to_bytes(4, "little"))
    return b"".join(out)


@needs_fill
def test_a_body_made_in_place_is_an_ordinary_bytes() -> None:
    made = new_body(3 * FILL_FROM)
    assert made is not None
    body, address = made
    del made
    parts = [random.Random(i).randbytes(FILL_FROM) for i in range(3)]
    for i, part in enumerate(parts):
        copy_into(address + i * FILL_FROM, b"xx" + part + b"yy", 2, FILL_FROM)
    whole = b"".join(parts)
    assert type(body) is bytes and len(body) == len(whole)
    assert body == whole and hash(body) == hash(whole)
    assert body[FILL_FROM - 3:FILL_FROM + 3] == whole[FILL_FROM - 3:FILL_FROM + 3]
    assert sys.getrefcount(body) == sys.getrefcount(whole)  # nothing else holds it


def _cut(data: bytes, sizes: list[int], segments: bool, fill_from: int) -> tuple[list[bytes], int]:
    """The bodies cut from ``data`` in chunks of ``sizes`` (then 64 KiB), and the most
    bytes the reassembler held in the socket's buffers after any write while a body was
    being filled."""
    r = FrameReassembler((4, 5), fill_from)
    if segments:
        r.enable_segments(None)
    bodies: list[bytes] = []
    held = 0
    at = 0
    chunks = iter(sizes)
    while at < len(data):
        size = next(chunks, 65536)
        r.write(data[at:at + size])
        at += size
        if r._filled >= 0:
            held = max(held, r.raw.size + r.payloads.size)
        assert r.tell() > 0 or at >= len(data)
        while r.next_frame():
            assert type(r.body) is bytes
            bodies.append(r.body)
    assert r.tell() == 0
    return bodies, held


@given(sizes=st.lists(st.integers(0, 3000), min_size=1, max_size=8),
       chunks=st.lists(st.one_of(st.integers(1, 12), st.integers(1, 5000), st.just(1 << 20)),
                       max_size=40),
       fill_from=st.sampled_from([1, 64, 1000, FILL_FROM]),
       segment=st.sampled_from([0, 7, 300, 0x1FFFF]),
       seed=st.integers(0, 1 << 30))
@settings(max_examples=150, deadline=None)
def test_the_same_frames_in_any_chunking(sizes: list[int], chunks: list[int], fill_from: int,
                                         segment: int, seed: int) -> None:
    rng = random.Random(seed)
    bodies = [rng.randbytes(n) for n in sizes]
    stream = b"".join(_frame(5 if segment else 4, i, b) for i, b in enumerate(bodies))
    data = _segments(stream, segment) if segment else stream
    got, _held = _cut(data, chunks, segment > 0, fill_from)
    assert got == bodies


@needs_fill
@pytest.mark.parametrize("segment", [0, 0x1FFFF])
def test_the_socket_buffers_go_as_they_come(segment: int) -> None:
    body = random.Random(1).randbytes(4 * FILL_FROM)
    stream = _frame(5 if segment else 4, 3, body) + _frame(5 if segment else 4, 4, b"after")
    data = _segments(stream, segment) if segment else stream
    got, held = _cut(data, [], segment > 0, FILL_FROM)
    assert got == [body, b"after"]
    # at most one read (64 KiB): a segment's bytes go into the body before its checksum
    # arrives (the frame waits for the check), never the body so far
    assert held <= 65536
    joined, held = _cut(data, [], segment > 0, len(data) + 1)
    assert joined == got and held == 0  # (never filling: nothing measured)


@needs_fill
def test_a_broken_segment_met_while_filling_is_raised_by_next_frame() -> None:
    body = bytes(range(256)) * 200
    data = bytearray(_segments(_frame(5, 1, body), 5000))
    data[3 * 5010 + 100] ^= 0xFF  # the fourth segment's payload
    r = FrameReassembler((5,), 1000)
    r.enable_segments(None)
    r.write(bytes(data[:2000]))
    assert not r.next_frame()
    for at in range(2000, len(data), 4096):
        r.write(bytes(data[at:at + 4096]))  # never raises: the reactor expects socket errors
    assert r.tell() > 0
    with pytest.raises(FramingError, match="CRC mismatch on payload") as info:
        r.next_frame()
    assert info.value.checksum
    with pytest.raises(FramingError):  # the stream cannot go on
        r.next_frame()


@needs_fill
def test_a_body_too_large_for_memory_is_raised_by_next_frame() -> None:
    r = FrameReassembler((4,), 1)
    r.write(_frame(4, 1, b"")[:5] + (2**31 - 1).to_bytes(4, "big") + b"x")
    r.write(b"y")
    # 2 GiB may or may not be there: either the body is begun or the error waits
    if r._error is not None:
        assert r.tell() > 0
        with pytest.raises(MemoryError):
            r.next_frame()
    else:
        assert not r.next_frame() and r._filled == 2


def test_tell_counts_a_v4_body_begun_as_the_driver_does() -> None:
    """The reactors close the connection when ``tell()`` is 0 after a read: a body being
    filled keeps counting, as the bytes of a partial frame do in the driver's buffer."""
    r = FrameReassembler((4,), 16)
    frame = _frame(4, 1, bytes(100))
    r.write(frame[:60])
    assert not r.next_frame()
    assert r.tell() == 51
    r.write(b"")
    assert r.tell() == 51
    r.write(frame[60:])
    assert r.next_frame() and r.body == bytes(100)
    assert not r.next_frame() and r.tell() == 0


@needs_fill
@pytest.mark.parametrize("where", ["payload", "checksum"])
def test_a_body_whose_last_segment_is_broken_is_never_handed_out(where: str) -> None:
    """The last segment's bytes fill the body before its CRC32 arrives: the frame waits
    for the check, and a broken segment fails it instead."""
    body = bytes(range(256)) * 40
    data = bytearray(_segments(_frame(5, 1, body), 4000))
    data[-2 if where == "checksum" else -10] ^= 0x01
    r = FrameReassembler((5,), 1000)
    r.enable_segments(None)
    for at in range(0, len(data) - 4, 1000):
        r.write(bytes(data[at:min(at + 1000, len(data) - 4)]))
        assert not r.next_frame()
    assert r._filled == len(body)  # all of it copied, the checksum not yet there
    r.write(bytes(data[-4:]))
    with pytest.raises(FramingError, match="CRC mismatch on payload"):
        r.next_frame()
