"""Answers of the request path as the session's caller gets them: rows made by the
session's row factory, or a page of columns, with the server's warnings and tracing id.

A prepared statement's rows are decoded by cqlcodec's compiled row decoder into the
values the session returns (the driver's value classes, or cqlcodec's plain values with
``install(plain_values=True)``); anything else (a simple statement's rows, rows whose
columns changed since the statement was prepared, a column type the driver reads its own
way, and every other RESULT kind) is read by the session's own protocol handler, so it
is exactly what ``session.execute`` returns.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any, Final

from cassandra import DriverException
from cassandra.protocol import ResultMessage, _ProtocolHandler
from cassandra.query import named_tuple_factory

from cqlcodec.driver.row_classes import row_class, rows_of_class
from cqlcodec.errors import CodecError, DecodeError
from cqlcodec.protocol.metadata import (
    HAS_MORE_PAGES,
    METADATA_CHANGED,
    NO_METADATA,
    read_rows_metadata,
)
from cqlcodec.protocol.results import read_row_list
from cqlcodec.requests.connection import Frame
from cqlcodec.requests.frames import FLAG_CUSTOM_PAYLOAD, FLAG_TRACING, FLAG_WARNING, OP_RESULT
from cqlcodec.requests.statements import set_result_metadata
from cqlcodec.runtime import collector
from cqlcodec.runtime.buffers import read_i32_be
from cqlcodec.runtime.wire import read_short, read_string

ROWS: Final = 2
VOID: Final = 1
_PREFIX_FLAGS: Final = FLAG_WARNING | FLAG_TRACING | FLAG_CUSTOM_PAYLOAD
_RECV_BODY: Final[object] = getattr(ResultMessage.recv_body, "__func__", None)
_DECODE_MESSAGE: Final[object] = getattr(_ProtocolHandler.decode_message, "__func__", None)
_SEEN_MAX: Final = 1024
_PAUSE_FROM: Final = 64  # rows: larger pages are decoded with the cyclic collector held off
_log: Final = logging.getLogger("cassandra.protocol")  # where the driver logs server warnings


class Page:
    """One answer: its rows (as the row factory made them; None for a result without
    rows), the paging state of the next page, the server's warnings, the tracing id and
    the driver's message for a RESULT that is not rows."""

    def __init__(self) -> None:
        self.rows: Any = None
        self.column_names: list[str] | None = None
        self.paging_state: bytes | None = None
        self.warnings: list[str] | None = None
        self.trace_id: uuid.UUID | None = None
        self.custom_payload: dict[str, bytes] | None = None
        self._message: Any = None
        self.void_class: Any = None  # a VOID answer: the class its message is made of when asked for
        self.stream = 0
        self.body: bytes = b""
        self.rows_at = 0

    @property
    def message(self) -> Any:
        """The driver's message of an answer that is not rows (None for rows)."""
        msg = self._message
        void = self.void_class
        if msg is None and void is not None:
            msg = void(VOID)  # what the driver's decoder makes of it, without the decoder
            msg.stream_id = self.stream
            msg.trace_id = None
            msg.custom_payload = None
            msg.warnings = None
            self._message = msg
        return msg

    @message.setter
    def message(self, msg: Any) -> None:
        self._message = msg


def end_rows(body: bytes, rows_at: int) -> int:
    """The ``rows_count`` at ``rows_at`` (0 when cut short)."""
    return read_i32_be(body, rows_at) if len(body) - rows_at >= 4 else 0


def _converted(rows: list[Any], convs: list[Any], indexes: list[int],
               metadata: Any) -> list[Any]:
    """``rows`` with the values of columns ``indexes`` made the driver's by ``convs``."""
    out: list[Any] = []
    for row in rows:
        cells = list(row)
        for i in indexes:
            v = cells[i]
            if v is not None:
                try:
                    cells[i] = convs[i](v)
                except Exception as exc:  # e.g. a registered UDT class refusing the values
                    dt = metadata[i][3]
                    err = DriverException(
                        f'Failed decoding result column "{metadata[i][2]}" of type '
                        f"{dt.cql_parameterized_type()}: {exc}")
                    err.__cause__ = exc
                    raise err
        out.append(tuple(cells))
    return out


def read_prefix(frame: Frame, page: Page) -> int:
    """Read the tracing id, warnings and custom payload in front of the body into
    ``page``; returns where the message starts."""
    flags = frame.flags
    if not flags & (FLAG_TRACING | FLAG_WARNING | FLAG_CUSTOM_PAYLOAD):
        return 0
    body = frame.body
    end = len(body)
    p = 0
    if flags & FLAG_TRACING:
        if end < 16:
            raise DecodeError("the tracing id is cut short", "RESULT", 0)
        page.trace_id = uuid.UUID(bytes=body[:16])
        p = 16
    if flags & FLAG_WARNING:
        n = read_short(body, p, end, "warnings")
        p += 2
        warnings: list[str] = []
        for _ in range(n):
            text, p = read_string(body, p, end, "warning")
            warnings.append(text)
        page.warnings = warnings
        for w in warnings:
            _log.warning("Server warning: %s", w)
    if flags & FLAG_CUSTOM_PAYLOAD:
        n = read_short(body, p, end, "custom payload")
        p += 2
        payload: dict[str, bytes] = {}
        for _ in range(n):
            key, p = read_string(body, p, end, "custom payload key")
            if end - p < 4:
                raise DecodeError(f"custom payload value of {key!r} cut short", "RESULT", p)
            size = read_i32_be(body, p)
            p += 4
            if size > end - p:
                raise DecodeError(f"custom payload value of {key!r}: {size} bytes but only "
                                  f"{end - p} remain", "RESULT", p)
            payload[key] = body[p:p + max(size, 0)]
            p += max(size, 0)
        page.custom_payload = payload
    return p


def malformed(frame: Frame, exc: Exception) -> DecodeError:
    """A :class:`~cqlcodec.DecodeError` for an answer the driver's decoder could not read
    (its ``EOFError``, ``struct.error``, ``UnicodeDecodeError``, ...)."""
    return DecodeError(f"a malformed answer (opcode {frame.opcode:#04x}, {len(frame.body)} "
                       f"bytes, stream {frame.stream}): the driver's decoder raised "
                       f"{type(exc).__name__}: {exc}", "RESULT")


class _RowsPlan:
    """How one statement's rows are read: cqlcodec's result plan for its metadata, the
    columns whose values are converted, its column names and (made when first needed)
    the driver's namedtuple class for them."""

    def __init__(self, metadata: Any, policy: Any, version: int, plan: Any) -> None:
        self.metadata = metadata
        self.policy = policy
        self.version = version
        self.plan = plan
        convs = list(plan.converters)
        self.converted = [i for i in range(len(convs)) if convs[i] is not None]
        self.names: tuple[str, ...] = tuple(c[2] for c in metadata)
        self.row_class: type[Any] | None = None


class Decoder:
    """Turns RESULT frames into :class:`Page` s for one session."""

    def __init__(self, session: Any) -> None:
        from cqlcodec.driver import installer
        self.session = session
        self.options: Any = installer.options_for(session)
        self._result_plan: Any = installer.result_plan
        self._plans: dict[bytes, _RowsPlan] = {}
        self._factory_for: Any = installer.row_factory_for
        self._few: Final = installer.PAUSE_FROM
        # per row factory (by identity): (it, what to call, what builds a few rows or None)
        self._factories: dict[int, tuple[Any, Any, Any]] = {}
        # per statement id: (its result metadata, the metadata flags and bytes last seen)
        self._metadata_seen: dict[bytes, tuple[Any, int, bytes]] = {}
        self._void_for: tuple[Any, Any] = (None, None)  # (protocol handler, its VOID class)

    def page(self, frame: Frame, version: int, ps: Any, metadata: Any, row_factory: Any,
             columnar: bool) -> Page:
        """The page of a RESULT frame answering an EXECUTE of ``ps`` (None: a QUERY) that
        sent the id of the result ``metadata`` (rows without metadata are read by it);
        ``columnar``: keep the Rows body for a column decoder instead of making rows."""
        page = Page()
        pos = read_prefix(frame, page)
        body = frame.body
        end = len(body)
        if end - pos == 4 and read_i32_be(body, pos) == VOID and frame.opcode == OP_RESULT \
                and not frame.flags & ~_PREFIX_FLAGS:
            void = self._void_class()
            if void is not None:
                page.void_class = void
                page.stream = frame.stream
                return page
        if end - pos >= 4 and read_i32_be(body, pos) == ROWS:
            if columnar:
                page.body = body[pos:] if pos else body
                return page
            if ps is not None and self._prepared_rows(body, pos, end, version, ps, metadata,
                                                      row_factory, page):
                return page
        self._driver_page(frame, pos, version, ps, metadata, row_factory, page)
        return page

    def _prepared_rows(self, body: bytes, pos: int, end: int, version: int, ps: Any,
                       metadata: Any, row_factory: Any, page: Page) -> bool:
        if not metadata:
            return False
        start = pos + 4
        rows_at = -1
        paging_state: bytes | None = None
        seen = self._metadata_seen.get(ps.query_id)
        if seen is not None and seen[0] is metadata and end - start >= 4 \
                and read_i32_be(body, start) == seen[1] and body.startswith(seen[2], start):
            rows_at = start + len(seen[2])  # the same metadata bytes as before: same columns
        else:
            meta = read_rows_metadata(body, start, end, "RESULT rows metadata")
            if meta.flags & METADATA_CHANGED or meta.column_count != len(metadata):
                return False  # the driver reads it, and the statement learns the new metadata
            columns = meta.columns
            if columns is not None and not (meta.flags & NO_METADATA):
                for i in range(len(columns)):
                    if columns[i].name != metadata[i][2]:
                        return False
            rows_at = meta.end
            paging_state = meta.paging_state
            if not meta.flags & (HAS_MORE_PAGES | METADATA_CHANGED):
                if len(self._metadata_seen) >= _SEEN_MAX:
                    self._metadata_seen.clear()
                self._metadata_seen[ps.query_id] = (metadata, meta.flags, body[start:rows_at])
        found = self._plan_of(ps, metadata, version)
        rows = self._decode_rows(body, rows_at, found)
        if rows is None:
            return False
        names = list(found.names)
        page.column_names = names
        page.paging_state = paging_state
        if row_factory is named_tuple_factory and len(rows) < self._few:
            made = found.row_class
            if made is None:
                made = found.row_class = row_class(names)
            if made is not None:  # what the driver's factory makes, its class found once
                page.rows = rows_of_class(made, rows)
                return True
        page.rows = self._made_rows(row_factory, names, rows)
        return True

    def _plan_of(self, ps: Any, metadata: Any, version: int) -> _RowsPlan:
        """How the rows of ``ps`` are read (kept per statement id while its metadata,
        column encryption policy and protocol version stay)."""
        policy = ps.column_encryption_policy
        found = self._plans.get(ps.query_id)
        if found is None or found.metadata is not metadata or found.policy is not policy \
                or found.version != version:
            if len(self._plans) >= _SEEN_MAX:
                self._plans.clear()
            found = _RowsPlan(metadata, policy, version,
                              self._result_plan(metadata, version, policy, self.options))
            self._plans[ps.query_id] = found
        return found

    def _decode_rows(self, body: bytes, rows_at: int, found: _RowsPlan) -> list[Any] | None:
        """The rows at ``rows_at`` as tuples of the values the session returns; None when
        the driver's own code reads such rows."""
        plan = found.plan
        desc = plan.desc
        if desc is None:
            return None
        for cls in plan.empty_classes:
            if getattr(cls, "support_empty_values", False):
                return None  # the driver reads empty values of such types its own way
        many = end_rows(body, rows_at) > _PAUSE_FROM
        if many:
            collector.pause()  # the page's rows hold no cycles (cqlcodec.runtime.collector)
        try:
            rows: list[Any] = read_row_list(body, rows_at, len(body), desc)
            converted = found.converted
            if converted and rows:
                rows = _converted(rows, plan.converters, converted, found.metadata)
        except CodecError:
            return None  # refused by cqlcodec: the driver reads the message
        finally:
            if many:
                collector.resume()
        return rows

    def _made_rows(self, row_factory: Any, names: list[str], rows: list[Any]) -> Any:
        """``row_factory(names, rows)``; the driver's own factories as driver mode runs
        them (:mod:`cqlcodec.driver.row_classes`: a namedtuple class made once per column
        names, not per page)."""
        made = self._factories.get(id(row_factory))
        if made is None or made[0] is not row_factory:
            if len(self._factories) >= _SEEN_MAX:
                self._factories.clear()
            run = self._factory_for(row_factory)
            made = (row_factory, run, getattr(run, "build", None) if run is not row_factory
                    else None)
            self._factories[id(row_factory)] = made
        build = made[2]
        if build is not None and len(rows) < self._few:
            return build(names, rows)  # a few rows: what the factory runs for them, directly
        return made[1](names, rows)

    def _void_class(self) -> Any:
        """The class the session's protocol handler makes a VOID result of, when its
        decoder is the driver's and that class reads VOID as the driver's does (None:
        the handler decodes it)."""
        handler: Any = self.session.client_protocol_handler
        known = self._void_for
        if known[0] is handler:
            return known[1]
        cls: Any = getattr(handler, "message_types_by_opcode", {}).get(OP_RESULT)
        same = isinstance(cls, type) and issubclass(cls, ResultMessage) \
            and getattr(handler.decode_message, "__func__", None) is _DECODE_MESSAGE \
            and getattr(cls.recv_body, "__func__", None) is _RECV_BODY \
            and cls.recv is ResultMessage.recv and cls.__init__ is ResultMessage.__init__
        self._void_for = (handler, cls if same else None)
        return cls if same else None

    def _driver_page(self, frame: Frame, pos: int, version: int, ps: Any, metadata: Any,
                     row_factory: Any, page: Page) -> None:
        session = self.session
        handler: Any = session.client_protocol_handler
        try:
            msg = handler.decode_message(version, session.cluster._user_types, frame.stream,
                                         frame.flags & ~(FLAG_WARNING | FLAG_TRACING |
                                                         FLAG_CUSTOM_PAYLOAD),
                                         frame.opcode, frame.body[pos:] if pos else frame.body,
                                         None, metadata)
        except (DriverException, CodecError):
            raise  # the driver's own word on the answer (a column it cannot decode, ...)
        except Exception as exc:  # a malformed answer the driver's reader stumbled on
            raise malformed(frame, exc) from exc
        page.message = msg
        if frame.opcode != OP_RESULT:
            return
        if getattr(msg, "kind", None) == ROWS:
            page.column_names = msg.column_names
            page.paging_state = msg.paging_state
            page.rows = row_factory(msg.column_names, msg.parsed_rows)
            new_id = getattr(msg, "result_metadata_id", None)
            if ps is not None and new_id is not None and msg.column_metadata:
                # v5 metadata_changed: the statement describes its rows anew
                set_result_metadata(ps, msg.column_metadata, new_id)

