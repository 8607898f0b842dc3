"""cqlcodec's own request path for a driver ``Session``: :func:`connect` returns a
:class:`FastSession` whose connections live on the running asyncio loop.

The session keeps the control plane (contact points, auth provider, TLS context,
negotiated protocol version, metadata and token map, load-balancing and retry policies,
host up/down, prepared statements); the :class:`FastSession` sends the requests. Each
call is tried on the hosts of its query plan in order: a host it cannot connect to, a
connection lost under a request that may be sent again (a read, or a statement marked
idempotent) and the retry policy's ``RETRY_NEXT_HOST`` move on to the next host;
``UNPREPARED`` re-prepares the statement on that host and sends it again. A write that
may have been applied (a write timeout, a server or truncate error, a lost connection) is
sent again only when its statement is marked idempotent, whatever the retry policy says.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Iterator
from typing import Any, Final

from cassandra import OperationTimedOut
from cassandra.cluster import _NOT_SET, EXEC_PROFILE_DEFAULT, NoHostAvailable
from cassandra.connection import ConnectionShutdown
from cassandra.policies import RetryPolicy
from cassandra.protocol import (
    PreparedQueryNotFound,
    ReadTimeoutErrorMessage,
    UnavailableErrorMessage,
    WriteTimeoutErrorMessage,
)
from cassandra.query import PreparedStatement

from cqlcodec.errors import CodecError
from cqlcodec.requests.admission import Admission
from cqlcodec.requests.connection import Connection, Frame
from cqlcodec.requests.decode import Decoder, Page
from cqlcodec.requests.errors import UnsupportedRequestError, error_message, error_of
from cqlcodec.requests.frames import OP_ERROR, OP_PREPARE, OP_RESULT, prepare_body
from cqlcodec.requests.handshake import use_keyspace
from cqlcodec.requests.loops import loop_clock
from cqlcodec.requests.pool import Pool
from cqlcodec.requests.routing import first_host, query_plan
from cqlcodec.requests.speculative import plan_of, speculate
from cqlcodec.requests.statements import (
    Binder,
    Request,
    build_request,
    profiles_of,
    set_result_metadata,
    statement_of,
)

_RETRY: Final = RetryPolicy.RETRY
_RETHROW: Final = RetryPolicy.RETHROW
_IGNORE: Final = RetryPolicy.IGNORE
_NEXT_HOST: Final = RetryPolicy.RETRY_NEXT_HOST
_REPREPARES: Final = 3  # UNPREPARED answers to one attempt before giving up
_APPLIED_OR_NOT: Final = ("TruncateError", "ServerError")
_OTHER_ERRORS: Final = ("OverloadedErrorMessage", "IsBootstrappingErrorMessage", "TruncateError",
                        "ServerError")
# what getting a host's connection ready may raise: the host is skipped (the next of the plan)
_UNREACHABLE: Final = (ConnectionShutdown, OSError, asyncio.TimeoutError, OperationTimedOut)


class FastResult:
    """What :meth:`FastSession.execute` returns: the rows (a list, as the row factory made
    them), and of the last page fetched its paging state (None: no more pages), the
    server's warnings, the tracing id (``trace=True``) and the coordinator host."""

    __slots__ = ("rows", "column_names", "paging_state", "warnings", "trace_id",
                 "custom_payload", "coordinator", "_page")

    def __init__(self, rows: list[Any], column_names: list[str] | None,
                 page: Page | None = None) -> None:
        self.rows = rows
        self.column_names = column_names
        self.paging_state: bytes | None = None
        self.warnings: list[str] | None = None
        self.trace_id: Any = None
        self.custom_payload: dict[str, bytes] | None = None
        self.coordinator: Any = None
        self._page = page  # the last page: its message is made when asked for

    @property
    def message(self) -> Any:
        """The driver's message of the last page's answer when it was not rows (a VOID
        or SCHEMA_CHANGE result, ...), else None."""
        page = self._page
        return None if page is None else page.message

    @property
    def has_more_pages(self) -> bool:
        """Whether the server has more pages after these rows."""
        return self.paging_state is not None

    def one(self) -> Any:
        """The first row, or None."""
        return self.rows[0] if self.rows else None

    def all(self) -> list[Any]:
        """Every row."""
        return self.rows

    def __iter__(self) -> Iterator[Any]:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, index: int) -> Any:
        return self.rows[index]

    def __repr__(self) -> str:
        return f"<FastResult {len(self.rows)} rows, more pages: {self.has_more_pages}>"


class FastSession:
    """Requests of a driver session sent by cqlcodec on this loop (see :func:`connect`)."""

    def __init__(self, session: Any, loop: asyncio.AbstractEventLoop, max_in_flight: int,
                 connect_timeout: float) -> None:
        version = session.cluster.protocol_version
        if version not in (4, 5):
            raise UnsupportedRequestError(
                f"cqlcodec's request path speaks protocol v4 and v5; this session uses "
                f"v{version}: use the session itself (cqlcodec.aio.execute)")
        self.session = session
        self.loop = loop
        self._clock: Final = loop_clock(loop)  # loop.time()
        self.version: int = version
        self.max_in_flight = max_in_flight
        self.connect_timeout = connect_timeout
        self.closed = False
        self._pool = Pool(loop, session.cluster, version, max_in_flight, connect_timeout)
        self._binder = Binder()
        self._profiles = profiles_of(session)
        self._decoder = Decoder(session)
        self._gate = Admission(loop, max_in_flight)  # calls beyond it wait holding their arguments
        self.reprepared = 0  # statements prepared again after an UNPREPARED answer
        self.speculative_executions = 0  # executions sent beyond the first (speculative)

    # ----------------------------------------------------------------- public verbs

    async def execute(self, query: object, parameters: Any = None, *, timeout: object = _NOT_SET,
                      execution_profile: object = EXEC_PROFILE_DEFAULT,
                      paging_state: bytes | None = None, trace: bool = False,
                      all_pages: bool = True, host: Any = None) -> FastResult:
        """``session.execute(query, parameters, ...)`` on this path: every row of every
        page (``all_pages=False``: the first page only, and its ``paging_state`` to pass
        again), as the execution profile's row factory makes them; ``host`` (one of the
        cluster's ``Host`` objects): sent to that host alone, as the driver's ``host=``
        (``NoHostAvailable`` when it cannot be reached). Beyond ``max_in_flight`` calls
        per connection, a call waits for its turn before its request is built."""
        gate = self._gate
        if not gate.enter(len(self._pool.conns)):
            await gate.wait()
        try:
            req = self._request(query, parameters, timeout, execution_profile, paging_state,
                                trace)
            req.host = host
            rows: list[Any] = []
            names: list[str] | None = None
            while True:
                if req.speculative is not None and req.idempotent:
                    page, host = await self._page_of(req, False)
                else:
                    fut = self._send_first(req)
                    if fut is None:  # not sent: _run goes on from the first try's host
                        page, host = await self._run(req, False, first=True)
                    else:
                        try:
                            frame = await fut
                        except ConnectionShutdown as exc:
                            page, host = await self._run(req, False, first=True, answer=exc)
                        else:
                            if frame.opcode == OP_RESULT:
                                page = self._decoder.page(frame, self.version, req.ps,
                                                          req.sent_metadata, req.row_factory,
                                                          False)
                                host = req.sent_to
                            else:
                                page, host = await self._run(req, False, first=True,
                                                             answer=frame)
                got = page.rows
                if got:
                    if not rows and type(got) is list:
                        rows = got  # a list made for this page alone: kept, not copied
                    else:
                        rows.extend(got)
                if page.column_names is not None:
                    names = page.column_names
                if page.paging_state is None or not all_pages or not req.fetch_size:
                    out = FastResult(rows, names, page)
                    out.paging_state = page.paging_state
                    out.warnings = page.warnings
                    out.trace_id = page.trace_id
                    out.custom_payload = page.custom_payload
                    out.coordinator = host
                    return out
                req.paging_state = page.paging_state
        finally:
            gate.leave()

    async def execute_columns(self, query: object, parameters: Any = None, *,
                              timeout: object = _NOT_SET,
                              execution_profile: object = EXEC_PROFILE_DEFAULT,
                              paging_state: bytes | None = None,
                              fetch_size: int | None = None, host: Any = None) -> Any:
        """Every page of a query's rows decoded into columns: a
        :class:`~cqlcodec.driver.ColumnPages`, as :func:`cqlcodec.aio.execute_columns`
        returns (``fetch_size``: rows per page, else the statement's or the session's;
        ``host``: every page from that host alone, as :meth:`execute`'s)."""
        from cqlcodec.requests.pages import all_columns, send_pages
        return await all_columns(send_pages(self, query, parameters, fetch_size=fetch_size,
                                            paging_state=paging_state, timeout=timeout,
                                            execution_profile=execution_profile, host=host))

    async def prepare(self, query: str, keyspace: str | None = None) -> PreparedStatement:
        """Prepare ``query`` (on one host of the plan; other hosts prepare it when they
        first answer ``UNPREPARED``): the driver's ``PreparedStatement``, registered with
        the cluster as ``session.prepare`` registers it."""
        req = Request(OP_PREPARE, query, None, None, self.session, EXEC_PROFILE_DEFAULT,
                      self._profile_entry(EXEC_PROFILE_DEFAULT))
        req.keyspace = keyspace or self.session.keyspace
        errors: dict[Any, BaseException] = {}
        for host in query_plan(self.session, req):
            try:
                conn = await self._pool.get(host, self.session.keyspace, req.timeout)
                msg = await self._prepare_on(conn, query, keyspace, req.timeout)
            except _UNREACHABLE as exc:
                errors[host] = exc
                continue
            cluster = self.session.cluster
            ps = statement_of(cluster, msg, query, keyspace, self.version)
            cluster.add_prepared(msg.query_id, ps)
            return ps
        raise NoHostAvailable("Unable to prepare the statement on any host", errors)

    async def close(self) -> None:
        """Close every connection (requests in flight fail with ``ConnectionShutdown``)."""
        self.closed = True
        self._gate.release_all()
        self._pool.close()
        await asyncio.sleep(0)

    async def __aenter__(self) -> FastSession:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def reconnects(self) -> int:
        """Connections opened to a host that had one before (after a drop or an outage)."""
        return self._pool.reconnects

    def leftovers(self) -> tuple[int, int, int]:
        """Over every connection: (stream ids in use, futures kept, timers kept)."""
        total = [0, 0, 0]
        for conn in self._pool.conns.values():
            a, b, c = conn.leftovers()
            total[0] += a
            total[1] += b
            total[2] += c
        return total[0], total[1], total[2]

    # ----------------------------------------------------------------- internals

    def _profile_entry(self, profile: object) -> Any:
        """The execution profile ``profile`` names when the cluster's profiles are read
        straight from their dict (:func:`profiles_of`), else None (:class:`Settings`
        looks it up the driver's way). Read per call, as the driver reads its
        settings: a profile changed since applies at once."""
        profiles = self._profiles
        return None if profiles is None else profiles.get(profile)

    def _request(self, query: object, parameters: Any, timeout: object, profile: object,
                 paging_state: bytes | None, trace: bool) -> Request:
        if self.closed:
            raise ConnectionShutdown("cqlcodec: this FastSession is closed")
        return build_request(self.session, self._binder, profile, self._profile_entry(profile),
                             query, parameters, timeout, paging_state, trace, _NOT_SET)

    async def _prepare_on(self, conn: Connection, query: str, keyspace: str | None,
                          timeout: float | None) -> Any:
        if not conn.has_room():
            await conn.wait_slot()
        frame = await conn.request(OP_PREPARE, prepare_body(self.version, query, keyspace),
                                   0, timeout)
        if frame.opcode != OP_RESULT:
            raise error_of(frame, self.version, conn.host) if frame.opcode == OP_ERROR else \
                ConnectionShutdown(f"cqlcodec: unexpected answer {frame.opcode} to PREPARE")
        return self._decoder.page(frame, self.version, None, None, None, False).message

    async def _reprepare(self, conn: Connection, req: Request, timeout: float | None) -> None:
        ps: Any = req.ps
        keyspace = ps.keyspace if self.version >= 5 else None
        if self.version < 5 and ps.keyspace and conn.keyspace != ps.keyspace:
            raise ValueError(f"The Session's current keyspace ({conn.keyspace}) does not match "
                             f"the keyspace the statement was prepared with ({ps.keyspace})")
        msg = await self._prepare_on(conn, ps.query_string, keyspace, timeout)
        self.reprepared += 1
        if msg.query_id != ps.query_id:
            raise CodecError(f"re-preparing gave a different statement id "
                             f"({msg.query_id.hex()} instead of {ps.query_id.hex()})")
        if self.version >= 5:
            set_result_metadata(ps, msg.column_metadata, msg.result_metadata_id)

    def _page_of(self, req: Request, columnar: bool) -> Coroutine[Any, Any, tuple[Page, Any]]:
        """One page of ``req``, with speculative executions when the call may have them."""
        spec = self._speculation(req)
        return self._run(req, columnar) if spec is None else self._speculate(req, columnar, spec)

    def _speculation(self, req: Request) -> Any:
        """The speculative execution plan of a call (None: one execution at a time), made
        as the driver makes it: for idempotent statements, when the profile has a policy."""
        policy = req.speculative
        if policy is None or not req.idempotent:
            return None
        return plan_of(policy, req.keyspace or self.session.keyspace, req.policy_statement())

    async def _speculate(self, req: Request, columnar: bool, spec: Any) -> tuple[Page, Any]:
        """:meth:`_run` with speculative executions (:mod:`cqlcodec.requests.speculative`)."""
        deadline = None if req.timeout is None else self._clock() + req.timeout

        def run(plan: Iterator[Any], at: float | None) -> Any:
            return self._run(req, columnar, plan, at)
        result, sent = await speculate(run, query_plan(self.session, req), spec, self.loop,
                                       deadline)
        self.speculative_executions += sent - 1
        page: tuple[Page, Any] = result
        return page

    def _send_first(self, req: Request) -> asyncio.Future[Frame] | None:
        """Send ``req`` to the first host of its plan when a connection there is ready for
        it (the first try of :meth:`_run`, without a coroutine of its own): the answer's
        future, else None; the try is kept on ``req`` (its plan, host, deadline and
        connection) for :meth:`_run` to go on from. Not for calls with speculative
        executions (:meth:`_page_of` sends them)."""
        plan = query_plan(self.session, req)
        req.plan = plan
        host = first_host(plan)
        req.sent_to = host
        req.conn = None
        timeout = req.timeout
        deadline = None if timeout is None else self._clock() + timeout
        req.deadline = deadline
        if host is None:
            return None
        conn = self._pool.by_host_id.get(id(host))
        if conn is None or not conn.has_room():  # has_room: also not closed
            return None
        keyspace = self.session.keyspace
        if keyspace and conn.keyspace != keyspace:
            return None
        req.conn = conn
        return conn.request(req.opcode, req.body(self.version), req.flags, timeout, deadline)

    async def _run(self, req: Request, columnar: bool, plan: Iterator[Any] | None = None,
                   deadline: float | None = -1.0, first: bool = False,
                   answer: Frame | ConnectionShutdown | None = None) -> tuple[Page, Any]:
        """Send ``req`` until a host answers it (its page) or the policies give up;
        ``first``: go on from the first try :meth:`_send_first` made (``answer``: what it
        got, None when it was not sent); ``plan`` (the hosts to try) and ``deadline`` (the
        loop's time) of a speculative execution are its call's."""
        session = self.session
        version = self.version
        left: float | None = None
        conn: Connection | None = None
        if first:
            plan = req.plan
            deadline = req.deadline
            host = req.sent_to
            conn = req.conn
        else:
            if deadline is not None and deadline < 0:
                # the call's own deadline: what is left of it now is its whole timeout
                deadline = None if req.timeout is None else self._clock() + req.timeout
            if plan is None:
                plan = query_plan(session, req)
            host = first_host(plan)
        errors: dict[Any, BaseException] = {}
        retries = 0
        reprepares = 0
        last = host
        while True:
            if answer is None:
                left = None if deadline is None else deadline - self._clock()
                if left is not None and left <= 0:  # also when the plan ran out meanwhile
                    raise OperationTimedOut(errors=errors, last_host=last)
                if host is None:
                    raise NoHostAvailable("Unable to complete the operation against any "
                                          "hosts", errors)
                last = host
                try:
                    conn = self._pool.by_host_id.get(id(host))
                    if conn is None or conn.closed:
                        conn = await self._pool.get(host, session.keyspace, left)
                    if not conn.has_room():
                        if left is None:
                            await conn.wait_slot()
                        else:
                            await asyncio.wait_for(conn.wait_slot(), left)
                    keyspace = session.keyspace
                    if keyspace and conn.keyspace != keyspace:
                        await use_keyspace(conn, keyspace, self.connect_timeout if left is None
                                           else min(left, self.connect_timeout))
                    fut = conn.request(req.opcode, req.body(version), req.flags, left)
                except _UNREACHABLE as exc:
                    errors[host] = exc
                    host = first_host(plan)
                    continue
                try:
                    answer = await fut
                except ConnectionShutdown as exc:
                    answer = exc
            elif deadline is not None:
                left = deadline - self._clock()
            got = answer
            answer = None
            if isinstance(got, ConnectionShutdown):
                errors[host] = got
                if not (req.is_read or req.idempotent):
                    raise got
                decision = req.retry_policy.on_request_error(
                    req.policy_statement(), req.consistency, got, retries)
                host = await self._decide(decision, got, req, host, plan)
                retries += 1
                continue
            assert got is not None  # sent, and answered (the loop's send part set it)
            frame: Frame = got
            if frame.opcode == OP_RESULT:
                return self._decoder.page(frame, version, req.ps, req.sent_metadata,
                                         req.row_factory, columnar), host
            if frame.opcode != OP_ERROR:
                raise ConnectionShutdown(f"cqlcodec: unexpected answer {frame.opcode} from {host}")
            msg = error_message(frame, version)
            if isinstance(msg, PreparedQueryNotFound) and req.ps is not None \
                    and reprepares < _REPREPARES and conn is not None:
                reprepares += 1
                try:
                    await self._reprepare(conn, req, left)
                except _UNREACHABLE as exc:
                    # the statement was not run there (UNPREPARED): any statement may go
                    # to the next host, a write too
                    errors[host] = exc
                    host = first_host(plan)
                continue
            decision = self._retry_decision(req, msg, retries)
            if decision is None:
                raise error_of(frame, version, host)
            errors[host] = msg
            nxt = await self._decide(decision, msg, req, host, plan)
            if nxt is None and decision[0] == _IGNORE:
                return Page(), host
            host = nxt
            retries += 1

    def _retry_decision(self, req: Request, msg: Any, retries: int) -> Any:
        policy = req.retry_policy
        stmt = req.policy_statement()
        if isinstance(msg, ReadTimeoutErrorMessage):
            return policy.on_read_timeout(stmt, retry_num=retries, **msg.info)
        may_twice = req.idempotent or req.is_read
        if isinstance(msg, WriteTimeoutErrorMessage):
            # the write may have been applied: sent again only when marked idempotent
            return policy.on_write_timeout(stmt, retry_num=retries, **msg.info) \
                if may_twice else None
        if isinstance(msg, UnavailableErrorMessage):
            return policy.on_unavailable(stmt, retry_num=retries, **msg.info)
        name = type(msg).__name__
        if name in _APPLIED_OR_NOT and not may_twice:
            return None  # the server may have applied it before failing
        if name in _OTHER_ERRORS:
            return policy.on_request_error(stmt, req.consistency, error=msg, retry_num=retries)
        return None

    async def _decide(self, decision: Any, error: Any, req: Request, host: Any,
                      plan: Iterator[Any]) -> Any:
        """The host to try next after a retry decision (None for IGNORE); raises for RETHROW."""
        kind, consistency = decision[0], decision[1]
        if kind == _RETHROW:
            made = error.to_exception() if hasattr(error, "to_exception") else error
            raise made
        if kind == _IGNORE:
            return None
        if consistency is not None:
            req.consistency = consistency
        if kind == _RETRY:
            return host
        return first_host(plan)


async def connect(session: Any, *, max_in_flight: int = 1024,
                  connect_timeout: float | None = None) -> FastSession:
    """cqlcodec's own request path for ``session`` on the running loop: a
    :class:`FastSession` with ``execute``, ``execute_columns``, ``prepare`` and
    ``close`` (also ``async with``). One connection per host is opened when a request
    first goes there (the first host of the session's plan here, to check it works);
    ``max_in_flight`` requests at most are in flight on each, further callers wait."""
    if max_in_flight < 1 or max_in_flight > 32768:
        raise ValueError(f"max_in_flight must be 1 to 32768, not {max_in_flight}")
    loop = asyncio.get_running_loop()
    cluster = session.cluster
    timeout = connect_timeout if connect_timeout is not None else \
        float(getattr(cluster, "connect_timeout", 5.0) or 5.0)
    fast = FastSession(session, loop, max_in_flight, timeout)
    probe = Request(OP_PREPARE, "", None, None, session, EXEC_PROFILE_DEFAULT,
                    fast._profile_entry(EXEC_PROFILE_DEFAULT))
    errors: dict[Any, BaseException] = {}
    for host in query_plan(session, probe):
        try:
            await fast._pool.get(host, session.keyspace, None)
            return fast
        except _UNREACHABLE as exc:
            errors[host] = exc
    await fast.close()
    raise NoHostAvailable("cqlcodec could not connect to any host", errors)


