"""A differential fuzz of the request path's answer decoder against the driver's own, on
the RESULT frames of byte streams a real server sent (``tests/connection/streams``,
recorded from Cassandra 5.0.9 by ``tools/capture_streams.py``).

Each RESULT rows frame is read as the answer to a prepared statement whose result
columns are the frame's (as the request path reads an EXECUTE's answer: cqlcodec's
compiled row decoder), with its metadata and without it (skip-metadata), behind a
tracing id, warnings and a custom payload or not; then mutated (bytes flipped, cut
short, length words and counts set to hostile values, bytes dropped or added). The
driver's ``decode_message`` with the same result metadata is the reference: where it
gives rows, :class:`cqlcodec.requests.decode.Decoder` gives the same rows and paging
state; where it raises, ours raises too, a :class:`cqlcodec.CodecError` (or the
driver's own exception, where ours hands a body it does not read to the driver's
decoder), never anything else, never a crash or a hang.
"""

from __future__ import annotations

import gzip
import json
import math
import struct
import uuid
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ProtocolHandler: Any = pytest.importorskip("cassandra.protocol").ProtocolHandler

from cassandra import DriverException  # noqa: E402
from cassandra.query import PreparedStatement, tuple_factory  # noqa: E402

from cqlcodec.connection.lz4_segments import inflate_lz4, lz4_available  # noqa: E402
from cqlcodec.connection.reassembler import FrameReassembler  # noqa: E402
from cqlcodec.errors import CodecError  # noqa: E402
from cqlcodec.protocol.metadata import read_rows_metadata  # noqa: E402
from cqlcodec.requests.connection import Frame  # noqa: E402
from cqlcodec.requests.decode import Decoder  # noqa: E402
from cqlcodec.requests.frames import (  # noqa: E402
    FLAG_CUSTOM_PAYLOAD,
    FLAG_TRACING,
    FLAG_WARNING,
    OP_RESULT,
)

STREAMS = Path(__file__).resolve().parent.parent / "connection" / "streams"
ROWS = 2
NO_METADATA = 0x0004
HAS_MORE_PAGES = 0x0002
INTS = (-3, -2, -1, 0, 1, 2, 3, 4, 0x7FFFFFFF, 0x7FFFFFF0, 0x10000, -0x80000000, 0xFFFF, 0x8000)


class _SessionParts:
    """What the decoder reads of a driver session: its protocol handler (the driver's
    decoder, the reference) and its cluster's user types (none here)."""

    class _Cluster:
        _user_types: dict[str, Any] = {}

    client_protocol_handler = ProtocolHandler
    cluster = _Cluster()


class Case:
    """One RESULT rows body of a captured stream and the statement that asked for it."""

    def __init__(self, version: int, body: bytes, metadata: Any, name: str) -> None:
        self.version = version
        self.body = body
        self.metadata = metadata
        self.name = name


@cache
def _cases() -> tuple[Case, ...]:
    out: list[Case] = []
    for meta_path in sorted(STREAMS.glob("*.json")):
        meta = json.loads(meta_path.read_text())
        if meta["lz4"] and not lz4_available():
            continue
        version = meta["protocol"]
        data = gzip.decompress(meta_path.with_suffix(".bin.gz").read_bytes())
        reader = FrameReassembler([version])
        reader.write(data)
        seen = 0
        seen_bodies: set[bytes] = set()
        while reader.next_frame():
            seen += 1
            if seen == meta["segments_after_frames"]:
                reader.enable_segments(inflate_lz4 if meta["lz4"] else None)
            body = bytes(reader.body)
            if reader.opcode != OP_RESULT or struct.unpack(">i", body[:4])[0] != ROWS:
                continue
            if body in seen_bodies or len(body) > 200_000:
                continue
            seen_bodies.add(body)
            msg = ProtocolHandler.decode_message(version, {}, 0, 0, OP_RESULT, body, None, None)
            name = f"{meta_path.stem}#{seen}"
            out.append(Case(version, body, msg.column_metadata, name))
            # the same rows without their metadata, as an EXECUTE with skip-metadata gets them
            rows_meta = read_rows_metadata(body, 4, len(body), "test")
            flags = NO_METADATA | (rows_meta.flags & HAS_MORE_PAGES)
            head = struct.pack(">iii", ROWS, flags, len(msg.column_metadata))
            if rows_meta.paging_state is not None:
                head += struct.pack(">i", len(rows_meta.paging_state)) + rows_meta.paging_state
            out.append(Case(version, head + body[rows_meta.end:], msg.column_metadata,
                            name + "-no-metadata"))
    assert len(out) >= 6, "the captured streams hold RESULT rows frames"
    return tuple(out)


def _prefix(flags: int) -> bytes:
    out = b""
    if flags & FLAG_TRACING:
        out += uuid.UUID(int=43).bytes
    if flags & FLAG_WARNING:
        out += struct.pack(">H", 2) + struct.pack(">H", 4) + b"warn" + struct.pack(">H", 0)
    if flags & FLAG_CUSTOM_PAYLOAD:
        out += struct.pack(">HH", 1, 1) + b"k" + struct.pack(">i", 3) + b"abc"
    return out


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return bool(a == b)


def _theirs(case: Case, flags: int, body: bytes) -> tuple[Any, Any] | BaseException:
    try:
        msg = ProtocolHandler.decode_message(case.version, {}, 0, flags, OP_RESULT, body, None,
                                             case.metadata)
        if getattr(msg, "kind", None) != ROWS:
            return None, None  # another kind of RESULT: no rows (ours: the driver's message)
        return tuple_factory(msg.column_names, msg.parsed_rows), msg.paging_state
    except Exception as exc:  # noqa: BLE001 - any error of the reference is an outcome
        return exc


def _ours(decoder: Decoder, case: Case, flags: int, body: bytes,
          ps: Any) -> tuple[Any, Any] | BaseException:
    try:
        page = decoder.page(Frame(case.version, flags, 0, OP_RESULT, body), case.version, ps,
                            ps.result_metadata, tuple_factory, False)
        return page.rows, page.paging_state
    except Exception as exc:  # noqa: BLE001 - judged below
        return exc


def _mutate(data: bytes, kind: int, at: int, value: int) -> bytes:
    if not data:
        return data
    at %= len(data)
    if kind == 0:  # a flipped byte
        return data[:at] + bytes([data[at] ^ (1 + value % 255)]) + data[at + 1:]
    if kind == 1:  # cut short
        return data[:at]
    if kind == 2:  # an int (length word, count, flags) set to a hostile value
        return data[:at] + struct.pack(">i", INTS[value % len(INTS)]) + data[at + 4:]
    if kind == 3:  # a short (string length, column count) set to a hostile value
        return data[:at] + struct.pack(">H", (0, 1, 0xFFFF, 0x8000, 0x7FFF)[value % 5]) + \
            data[at + 2:]
    if kind == 4:  # bytes dropped
        return data[:at] + data[at + 1 + value % 16:]
    return data[:at] + bytes([value % 256]) * (1 + value % 7) + data[at:]  # bytes added


def _statement(case: Case) -> Any:
    """A prepared statement whose result columns are the case's (the driver's class)."""
    made: Any = PreparedStatement
    return made(None, b"q" + case.name.encode(), None, "fuzz", None, case.version,
                case.metadata, None, None)


def _judge(case: Case, flags: int, body: bytes, what: str) -> None:
    decoder = Decoder(_SessionParts())
    ps = _statement(case)
    theirs = _theirs(case, flags, body)
    ours = _ours(decoder, case, flags, body, ps)
    where = f"{case.name} {what}"
    if isinstance(ours, BaseException):
        # cqlcodec's error, or the driver's own word on an answer ours hands to its decoder
        # (DriverException: an unknown RESULT kind, a column value it cannot decode)
        assert isinstance(ours, (CodecError, DriverException)), \
            f"{where}: ours raised {type(ours).__name__}: {ours}"
        if isinstance(ours, CodecError):
            assert str(ours), f"{where}: a cqlcodec error without a message"
        if isinstance(theirs, BaseException):
            return
        # ours stricter than the driver: only where the driver read past what the
        # metadata promised or took a length it could not check
        assert isinstance(ours, CodecError), f"{where}: ours {ours!r}, theirs read {theirs!r}"
        return
    assert not isinstance(theirs, BaseException), \
        f"{where}: the driver raised {theirs!r}, ours gave {ours[0]!r}"
    assert _same(list(ours[0] or []), list(theirs[0] or [])) and \
        (ours[0] is None) == (theirs[0] is None), f"{where}: {ours[0]!r} != {theirs[0]!r}"
    assert ours[1] == theirs[1], f"{where}: paging state {ours[1]!r} != {theirs[1]!r}"


def test_every_captured_answer_decodes_as_the_drivers() -> None:
    for case in _cases():
        for flags in (0, FLAG_TRACING | FLAG_WARNING | FLAG_CUSTOM_PAYLOAD):
            _judge(case, flags, _prefix(flags) + case.body, f"flags {flags:#x}")
        # read by cqlcodec's row decoder, not handed to the driver's (no message kept)
        ps = _statement(case)
        page = Decoder(_SessionParts()).page(Frame(case.version, 0, 0, OP_RESULT, case.body),
                                             case.version, ps, ps.result_metadata,
                                             tuple_factory, False)
        assert page.message is None and page.rows is not None, case.name


@settings(max_examples=300, deadline=2000, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(which=st.integers(0, 10_000), prefix=st.sampled_from([0, FLAG_WARNING, FLAG_TRACING
                                                             | FLAG_CUSTOM_PAYLOAD]),
       mutations=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 1 << 20),
                                    st.integers(0, 1 << 16)), min_size=1, max_size=3),
       near_front=st.booleans())
def test_mutated_answers_decode_as_the_drivers_or_raise(
        which: int, prefix: int, mutations: list[tuple[int, int, int]], near_front: bool) -> None:
    cases = [c for c in _cases() if len(c.body) <= 4096]  # the big ones: whole only (time)
    case = cases[which % len(cases)]
    data = _prefix(prefix) + case.body
    for kind, at, value in mutations:
        # half the mutations land in the first 64 bytes: the prefix, the metadata, the
        # first rows, where the lengths and counts are
        data = _mutate(data, kind, at % 64 if near_front else at, value)
    _judge(case, prefix, data, f"mutated {mutations} near front {near_front}")
