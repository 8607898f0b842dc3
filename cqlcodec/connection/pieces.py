"""A byte queue made of the buffers a socket handed over, never joined until asked.

The socket's buffers stay as they arrived (``bytes`` are immutable, so a piece of one
is safe to keep); reading a span that lies in one buffer is one slice, a span over many
buffers is one ``join`` of their memoryviews: either way the bytes are copied once.
"""

from __future__ import annotations

from typing import Final

from cqlcodec.connection.checksums import CRC32
from cqlcodec.connection.large_bodies import copy_into

# consumed pieces are dropped from the lists once this many have piled up in front
_COMPACT_AFTER: Final = 64


class Pieces:
    """Spans of buffers in arrival order; ``size`` bytes are not consumed yet."""

    def __init__(self) -> None:
        self.bufs: list[bytes] = []
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.head = 0
        self.size = 0

    def add(self, buf: bytes, start: int, end: int) -> None:
        """Queue ``buf[start:end]`` (not copied)."""
        if end > start:
            self.bufs.append(buf)
            self.starts.append(start)
            self.ends.append(end)
            self.size += end - start

    def clear(self) -> None:
        """Forget everything queued."""
        self.bufs = []
        self.starts = []
        self.ends = []
        self.head = 0
        self.size = 0

    def _advance(self, n: int) -> None:
        """Consume ``n`` bytes (``n <= size``)."""
        self.size -= n
        head = self.head
        while n > 0:
            left = self.ends[head] - self.starts[head]
            if n < left:
                self.starts[head] += n
                break
            n -= left
            head += 1
        if head >= len(self.bufs):
            self.bufs = []
            self.starts = []
            self.ends = []
            head = 0
        elif head >= _COMPACT_AFTER:
            del self.bufs[:head]
            del self.starts[:head]
            del self.ends[:head]
            head = 0
        self.head = head

    def take(self, n: int) -> bytes:
        """The next ``n`` bytes (``n <= size``) as one new ``bytes``, consumed."""
        head = self.head
        buf = self.bufs[head] if n > 0 else b""
        start = self.starts[head] if n > 0 else 0
        if n == 0:
            return b""
        if self.ends[head] - start >= n:
            out = buf if start == 0 and n == len(buf) else buf[start:start + n]
        else:
            views: list[memoryview] = []
            want = n
            i = head
            while want > 0:
                s = self.starts[i]
                e = min(self.ends[i], s + want)
                views.append(memoryview(self.bufs[i])[s:e])
                want -= e - s
                i += 1
            out = b"".join(views)
        self._advance(n)
        return out

    def copy_to(self, address: int, n: int) -> None:
        """Copy the next ``n`` bytes (``n <= size``) to ``address`` (a body from
        :func:`~cqlcodec.connection.large_bodies.new_body`) and consume them."""
        want = n
        i = self.head
        while want > 0:
            s = self.starts[i]
            e = min(self.ends[i], s + want)
            copy_into(address, self.bufs[i], s, e - s)
            address += e - s
            want -= e - s
            i += 1
        self._advance(n)

    def crc32(self, n: int, seed: int) -> int:
        """The CRC32 of the next ``n`` bytes continuing ``seed`` (zlib's, computed by zlib-ng
        where installed); nothing consumed."""
        crc = seed
        want = n
        i = self.head
        while want > 0:
            s = self.starts[i]
            e = min(self.ends[i], s + want)
            crc = CRC32(memoryview(self.bufs[i])[s:e], crc)
            want -= e - s
            i += 1
        return crc

    def move_to(self, other: Pieces, n: int) -> None:
        """Queue the next ``n`` bytes on ``other`` (not copied) and consume them here."""
        want = n
        i = self.head
        while want > 0:
            s = self.starts[i]
            e = min(self.ends[i], s + want)
            other.add(self.bufs[i], s, e)
            want -= e - s
            i += 1
        self._advance(n)

    def joined(self) -> bytes:
        """Every byte not consumed, joined (for diagnostics)."""
        return b"".join([memoryview(self.bufs[i])[self.starts[i]:self.ends[i]]
                         for i in range(self.head, len(self.bufs))])
