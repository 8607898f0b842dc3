"""Sending many writes through a driver ``Session`` with a bounded number in flight.

Ordinary statements go through the session as ``execute_async`` sends them. An
:class:`EncodedBatch` carries its statements already encoded (by
:func:`cqlcodec.protocol.batch.batch_statements`): the session plans it like any
``BatchStatement`` (routing key, keyspace, consistency, retry and load-balancing
policies), and only the BATCH body's list of statements is taken as it is, so a batch
of a hundred rows costs the driver one message, not a hundred statements to encode.
"""

from __future__ import annotations

import io
import threading
from collections.abc import Callable, Generator, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

from cassandra.cluster import _NOT_SET, Session
from cassandra.protocol import BatchMessage
from cassandra.query import BatchStatement, Statement

from cqlcodec.errors import CodecError

__all__ = ["EncodedBatch", "Outcomes", "SendHook", "Sends", "SendsStopped", "run_steps",
           "send_all", "sent_by", "start_request", "stopped_by"]

_stop_flag: ContextVar[threading.Event | None] = ContextVar("cqlcodec_stop_flag", default=None)


class SendsStopped(CodecError):
    """:func:`send_all` was told to stop (:func:`stopped_by`): it sent no further
    statement and waited for those in flight."""


@contextmanager
def stopped_by(flag: threading.Event | None) -> Iterator[None]:
    """While inside, every :func:`send_all` of this thread stops sending once ``flag``
    is set (and raises :class:`SendsStopped`): how a long write, such as a bulk load,
    is stopped between two requests from another thread."""
    token = _stop_flag.set(flag)
    try:
        yield
    finally:
        _stop_flag.reset(token)


SendHook = Callable[[Sequence[Statement], int, object, "threading.Event | None"],
                    "list[tuple[bool, object]]"]
_send_hook: ContextVar[SendHook | None] = ContextVar("cqlcodec_send_hook", default=None)


@contextmanager
def sent_by(hook: SendHook) -> Iterator[None]:
    """While inside, every :func:`send_all` of this thread hands its statements to
    ``hook(statements, concurrency, execution_profile, stop flag)`` instead of the
    session: how ``cqlcodec.aio.load_table`` sends a load's writes on cqlcodec's
    request path."""
    token = _send_hook.set(hook)
    try:
        yield
    finally:
        _send_hook.reset(token)


class EncodedBatch(BatchStatement):
    """A ``BatchStatement`` whose statements are the bytes ``statements`` (``[short] n``
    then n statements, as in a BATCH body); ``routing_key`` and ``keyspace`` route it."""

    def __init__(self, statements: bytes, *, batch_type: Any, consistency_level: Any,
                 routing_key: bytes | None, keyspace: str | None) -> None:
        super().__init__(batch_type=batch_type, consistency_level=consistency_level)
        self.encoded_statements = statements
        self.routing_key = routing_key
        self.keyspace = keyspace


class _EncodedBatchMessage(BatchMessage):
    """A BATCH message whose statements are already encoded (``queries`` holds the bytes)."""

    def send_body(self, f: Any, protocol_version: int, *more: Any, **options: Any) -> None:
        f.write(bytes([self.batch_type.value]))
        f.write(self.queries)
        # what follows the statements (consistency, flags, serial consistency, timestamp,
        # keyspace) as the driver writes it, after its own 3-byte head of an empty batch
        # (scylla-driver passes protocol features too)
        tail = io.BytesIO()
        BatchMessage(self.batch_type, [], self.consistency_level, self.serial_consistency_level,
                     self.timestamp, self.keyspace).send_body(tail, protocol_version, *more,
                                                              **options)
        f.write(tail.getvalue()[3:])


def start_request(session: Session, statement: Statement, execution_profile: object) -> Any:
    """Send ``statement`` (an :class:`EncodedBatch` as its encoded statements) through the
    session and return its ``ResponseFuture``."""
    future = session._create_response_future(statement, None, False, {}, _NOT_SET,
                                             execution_profile)
    if isinstance(statement, EncodedBatch):
        driver_message = future.message
        message = _EncodedBatchMessage.__new__(_EncodedBatchMessage)
        message.__dict__.update(driver_message.__dict__)
        message.queries = statement.encoded_statements
        future.message = message
    future._protocol_handler = session.client_protocol_handler
    session._on_request(future)
    future.send_request()
    return future


Outcomes = list[tuple[bool, object]]
R = TypeVar("R")


class Sends:
    """What a writing generator (:func:`cqlcodec.driver.columns.insert_steps`) asks its
    driver to do: send ``statements``, at most ``concurrency`` in flight, and give back
    their :data:`Outcomes`. The synchronous API drives the steps with :func:`run_steps`,
    ``cqlcodec.aio`` with the loop's own sender."""

    __slots__ = ("statements", "concurrency", "execution_profile")

    def __init__(self, statements: list[Statement], concurrency: int,
                 execution_profile: object) -> None:
        self.statements = statements
        self.concurrency = concurrency
        self.execution_profile = execution_profile


def run_steps(session: Session, steps: Generator[Sends, Outcomes, R]) -> R:
    """Drives ``steps`` to its end, sending what it asks with :func:`send_all`, and
    returns what it returns."""
    try:
        sends = next(steps)
        while True:
            sends = steps.send(send_all(session, sends.statements, sends.concurrency,
                                        sends.execution_profile))
    except StopIteration as stop:
        result: R = stop.value
        return result


def send_all(session: Session, statements: Sequence[Statement], concurrency: int,
             execution_profile: object) -> Outcomes:
    """Send every statement, at most ``concurrency`` in flight, and return one
    ``(success, result or exception)`` per statement, in order (as the driver's
    ``execute_concurrent`` with ``raise_on_first_error=False``). When the flag of
    :func:`stopped_by` is set, no further statement is sent: those in flight are
    waited for and :class:`SendsStopped` is raised. Inside :func:`sent_by` its hook
    sends them."""
    stop = _stop_flag.get()
    hook = _send_hook.get()
    if hook is not None:
        return hook(statements, concurrency, execution_profile, stop)
    outcomes: Outcomes = [(False, None)] * len(statements)
    slots = threading.Semaphore(concurrency)
    finished = threading.Condition()
    pending = [len(statements)]

    def done(index: int, ok: bool, outcome: object) -> None:
        outcomes[index] = (ok, outcome)
        slots.release()
        with finished:
            pending[0] -= 1
            if pending[0] == 0:
                finished.notify_all()

    stopped = False
    for index, statement in enumerate(statements):
        slots.acquire()
        if stop is not None and stop.is_set():
            stopped = True
            with finished:
                pending[0] -= len(statements) - index
            break
        try:
            future = start_request(session, statement, execution_profile)
        except Exception as exc:  # noqa: BLE001 - a request that cannot start fails alone
            done(index, False, exc)
            continue
        future.add_callbacks(callback=_succeeded, callback_args=(done, index),
                             errback=_failed, errback_args=(done, index))
    with finished:
        finished.wait_for(lambda: pending[0] == 0)
    if stopped:
        raise SendsStopped("sending was stopped")
    return outcomes


def _succeeded(result: object, done: Any, index: int) -> None:
    done(index, True, result)


def _failed(error: BaseException, done: Any, index: int) -> None:
    done(index, False, error)
