"""What the request path does itself in place of a driver call it would make per request,
checked against that call: a VOID answer's message, the client timestamp of the driver's
``MonotonicTimestampGenerator`` and the plan of its ``RoundRobinPolicy``."""

from __future__ import annotations

import logging
import struct
import time
from typing import Any

import pytest
from cassandra.policies import RoundRobinPolicy, SimpleConvictionPolicy
from cassandra.pool import Host
from cassandra.protocol import ProtocolHandler, ResultMessage
from cassandra.timestamps import MonotonicTimestampGenerator

from cqlcodec.requests.connection import Frame
from cqlcodec.requests.decode import VOID, Decoder
from cqlcodec.requests.frames import FLAG_WARNING, OP_RESULT
from cqlcodec.requests.routing import HostPlan, round_robin_hosts
from cqlcodec.requests.statements import client_timestamp


class _Session:
    class _Cluster:
        _user_types: dict[str, Any] = {}

    def __init__(self, handler: Any) -> None:
        self.client_protocol_handler = handler
        self.cluster = self._Cluster()


_FIELDS = ("kind", "stream_id", "trace_id", "custom_payload", "warnings")


@pytest.mark.parametrize("flags", [0, FLAG_WARNING])
def test_a_void_answer_is_the_message_the_drivers_decoder_makes(flags: int) -> None:
    body = struct.pack(">i", VOID)
    prefix = b"\x00\x01\x00\x04warn" if flags else b""
    page = Decoder(_Session(ProtocolHandler)).page(
        Frame(5, flags, 17, OP_RESULT, prefix + body), 5, None, None, None, False)
    theirs = ProtocolHandler.decode_message(5, {}, 17, 0, OP_RESULT, body, None, None)
    ours = page.message
    assert type(ours) is type(theirs)
    assert [getattr(ours, f) for f in _FIELDS] == [getattr(theirs, f) for f in _FIELDS]
    assert page.rows is None and page.warnings == (["warn"] if flags else None)


def test_a_handler_with_its_own_decoder_decodes_void_itself() -> None:
    made: list[int] = []

    class Own(ProtocolHandler):  # type: ignore[misc,valid-type]
        @classmethod
        def decode_message(cls, *args: Any) -> Any:
            made.append(args[2])
            return ResultMessage(VOID)

    page = Decoder(_Session(Own)).page(Frame(4, 0, 9, OP_RESULT, struct.pack(">i", VOID)), 4,
                                       None, None, None, False)
    assert made == [9] and page.message.kind == VOID


def test_the_drivers_timestamp_generator_advances_as_its_own_call() -> None:
    ours, theirs = MonotonicTimestampGenerator(), MonotonicTimestampGenerator()
    before = int(time.time() * 1e6)
    stamps = [client_timestamp(ours) for _ in range(1000)]
    assert stamps == sorted(set(stamps)) and stamps[0] >= before
    assert ours.last == stamps[-1]
    # the clock behind the last timestamp: one microsecond after it, as the driver does
    ahead = int(time.time() * 1e6) + 10_000_000
    ours.last = theirs.last = ahead
    assert [client_timestamp(ours) for _ in range(3)] == [theirs() for _ in range(3)] \
        == [ahead + 1, ahead + 2, ahead + 3]


def test_the_drivers_drift_warning_is_kept(caplog: pytest.LogCaptureFixture) -> None:
    gen = MonotonicTimestampGenerator(warning_threshold=0.5, warning_interval=0)
    gen.last = int(time.time() * 1e6) + 5_000_000
    with caplog.at_level(logging.WARNING, logger="cassandra.timestamps"):
        client_timestamp(gen)
    assert any("Clock skew detected" in r.getMessage() for r in caplog.records)


def test_another_timestamp_generator_is_called() -> None:
    assert client_timestamp(lambda: 42) == 42


def _hosts(n: int) -> list[Host]:
    return [Host(f"10.0.0.{i}", SimpleConvictionPolicy) for i in range(1, n + 1)]


@pytest.mark.parametrize("count", [0, 1, 3])
def test_a_round_robin_plan_is_the_policys_own(count: int) -> None:
    hosts = _hosts(count)
    ours, theirs = RoundRobinPolicy(), RoundRobinPolicy()
    for policy in (ours, theirs):
        policy.populate(None, hosts)
        policy._position = 2  # populate() starts at random

    def same_plan() -> None:
        got, start = round_robin_hosts(ours)
        assert list(HostPlan(got, None, False, start)) == list(theirs.make_query_plan())
    for _ in range(7):
        same_plan()
    assert ours._position == theirs._position == 9
    if hosts:  # a host down, then up again: the policy makes a new set each time
        for change in ("on_down", "on_up"):
            for policy in (ours, theirs):
                getattr(policy, change)(hosts[0])
            for _ in range(4):
                same_plan()
