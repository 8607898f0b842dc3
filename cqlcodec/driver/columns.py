"""Columnar IO on a cassandra-driver or scylla-driver ``Session``: whole queries into
columns and whole columns into tables. Use it through :mod:`cqlcodec.driver`::

    from cqlcodec.driver import execute_columns, insert_columns

    pages = execute_columns(session, "SELECT * FROM ks.t WHERE p = %s", [7], fetch_size=5000)
    frame = pages.to_pandas()                 # or to_polars(), to_arrow(), or iterate batches

    insert_columns(session, session.prepare("INSERT INTO ks.e (k, v) VALUES (?, ?)"),
                   {"k": numpy.arange(n), "v": matrix})   # matrix: (n, 768) float32

Reading: each page's RESULT body is taken from the driver before it makes any row
(a per-request protocol handler whose RESULT message keeps the body) and decoded
by :func:`cqlcodec.decode_columns` in the caller's thread while the next page is
already on its way. Writing: :meth:`cqlcodec.Prepared.bind_columnar` encodes the
columns in bulk, chunk by chunk; rows grouped into batches are encoded as the
batches' statements in one call, and the session sends them with a bounded number
of requests in flight.

Both work with and without :func:`cqlcodec.driver.install` on the session, with
the drivers' Cython extensions or without them, on protocol v4 and v5.
"""

from __future__ import annotations

import re
import struct
import threading
import weakref
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from typing import Any, Final

from cassandra.cluster import _NOT_SET, EXEC_PROFILE_DEFAULT, ResponseFuture, Session
from cassandra.protocol import ResultMessage, _ProtocolHandler
from cassandra.query import (
    UNSET_VALUE,
    BatchType,
    BoundStatement,
    PreparedStatement,
    Statement,
)

from cqlcodec import kinds as K
from cqlcodec.codecs.encryption import ColumnEncryptionPolicy
from cqlcodec.columnar.batch import ColumnBatch, decode_columns, joined_numpy
from cqlcodec.columnar.bind import ColumnarBinder
from cqlcodec.columnar.stream import stream_capsule_of
from cqlcodec.columnar.unify import arrow_table_of, pandas_frame_of
from cqlcodec.driver.batching import MutationSizer, is_batch_too_large
from cqlcodec.driver.sender import EncodedBatch, Outcomes, Sends, run_steps
from cqlcodec.errors import CodecError, DecodeError
from cqlcodec.protocol.batch import NO_KEY, batch_statements, key_slots, plan_batches, ring_slots
from cqlcodec.protocol.metadata import read_rows_metadata
from cqlcodec.protocol.prepared import Bound, Prepared
from cqlcodec.types.names import quote_name
from cqlcodec.values import UNSET

__all__ = ["NULLS", "ColumnPages", "InsertError", "InsertFailure", "InsertResult",
           "ResultConsumedError", "bind_all", "check_nulls", "execute_columns", "insert_columns",
           "insert_steps", "prepared_of"]

_I32: Final = struct.Struct(">i")
_ROWS_KIND: Final = 2

PreparedOf = Callable[[PreparedStatement], Prepared]
PolicyOf = Callable[[Any], "ColumnEncryptionPolicy | None"]


class _Glue:
    """What :mod:`cqlcodec.driver` lends this module (it imports this one, never the
    reverse): the cqlcodec Prepared of a driver statement, and the cqlcodec view of a
    driver column-encryption policy."""

    prepared_of: PreparedOf | None = None
    policy_of: PolicyOf | None = None


def register_driver_glue(prepared_of: PreparedOf, policy_of: PolicyOf) -> None:
    """Called once by :mod:`cqlcodec.driver` when it is imported."""
    _Glue.prepared_of = prepared_of
    _Glue.policy_of = policy_of


def _policy(driver_policy: Any) -> ColumnEncryptionPolicy | None:
    if driver_policy is None:
        return None
    if _Glue.policy_of is None:
        raise CodecError("import cqlcodec.driver to read encrypted columns")
    return _Glue.policy_of(driver_policy)


# --------------------------------------------------------------------------- raw pages

class RawPage:
    """One RESULT Rows body as the server sent it (from its kind), before any decoding."""

    __slots__ = ("body", "protocol_version", "policy", "num_rows", "rows_at", "paging_state",
                 "error")

    def __init__(self, body: bytes, protocol_version: int, policy: Any) -> None:
        self.body = body
        self.protocol_version = protocol_version
        self.policy = policy
        self.num_rows = 0
        self.rows_at = 0
        self.paging_state: bytes | None = None
        self.error: Exception | None = None
        try:
            meta = read_rows_metadata(body, 4, len(body), "RESULT rows metadata")
            self.paging_state = meta.paging_state
            self.rows_at = meta.end
            if meta.end + 4 <= len(body):
                self.num_rows = max(0, _I32.unpack_from(body, meta.end)[0])
        except DecodeError as exc:  # raised in the caller's thread, by decode()
            self.error = exc

    def decode(self, keep_rows: int | None = None) -> ColumnBatch:
        """The page as a :class:`ColumnBatch` (only its first ``keep_rows`` rows if given)."""
        if self.error is not None:
            raise self.error
        body = self.body
        if keep_rows is not None and keep_rows < self.num_rows:
            body = _first_rows(body, self.rows_at, keep_rows)
        return decode_columns(body, self.protocol_version, None,
                              column_encryption_policy=_policy(self.policy))


def _first_rows(body: bytes, rows_at: int, keep: int) -> bytes:
    """The body with only its first ``keep`` rows (cells are walked, not decoded)."""
    meta = read_rows_metadata(body, 4, len(body), "RESULT rows metadata")
    columns = meta.column_count
    p = rows_at + 4
    end = len(body)
    for _ in range(keep * columns):
        if p + 4 > end:
            break  # a truncated body: decode_columns reports it
        n = _I32.unpack_from(body, p)[0]
        p += 4 + max(n, 0)
    return body[:rows_at] + _I32.pack(keep) + body[rows_at + 4: p]


def _page_factory(_names: object, rows: object) -> list[object]:
    """The row factory of a columnar request: the page itself, untouched."""
    return [rows]


def _columnar_message(base: type[ResultMessage]) -> type[ResultMessage]:
    class ColumnarResultMessage(base):  # type: ignore[valid-type,misc]
        """The session's RESULT message, keeping a Rows body as is (a :class:`RawPage`)."""

        def recv_results_rows(self, f: Any, protocol_version: int, user_type_map: Any,
                              result_metadata: Any, column_encryption_policy: Any) -> None:
            start = f.tell()
            f.seek(start - 4)  # recv_body has just read the kind
            page = RawPage(f.read(), protocol_version, column_encryption_policy)
            self.paging_state = page.paging_state
            self.parsed_rows = page

    ColumnarResultMessage.__qualname__ = ColumnarResultMessage.__name__
    return ColumnarResultMessage


_handlers: weakref.WeakKeyDictionary[type, type] = weakref.WeakKeyDictionary()
_handlers_lock: Final = threading.Lock()


def columnar_handler(base: type[_ProtocolHandler]) -> type[_ProtocolHandler]:
    """``base`` (a session's protocol handler) with RESULT Rows bodies kept raw (cached)."""
    found = _handlers.get(base)
    if found is None:
        opcodes = dict(base.message_types_by_opcode)
        rm = opcodes[ResultMessage.opcode]
        if not (isinstance(rm, type) and issubclass(rm, ResultMessage)):
            raise TypeError(f"the session's protocol handler {base.__name__} decodes RESULT "
                            f"with {rm!r}, not a cassandra.protocol.ResultMessage subclass")
        opcodes[ResultMessage.opcode] = _columnar_message(rm)
        found = type("CqlcodecColumnarHandler", (base,), {
            "message_types_by_opcode": opcodes,
            "__doc__": "A session's protocol handler whose RESULT Rows bodies stay raw."})
        with _handlers_lock:
            _handlers[base] = found
    return found


# --------------------------------------------------------------------------- reading

class ResultConsumedError(CodecError):
    """A :class:`ColumnPages` was asked for its pages after they were all given out:
    the pages of a query are read once. ``consumed_by`` names what read them
    (``"to_arrow()"``, ``"iteration"``...)."""

    def __init__(self, consumed_by: str) -> None:
        super().__init__(f"the pages of this query were already consumed by {consumed_by}: "
                         "a ColumnPages is read once (keep the table it gave, or run the "
                         "query again)")
        self.consumed_by = consumed_by


class ColumnPages:
    """The pages of one query as :class:`~cqlcodec.ColumnBatch` es (see :func:`execute_columns`).

    Iterating gives one batch per page, fetched and decoded as you go (single pass: a
    batch is not kept here once given out). ``__arrow_c_stream__`` exports the
    remaining pages as one Arrow stream (``pyarrow.table(pages)``,
    ``polars.DataFrame(pages)``, DuckDB); :meth:`to_arrow`, :meth:`to_pandas`,
    :meth:`to_polars` and :meth:`to_numpy` collect them into one table. Once one of
    these (or iterating to the end) has taken every page, asking again raises
    :class:`ResultConsumedError` naming what consumed them.
    """

    def __init__(self, future: ResponseFuture | None, fetch_size: int | None,
                 limit: int | None, fetched: list[ColumnBatch] | None = None) -> None:
        self._future = future
        self._fetch_size = fetch_size
        self._limit = limit
        self._delivered = 0
        self._pending = future is not None
        self._pages = 0
        self._fetched = fetched
        self._consumed_by = ""
        self._first: RawPage | None = None if future is None else self._wait()

    @staticmethod
    def of_batches(batches: list[ColumnBatch]) -> ColumnPages:
        """The pages of a query already fetched and decoded (what ``cqlcodec.aio``
        returns): iterating gives them out once, in order, without any request."""
        return ColumnPages(None, None, None, list(reversed(batches)))

    def _wait(self) -> RawPage:
        assert self._future is not None
        page = wait_page(self._future)
        self._pending = False
        return page

    @property
    def pages_fetched(self) -> int:
        """How many pages have been given out so far."""
        return self._pages

    @property
    def rows_fetched(self) -> int:
        """How many rows have been given out so far."""
        return self._delivered

    def __iter__(self) -> Iterator[ColumnBatch]:
        return self

    def _consume(self, by: str) -> None:
        """Marks the pages as taken by ``by`` (a collecting call), or raises
        :class:`ResultConsumedError` when something took them before."""
        if self._consumed_by:
            raise ResultConsumedError(self._consumed_by)
        self._consumed_by = by

    def _end(self) -> ColumnBatch:
        if not self._consumed_by:
            self._consumed_by = "iteration"
        raise StopIteration

    def __next__(self) -> ColumnBatch:
        if self._fetched is not None:
            if not self._fetched:
                return self._end()
            batch = self._fetched.pop()
        else:
            page = self._first
            self._first = None
            if page is None:
                if not self._pending:
                    return self._end()
                page = self._wait()
            assert self._future is not None
            keep, self._pending = follow_page(self._future, page, self._limit, self._delivered)
            batch = page.decode(keep)
        self._delivered += batch.num_rows
        self._pages += 1
        return batch

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        """Arrow PyCapsule interface: the remaining pages as one stream of record batches
        (pulled page by page as the consumer reads)."""
        self._consume("__arrow_c_stream__() (pyarrow.table, polars.DataFrame, DuckDB)")
        first = next(self, None)
        if first is None:  # iterated up to the end, not past it
            raise ResultConsumedError("iteration")
        while len(first) == 0:  # the schema comes from a page with rows, if there is one
            following = next(self, None)
            if following is None:
                break
            first = following
        return stream_capsule_of(self, first)

    def to_arrow(self) -> Any:
        """The remaining pages as one ``pyarrow.Table`` (one record batch per page; a varint
        or decimal column typed differently by different pages gets one exact type, see
        :func:`cqlcodec.columnar.unify.arrow_table_of`)."""
        self._consume("to_arrow()")
        return arrow_table_of(self)

    def to_pandas(self) -> Any:
        """The remaining pages as one pandas DataFrame with ``pandas.ArrowDtype``
        columns (duration columns of :class:`cqlcodec.Duration` objects; see
        :meth:`cqlcodec.ColumnBatch.to_pandas`); needs pyarrow."""
        self._consume("to_pandas()")
        return pandas_frame_of(arrow_table_of(self))

    def to_numpy(self, columns: Sequence[str | int] | None = None) -> dict[str, Any]:
        """The remaining pages as ``{name: array}``, one numpy array per column over all
        pages, in the forms of :meth:`cqlcodec.Column.to_numpy` (a repeated name keeps
        the last column). ``columns`` picks columns by name or position (default: all).
        Each array is allocated once and every page written into it: a fixed-width numeric
        vector column goes from the pages' bytes straight into one ``(rows, n)`` matrix,
        without a matrix per page and a concatenation. Needs numpy."""
        self._consume("to_numpy()")
        batches = list(self)
        if not batches:  # iterated up to the end, not past it
            raise ResultConsumedError("iteration")
        picked = range(len(batches[0].names)) if columns is None else columns
        out: dict[str, Any] = {}
        for key in picked:
            per_page = [batch[key] for batch in batches]
            out[per_page[0].name] = joined_numpy(per_page)
        return out

    def to_polars(self) -> Any:
        """The remaining pages as one polars DataFrame (pages concatenated without
        copying; see :meth:`cqlcodec.ColumnBatch.to_polars` for durations)."""
        import polars

        self._consume("to_polars()")
        frames: list[Any] = []
        empty: Any = None
        for batch in self:  # an empty page may type a column differently: leave it out
            if len(batch):
                frames.append(batch.to_polars())
            elif empty is None:
                empty = batch.to_polars()
        if not frames:
            return empty
        if len(frames) == 1:
            return frames[0]
        return polars.concat(frames, how="vertical_relaxed", rechunk=False)


def next_page_rows(page: RawPage, limit: int | None,
                   delivered: int) -> tuple[int | None, bool, int | None]:
    """Before ``page`` is decoded: the rows of it to keep (``None``: all) under ``limit``
    with ``delivered`` rows given out before it, whether a next page is wanted (there is
    one and the limit wants more), and the most rows that next page should bring
    (``None``: no cap). Shared by every way of walking pages (driver futures and
    cqlcodec's request path)."""
    keep: int | None = None
    if limit is not None:
        keep = limit - delivered
    more = page.paging_state is not None and (keep is None or keep > page.num_rows)
    cap = keep - page.num_rows if more and keep is not None else None
    return keep, more, cap


def capped(fetch_size: int | None, cap: int | None) -> int | None:
    """The page size ``fetch_size`` (0 or None: none) at most ``cap`` rows if given."""
    if cap is None:
        return fetch_size
    return cap if not fetch_size else min(fetch_size, cap)


def follow_page(future: ResponseFuture, page: RawPage, limit: int | None,
                delivered: int) -> tuple[int | None, bool]:
    """Before ``page`` is decoded: the rows of it to keep (``None``: all) under ``limit``
    with ``delivered`` rows given out before it, and whether a next page was requested
    (it is when there is one and the limit wants more; it travels while this one is
    decoded, at most the rows the limit still wants)."""
    keep, more, cap = next_page_rows(page, limit, delivered)
    if more:
        message = future.message
        message.fetch_size = capped(message.fetch_size, cap)
        future.start_fetching_next_page()
    return keep, more


def check_page_options(fetch_size: int | None, limit: int | None) -> None:
    """``ValueError`` for a ``fetch_size`` or ``limit`` below 1."""
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be at least 1, got {limit}")
    if fetch_size is not None and fetch_size < 1:
        raise ValueError(f"fetch_size must be at least 1, got {fetch_size}")


def execute_columns(session: Session, statement: str | Statement | PreparedStatement,
                    parameters: Sequence[Any] | Mapping[str, Any] | None = None, *,
                    fetch_size: int | None = None, limit: int | None = None,
                    execution_profile: object = EXEC_PROFILE_DEFAULT) -> ColumnPages:
    """Run a query and return its pages as columns (a :class:`ColumnPages`).

    ``statement`` is a query string (``%s`` parameters), a ``SimpleStatement``, a
    ``PreparedStatement`` (bound with ``parameters``) or a ``BoundStatement``.
    ``fetch_size`` is the page size in rows (default: the statement's, else the
    session's); ``limit`` stops after that many rows (no later page is requested).
    The first page is awaited here, so a failing query raises now; the others are
    requested one ahead of the one being decoded.
    """
    check_page_options(fetch_size, limit)
    future = send_columnar(session, statement, parameters, fetch_size=fetch_size,
                           max_page_rows=limit, execution_profile=execution_profile)
    return ColumnPages(future, fetch_size, limit)


def send_columnar(session: Session, statement: str | Statement | PreparedStatement,
                  parameters: Sequence[Any] | Mapping[str, Any] | None = None, *,
                  fetch_size: int | None = None, max_page_rows: int | None = None,
                  paging_state: bytes | None = None, host: Any = None, timeout: Any = _NOT_SET,
                  execution_profile: object = EXEC_PROFILE_DEFAULT) -> ResponseFuture:
    """Send a query whose RESULT Rows bodies stay raw and return its ``ResponseFuture``:
    ``future.result().current_rows`` is ``[RawPage]`` (see :func:`wait_page`), and
    ``future.start_fetching_next_page()`` requests the next one. ``fetch_size`` is the
    page size (default: the statement's, else the session's), at most ``max_page_rows``
    if given. ``paging_state`` starts
    at a page of an earlier request; ``host`` (a driver ``Host``) sends it to that node
    only (the drivers' host targeting). The building block of :func:`execute_columns`
    and of the table scans."""
    future = session._create_response_future(
        statement, parameters, False, {}, timeout, execution_profile, paging_state, host)
    future._protocol_handler = columnar_handler(session.client_protocol_handler)
    future.row_factory = _page_factory
    message = future.message
    if getattr(message, "skip_meta", False):
        message.skip_meta = False  # every page describes its columns
    if fetch_size is not None:
        message.fetch_size = fetch_size
    message.fetch_size = capped(message.fetch_size, max_page_rows)
    session._on_request(future)
    future.send_request()
    return future


def wait_page(future: ResponseFuture) -> RawPage:
    """The page a :func:`send_columnar` future (or its next page) brings, once it is
    there; the request's error is raised here."""
    return page_of_rows(future.result().current_rows)


def page_of_rows(rows: Any) -> RawPage:
    """The :class:`RawPage` in the rows the driver made of a :func:`send_columnar`
    response; :class:`CodecError` when the statement returned no rows result."""
    page = rows[0] if rows is not None and len(rows) == 1 else None
    if not isinstance(page, RawPage):
        raise CodecError("the statement returned no rows result (execute_columns is for "
                         "queries that return rows)")
    return page


# --------------------------------------------------------------------------- writing

class InsertFailure:
    """One row that was not written: its index in the columns and the error."""

    __slots__ = ("row", "error")

    def __init__(self, row: int, error: BaseException) -> None:
        self.row = row
        self.error = error

    def __repr__(self) -> str:
        return f"InsertFailure(row={self.row}, error={self.error!r})"


class InsertResult:
    """What :func:`insert_columns` did: ``rows`` given, ``requests`` sent (statements or
    batches), the ``failures`` (one :class:`InsertFailure` per row not written) and
    ``empty``, the counter rows not sent because every increment was null (they count as
    written: there was nothing to add)."""

    def __init__(self, rows: int) -> None:
        self.rows = rows
        self.requests = 0
        self.failures: list[InsertFailure] = []
        self.empty = 0

    @property
    def written(self) -> int:
        """Rows the server acknowledged."""
        return self.rows - len(self.failures)

    def __repr__(self) -> str:
        empty = f", empty={self.empty}" if self.empty else ""
        return (f"InsertResult(rows={self.rows}, requests={self.requests}, "
                f"failures={len(self.failures)}{empty})")


class InsertError(CodecError):
    """Some rows of :func:`insert_columns` failed; ``result`` holds every failure (the other
    rows were written)."""

    def __init__(self, result: InsertResult) -> None:
        first = result.failures[:3]
        shown = "; ".join(f"row {f.row}: {type(f.error).__name__}: {f.error}" for f in first)
        more = f" (and {len(result.failures) - len(first)} more)" if len(result.failures) > 3 else ""
        super().__init__(f"{len(result.failures)} of {result.rows} rows were not written: "
                         f"{shown}{more}")
        self.result = result


def prepared_of(ps: PreparedStatement) -> Prepared:
    """The cqlcodec :class:`~cqlcodec.Prepared` of a driver statement (bind and result
    columns with their full types)."""
    if _Glue.prepared_of is None:
        raise CodecError("import cqlcodec.driver to insert columns")
    return _Glue.prepared_of(ps)


def _driver_statement(ps: PreparedStatement, bound: Bound) -> BoundStatement:
    values: list[Any] = list(bound.values)
    if UNSET in values:
        values = [UNSET_VALUE if v is UNSET else v for v in values]
    stmt = BoundStatement(ps, routing_key=bound.routing_key)
    stmt.values = values
    return stmt


Member = tuple[int, Bound]
Grouping = Callable[[list[Bound]], list[int]]


def _requests(ps: PreparedStatement, bound: list[Bound], rows: list[int],
              group: Grouping | None, sizer: MutationSizer | None, batch_bytes: int,
              batch_type: Any, failures: list[InsertFailure]) -> tuple[list[Statement],
                                                                       list[list[Member]]]:
    """The statements (or batches of the rows ``group`` puts together, each at most
    ``batch_bytes`` in the server's measure of ``sizer``) for the rows ``rows`` (one
    index per bound row), and the rows each one writes. A row without a routing key (a
    null partition-key value) is a failure, never sent."""
    statements: list[Statement] = []
    members_of: list[list[Member]] = []
    if group is None or sizer is None:
        for i, b in enumerate(bound):
            try:
                stmt = _driver_statement(ps, b)
            except CodecError as exc:
                failures.append(InsertFailure(rows[i], exc))
                continue
            statements.append(stmt)
            members_of.append([(rows[i], b)])
        return statements, members_of
    slots = group(bound)
    for i, slot in enumerate(slots):
        if slot == NO_KEY:
            failures.append(InsertFailure(rows[i], _no_key_error(bound[i])))
    for batch_rows in plan_batches(slots, sizer.row_sizes(bound), batch_bytes):
        members = [(rows[i], bound[i]) for i in batch_rows]
        statements.append(_batch(ps, members, batch_type))
        members_of.append(members)
    return statements, members_of


def _no_key_error(b: Bound) -> BaseException:
    try:
        b.routing_key  # noqa: B018 - raises the error that names the null column
    except CodecError as exc:
        return exc
    return CodecError("the statement has no partition key to route the row by")


def _batch(ps: PreparedStatement, members: list[Member], batch_type: Any) -> Statement:
    if len(members) == 1:
        return _driver_statement(ps, members[0][1])
    bounds = [b for _, b in members]
    return EncodedBatch(batch_statements(ps.query_id, bounds),
                        batch_type=batch_type, consistency_level=ps.consistency_level,
                        routing_key=bounds[0].routing_key, keyspace=ps.keyspace)


def _send_steps(ps: PreparedStatement, statements: list[Statement],
                members_of: list[list[Member]], batch_type: Any, concurrency: int,
                execution_profile: object, result: InsertResult) -> Generator[Sends, Outcomes, int]:
    """Sends the statements; a batch the server refuses as too large is split in two and
    sent again until it fits (one row alone always does). Returns how many batches
    were refused."""
    refused = 0
    while statements:
        outcomes = yield Sends(statements, concurrency, execution_profile)
        result.requests += len(statements)
        again: list[Statement] = []
        again_of: list[list[Member]] = []
        for (ok, outcome), members in zip(outcomes, members_of):
            if ok:
                continue
            if len(members) > 1 and is_batch_too_large(outcome):
                refused += 1
                half = len(members) // 2
                for part in (members[:half], members[half:]):
                    again.append(_batch(ps, part, batch_type))
                    again_of.append(part)
            else:
                result.failures.extend([InsertFailure(r, _error_of(outcome)) for r, _ in members])
        statements, members_of = again, again_of
    return refused


def _error_of(outcome: object) -> BaseException:
    if isinstance(outcome, BaseException):
        return outcome
    return CodecError(f"the request failed: {outcome!r}")


def _replicas_of(session: Session, keyspace: str | None) -> Grouping:
    """Groups rows by the replica set of their partition: each row's token looked up in
    the ring (in compiled code), each ring range's replicas asked of the driver's token
    map once (not once per row)."""
    metadata = session.cluster.metadata
    token_map = metadata.token_map
    ring = list(getattr(token_map, "ring", None) or ())
    ids: dict[tuple[str, ...], int] = {}

    def replica_set(hosts: Any) -> int:
        return ids.setdefault(tuple(sorted(str(h.endpoint) for h in hosts)), len(ids))

    if not ring:  # no token map: ask the driver row by row
        def by_host_lookup(bounds: list[Bound]) -> list[int]:
            keys = [None if slot == NO_KEY else b.routing_key
                    for b, slot in zip(bounds, key_slots(bounds))]
            return [NO_KEY if key is None else replica_set(metadata.get_replicas(keyspace, key))
                    for key in keys]
        return by_host_lookup
    values = [int(t.value) for t in ring]
    hash_fn = token_map.token_class.hash_fn
    owners = [replica_set(token_map.get_replicas(keyspace, t)) for t in ring]

    def by_ring(bounds: list[Bound]) -> list[int]:
        return ring_slots(bounds, hash_fn, values, owners)
    return by_ring


NULLS: Final = ("unset", "delete")


def check_nulls(nulls: str) -> None:
    """Raises ValueError unless ``nulls`` is one of :data:`NULLS`."""
    if nulls not in NULLS:
        raise ValueError(f"nulls must be 'unset' or 'delete', got {nulls!r}")


def bind_all(prepared_statement: PreparedStatement, columns: object, *,
             nulls: str = "unset") -> int:
    """Bind every row of ``columns`` as :func:`insert_columns` would and send nothing
    (a dry run); returns the rows bound. A value that cannot be encoded raises
    :class:`cqlcodec.BindError` naming the column and the row."""
    check_nulls(nulls)
    prepared = prepared_of(prepared_statement)
    binder = ColumnarBinder(prepared, columns, _binds_unset(prepared, nulls))
    step = 4096
    for start in range(0, binder.num_rows, step):
        binder.bind_rows(start, min(binder.num_rows, start + step))
    return binder.num_rows


def _binds_unset(prepared: Prepared, nulls: str) -> bool:
    """Whether nulls are bound as UNSET: by choice or for a counter (a null increment is
    no increment), on protocol v4 and later (v3 writes fewer columns instead)."""
    counter = any(c.type.unwrapped().kind == K.COUNTER for c in prepared.bind_columns)
    return (nulls == "unset" or counter) and prepared.protocol_version >= 4


def insert_columns(session: Session, prepared_statement: PreparedStatement, columns: object, *,
                   concurrency: int = 64, batch_by_partition: bool = False,
                   batch_by_replica: bool = False,
                   batch_bytes: int = 5 * 1024, chunk_rows: int = 4096,
                   raise_on_error: bool = True,
                   execution_profile: object = EXEC_PROFILE_DEFAULT,
                   nulls: str = "unset",
                   statement_for: StatementFor | None = None) -> InsertResult:
    """Write every row of ``columns`` with ``prepared_statement`` (an INSERT or UPDATE
    prepared on ``session``) and return an :class:`InsertResult`.

    ``columns`` is what :meth:`cqlcodec.Prepared.bind_columnar` takes (a mapping of bind
    column name to numpy array, 2-D array for vectors, pyarrow/polars/pandas column or
    sequence, or a table). Rows are bound ``chunk_rows`` at a time and sent through the
    session, at most ``concurrency`` requests in flight (a batch's statements encoded by
    cqlcodec in one call: see :mod:`cqlcodec.driver.sender`).
    ``batch_by_partition=True`` sends the rows of one partition (same routing key) of a
    chunk together as UNLOGGED batches (COUNTER batches for counter updates);
    ``batch_by_replica=True`` puts rows of different partitions owned by the same
    replicas (the driver's token map) into one UNLOGGED batch, which cuts the requests,
    and so the client's CPU, by the rows per batch. A batch holds at most
    ``batch_bytes`` in the server's own measure of a batch (the data size of its
    mutations, cell and row overheads included: see :mod:`cqlcodec.driver.batching`),
    one row alone when it is larger. Cassandra warns above ``batch_size_warn_threshold``
    (5 KiB by default; the driver logs the warnings) and refuses batches above
    ``batch_size_fail_threshold`` (50 KiB) with "Batch too large": such a batch is
    split in two and sent again (and later chunks aim lower), so no row fails for its
    batch's size.

    ``nulls``: ``"unset"`` (the default) leaves a null cell unwritten: no tombstone is
    written and what the table holds there stays (as dsbulk's ``nullToUnset``);
    ``"delete"`` writes it as null, which deletes the cell (a tombstone). A null of a
    partition-key column is always an error, and a null counter increment is always no
    increment: a counter row whose increments are all null is not sent and is counted in
    ``InsertResult.empty``. Protocol v3 has no unset: there a row with nulls is written
    by a statement of its non-null columns only, which ``statement_for`` (column names
    -> a prepared statement) makes; without it ``prepared_statement`` must be a plain
    ``INSERT INTO t (columns) VALUES (?, ...)``, else such a row fails with a
    :class:`~cqlcodec.CodecError` that says to pass ``nulls="delete"``.

    Each row is sent once, and nothing is looked up: a statement that writes a
    non-frozen list ``USING TIMESTAMP ?`` leaves the list's elements twice when the same
    row is written again at the same time (the server keys list elements by write, not
    by content). :func:`~cqlcodec.driver.load_table` with ``writetime(c)`` columns looks
    such lists up before writing them again.

    Every row that fails (a server error, a timeout, a null partition key) is reported
    as an :class:`InsertFailure`; nothing is dropped silently: with ``raise_on_error``
    (the default) :class:`InsertError` is raised after all rows were tried. A
    :class:`cqlcodec.BindError` (a value that cannot be encoded, naming column and row)
    is raised before the chunk holding that row is sent: the chunks before it
    (rows below ``err.row - err.row % chunk_rows``) have been written.
    """
    return run_steps(session, insert_steps(
        session, prepared_statement, columns, concurrency=concurrency,
        batch_by_partition=batch_by_partition, batch_by_replica=batch_by_replica,
        batch_bytes=batch_bytes, chunk_rows=chunk_rows, raise_on_error=raise_on_error,
        execution_profile=execution_profile, nulls=nulls, statement_for=statement_for))


def insert_steps(session: Session, prepared_statement: PreparedStatement, columns: object, *,
                 concurrency: int = 64, batch_by_partition: bool = False,
                 batch_by_replica: bool = False, batch_bytes: int = 5 * 1024,
                 chunk_rows: int = 4096, raise_on_error: bool = True,
                 execution_profile: object = EXEC_PROFILE_DEFAULT, nulls: str = "unset",
                 statement_for: StatementFor | None = None
                 ) -> Generator[Sends, Outcomes, InsertResult]:
    """:func:`insert_columns` as a generator of the :class:`~cqlcodec.driver.sender.Sends`
    it needs: whoever drives it sends them and gives back their outcomes (binding and
    batching happen inside, between the sends); it returns the :class:`InsertResult`."""
    if concurrency < 1 or chunk_rows < 1:
        raise ValueError("concurrency and chunk_rows must be at least 1")
    if batch_by_partition and batch_by_replica:
        raise ValueError("batch_by_partition and batch_by_replica exclude each other")
    check_nulls(nulls)
    group: Grouping | None = (key_slots if batch_by_partition else
                              _replicas_of(session, prepared_statement.keyspace)
                              if batch_by_replica else None)
    prepared = prepared_of(prepared_statement)
    unset = _binds_unset(prepared, nulls)
    binder = ColumnarBinder(prepared, columns, unset)
    result = InsertResult(binder.num_rows)
    counters = [i for i, c in enumerate(prepared.bind_columns)
                if c.type.unwrapped().kind == K.COUNTER]
    batch_type = BatchType.COUNTER if counters else BatchType.UNLOGGED
    fewer = _FewerColumns(session, prepared_statement, statement_for) \
        if prepared.protocol_version < 4 and (nulls == "unset" or counters) else None
    sizers: dict[int, MutationSizer] = {}
    budget = batch_bytes
    for start in range(0, binder.num_rows, chunk_rows):
        stop = min(binder.num_rows, start + chunk_rows)
        bound = binder.bind_rows(start, stop)
        rows = list(range(start, stop))
        if counters:
            bound, rows = _without_empty_increments(bound, rows, counters, result)
        for ps, part, part_rows in (fewer.split(bound, rows, result.failures)
                                    if fewer is not None else [(prepared_statement, bound, rows)]):
            sizer = None
            if group is not None:
                sizer = sizers.get(id(ps))
                if sizer is None:
                    sizer = sizers[id(ps)] = MutationSizer(session, ps)
            statements, members_of = _requests(ps, part, part_rows, group, sizer, budget,
                                               batch_type, result.failures)
            del part
            refused = yield from _send_steps(ps, statements, members_of, batch_type,
                                             concurrency, execution_profile, result)
            if refused:  # the estimate fell short of the server's measure: aim lower from now on
                budget = max(1, budget * 3 // 4)
        del bound
    result.failures.sort(key=lambda f: f.row)
    if result.failures and raise_on_error:
        raise InsertError(result)
    return result


def _without_empty_increments(bound: list[Bound], rows: list[int], counters: list[int],
                              result: InsertResult) -> tuple[list[Bound], list[int]]:
    """The counter rows that increment something; the others are counted in ``empty``."""
    kept: list[Bound] = []
    kept_rows: list[int] = []
    for b, row in zip(bound, rows):
        values = b.values
        if all(values[i] is None or values[i] is UNSET for i in counters):
            result.empty += 1
        else:
            kept.append(b)
            kept_rows.append(row)
    return kept, kept_rows


StatementFor = Callable[[Sequence[str]], PreparedStatement]

_PLAIN_INSERT: Final = re.compile(
    r"\s*INSERT\s+INTO\s+(?P<table>(?:\"(?:[^\"]|\"\")*\"|[\w$]+)(?:\s*\.\s*"
    r"(?:\"(?:[^\"]|\"\")*\"|[\w$]+))?)\s*\((?P<names>[^()]*)\)\s*VALUES\s*"
    r"\((?P<markers>[\s?,]*)\)(?P<rest>[^;]*);?\s*$", re.IGNORECASE | re.DOTALL)


class _FewerColumns:
    """Protocol v3 (no unset): the rows of a chunk grouped by which of their cells are
    null, each group written by a statement of its non-null columns only."""

    def __init__(self, session: Session, ps: PreparedStatement,
                 statement_for: StatementFor | None) -> None:
        self.session = session
        self.ps = ps
        self.prepared = prepared_of(ps)
        self.names = [c.name for c in self.prepared.bind_columns]
        self.statement_for = statement_for
        self.statements: dict[tuple[str, ...], PreparedStatement] = {}

    def split(self, bound: list[Bound], rows: list[int], failures: list[InsertFailure]
              ) -> list[tuple[PreparedStatement, list[Bound], list[int]]]:
        """(statement, rows bound to it, their row indices) per group of null cells."""
        is_pk = self.prepared.is_pk
        groups: dict[tuple[int, ...], tuple[list[Bound], list[int]]] = {}
        for b, row in zip(bound, rows):
            kept = tuple(i for i, v in enumerate(b.values)
                         if is_pk[i] or (v is not None and v is not UNSET))
            group = groups.setdefault(kept, ([], []))
            group[0].append(b)
            group[1].append(row)
        out: list[tuple[PreparedStatement, list[Bound], list[int]]] = []
        for kept, (members, member_rows) in groups.items():
            if len(kept) == len(self.names):
                out.append((self.ps, members, member_rows))
                continue
            try:
                ps = self._statement(tuple(self.names[i] for i in kept))
            except CodecError as exc:
                failures.extend(InsertFailure(r, exc) for r in member_rows)
                continue
            fewer = prepared_of(ps)
            out.append((ps, [Bound(fewer, [b.values[i] for i in kept]) for b in members],
                        member_rows))
        return out

    def _statement(self, names: tuple[str, ...]) -> PreparedStatement:
        found = self.statements.get(names)
        if found is not None:
            return found
        if self.statement_for is not None:
            found = self.statement_for(names)
        else:
            match = _PLAIN_INSERT.match(self.ps.query_string)
            markers = match.group("markers").replace(" ", "").split(",") if match else []
            if match is None or markers != ["?"] * len(self.names):
                raise CodecError(
                    "protocol v3 has no unset value, and a row with null cells can only be "
                    "written without them by a plain INSERT INTO t (columns) VALUES (?, ...); "
                    "pass nulls=\"delete\" to write the nulls (as deletions)")
            text = (f"INSERT INTO {match.group('table')} ({', '.join(map(quote_name, names))}) "
                    f"VALUES ({', '.join('?' * len(names))}){match.group('rest')}")
            found = self.session.prepare(text)
            found.consistency_level = self.ps.consistency_level
        self.statements[names] = found
        return found

