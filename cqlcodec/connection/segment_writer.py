"""The writing of protocol v5 segments: the send side of :mod:`.reassembler`.

On v5 every frame a connection sends is cut into segments of at most ``MAX_PAYLOAD``
bytes, each a 3-byte header (5 bytes when compressed) with its CRC24, then the payload
and its CRC32. The drivers build them in interpreted code, the CRC24 bit by bit (about
5-7 µs for a one-row request); :func:`encode_segments` builds the same bytes in compiled
code, with a table-driven CRC24 (:func:`~cqlcodec.connection.reassembler.crc24`) and the
connection's CRC32 (:data:`~cqlcodec.connection.checksums.CRC32`).

:func:`segment_writer` gives a cqlcodec connection a copy of the driver's segment codec
whose ``encode`` is :func:`encode_segments`; everything else (decoding, header lengths,
the compressor) stays the driver's.

The bytes are the driver's, except one case: with compression on, a payload of fewer
than ``SMALL_PAYLOAD`` bytes is sent as it is (uncompressed length 0, which the protocol
and every decoder allow) without calling the compressor. LZ4 saves a few bytes at most
on such a payload (0-7 on a 129-byte one-row insert), and its call lets go of the GIL:
with answers arriving, the IO thread takes it and the caller waits to get it back, a
context switch per request (about a tenth of a small insert's client CPU).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import IO, Any, Final

from cassandra.segment import SegmentCodec

from cqlcodec.connection.checksums import CRC32
from cqlcodec.connection.reassembler import CRC32_SEED, MAX_PAYLOAD, crc24
from cqlcodec.runtime.buffers import BytesWriter, write_i32_le

Compress = Callable[[bytes], bytes]

FLAG_OFFSET: Final = 17
# payloads shorter than this are not handed to the compressor (see the module docstring)
SMALL_PAYLOAD: Final = 256
HEADER: Final = 3
COMPRESSED_HEADER: Final = 5


def _little(w: BytesWriter, value: int, width: int) -> None:
    for _ in range(width):
        w.append(value & 0xFF)
        value >>= 8


def write_segment(w: BytesWriter, payload: bytes, compress: Compress | None,
                  self_contained: bool) -> None:
    """Write one segment holding ``payload`` to ``w`` (compressed by ``compress`` when
    that is shorter and it has ``SMALL_PAYLOAD`` bytes or more; ``self_contained``: it
    holds whole frames)."""
    length = len(payload)
    header = 0
    width = HEADER
    if compress is not None:
        width = COMPRESSED_HEADER
        packed = compress(payload) if length >= SMALL_PAYLOAD else payload
        if len(packed) < length:
            header = length << FLAG_OFFSET
            payload = packed
            length = len(packed)
        if self_contained:
            header |= 1 << (FLAG_OFFSET + FLAG_OFFSET)
    elif self_contained:
        header = 1 << FLAG_OFFSET
    header |= length
    _little(w, header, width)
    _little(w, crc24(header, width), 3)
    w.write(payload)
    crc = CRC32(memoryview(payload), CRC32_SEED)
    write_i32_le(w, crc - (1 << 32) if crc >= 1 << 31 else crc)


def encode_segments(frame: bytes, compress: Compress | None = None) -> bytes:
    """The v5 segments that carry ``frame``: one self-contained segment when it fits in
    ``MAX_PAYLOAD`` bytes (an empty frame too), else one segment per ``MAX_PAYLOAD``
    bytes, none self-contained. With ``compress`` (the driver's segment codec's, which
    gives a payload without its size), a payload is stored compressed when that makes
    it shorter, else as it is with an uncompressed length of 0, as the drivers do; one
    under ``SMALL_PAYLOAD`` bytes is stored as it is without trying."""
    w = BytesWriter()
    size = len(frame)
    if size <= MAX_PAYLOAD:
        write_segment(w, frame, compress, True)
    else:
        view = memoryview(frame)
        for at in range(0, size, MAX_PAYLOAD):
            write_segment(w, bytes(view[at:at + MAX_PAYLOAD]), compress, False)
    return w.getvalue()


class SegmentEncoder:
    """A segment codec's ``encode(buffer, msg)`` done by :func:`encode_segments`."""

    def __init__(self, compress: Compress | None) -> None:
        self.compress = compress

    def __call__(self, buffer: IO[bytes], msg: bytes) -> None:
        """Write the segments carrying the frame ``msg`` to ``buffer``."""
        buffer.write(encode_segments(msg, self.compress))


def segment_writer(codec: Any) -> Any:
    """A copy of the driver's segment ``codec`` whose ``encode`` is
    :func:`encode_segments` (the same bytes); its decoding, header lengths and
    compressor stay the driver's. A codec of another class (a driver's subclass
    may encode differently) is returned as it is."""
    if type(codec) is not SegmentCodec:
        return codec
    writer: Any = copy.copy(codec)
    writer.encode = SegmentEncoder(codec.compress if codec.compression else None)
    return writer
