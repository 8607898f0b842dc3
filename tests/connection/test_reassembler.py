"""FrameReassembler on its own: the CRC24, 10,000 frames without a leak, threads.

The streams are made with the driver's own segment encoder (``SegmentCodec.encode``),
so the reassembler is checked against an implementation it shares no code with.
"""

from __future__ import annotations

import gc
import io
import random
import sys
import threading
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cqlcodec.connection import FrameReassembler, crc24
from cqlcodec.connection.large_bodies import FILL_FROM
from cqlcodec.errors import FramingError

segment: Any = pytest.importorskip("cassandra.segment")

Frame = tuple[int, int, int, int, bytes]


@given(value=st.integers(0, (1 << 40) - 1), length=st.sampled_from([3, 5]))
def test_crc24_is_the_drivers(value: int, length: int) -> None:
    value &= (1 << (8 * length)) - 1
    assert crc24(value, length) == segment.compute_crc24(value, length)


def _frames(count: int, seed: int) -> list[Frame]:
    rng = random.Random(seed)
    out = []
    for i in range(count):
        size = rng.choice([0, 7, rng.randrange(1, 400), rng.randrange(400, 3000)])
        if i % 2500 == 1:
            size = 300_000  # over three segments
        out.append((5, rng.randrange(16), rng.randrange(32768), 8, rng.randbytes(size)))
    return out


def _frame_bytes(frame: Frame) -> bytes:
    version, flags, stream, opcode, body = frame
    return (bytes([0x80 | version, flags]) + stream.to_bytes(2, "big") + bytes([opcode])
            + len(body).to_bytes(4, "big") + body)


def _v5_stream(frames: list[Frame]) -> bytes:
    """Frames packed as the driver packs them: up to 128 KiB of whole frames per
    self-contained segment, a larger frame over as many segments as it needs."""
    codec = segment.SegmentCodec()
    out = io.BytesIO()
    pending = b""
    for frame in frames:
        raw = _frame_bytes(frame)
        if len(pending) + len(raw) > segment.Segment.MAX_PAYLOAD_LENGTH and pending:
            codec.encode(out, pending)
            pending = b""
        if len(raw) > segment.Segment.MAX_PAYLOAD_LENGTH:
            codec.encode(out, raw)
        else:
            pending += raw
    if pending:
        codec.encode(out, pending)
    return out.getvalue()


def _cut(data: bytes, segments: bool, seed: int, fill_from: int = FILL_FROM) -> list[Frame]:
    rng = random.Random(seed)
    r = FrameReassembler((3, 4, 5), fill_from)
    if segments:
        r.enable_segments(None)
    got: list[Frame] = []
    at = 0
    while at < len(data):
        size = rng.choice([1, rng.randrange(1, 20), rng.randrange(20, 70000), 65536, 65536, 65536])
        r.write(data[at:at + size])
        at += size
        while r.next_frame():
            got.append((r.version, r.flags, r.stream, r.opcode, r.body))
    assert r.tell() == 0
    return got


FRAMES = _frames(10_000, 32)
V4 = b"".join(_frame_bytes((4, *f[1:])) for f in FRAMES)
V5 = _v5_stream(FRAMES)


# 500: most bodies are filled in place as they arrive (cqlcodec.connection.large_bodies)
@pytest.mark.parametrize("fill_from", [FILL_FROM, 500])
def test_ten_thousand_frames_v4_and_v5(fill_from: int) -> None:
    assert _cut(V4, False, 1, fill_from) == [(4, *f[1:]) for f in FRAMES]
    assert _cut(V5, True, 2, fill_from) == FRAMES


@pytest.mark.parametrize("fill_from", [FILL_FROM, 500])
def test_ten_thousand_frames_leave_nothing_behind(fill_from: int) -> None:
    _cut(V5, True, 3, fill_from)
    _cut(V4, False, 3, fill_from)
    gc.collect()
    before = sys.getallocatedblocks()
    _cut(V5, True, 4, fill_from)
    _cut(V4, False, 4, fill_from)
    gc.collect()
    grown = sys.getallocatedblocks() - before
    assert grown < 200, f"{grown} blocks left behind by 20,000 frames"


@pytest.mark.parametrize("fill_from", [FILL_FROM, 500])
def test_four_threads_cut_the_same_frames(fill_from: int) -> None:
    expected = {seed: _cut(V5, True, seed, fill_from) for seed in range(4)}
    results: dict[int, list[Frame]] = {}
    barrier = threading.Barrier(4)
    interval = sys.getswitchinterval()

    def work(seed: int) -> None:
        barrier.wait()
        results[seed] = _cut(V5, True, seed, fill_from)

    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=work, args=(seed,)) for seed in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert results == expected


def test_connection_classes_made_in_threads_are_one_class() -> None:
    connection: Any = pytest.importorskip("cassandra.connection")
    from cqlcodec.connection.driver_class import connection_class

    base = type("Fresh", (connection.Connection,), {})
    made: list[type[Any]] = []
    barrier = threading.Barrier(8)

    def work() -> None:
        barrier.wait()
        made.append(connection_class(base))

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(made)) == 1 and issubclass(made[0], base)
    assert connection_class(made[0]) is made[0]


def test_a_refused_frame_header() -> None:
    r = FrameReassembler((3, 4, 5))
    r.write(bytes([0x86]))
    with pytest.raises(FramingError, match="protocol version 6"):
        r.next_frame()
    r = FrameReassembler((3, 4, 5))
    r.write(bytes([0x84, 0, 0, 1, 8]) + (-5).to_bytes(4, "big", signed=True))
    with pytest.raises(FramingError, match="negative body length: -5") as info:
        r.next_frame()
    assert not info.value.checksum
