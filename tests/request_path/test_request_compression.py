"""The request path's compression: LZ4 v4 bodies and v5 segments against the driver's
own LZ4 functions and cqlcodec's reassembler, the codec chosen as the driver chooses it,
and a v4 connection whose requests and answers travel compressed."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

driver_connection: Any = pytest.importorskip("cassandra.connection")
if "lz4" not in driver_connection.locally_supported_compressions:
    pytest.skip("lz4 is not installed: the driver offers no LZ4", allow_module_level=True)

from cassandra.connection import ConnectionShutdown, ProtocolError  # noqa: E402

from cqlcodec.connection.lz4_segments import deflate_lz4, inflate_lz4  # noqa: E402
from cqlcodec.connection.reassembler import FrameReassembler  # noqa: E402
from cqlcodec.errors import FramingError  # noqa: E402
from cqlcodec.requests.compression import (  # noqa: E402
    COMPRESSED,
    LZ4,
    choose,
    lz4_body,
    lz4_unbody,
)
from cqlcodec.requests.connection import Connection  # noqa: E402
from cqlcodec.requests.frames import OP_QUERY, OP_RESULT, envelope, segments  # noqa: E402

DRIVER_COMPRESS, DRIVER_INFLATE = driver_connection.locally_supported_compressions["lz4"]
SEGMENT_CODEC: Any = driver_connection.segment_codec_lz4


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=3000), st.integers(1, 40))
def test_v4_bodies_are_the_drivers(data: bytes, repeat: int) -> None:
    body = data * repeat
    assert lz4_body(body) == DRIVER_COMPRESS(body)
    assert lz4_unbody(DRIVER_COMPRESS(body)) == body == DRIVER_INFLATE(lz4_body(body))


def test_a_broken_v4_body_is_an_error() -> None:
    with pytest.raises(FramingError, match="no length"):
        lz4_unbody(b"\x00\x01")
    with pytest.raises(FramingError, match="claims"):
        lz4_unbody(b"\xff\xff\xff\xff" + b"abc")
    with pytest.raises(Exception, match="(?i)decompress|corrupt|lz4"):
        lz4_unbody(b"\x00\x00\x01\x00" + b"\x00\x00\x00")


def test_the_codec_is_chosen_as_the_driver_chooses_it() -> None:
    offered = ["snappy", "lz4"]
    assert choose(True, 4, offered, "h") is not None
    assert choose(True, 5, offered, "h") is not None
    chosen = choose("lz4", 5, offered, "h")
    assert chosen is not None and chosen.name == LZ4
    assert choose(False, 5, offered, "h") is None and choose(None, 4, offered, "h") is None
    assert choose(True, 5, [], "h") is None
    assert choose(True, 5, ["snappy"], "h") is None  # snappy: never on v5
    with pytest.raises(ProtocolError, match="not supported by the Cassandra server at h"):
        choose("snappy", 4, ["lz4"], "h")  # as the driver: asked for, not offered
    if "snappy" not in driver_connection.locally_supported_compressions:
        assert choose("lz4", 4, ["snappy"], "h") is None  # as the driver: none in common


@pytest.mark.parametrize("chunk", [3, 1000, 1 << 20])
def test_compressed_segments_read_back_and_decode_as_the_drivers(chunk: int) -> None:
    bodies = [b"x" * 10, b"", bytes(range(256)) * 700, b"y" * 300_000, b"z" * 5]
    frames = [envelope(5, 0, i, OP_QUERY, body) for i, body in enumerate(bodies)]
    wire = segments(frames, deflate_lz4)
    assert len(wire) < sum(map(len, frames)) // 5
    reader = FrameReassembler([5])
    reader.enable_segments(inflate_lz4)
    got = []
    for at in range(0, len(wire), chunk):
        reader.write(wire[at:at + chunk])
        while reader.next_frame():
            got.append((reader.stream, bytes(reader.body)))
    assert got == list(enumerate(bodies))
    # the driver's own segment codec reads the first segment's header and payload alike
    import io
    header = SEGMENT_CODEC.decode_header(io.BytesIO(wire))
    payload = SEGMENT_CODEC.decode(io.BytesIO(wire[8:]), header)
    assert payload.payload.startswith(frames[0] + frames[1])


class _CompressingServer(asyncio.Protocol):
    """Answers each v4 request with a RESULT carrying its (inflated) body, compressed."""

    def __init__(self) -> None:
        self.reader = FrameReassembler([4])
        self.compressed_requests = 0

    def connection_made(self, transport: Any) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.reader.write(data)
        while self.reader.next_frame():
            body = bytes(self.reader.body)
            if self.reader.flags & COMPRESSED:
                self.compressed_requests += 1
                body = DRIVER_INFLATE(body)
            self.transport.write(envelope(0x84, COMPRESSED, self.reader.stream, OP_RESULT,
                                          DRIVER_COMPRESS(body)))


def test_a_v4_connection_compresses_requests_and_inflates_answers() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        server = _CompressingServer()
        listening = await loop.create_server(lambda: server, "127.0.0.1", 0)
        port = listening.sockets[0].getsockname()[1]
        conn = Connection(loop, 4, "test-host", 10)
        factory: Any = lambda: conn  # noqa: E731
        await loop.create_connection(factory, "127.0.0.1", port)
        try:
            bodies = [b"a" * 5000, b"b", bytes(range(256)) * 40]
            with pytest.raises(ConnectionShutdown, match="no compression was agreed"):
                await conn.request(OP_QUERY, b"x", 0, 5)
            conn = Connection(loop, 4, "test-host", 10)
            await loop.create_connection(factory, "127.0.0.1", port)
            choice = choose(LZ4, 4, [LZ4], "test-host")
            assert choice is not None
            conn.inflate = choice.inflate
            conn.deflate = choice.compress
            answers = await asyncio.gather(*(conn.request(OP_QUERY, b, 0, 5) for b in bodies))
            assert [a.body for a in answers] == bodies
            assert all(not a.flags & COMPRESSED for a in answers)
            # a body under SMALL_PAYLOAD bytes (b"b") goes uncompressed, its flag unset
            assert server.compressed_requests == len(bodies) - 1
            assert conn.leftovers() == (0, 0, 0)
        finally:
            conn.close()
            listening.close()
    asyncio.run(main())
