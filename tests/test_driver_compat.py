"""cqlcodec.driver where cqlcodec and the driver alone could part ways, without a server:
empty values and ``support_empty_values``, protocol versions and types cqlcodec does not
decode, malformed rows, timestamps outside ``datetime``'s range, the shapes of bind values
and statements prepared before ``install``.

Every expectation is the driver's own result for the same bytes or values, through its
Cython message class (when the driver has one) and its pure-Python one.
"""

from __future__ import annotations

import functools
import io
import logging
import struct
from collections.abc import Callable, Iterator
from types import MappingProxyType
from typing import Any

import pytest
from cassandra import DriverException
from cassandra import cqltypes as ct
from cassandra.cluster import Cluster
from cassandra.protocol import (
    ColumnMetadata,
    ProtocolHandler,
    ResultMessage,
    _ProtocolHandler,
)
from cassandra.query import UNSET_VALUE, PreparedStatement
from integration.compare import assert_same
from oracle import _restore_registries, _save_registries

import cqlcodec
import cqlcodec.driver.installer as drv

HANDLERS = [ProtocolHandler] + ([_ProtocolHandler] if ProtocolHandler is not _ProtocolHandler
                                else [])
HANDLER_IDS = ["cython", "pure"][: len(HANDLERS)] if ProtocolHandler is not _ProtocolHandler \
    else ["pure"]

INT, BIGINT, TEXT, BLOB, TIMESTAMP = (b"\x00\x09", b"\x00\x02", b"\x00\x0d", b"\x00\x03",
                                      b"\x00\x0b")


def _string(text: str) -> bytes:
    data = text.encode()
    return struct.pack(">H", len(data)) + data


def custom(class_name: str) -> bytes:
    """The [option] of a custom type."""
    return b"\x00\x00" + _string(class_name)


def list_of(option: bytes) -> bytes:
    return b"\x00\x20" + option


def map_of(key: bytes, value: bytes) -> bytes:
    return b"\x00\x21" + key + value


def tuple_of(*options: bytes) -> bytes:
    return b"\x00\x31" + struct.pack(">H", len(options)) + b"".join(options)


def udt(name: str, fields: list[tuple[str, bytes]]) -> bytes:
    return (b"\x00\x30" + _string("ks") + _string(name) + struct.pack(">H", len(fields))
            + b"".join(_string(n) + o for n, o in fields))


def value(data: bytes | None) -> bytes:
    """A [bytes] value: length then content; None is null."""
    return struct.pack(">i", -1) if data is None else struct.pack(">i", len(data)) + data


def elements(*items: bytes | None) -> bytes:
    """The content of a list or set (protocol v3+)."""
    return struct.pack(">i", len(items)) + b"".join(value(i) for i in items)


def rows_body(columns: list[tuple[str, bytes]], rows: list[list[bytes | None]], *,
              with_metadata: bool = True) -> bytes:
    """A RESULT Rows body after its kind: (name, [option]) columns of table ks.t."""
    out = [struct.pack(">ii", 0x0001 if with_metadata else 0x0004, len(columns))]
    if with_metadata:
        out.append(_string("ks") + _string("t"))
        out.extend(_string(name) + option for name, option in columns)
    out.append(struct.pack(">i", len(rows)))
    out.extend(value(cell) for row in rows for cell in row)
    return b"".join(out)


def decode(message_class: type[ResultMessage], body: bytes, protocol_version: int = 4,
           result_metadata: Any = None) -> ResultMessage:
    """``body`` read as the driver reads it: the kind just consumed from the stream."""
    f = io.BytesIO(b"\x00\x00\x00\x02" + body)
    f.read(4)
    msg = message_class(2)
    msg.recv_results_rows(f, protocol_version, {}, result_metadata, None)
    return msg


def driver_class(handler: Any) -> type[ResultMessage]:
    found = handler.message_types_by_opcode[ResultMessage.opcode]
    assert isinstance(found, type) and issubclass(found, ResultMessage)
    return found


def codec_class(handler: Any, plain_values: bool = False) -> type[ResultMessage]:
    return driver_class(drv._handler_class(handler, drv.Options(plain_values, False)))


def outcome(read: Callable[[], ResultMessage]) -> Any:
    """The rows ``read`` decodes, or the type of the exception it raises."""
    try:
        return read().parsed_rows
    except Exception as exc:
        return type(exc)


def assert_rows(expected: Any, actual: Any) -> None:
    assert isinstance(expected, list) and isinstance(actual, list), (expected, actual)
    assert len(expected) == len(actual)
    for i, (e, a) in enumerate(zip(expected, actual)):
        assert_same(tuple(e), tuple(a), f"row {i}")


@pytest.fixture(autouse=True)
def clean_driver_state(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The driver's process-wide type registries are restored and the log-once memory
    of cqlcodec.driver is fresh for every test."""
    monkeypatch.setattr(drv, "_logged", set())
    saved = _save_registries()
    yield
    _restore_registries(saved)


class CountingDecode:
    """Counts the messages cqlcodec decodes (the others went the driver's way)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = 0
        real = drv._decode_rows_at

        def counting(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            return real(*args, **kwargs)
        monkeypatch.setattr(drv, "_decode_rows_at", counting)


# --------------------------------------------------------------------------- empty values

EMPTY_COLUMNS = [
    ("i", INT), ("t", TEXT), ("b", BLOB),
    ("l", list_of(INT)), ("m", map_of(TEXT, INT)), ("tu", tuple_of(INT, TEXT)),
    ("u", udt("pair", [("x", INT), ("y", BIGINT)])),
    ("v", custom("org.apache.cassandra.db.marshal.VectorType("
                 "org.apache.cassandra.db.marshal.IntegerType, 2)")),
    ("rt", custom("org.apache.cassandra.db.marshal.ReversedType("
                  "org.apache.cassandra.db.marshal.UTF8Type)")),
    ("lrt", list_of(custom("org.apache.cassandra.db.marshal.ReversedType("
                           "org.apache.cassandra.db.marshal.UTF8Type)"))),
]
EMPTY_ROWS: list[list[bytes | None]] = [
    # every cell empty
    [b""] * len(EMPTY_COLUMNS),
    # empty values inside: list element, map key and value, tuple and UDT fields (no
    # null inside collections: servers never send one, and the Cython driver refuses it)
    [b"\x00\x00\x00\x01", b"x", b"\x01",
     elements(b"", b"\x00\x00\x00\x02"),
     struct.pack(">i", 2) + value(b"") + value(b"") + value(b"k") + value(b"\x00\x00\x00\x03"),
     value(b"") + value(b""),
     value(None) + value(b""),
     b"\x01\x05\x01\x06",
     b"r",
     elements(b"", b"z")],
    # nulls
    [None] * len(EMPTY_COLUMNS),
]


@pytest.mark.parametrize("handler", HANDLERS, ids=HANDLER_IDS)
@pytest.mark.parametrize("switched", [
    (), (ct.Int32Type,), (ct.LongType,), (ct.UTF8Type,), (ct._CassandraType,),
    (ct.ListType,), (ct.ReversedType,), (ct.IntegerType,)],
    ids=lambda s: "+".join(c.__name__ for c in s) or "off")
def test_empty_values_read_as_the_driver_reads_them(
        handler: Any, switched: tuple[type[ct._CassandraType], ...],
        monkeypatch: pytest.MonkeyPatch) -> None:
    for cls in switched:
        monkeypatch.setattr(cls, "support_empty_values", True)
    body = rows_body(EMPTY_COLUMNS, EMPTY_ROWS)
    expected = decode(driver_class(handler), body).parsed_rows
    actual = decode(codec_class(handler), body).parsed_rows
    assert_rows(expected, actual)
    assert (expected[0][0] is ct.EMPTY) == (ct.Int32Type.support_empty_values is True)


def test_empty_values_switch_decides_who_decodes(monkeypatch: pytest.MonkeyPatch,
                                                 caplog: pytest.LogCaptureFixture) -> None:
    counting = CountingDecode(monkeypatch)
    body = rows_body(EMPTY_COLUMNS, EMPTY_ROWS)
    codec = codec_class(ProtocolHandler)
    decode(codec, body)
    assert counting.calls == 1
    # a switch on a type whose empty values are strings or vector elements changes nothing
    monkeypatch.setattr(ct.UTF8Type, "support_empty_values", True)
    monkeypatch.setattr(ct.IntegerType, "support_empty_values", True)
    decode(codec, body)
    assert counting.calls == 2
    with caplog.at_level(logging.INFO, logger="cqlcodec.driver"):
        monkeypatch.setattr(ct.Int32Type, "support_empty_values", True)
        for _ in range(3):
            assert decode(codec, body).parsed_rows[0][0] is ct.EMPTY
    assert counting.calls == 2
    logged = [r for r in caplog.records if "support_empty_values" in r.getMessage()]
    assert len(logged) == 1 and "Int32Type" in logged[0].getMessage()
    monkeypatch.setattr(ct.Int32Type, "support_empty_values", False)
    assert decode(codec, body).parsed_rows[0][0] is None
    assert counting.calls == 3


@pytest.mark.parametrize("handler", HANDLERS, ids=HANDLER_IDS)
def test_empty_values_switched_after_the_plan_is_cached(
        handler: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    metadata = decode(driver_class(handler), rows_body(EMPTY_COLUMNS, [])).column_metadata
    body = rows_body(EMPTY_COLUMNS, EMPTY_ROWS, with_metadata=False)
    codec = codec_class(handler)
    for switch in [False, True, False, True]:
        monkeypatch.setattr(ct.LongType, "support_empty_values", switch)
        expected = decode(driver_class(handler), body, 4, metadata).parsed_rows
        actual = decode(codec, body, 4, metadata).parsed_rows
        assert_rows(expected, actual)
        assert (actual[1][6][1] is ct.EMPTY) is switch  # the UDT's bigint field


# --------------------------------------------------------------------------- driver's path

@pytest.mark.parametrize("handler", HANDLERS, ids=HANDLER_IDS)
def test_protocol_version_cqlcodec_does_not_decode(
        handler: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    counting = CountingDecode(monkeypatch)
    body = rows_body(EMPTY_COLUMNS, EMPTY_ROWS)
    with caplog.at_level(logging.WARNING, logger="cqlcodec.driver"):
        for version in [6, 6, 2, 6]:
            expected = decode(driver_class(handler), body, version).parsed_rows
            actual = decode(codec_class(handler), body, version).parsed_rows
            assert_rows(expected, actual)
    assert counting.calls == 0
    messages = [r.getMessage() for r in caplog.records if r.name == "cqlcodec.driver"]
    assert len(messages) == 2
    assert "protocol v6" in messages[0] and "protocol v2" in messages[1]


DRIVER_ONLY_TYPES = [
    "org.apache.cassandra.db.marshal.PointType",
    "org.apache.cassandra.db.marshal.DateRangeType",
]


@pytest.mark.parametrize("handler", HANDLERS, ids=HANDLER_IDS)
@pytest.mark.parametrize("with_metadata", [True, False], ids=["inline", "prepared"])
def test_types_cqlcodec_does_not_know_are_read_by_the_driver(
        handler: Any, with_metadata: bool, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    point = struct.pack("<BIdd", 1, 1, 1.5, -2.0)  # WKB, little-endian
    date_range = b"\x00" + struct.pack(">qB", 1_600_000_000_000, 3)  # single date, day
    columns = [("k", INT), ("p", custom(DRIVER_ONLY_TYPES[0])),
               ("lp", list_of(custom(DRIVER_ONLY_TYPES[0]))), ("d", custom(DRIVER_ONLY_TYPES[1]))]
    rows: list[list[bytes | None]] = [[b"\x00\x00\x00\x01", point, elements(point), date_range]]
    metadata = decode(driver_class(handler), rows_body(columns, [])).column_metadata
    body = rows_body(columns, rows, with_metadata=with_metadata)
    counting = CountingDecode(monkeypatch)
    with caplog.at_level(logging.WARNING, logger="cqlcodec.driver"):
        for _ in range(2):
            expected = decode(driver_class(handler), body, 4, metadata).parsed_rows
            actual = decode(codec_class(handler), body, 4, metadata).parsed_rows
            assert_rows(expected, actual)
    assert type(actual[0][1]).__name__ == "Point"
    assert counting.calls == 0
    messages = [r.getMessage() for r in caplog.records if r.name == "cqlcodec.driver"]
    assert len(messages) == 1 and "PointType" in messages[0]


@pytest.mark.parametrize("handler", HANDLERS, ids=HANDLER_IDS)
def test_metadata_cqlcodec_refuses_is_read_by_the_driver(handler: Any) -> None:
    # a UDT with two fields of the same name: the driver reads it, cqlcodec's [option]
    # reader refuses it; the rows are the driver's
    columns = [("u", udt("twin", [("a", INT), ("a", INT)]))]
    body = rows_body(columns, [[value(b"\x00\x00\x00\x01") + value(b"\x00\x00\x00\x02")]])
    expected = decode(driver_class(handler), body).parsed_rows
    actual = decode(codec_class(handler), body).parsed_rows
    assert_rows(expected, actual)


# --------------------------------------------------------------------------- refusals

COMPOSITE = custom("org.apache.cassandra.db.marshal.CompositeType("
                   "org.apache.cassandra.db.marshal.UTF8Type,"
                   "org.apache.cassandra.db.marshal.Int32Type)")


def _component(data: bytes, eoc: bytes = b"\x00") -> bytes:
    return struct.pack(">H", len(data)) + data + eoc


def _short_page(option: bytes, nrows: int) -> bytes:
    """Rows of one tuple/UDT column whose values hold only a null first field."""
    return rows_body([("w", option)], [[value(None)]] * nrows)


# Messages cqlcodec refuses (DecodeError, or another CodecError for a limit of its own):
# (columns, rows, bytes after the rows). Driver mode reads each again with the driver's
# own code, so every one reads (or fails) exactly as with the driver alone.
REFUSED: dict[str, tuple[list[tuple[str, bytes]], list[list[bytes | None]], bytes]] = {
    "int of 3 bytes": ([("i", INT)], [[b"abc"]], b""),
    "an int of 5 bytes": ([("i", INT)], [[b"\x00\x00\x00\x01\x02"]], b""),
    "bad utf-8": ([("t", TEXT)], [[b"\xff\xfe"]], b""),
    "list element past its end": ([("l", list_of(INT))], [[struct.pack(">ii", 1, 9) + b"ab"]],
                                  b""),
    "trailing bytes after the rows": ([("i", INT)], [[b"\x00\x00\x00\x01"]], b"xyz"),
    "trailing bytes in a list": ([("l", list_of(INT))], [[elements(b"\x00\x00\x00\x01") + b"z"]],
                                 b""),
    "a tuple with too many components": (
        [("tu", tuple_of(INT))], [[value(b"\x00\x00\x00\x01") + value(b"\x00\x00\x00\x02")]],
        b""),
    "composite with more components than its type": (
        [("c", COMPOSITE)],
        [[_component(b"abc") + _component(b"\x00\x00\x00\x07") + _component(b"x")]], b""),
    "composite without its last end-of-component byte": (
        [("c", COMPOSITE)], [[_component(b"abc") + _component(b"\x00\x00\x00\x07", b"")]], b""),
    # 360 x 1439 missing fields, about 82,000 over the budget of this 5.8 KB body
    "padding beyond the message's budget": (
        [("w", tuple_of(*[INT] * 1440))], [[value(None)]] * 360, b""),
}


def _refused_body(case: str) -> bytes:
    columns, rows, tail = REFUSED[case]
    return rows_body(columns, rows) + tail


def _same_outcome(expected: Any, actual: Any) -> None:
    """The driver's rows (or exception) and driver mode's are the same."""
    if isinstance(expected, BaseException):
        assert type(actual) is type(expected), (expected, actual)
        assert str(actual) == str(expected)
    else:
        assert_rows(expected, actual)


def _outcome_or_error(read: Callable[[], ResultMessage]) -> Any:
    try:
        return read().parsed_rows
    except Exception as exc:
        return exc


@pytest.mark.parametrize("handler", HANDLERS, ids=HANDLER_IDS)
@pytest.mark.parametrize("case", list(REFUSED))
def test_refused_messages_read_as_the_driver_reads_them(
        handler: Any, case: str, caplog: pytest.LogCaptureFixture) -> None:
    """cqlcodec refuses the message; the driver's own code reads it again, and the result
    (rows, or the exception the driver raises) is the driver's alone; the fallback is
    logged once per reason."""
    body = _refused_body(case)
    with pytest.raises(cqlcodec.CodecError):
        cqlcodec.decode_result(b"\x00\x00\x00\x02" + body, 4)
    expected = _outcome_or_error(functools.partial(decode, driver_class(handler), body))
    with caplog.at_level(logging.WARNING, logger="cqlcodec.driver"):
        for _ in range(2):
            actual = _outcome_or_error(functools.partial(decode, codec_class(handler), body))
            _same_outcome(expected, actual)
    logged = [r.getMessage() for r in caplog.records if r.name == "cqlcodec.driver"]
    assert len(logged) == 1 and "driver's own code reads it" in logged[0], logged


def test_every_refusal_is_read_by_some_build_of_the_driver_or_fails_in_all() -> None:
    """The cases cover both outcomes: bytes some build of the driver reads without
    complaint, and bytes every build refuses (driver mode then fails as they fail)."""
    read = {case: [outcome(functools.partial(decode, driver_class(h), _refused_body(case)))
                   for h in HANDLERS] for case in REFUSED}
    assert any(isinstance(r, list) for rs in read.values() for r in rs)
    assert any(all(not isinstance(r, list) for r in rs) for rs in read.values())
    assert all(isinstance(r, list) for r in read["padding beyond the message's budget"])


@pytest.mark.parametrize("handler", HANDLERS, ids=HANDLER_IDS)
def test_fallback_reasons_are_logged_once_each(handler: Any,
                                               caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="cqlcodec.driver"):
        for case in list(REFUSED) * 2:
            _outcome_or_error(functools.partial(decode, codec_class(handler),
                                                _refused_body(case)))
    logged = [r.getMessage() for r in caplog.records if r.name == "cqlcodec.driver"]
    assert len(logged) == len(set(logged)) and len(logged) <= len(REFUSED)
    assert len(logged) >= len(REFUSED) - 3  # a few cases share one reason (a short int)
    assert all("the driver's own code reads it" in m for m in logged)
    # offsets count from the RESULT body's kind, as the server sent it
    trailing = [m for m in logged if "trailing bytes after 1 rows" in m]
    assert trailing and f"offset {len(_refused_body('trailing bytes after the rows')) + 1}" \
        in trailing[0]


@pytest.mark.parametrize("handler", HANDLERS, ids=HANDLER_IDS)
def test_the_connection_survives_a_fallback(handler: Any) -> None:
    """A refused message leaves the next one to cqlcodec (nothing is switched off)."""
    codec = codec_class(handler)
    decode(codec, _refused_body("trailing bytes after the rows"))
    good = rows_body([("i", INT)], [[b"\x00\x00\x00\x05"]])
    assert decode(codec, good).parsed_rows == [(5,)]


@pytest.mark.parametrize("handler", HANDLERS, ids=HANDLER_IDS)
@pytest.mark.parametrize("option,nfields", [
    (udt("grown", [(f"f{i}", INT) for i in range(31)]), 31),
    (tuple_of(*[TEXT] * 20), 20),
    (tuple_of(*[INT] * 40), 40),
    (tuple_of(*[INT] * 0xFFFF), 0xFFFF),
], ids=["udt-1-of-31", "tuple-1-of-20", "tuple-1-of-40", "tuple-1-of-65535"])
def test_short_values_are_read_by_cqlcodec_as_the_driver_reads_them(
        handler: Any, option: bytes, nfields: int, monkeypatch: pytest.MonkeyPatch) -> None:
    counting = CountingDecode(monkeypatch)
    body = _short_page(option, 3 if nfields > 1000 else 200)
    expected = decode(driver_class(handler), body).parsed_rows
    actual = decode(codec_class(handler), body).parsed_rows
    assert_rows(expected, actual)
    assert counting.calls == 1
    assert tuple(actual[0][0]) == (None,) * nfields


@pytest.mark.parametrize("handler", HANDLERS, ids=HANDLER_IDS)
def test_page_without_metadata_of_another_column_count_reads_as_the_driver_reads_it(
        handler: Any) -> None:
    metadata = decode(driver_class(handler), rows_body([("i", INT)], [])).column_metadata
    body = struct.pack(">ii", 0x0004, 2) + struct.pack(">i", 1) + value(b"\x00\x00\x00\x09")
    expected = decode(driver_class(handler), body, 4, metadata).parsed_rows
    assert_rows(expected, decode(codec_class(handler), body, 4, metadata).parsed_rows)


@pytest.mark.parametrize("handler", HANDLERS, ids=HANDLER_IDS)
def test_truncated_body_fails_as_the_driver_fails(handler: Any) -> None:
    body = rows_body([("i", INT)], [[b"\x00\x00\x00\x01"]] * 2)
    for cut in [1, 3, 6, 8]:
        expected = _outcome_or_error(functools.partial(decode, driver_class(handler),
                                                       body[:-cut]))
        assert isinstance(expected, Exception)
        actual = _outcome_or_error(functools.partial(decode, codec_class(handler), body[:-cut]))
        _same_outcome(expected, actual)


def test_cell_length_below_minus_two_reads_as_the_driver_reads_it() -> None:
    body = rows_body([("i", INT)], [])[:-4] + struct.pack(">ii", 1, -3)
    for handler in HANDLERS:
        assert decode(driver_class(handler), body).parsed_rows == [(None,)]
        assert decode(codec_class(handler), body).parsed_rows == [(None,)]


@pytest.mark.parametrize("handler", HANDLERS, ids=HANDLER_IDS)
def test_empty_vector_element_reads_as_none(handler: Any) -> None:
    columns = [("v", custom("org.apache.cassandra.db.marshal.VectorType("
                            "org.apache.cassandra.db.marshal.IntegerType, 2)")),
               ("w", custom("org.apache.cassandra.db.marshal.VectorType("
                            "org.apache.cassandra.db.marshal.UTF8Type, 2)"))]
    body = rows_body(columns, [[b"\x00\x01\x05", b"\x00\x01a"]])
    with pytest.raises(DriverException):
        decode(driver_class(handler), body)
    assert decode(codec_class(handler), body).parsed_rows == [([None, 5], ["", "a"])]


def test_converting_a_value_fails_as_the_driver_fails() -> None:
    class Refusing:
        def __init__(self, **fields: Any) -> None:
            raise ValueError("no")

    columns = [("u", udt("pair", [("x", INT), ("y", BIGINT)]))]
    body = rows_body(columns, [[value(b"\x00\x00\x00\x01") + value(None)]])
    for handler in HANDLERS:
        for cls in (driver_class(handler), codec_class(handler)):
            f = io.BytesIO(b"\x00\x00\x00\x02" + body)
            f.read(4)
            msg = cls(2)
            with pytest.raises(DriverException, match='column "u"'):
                msg.recv_results_rows(f, 4, {"ks": {"pair": Refusing}}, None, None)


# --------------------------------------------------------------------------- timestamps

OUT_OF_RANGE_MS = [-62135596800001, 253402300800000, 2**63 - 1, -(2**63)]


@pytest.mark.parametrize("handler", HANDLERS, ids=HANDLER_IDS)
@pytest.mark.parametrize("plain_values", [False, True], ids=["driver_values", "plain_values"])
def test_timestamps_outside_datetime_read_as_milliseconds(handler: Any,
                                                          plain_values: bool) -> None:
    columns = [("ts", TIMESTAMP), ("lts", list_of(TIMESTAMP))]
    rows: list[list[bytes | None]] = [
        [struct.pack(">q", ms), elements(struct.pack(">q", ms), struct.pack(">q", 0))]
        for ms in OUT_OF_RANGE_MS]
    body = rows_body(columns, rows)
    with pytest.raises(DriverException):  # the driver cannot read them at all
        decode(driver_class(handler), body)
    actual = decode(codec_class(handler, plain_values), body).parsed_rows
    assert [r[0] for r in actual] == OUT_OF_RANGE_MS
    assert [r[1][0] for r in actual] == OUT_OF_RANGE_MS
    # an int written back binds as the same timestamp through both
    ps, codec_ps = statements([("ts", ct.DateType)], 4)
    for ms in OUT_OF_RANGE_MS:
        assert codec_ps.bind((ms,)).values == ps.bind((ms,)).values == [struct.pack(">q", ms)]


# --------------------------------------------------------------------------- binding

def statements(columns: list[tuple[str, type[ct._CassandraType]]], protocol_version: int,
               pk: tuple[int, ...] = (0,)) -> tuple[PreparedStatement, PreparedStatement]:
    """The same statement twice: bound by the driver, and switched to cqlcodec."""
    metadata = [ColumnMetadata("ks", "t", name, dt) for name, dt in columns]
    made = [PreparedStatement(metadata, b"qid", list(pk), "INSERT ...", "ks", protocol_version,
                              [], None) for _ in range(2)]
    made[1].__class__ = drv.CqlcodecPreparedStatement
    return made[0], made[1]


def bind_outcome(ps: PreparedStatement, values: Any) -> Any:
    try:
        return ps.bind(values).values
    except Exception as exc:
        return type(exc)


def _generator() -> Iterator[str]:
    yield "a"


BIND_SHAPES: list[tuple[str, list[tuple[str, type[ct._CassandraType]]], Any]] = [
    ("str on one text column", [("t", ct.UTF8Type)], "a"),
    ("str of 3 chars on 3 columns", [("a", ct.UTF8Type), ("b", ct.AsciiType),
                                     ("c", ct.UTF8Type)], "xyz"),
    ("str too long", [("t", ct.UTF8Type)], "ab"),
    ("empty str", [("t", ct.UTF8Type), ("u", ct.UTF8Type)], ""),
    ("bytes as ints", [("a", ct.Int32Type), ("b", ct.Int32Type)], b"\x01\x02"),
    ("bytes on text", [("t", ct.UTF8Type)], b"a"),
    ("generator", [("t", ct.UTF8Type)], _generator()),
    ("int", [("i", ct.Int32Type)], 5),
    ("set", [("i", ct.Int32Type)], {7}),
    ("range", [("a", ct.Int32Type), ("b", ct.Int32Type)], range(3, 5)),
    ("dict with extra keys", [("a", ct.Int32Type), ("b", ct.UTF8Type)],
     {"a": 1, "b": "x", "zzz": object()}),
    ("dict missing a key", [("a", ct.Int32Type), ("b", ct.UTF8Type)], {"a": 1}),
    ("bool on int", [("i", ct.Int32Type)], (True,)),
    ("int out of range", [("i", ct.Int32Type)], (2**40,)),
    ("str on int", [("i", ct.Int32Type)], ("1",)),
    ("int on text", [("t", ct.UTF8Type)], (1,)),
    ("too many", [("i", ct.Int32Type)], (1, 2)),
    ("unset key column", [("i", ct.Int32Type), ("j", ct.Int32Type)], (UNSET_VALUE, 1)),
    ("missing key column", [("i", ct.Int32Type), ("j", ct.Int32Type)], {"j": 1}),
    ("float on bigint", [("i", ct.LongType)], (1.5,)),
    ("None", [("i", ct.Int32Type)], None),
]


@pytest.mark.parametrize("protocol_version", [3, 4, 5])
@pytest.mark.parametrize("case", BIND_SHAPES, ids=[c[0] for c in BIND_SHAPES])
def test_bind_values_as_the_driver_binds_them(
        case: tuple[str, list[tuple[str, type[ct._CassandraType]]], Any],
        protocol_version: int) -> None:
    _name, columns, values = case
    ps, codec_ps = statements(columns, protocol_version)
    if isinstance(values, Iterator):
        expected = bind_outcome(ps, _generator())
    else:
        expected = bind_outcome(ps, values)
    assert bind_outcome(codec_ps, values) == expected


def test_bind_a_mapping_that_is_not_a_dict_by_name() -> None:
    ps, codec_ps = statements([("a", ct.UTF8Type), ("b", ct.UTF8Type)], 4)
    values = MappingProxyType({"b": "B", "a": "A"})
    assert codec_ps.bind(values).values == ps.bind(dict(values)).values == [b"A", b"B"]
    # the driver binds the keys, a deliberate difference
    assert ps.bind(values).values == [b"b", b"a"]


def test_bind_at_a_protocol_version_cqlcodec_does_not_encode(
        caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    ps, codec_ps = statements([("i", ct.Int32Type), ("m", ct.MapType.apply_parameters(
        (ct.UTF8Type, ct.Int32Type)))], 6)
    called: list[int] = []
    monkeypatch.setattr(cqlcodec.Prepared, "bind", lambda *a: called.append(1))
    with caplog.at_level(logging.WARNING, logger="cqlcodec.driver"):
        for _ in range(3):
            assert codec_ps.bind((1, {"a": 2})).values == ps.bind((1, {"a": 2})).values
    assert not called
    messages = [r.getMessage() for r in caplog.records if r.name == "cqlcodec.driver"]
    assert len(messages) == 1 and "protocol v6" in messages[0]


def test_bind_a_type_cqlcodec_does_not_know() -> None:
    from cassandra.util import Point

    point = ct.lookup_casstype(DRIVER_ONLY_TYPES[0])
    ps, codec_ps = statements([("k", ct.Int32Type), ("p", point)], 4)
    assert codec_ps.bind((1, Point(1.5, 2))).values == ps.bind((1, Point(1.5, 2))).values
    assert bind_outcome(codec_ps, (1, b"raw")) == bind_outcome(ps, (1, b"raw"))


# --------------------------------------------------------------------------- prepared before

def test_install_switches_statements_the_cluster_prepared() -> None:
    cluster = Cluster(["127.0.0.1"], port=1)  # never connected
    ps, _ = statements([("i", ct.Int32Type)], 4)
    other, _ = statements([("i", ct.Int32Type)], 4)
    cluster.add_prepared(b"qid", ps)
    cluster.add_prepared(b"other", other)
    drv.install(cluster)
    assert type(ps) is drv.CqlcodecPreparedStatement
    assert type(other) is drv.CqlcodecPreparedStatement
    assert ps.bind((3,)).values == [b"\x00\x00\x00\x03"]
    assert type(ps.bind((3,))) is drv.CqlcodecBoundStatement
