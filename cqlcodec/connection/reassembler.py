"""Frames out of a CQL connection's byte stream, fed in chunks of any size.

Protocol v3/v4 frames come straight off the stream. After protocol v5's STARTUP the
stream is made of segments (a 3-byte header, or 5 bytes when compressed, with its CRC24,
then a payload of at most 128 KiB with its CRC32); the frames are cut from the
concatenated payloads, so one segment may hold many frames and one frame may span many
segments. Each segment header is parsed once; payloads are never copied unless a
compressed one has to be inflated; each frame body is one ``bytes`` copied once from the
socket's buffers. A large body (``fill_from`` bytes and more) is made when its header
arrives and filled as the rest comes (:mod:`~cqlcodec.connection.large_bodies`).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Collection
from typing import Final

from cqlcodec.connection.large_bodies import FILL_FROM, new_body
from cqlcodec.connection.pieces import Pieces
from cqlcodec.errors import FramingError

MAX_PAYLOAD: Final = 0x1FFFF
CRC32_SEED: Final = zlib.crc32(b"\xfa\x2d\x55\xca")
CRC24_SEED: Final = 0x875060
CRC24_POLY: Final = 0x1974F0B
_VERSION_MASK: Final = 0x7F

Decompress = Callable[[bytes, int], bytes]


def _crc24_table() -> list[int]:
    table: list[int] = []
    for byte in range(256):
        crc = byte << 16
        for _ in range(8):
            crc <<= 1
            if crc & 0x1000000:
                crc ^= CRC24_POLY
        table.append(crc)
    return table


_CRC24_TABLE: Final = _crc24_table()


def crc24(value: int, length: int) -> int:
    """The CRC24 protocol v5 puts after a segment header: over the ``length`` low
    bytes of ``value``, least significant first."""
    crc = CRC24_SEED
    table = _CRC24_TABLE
    for _ in range(length):
        crc = ((crc << 8) & 0xFFFFFF) ^ table[((crc >> 16) ^ value) & 0xFF]
        value >>= 8
    return crc


class FrameReassembler:
    """Cuts frames from a connection's incoming bytes.

    :meth:`write` queues what the socket returned; :meth:`next_frame` returns True
    when a whole frame is ready, whose header fields are then in ``version``,
    ``flags``, ``stream`` and ``opcode`` and whose body is ``body``. ``versions`` are
    the protocol versions a frame may carry; :meth:`enable_segments` switches to
    protocol v5 segments (from the next unread byte on). Malformed input raises
    :class:`cqlcodec.errors.FramingError` (the stream cannot go on after it).
    """

    def __init__(self, versions: Collection[int], fill_from: int = FILL_FROM) -> None:
        self.versions: frozenset[int] = frozenset(versions)
        self.fill_from = fill_from
        self.raw = Pieces()
        self.payloads = Pieces()
        self.segments = False
        self.decompress: Decompress | None = None
        self.version = 0
        self.flags = 0
        self.stream = 0
        self.opcode = 0
        self.body = b""
        self.header_size = 0
        self._body_length = -1
        self._filling = b""
        self._fill_address = 0
        self._filled = -1
        self._fresh = 0
        self._error: Exception | None = None
        self._segment_length = -1
        self._segment_uncompressed = -1
        # bytes of the segment under way already copied into the body, and their CRC32
        self._streamed = 0
        self._segment_crc = CRC32_SEED

    def write(self, data: bytes) -> int:
        """Queue bytes read from the socket (kept, not copied); returns their count.

        While a large body is being filled in place (or once that much is queued),
        the bytes go on into it at once, so the socket's buffers are dropped as they
        come. What goes wrong then (a malformed stream, no memory for the body) is
        raised by the next :meth:`next_frame`, where the connection handles it: the
        reactor that calls this method only expects socket errors from its reads."""
        n = len(data)
        self.raw.add(data, 0, n)
        self._fresh += n
        if self._error is None and (self._filled >= 0 or self.raw.size >= self.fill_from):
            try:
                self._advance()
            except Exception as exc:  # noqa: BLE001 - raised again by next_frame
                self._error = exc
        return n

    def tell(self) -> int:
        """What the driver's ``_iobuf.tell()`` reports: not 0 while bytes written since
        the last :meth:`next_frame` wait to be cut, else how many bytes read from the
        socket are not yet cut into segments (v5) or frames (v3/v4)."""
        waiting = self.raw.size + self._fresh + self._streamed
        if self._filled > 0 and not self.segments:
            waiting += self._filled
        return waiting

    def clear(self) -> None:
        """Forget everything queued and any frame begun (the stream cannot go on)."""
        self.raw.clear()
        self.payloads.clear()
        self._body_length = -1
        self._filling = b""
        self._filled = -1
        self._segment_length = -1
        self._streamed = 0
        self._segment_crc = CRC32_SEED
        self._fresh = 0

    def getvalue(self) -> bytes:
        """The bytes read from the socket and not yet consumed (for diagnostics)."""
        return self.raw.joined()

    def enable_segments(self, decompress: Decompress | None) -> None:
        """Read protocol v5 segments from now on; ``decompress(payload, length)``
        inflates compressed ones (None: the segments are not compressed)."""
        self.segments = True
        self.decompress = decompress

    def next_frame(self) -> bool:
        """Cut the next frame if all of it has arrived (True), else wait for more."""
        if self._error is not None:
            raise self._error
        if not self._advance():
            self._fresh = 0
            return False
        if self._filled >= 0:
            self.body = self._filling
            self._filling = b""
            self._filled = -1
        else:
            self.body = (self.payloads if self.segments else self.raw).take(self._body_length)
        self._body_length = -1
        return True

    def _advance(self) -> bool:
        """Cut segments, read the next frame's header and fill a large body as far as
        the bytes go; True when the frame at the front has all of its body."""
        while True:
            source = self.payloads if self.segments else self.raw
            if self._body_length < 0 and not (source.size and self._read_header(source)):
                if self.segments and self._next_segment():
                    continue
                return False
            if self._filled >= 0 or (self._body_length >= self.fill_from and self._start_fill()):
                n = min(source.size, self._body_length - self._filled)
                source.copy_to(self._fill_address + self._filled, n)
                self._filled += n
                if self._filled == self._body_length and self._streamed == 0:
                    return True
            elif source.size >= self._body_length:
                return True
            if not self.segments:
                return False
            if self._next_segment():
                continue
            if self._filled >= 0:
                self._stream_segment()
            return False

    def _stream_segment(self) -> None:
        """Copy what has arrived of the segment under way into the body being filled,
        its CRC32 carried on, so that the socket's buffers go as they come. The frame is
        not whole until the segment's checksum has been checked (:meth:`_next_segment`)."""
        if self._segment_length < 0 or self.payloads.size or (
                self.decompress is not None and self._segment_uncompressed > 0):
            return  # no header yet, verified bytes first, or a payload to inflate whole
        raw = self.raw
        n = min(raw.size, self._segment_length - self._streamed,
                self._body_length - self._filled)
        if n > 0:
            self._segment_crc = raw.crc32(n, self._segment_crc)
            raw.copy_to(self._fill_address + self._filled, n)
            self._filled += n
            self._streamed += n

    def _start_fill(self) -> bool:
        """Make the body to fill in place (see :mod:`~cqlcodec.connection.large_bodies`);
        False where bodies are joined instead."""
        made = new_body(self._body_length)
        if made is None:
            return False
        self._filling, self._fill_address = made
        self._filled = 0
        return True

    def _read_header(self, source: Pieces) -> bool:
        """Parse a frame header if it is all there (True); checks the version as soon
        as its byte is there, as the drivers do."""
        first = source.bufs[source.head][source.starts[source.head]]
        version = first & _VERSION_MASK
        if version not in self.versions:
            raise FramingError(
                f"This version of the driver does not support protocol version {version}",
                False)
        size = 9 if version >= 3 else 8
        if source.size < size:
            return False
        header = source.take(size)
        if size == 9:
            stream = (header[2] << 8) | header[3]
            opcode = header[4]
            length = int.from_bytes(header[5:9], "big", signed=True)
        else:
            stream = header[2]
            if stream >= 0x80:
                stream -= 0x100
            opcode = header[3]
            length = int.from_bytes(header[4:8], "big", signed=True)
        if size == 9 and stream >= 0x8000:
            stream -= 0x10000
        if length < 0:
            raise FramingError(f"Received negative body length: {length!r}", False)
        self.version = version
        self.flags = header[1]
        self.stream = stream
        self.opcode = opcode
        self.header_size = size
        self._body_length = length
        return True

    def _next_segment(self) -> bool:
        """Move the next whole segment's payload onto the frame bytes (True), or wait."""
        raw = self.raw
        decompress = self.decompress
        if self._segment_length < 0:
            width = 3 if decompress is None else 5
            if raw.size < width + 3:
                return False
            header = raw.take(width + 3)
            value = int.from_bytes(header[:width], "little")
            expected = int.from_bytes(header[width:], "little")
            actual = crc24(value, width)
            if actual != expected:
                raise FramingError(
                    f'CRC mismatch on header {value:x}. Received {expected:x}", '
                    f'computed {actual:x}.', True)
            self._segment_length = value & MAX_PAYLOAD
            self._segment_uncompressed = (value >> 17) & MAX_PAYLOAD \
                if decompress is not None else -1
        length = self._segment_length - self._streamed
        if raw.size < length + 4:
            return False
        actual = raw.crc32(length, self._segment_crc) & 0xFFFFFFFF
        if decompress is not None and self._segment_uncompressed > 0:
            payload = raw.take(length)
            trailer = raw.take(4)
        else:
            payload = b""
            raw.move_to(self.payloads, length)
            trailer = raw.take(4)
        expected = int.from_bytes(trailer, "little")
        if actual != expected:
            raise FramingError(f'CRC mismatch on payload. Received {expected:x}", '
                               f'computed {actual:x}.', True)
        if decompress is not None and self._segment_uncompressed > 0:
            inflated = decompress(payload, self._segment_uncompressed)
            self.payloads.add(inflated, 0, len(inflated))
        self._segment_length = -1
        self._streamed = 0
        self._segment_crc = CRC32_SEED
        return True
