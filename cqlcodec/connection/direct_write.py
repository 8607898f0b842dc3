"""Requests written on the caller's thread, without waking the libev reactor's thread.

The driver's libev connection hands every frame to its IO thread: ``push`` puts it on the
connection's deque and wakes the loop (``ev_async_send``), the loop starts the
connection's write watcher, writes, and stops the watcher again; each request also adds
a timer (its timeout), which wakes the loop once more ("in case this timer is earlier").
One request at a time, that is two of the four wake-ups a request costs.

The class made by :func:`cqlcodec.connection.driver_class.connection_class` over the
driver's ``LibevConnection`` (its own ``push``, ``handle_write`` and ``create_timer``,
a plain TCP socket) changes both, and nothing else:

* **the frame written by the caller.** ``push`` of a frame of at most ``out_buffer_size``
  bytes (one of the driver's chunks), when it is the connection's only request in flight,
  the deque is empty and the IO thread is not inside ``handle_write``, sends it with one
  non-blocking ``send`` while holding the connection's deque lock; what the socket does
  not take (a short write, ``EAGAIN``, any error) goes on the deque under the same lock
  and the loop is woken, as the driver's ``push`` does: the IO thread writes it, or meets
  the error and fails the connection its own way. ``handle_write`` marks, under the same
  lock, the time the IO thread spends in the driver's own ``handle_write``, which pops a
  chunk under the lock and sends it outside it: a caller never writes between that pop
  and that send, so the bytes of two frames never interleave, and each frame's bytes
  leave in the order the deque lock was taken, as before. Frames over TLS (OpenSSL does
  not allow one connection to be written by one thread while another reads it), larger
  frames, and any push while other requests are in flight or something is queued or
  being written take the driver's path unchanged (with requests in flight the IO thread
  is awake for their answers, and a ``send`` on the caller's thread, which lets go of
  the GIL, would make the caller wait for the IO thread to give it back: measured, more
  context switches, not fewer).
* **no wake-up for a timer that cannot be the next one.** The loop arms its timer for
  the earliest live timer each time it runs (``_loop_will_run``), first taking in the
  timers added since. A timer that ends no earlier than a live *marker* timer of
  cqlcodec's (:class:`_Marker`, ending :data:`MARKER_DELAY` seconds after it was made,
  never cancelled) is added without waking the loop: the loop wakes for the marker at
  the latest, and the marker's callback wakes it once more so that the timers added
  meanwhile are taken in. A timer ending earlier than the marker, or when there is none,
  wakes the loop as the driver does (and a new marker is made then). Timers fire at
  their times as before. A cancelled timer lets go of its callback (:class:`_Timer`):
  the loop keeps it until its end, and the callback kept the request's whole
  ``ResponseFuture`` alive that long, for the collector to walk again and again.

Every other reactor (asyncio, asyncore, gevent, eventlet, twisted) keeps its own writes:
asyncore decides at each poll whether a connection is read at all (not while it has no
requests), so it must be woken for every request anyway; asyncio writes on its loop's
coroutines.
"""

from __future__ import annotations

import importlib
import socket
import threading
from collections.abc import Callable
from typing import Any, Final

from cassandra.connection import Timer

libevreactor: Any = None
LibevConnection: Any = None
LibevLoop: Any = None
try:
    libevreactor = importlib.import_module("cassandra.io.libevreactor")
    LibevConnection, LibevLoop = libevreactor.LibevConnection, libevreactor.LibevLoop
except Exception:  # pragma: no cover - the driver was built without its libev extension
    libevreactor = None

MARKER_DELAY: Final = 1.0
"""Seconds from a marker timer's making to its end: timers ending later add no wake-up."""

STOP_WITHIN: Final = 0.05
"""A cancelled timer this close to its end (seconds) stops the loop's timer as it goes."""


# the names the driver's code must use for these methods to fit it (cassandra-driver
# 3.29-3.30 and scylla-driver 3.29 do): a libev reactor written otherwise keeps its own
_SHAPES: Final = (("push", {"_deque_lock", "deque", "out_buffer_size", "notify"}),
                  ("handle_write", {"_deque_lock", "deque", "popleft", "appendleft", "send"}))


def _names(function: Any) -> set[str]:
    code = getattr(function, "__code__", None)
    return set(code.co_names) if code is not None else set()


def _fits() -> bool:
    """Whether the installed driver's libev reactor is the one these methods know."""
    if LibevConnection is None or not isinstance(LibevConnection.__dict__.get("create_timer"),
                                                 classmethod):
        return False
    if not {"_timers", "add_timer"} <= _names(LibevLoop.add_timer):
        return False
    if not {"_loop_timer", "service_timeouts"} <= _names(LibevLoop._update_timer):
        return False
    return all(names <= _names(getattr(LibevConnection, name)) for name, names in _SHAPES)


FITS: Final = _fits()
"""Whether the installed driver's libev reactor is written as these methods expect."""


def direct_write_methods(base: type[Any]) -> dict[str, Any]:
    """The methods a connection class over ``base`` gets for caller-thread writes (empty
    when ``base`` is not the driver's libev connection with its own ``push``,
    ``handle_write`` and ``create_timer``, or that reactor is not written as this module
    knows it)."""
    if not FITS or not issubclass(base, LibevConnection):
        return {}
    if (base.push is not LibevConnection.push
            or base.handle_write is not LibevConnection.handle_write
            or base.create_timer.__func__ is not LibevConnection.create_timer.__func__):
        return {}
    return {"push": push, "handle_write": handle_write, "create_timer": classmethod(create_timer),
            "_cqlcodec_io_writing": False}


def push(self: Any, data: bytes) -> None:
    """The driver's ``push``, but a frame the socket takes whole right away is written
    here, on the caller's thread, and the loop is not woken, when it is the connection's
    only request in flight (with others in flight the IO thread is busy with their
    answers: the caller's ``send`` would hand it the GIL and wait to get it back)."""
    sock = self._socket
    if (type(sock) is socket.socket and len(data) <= self.out_buffer_size and not self.deque
            and not self._cqlcodec_io_writing and len(self._requests) <= 1):
        with self._deque_lock:
            if (not self.deque and not self._cqlcodec_io_writing and not self.is_closed
                    and not self.is_defunct):
                try:
                    sent = sock.send(data)
                except OSError:  # EAGAIN or a broken socket: the IO thread's to handle
                    sent = 0
                if sent == len(data):
                    return
                self.deque.append(data[sent:] if sent else data)
                _notify()
                return
    LibevConnection.push(self, data)


def handle_write(self: Any, *args: Any) -> None:
    """The driver's ``handle_write``, with callers kept from writing meanwhile."""
    with self._deque_lock:
        self._cqlcodec_io_writing = True
    try:
        LibevConnection.handle_write(self, *args)
    finally:
        with self._deque_lock:
            self._cqlcodec_io_writing = False


def _notify() -> None:
    loop = libevreactor._global_loop if libevreactor is not None else None
    if loop is not None:
        loop.notify()


def _nothing() -> None:
    """What a cancelled timer calls, should the loop fire it as it is being cancelled."""


def _stop_loop_timer() -> None:
    # the loop arms its libev timer as a *repeating* one, every period the time left to
    # its earliest timer when it last looked, and re-arms it only while some timer is
    # left: when the last one ends the loop timer goes on firing at that last period,
    # often a microsecond or less, and the IO thread spins (for the GIL, each time) until
    # a new timer comes. Stopped here, on the loop's thread, as a timer ends: the loop
    # arms it again before it next waits if any timer is left.
    loop = libevreactor._global_loop if libevreactor is not None else None
    loop_timer = getattr(loop, "_loop_timer", None)
    if loop_timer is not None:
        loop_timer.stop()


class _Timer(Timer):
    """The driver's timer, which lets go of its callback when cancelled (the loop keeps a
    cancelled timer until its end, a request's timeout, and the driver's callback, a
    bound method of the request's ``ResponseFuture``, kept the future, its message,
    statement, event and result, alive as long, surviving into the collector's oldest
    generation), and which stops the loop's timer as it ends (:func:`_stop_loop_timer`)."""

    def cancel(self) -> None:
        """Cancel the timer: it never calls its callback."""
        self.canceled = True
        self.callback = _nothing

    def finish(self, time_now: float) -> bool:
        """Called by the loop with the time: whether the timer is done (cancelled, or
        ended and its callback called)."""
        if self.canceled:
            if self.end - time_now < STOP_WITHIN:  # the loop may have armed for it
                _stop_loop_timer()
            return True
        if time_now >= self.end:
            _stop_loop_timer()
            self.callback()
            return True
        return False


class _Marker(_Timer):
    """A timer of cqlcodec's that the loop must wake for: later timers rely on it."""

    def __init__(self, loop: Any) -> None:
        super().__init__(MARKER_DELAY, self._fired)
        self.loop = loop
        self.fired = False

    def _fired(self) -> None:
        # before the loop arms its next timer: it runs once more and takes in the
        # timers added since it last looked
        self.fired = True
        self.loop.notify()


_marker: _Marker | None = None
_marker_lock: Final = threading.Lock()


def create_timer(cls: Any, timeout: float, callback: Callable[[], Any]) -> Any:
    """The driver's ``create_timer``, waking the loop only for a timer that may end
    before the loop's next wake-up."""
    loop = libevreactor._global_loop if libevreactor is not None else None
    manager = getattr(loop, "_timers", None)
    if (loop is None or type(loop) is not LibevLoop or manager is None
            or type(loop).add_timer is not LibevLoop.add_timer):
        return LibevConnection.create_timer.__func__(cls, timeout, callback)
    timer = _Timer(timeout, callback)
    manager.add_timer(timer)  # LibevLoop.add_timer without its wake-up; then the check
    marker = _marker
    if marker is not None and marker.loop is loop and not marker.fired:
        if marker.end <= timer.end:
            return timer
    else:  # a new marker, for the timers after this one (a timer ending earlier than a
        _new_marker(loop, manager, marker)  # live marker just wakes the loop)
    loop.notify()
    return timer


def _new_marker(loop: Any, manager: Any, old: _Marker | None) -> None:
    global _marker
    with _marker_lock:
        if _marker is old:
            made = _Marker(loop)
            manager.add_timer(made)
            _marker = made
