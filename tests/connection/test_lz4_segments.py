"""inflate_lz4 against the driver's own LZ4 segment codec: same bytes, same errors."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cqlcodec.connection.driver_class import segment_decompressor
from cqlcodec.connection.lz4_segments import inflate_lz4

connection: Any = pytest.importorskip("cassandra.connection")
if connection.segment_codec_lz4 is None:
    pytest.skip("lz4 is not installed: the driver offers no compression on v5",
                allow_module_level=True)
CODEC: Any = connection.segment_codec_lz4


def _compressed(data: bytes) -> bytes:
    return bytes(CODEC.compress(data))  # a segment's payload: the size is in its header


def _outcome(inflate: Any, payload: bytes, length: int) -> tuple[str, Any]:
    try:
        return "bytes", inflate(payload, length)
    except Exception as exc:  # the driver's and ours must fail alike
        return type(exc).__name__, str(exc)


# an uncompressed length of 0 in a segment header means "stored as is": never inflated
@given(data=st.binary(min_size=1, max_size=4096) | st.builds(lambda b, n: b * n, st.binary(min_size=1, max_size=8),
                                                 st.integers(1, 4000)))
def test_inflate_is_the_drivers(data: bytes) -> None:
    payload = _compressed(data)
    assert inflate_lz4(payload, len(data)) == CODEC.decompress(payload, len(data)) == data


@pytest.mark.parametrize("change", ["size too large", "size too small", "truncated", "garbage"])
def test_bad_payloads_fail_as_in_the_driver(change: str) -> None:
    data = b"cqlcodec segment " * 200
    payload, length = _compressed(data), len(data)
    if change == "size too large":
        length += 7
    elif change == "size too small":
        length -= 7
    elif change == "truncated":
        payload = payload[:len(payload) // 2]
    else:
        payload = bytes(range(256)) * 4
    ours = _outcome(inflate_lz4, payload, length)
    assert ours[0] != "bytes"
    assert ours == _outcome(CODEC.decompress, payload, length)


def test_the_connection_uses_it_for_the_drivers_lz4_codec_only() -> None:
    assert segment_decompressor(CODEC) is inflate_lz4
    assert segment_decompressor(connection.segment_codec_no_compression) is None
    other = connection.SegmentCodec(CODEC.compressor, CODEC.decompressor)
    assert segment_decompressor(other) == other.decompress
