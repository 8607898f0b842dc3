"""The request path's frames and segments, checked against the protocol's layout and
read back by the connection layer's own reassembler."""

from __future__ import annotations

import struct
import zlib

import pytest

from cqlcodec import UNSET
from cqlcodec.connection.reassembler import FrameReassembler
from cqlcodec.requests.frames import (
    OP_EXECUTE,
    OP_OPTIONS,
    OP_QUERY,
    Parameters,
    RequestTooLargeError,
    envelope,
    execute_body,
    prepare_body,
    query_body,
    segments,
    string_map,
)
from cqlcodec.requests.streams import MAX_STREAMS, StreamIds


def test_options_in_one_v5_segment_is_the_bytes_the_server_accepts() -> None:
    # captured against Cassandra 5.0.9 (the reference notes' example)
    wire = segments([envelope(5, 0, 0, OP_OPTIONS, b"")])
    assert wire.hex() == "090002a4c8c10500000005000000001086284d"


def test_envelope_header() -> None:
    frame = envelope(4, 0x02, 300, OP_QUERY, b"abc")
    assert frame == bytes([4, 2]) + struct.pack(">hBi", 300, OP_QUERY, 3) + b"abc"


def _read_back(wire: bytes, chunk: int) -> list[tuple[int, int, bytes]]:
    reader = FrameReassembler([4, 5])
    reader.enable_segments(None)
    out = []
    for i in range(0, len(wire), chunk):
        reader.write(wire[i:i + chunk])
        while reader.next_frame():
            out.append((reader.stream, reader.opcode, bytes(reader.body)))
    return out


@pytest.mark.parametrize("chunk", [1, 7, 4096, 1 << 20])
def test_segments_carry_small_and_large_frames_in_order(chunk: int) -> None:
    bodies = [b"x" * 10, b"", bytes(range(256)) * 700, b"y" * 131_000, b"z" * 5]
    frames = [envelope(5, 0, i, OP_QUERY, body) for i, body in enumerate(bodies)]
    wire = segments(frames)
    assert _read_back(wire, chunk) == [(i, OP_QUERY, body) for i, body in enumerate(bodies)]


def test_small_frames_share_one_self_contained_segment() -> None:
    frames = [envelope(5, 0, i, OP_QUERY, b"q" * 20) for i in range(50)]
    wire = segments(frames)
    header = int.from_bytes(wire[:3], "little")
    assert header & 0x1FFFF == sum(len(f) for f in frames)
    assert header & 0x20000  # self-contained
    assert len(wire) == 6 + sum(len(f) for f in frames) + 4
    payload = wire[6:-4]
    crc = zlib.crc32(payload, zlib.crc32(b"\xfa\x2d\x55\xca"))
    assert int.from_bytes(wire[-4:], "little") == crc


def test_a_frame_over_128_kib_goes_in_slices_that_are_not_self_contained() -> None:
    big = envelope(5, 0, 1, OP_QUERY, b"b" * 300_000)
    wire = segments([big])
    headers = []
    p = 0
    while p < len(wire):
        h = int.from_bytes(wire[p:p + 3], "little")
        headers.append(h)
        p += 6 + (h & 0x1FFFF) + 4
    assert p == len(wire)
    assert [h & 0x1FFFF for h in headers] == [131_071, 131_071, len(big) - 2 * 131_071]
    assert not any(h & 0x20000 for h in headers)


def test_query_parameters_v4_and_v5() -> None:
    p = Parameters(4, 9, 100, b"st", 1234, "ks", False)
    v4 = query_body(4, "SELECT 1", p, [b"\x01", None, UNSET])
    text = struct.pack(">i", 8) + b"SELECT 1"
    values = struct.pack(">h", 3) + struct.pack(">i", 1) + b"\x01" + struct.pack(">ii", -1, -2)
    tail = struct.pack(">i", 100) + struct.pack(">i", 2) + b"st" + struct.pack(">h", 9) + \
        struct.pack(">q", 1234)
    # v4: flags are a byte, no keyspace
    assert v4 == text + struct.pack(">hB", 4, 0x01 | 0x04 | 0x08 | 0x10 | 0x20) + values + tail
    v5 = query_body(5, "SELECT 1", p, [b"\x01", None, UNSET])
    assert v5 == text + struct.pack(">hi", 4, 0x01 | 0x04 | 0x08 | 0x10 | 0x20 | 0x80) + values + \
        tail + struct.pack(">h", 2) + b"ks"


def test_execute_and_prepare_bodies() -> None:
    p = Parameters(1, None, 0, None, None, None, True)
    assert execute_body(4, b"ID", None, p, None) == struct.pack(">h", 2) + b"ID" + struct.pack(">hB", 1, 0x02)
    assert execute_body(5, b"ID", b"MD", p, []) == (struct.pack(">h", 2) + b"ID" + struct.pack(">h", 2)
                                                   + b"MD" + struct.pack(">hi", 1, 0x02))
    assert prepare_body(4, "Q", "ks") == struct.pack(">i", 1) + b"Q"
    assert prepare_body(5, "Q", "ks") == struct.pack(">i", 1) + b"Q" + struct.pack(">ih", 1, 2) + b"ks"
    assert prepare_body(5, "Q", None) == struct.pack(">i", 1) + b"Q" + struct.pack(">i", 0)
    assert string_map({"A": "b"}) == struct.pack(">hh", 1, 1) + b"A" + struct.pack(">h", 1) + b"b"
    assert OP_EXECUTE == 0x0A


def test_limits() -> None:
    with pytest.raises(RequestTooLargeError):
        execute_body(4, b"x" * 70_000, None, Parameters(1, None, 0, None, None, None, False), None)
    with pytest.raises(RequestTooLargeError):
        query_body(4, "q", Parameters(1, None, 0, None, None, None, False), [None] * 70_000)


def test_stream_ids_are_reused_oldest_first_and_orphans_wait() -> None:
    ids = StreamIds(4)
    got = [ids.acquire() for _ in range(4)]
    assert got == [0, 1, 2, 3]
    assert ids.acquire() == -1 and ids.available == 0
    ids.orphan(1)
    assert ids.acquire() == -1  # an orphan is still in use
    ids.release(2)
    ids.release(1)
    assert 1 not in ids.orphans
    assert [ids.acquire(), ids.acquire(), ids.acquire()] == [2, 1, -1]
    with pytest.raises(ValueError):
        StreamIds(MAX_STREAMS + 1)
