"""Rows sent without their metadata (v5 skip-metadata) are read by the result metadata
whose id the request sent, even when the statement learned new metadata (a re-prepare
after ``ALTER TABLE ... ADD``) before the answer came."""

from __future__ import annotations

import struct
from types import SimpleNamespace
from typing import Any

import pytest

pytest.importorskip("cassandra")

from cassandra import ConsistencyLevel  # noqa: E402
from cassandra.cluster import _ConfigMode  # noqa: E402
from cassandra.cqltypes import Int32Type, UTF8Type  # noqa: E402
from cassandra.protocol import ProtocolHandler  # noqa: E402
from cassandra.query import PreparedStatement, tuple_factory  # noqa: E402

from cqlcodec.errors import CodecError  # noqa: E402
from cqlcodec.requests.connection import Frame  # noqa: E402
from cqlcodec.requests.decode import Decoder  # noqa: E402
from cqlcodec.requests.frames import OP_EXECUTE, OP_RESULT  # noqa: E402
from cqlcodec.requests.statements import Request, set_result_metadata  # noqa: E402

ROWS = 2
NO_METADATA = 0x0004
OLD = [("ks", "t", "k", Int32Type), ("ks", "t", "a", UTF8Type)]
NEW = [*OLD, ("ks", "t", "b", Int32Type)]


def _session() -> Any:
    cluster = SimpleNamespace(_config_mode=_ConfigMode.LEGACY, default_retry_policy=None,
                              load_balancing_policy=None, _user_types={})
    return SimpleNamespace(cluster=cluster, default_timeout=10.0,
                           default_consistency_level=ConsistencyLevel.ONE,
                           default_serial_consistency_level=None, row_factory=tuple_factory,
                           client_protocol_handler=ProtocolHandler)


def _two_column_rows() -> bytes:
    cells = struct.pack(">i", 4) + struct.pack(">i", 7) + struct.pack(">i", 2) + b"a7"
    return struct.pack(">iiii", ROWS, NO_METADATA, 2, 1) + cells


def _statement() -> Any:
    made: Any = PreparedStatement
    return made(None, b"q-alter", None, "select", "ks", 5, OLD, b"old-id", None)


def test_the_metadata_sent_is_the_one_paired_with_the_id_sent() -> None:
    ps = _statement()
    req = Request(OP_EXECUTE, "", ps, [], _session(), None)
    req.skip_metadata = True
    req.body(5)
    assert req.sent_metadata is OLD
    set_result_metadata(ps, NEW, b"new-id")
    req.body(5)
    assert req.sent_metadata is NEW


def test_rows_without_metadata_are_read_by_the_metadata_sent() -> None:
    ps = _statement()
    set_result_metadata(ps, NEW, b"new-id")  # re-prepared while the answer was on its way
    decoder = Decoder(_session())
    page = decoder.page(Frame(5, 0, 3, OP_RESULT, _two_column_rows()), 5, ps, OLD,
                        tuple_factory, False)
    assert page.rows == [(7, "a7")] and page.column_names == ["k", "a"]
    assert ps.result_metadata is NEW  # the statement keeps what it learned
    # read by the statement's new metadata, the same rows are malformed (the race's error)
    with pytest.raises(CodecError):
        decoder.page(Frame(5, 0, 4, OP_RESULT, _two_column_rows()), 5, ps, NEW, tuple_factory,
                     False)
