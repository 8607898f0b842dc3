"""cqlcodec's read path against the driver's own, on byte streams a real server sent.

The streams (``streams/``, recorded from Cassandra 5.0.9 by ``tools/capture_streams.py``)
are cut into chunks every which way and fed to two connections of the driver's base
class: one reading with the driver's own ``process_io_buffer``, one through
:func:`cqlcodec.connection.driver_class.connection_class`. Both must hand the same
frames to ``process_msg`` and, for a corrupted stream, fail with the same exception.
"""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

connection: Any = pytest.importorskip("cassandra.connection")

from cqlcodec.connection.driver_class import connection_class  # noqa: E402

STREAMS = Path(__file__).resolve().parent / "streams"
Frame = tuple[int, int, int, int, int, bytes]


class _Stopped(Exception):
    """The connection was declared defunct: feeding stops there."""


class _Recording:
    """Records what a connection hands to ``process_msg`` and ``defunct``."""

    def setup(self: Any, segments_after: int | None, lz4: bool) -> None:
        self.frames: list[Frame] = []
        self.error: tuple[type[BaseException], str] | None = None
        self.segments_after = segments_after
        if lz4:
            self.compressor, self.decompressor = connection.locally_supported_compressions["lz4"]

    def process_msg(self: Any, header: Any, body: bytes) -> None:
        assert type(body) is bytes
        self.frames.append((header.version, header.flags, header.stream, header.opcode,
                            header.end_pos - header.body_offset, body))
        if len(self.frames) == self.segments_after:  # the driver switches after READY
            self._enable_checksumming()

    def defunct(self: Any, exc: BaseException) -> None:
        self.error = (type(exc), str(exc))
        raise _Stopped


class DriverSide(_Recording, connection.Connection):  # type: ignore[misc]
    """A driver connection reading with the driver's own code (no socket)."""


class CqlcodecSide(_Recording, connection_class(connection.Connection)):  # type: ignore[misc]
    """The same through cqlcodec's connection class."""


class CqlcodecFillingSide(CqlcodecSide):
    """The same with every body of 64 bytes or more filled in place as it arrives
    (``cqlcodec.connection.large_bodies``; by default only from 1 MiB)."""

    fill_bodies_from = 64


def _stream(name: str) -> tuple[bytes, dict[str, Any]]:
    meta = json.loads((STREAMS / f"{name}.json").read_text())
    if meta["lz4"] and "lz4" not in connection.locally_supported_compressions:
        pytest.skip("lz4 is not installed: the driver offers no compression on v5")
    return gzip.decompress((STREAMS / f"{name}.bin.gz").read_bytes()), meta


NAMES = [p.name[:-len(".json")] for p in sorted(STREAMS.glob("*.json"))]


def _chunks(data: bytes, sizes: Sequence[int]) -> Iterator[bytes]:
    at = 0
    for size in sizes:
        if at >= len(data):
            return
        yield data[at:at + size]
        at += size
    while at < len(data):
        yield data[at:at + 65536]
        at += 65536


def _feed(cls: type[Any], data: bytes, meta: dict[str, Any], sizes: Sequence[int]) -> Any:
    conn = cls(protocol_version=meta["protocol"])
    conn.setup(meta["segments_after_frames"], meta["lz4"])
    try:
        for chunk in _chunks(data, sizes):
            conn._iobuf.write(chunk)
            conn.process_io_buffer()
    except _Stopped:
        pass
    return conn


def _around_driver_loss(data: bytes, meta: dict[str, Any], sizes: Sequence[int]) -> list[int]:
    """``sizes`` with the reads cassandra-driver 3.30.1 cannot take joined to the next.

    The driver fails on two kinds of v5 reads (cqlcodec takes both):

    * a read that leaves 1 to 5 (7 with lz4) bytes of a segment header pending: with
      fewer than the header's bytes at hand, ``_process_segment_buffer`` leaves the
      buffer at its end and ``reset_io_buffer`` keeps nothing, so the stream falls out
      of step and the next header fails its CRC24;
    * with lz4, a read that ends in the last 2 bytes of a segment stored uncompressed:
      ``SegmentHeader.segment_length`` counts a 3-byte header for it where there are
      5, so the driver reads the CRC32 before it has arrived (``struct.error``).

    The driver is fed around them (cqlcodec's side gets the original chunks) so that
    everything else can be compared.
    """
    if meta["segments_after_frames"] is None:
        return list(sizes)
    segments = _segments(data, meta)
    width = (5 if meta["lz4"] else 3) + 3
    merged: list[int] = []
    at = 0
    pending = 0
    for size in [len(c) for c in _chunks(data, sizes)]:
        at += size
        pending += size
        inside = [(s, e, stored) for s, e, stored in segments if s < at < e]
        if inside and at < len(data):
            start, end, stored = inside[0]
            if at - start < width or (stored and end - at <= 2):
                continue
        merged.append(pending)
        pending = 0
    if pending:
        merged.append(pending)
    return merged


def _same(data: bytes, meta: dict[str, Any], sizes: Sequence[int]) -> Any:
    ours = _feed(CqlcodecSide, data, meta, sizes)
    filling = _feed(CqlcodecFillingSide, data, meta, sizes)
    assert (filling.frames, filling.error) == (ours.frames, ours.error)
    theirs = _feed(DriverSide, data, meta, _around_driver_loss(data, meta, sizes))
    assert ours.error == theirs.error
    if ours.error is None:
        assert len(ours.frames) == len(theirs.frames)
        assert ours.frames == theirs.frames
    else:
        # the driver cuts one frame per segment it decodes, so it meets a broken
        # segment with intact frames of earlier segments still undelivered; cqlcodec
        # delivers those first, then fails the same way
        assert ours.frames[:len(theirs.frames)] == theirs.frames
        assert len(ours.frames) == len(_feed(CqlcodecSide, data[:_intact_end(data, meta)],
                                             meta, [len(data)]).frames)
    return ours


def _intact_end(data: bytes, meta: dict[str, Any]) -> int:
    """Where the last segment that passes its checks ends."""
    if meta["segments_after_frames"] is None:
        return len(data)
    bounds = _segment_bounds(data, meta)
    if not bounds:  # a broken handshake frame put the segments past the end
        return len(data)
    end = bounds[0]
    for start, stop, _ in _segments(data, meta):
        body = data[start:stop]
        if len(body) < stop - start or _feed_error(body, meta):
            break
        end = stop
    return end


def _feed_error(segment: bytes, meta: dict[str, Any]) -> bool:
    """Whether the driver's codec refuses one segment."""
    codec = connection.segment_codec_lz4 if meta["lz4"] else \
        connection.segment_codec_no_compression
    buf = io.BytesIO(segment)
    try:
        codec.decode(buf, codec.decode_header(buf))
    except Exception:
        return True
    return False


def test_the_driver_loses_a_split_segment_header() -> None:
    """Why the driver is fed around such reads: alone, it fails where cqlcodec does not."""
    data, meta = _stream("v5")
    first = _segment_bounds(data, meta)[0]
    sizes = [first, 1, len(data)]
    assert _feed(CqlcodecSide, data, meta, sizes).error is None
    theirs = _feed(DriverSide, data, meta, sizes)
    assert theirs.error is not None and theirs.error[0] is connection.CrcMismatchException
    assert len(_feed(CqlcodecSide, data, meta, sizes).frames) == meta["frames"]


@pytest.mark.parametrize("name", NAMES)
def test_whole_stream_in_one_read(name: str) -> None:
    data, meta = _stream(name)
    ours = _same(data, meta, [len(data)])
    assert len(ours.frames) == meta["frames"] and ours.error is None


@pytest.mark.parametrize("name", NAMES)
def test_single_bytes_then_large_reads(name: str) -> None:
    data, meta = _stream(name)
    _same(data, meta, [1] * 3000 + [1 << 20])


def _segments(data: bytes, meta: dict[str, Any]) -> list[tuple[int, int, bool]]:
    """(start, end, stored as is with lz4 on) of each v5 segment of a stream (headers
    read with the driver's own codec)."""
    start = 0
    for _ in range(meta["segments_after_frames"]):  # the handshake's plain frames
        start += 9 + int.from_bytes(data[start + 5:start + 9], "big")
    codec = connection.segment_codec_lz4 if meta["lz4"] else \
        connection.segment_codec_no_compression
    found = []
    while start < len(data):
        try:
            header = codec.decode_header(io.BytesIO(data[start:start + 8]))
        except Exception:  # a corrupted header: the streams fail there anyway
            found.append((start, len(data), False))
            break
        end = start + codec.header_length_with_crc + header.payload_length + 4
        found.append((start, end, bool(meta["lz4"]) and header.uncompressed_payload_length == 0))
        start = end
    return found


def _segment_bounds(data: bytes, meta: dict[str, Any]) -> list[int]:
    """Where each v5 segment starts in a stream."""
    return [start for start, _, _ in _segments(data, meta)]


@pytest.mark.parametrize("name", [n for n in NAMES if n.startswith("v5")])
def test_splits_inside_headers_and_checksums(name: str) -> None:
    data, meta = _stream(name)
    bounds = _segment_bounds(data, meta)
    assert len(bounds) > 3
    for delta in (1, 2, 3, 4, 5, 6, 7, -1, -2, -3):
        cuts = [b + delta for b in bounds if 0 < b + delta < len(data)]
        sizes = [b - a for a, b in zip([0, *cuts], cuts)]
        _same(data, meta, sizes)


@pytest.mark.parametrize("name", [n for n in NAMES if n.startswith("v5")])
@pytest.mark.parametrize("where", ["header", "header crc", "payload", "payload crc"])
def test_corrupt_segment_gives_the_drivers_error(name: str, where: str) -> None:
    data, meta = _stream(name)
    bounds = _segment_bounds(data, meta)
    width = 5 if meta["lz4"] else 3
    segment = bounds[len(bounds) // 2]
    end = bounds[len(bounds) // 2 + 1]
    at = {"header": segment + 1, "header crc": segment + width + 1,
          "payload": segment + width + 3 + 2, "payload crc": end - 2}[where]
    broken = bytearray(data)
    broken[at] ^= 0x5A
    for sizes in ([len(data)], [7] * 20000, [65536] * 20):
        ours = _same(bytes(broken), meta, sizes)
        assert ours.error is not None and ours.error[0] is connection.CrcMismatchException


@pytest.mark.parametrize("name", NAMES)
def test_bad_frame_header_gives_the_drivers_error(name: str) -> None:
    data, meta = _stream(name)
    broken = bytearray(data)
    broken[0] = 0x80 | 0x0F  # a protocol version no driver knows
    ours = _same(bytes(broken), meta, [100, 1 << 20])
    assert ours.error is not None and ours.error[0] is connection.ProtocolError


_SIZES = st.lists(st.one_of(st.integers(1, 16), st.integers(1, 300), st.integers(300, 70000),
                            st.just(1 << 20)), max_size=60)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sizes=_SIZES)
def test_random_chunkings(name: str, sizes: list[int]) -> None:
    data, meta = _stream(name)
    _same(data, meta, sizes)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sizes=_SIZES, at=st.integers(0, 1 << 30), flip=st.integers(1, 255))
def test_random_corruption(name: str, sizes: list[int], at: int, flip: int) -> None:
    data, meta = _stream(name)
    broken = bytearray(data)
    broken[at % len(data)] ^= flip
    _same(bytes(broken), meta, sizes)
