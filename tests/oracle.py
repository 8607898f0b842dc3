"""cassandra-driver's pure-Python codec as a test-time oracle.

Every test reaches the driver only through this module. The driver is
imported with ``importlib`` so that it is ``Any`` to mypy and needs no stubs.
Where the reference spec (section 11) documents the driver as wrong or lax,
tests assert cqlcodec's documented behaviour instead of the oracle's.
"""

from __future__ import annotations

import importlib
from typing import Any

_cqltypes: Any = importlib.import_module("cassandra.cqltypes")
_util: Any = importlib.import_module("cassandra.util")


def driver_type(name: str) -> Any:
    """The driver's type class for a scalar CQL name ('int', 'varchar', ...) or a Java class name."""
    found = _cqltypes._cqltypes.get(name)
    if found is not None:
        return found
    return _cqltypes.lookup_casstype(name)


def serialize(name: str, value: object, protocol_version: int = 4) -> bytes:
    """The driver's content bytes of ``value`` as the type ``name``."""
    data: bytes = driver_type(name).serialize(value, protocol_version)
    return data


def deserialize(name: str, data: bytes, protocol_version: int = 4) -> Any:
    """The driver's Python value for the content bytes ``data`` of the type ``name``."""
    return driver_type(name).deserialize(data, protocol_version)


def driver_date(days_since_epoch: int) -> Any:
    """A ``cassandra.util.Date`` for a day count relative to 1970-01-01."""
    return _util.Date(days_since_epoch)


def driver_time(nanoseconds: int) -> Any:
    """A ``cassandra.util.Time`` for nanoseconds since midnight."""
    return _util.Time(nanoseconds)


def driver_duration(months: int, days: int, nanoseconds: int) -> Any:
    """A ``cassandra.util.Duration``."""
    return _util.Duration(months, days, nanoseconds)


# --- type parsing ---
_protocol: Any = importlib.import_module("cassandra.protocol")


def driver_java_type_tree(class_name: str) -> object:
    """The driver's parse (``lookup_casstype``) of a Java class name, as a :func:`_type_tree`.

    The driver registers every parsed class process-wide (a UDT named ``int`` would
    replace ``int``); the registries are restored afterwards so other tests are unaffected.
    """
    saved = _save_registries()
    try:
        return _type_tree(_cqltypes.lookup_casstype(class_name))
    finally:
        _restore_registries(saved)


def driver_option_type_tree(data: bytes) -> object:
    """The driver's decoding (``ResultMessage.read_type``) of an ``[option]``, as a tree."""
    import io

    saved = _save_registries()
    try:
        return _type_tree(_protocol.ResultMessage.read_type(io.BytesIO(data), {}))
    finally:
        _restore_registries(saved)


def _save_registries() -> list[dict[Any, Any]]:
    return [dict(_cqltypes._casstypes), dict(_cqltypes._cqltypes),
            dict(_cqltypes.UserType._cache)]


def _restore_registries(saved: list[dict[Any, Any]]) -> None:
    for live, old in zip([_cqltypes._casstypes, _cqltypes._cqltypes, _cqltypes.UserType._cache],
                         saved):
        live.clear()
        live.update(old)


def _type_tree(t: Any) -> object:
    """A driver type class as nested tuples: ("scalar", cql name), ("list", tree),
    ("set", tree), ("map", k, v), ("tuple", trees), ("vector", tree, dim), ("frozen", tree),
    ("reversed", tree), ("udt", keyspace, name, ((field, tree), ...)), ("custom", class name),
    ("bare", class name) for a parameterized class without parameters. The driver's
    ``varchar`` (option 0x000D) is reported as ``text``, cqlcodec's name for it."""
    ct = _cqltypes
    if issubclass(t, ct._UnrecognizedType):
        return ("custom", t.cassname)
    if issubclass(t, ct.VectorType):
        return ("vector", _type_tree(t.subtype), t.vector_size)
    if issubclass(t, ct.UserType):
        return ("udt", t.keyspace, t.typename,
                tuple(zip(t.fieldnames, [_type_tree(s) for s in t.subtypes])))
    if issubclass(t, (ct.ListType, ct.SetType, ct.MapType, ct.TupleType, ct.FrozenType,
                      ct.ReversedType)) and not t.subtypes:
        return ("bare", t.cassname)
    simple = {ct.ListType: "list", ct.SetType: "set", ct.FrozenType: "frozen",
              ct.ReversedType: "reversed"}
    for cls, label in simple.items():
        if issubclass(t, cls):
            return (label, _type_tree(t.subtypes[0]))
    if issubclass(t, ct.MapType):
        return ("map", _type_tree(t.subtypes[0]), _type_tree(t.subtypes[1]))
    if issubclass(t, ct.TupleType):
        return ("tuple", tuple(_type_tree(s) for s in t.subtypes))
    name: str = t.typename
    return ("scalar", "text" if name == "varchar" else name)
# --- end type parsing ---


# --- hot path: RESULT decoding and bind ---
_query: Any = importlib.import_module("cassandra.query")


def driver_result(body: bytes, protocol_version: int, result_metadata: Any = None) -> Any:
    """The driver's pure-Python ``ResultMessage`` for a whole RESULT body (kind included).

    ``result_metadata`` is what the driver passes for no-metadata Rows bodies: the
    ``column_metadata`` list of another ResultMessage (e.g. :func:`driver_result` of the
    same rows with inline metadata, or the PREPARED message's ``column_metadata``).
    """
    saved = _save_registries()
    try:
        return _protocol._ProtocolHandler.decode_message(
            protocol_version, {}, 0, 0, 0x08, body, None, result_metadata)
    finally:
        _restore_registries(saved)


def driver_rows(body: bytes, protocol_version: int,
                result_metadata: Any = None) -> tuple[list[str], list[tuple[Any, ...]]]:
    """(column names, rows) as the driver's pure-Python path decodes a Rows RESULT body."""
    msg = driver_result(body, protocol_version, result_metadata)
    return list(msg.column_names), [tuple(r) for r in msg.parsed_rows]


def driver_bind(prepared_result: bytes, protocol_version: int,
                values: Any) -> tuple[list[object], bytes | None]:
    """The driver's ``BoundStatement.bind`` for a statement given as a PREPARED RESULT body.

    Returns (values, routing key); the driver's UNSET_VALUE comes back as ``cqlcodec.UNSET``.
    """
    unset = importlib.import_module("cqlcodec").UNSET
    msg = driver_result(prepared_result, protocol_version)
    ps = _query.PreparedStatement(
        column_metadata=msg.bind_metadata, query_id=msg.query_id,
        routing_key_indexes=msg.pk_indexes or None, query="?", keyspace="ks",
        protocol_version=protocol_version, result_metadata=msg.column_metadata,
        result_metadata_id=None)
    bound = ps.bind(values)
    out = [unset if v is _query.UNSET_VALUE else v for v in bound.values]
    key: bytes | None = bound.routing_key if msg.pk_indexes else None
    return out, key


def driver_plain(value: Any) -> Any:
    """A driver value with the driver's own container and value classes replaced by builtins.

    SortedSet -> set, OrderedMap(SerializedKey) -> dict, util.Date -> datetime.date (or the
    day count outside its range), util.Time -> nanoseconds, Duration -> (months, days, ns),
    UDT/named tuples -> tuple, lists stay lists.
    """
    import datetime

    if isinstance(value, _util.SortedSet) or isinstance(value, (set, frozenset)):
        return {driver_plain(v) for v in value}
    if isinstance(value, (_util.OrderedMap, dict)):
        return {driver_plain(k): driver_plain(v) for k, v in value.items()}
    if isinstance(value, _util.Date):
        try:
            return value.date()
        except Exception:
            return value.days_from_epoch
    if isinstance(value, _util.Time):
        return value.nanosecond_time
    if isinstance(value, _util.Duration):
        return (value.months, value.days, value.nanoseconds)
    if isinstance(value, tuple):
        return tuple(driver_plain(v) for v in value)
    if isinstance(value, list):
        return [driver_plain(v) for v in value]
    if isinstance(value, datetime.datetime):
        return value
    return value

def driver_col_desc(keyspace: str, table: str, column: str) -> Any:
    """The driver's ``ColDesc`` namedtuple (how its encryption policies key columns)."""
    return importlib.import_module("cassandra.policies").ColDesc(keyspace, table, column)
# --- end hot path ---


# --- driver type classes ---
def driver_option_type(data: bytes) -> Any:
    """The driver's type class for a binary ``[option]`` (``ResultMessage.read_type``), as the
    driver builds result and bind metadata; its process-wide registries are restored."""
    import io

    saved = _save_registries()
    try:
        return _protocol.ResultMessage.read_type(io.BytesIO(data), {})
    finally:
        _restore_registries(saved)
# --- end driver type classes ---


# --- composite values (collections, tuples, UDTs, vectors) ---
def serialize_java(class_name: str, value: object, protocol_version: int = 4) -> bytes:
    """The driver's content bytes of ``value`` as the type named by a Java class name
    (nested types, UDTs and vectors included); its registries are restored afterwards."""
    saved = _save_registries()
    try:
        data: bytes = _cqltypes.lookup_casstype(class_name).serialize(value, protocol_version)
    finally:
        _restore_registries(saved)
    return data


def deserialize_java(class_name: str, data: bytes, protocol_version: int = 4) -> Any:
    """The driver's value for the content bytes of the type named by a Java class name."""
    saved = _save_registries()
    try:
        return _cqltypes.lookup_casstype(class_name).deserialize(data, protocol_version)
    finally:
        _restore_registries(saved)


def vector_type(subtype_class_name: str, dimension: int) -> Any:
    """The driver's ``VectorType.apply_parameters([subtype, dimension])`` class."""
    sub = _cqltypes.lookup_casstype(subtype_class_name)
    return _cqltypes.VectorType.apply_parameters([sub, dimension], None)


def map_items(value: Any) -> list[tuple[Any, Any]]:
    """The (key, value) pairs of a map the driver decoded, in wire order. (Its
    ``OrderedMapSerializedKey.items()`` looks every key up again by re-serializing it,
    which fails for keys such as sets of lists.)"""
    if isinstance(value, _util.OrderedMap):
        return list(value._items)
    return list(value.items())
# --- end composite values ---
