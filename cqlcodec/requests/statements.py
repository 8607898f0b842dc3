"""What the request path sends for one call: a :class:`Request` built from the caller's
statement, parameters and options the way the driver's ``Session.execute`` builds its
message (the statement's settings first, then the execution profile's, then the
session's), and the body of its QUERY or EXECUTE.

Prepared statements are bound with cqlcodec's compiled binding (the values the driver
takes, adapted as :func:`cqlcodec.driver.install` adapts them); values cqlcodec refuses
are bound by the driver's own ``bind``, which accepts them or raises its own error.
"""

from __future__ import annotations

import inspect
import time
from typing import TYPE_CHECKING, Any, Final

from cassandra.cluster import ExecutionProfile, Session, _ConfigMode
from cassandra.policies import NoSpeculativeExecutionPolicy
from cassandra.query import (
    FETCH_SIZE_UNSET,
    UNSET_VALUE,
    BatchStatement,
    BoundStatement,
    PreparedStatement,
    SimpleStatement,
    Statement,
    bind_params,
)
from cassandra.timestamps import MonotonicTimestampGenerator

from cqlcodec.driver.sender import EncodedBatch
from cqlcodec.requests.errors import UnsupportedRequestError
from cqlcodec.requests.frames import (
    FLAG_TRACING,
    OP_BATCH,
    OP_EXECUTE,
    OP_QUERY,
    Parameters,
    batch_body,
    execute_body,
    query_body,
)

if TYPE_CHECKING:
    from cqlcodec.driver.installer import _BindPlan
    from cqlcodec.protocol.prepared import Prepared

_UNSET_FETCH: Final[object] = FETCH_SIZE_UNSET
_UNSET_VALUE: Final[object] = UNSET_VALUE
_LEGACY: Final[object] = _ConfigMode.LEGACY
_PROFILES: Final[object] = _ConfigMode.PROFILES
_TIME: Final = time.time
_NO_SPECULATION: Final[type] = NoSpeculativeExecutionPolicy


class Settings:
    """The execution profile's settings a request falls back on (or, for a cluster
    configured without profiles, the session's and cluster's)."""

    def __init__(self, session: Any, profile: object, ep: Any = None) -> None:
        """``ep``: the execution profile ``profile`` names, when the caller found it
        (:func:`profiles_of`)."""
        if ep is not None:
            self._read(ep)
            return
        cluster = session.cluster
        if getattr(cluster, "_config_mode", None) == _LEGACY:
            self.timeout: float | None = session.default_timeout
            self.consistency: int = session.default_consistency_level
            self.serial: int | None = session.default_serial_consistency_level
            self.retry_policy: Any = cluster.default_retry_policy
            self.row_factory: Any = session.row_factory
            self.load_balancing: Any = cluster.load_balancing_policy
            self.speculative: Any = None
            return
        self._read(_profile_of(session, cluster, profile))

    def _read(self, ep: Any) -> None:
        # the driver's own class keeps every setting in the instance's dict: read there
        # (a dict lookup each, not an attribute lookup); any other profile by attribute
        fields: dict[str, Any] = ep.__dict__ if type(ep) is ExecutionProfile else {}
        try:
            paging = fields["continuous_paging_options"]
            timeout = fields["request_timeout"]
            consistency = fields["consistency_level"]
            serial = fields["serial_consistency_level"]
            retry_policy = fields["retry_policy"]
            row_factory = fields["row_factory"]
            load_balancing = fields["load_balancing_policy"]
            speculative = fields["speculative_execution_policy"]
        except KeyError:
            paging = getattr(ep, "continuous_paging_options", None)
            timeout = ep.request_timeout
            consistency = ep.consistency_level
            serial = ep.serial_consistency_level
            retry_policy = ep.retry_policy
            row_factory = ep.row_factory
            load_balancing = ep.load_balancing_policy
            speculative = ep.speculative_execution_policy
        if paging:
            raise UnsupportedRequestError(
                "cqlcodec's request path does not do continuous paging (DSE): use "
                "session.execute_async with that execution profile")
        self.timeout = timeout
        self.consistency = consistency
        self.serial = serial
        self.retry_policy = retry_policy
        self.row_factory = row_factory
        self.load_balancing = load_balancing
        self.speculative = None if speculative is None or \
            isinstance(speculative, _NO_SPECULATION) else speculative


def profiles_of(session: Any) -> dict[object, Any] | None:
    """The cluster's execution profiles by name (the profile manager's own dict, which
    the driver adds to), when every call of ``session`` reads its settings from them: a
    cluster configured with profiles (for good) and a session that looks them up the
    driver's way; else None."""
    cluster = session.cluster
    if getattr(cluster, "_config_mode", None) != _PROFILES or not _driver_lookup(type(session)):
        return None
    profiles = getattr(getattr(cluster, "profile_manager", None), "profiles", None)
    return profiles if type(profiles) is dict else None


def _profile_of(session: Any, cluster: Any, profile: object) -> Any:
    """``session._maybe_get_execution_profile(profile)`` without its two calls when the
    profile is a name the cluster's profile manager knows (the same dict it reads), and
    the session's class does not look profiles up its own way."""
    if not isinstance(profile, ExecutionProfile) and _driver_lookup(type(session)):
        manager = getattr(cluster, "profile_manager", None)
        profiles = getattr(manager, "profiles", None)
        if type(profiles) is dict:
            ep = profiles.get(profile)
            if ep is not None:
                return ep
    return session._maybe_get_execution_profile(profile)


_DRIVER_LOOKUP: Final[dict[type, bool]] = {}


def _driver_lookup(kind: type) -> bool:
    """Whether sessions of ``kind`` find profiles with the driver's own methods."""
    known = _DRIVER_LOOKUP.get(kind)
    if known is None:
        known = all(getattr(kind, name, None) is getattr(Session, name)
                    for name in ("get_execution_profile", "_maybe_get_execution_profile"))
        _DRIVER_LOOKUP[kind] = known
    return known


class _Plan:
    """The request path's copy of a statement's bind plan (:func:`cqlcodec.driver.install`'s
    ``_BindPlan``, a Python object): the same fields, read natively on every call."""

    def __init__(self, plan: _BindPlan) -> None:
        self.column_metadata: object = plan.column_metadata
        self.protocol_version: object = plan.protocol_version
        self.routing: object = plan.routing
        self.policy: object = plan.policy
        self.prepared: Prepared | None = plan.prepared
        self.plan = plan  # what adapt_values takes
        self.adapted = plan.adapters is not None
        # the table of the bind columns (the request's keyspace and table), None without
        meta: Any = plan.column_metadata
        self.keyspace: str | None = meta[0].keyspace_name if meta else None
        self.table: str | None = meta[0].table_name if meta else None


_PLAN_KEY: Final = "_cqlcodec_request_bind"


class Binder:
    """Binds a driver ``PreparedStatement``'s values with cqlcodec (the plan
    :func:`cqlcodec.driver.install` keeps on the statement), else with the driver."""

    def __init__(self) -> None:
        from cqlcodec.driver.installer import adapt_values, bind_plan
        self._plan_of: Any = bind_plan
        self._adapt: Any = adapt_values
        self.plan: _Plan | None = None  # the plan of the statement bound last

    def bind(self, ps: PreparedStatement, values: Any) -> tuple[list[object], bytes | None]:
        """The encoded values and the routing key (None: the statement has none)."""
        kept: dict[str, Any] = ps.__dict__
        plan: _Plan | None = kept.get(_PLAN_KEY)  # the plan kept on it, if still its
        if (plan is None or plan.column_metadata is not ps.column_metadata
                or plan.protocol_version != ps.protocol_version
                or plan.routing is not ps.routing_key_indexes
                or plan.policy is not ps.column_encryption_policy):
            plan = _Plan(self._plan_of(ps))  # else made anew (what bind_plan checks and does)
            kept[_PLAN_KEY] = plan
        self.plan = plan
        prepared = plan.prepared
        if prepared is not None:
            try:
                if values is None:
                    values = ()
                if not plan.adapted and (type(values) is tuple or type(values) is list) \
                        and not _has_unset(values):
                    bound = prepared.bind(values)  # the driver's values are cqlcodec's
                else:
                    bound = prepared.bind(self._adapt(values, plan.plan))
                key = bound.routing_key if plan.routing else None
                values_made: list[Any] = bound.values  # made for this call alone: not copied
                return values_made, key
            except Exception:
                pass  # the driver's own bind accepts the values or raises its error
        stmt: Any = BoundStatement(ps).bind(values)
        return list(stmt.values), stmt.routing_key


def _has_unset(values: Any) -> bool:
    if type(values) is tuple:
        row: tuple[object, ...] = values
        for v in row:  # a tuple indexed natively, not iterated through the C API
            if v is _UNSET_VALUE:
                return True
        return False
    for v in values:
        if v is _UNSET_VALUE:
            return True
    return False


class Request(Settings):
    """One statement's execution: what every page and every retry of it sends; its
    settings are its execution profile's (``session``, ``profile``, ``ep`` as
    :class:`Settings` takes them) until the statement's own replace them."""

    def __init__(self, opcode: int, query: str, ps: PreparedStatement | None,
                 values: list[object] | None, session: Any, profile: object,
                 ep: Any = None) -> None:
        super().__init__(session, profile, ep)
        self.opcode = opcode
        self.query = query
        self.ps = ps
        self.values = values
        self.fetch_size = 0
        self.paging_state: bytes | None = None
        self.timestamp: int | None = None
        self.keyspace: str | None = None  # the keyspace of the data (routing)
        self.query_keyspace: str | None = None  # v5 QUERY: the keyspace flag
        self.table: str | None = None
        self.routing_key: bytes | None = None
        self.idempotent = False
        self.is_read = False
        self.select = False  # a SELECT: sent without a client timestamp
        self.trace = False
        self.statement: Any = None  # the driver statement handed to policies
        self.skip_metadata = False
        # the result metadata whose id the last EXECUTE sent: its rows are read by it even
        # when the statement learns new metadata (a re-prepare) before the answer comes
        self.sent_metadata: Any = None
        self.host: Any = None  # the one host to send it to (None: the policy's plan)
        self.batch_type = 0  # OP_BATCH: the batch's type and its encoded statements
        self.batch_statements = b""
        # the current page's first try (FastSession._send_first): its plan, the host it
        # went to, its deadline (the loop's time; None: no timeout) and its connection
        self.plan: Any = None
        self.sent_to: Any = None
        self.deadline: float | None = None
        self.conn: Any = None

    @property
    def flags(self) -> int:
        """The frame flags (tracing)."""
        return FLAG_TRACING if self.trace else 0

    def body(self, version: int) -> bytes:
        """The QUERY, EXECUTE or BATCH body for the current page and consistency."""
        if self.opcode == OP_BATCH:
            return batch_body(version, self.batch_type, self.batch_statements,
                              self.consistency, self.serial, self.timestamp)
        p = Parameters(self.consistency, self.serial, self.fetch_size, self.paging_state,
                       self.timestamp, self.query_keyspace, False)
        ps = self.ps
        if ps is not None:
            self.sent_metadata = ps.result_metadata
            if version < 5:  # no result metadata id before v5
                return execute_body(version, ps.query_id, None, p, self.values)
            p.skip_metadata = self.skip_metadata
            return execute_body(version, ps.query_id, ps.result_metadata_id, p, self.values)
        return query_body(version, self.query, p, self.values)

    def policy_statement(self) -> Any:
        """The driver statement the retry and load-balancing policies are given."""
        stmt = self.statement
        if stmt is None:
            ps = self.ps
            stmt = BoundStatement(ps) if ps is not None else SimpleStatement(self.query)
            self.statement = stmt
        return stmt


def _routing_of(stmt: Any) -> bytes | None:
    key = stmt._routing_key if isinstance(stmt, Statement) else None
    if key is None:
        try:
            key = stmt.routing_key
        except Exception:
            key = None
    return key if isinstance(key, bytes) else None


def build_request(session: Any, binder: Binder, profile: object, ep: Any, query: object,
                  parameters: Any, timeout: object, paging_state: bytes | None,
                  trace: bool, unset: object) -> Request:
    """The :class:`Request` for ``session.execute(query, parameters, ...)`` (``profile``,
    ``ep``: as :class:`Settings` takes them)."""
    if isinstance(query, BatchStatement) and not isinstance(query, EncodedBatch):
        raise UnsupportedRequestError(
            "cqlcodec's request path does not send a BatchStatement yet: use "
            "session.execute_async(batch) (or cqlcodec.aio.execute(session, batch))")
    if isinstance(query, str):
        query = SimpleStatement(query)
    stmt: Any = query
    custom = getattr(stmt, "custom_payload", None)
    if custom:
        raise UnsupportedRequestError(
            "cqlcodec's request path does not send custom payloads: use session.execute_async")
    req: Request
    if isinstance(stmt, PreparedStatement):
        values, key = binder.bind(stmt, parameters)
        req = Request(OP_EXECUTE, "", stmt, values, session, profile, ep)  # the text: ps.query_string
        req.routing_key = key
        plan = binder.plan
        if plan is not None and plan.keyspace is not None:
            req.keyspace = plan.keyspace  # of the bind columns the plan was checked against
            req.table = plan.table
            _result_fields(req, stmt)
        else:
            _prepared_fields(req, stmt)
    elif isinstance(stmt, BoundStatement):
        if parameters:
            raise ValueError("a BoundStatement takes no parameters (they are bound already)")
        ps = stmt.prepared_statement
        req = Request(OP_EXECUTE, "", ps, list(stmt.values), session, profile, ep)
        req.routing_key = _routing_of(stmt)
        req.statement = stmt
        _prepared_fields(req, ps)
    elif isinstance(stmt, SimpleStatement):
        text: str = stmt.query_string
        if parameters:
            text = bind_params(text, parameters, session.encoder)
        req = Request(OP_QUERY, text, None, None, session, profile, ep)
        req.routing_key = _routing_of(stmt)
        req.keyspace = stmt.keyspace or session.keyspace
        req.query_keyspace = stmt.keyspace if session.cluster.protocol_version >= 5 else None
        req.statement = stmt
        req.is_read = req.select = starts_with_select(text)
    elif isinstance(stmt, EncodedBatch):  # cqlcodec's own batches (columnar inserts)
        req = Request(OP_BATCH, "", None, None, session, profile, ep)
        req.batch_type = int(stmt.batch_type.value)
        req.batch_statements = stmt.encoded_statements
        req.routing_key = _routing_of(stmt)
        req.keyspace = stmt.keyspace or session.keyspace
        req.statement = stmt
    else:
        raise UnsupportedRequestError(
            f"cqlcodec's request path sends str, SimpleStatement, PreparedStatement and "
            f"BoundStatement, not {type(query).__name__}: use session.execute_async")
    if stmt.consistency_level is not None:
        req.consistency = stmt.consistency_level
    serial = getattr(stmt, "serial_consistency_level", None)
    if serial is not None:
        req.serial = serial
    fetch = stmt.fetch_size
    if fetch is _UNSET_FETCH:
        fetch = session.default_fetch_size
    if type(fetch) is int:
        req.fetch_size = fetch
    else:
        req.fetch_size = int(fetch) if fetch else 0
    req.paging_state = paging_state
    req.idempotent = bool(getattr(stmt, "is_idempotent", False))
    policy = getattr(stmt, "retry_policy", None)
    if policy is not None:
        req.retry_policy = policy
    if timeout is not unset:
        req.timeout = timeout if timeout is None else float(timeout)  # type: ignore[arg-type]
    req.trace = trace
    if not req.select and session.use_client_timestamp:
        # a write's time; a SELECT has no use for one (the server reads none from it)
        req.timestamp = client_timestamp(session.cluster.timestamp_generator)
    return req


def client_timestamp(generator: Any) -> int:
    """``generator()``; the driver's ``MonotonicTimestampGenerator`` is run here, on its
    own state under its own lock, as its ``__call__`` runs (the next microsecond after the
    last when the clock has not moved on, with its clock-drift warning)."""
    if type(generator) is not MonotonicTimestampGenerator:
        result: int = generator()
        return result
    lock = generator.lock
    lock.acquire()
    try:
        now = int(_TIME() * 1e6)
        last: int = generator.last
        if now > last:
            generator.last = now
            return now
        generator._maybe_warn(now=now)
        generator.last = last + 1
        return last + 1
    finally:
        lock.release()


def _prepared_fields(req: Request, ps: PreparedStatement) -> None:
    meta = ps.column_metadata
    if meta:
        req.keyspace = meta[0].keyspace_name
        req.table = meta[0].table_name
    else:
        req.keyspace = ps.keyspace
    _result_fields(req, ps)


def _result_fields(req: Request, ps: PreparedStatement) -> None:
    result = ps.result_metadata
    req.is_read = bool(result)
    req.select = bool(result) and _is_select(ps.query_string)
    req.skip_metadata = bool(result) and ps.result_metadata_id is not None


_SELECTS: Final[dict[str, bool]] = {}
_SELECTS_KEPT: Final = 4096


def starts_with_select(text: str) -> bool:
    """Whether a statement's text starts with ``SELECT`` (after blanks, any case; one
    that starts with a comment is not taken for one)."""
    return text.lstrip()[:6].upper() == "SELECT"


def _is_select(text: str) -> bool:
    """:func:`starts_with_select` of a prepared statement's text, known once per text."""
    known = _SELECTS.get(text)
    if known is None:
        known = starts_with_select(text)
        if len(_SELECTS) >= _SELECTS_KEPT:
            _SELECTS.clear()
        _SELECTS[text] = known
    return known


def set_result_metadata(ps: Any, metadata: Any, metadata_id: bytes | None) -> None:
    """Give ``ps`` new result metadata and id together (scylla-driver's statements have
    ``update_result_metadata`` for it; cassandra-driver's plain attributes)."""
    update = getattr(ps, "update_result_metadata", None)
    if update is not None:
        update(metadata, metadata_id)
        return
    ps.result_metadata = metadata
    ps.result_metadata_id = metadata_id


def statement_of(cluster: Any, msg: Any, query: str, keyspace: str | None,
                 version: int) -> PreparedStatement:
    """The driver's ``PreparedStatement`` of a PREPARED answer (its ``from_message``, which
    scylla-driver gives an ``is_lwt`` argument)."""
    make: Any = getattr(PreparedStatement, "from_message")
    extra: dict[str, Any] = {}
    if "is_lwt" in inspect.signature(make).parameters:
        extra["is_lwt"] = bool(getattr(msg, "is_lwt", False))
    ps: PreparedStatement = make(
        msg.query_id, msg.bind_metadata, msg.pk_indexes, cluster.metadata, query, keyspace,
        version, msg.column_metadata, msg.result_metadata_id,
        column_encryption_policy=cluster.column_encryption_policy, **extra)
    return ps
