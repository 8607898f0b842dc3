"""cqlcodec inside cassandra-driver and scylla-driver: one call switches it on.

::

    import cqlcodec.driver
    cluster = Cluster(["127.0.0.1"])
    cqlcodec.driver.install(cluster)          # or install(session)
    session = cluster.connect("ks")

After :func:`install`, for every session of that cluster (or that one session):

* the rows of RESULT messages are decoded by :func:`cqlcodec.decode_rows_result`;
  for prepared statements the driver's result metadata is converted once to a
  :class:`cqlcodec.Prepared` whose parse description is cached and reused;
* statements prepared with ``session.prepare(...)`` bind their values with
  :meth:`cqlcodec.Prepared.bind` (``prepared.bind(values)``, ``session.execute(prepared,
  values)``, ``BatchStatement.add(prepared, values)``).

By default applications see exactly the values the driver itself returns: its
``SortedSet`` for sets, ``OrderedMapSerializedKey`` for maps, ``util.Date``,
``util.Time`` and ``util.Duration``, its UDT named tuples or the classes
registered with ``Cluster.register_user_type``. Binding accepts everything the
driver accepts for those types (its value classes, ``UNSET_VALUE``, ints as raw
``date`` values) as well as cqlcodec's values. ``plain_values=True`` returns
cqlcodec's plain values instead (``set``, ``dict``, ``datetime.date``,
:class:`cqlcodec.Time`, ...), which skips the conversion; ``numpy_vectors=True``
returns numeric vectors as numpy arrays (numpy must be installed).

Supported drivers: cassandra-driver 3.29 and 3.30, scylla-driver 3.29, with or
without their Cython extensions. Any other version is refused with
:class:`UnsupportedDriverError`. Statements prepared before ``install`` and
``BoundStatement`` objects built by hand keep the driver's own binding.
Differences from the driver that are deliberate: timestamps far from 1970 keep
full millisecond precision (the driver rounds through a float), and bind errors
are cqlcodec's :class:`cqlcodec.BindError` (a ``TypeError`` or ``ValueError``
like the driver's) naming column, type and value.
"""

from __future__ import annotations

import datetime
import importlib.util
import io
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import cqlcodec
from cqlcodec import kinds as K
from cqlcodec.errors import CodecError
from cqlcodec.types.model import (
    CqlType,
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
    from cassandra import cqltypes as ct
    from cassandra import util as cutil
    from cassandra.cluster import Cluster, Session
    from cassandra.policies import ColDesc, ColumnEncryptionPolicy
    from cassandra.protocol import ResultMessage, _ProtocolHandler
    from cassandra.query import UNSET_VALUE, BoundStatement, PreparedStatement
except ImportError as _exc:  # pragma: no cover - exercised only without a driver
    raise UnsupportedDriverError(
        "cqlcodec.driver needs cassandra-driver (>= 3.29) or scylla-driver (>= 3.29): "
        f"{_exc}") from _exc

__all__ = ["UnsupportedDriverError", "cql_type_of", "driver_name", "driver_version", "install",
           "installed_options", "SUPPORTED_DRIVERS"]

SUPPORTED_DRIVERS: Final[dict[str, tuple[tuple[int, int], ...]]] = {
    "cassandra-driver": ((3, 29), (3, 30)),
    "scylla-driver": ((3, 29),),
}
"""Driver distribution -> the (major, minor) release series cqlcodec.driver knows."""

_ROWS_KIND: Final = b"\x00\x00\x00\x02"
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
        with _type_lock:
            if len(_type_cache) >= _CACHE_LIMIT:
                for old in list(_type_cache)[: _CACHE_LIMIT // 8]:
                    _type_cache.pop(old, None)
            _type_cache[driver_type] = found
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


def _list_out(sub: Converter | None) -> Converter:
    if sub is None:
        return lambda v: v if type(v) is list else list(v)
    if sub is _date_out:  # the common case inline: one call per list, not per element
        return lambda v: [_DriverDate(e.toordinal() - _EPOCH_ORDINAL) if type(e) is _PyDate
                          else None if e is None else _date_out(e) for e in v]
    return lambda v: [None if e is None else sub(e) for e in v]


def _sorted_set(items: Any) -> Any:
    """The driver's SortedSet of ``items`` (distinct values, as a decoded set has)."""
    s = _DriverSortedSet()
    try:
        # what SortedSet.add() builds one bisect at a time (SortedSet.copy() sets it too)
        s._items = sorted(items)
    except TypeError:  # values that do not compare: the driver's own insertion order
        s.update(items)
    return s


def _set_out(sub: Converter | None) -> Converter:
    if sub is None:
        return _sorted_set
    return lambda v: _sorted_set([None if e is None else sub(e) for e in v])


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


def value_converter(dt: type[ct._CassandraType], protocol_version: int,
                    numpy_vectors: bool = False) -> Converter | None:
    """A function turning cqlcodec's decoded value of ``dt`` into the driver's, or
    None when they are the same (every scalar but date, time and duration)."""
    if issubclass(dt, (ct.FrozenType, ct.ReversedType)):
        return value_converter(dt.subtypes[0], protocol_version, numpy_vectors)
    if issubclass(dt, ct.VectorType):
        if numpy_vectors and cql_type_of(dt.subtype).unwrapped().kind in _NUMERIC_VECTOR_KINDS:
            return None
        return _list_out(value_converter(dt.subtype, protocol_version, numpy_vectors))
    inner = max(3, protocol_version)
    if issubclass(dt, ct.UserType):
        return _udt_out(dt, [value_converter(s, inner, numpy_vectors) for s in dt.subtypes])
    if issubclass(dt, ct.TupleType):
        return _tuple_out([value_converter(s, inner, numpy_vectors) for s in dt.subtypes])
    if issubclass(dt, ct.ListType):
        return _list_out(value_converter(dt.subtypes[0], inner, numpy_vectors))
    if issubclass(dt, ct.SetType):
        return _set_out(value_converter(dt.subtypes[0], inner, numpy_vectors))
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


def _convert_rows(rows: list[tuple[Any, ...]],
                  convs: list[Converter | None]) -> list[tuple[Any, ...]]:
    if not rows or all(c is None for c in convs):
        return rows
    # column by column: C-level transposition and one comprehension per converted column
    # beat a Python loop over the cells of each row
    columns: list[Any] = list(zip(*rows))
    for i, c in enumerate(convs):
        if c is not None:
            columns[i] = [None if v is None else c(v) for v in columns[i]]
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

    def __init__(self, policy: ColumnEncryptionPolicy) -> None:
        self.policy = policy

    def contains_column(self, column: tuple[str, str, str]) -> bool:
        return bool(self.policy.contains_column(ColDesc(*column)))

    def column_type(self, column: tuple[str, str, str]) -> CqlType:
        return cql_type_of(self.policy.column_type(ColDesc(*column)))

    def encrypt(self, column: tuple[str, str, str], data: bytes) -> bytes:
        return bytes(self.policy.encrypt(ColDesc(*column), data))

    def decrypt(self, column: tuple[str, str, str], data: bytes) -> bytes:
        return bytes(self.policy.decrypt(ColDesc(*column), data))


_policy_adapters: dict[int, tuple[ColumnEncryptionPolicy, _PolicyAdapter]] = {}


def _adapt_policy(policy: ColumnEncryptionPolicy | None) -> _PolicyAdapter | None:
    if policy is None:
        return None
    found = _policy_adapters.get(id(policy))
    if found is None or found[0] is not policy:
        found = (policy, _PolicyAdapter(policy))
        _policy_adapters[id(policy)] = found
    return found[1]


# --------------------------------------------------------------------------- options

class Options:
    """What :func:`install` was asked for (immutable)."""

    __slots__ = ("plain_values", "numpy_vectors")

    def __init__(self, plain_values: bool, numpy_vectors: bool) -> None:
        self.plain_values = plain_values
        self.numpy_vectors = numpy_vectors

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Options) and (self.plain_values, self.numpy_vectors) == (
            other.plain_values, other.numpy_vectors)

    def __hash__(self) -> int:
        return hash((self.plain_values, self.numpy_vectors))

    def __repr__(self) -> str:
        return f"Options(plain_values={self.plain_values}, numpy_vectors={self.numpy_vectors})"


# --------------------------------------------------------------------------- results

class _ResultPlan:
    """Everything reused for the rows of one prepared statement's result metadata."""

    __slots__ = ("metadata", "protocol_version", "policy", "prepared", "converters")

    def __init__(self, metadata: list[RowMetadata], protocol_version: int,
                 policy: ColumnEncryptionPolicy | None, options: Options) -> None:
        self.metadata = metadata
        self.protocol_version = protocol_version
        self.policy = policy
        columns = [cqlcodec.ColumnSpec(ks, table, name, cql_type_of(dt))
                   for ks, table, name, dt in metadata]
        self.prepared = cqlcodec.Prepared(
            [], columns, [], protocol_version, b"", None, _adapt_policy(policy))
        self.converters = _converters(metadata, protocol_version, policy, options)


def _converters(metadata: list[RowMetadata], protocol_version: int,
                policy: ColumnEncryptionPolicy | None,
                options: Options) -> list[Converter | None]:
    if options.plain_values:
        return [None] * len(metadata)
    out: list[Converter | None] = []
    for ks, table, name, dt in metadata:
        if policy is not None and policy.contains_column(ColDesc(ks, table, name)):
            dt = policy.column_type(ColDesc(ks, table, name))
        out.append(value_converter(dt, protocol_version, options.numpy_vectors))
    return out


_plans: dict[tuple[int, int, Options], _ResultPlan] = {}
_plans_lock: Final = threading.Lock()


def _plan_for(metadata: list[RowMetadata], protocol_version: int,
              policy: ColumnEncryptionPolicy | None, options: Options) -> _ResultPlan:
    key = (id(metadata), protocol_version, options)
    plan = _plans.get(key)
    if plan is None or plan.metadata is not metadata or plan.policy is not policy:
        plan = _ResultPlan(metadata, protocol_version, policy, options)
        with _plans_lock:
            if len(_plans) >= _CACHE_LIMIT:
                for old in list(_plans)[: _CACHE_LIMIT // 8]:
                    _plans.pop(old, None)
            _plans[key] = plan
    return plan


def _result_message_class(base: type[ResultMessage], options: Options) -> type[ResultMessage]:
    numpy_vectors = options.numpy_vectors

    class CqlcodecResultMessage(base):  # type: ignore[valid-type,misc]
        """The driver's RESULT message with its rows decoded by cqlcodec."""

        def recv_results_rows(self, f: io.BytesIO, protocol_version: int,
                              user_type_map: UserTypeMap,
                              result_metadata: list[RowMetadata] | None,
                              column_encryption_policy: ColumnEncryptionPolicy | None) -> None:
            start = f.tell()
            # the driver parses the metadata itself: its type classes, paging state and
            # new metadata id are what its callers read from the message
            self.recv_results_metadata(f, user_type_map)
            inline = self.column_metadata
            # the RESULT body from its kind: recv_body has just read the kind
            f.seek(start - 4 if start >= 4 else start)
            body = f.read()
            if start < 4 or body[:4] != _ROWS_KIND:
                f.seek(start)
                body = _ROWS_KIND + f.read()
            if inline:
                metadata = inline
                result = cqlcodec.decode_rows_result(
                    body, protocol_version, None, numpy_vectors=numpy_vectors,
                    column_encryption_policy=_adapt_policy(column_encryption_policy))
                convs = _converters(inline, protocol_version, column_encryption_policy, options)
            else:
                metadata = result_metadata or []
                plan = _plan_for(metadata, protocol_version, column_encryption_policy, options)
                result = cqlcodec.decode_rows_result(body, protocol_version, plan.prepared,
                                                     numpy_vectors=numpy_vectors)
                convs = plan.converters
            self.column_names = [c[2] for c in metadata]
            self.column_types = [c[3] for c in metadata]
            self.parsed_rows = _convert_rows(result.rows, convs)

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
        {"message_types_by_opcode": opcodes, "cqlcodec_options": options,
         "__doc__": "The session's protocol handler with RESULT rows decoded by cqlcodec."})
    return handler


# --------------------------------------------------------------------------- binding

class _BindPlan:
    __slots__ = ("column_metadata", "protocol_version", "policy", "prepared", "adapters",
                 "by_name", "routing")

    def __init__(self, ps: PreparedStatement) -> None:
        self.column_metadata = ps.column_metadata
        self.protocol_version = ps.protocol_version
        self.policy = ps.column_encryption_policy
        self.routing = ps.routing_key_indexes
        cols = ps.column_metadata or []
        types = [cql_type_of(c.type) for c in cols]
        self.prepared = cqlcodec.Prepared(
            [cqlcodec.ColumnSpec(c.keyspace_name, c.table_name, c.name, t)
             for c, t in zip(cols, types)],
            [], list(ps.routing_key_indexes or []), ps.protocol_version, ps.query_id,
            ps.result_metadata_id, _adapt_policy(self.policy))
        adapters = [input_adapter(t) for t in types]
        self.adapters: list[Converter | None] | None = (
            None if all(a is None for a in adapters) else adapters)
        self.by_name: dict[str, Converter] = {
            c.name: a for c, a in zip(cols, adapters) if a is not None}


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
    if isinstance(values, Mapping):
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
    if isinstance(values, (str, bytes)):
        return values  # cqlcodec refuses these with a clear error, as the driver would fail
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
        """Encode ``values`` (a sequence, or a mapping by column name) with cqlcodec."""
        ps = self.prepared_statement
        plan = _bind_plan(ps)
        if values is None:
            values = ()
        bound = plan.prepared.bind(_adapt_values(values, plan))
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
            numpy_vectors: bool = False) -> None:
    """Make a driver ``Cluster`` (all its sessions, now and later) or one ``Session``
    decode RESULT rows and bind prepared statements with cqlcodec.

    ``plain_values`` returns cqlcodec's plain Python values instead of the driver's
    value classes; ``numpy_vectors`` returns numeric vectors as numpy arrays.
    Calling it again changes the options. Raises :class:`UnsupportedDriverError`
    for a driver version cqlcodec.driver does not know.
    """
    _check_driver()
    if numpy_vectors:
        try:
            import numpy  # noqa: F401
        except ImportError as exc:
            raise UnsupportedDriverError("numpy_vectors=True needs numpy installed") from exc
    options = Options(bool(plain_values), bool(numpy_vectors))
    if isinstance(target, Cluster):
        _install_cluster(target, options)
    elif isinstance(target, Session):
        _install_session(target, options)
    else:
        raise TypeError(f"install() needs a cassandra.cluster.Cluster or Session, "
                        f"not {type(target).__name__}")


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


# columnar IO (whole queries into columns, columns into tables) lives beside this module
from cqlcodec import driver_columns as _columns  # noqa: E402

_columns.register_driver_glue(lambda ps: _bind_plan(ps).prepared, _adapt_policy)
execute_columns = _columns.execute_columns
insert_columns = _columns.insert_columns
ColumnPages = _columns.ColumnPages
InsertResult = _columns.InsertResult
InsertError = _columns.InsertError
