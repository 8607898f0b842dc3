"""EXECUTE and QUERY frames from the request writer against the driver's own
``encode_message``: the same bytes for every combination of fields, and the driver's
encoder (its bytes, its errors) for every request the writer refuses."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cqlcodec.connection.request_writer import RequestEncoder, encode_request, request_encoder
from cqlcodec.connection.skip_metadata import SkipMetadataExecute

protocol: Any = pytest.importorskip("cassandra.protocol")
DRIVER = protocol.ProtocolHandler.encode_message
UNSET = protocol._UNSET_VALUE

values = st.none() | st.lists(st.none() | st.just(UNSET) | st.binary(max_size=40), max_size=12)
optional = st.none() | st.just(0)


def _driver(msg: Any, stream: int, version: int, beta: bool, compressor: Any = None) -> bytes:
    frame: bytes = DRIVER(msg, stream, version, compressor=compressor,
                          allow_beta_protocol_version=beta)
    return frame


@st.composite
def requests(draw: Any) -> tuple[Any, int]:
    version = draw(st.sampled_from([4, 5]))
    common = dict(
        consistency_level=draw(st.integers(0, 10)),
        serial_consistency_level=draw(optional | st.integers(8, 9)),
        fetch_size=draw(optional | st.integers(1, 2**31 - 1)),
        paging_state=draw(st.none() | st.binary(max_size=30)),
        timestamp=draw(st.none() | st.integers(0, 2**63)),
    )
    kind = draw(st.sampled_from(["execute", "skip", "query"]))
    msg: Any
    if kind == "query":
        msg = protocol.QueryMessage(draw(st.text(max_size=60)), **common)
        msg.query_params = draw(values)
        if version == 5:
            msg.keyspace = draw(st.none() | st.text(max_size=10))
    else:
        cls: Any = SkipMetadataExecute if kind == "skip" else protocol.ExecuteMessage
        msg = cls(draw(st.binary(min_size=1, max_size=16)), draw(values),
                  result_metadata_id=draw(st.binary(min_size=1, max_size=16)), **common)
    msg.tracing = draw(st.booleans())
    return msg, version


@settings(max_examples=300, deadline=None)
@given(request=requests(), stream=st.integers(-32768, 32767), beta=st.booleans())
def test_frames_are_the_drivers(request: tuple[Any, int], stream: int, beta: bool) -> None:
    msg, version = request
    ours = encode_request(msg, stream, version, None, beta)
    assert ours is not None
    assert ours == _driver(msg, stream, version, beta)


def _execute(params: Any = (b"\x00\x00\x00\x01",)) -> Any:
    return protocol.ExecuteMessage(b"id", list(params), 1, result_metadata_id=b"m")


@pytest.mark.parametrize("change", [
    "custom payload", "v3", "v4 compressor", "other message", "str value", "bool consistency",
    "no metadata id", "v4 keyspace", "negative timestamp",
])
def test_refusals_go_to_the_driver(change: str) -> None:
    msg: Any = _execute()
    version, compressor = 5, None
    if change == "custom payload":
        msg.custom_payload = {"k": b"v"}
    elif change == "v3":
        version = 3
    elif change == "v4 compressor":
        version, compressor = 4, (lambda b: b"\x00\x00\x00\x00" + b)
    elif change == "other message":
        msg = protocol.OptionsMessage()
    elif change == "str value":
        msg = _execute(["text"])
    elif change == "bool consistency":
        msg.consistency_level = True
    elif change == "no metadata id":
        msg.result_metadata_id = None
    elif change == "v4 keyspace":
        msg = protocol.QueryMessage("SELECT 1", 1, keyspace="ks")
        version = 4
    elif change == "negative timestamp":
        msg.timestamp = -1
    assert encode_request(msg, 3, version, compressor, False) is None
    encoder = RequestEncoder(DRIVER)

    def outcome(encode: Any) -> tuple[str, Any]:
        try:
            return "bytes", encode(msg, 3, version, compressor=compressor,
                                   allow_beta_protocol_version=False)
        except Exception as exc:  # the driver's error, whoever is asked
            return type(exc).__name__, str(exc)

    assert outcome(encoder) == outcome(DRIVER)


def test_other_arguments_go_to_the_driver() -> None:
    seen: list[Any] = []

    def driver_like(*args: Any, **kwargs: Any) -> bytes:
        seen.append((args, kwargs))
        return b"driver"

    encoder = RequestEncoder(driver_like)
    assert encoder(_execute(), 1, 5, compressor=None, allow_beta_protocol_version=False,
                   protocol_features=None) == b"driver"
    assert encoder(_execute(), 1, 5, compressor=None, allow_beta_protocol_version=False) != b"driver"
    assert len(seen) == 1


def test_only_the_drivers_own_encoder_is_replaced() -> None:
    class Handler(protocol.ProtocolHandler):  # type: ignore[misc]
        pass

    class OwnWay(protocol.ProtocolHandler):  # type: ignore[misc]
        @classmethod
        def encode_message(cls, *args: Any, **kwargs: Any) -> bytes:
            return b""

    mine = request_encoder(Handler.encode_message)
    assert isinstance(mine, RequestEncoder) and request_encoder(Handler.encode_message) is mine
    assert request_encoder(OwnWay.encode_message) == OwnWay.encode_message
