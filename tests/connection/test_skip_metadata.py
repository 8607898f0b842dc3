"""Skip-metadata on v5: the EXECUTE body is the driver's with flag 0x02 added, and only
for a v5 statement's ResultColumns decoded by install()'s handler."""

from __future__ import annotations

import io
from typing import Any

import pytest
from cassandra.protocol import ExecuteMessage
from cassandra.query import PreparedStatement

from cqlcodec.connection.skip_metadata import (
    HANDLER_FLAG,
    ResultColumns,
    SkipMetadataExecute,
    before_send,
    columns_changed,
    track,
)


def _message(values: list[bytes | None], **options: Any) -> ExecuteMessage:
    return ExecuteMessage(b"\x01\x02query-id", values, 1, result_metadata_id=b"\x09" * 16,
                          **options)  # type: ignore[call-arg]


def _body(msg: ExecuteMessage, protocol_version: int, prefix: bytes = b"") -> bytes:
    f = io.BytesIO()
    f.write(prefix)
    msg.send_body(f, protocol_version)
    return f.getvalue()


class _Handler:
    """A protocol handler flagged as install()'s."""

    @classmethod
    def decode_message(cls) -> None: ...


setattr(_Handler, HANDLER_FLAG, True)


class _Subclass(_Handler):
    """Inherits the flag: not install()'s handler."""


@pytest.mark.parametrize("options", [{}, {"fetch_size": 50, "timestamp": 123},
                                     {"serial_consistency_level": 8, "paging_state": b"p"}])
@pytest.mark.parametrize("prefix", [b"", b"custom payload"])
def test_the_body_is_the_drivers_with_the_flag(options: dict[str, Any], prefix: bytes) -> None:
    for version in (4, 5):
        plain = _body(_message([b"\x00\x00\x00\x01", None], **options), version, prefix)
        msg = _message([b"\x00\x00\x00\x01", None], **options)
        msg.__class__ = SkipMetadataExecute
        skipping = _body(msg, version, prefix)
        if version == 4:
            assert skipping == plain
            continue
        at = len(prefix) + 2 + 10 + 2 + 16 + 2
        assert skipping[:at] == plain[:at] and skipping[at + 4:] == plain[at + 4:]
        flags = int.from_bytes(plain[at:at + 4], "big")
        assert not flags & 0x02 and int.from_bytes(skipping[at:at + 4], "big") == flags | 0x02


def _statement(version: int) -> PreparedStatement:
    return PreparedStatement([], b"qid", None, "SELECT", "ks", version,
                             [("ks", "t", "k", object)], b"id-1")  # type: ignore[list-item]


def test_only_v5_statements_decoded_by_installs_handler_skip() -> None:
    v5, v4 = _statement(5), _statement(4)
    track(v5)
    track(v4)
    assert type(v5.result_metadata) is ResultColumns and v5.result_metadata.metadata_id == b"id-1"
    assert type(v4.result_metadata) is list
    cases = [(v5.result_metadata, _Handler.decode_message, 5, True),
             (v5.result_metadata, _Subclass.decode_message, 5, False),
             (v5.result_metadata, None, 5, False),
             (v5.result_metadata, _Handler.decode_message, 4, False),
             (list(v5.result_metadata or []), _Handler.decode_message, 5, False)]
    for columns, decoder, version, skips in cases:
        msg = _message([])
        msg.result_metadata_id = b"stale"
        before_send(msg, decoder, columns, version)
        assert (type(msg) is SkipMetadataExecute) == skips
        assert msg.result_metadata_id == (b"id-1" if skips else b"stale")


def test_metadata_changed_gives_the_statement_new_columns() -> None:
    ps = _statement(5)
    track(ps)
    sent = ps.result_metadata
    new_columns: Any = [("ks", "t", "k", object), ("ks", "t", "v", object)]
    columns_changed(sent, new_columns, b"id-2")
    now = ps.result_metadata
    assert type(now) is ResultColumns and now == new_columns and now.metadata_id == b"id-2"
    assert ps.result_metadata_id == b"id-2" and now.statement is ps
    columns_changed(sent, list(new_columns), b"id-2")  # a second answer: nothing new
    assert ps.result_metadata is now
    columns_changed(list(new_columns), new_columns, b"id-3")  # not tracked: left alone
    assert ps.result_metadata is now


class _PairStatement(PreparedStatement):
    """cassandra-driver's statement with scylla-driver 3.29.12's API for its result
    metadata: read-only ``result_metadata`` and ``result_metadata_id``, replaced as one
    pair by ``update_result_metadata`` (scylla-driver's own class is not installed here)."""

    def __init__(self, columns: Any, metadata_id: bytes) -> None:  # the attributes used
        self.protocol_version = 5
        self._pair = (columns, metadata_id)

    @property
    def result_metadata(self) -> Any:
        return self._pair[0]

    @property
    def result_metadata_id(self) -> Any:
        return self._pair[1]

    def update_result_metadata(self, columns: Any, metadata_id: Any) -> None:
        self._pair = (columns, metadata_id)


def test_a_statement_with_read_only_metadata_is_updated_as_a_pair() -> None:
    ps = _PairStatement([("ks", "t", "k", object)], b"id-1")
    track(ps)  # before: AttributeError, the property has no setter
    sent = ps.result_metadata
    assert type(sent) is ResultColumns and sent.metadata_id == b"id-1"
    new_columns: Any = [("ks", "t", "k", object), ("ks", "t", "v", object)]
    columns_changed(sent, new_columns, b"id-2")
    assert ps.result_metadata == new_columns and ps.result_metadata_id == b"id-2"
    assert type(ps.result_metadata) is ResultColumns and ps.result_metadata.statement is ps


class _FeaturesExecute(ExecuteMessage):
    """An EXECUTE whose ``send_body`` takes the protocol features too, as scylla-driver
    3.29.12's does (``send_body(f, protocol_version, protocol_features)``)."""

    features: Any = "unset"

    def send_body(self, f: io.BytesIO, protocol_version: int,
                  protocol_features: Any = None) -> None:
        self.features = protocol_features
        super().send_body(f, protocol_version)


class _SkippingFeatures(SkipMetadataExecute, _FeaturesExecute):
    """SkipMetadataExecute over that driver's EXECUTE."""


def test_the_drivers_extra_send_body_arguments_pass_through() -> None:
    features = object()
    plain: Any = _message([b"\x00"])
    plain.__class__ = _FeaturesExecute
    expected = io.BytesIO()
    plain.send_body(expected, 5, features)
    msg: Any = _message([b"\x00"])
    msg.__class__ = _SkippingFeatures
    f = io.BytesIO()
    msg.send_body(f, 5, features)  # before: TypeError, 3 positional arguments but 4 given
    assert msg.features is features
    at = 2 + 10 + 2 + 16 + 2
    assert int.from_bytes(f.getvalue()[at:at + 4], "big") & 0x02
    assert f.getvalue()[:at] == expected.getvalue()[:at]
