"""The segments' CRC32: zlib-ng's (where installed) is zlib's, piece by piece; without
zlib-ng the reassembler falls back to zlib and still rejects a bad checksum."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import zlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cqlcodec.connection import checksums
from cqlcodec.connection.pieces import Pieces

needs_zlib_ng = pytest.mark.skipif(checksums.ZLIB_NG_CRC32 is None, reason="zlib-ng is not installed")


@needs_zlib_ng
@given(data=st.binary(max_size=2000) | st.builds(lambda b, n: b * n, st.binary(min_size=1, max_size=64),
                                                 st.integers(1, 2000)),
       seed=st.integers(0, 0xFFFFFFFF), cut=st.integers(0, 130_000))
def test_zlib_ng_continues_a_crc_as_zlib_does(data: bytes, seed: int, cut: int) -> None:
    crc = checksums.ZLIB_NG_CRC32
    assert crc is not None
    view = memoryview(data)
    assert crc(view, seed) == zlib.crc32(data, seed)
    cut = min(cut, len(data))
    assert crc(view[cut:], crc(view[:cut], seed)) == zlib.crc32(data, seed)


@given(chunks=st.lists(st.binary(max_size=3000), max_size=12), skip=st.integers(0, 2000),
       seed=st.integers(0, 0xFFFFFFFF))
def test_pieces_crc32_is_zlibs_over_the_buffers(chunks: list[bytes], skip: int, seed: int) -> None:
    pieces = Pieces()
    for chunk in chunks:
        pieces.add(chunk, 0, len(chunk))
    joined = b"".join(chunks)
    skip = min(skip, len(joined))
    pieces.take(skip)
    assert pieces.crc32(len(joined) - skip, seed) == zlib.crc32(joined[skip:], seed)


def test_provider_names_the_library() -> None:
    expected = "zlib" if checksums.ZLIB_NG_CRC32 is None else "zlib-ng"
    assert checksums.crc32_provider() == expected


def test_without_zlib_ng_a_bad_segment_crc_is_still_refused() -> None:
    """A process where zlib-ng cannot be imported: zlib computes the CRC, a segment made
    by the driver's encoder gives its frame, and the same segment with one payload byte
    flipped is a checksum error."""
    pytest.importorskip("cassandra.segment")
    script = textwrap.dedent("""
        import io, sys
        sys.modules["zlib_ng"] = None  # the import fails as if it were not installed
        from cassandra.segment import SegmentCodec
        from cqlcodec.connection import FrameReassembler, checksums
        from cqlcodec.errors import FramingError
        assert checksums.crc32_provider() == "zlib", checksums.crc32_provider()
        body = bytes(range(256)) * 40
        frame = bytes([0x85, 0, 0, 1, 8]) + len(body).to_bytes(4, "big") + body
        out = io.BytesIO()
        SegmentCodec().encode(out, frame)
        good = out.getvalue()
        r = FrameReassembler((5,))
        r.enable_segments(None)
        r.write(good)
        assert r.next_frame() and r.body == body
        bad = bytearray(good)
        bad[100] ^= 1
        r = FrameReassembler((5,))
        r.enable_segments(None)
        r.write(bytes(bad))
        try:
            r.next_frame()
        except FramingError as exc:
            assert exc.checksum, exc
            print("refused")
    """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "refused"
