"""cqlcodec.driver without a server: type conversion, RESULT rows decoded through the
installed protocol handler, and binding, each compared with the driver's own result.

The driver here is the subject under integration, not only an oracle; its classes are
used directly (typed by the project's stubs). Type classes are built with
``oracle.driver_option_type`` so that the driver's process-wide registries stay clean.
"""

from __future__ import annotations

import io
import struct
from typing import Any

import pytest
from cassandra import cqltypes as ct
from cassandra.protocol import ColumnMetadata, ProtocolHandler, ResultMessage
from cassandra.query import UNSET_VALUE, PreparedStatement
from hypothesis import assume, given
from integration.compare import assert_same
from integration.data import COLUMN_NAMES, EVERYTHING_COLUMNS, everything_rows
from oracle import driver_option_type
from type_strategies import option_bytes, type_trees, user_types_in

import cqlcodec
import cqlcodec.driver.installer as drv
from cqlcodec import CqlType, frozen, kinds, parse_type, scalar_type, set_of, user_type
from cqlcodec.codecs.temporal import DaysObjectDateCodec

TEXT = scalar_type(kinds.TEXT)
ADDRESS = user_type("cqlcodec_it", "address",
                    [("street", TEXT), ("zip", scalar_type(kinds.INT)), ("tags", frozen(set_of(TEXT)))])
PERSON = user_type("cqlcodec_it", "person", [
    ("name", TEXT), ("home", frozen(ADDRESS)), ("born", scalar_type(kinds.DATE)),
    ("Nick Name", TEXT), ("scores", parse_type("list<int>"))])
USER_TYPES = {"address": ADDRESS, "person": PERSON}


def _column_types() -> list[tuple[str, CqlType, bytes, Any]]:
    """(name, CqlType, [option] bytes, driver class) of every column of the test table."""
    out = []
    for name, cql in [("k", "int"), *EVERYTHING_COLUMNS]:
        t = parse_type(cql, USER_TYPES)
        data, _seen = option_bytes(t)
        out.append((name, t, data, driver_option_type(data)))
    return out


COLUMNS = _column_types()


def _short_string(text: str) -> bytes:
    data = text.encode()
    return struct.pack(">H", len(data)) + data


def rows_body(rows: list[list[bytes | None]], *, with_metadata: bool = True,
              paging_state: bytes | None = None, new_metadata_id: bytes | None = None) -> bytes:
    """A RESULT Rows body for the columns of COLUMNS (global table spec)."""
    flags = 0x0001 if with_metadata else 0x0004
    if paging_state is not None:
        flags |= 0x0002
    if new_metadata_id is not None:
        flags |= 0x0008
    out = [struct.pack(">iii", 2, flags, len(COLUMNS))]
    if paging_state is not None:
        out.append(struct.pack(">i", len(paging_state)) + paging_state)
    if with_metadata:
        if new_metadata_id is not None:
            out.append(struct.pack(">H", len(new_metadata_id)) + new_metadata_id)
        out.append(_short_string("cqlcodec_it") + _short_string("everything"))
        for name, _t, option, _dt in COLUMNS:
            out.append(_short_string(name) + option)
    out.append(struct.pack(">i", len(rows)))
    for row in rows:
        for cell in row:
            out.append(struct.pack(">i", -1) if cell is None
                       else struct.pack(">i", len(cell)) + cell)
    return b"".join(out)


def _encoded_rows(protocol_version: int) -> list[list[bytes | None]]:
    rows = []
    for values in everything_rows():
        cells: list[bytes | None] = []
        for name, _t, _option, dt in COLUMNS:
            v = values.get(name)
            cells.append(None if v is None else dt.serialize(v, protocol_version))
        rows.append(cells)
    return rows


def _decode(message_class: type[ResultMessage], body: bytes, protocol_version: int,
            result_metadata: Any = None) -> ResultMessage:
    f = io.BytesIO(b"\x00\x00\x00\x00" + body)  # a tracing/warning prefix before the body
    f.read(8)  # the prefix and the kind, as decode_message / recv_body leave it
    msg = message_class(2)
    msg.recv_results_rows(f, protocol_version, {}, result_metadata, None)
    return msg


def _codec_message_class(**options: bool) -> type[ResultMessage]:
    handler = drv._handler_class(ProtocolHandler, drv.Options(
        options.get("plain_values", False), options.get("numpy_vectors", False)))
    found = handler.message_types_by_opcode[ResultMessage.opcode]
    assert isinstance(found, type) and issubclass(found, ResultMessage)
    return found


@pytest.mark.parametrize("protocol_version", [3, 4, 5])
def test_rows_with_metadata_match_driver(protocol_version: int) -> None:
    body = rows_body(_encoded_rows(protocol_version), paging_state=b"\x01page")
    expected = _decode(ResultMessage, body, protocol_version)
    actual = _decode(_codec_message_class(), body, protocol_version)
    assert actual.column_names == expected.column_names
    assert actual.paging_state == expected.paging_state == b"\x01page"
    assert [t.cql_parameterized_type() for t in actual.column_types or []] == [
        t.cql_parameterized_type() for t in expected.column_types or []]
    assert len(actual.parsed_rows) == 3
    for i, (e, a) in enumerate(zip(expected.parsed_rows, actual.parsed_rows)):
        for name, ev, av in zip(actual.column_names or [], e, a):
            assert_same(ev, av, f"row {i} {name}")


@pytest.mark.parametrize("protocol_version", [4, 5])
def test_rows_without_metadata_use_prepared_metadata(protocol_version: int) -> None:
    encoded = _encoded_rows(protocol_version)
    metadata = _decode(ResultMessage, rows_body([]), protocol_version).column_metadata
    assert metadata
    body = rows_body(encoded, with_metadata=False)
    expected = _decode(ResultMessage, body, protocol_version, metadata)
    codec_class = _codec_message_class()
    for _round in range(3):  # the cached plan is reused
        actual = _decode(codec_class, body, protocol_version, metadata)
        assert actual.column_names == expected.column_names
        for e, a in zip(expected.parsed_rows, actual.parsed_rows):
            assert_same(e, a, "row")


def test_new_metadata_id_is_kept_for_the_driver() -> None:
    body = rows_body(_encoded_rows(5)[:1], new_metadata_id=b"\x07id")
    actual = _decode(_codec_message_class(), body, 5)
    assert actual.result_metadata_id == b"\x07id"
    assert actual.column_metadata and len(actual.column_metadata) == len(COLUMNS)


def test_plain_values() -> None:
    body = rows_body(_encoded_rows(4))
    actual = _decode(_codec_message_class(plain_values=True), body, 4)
    names = actual.column_names or []
    first = dict(zip(names, actual.parsed_rows[0]))
    assert first["s_text"] == {"a", "b", "c"} and type(first["s_text"]) is set
    assert type(first["m_text_int"]) is dict
    assert first["a_date"].isoformat() == "2024-02-29"
    assert first["l_fset"] == [frozenset({1, 2}), frozenset({3}), frozenset()]


def test_malformed_rows_fail_as_the_driver_fails() -> None:
    """cqlcodec refuses a truncated page; the driver's own code reads it again and raises
    what it raises alone."""
    body = rows_body(_encoded_rows(4))[:-3]
    driver_class = ProtocolHandler.message_types_by_opcode[ResultMessage.opcode]
    assert isinstance(driver_class, type) and issubclass(driver_class, ResultMessage)
    with pytest.raises(Exception) as driver_error:  # noqa: B017 (its type varies by build)
        _decode(driver_class, body, 4)
    with pytest.raises(type(driver_error.value)) as codec_error:
        _decode(_codec_message_class(), body, 4)
    assert str(codec_error.value) == str(driver_error.value)
    assert not isinstance(codec_error.value, cqlcodec.DecodeError)


@pytest.mark.parametrize("malformed", [False, True])
def test_the_collector_is_paused_while_a_page_is_built(monkeypatch: pytest.MonkeyPatch,
                                                       malformed: bool) -> None:
    """Decoding and converting a page of PAUSE_FROM rows or more run with the cyclic
    collector held off (cqlcodec.runtime.collector); it is on again afterwards, also when cqlcodec refused
    the page and the driver read it."""
    import gc

    seen: list[bool] = []
    decode = drv._decode_rows_at

    def watched(*args: Any) -> Any:
        seen.append(gc.isenabled())
        return decode(*args)

    monkeypatch.setattr(drv, "_decode_rows_at", watched)
    encoded = _encoded_rows(4)
    page = encoded * (drv.PAUSE_FROM // len(encoded) + 1)
    body = rows_body(page)
    gc.enable()
    try:
        if malformed:
            with pytest.raises(Exception):  # noqa: B017 (the driver's, as in the test above)
                _decode(_codec_message_class(), body[:-3], 4)
        else:
            assert len(_decode(_codec_message_class(), body, 4).parsed_rows) == len(page)
        assert seen == [False]
        assert gc.isenabled()
        gc.disable()  # the application's choice is kept
        _decode(_codec_message_class(), body, 4)
        assert not gc.isenabled()
        gc.enable()
        # a page of fewer rows is decoded with the collector left as it is
        _decode(_codec_message_class(), rows_body(encoded), 4)
        assert seen == [False, False, True]
    finally:
        gc.enable()


def test_the_drivers_row_factories_run_paused_and_compare_as_themselves() -> None:
    """Installed sessions build the rows of the driver's own row factories (and only
    those: an application's factory runs as it is), pages of PAUSE_FROM rows or more
    with the collector held off."""
    import gc

    from cassandra.query import dict_factory, named_tuple_factory, tuple_factory

    for factory in (named_tuple_factory, dict_factory, tuple_factory):
        paused = drv._PAUSED_FACTORIES[id(factory)]
        assert paused == factory and paused in (named_tuple_factory, dict_factory,
                                                tuple_factory)
        assert paused != (lambda names, rows: rows) and hash(paused) == hash(factory)
        for names in (["a", "b"], ["a", "a"], ["[applied]", "b c"]):  # clean, renamed
            for rows in ([], [(1, 2)], [(1, 2), (3, None), (5, 6)]):
                got, expected = paused(names, list(rows)), factory(names, list(rows))
                assert got == expected
                assert [type(r).__name__ for r in got] == [type(r).__name__ for r in expected]
                assert [getattr(r, "_fields", None) for r in got] == [
                    getattr(r, "_fields", None) for r in expected]
                assert len({type(r) for r in got}) <= 1  # one class per page, as the driver
    seen: list[bool] = []

    def recording(names: Any, rows: Any) -> Any:
        seen.append(gc.isenabled())
        return rows

    gc.enable()
    page = [(i,) for i in range(drv.PAUSE_FROM)]
    assert drv._PausedRowFactory(recording)(["a"], page) == page
    assert seen == [False] and gc.isenabled()
    # a small page is built with the collector left as it is
    assert drv._PausedRowFactory(recording)(["a"], page[1:]) == page[1:]
    assert seen == [False, True] and gc.isenabled()


def _date_page(days: list[int | None]) -> bytes:
    """A RESULT Rows body of one ``date`` column ``d`` (and an int ``k``), one row a value."""
    out = [struct.pack(">iii", 2, 0x0001, 2), _short_string("ks") + _short_string("t"),
           _short_string("k") + b"\x00\x09", _short_string("d") + b"\x00\x11",
           struct.pack(">i", len(days))]
    for k, d in enumerate(days):
        out.append(struct.pack(">ii", 4, k))
        out.append(struct.pack(">i", -1) if d is None
                   else struct.pack(">iI", 4, (d + 2**31) % 2**32))
    return b"".join(out)


DATE_EDGES = [0, -1, 19860, -719162, -719163, 2932896, 2932897, -(2**31), 2**31 - 1, None]


@pytest.mark.parametrize("direct", [True, False])
def test_dates_decode_into_the_drivers_date(monkeypatch: pytest.MonkeyPatch, direct: bool) -> None:
    """Date columns are decoded straight into the driver's ``Date`` (no conversion pass)
    where its check passed at import; converted after decoding where it did not. Both
    give the driver's own values, over the whole int32 range."""
    from cassandra.util import Date

    assert isinstance(drv._DRIVER_DATE_CODEC, DaysObjectDateCodec)
    if not direct:
        monkeypatch.setattr(drv, "_DRIVER_DATE_CODEC", None)
    # plans made from here on (inline column specs seen before are kept: one plan)
    monkeypatch.setattr(drv, "_plans", {})
    monkeypatch.setattr(drv, "_parsed_metadata", {})
    body = _date_page(DATE_EDGES)
    expected = _decode(ResultMessage, body, 4)
    for _round in range(2):
        actual = _decode(_codec_message_class(), body, 4)
        assert [type(r[1]) for r in actual.parsed_rows] == [Date] * 9 + [type(None)]
        for e, a in zip(expected.parsed_rows, actual.parsed_rows):
            assert_same(e, a, "row")
            assert str(e[1]) == str(a[1])
    (plan,) = drv._plans.values()
    assert plan.desc is not None
    codec = plan.desc.codecs[1]
    assert (codec is drv._DRIVER_DATE_CODEC) == direct
    assert (plan.converters[1] is None) == direct


def test_dates_are_converted_when_the_drivers_date_is_not_its_days(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The import-time check refuses a ``Date`` whose ``__init__`` sets more than the days."""
    from cassandra.util import Date

    class Stamped(Date):
        __slots__ = ("made",)

        def __init__(self, value: Any) -> None:
            super().__init__(value)
            self.made = True

    class Shifted(Date):
        def __init__(self, value: Any) -> None:
            super().__init__(value + 1 if value < 2**31 - 1 else value)

    assert drv._driver_date_codec() is not None
    for cls in (Stamped, Shifted):
        monkeypatch.setattr(drv, "_DriverDate", cls)
        assert drv._driver_date_codec() is None, cls


@pytest.mark.parametrize("protocol_version", [3, 4, 5])
def test_bind_matches_driver(protocol_version: int) -> None:
    metadata = [ColumnMetadata("cqlcodec_it", "everything", name, dt)
                for name, _t, _o, dt in COLUMNS]
    ps = PreparedStatement(metadata, b"qid", [0], "INSERT ...", "cqlcodec_it", protocol_version,
                           [], None)
    codec_ps = PreparedStatement(metadata, b"qid", [0], "INSERT ...", "cqlcodec_it",
                                 protocol_version, [], None)
    codec_ps.__class__ = drv.CqlcodecPreparedStatement
    for row in everything_rows():
        values = [row.get(name) for name in ["k", *COLUMN_NAMES]]
        expected = ps.bind(values)
        actual = codec_ps.bind(values)
        assert actual.values == expected.values
        assert actual.routing_key == expected.routing_key
    if protocol_version >= 4:
        short = codec_ps.bind({"k": 5, "a_int": 1})
        assert short.values[0] == b"\x00\x00\x00\x05"
        assert short.values.count(UNSET_VALUE) == len(COLUMNS) - 2
        assert codec_ps.bind((6, UNSET_VALUE)).values[1] is UNSET_VALUE
    # an int for an ascii column: cqlcodec refuses, and the driver's own bind raises its error
    with pytest.raises(Exception) as driver_error:
        ps.bind([1, 2])
    with pytest.raises(type(driver_error.value)) as codec_error:
        codec_ps.bind([1, 2])
    context = codec_error.value.__context__
    while context is not None and not isinstance(context, cqlcodec.BindError):
        context = context.__context__
    assert context is not None


@pytest.mark.parametrize("protocol_version", [4, 5])
def test_values_read_by_the_driver_bind_back_the_same(protocol_version: int) -> None:
    """An application writes back what the driver returned: SortedSet, OrderedMapSerializedKey,
    util.Date/Time/Duration and UDT namedtuples (``person`` has positional field names)."""
    decoded = _decode(ResultMessage, rows_body(_encoded_rows(protocol_version)), protocol_version)
    metadata = [ColumnMetadata("cqlcodec_it", "everything", name, dt)
                for name, _t, _o, dt in COLUMNS]
    ps = PreparedStatement(metadata, b"qid", [0], "INSERT ...", "cqlcodec_it", protocol_version,
                           [], None)
    codec_ps = PreparedStatement(metadata, b"qid", [0], "INSERT ...", "cqlcodec_it",
                                 protocol_version, [], None)
    codec_ps.__class__ = drv.CqlcodecPreparedStatement
    for row in decoded.parsed_rows:
        expected = ps.bind(list(row)).values
        actual = codec_ps.bind(list(row)).values
        for name, e, a in zip(decoded.column_names or [], expected, actual):
            assert a == e, name


def test_bind_accepts_driver_value_classes() -> None:
    from cassandra.util import Date, Duration, Time

    dts = {name: dt for name, _t, _o, dt in COLUMNS}
    cases: list[tuple[str, Any]] = [
        ("a_date", Date(-5)), ("a_date", 2**31 + 3), ("a_date", "2020-02-02"),
        ("a_time", Time(5)), ("a_time", "01:02:03.000000004"), ("a_duration", Duration(1, 2, 3)),
        ("a_timestamp", 1.6e12 + 0.9), ("s_date", {Date(1), Date(2)}),
        ("m_date_time", {Date(1): Time(2)}),
    ]
    for name, value in cases:
        t = drv.cql_type_of(dts[name])
        adapter = drv.input_adapter(t)
        assert adapter is not None
        assert t.serialize(adapter(value)) == dts[name].serialize(value, 4), (name, value)


def _driver_reads_java_name(t: CqlType, inside_custom: bool = False) -> bool:
    """False where the driver's Java-name parser is known to fail (spec 4.1): a UDT
    nested in a class name (a vector) whose hex-encoded names are all decimal digits
    (read as ints) or whose names are not ASCII."""
    if t.kind == kinds.UDT and inside_custom:
        for text in (t.name, *t.field_names):
            encoded = text.encode("utf-8")
            if not text.isascii() or encoded.hex().isdigit():
                return False
    nested = inside_custom or t.kind == kinds.VECTOR
    return all(_driver_reads_java_name(s, nested) for s in t.subtypes)


@given(type_trees(max_leaves=8))
def test_cql_type_of_driver_classes(t: CqlType) -> None:
    assume(all(u.field_names for u in user_types_in(t)))  # the driver cannot read 0 fields
    assume(_driver_reads_java_name(t))
    data, expected = option_bytes(t)
    assert drv.cql_type_of(driver_option_type(data)) == expected


def test_cql_type_of_java_names() -> None:
    cases = {
        "org.apache.cassandra.db.marshal.VectorType(org.apache.cassandra.db.marshal.FloatType, 3)":
            "vector<float, 3>",
        "org.apache.cassandra.db.marshal.FrozenType(org.apache.cassandra.db.marshal.ListType("
        "org.apache.cassandra.db.marshal.Int32Type))": "frozen<list<int>>",
        "org.apache.cassandra.db.marshal.ReversedType(org.apache.cassandra.db.marshal.TimestampType)":
            "timestamp",
    }
    for java, cql in cases.items():
        assert drv.cql_type_of(ct.lookup_casstype(java)).cql_name == cql


def test_driver_identity_and_refusal(monkeypatch: pytest.MonkeyPatch) -> None:
    import cassandra
    from cassandra.cluster import Cluster

    assert drv.driver_name() in drv.SUPPORTED_DRIVERS
    assert drv.driver_version()[:2] in drv.SUPPORTED_DRIVERS[drv.driver_name()]
    monkeypatch.setattr(cassandra, "__version__", "4.0.0")
    with pytest.raises(drv.UnsupportedDriverError, match="4.0.0"):
        drv.install(Cluster(["127.0.0.1"]))
    monkeypatch.setattr(cassandra, "__version__", "3.29.2")
    with pytest.raises(TypeError):
        drv.install(object())  # type: ignore[arg-type]


def test_numpy_vectors() -> None:
    numpy = pytest.importorskip("numpy")
    body = rows_body(_encoded_rows(4))
    actual = _decode(_codec_message_class(numpy_vectors=True), body, 4)
    row = dict(zip(actual.column_names or [], actual.parsed_rows[0]))
    assert isinstance(row["v_float_big"], numpy.ndarray)
    assert row["v_float3"].tolist() == [1.0, -2.5, 3.25]
    assert type(row["s_text"]).__name__ == "SortedSet"  # other values stay the driver's
    assert row["v_text2"] == ["first", "second ✓"]
