"""The segment writer against the driver's own v5 segment encoder: the same bytes for
frames of every size (empty, one byte, up to and over the 128 KiB payload, split into
several segments), compressed or not, and read back by cqlcodec's reassembler. One
difference on purpose: with LZ4, a payload under ``SMALL_PAYLOAD`` bytes is sent
uncompressed without trying, the driver's bytes when its compressor cannot shrink it."""

from __future__ import annotations

import io
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cqlcodec.connection.driver_class import segment_decompressor
from cqlcodec.connection.reassembler import MAX_PAYLOAD, FrameReassembler
from cqlcodec.connection.segment_writer import (
    SMALL_PAYLOAD,
    SegmentEncoder,
    encode_segments,
    segment_writer,
)

connection: Any = pytest.importorskip("cassandra.connection")
segment: Any = pytest.importorskip("cassandra.segment")
PLAIN: Any = connection.segment_codec_no_compression
LZ4: Any = connection.segment_codec_lz4
CODECS = [PLAIN] + ([LZ4] if LZ4 is not None else [])

EDGES = [0, 1, 2, 100, MAX_PAYLOAD - 1, MAX_PAYLOAD, MAX_PAYLOAD + 1, 2 * MAX_PAYLOAD,
         2 * MAX_PAYLOAD + 1, 3 * MAX_PAYLOAD + 7]


def _drivers(codec: Any, frame: bytes) -> bytes:
    if codec is LZ4 and len(frame) < SMALL_PAYLOAD:
        # what the driver sends when its compressor does not shrink the payload
        codec = segment.SegmentCodec(lambda data: len(data).to_bytes(4, "little") + data,
                                     LZ4.decompressor)
    buffer = io.BytesIO()
    codec.encode(buffer, frame)
    return buffer.getvalue()


def _ours(codec: Any, frame: bytes) -> bytes:
    writer = segment_writer(codec)
    assert writer is not codec and isinstance(writer.encode, SegmentEncoder)
    buffer = io.BytesIO()
    writer.encode(buffer, frame)
    return buffer.getvalue()


def _frame(size: int, seed: int, repeat: bool) -> bytes:
    # random bytes do not compress; repeated ones do: both paths of the LZ4 codec
    if repeat:
        return (bytes([seed % 256, 7, 1]) * (size // 3 + 1))[:size]
    return bytes((seed * 31 + i * (i >> 3)) % 256 for i in range(size))


@pytest.mark.parametrize("codec", CODECS, ids=lambda c: "lz4" if c is LZ4 else "plain")
@pytest.mark.parametrize("size", EDGES)
@pytest.mark.parametrize("repeat", [False, True])
def test_edges_are_the_drivers(codec: Any, size: int, repeat: bool) -> None:
    frame = _frame(size, size, repeat)
    assert _ours(codec, frame) == _drivers(codec, frame)


@settings(max_examples=60, deadline=None)
@given(size=st.integers(0, 3 * MAX_PAYLOAD + 5) | st.integers(0, 600),
       seed=st.integers(0, 255), repeat=st.booleans(), lz4=st.booleans())
def test_any_size_is_the_drivers(size: int, seed: int, repeat: bool, lz4: bool) -> None:
    codec = LZ4 if lz4 and LZ4 is not None else PLAIN
    frame = _frame(size, seed, repeat)
    assert _ours(codec, frame) == _drivers(codec, frame)


@given(frame=st.binary(max_size=2048))
def test_small_frames_are_the_drivers(frame: bytes) -> None:
    assert encode_segments(frame) == _drivers(PLAIN, frame)


def _frame_bytes(body: bytes) -> bytes:
    # a v5 frame: version, flags, stream, opcode (RESULT), body length, body
    return bytes([0x85, 0, 0, 1, 8]) + len(body).to_bytes(4, "big") + body


@pytest.mark.parametrize("size", [0, 5, MAX_PAYLOAD - 9, MAX_PAYLOAD, 2 * MAX_PAYLOAD + 3])
def test_reassembler_reads_it_back(size: int) -> None:
    body = _frame(size, 3, False)
    reassembler = FrameReassembler([5])
    reassembler.enable_segments(None)
    reassembler.write(encode_segments(_frame_bytes(body)))
    assert reassembler.next_frame()
    assert reassembler.body == body and reassembler.opcode == 8
    assert not reassembler.next_frame()


@pytest.mark.skipif(LZ4 is None, reason="needs the lz4 module")
@pytest.mark.parametrize("size", [0, 100, SMALL_PAYLOAD - 10, SMALL_PAYLOAD, 3000])
def test_small_payloads_go_uncompressed_and_read_back(size: int) -> None:
    body = _frame(size, 5, True)  # repeated bytes: LZ4 would shrink them
    sent = _ours(LZ4, _frame_bytes(body))
    header = int.from_bytes(sent[:5], "little")
    assert ((header >> 17) & MAX_PAYLOAD == 0) == (size + 9 < SMALL_PAYLOAD)
    reassembler = FrameReassembler([5])
    reassembler.enable_segments(segment_decompressor(LZ4))
    reassembler.write(sent)
    assert reassembler.next_frame()
    assert reassembler.body == body and reassembler.opcode == 8


def test_other_codec_classes_are_left_alone() -> None:
    class Other(segment.SegmentCodec):  # type: ignore[misc]
        pass

    other = Other()
    assert segment_writer(other) is other


def test_the_drivers_codec_is_not_changed() -> None:
    writer = segment_writer(PLAIN)
    assert "encode" not in vars(PLAIN)
    assert writer.header_length_with_crc == PLAIN.header_length_with_crc
