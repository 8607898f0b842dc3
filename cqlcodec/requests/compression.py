"""Compression of the request path's frames, chosen as the driver chooses it.

``Cluster(compression=True)`` (the driver's default) takes the first codec both ends
support, LZ4 before Snappy; ``compression="lz4"`` asks for LZ4 and fails, as the
driver fails, when the server does not offer it; ``False`` sends frames as they are.
Protocol v4 compresses each frame's body of ``SMALL_PAYLOAD`` bytes or more (flag ``0x01``;
LZ4: the uncompressed length as a big-endian int, then a raw LZ4 block; a smaller body
goes as it is, without the flag, which the server reads frame by frame); protocol v5 compresses whole segments
(:func:`~cqlcodec.connection.segment_writer.write_segment` with a compressor, read by
the :class:`~cqlcodec.connection.FrameReassembler` with a decompressor) and only with
LZ4 (the driver drops Snappy on v5, so does this). LZ4 blocks are made and inflated by
:mod:`cqlcodec.connection.lz4_segments`; Snappy (v4 only) by the driver's own functions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from cassandra import connection as driver_connection
from cassandra.connection import ProtocolError

from cqlcodec.connection.lz4_segments import deflate_lz4, inflate_lz4, lz4_available
from cqlcodec.errors import FramingError
from cqlcodec.runtime.buffers import BytesWriter, read_i32_be, write_i32_be

Transform = Callable[[bytes], bytes]
Inflate = Callable[[bytes, int], bytes]

COMPRESSED: Final = 0x01  # a v4 frame's flag: its body is compressed
LZ4: Final = "lz4"
SNAPPY: Final = "snappy"


def lz4_body(body: bytes) -> bytes:
    """A v4 frame body compressed with LZ4: its length (big-endian int), then the block."""
    w = BytesWriter()
    write_i32_be(w, len(body))
    w.write(deflate_lz4(body))
    return w.getvalue()


def lz4_unbody(body: bytes) -> bytes:
    """The body a v4 LZ4-compressed frame body holds."""
    if len(body) < 4:
        raise FramingError(f"an LZ4-compressed frame body of {len(body)} bytes has no length",
                           False)
    size: int = read_i32_be(body, 0)
    if size < 0:
        raise FramingError(f"an LZ4-compressed frame body claims {size} bytes", False)
    return inflate_lz4(body[4:], size) if size else b""


class Compression:
    """What one connection compresses with: ``name`` (sent in STARTUP), the v4 body
    functions ``compress`` and ``inflate``, and the v5 segment functions
    ``segment_compress`` (a raw block) and ``segment_inflate(payload, length)``
    (None: that protocol version does not compress with this codec)."""

    def __init__(self, name: str, compress: Transform, inflate: Transform,
                 segment_compress: Transform | None, segment_inflate: Inflate | None) -> None:
        self.name = name
        self.compress = compress
        self.inflate = inflate
        self.segment_compress = segment_compress
        self.segment_inflate = segment_inflate


def _driver_codecs() -> Any:
    """The driver's ``{name: (compress, decompress)}``, LZ4 first (not in its stubs)."""
    return getattr(driver_connection, "locally_supported_compressions", {})


def _local() -> list[str]:
    """The codecs this process can use, in the driver's order of preference."""
    names: Any = _driver_codecs()
    out: list[str] = []
    for name in names:
        if name == LZ4 and not lz4_available():
            continue
        out.append(str(name))
    return out


def _made(name: str) -> Compression:
    if name == LZ4:
        return Compression(LZ4, lz4_body, lz4_unbody, deflate_lz4, inflate_lz4)
    pair: Any = _driver_codecs()[name]
    return Compression(name, pair[0], pair[1], None, None)


def choose(setting: object, version: int, offered: list[str], host: object) -> Compression | None:
    """The compression of a new connection to ``host`` speaking ``version``, whose
    server offers ``offered`` (its SUPPORTED ``COMPRESSION``), for the cluster's
    ``compression`` ``setting``; None: frames travel uncompressed."""
    if not setting:
        return None
    found = [n for n in _local() if n in offered]
    if not found:
        return None  # as the driver: no codec both ends have, no compression
    name = found[0]
    if isinstance(setting, str):
        if setting not in offered:
            raise ProtocolError(f"The requested compression type ({setting}) is not supported "
                                f"by the Cassandra server at {host}")
        if setting not in found:
            return None
        name = setting
    if version >= 5 and name != LZ4:
        return None  # v5 compresses segments with LZ4 only (the driver drops Snappy there)
    return _made(name)
