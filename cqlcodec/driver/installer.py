"""Driver mode: cqlcodec decodes and binds inside a driver session (:func:`cqlcodec.driver.install`).

The package :mod:`cqlcodec.driver` documents the whole behaviour.
"""

from __future__ import annotations

import datetime
import importlib.util
import io
import logging
import re
import threading
import warnings
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from operator import attrgetter
from typing import Any, Final

import cqlcodec
from cqlcodec import kinds as K
from cqlcodec.codecs.cache import decode_flags
from cqlcodec.codecs.temporal import DateCodec, DaysObjectDateCodec
from cqlcodec.connection.driver_class import ON_BY_DEFAULT, connection_class, is_cqlcodec_class
from cqlcodec.connection.skip_metadata import HANDLER_FLAG, columns_changed, track
from cqlcodec.driver import row_classes
from cqlcodec.errors import CodecError, DecodeError
from cqlcodec.protocol.metadata import (
    CONTINUOUS_PAGING,
    NO_METADATA,
    MetadataExtent,
    rows_metadata_extent,
)
from cqlcodec.protocol.results import decode_rows_with
from cqlcodec.protocol.rows import RowsDesc, with_codecs
from cqlcodec.runtime import collector
from cqlcodec.types.model import (
    CqlType,
    composite_type,
    frozen,
    list_of,
    map_of,
    reversed_type,
    scalar_type,
    set_of,
    tuple_of,
    user_type,
    vector_of,
)
from cqlcodec.types.parse import parse_type
from cqlcodec.values import Date, Duration, Time


class UnsupportedDriverError(CodecError, RuntimeError):
    """The installed Python driver (or its version) is not one cqlcodec.driver supports."""


try:
    import cassandra
    from cassandra import DriverException
    from cassandra import cqltypes as ct
    from cassandra import util as cutil
    from cassandra.cluster import Cluster, Session
    from cassandra.policies import ColDesc, ColumnEncryptionPolicy
    from cassandra.protocol import ResultMessage, _ProtocolHandler
    from cassandra.query import (
        UNSET_VALUE,
        BoundStatement,
        PreparedStatement,
        dict_factory,
        named_tuple_factory,
        ordered_dict_factory,
        tuple_factory,
    )
except ImportError as _exc:  # pragma: no cover - exercised only without a driver
    raise UnsupportedDriverError(
        "cqlcodec.driver needs cassandra-driver (>= 3.29) or scylla-driver (>= 3.29): "
        f"{_exc}") from _exc


class DriverDecodeError(DecodeError, DriverException):
    """A :class:`cqlcodec.DecodeError` (with its ``cql_type``, ``offset`` and ``column``)
    that is also the driver's ``DriverException``. Kept for code that catches it: driver
    mode no longer raises it for RESULT rows, which the driver's own code reads again
    when cqlcodec refuses them (its error, if any, is the driver's)."""


__all__ = ["DriverDecodeError", "UnsupportedDriverError", "cql_type_of", "driver_name",
           "driver_version", "install", "installed_options", "SUPPORTED_DRIVERS"]

SUPPORTED_DRIVERS: Final[dict[str, tuple[tuple[int, int], ...]]] = {
    "cassandra-driver": ((3, 29), (3, 30)),
    "scylla-driver": ((3, 29),),
}
"""Driver distribution -> the (major, minor) release series cqlcodec.driver knows."""

_DIGITS: Final = re.compile(r"\d+")
_decode_rows_at = decode_rows_with  # a module name: tests count the messages cqlcodec decodes
_EPOCH_ORDINAL: Final = 719163  # datetime.date(1970, 1, 1).toordinal()
_DATE_OFFSET: Final = 1 << 31
_CACHE_LIMIT: Final = 256

Converter = Callable[[Any], Any]
RowMetadata = tuple[str, str, str, type[ct._CassandraType]]
"""One result column as the driver describes it: (keyspace, table, name, type class)."""
UserTypeMap = dict[str, dict[str, Any]]


# --------------------------------------------------------------------------- driver identity

def driver_name() -> str:
    """'scylla-driver' or 'cassandra-driver': which distribution provides ``cassandra``."""
    return "scylla-driver" if importlib.util.find_spec("cassandra.protocol_features") \
        else "cassandra-driver"


def driver_version() -> tuple[int, ...]:
    """The driver's version as a tuple of ints (from ``cassandra.__version__``)."""
    parts: list[int] = []
    for piece in str(cassandra.__version__).split("."):
        digits = ""
        for ch in piece:
            if not ch.isdigit():
                break
            digits += ch
        if not digits:
            break
        parts.append(int(digits))
    return tuple(parts)


def _check_driver() -> None:
    name, version = driver_name(), driver_version()
    known = SUPPORTED_DRIVERS[name]
    if tuple(version[:2]) not in known:
        series = ", ".join(f"{a}.{b}" for a, b in known)
        raise UnsupportedDriverError(
            f"cqlcodec.driver does not know {name} {cassandra.__version__}: it supports "
            f"{name} {series}.x, whose RESULT decoding and bind internals it was written "
            "and tested against; use a supported version or leave cqlcodec uninstalled")


# --------------------------------------------------------------------------- types

_type_cache: dict[type[ct._CassandraType], CqlType] = {}
_type_lock: Final = threading.Lock()


def _bounded_put(cache: dict[Any, Any], lock: threading.Lock, key: Any, value: Any) -> None:
    """``cache[key] = value``, dropping the oldest eighth first when the cache is full."""
    with lock:
        if len(cache) >= _CACHE_LIMIT:
            for old in list(cache)[: _CACHE_LIMIT // 8]:
                cache.pop(old, None)
        cache[key] = value


def cql_type_of(driver_type: type[ct._CassandraType]) -> CqlType:
    """The :class:`cqlcodec.CqlType` of a driver type class (cached).

    Collections, tuples, UDTs and vectors are converted structurally (the
    driver's Java class name of a vector drops its element type and that of a
    UDT drops its keyspace, name and field names); the other types through
    their Java class name and :func:`cqlcodec.parse_type`.
    """
    found = _type_cache.get(driver_type)
    if found is None:
        found = _convert_type(driver_type)
        _bounded_put(_type_cache, _type_lock, driver_type, found)
    return found


def _convert_type(dt: type[ct._CassandraType]) -> CqlType:
    if issubclass(dt, ct.VectorType):
        return vector_of(cql_type_of(dt.subtype), dt.vector_size)
    if issubclass(dt, ct.UserType):
        return user_type(dt.keyspace, dt.typename,
                         [(name, cql_type_of(sub)) for name, sub in zip(dt.fieldnames, dt.subtypes)])
    subs = [cql_type_of(s) for s in dt.subtypes]
    if issubclass(dt, ct.TupleType):
        return tuple_of(*subs)
    if issubclass(dt, ct.CompositeType):
        return composite_type(*subs)
    if issubclass(dt, ct.ListType):
        return list_of(subs[0])
    if issubclass(dt, ct.SetType):
        return set_of(subs[0])
    if issubclass(dt, ct.MapType):
        return map_of(subs[0], subs[1])
    if issubclass(dt, ct.FrozenType):
        return frozen(subs[0])
    if issubclass(dt, ct.ReversedType):
        return reversed_type(subs[0])
    kind = _SCALAR_KINDS.get(getattr(dt, "typename", ""))
    if kind is not None and not issubclass(dt, ct._UnrecognizedType):
        return scalar_type(kind)
    return parse_type(dt.cass_parameterized_type(full=True))


# the drivers' scalar ``typename``s; VarcharType (option 0x000D) has the Java name
# "VarcharType", a class Cassandra does not have, so names cannot be used for it
_SCALAR_KINDS: Final[dict[str, int]] = {name: kind for kind, name in K.SCALAR_NAMES.items()
                                         if kind != K.EMPTY}
_SCALAR_KINDS["varchar"] = K.TEXT


# --------------------------------------------------------------------------- the driver's own path

_log: Final = logging.getLogger("cqlcodec.driver")
_DECODED_VERSIONS: Final = frozenset([3, 4, 5])
_LOG_LIMIT: Final = 256
_logged: set[str] = set()
_logged_lock: Final = threading.Lock()


def _log_once(key: str, message: str, level: int = logging.WARNING) -> None:
    """Log ``message`` the first time ``key`` is seen (at most _LOG_LIMIT distinct keys)."""
    if key in _logged:
        return
    with _logged_lock:
        if key in _logged or len(_logged) >= _LOG_LIMIT:
            return
        _logged.add(key)
    _log.log(level, "%s", message)


def _driver_path(reason: str, key: str | None = None) -> None:
    """Note that a message is handled by the driver's own code because cqlcodec cannot
    (a protocol version or a type it does not decode): logged once per reason (``key``)."""
    _log_once(reason if key is None else key,
              f"cqlcodec.driver: {reason}; the driver's own code handles it "
              "(exactly as without install)")


def _log_fallback(exc: CodecError, body_at: int) -> None:
    """Log (once per reason) that cqlcodec refused a RESULT and the driver's own code
    reads it again; offsets in the message count from the RESULT body's kind, which
    starts at ``body_at`` of the driver's message."""
    if isinstance(exc, DecodeError):
        why = f"{exc}"
        if exc.offset is not None:
            why = why.replace(f"offset {exc.offset}", f"offset {exc.offset - body_at}")
        where = f" (column {exc.column!r})" if exc.column is not None else ""
        key = f"refused:{type(exc).__name__}:{exc.cql_type}:{_DIGITS.sub('#', str(exc))}"
        _log_once(key, f"cqlcodec.driver: cqlcodec refused a RESULT{where}: {why}; the "
                       "driver's own code reads it (exactly as without install)")
    else:  # not malformed input: a limit of cqlcodec's
        _driver_path(f"{type(exc).__name__}: {exc}", type(exc).__name__)


# (why cqlcodec cannot decode values of a type as the driver does, or None;
#  the type classes below it whose support_empty_values the driver consults)
TypeRoute = tuple[str | None, tuple[type[ct._CassandraType], ...]]
_routes: dict[type[ct._CassandraType], TypeRoute] = {}
_support_empty: Final = attrgetter("support_empty_values")


def _type_route(dt: type[ct._CassandraType]) -> TypeRoute:
    """The :data:`TypeRoute` of the values inside ``dt`` (cached per class)."""
    found = _routes.get(dt)
    if found is None:
        try:
            found = _compute_route(dt)
        except Exception as exc:  # a class cqlcodec cannot even convert
            why = (f"type {_driver_type_name(dt)} is not one cqlcodec decodes "
                   f"({type(exc).__name__}: {exc})")
            found = (why, ())
        _bounded_put(_routes, _type_lock, dt, found)
    return found


def _driver_type_name(dt: type[ct._CassandraType]) -> str:
    try:
        return dt.cass_parameterized_type(full=True)
    except Exception:
        return dt.__name__


def _compute_route(dt: type[ct._CassandraType]) -> TypeRoute:
    # The driver reads a zero-length value as EMPTY (support_empty_values) or None
    # wherever it calls from_binary: a column, list/set elements, map keys and values,
    # tuple and UDT fields, composite components. Vector elements go through
    # deserialize, and the type inside frozen/reversed only ever sees non-empty bytes.
    inner: list[tuple[type[ct._CassandraType], bool]]
    if issubclass(dt, ct.VectorType):
        inner = [(dt.subtype, False)]
    elif issubclass(dt, (ct.FrozenType, ct.ReversedType)):
        inner = [(s, False) for s in dt.subtypes]
    elif issubclass(dt, (ct.ListType, ct.SetType, ct.MapType, ct.TupleType)):
        inner = [(s, True) for s in dt.subtypes]
    else:
        t = cql_type_of(dt)
        if (t.kind == K.CUSTOM and not issubclass(dt, ct._UnrecognizedType)
                and not issubclass(dt, ct.DynamicCompositeType)):
            # the driver has its own class for this custom type (the geometry types,
            # DateRangeType, a class the application registered...). Not for
            # DynamicCompositeType: both driver builds fail on its valid values, so
            # cqlcodec's raw bytes are never worse.
            return (f"type {_driver_type_name(dt)} is not one cqlcodec decodes", ())
        inner = [(s, True) for s in dt.subtypes]
    empties: dict[type[ct._CassandraType], None] = {}
    for sub, reads_empty in inner:
        reason, below = _type_route(sub)
        if reason is not None:
            return reason, ()
        if reads_empty and not sub.empty_binary_ok:
            empties[sub] = None
        empties.update(dict.fromkeys(below))
    return None, tuple(empties)


def _columns_route(metadata: list[RowMetadata],
                   policy: ColumnEncryptionPolicy | None) -> TypeRoute:
    """The :data:`TypeRoute` of result rows with these columns."""
    empties: dict[type[ct._CassandraType], None] = {}
    for ks, table, name, dt in metadata:
        if policy is not None and policy.contains_column(ColDesc(ks, table, name)):
            dt = policy.column_type(ColDesc(ks, table, name))
        reason, below = _type_route(dt)
        if reason is not None:
            return reason, ()
        if not dt.empty_binary_ok:
            empties[dt] = None
        empties.update(dict.fromkeys(below))
    return None, tuple(empties)


def _empty_values_reason(classes: tuple[type[ct._CassandraType], ...]) -> str | None:
    """Why the driver's path must read these rows: an empty value of one of ``classes``
    reads as the driver's EMPTY (its ``support_empty_values`` switch is on); else None.

    The switch is a class attribute the application may flip at any time, so it is
    read for every message, from the classes collected once per plan."""
    if not any(map(_support_empty, classes)):
        return None
    names = sorted({c.__name__ for c in classes if c.support_empty_values})
    return f"support_empty_values is switched on for {', '.join(names)}"


# --------------------------------------------------------------------------- values out

def _date_out(v: Any) -> Any:
    try:  # datetime.date (inside its year range)
        return _DriverDate(v.toordinal() - _EPOCH_ORDINAL)
    except AttributeError:  # cqlcodec.Date (outside it)
        return _DriverDate(int(v.days))


def _time_out(v: Any) -> Any:
    return _DriverTime(v.nanoseconds)


def _duration_out(v: Any) -> Any:
    return _DriverDuration(v.months, v.days, v.nanoseconds)


_PyDate: Final = datetime.date
_DriverDate: Final = cutil.Date
_DriverTime: Final = cutil.Time
_DriverDuration: Final = cutil.Duration
_DriverSortedSet: Final = cutil.SortedSet
_DriverMap: Final = cutil.OrderedMapSerializedKey


def _as_list(v: Any) -> Any:
    return v if type(v) is list else list(v)


def _list_out(sub: Converter | None) -> Converter:
    if sub is None:
        return _as_list
    if sub is _date_out:  # the common case: one call per list, not per element
        return _dates_out
    return lambda v: [None if e is None else sub(e) for e in v]


def _driver_date_codec() -> DaysObjectDateCodec | None:
    """A codec decoding dates straight into the driver's ``Date``, if what it makes
    (``object.__new__`` and ``days_from_epoch``) is what ``Date(days)`` makes: checked
    once, at the edges of the range; else None (dates are converted after decoding)."""
    codec = DaysObjectDateCodec(_DriverDate, "days_from_epoch")
    try:
        for days in (0, -1, 1, 19_000, -719_163, 2_932_896, (1 << 31) - 1, -(1 << 31)):
            made = codec.decode(((days + _DATE_OFFSET) % (1 << 32)).to_bytes(4, "big"), 0, 4)
            ref = _DriverDate(days)
            if (type(made) is not type(ref) or made != ref or hash(made) != hash(ref)
                    or str(made) != str(ref) or _object_state(made) != _object_state(ref)):
                return None
    except Exception:
        return None
    return codec


def _object_state(value: object) -> list[Any]:
    """What an object holds: its ``__dict__`` and every slot of its class and bases."""
    missing = object()
    state: list[Any] = [getattr(value, "__dict__", None)]
    for klass in type(value).__mro__:
        slots = klass.__dict__.get("__slots__", ())
        for name in [slots] if isinstance(slots, str) else slots:
            state.append((name, getattr(value, name, missing)))
    return state


_DRIVER_DATE_CODEC: Final = _driver_date_codec()


def _with_driver_values(desc: RowsDesc, converters: list[Converter | None]) -> RowsDesc:
    """``desc`` with its (unencrypted) date columns decoded straight into the driver's
    ``Date``; their ``converters`` become None. ``desc`` itself where there are none."""
    if _DRIVER_DATE_CODEC is None:
        return desc
    codecs = list(desc.codecs)
    for i, codec in enumerate(codecs):
        if type(codec) is DateCodec and converters[i] is _date_out:
            codecs[i] = _DRIVER_DATE_CODEC
            converters[i] = None
    return desc if codecs == desc.codecs else with_codecs(desc, tuple(codecs))


def _dates_out(values: Any) -> list[Any]:
    """The driver's ``Date`` of each value (None stays None), the common case inline."""
    return [_DriverDate(e.toordinal() - _EPOCH_ORDINAL) if type(e) is _PyDate
            else None if e is None else _date_out(e) for e in values]


# element types whose values (the driver's) are totally ordered and equal only when
# their bytes are: sorted() builds their SortedSet; floats (NaN, -0.0), decimals and
# composite values are inserted one by one, in wire order, as the driver does
_ORDERED_ELEMENT_KINDS: Final = frozenset([
    K.INT, K.BIGINT, K.SMALLINT, K.TINYINT, K.COUNTER, K.VARINT, K.TEXT, K.ASCII, K.BLOB,
    K.BOOLEAN, K.UUID, K.TIMEUUID, K.INET, K.DATE, K.TIME, K.TIMESTAMP])


def _set_out(element: type[ct._CassandraType], sub: Converter | None) -> Converter:
    """The driver's SortedSet of a set value, which driver values decode as a list in
    wire order (see _sets_as_lists).

    The driver adds the elements one by one in wire order (bisect insertion, with its
    own rules for elements that do not compare). ``sorted`` builds the same list in one
    call when the element type guarantees a total order and the elements are distinct
    and compare (an empty value reads as None, which does not)."""
    ordered = cql_type_of(element).unwrapped().kind in _ORDERED_ELEMENT_KINDS
    new = _DriverSortedSet.__new__

    def conv(v: Any) -> Any:
        items = v if sub is None else [None if e is None else sub(e) for e in v]
        if ordered and len(set(items)) == len(items):
            try:
                s = new(_DriverSortedSet)
                s._items = sorted(items)  # all SortedSet holds (SortedSet.copy() does this)
                return s
            except TypeError:
                pass
        s = _DriverSortedSet()
        s.update(items)
        return s
    return conv


# key types whose cqlcodec encoding of a decoded key equals the driver's serialization
_FLAT_KEY_KINDS: Final = frozenset([K.INT, K.BIGINT, K.SMALLINT, K.TINYINT, K.TEXT, K.ASCII,
                                    K.UUID, K.TIMEUUID, K.BOOLEAN, K.BLOB, K.INET, K.VARINT])


def _map_out(key_dt: type[ct._CassandraType], kc: Converter | None, vc: Converter | None,
             protocol_version: int) -> Converter:
    key_type = cql_type_of(key_dt).unwrapped()
    if key_type.kind in _FLAT_KEY_KINDS and kc is None:
        encode = key_type.codec().encode

        def fast(v: Any) -> Any:
            # what _insert_unchecked(key, key bytes, value) builds one item at a time
            m = _DriverMap(key_dt, protocol_version)
            m._items = list(v.items()) if vc is None else [
                (k, None if val is None else vc(val)) for k, val in v.items()]
            m._index = {encode(k): i for i, k in enumerate(v)}
            return m
        return fast

    def general(v: Any) -> Any:
        # the driver serializes the key as it will for lookups (m[key])
        m = _DriverMap(key_dt, protocol_version)
        for k, val in v.items():
            m._insert(k if kc is None or k is None else kc(k),
                      val if vc is None or val is None else vc(val))
        return m
    return general


def _tuple_out(convs: list[Converter | None]) -> Converter:
    n = len(convs)

    def conv(v: Any) -> Any:
        items = list(v)
        if len(items) < n:
            items.extend([None] * (n - len(items)))
        return tuple([e if c is None or e is None else c(e) for c, e in zip(convs, items)])
    return conv


def _composite_out(convs: list[Converter | None]) -> Converter:
    # the driver returns the components a value carries, not padded
    return lambda v: tuple([e if c is None or e is None else c(e) for c, e in zip(convs, v)])


def _udt_out(dt: type[ct.UserType], convs: list[Converter | None]) -> Converter:
    tuple_conv = _tuple_out(convs)

    def conv(v: Any) -> Any:
        values = tuple_conv(v)
        mapped = dt.mapped_class  # read per value, as the driver does
        if mapped is not None:
            return mapped(**dict(zip(dt.fieldnames, values)))
        if dt.tuple_type is not None:
            return dt.tuple_type(*values)
        return values
    return conv


_NUMERIC_VECTOR_KINDS: Final = frozenset([K.FLOAT, K.DOUBLE, K.INT, K.BIGINT])


def _unwrapped(dt: type[ct._CassandraType]) -> type[ct._CassandraType]:
    while issubclass(dt, (ct.FrozenType, ct.ReversedType)) and dt.subtypes:
        dt = dt.subtypes[0]
    return dt


def _empty_is_none(v: Any) -> Any:
    return None if len(v) == 0 else v


def value_converter(dt: type[ct._CassandraType], protocol_version: int,
                    numpy_vectors: bool = False) -> Converter | None:
    """A function turning cqlcodec's decoded value of ``dt`` into the driver's, or
    None when they are the same (every scalar but date, time and duration)."""
    if issubclass(dt, (ct.FrozenType, ct.ReversedType)):
        base = _unwrapped(dt)
        if base.empty_binary_ok and not dt.empty_binary_ok:
            # the driver reads an empty value through the wrapper's class: None, not ''
            return _empty_is_none
        return value_converter(base, protocol_version, numpy_vectors)
    if issubclass(dt, ct.VectorType):
        if numpy_vectors and cql_type_of(dt.subtype).unwrapped().kind in _NUMERIC_VECTOR_KINDS:
            return None
        # elements are read with deserialize, never from_binary: no wrapper rule here
        return _list_out(value_converter(_unwrapped(dt.subtype), protocol_version,
                                         numpy_vectors))
    if issubclass(dt, ct.CompositeType):
        parts = [value_converter(s, protocol_version, numpy_vectors) for s in dt.subtypes]
        return None if all(c is None for c in parts) else _composite_out(parts)
    inner = max(3, protocol_version)
    if issubclass(dt, ct.UserType):
        return _udt_out(dt, [value_converter(s, inner, numpy_vectors) for s in dt.subtypes])
    if issubclass(dt, ct.TupleType):
        return _tuple_out([value_converter(s, inner, numpy_vectors) for s in dt.subtypes])
    if issubclass(dt, ct.ListType):
        return _list_out(value_converter(dt.subtypes[0], inner, numpy_vectors))
    if issubclass(dt, ct.SetType):
        return _set_out(dt.subtypes[0], value_converter(dt.subtypes[0], inner, numpy_vectors))
    if issubclass(dt, ct.MapType):
        return _map_out(dt.subtypes[0], value_converter(dt.subtypes[0], inner, numpy_vectors),
                        value_converter(dt.subtypes[1], inner, numpy_vectors), protocol_version)
    if issubclass(dt, ct.SimpleDateType):
        return _date_out
    if issubclass(dt, ct.TimeType):
        return _time_out
    if issubclass(dt, ct.DurationType):
        return _duration_out
    return None


def _convert_rows(rows: list[tuple[Any, ...]], convs: list[Converter | None],
                  metadata: list[RowMetadata]) -> list[tuple[Any, ...]]:
    if not rows or all(c is None for c in convs):
        return rows
    # column by column: C-level transposition and one comprehension per converted column
    # beat a Python loop over the cells of each row
    columns: list[Any] = list(zip(*rows))
    for i, c in enumerate(convs):
        if c is not None:
            try:
                if c is _date_out:  # the common case: no call per value
                    columns[i] = _dates_out(columns[i])
                else:
                    columns[i] = [None if v is None else c(v) for v in columns[i]]
            except Exception as exc:  # e.g. a registered UDT class refusing the values
                # what the driver raises when building a value fails inside its decoder
                dt = metadata[i][3]
                raise DriverException(
                    f'Failed decoding result column "{metadata[i][2]}" of type '
                    f"{dt.cql_parameterized_type()}: {exc}") from exc
    return list(zip(*columns))


# --------------------------------------------------------------------------- values in

def _date_in(v: Any) -> Any:
    if isinstance(v, (datetime.date, Date)):
        return v
    if isinstance(v, int) and not isinstance(v, bool):
        # the driver takes a plain int as the raw wire value (days + 2**31)
        return Date(v - _DATE_OFFSET)
    days = getattr(v, "days_from_epoch", None)
    if days is None and isinstance(v, str):
        days = cutil.Date(v).days_from_epoch
    if isinstance(days, int):
        return Date(days)
    return v


def _time_in(v: Any) -> Any:
    ns = getattr(v, "nanosecond_time", None)
    if ns is None and isinstance(v, str):
        ns = cutil.Time(v).nanosecond_time
    if isinstance(ns, int):
        return Time(ns)
    return v


def _duration_in(v: Any) -> Any:
    if isinstance(v, cutil.Duration):
        return Duration(v.months, v.days, v.nanoseconds)
    return v


def _timestamp_in(v: Any) -> Any:
    if type(v) is float:
        return int(v)  # the driver truncates float milliseconds
    return v


# The adapted containers are tuples (hashable, so they can be set elements and map
# keys): cqlcodec takes any sequence for list, set and vector, pairs for map.

def _seq_in(sub: Converter) -> Converter:
    return lambda v: v if isinstance(v, (str, bytes)) else tuple(
        [None if e is None else sub(e) for e in v])


def _map_in(kc: Converter | None, vc: Converter | None) -> Converter:
    def conv(v: Any) -> Any:
        if not isinstance(v, Mapping):
            return v
        return tuple([(k if kc is None or k is None else kc(k),
                       val if vc is None or val is None else vc(val)) for k, val in v.items()])
    return conv


def _tuple_in(convs: list[Converter | None]) -> Converter:
    def conv(v: Any) -> Any:
        if not isinstance(v, (tuple, list)):
            return v
        return tuple([e if c is None or e is None else c(e) for c, e in zip(convs, v)])
    return conv


def _udt_in(t: CqlType, convs: list[Converter | None]) -> Converter:
    names = t.field_names

    def conv(v: Any) -> Any:
        if isinstance(v, Mapping):
            return {n: (v[n] if c is None or v[n] is None else c(v[n]))
                    for n, c in zip(names, convs) if n in v}
        if isinstance(v, (tuple, list)):
            # by position, like the driver (its own UDT namedtuples may have renamed fields)
            items = list(v)
        else:  # a registered class: by attribute, a missing one is null
            items = [getattr(v, n, None) for n in names]
        return tuple([e if c is None or e is None else c(e) for c, e in zip(convs, items)])
    return conv


def input_adapter(t: CqlType) -> Converter | None:
    """A function turning a bind value the driver accepts for ``t`` into one cqlcodec
    accepts, or None when no adaptation is ever needed for ``t``."""
    t = t.unwrapped()
    kind = t.kind
    if kind == K.DATE:
        return _date_in
    if kind == K.TIME:
        return _time_in
    if kind == K.DURATION:
        return _duration_in
    if kind == K.TIMESTAMP:
        return _timestamp_in
    if kind in (K.LIST, K.SET, K.VECTOR):
        sub = input_adapter(t.subtypes[0])
        return None if sub is None else _seq_in(sub)
    if kind == K.MAP:
        kc, vc = input_adapter(t.subtypes[0]), input_adapter(t.subtypes[1])
        return None if kc is None and vc is None else _map_in(kc, vc)
    if kind == K.TUPLE:
        convs = [input_adapter(s) for s in t.subtypes]
        return None if all(c is None for c in convs) else _tuple_in(convs)
    if kind == K.UDT:
        # always: the driver binds any tuple (also its own UDT namedtuples, whose field
        # names may be renamed) by position, where cqlcodec reads namedtuples by name
        return _udt_in(t, [input_adapter(s) for s in t.subtypes])
    return None


# --------------------------------------------------------------------------- encryption

class _PolicyAdapter:
    """A driver ColumnEncryptionPolicy seen through cqlcodec's ColumnEncryptionPolicy protocol."""

    def __init__(self, policy: ColumnEncryptionPolicy, sets_as_lists: bool = False) -> None:
        self.policy = policy
        self.sets_as_lists = sets_as_lists

    def contains_column(self, column: tuple[str, str, str]) -> bool:
        return bool(self.policy.contains_column(ColDesc(*column)))

    def column_type(self, column: tuple[str, str, str]) -> CqlType:
        t = cql_type_of(self.policy.column_type(ColDesc(*column)))
        return _sets_as_lists(t) if self.sets_as_lists else t

    def encrypt(self, column: tuple[str, str, str], data: bytes) -> bytes:
        return bytes(self.policy.encrypt(ColDesc(*column), data))

    def decrypt(self, column: tuple[str, str, str], data: bytes) -> bytes:
        return bytes(self.policy.decrypt(ColDesc(*column), data))


_policy_adapters: dict[tuple[int, bool], tuple[ColumnEncryptionPolicy, _PolicyAdapter]] = {}


def _adapt_policy(policy: ColumnEncryptionPolicy | None,
                  sets_as_lists: bool = False) -> _PolicyAdapter | None:
    if policy is None:
        return None
    key = (id(policy), sets_as_lists)
    found = _policy_adapters.get(key)
    if found is None or found[0] is not policy:
        found = (policy, _PolicyAdapter(policy, sets_as_lists))
        _policy_adapters[key] = found
    return found[1]


_wire_order_types: dict[CqlType, CqlType] = {}


def _sets_as_lists(t: CqlType) -> CqlType:
    """``t`` with every set read as a list: the same bytes, decoded in wire order,
    which is the order the driver builds its SortedSet in (cached)."""
    found = _wire_order_types.get(t)
    if found is None:
        subs = [_sets_as_lists(sub) for sub in t.subtypes]
        kind = t.kind
        if all(a is b for a, b in zip(subs, t.subtypes)) and kind != K.SET:
            found = t
        elif kind in (K.LIST, K.SET):
            found = list_of(subs[0])
        elif kind == K.MAP:
            found = map_of(subs[0], subs[1])
        elif kind == K.TUPLE:
            found = tuple_of(*subs)
        elif kind == K.UDT:
            found = user_type(t.keyspace, t.name, list(zip(t.field_names, subs)))
        elif kind == K.VECTOR:
            found = vector_of(subs[0], t.dimension)
        elif kind == K.FROZEN:
            found = frozen(subs[0])
        elif kind == K.REVERSED:
            found = reversed_type(subs[0])
        else:  # a type with components cqlcodec reads itself (no set to keep in order)
            found = t
        _bounded_put(_wire_order_types, _type_lock, t, found)
    return found


# --------------------------------------------------------------------------- options

class Options:
    """What :func:`install` was asked for (immutable)."""

    __slots__ = ("plain_values", "numpy_vectors", "_hash")

    def __init__(self, plain_values: bool, numpy_vectors: bool) -> None:
        self.plain_values = plain_values
        self.numpy_vectors = numpy_vectors
        self._hash = hash((plain_values, numpy_vectors))  # a plan cache key, per response

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Options) and (self.plain_values, self.numpy_vectors) == (
            other.plain_values, other.numpy_vectors)

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return f"Options(plain_values={self.plain_values}, numpy_vectors={self.numpy_vectors})"


# --------------------------------------------------------------------------- results

class _ResultPlan:
    """Everything reused for the rows of one result metadata (a prepared statement's,
    or the same columns and types sent inline again)."""

    __slots__ = ("metadata", "protocol_version", "policy", "desc", "converters",
                 "converting", "names", "types", "driver_reason", "empty_classes")

    def __init__(self, metadata: list[RowMetadata], protocol_version: int,
                 policy: ColumnEncryptionPolicy | None, options: Options) -> None:
        self.metadata = metadata
        self.protocol_version = protocol_version
        self.policy = policy
        self.desc: RowsDesc | None = None  # how the rows are decoded (None: by the driver)
        self.converters: list[Converter | None] = []
        self.converting = False  # whether any converter is not None
        self.names = [c[2] for c in metadata]
        self.types = [c[3] for c in metadata]
        # why these rows go the driver's way whatever the message (else None)
        self.driver_reason, self.empty_classes = _columns_route(metadata, policy)
        if self.driver_reason is not None:
            return
        try:
            # the driver's values need the sets in wire order (its SortedSet's order)
            wire_order = not options.plain_values
            columns = []
            for ks, table, name, dt in metadata:
                t = cql_type_of(dt)
                columns.append(cqlcodec.ColumnSpec(
                    ks, table, name, _sets_as_lists(t) if wire_order else t))
            prepared = cqlcodec.Prepared(
                [], columns, [], protocol_version, b"", None, _adapt_policy(policy, wire_order))
            self.converters = _converters(metadata, protocol_version, policy, options)
            flags = decode_flags(numpy_vectors=options.numpy_vectors)
            self.desc = _with_driver_values(
                prepared.rows_desc(protocol_version, prepared.column_encryption_policy, flags),
                self.converters)
            self.converting = any(c is not None for c in self.converters)
        except Exception as exc:  # a type cqlcodec cannot represent (nesting, ...)
            self.driver_reason = f"cqlcodec cannot represent these columns ({exc})"


def _converters(metadata: list[RowMetadata], protocol_version: int,
                policy: ColumnEncryptionPolicy | None,
                options: Options) -> list[Converter | None]:
    if options.plain_values:
        return [None] * len(metadata)
    out: list[Converter | None] = []
    for ks, table, name, dt in metadata:
        if policy is not None and policy.contains_column(ColDesc(ks, table, name)):
            dt = policy.column_type(ColDesc(ks, table, name))
        conv = value_converter(dt, protocol_version, options.numpy_vectors)
        if conv is _as_list and issubclass(_unwrapped(dt), ct.ListType):
            conv = None  # a list column decodes to a list (a tuple only inside sets and keys)
        out.append(conv)
    return out


_plans: dict[Any, _ResultPlan] = {}
_inline_plans: dict[Any, _ResultPlan] = {}  # apart: per-message UDT classes churn it
_plans_lock: Final = threading.Lock()


def _cached_plan(cache: dict[Any, _ResultPlan], key: Any, metadata: list[RowMetadata],
                 protocol_version: int, policy: ColumnEncryptionPolicy | None,
                 options: Options, same_metadata: bool) -> _ResultPlan:
    plan = cache.get(key)
    if plan is None or plan.policy is not policy or (same_metadata
                                                      and plan.metadata is not metadata):
        plan = _ResultPlan(metadata, protocol_version, policy, options)
        _bounded_put(cache, _plans_lock, key, plan)
    return plan


def _plan_for(metadata: list[RowMetadata], protocol_version: int,
              policy: ColumnEncryptionPolicy | None, options: Options) -> _ResultPlan:
    """The plan of a prepared statement's result metadata (the same list every time)."""
    key = (id(metadata), protocol_version, options)
    plan = _plans.get(key)
    if plan is None or plan.metadata is not metadata or plan.policy is not policy:
        plan = _cached_plan(_plans, key, metadata, protocol_version, policy, options, True)
    return plan


# parameterized classes the driver builds anew for every message it reads
_REBUILT_CLASSES: Final = (ct.ListType, ct.SetType, ct.MapType, ct.TupleType, ct.FrozenType,
                           ct.ReversedType, ct.VectorType)


def _class_key(dt: type[ct._CassandraType]) -> Any:
    """What identifies a driver type class across messages: the class itself, or for
    the collection, tuple, vector and wrapper classes rebuilt per message, their
    structure (UDT classes are cached by the driver and carry mapped_class)."""
    if not issubclass(dt, _REBUILT_CLASSES) or issubclass(dt, ct.UserType):
        return dt
    if issubclass(dt, ct.VectorType):
        return (ct.VectorType, _class_key(dt.subtype), dt.vector_size)
    return (dt.__bases__[0], tuple([_class_key(sub) for sub in dt.subtypes]))


def _inline_plan(metadata: list[RowMetadata], protocol_version: int,
                 policy: ColumnEncryptionPolicy | None, options: Options) -> _ResultPlan:
    """The plan of result metadata sent inline (a new list, and new classes, per message)."""
    key = (protocol_version, options, id(policy),
           tuple([(ks, table, name, _class_key(dt)) for ks, table, name, dt in metadata]))
    return _cached_plan(_inline_plans, key, metadata, protocol_version, policy, options, False)


_parsed_metadata: dict[Any, list[RowMetadata]] = {}


def _read_metadata(msg: ResultMessage, f: io.BytesIO, buf: bytes, start: int,
                   user_type_map: UserTypeMap) -> tuple[list[RowMetadata] | None, int, bool]:
    """Read a Rows result's ``<metadata>`` at ``start`` into the message's attributes
    (its paging state, new metadata id and ``column_metadata``) as the driver does.

    Column specs seen before are not parsed again: the driver's column tuples made for
    the same bytes are kept (bounded), so the same list comes back, with the same type
    classes, where the driver would make new ones. Specs with a user type are parsed by
    the driver each time (it sets the session's mapped class on the type as it reads),
    and so is anything cqlcodec's walk refuses (the driver raises where it fails).
    Returns the columns (None: no metadata sent), where the rows start, and whether the
    columns were parsed for this message alone."""
    try:
        extent: MetadataExtent | None = rows_metadata_extent(buf, start, len(buf))
    except CodecError:
        extent = None
    if extent is None or extent.user_types or extent.flags & CONTINUOUS_PAGING:
        f.seek(start)
        msg.recv_results_metadata(f, user_type_map)
        return msg.column_metadata, f.tell(), True
    msg.paging_state = extent.paging_state
    if extent.new_metadata_id is not None:
        msg.result_metadata_id = extent.new_metadata_id
    if extent.flags & NO_METADATA:
        return None, extent.specs_end, False
    key = extent.specs_key(buf)
    found = _parsed_metadata.get(key)
    if found is None:
        f.seek(start)
        msg.recv_results_metadata(f, user_type_map)
        found = msg.column_metadata
        _bounded_put(_parsed_metadata, _plans_lock, key, found)
    else:
        msg.column_metadata = found
    return found, extent.specs_end, False


def _result_message_class(base: type[ResultMessage], options: Options) -> type[ResultMessage]:
    class CqlcodecResultMessage(base):  # type: ignore[valid-type,misc]
        """The driver's RESULT message with its rows decoded by cqlcodec."""

        def recv_results_rows(self, f: io.BytesIO, protocol_version: int,
                              user_type_map: UserTypeMap,
                              result_metadata: list[RowMetadata] | None,
                              column_encryption_policy: ColumnEncryptionPolicy | None) -> None:
            start = f.tell()
            if protocol_version not in _DECODED_VERSIONS:
                _driver_path(f"cqlcodec does not decode protocol v{protocol_version}")
                super().recv_results_rows(f, protocol_version, user_type_map, result_metadata,
                                          column_encryption_policy)
                return
            # the whole message body, which BytesIO hands out uncopied; the rows are read
            # where they lie
            f.seek(0)
            buf = f.read()
            metadata, rows_at, inline = _read_metadata(self, f, buf, start, user_type_map)
            if metadata:
                new_id = getattr(self, "result_metadata_id", None)
                if new_id is not None:  # METADATA_CHANGED (v5, a prepared statement)
                    columns_changed(result_metadata, metadata, new_id)
                plan = (_inline_plan if inline else _plan_for)(
                    metadata, protocol_version, column_encryption_policy, options)
            else:
                metadata = result_metadata or []
                plan = _plan_for(metadata, protocol_version, column_encryption_policy, options)
            desc = plan.desc
            if desc is None or (plan.empty_classes
                                    and any(map(_support_empty, plan.empty_classes))):
                self._read_with_driver(plan, f, start, protocol_version, user_type_map,
                                       result_metadata, column_encryption_policy)
                return
            # the page's rows hold no cycles (cqlcodec.runtime.collector); a few rows are
            # not worth switching the collector off and on
            paused = int.from_bytes(buf[rows_at:rows_at + 4], "big") >= PAUSE_FROM
            if paused:
                collector.pause()
            try:
                rows = _decode_rows_at(buf, rows_at, desc).rows
                if plan.converting:
                    rows = _convert_rows(rows, plan.converters, metadata)
            except CodecError as exc:
                # refused (malformed to cqlcodec) or beyond a limit of cqlcodec's: the
                # driver reads the same message, and fails only where it fails alone
                _log_fallback(exc, start - 4)
                f.seek(start)
                rows = None
            finally:
                if paused:
                    collector.resume()
            if rows is None:
                super().recv_results_rows(f, protocol_version, user_type_map, result_metadata,
                                          column_encryption_policy)
                return
            if plan.metadata is metadata:
                self.column_names = list(plan.names)
                self.column_types = list(plan.types)
            else:  # an inline plan made for another message's (equal) columns
                self.column_names = [c[2] for c in metadata]
                self.column_types = [c[3] for c in metadata]
            self.parsed_rows = rows

        def _read_with_driver(self, plan: _ResultPlan, f: io.BytesIO, start: int,
                              *args: Any) -> None:
            """The rows read by the driver's own code, and why (logged once)."""
            reason = plan.driver_reason
            if reason is not None:
                _driver_path(reason)
            else:
                reason = _empty_values_reason(plan.empty_classes) or ""
                _log_once(reason, f"cqlcodec.driver: {reason}; results with such columns "
                                  "are read by the driver's own code", logging.INFO)
            f.seek(start)
            super().recv_results_rows(f, *args)

    CqlcodecResultMessage.__name__ = CqlcodecResultMessage.__qualname__ = (
        "CqlcodecResultMessage")
    return CqlcodecResultMessage


def _handler_class(base: type[_ProtocolHandler], options: Options) -> type[_ProtocolHandler]:
    opcodes = dict(base.message_types_by_opcode)
    rm = opcodes[ResultMessage.opcode]
    if not (isinstance(rm, type) and issubclass(rm, ResultMessage)):
        raise UnsupportedDriverError(
            f"the session's protocol handler {base.__name__} decodes RESULT with {rm!r}, "
            "not a cassandra.protocol.ResultMessage subclass")
    opcodes[ResultMessage.opcode] = _result_message_class(rm, options)
    handler: type[_ProtocolHandler] = type(
        "CqlcodecProtocolHandler", (base,),
        {"message_types_by_opcode": opcodes, "cqlcodec_options": options, HANDLER_FLAG: True,
         "__doc__": "The session's protocol handler with RESULT rows decoded by cqlcodec."})
    return handler


class _PausedRowFactory:
    """One of the driver's own row factories, its rows built by
    :mod:`cqlcodec.driver.row_classes` (the same classes, names and values; a
    namedtuple class made once per column names, not per page), with the cyclic
    collector held off for a page of :data:`PAUSE_FROM` rows or more (rows without a
    length, a custom protocol handler's iterator, are built with the collector left alone)
    (:mod:`cqlcodec.runtime.collector`): its namedtuples, dicts or tuples are the rest of
    a page's objects. It compares equal to the factory it runs (and hashes alike), so the
    driver's checks of a future's factory (``ResultSet.was_applied``) see that factory."""

    __slots__ = ("factory", "build")

    def __init__(self, factory: Callable[[Any, Any], Any]) -> None:
        self.factory = factory
        self.build = _ROW_BUILDERS.get(id(factory), factory)

    def __call__(self, colnames: Any, rows: Any) -> Any:
        try:
            few = len(rows) < PAUSE_FROM
        except TypeError:  # an iterator of a session's own protocol handler (the driver's
            few = True     # LazyProtocolHandler): no length to judge the page by
        if few:
            return self.build(colnames, rows)
        collector.pause()
        try:
            return self.build(colnames, rows)
        finally:
            collector.resume()

    def __eq__(self, other: object) -> bool:
        return other is self.factory or other is self

    def __hash__(self) -> int:
        return hash(self.factory)

    def __repr__(self) -> str:
        return repr(self.factory)


PAUSE_FROM: Final = 32
"""Pages of fewer rows are built (and decoded) with the collector left as it is: for a
few rows, switching it off and on costs more than the collections it saves."""

# how cqlcodec builds the rows of each of the driver's factories (by identity)
_ROW_BUILDERS: Final[dict[int, Callable[[Any, Any], Any]]] = {
    id(named_tuple_factory): partial(row_classes.named_tuple_rows,
                                     fallback=named_tuple_factory),
    id(dict_factory): row_classes.dict_rows,
    id(ordered_dict_factory): row_classes.ordered_dict_rows,
}

# the driver's factories (no application code in them), by identity
_PAUSED_FACTORIES: Final = {id(f): _PausedRowFactory(f)
                            for f in (named_tuple_factory, dict_factory, ordered_dict_factory,
                                      tuple_factory)}


# --------------------------------------------------------------------------- binding

class _BindPlan:
    __slots__ = ("column_metadata", "protocol_version", "policy", "prepared", "adapters",
                 "by_name", "routing", "driver_reason")

    def __init__(self, ps: PreparedStatement) -> None:
        self.column_metadata = ps.column_metadata
        self.protocol_version = ps.protocol_version
        self.policy = ps.column_encryption_policy
        self.routing = ps.routing_key_indexes
        self.prepared: cqlcodec.Prepared | None = None
        self.adapters: list[Converter | None] | None = None
        self.by_name: dict[str, Converter] = {}
        cols = ps.column_metadata or []
        # why the statement binds the driver's way (else None): a protocol version or
        # a column type cqlcodec does not encode as the driver does
        self.driver_reason: str | None = None
        if ps.protocol_version not in _DECODED_VERSIONS:
            self.driver_reason = f"cqlcodec does not encode protocol v{ps.protocol_version}"
        policy = self.policy
        for c in cols:
            dt = c.type
            where = ColDesc(c.keyspace_name, c.table_name, c.name)
            if policy is not None and policy.contains_column(where):
                dt = policy.column_type(where)
            if self.driver_reason is None:
                self.driver_reason = _type_route(dt)[0]
        if self.driver_reason is not None:
            return
        try:
            types = [cql_type_of(c.type) for c in cols]
            self.prepared = cqlcodec.Prepared(
                [cqlcodec.ColumnSpec(c.keyspace_name, c.table_name, c.name, t)
                 for c, t in zip(cols, types)],
                [], list(ps.routing_key_indexes or []), ps.protocol_version, ps.query_id,
                ps.result_metadata_id, _adapt_policy(self.policy))
        except Exception as exc:  # a type cqlcodec cannot represent (nesting, ...)
            self.driver_reason = f"cqlcodec cannot represent these columns ({exc})"
            return
        adapters = [input_adapter(t) for t in types]
        if any(a is not None for a in adapters):
            self.adapters = adapters
        self.by_name = {c.name: a for c, a in zip(cols, adapters) if a is not None}


def _bind_plan(ps: PreparedStatement) -> _BindPlan:
    plan: _BindPlan | None = ps.__dict__.get("_cqlcodec_bind")
    if (plan is None or plan.column_metadata is not ps.column_metadata
            or plan.protocol_version != ps.protocol_version
            or plan.routing is not ps.routing_key_indexes
            or plan.policy is not ps.column_encryption_policy):
        plan = _BindPlan(ps)
        ps.__dict__["_cqlcodec_bind"] = plan
    return plan


def _adapt_values(values: Any, plan: _BindPlan) -> Any:
    """The driver's bind values as cqlcodec takes them (UNSET_VALUE, driver value classes)."""
    kind = type(values)
    if kind is not tuple and kind is not list and isinstance(values, Mapping):
        out_map: dict[str, Any] = {}
        lookup = plan.by_name
        for k, v in values.items():
            if v is UNSET_VALUE:
                v = cqlcodec.UNSET
            elif v is not None:
                a = lookup.get(k)
                if a is not None:
                    v = a(v)
            out_map[k] = v
        return out_map
    # anything else is a sequence to the driver, as long as it has a length: a str is
    # a sequence of one-character values, bytes one of ints (a generator fails on len)
    if kind is not list and kind is not tuple:
        len(values)
    out: list[Any] = list(values)
    adapters = plan.adapters
    for i, v in enumerate(out):
        if v is UNSET_VALUE:
            out[i] = cqlcodec.UNSET
        elif adapters is not None and v is not None and i < len(adapters):
            a = adapters[i]
            if a is not None:
                out[i] = a(v)
    return out


class CqlcodecBoundStatement(BoundStatement):
    """A BoundStatement whose :meth:`bind` encodes with cqlcodec."""

    def bind(self, values: Sequence[Any] | Mapping[str, Any] | None) -> BoundStatement:
        """Encode ``values`` (a sequence, or a mapping by column name) with cqlcodec.

        Values cqlcodec refuses go through the driver's own ``bind``, which either
        accepts them as it always has or raises its own exception (with cqlcodec's
        error as the context)."""
        ps = self.prepared_statement
        plan = _bind_plan(ps)
        if plan.prepared is None:
            _driver_path(plan.driver_reason or "")
            return BoundStatement.bind(self, values)
        if values is None:
            values = ()
        try:
            bound = plan.prepared.bind(_adapt_values(values, plan))
        except Exception:
            return BoundStatement.bind(self, values)
        encoded: list[Any] = list(bound.values)
        if cqlcodec.UNSET in encoded:
            encoded = [UNSET_VALUE if v is cqlcodec.UNSET else v for v in encoded]
        self.raw_values = values
        self.values = encoded
        if self._routing_key is None and ps.routing_key_indexes:
            self._routing_key = bound.routing_key
        return self


class CqlcodecPreparedStatement(PreparedStatement):
    """A PreparedStatement whose :meth:`bind` encodes with cqlcodec."""

    def bind(self, values: Sequence[Any] | Mapping[str, Any] | None) -> BoundStatement:
        """A :class:`CqlcodecBoundStatement` with ``values`` bound."""
        return CqlcodecBoundStatement(self).bind(values)


# --------------------------------------------------------------------------- install

_OPTIONS_ATTR: Final = "_cqlcodec_options"


def installed_options(target: Cluster | Session) -> Options | None:
    """The :class:`Options` cqlcodec was installed with on ``target``, or None."""
    found = target.__dict__.get(_OPTIONS_ATTR)
    return found if isinstance(found, Options) else None


def install(target: Cluster | Session, *, plain_values: bool = False,
            numpy_vectors: bool = False, connection: bool | None = None) -> None:
    """Make a driver ``Cluster`` (all its sessions, now and later) or one ``Session``
    decode RESULT rows and bind prepared statements with cqlcodec.

    ``plain_values`` returns cqlcodec's plain Python values instead of the driver's
    value classes; ``numpy_vectors`` returns numeric vectors as numpy arrays.
    Calling it again changes the options. Raises :class:`UnsupportedDriverError`
    for a driver version cqlcodec.driver does not know.

    Statements the cluster already prepared are switched too, and so is any plain
    ``PreparedStatement`` executed through an installed session: binding belongs to
    the statement (the driver does not record which session prepared it), so
    ``install(session)`` switches every statement of that session's cluster.

    A RESULT whose rows cqlcodec refuses (bytes malformed to it, or beyond one of its
    limits) is read once more by the driver's own code, which returns its values or
    raises its own error, exactly as without ``install``; the first fallback of each
    reason is logged (logger ``cqlcodec.driver``).

    Deliberate differences from the driver alone (README.md, "Differences from the
    driver", has them all):

    * a timestamp outside ``datetime``'s years 1-9999 reads as its int milliseconds,
      at any nesting level, where the driver raises ``DriverException`` for the whole
      result and drops the connection with every request in flight on it: a value the
      application can handle is never worse than that, and written back, the int binds
      as the same timestamp through cqlcodec and through the driver. It is the value
      with ``plain_values`` too: the driver has no class for such timestamps to return
      instead (as it has ``util.Date`` for dates outside ``datetime``'s range);
    * timestamps far from 1970 read as their exact milliseconds (cassandra-driver goes
      through a float);
    * an empty element of a vector reads as None, where the driver fails unless the
      elements are strings;
    * a mapping that is not a ``dict`` binds by column name (the driver binds its keys);
      an iterable without a length binds to a list, set or vector column;
    * results read by the driver's own code (see the module documentation) carry the
      driver's values even with ``plain_values`` or ``numpy_vectors``.
    """
    _check_driver()
    if numpy_vectors:
        try:
            import numpy  # noqa: F401
        except ImportError as exc:
            raise UnsupportedDriverError("numpy_vectors=True needs numpy installed") from exc
    options = Options(bool(plain_values), bool(numpy_vectors))
    if isinstance(target, Cluster):
        _switch_connection(target, connection)
        _install_cluster(target, options)
    elif isinstance(target, Session):
        if connection:
            _connection_not_switched(target.cluster)
        _install_session(target, options)
    else:
        raise TypeError(f"install() needs a cassandra.cluster.Cluster or Session, "
                        f"not {type(target).__name__}")


def _switch_connection(cluster: Cluster, connection: bool | None) -> None:
    """Put cqlcodec's connection class in front of the cluster's reactor, unless
    asked not to (or, by default, in a build where it is not the faster path)."""
    if connection is False or (connection is None and not ON_BY_DEFAULT):
        return
    if is_cqlcodec_class(cluster.connection_class):
        return
    if getattr(cluster, "_is_setup", False):
        _connection_not_switched(cluster)
        return
    cluster.connection_class = connection_class(cluster.connection_class)


def _connection_not_switched(cluster: Cluster) -> None:
    if not is_cqlcodec_class(cluster.connection_class):
        warnings.warn("cqlcodec.driver.install: the cluster is already connected, so its "
                      "connection class stays the driver's; call install() before "
                      "connect() (or pass connection_class=cqlcodec.driver."
                      "connection_class() to Cluster) for cqlcodec's read path",
                      UserWarning, stacklevel=3)


def _install_cluster(cluster: Cluster, options: Options) -> None:
    first = installed_options(cluster) is None
    cluster.__dict__[_OPTIONS_ATTR] = options
    if first:
        connect = cluster.connect

        def connect_with_cqlcodec(*args: Any, **kwargs: Any) -> Session:
            session = connect(*args, **kwargs)
            current = installed_options(cluster)
            if current is not None:
                _install_session(session, current)
            return session
        connect_with_cqlcodec.__doc__ = connect.__doc__
        cluster.__dict__["connect"] = connect_with_cqlcodec
    for session in list(cluster.sessions):
        _install_session(session, options)
    _switch_prepared(cluster)


def _switch_prepared(cluster: Cluster) -> None:
    """Statements the cluster prepared before install bind with cqlcodec from now on.

    The cluster holds its prepared statements (by query id, for re-preparing); a
    statement does not record which session prepared it, so all are switched."""
    registry = getattr(cluster, "_prepared_statements", None)
    if registry is None:
        return
    with cluster._prepared_statement_lock:
        statements = list(registry.values())
    for ps in statements:
        if type(ps) is PreparedStatement:
            ps.__class__ = CqlcodecPreparedStatement


def _install_session(session: Session, options: Options) -> None:
    previous = installed_options(session)
    if previous == options:
        return
    base = session.client_protocol_handler
    if previous is not None:
        base = base.__mro__[1]  # the handler cqlcodec's was derived from
    session.client_protocol_handler = _handler_class(base, options)
    session.__dict__[_OPTIONS_ATTR] = options
    if previous is None:
        prepare = session.prepare

        def prepare_with_cqlcodec(*args: Any, **kwargs: Any) -> PreparedStatement:
            ps = prepare(*args, **kwargs)
            if type(ps) is PreparedStatement:
                ps.__class__ = CqlcodecPreparedStatement
            return ps
        prepare_with_cqlcodec.__doc__ = prepare.__doc__
        session.__dict__["prepare"] = prepare_with_cqlcodec
        # a statement executed here that the cluster no longer holds (prepared again
        # since, or built by hand) binds with cqlcodec too
        create = session._create_response_future

        def create_with_cqlcodec(query: Any, *args: Any, **kwargs: Any) -> Any:
            if type(query) is PreparedStatement:
                query.__class__ = CqlcodecPreparedStatement
            # before the driver builds the message: scylla-driver takes the statement's
            # columns into it there
            statement = query if isinstance(query, PreparedStatement) else getattr(
                query, "prepared_statement", None)
            if statement is not None:
                columns = statement.result_metadata
                if columns and type(columns) is list:
                    track(statement)  # v5: its EXECUTE skips the metadata (skip_metadata)
            future = create(query, *args, **kwargs)
            paused = _PAUSED_FACTORIES.get(id(future.row_factory))
            if paused is not None and paused.factory is future.row_factory:
                future.row_factory = paused
            return future
        session.__dict__["_create_response_future"] = create_with_cqlcodec
        _switch_prepared(session.cluster)


# --------------------------------------------------------------------------- request path glue

def options_for(session: Session) -> Options:
    """The options rows are made with on ``session``: those it was installed with, else
    the driver's own values (what the session returns without ``install``)."""
    return installed_options(session) or Options(False, False)


def result_plan(metadata: list[RowMetadata], protocol_version: int,
                policy: ColumnEncryptionPolicy | None, options: Options) -> _ResultPlan:
    """How rows of the result columns ``metadata`` (a prepared statement's, the same list
    every time) are read for a session with ``options``: ``desc`` (cqlcodec's parse
    description, None when the driver's own code reads them), ``converters`` (per
    column, cqlcodec's value into the driver's, or None) and ``empty_classes`` (the
    driver types whose ``support_empty_values`` sends such rows to the driver's code).
    For cqlcodec's request path (:mod:`cqlcodec.requests`)."""
    return _plan_for(metadata, protocol_version, policy, options)


def row_factory_for(factory: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """The row factory to call for ``factory``'s rows (the driver's own factories run with
    the cyclic collector held off)."""
    paused = _PAUSED_FACTORIES.get(id(factory))
    return paused if paused is not None and paused.factory is factory else factory


def bind_plan(ps: PreparedStatement) -> _BindPlan:
    """How cqlcodec binds ``ps`` (kept on the statement): ``prepared`` (None when the
    driver's own ``bind`` does) and ``adapters`` (None when the driver's bind values are
    cqlcodec's as they are). For cqlcodec's request path (:mod:`cqlcodec.requests`)."""
    return _bind_plan(ps)


def adapt_values(values: Any, plan: _BindPlan) -> Any:
    """The driver's bind values as cqlcodec takes them (``UNSET_VALUE``, the driver's
    value classes), for :func:`bind_plan`'s ``prepared``."""
    return _adapt_values(values, plan)


# columnar IO (whole queries into columns, columns into tables) lives beside this module
from cqlcodec.driver import columns as _columns  # noqa: E402


def _columnar_prepared(ps: PreparedStatement) -> cqlcodec.Prepared:
    """The cqlcodec statement behind ``ps``, for binding columns; refused where driver mode
    binds with the driver's own code (an unsupported protocol version or type)."""
    plan = _bind_plan(ps)
    if plan.prepared is None:
        raise cqlcodec.UnsupportedTypeError(
            f"cannot bind columns for this statement: {plan.driver_reason or 'not supported'}")
    return plan.prepared


_columns.register_driver_glue(_columnar_prepared, _adapt_policy)
execute_columns = _columns.execute_columns
insert_columns = _columns.insert_columns
ColumnPages = _columns.ColumnPages
InsertResult = _columns.InsertResult
InsertError = _columns.InsertError
