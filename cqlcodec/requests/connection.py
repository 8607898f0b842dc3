"""One connection of cqlcodec's request path: an asyncio protocol on the caller's loop.

Requests are queued with :meth:`Connection.request`, which returns the future of the
answer's :class:`Frame`; the frames queued during one iteration of the loop go out in
one ``transport.write`` (on protocol v5 in shared segments). Incoming bytes are cut
into frames by :class:`~cqlcodec.connection.FrameReassembler` and handed to the future
waiting on their stream id. A request whose caller gave up (cancelled, timed out) keeps
its stream id until its answer arrives or the connection closes. At most
``max_in_flight`` requests are in flight; :meth:`Connection.wait_slot` waits for room.
One stream id beyond them is kept for the heartbeat (:mod:`cqlcodec.requests.heartbeat`),
so a connection whose requests all wait on a silent peer can still be found dead.

As the driver does, a connection on which three quarters of ``max_in_flight`` requests
timed out without an answer is retired: ``on_retire`` tells its pool to open another
for new requests, and it closes once no answer it still owes has a caller waiting.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from typing import Any, Final

from cassandra import OperationTimedOut
from cassandra.connection import ConnectionShutdown

from cqlcodec.connection.reassembler import FrameReassembler
from cqlcodec.connection.segment_writer import SMALL_PAYLOAD
from cqlcodec.errors import FramingError
from cqlcodec.requests.compression import COMPRESSED, Compression, Transform
from cqlcodec.requests.deadlines import Deadlines
from cqlcodec.requests.frames import envelope, segments
from cqlcodec.requests.loops import future_maker
from cqlcodec.requests.streams import MAX_STREAMS, StreamIds

_VERSIONS: Final = (4, 5)


class Frame:
    """One answer: its header fields and its body (tracing id, warnings, custom payload
    still in front when its flags say so)."""


    def __init__(self, version: int, flags: int, stream: int, opcode: int, body: bytes) -> None:
        self.version = version
        self.flags = flags
        self.stream = stream
        self.opcode = opcode
        self.body = body


class Connection:
    """An asyncio protocol (``loop.create_connection(lambda: conn, ...)``) carrying
    cqlcodec's requests to one host."""

    def __init__(self, loop: asyncio.AbstractEventLoop, version: int, host: object,
                 max_in_flight: int, on_close: Callable[[Connection], None] | None = None) -> None:
        if version not in _VERSIONS:
            raise ValueError(f"cqlcodec's request path speaks protocol v4 and v5, not v{version}")
        self.loop: Final = loop
        self._new_future: Final = future_maker(loop)  # loop.create_future
        self.version: Final = version
        self.host: Final = host
        self.max_in_flight: Final = max_in_flight
        self.on_close = on_close
        self.on_retire: Callable[[Connection], None] | None = None
        self.retiring = False  # retired (see the module docstring): closes once drained
        self._orphan_limit: Final = max(1, 3 * max_in_flight // 4)
        self.streams: Final = StreamIds(min(max(max_in_flight, 1) + 1, MAX_STREAMS))
        self.transport: asyncio.Transport | None = None
        self.reader: Final = FrameReassembler(_VERSIONS)
        self.framed = False  # v5 segments both ways (after READY or AUTHENTICATE)
        # compression (cqlcodec.requests.compression), set by the handshake: v4 answers'
        # bodies inflated, v4 requests' bodies compressed (after READY), v5 segments
        self.inflate: Transform | None = None
        self.deflate: Transform | None = None
        self.segment_compress: Transform | None = None
        self.keyspace: str | None = None
        self.closed = False
        self.error: BaseException | None = None
        self._waiters: Final[list[asyncio.Future[Frame] | None]] = [None] * self.streams.limit
        self.deadlines: Final = Deadlines(loop, self._timed_out, self._waiters)
        self._out: list[bytes] = []
        self._flushing = False
        self._room: deque[asyncio.Future[None]] = deque()
        self.sent = 0  # frames written
        self.reads = 0  # data_received calls (the heartbeat watches it)
        self.writes = 0  # transport.write calls

    # ------------------------------------------------------------------ asyncio protocol

    def connection_made(self, transport: Any) -> None:
        """asyncio: the socket is connected."""
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        """asyncio: bytes arrived; every whole frame goes to its waiter."""
        self.reads += 1
        reader = self.reader
        reader.write(data)
        try:
            while reader.next_frame():
                flags = reader.flags
                body = reader.body
                if flags & COMPRESSED and self.version < 5:
                    body = self._inflated(body)
                    flags ^= COMPRESSED
                self._answer(Frame(reader.version, flags, reader.stream, reader.opcode, body))
        except Exception as exc:  # a malformed stream: nothing after it can be trusted
            self.close(ConnectionShutdown(f"cqlcodec: connection to {self.host} failed: {exc}"))

    def eof_received(self) -> bool:
        """asyncio: the server closed its side; close ours."""
        return False

    def connection_lost(self, exc: BaseException | None) -> None:
        """asyncio: the socket is closed; every request in flight fails."""
        why = f": {exc}" if exc is not None else ""
        self._shutdown(ConnectionShutdown(f"cqlcodec: connection to {self.host} closed{why}"))

    def pause_writing(self) -> None:
        """asyncio: the transport's buffer is full (it keeps the bytes; nothing to do)."""

    def resume_writing(self) -> None:
        """asyncio: the transport's buffer drained."""

    # ------------------------------------------------------------------ requests

    def start_segments(self, compression: Compression | None = None) -> None:
        """Protocol v5: frames travel in segments from now on, both ways (compressed
        with ``compression``'s segment functions when given)."""
        self.framed = True
        if compression is None:
            self.reader.enable_segments(None)
            return
        self.reader.enable_segments(compression.segment_inflate)
        self.segment_compress = compression.segment_compress

    def _inflated(self, body: bytes) -> bytes:
        inflate = self.inflate
        if inflate is None:
            raise FramingError("a compressed frame, but no compression was agreed on", False)
        return inflate(body)

    def has_room(self) -> bool:
        """Whether a request can be sent now without waiting."""
        return not self.closed and self.streams.in_use < self.max_in_flight

    async def wait_slot(self) -> None:
        """Wait until a request can be sent (or the connection closed)."""
        while not self.closed and self.streams.in_use >= self.max_in_flight:
            room: asyncio.Future[None] = self.loop.create_future()
            self._room.append(room)
            try:
                await room
            except asyncio.CancelledError:
                if room.done() and not room.cancelled():
                    self._wake_one()  # the slot it was given goes to the next caller
                raise

    def request(self, opcode: int, body: bytes, flags: int = 0,
                timeout: float | None = None, deadline: float | None = None
                ) -> asyncio.Future[Frame]:
        """Queue a request; the future gets its answer (or the connection's error, or
        the driver's ``OperationTimedOut`` after ``timeout`` seconds: at ``deadline``,
        the loop's time, when the caller has it already). Raises
        ``ConnectionShutdown`` on a closed connection; the caller makes sure there is
        room (:meth:`has_room`, :meth:`wait_slot`)."""
        if self.closed:
            raise self._closed_error()
        sid = self.streams.acquire()
        if sid < 0:
            raise ConnectionShutdown(f"cqlcodec: no free stream id on the connection to {self.host}")
        fut: asyncio.Future[Frame] = self._new_future()
        self._waiters[sid] = fut
        if timeout is not None:
            self.deadlines.add(timeout, sid, fut, self.streams.in_use,
                               -1.0 if deadline is None else deadline)
        deflate = self.deflate
        if deflate is not None and len(body) >= SMALL_PAYLOAD:
            body = deflate(body)  # a smaller body goes as it is, its frame without the flag
            flags |= COMPRESSED
        self._out.append(envelope(self.version, flags, sid, opcode, body))
        if not self._flushing:
            self._flushing = True
            self.loop.call_soon(self._flush)
        return fut

    def _flush(self) -> None:
        self._flushing = False
        out = self._out
        if not out or self.transport is None:
            return
        self._out = []
        self.sent += len(out)
        self.writes += 1
        data = segments(out, self.segment_compress) if self.framed else (out[0] if len(out) == 1 else b"".join(out))
        self.transport.write(data)

    def _answer(self, frame: Frame) -> None:
        sid = frame.stream
        if sid < 0 or sid >= self.streams.limit:
            return  # an EVENT (stream -1): this connection registers for none
        fut = self._take(sid)
        if fut is None:
            return  # not ours (a bug on the server's side); nothing waits for it
        try:
            fut.set_result(frame)
        except asyncio.InvalidStateError:
            pass  # cancelled or timed out: nobody waits for it
        if self._room:
            self._wake_one()
        if self.retiring:
            self._close_if_drained()

    def _take(self, sid: int) -> asyncio.Future[Frame] | None:
        """The future waiting on ``sid`` (None: none); its timer is cancelled and the id
        is free again."""
        fut = self._waiters[sid]
        if fut is None:
            return None
        self._waiters[sid] = None
        self.streams.release(sid)
        return fut

    def _wake_one(self) -> None:
        room = self._room
        while room:
            waiter = room.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    def _timed_out(self, sid: int, fut: asyncio.Future[Frame], timeout: float) -> None:
        if self._waiters[sid] is fut and not fut.done():
            streams = self.streams
            streams.orphan(sid)
            fut.set_exception(OperationTimedOut(
                errors={str(self.host): f"Client request timeout ({timeout} s)"},
                last_host=self.host))
            if not self.retiring and len(streams.orphans) >= self._orphan_limit:
                self.retiring = True
                if self.on_retire is not None:
                    self.on_retire(self)
            if self.retiring:
                self._close_if_drained()

    def _close_if_drained(self) -> None:
        """Closes a retired connection once every id in use is one given up on."""
        streams = self.streams
        if not self.closed and streams.in_use <= len(streams.orphans):
            self.close(ConnectionShutdown(
                f"cqlcodec: connection to {self.host} replaced: {len(streams.orphans)} "
                f"requests timed out without an answer"))

    def in_flight(self) -> int:
        """Stream ids in use (answers awaited, given up or not)."""
        return self.streams.in_use

    # ------------------------------------------------------------------ closing

    def _closed_error(self) -> ConnectionShutdown:
        err = self.error
        if isinstance(err, ConnectionShutdown):
            return err
        return ConnectionShutdown(f"cqlcodec: connection to {self.host} is closed")

    def close(self, error: BaseException | None = None) -> None:
        """Close the socket; requests in flight fail with ``error`` (ConnectionShutdown)."""
        transport = self.transport
        self._shutdown(error if error is not None else
                       ConnectionShutdown(f"cqlcodec: connection to {self.host} was closed"))
        if transport is not None:
            transport.close()

    def _shutdown(self, error: BaseException) -> None:
        if self.closed:
            return
        self.closed = True
        self.error = error
        for sid in range(self.streams.limit):
            fut = self._take(sid)
            if fut is not None and not fut.done():
                fut.set_exception(error)
        self._out = []
        self.deadlines.clear()
        while self._room:
            waiter = self._room.popleft()
            if not waiter.done():
                waiter.set_result(None)
        if self.on_close is not None:
            self.on_close(self)

    def leftovers(self) -> tuple[int, int, int]:
        """(stream ids in use, futures kept, deadlines of requests not answered): all 0
        on an idle connection."""
        return (self.streams.in_use, sum(1 for f in self._waiters if f is not None),
                self.deadlines.pending())
