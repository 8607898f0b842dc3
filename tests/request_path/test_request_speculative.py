"""Speculative executions scheduled as the driver schedules them: the driver's own
``ConstantSpeculativeExecutionPolicy`` plans, executions that answer after set delays on
the running loop, the first answer winning and the others cancelled."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from cassandra.cluster import NoHostAvailable
from cassandra.policies import ConstantSpeculativeExecutionPolicy

from cqlcodec.requests.speculative import speculate


class Executions:
    """Each execution takes its first host and answers ``answers[host]`` seconds later
    (an exception instance: raised then); records what was sent and cancelled."""

    def __init__(self, answers: dict[str, Any]) -> None:
        self.answers = answers
        self.sent: list[tuple[str, float]] = []
        self.cancelled: list[str] = []

    async def run(self, plan: Iterator[Any], deadline: float | None) -> Any:
        host = next(plan)
        loop = asyncio.get_running_loop()
        self.sent.append((host, loop.time()))
        delay, outcome = self.answers[host]
        try:
            await asyncio.sleep(delay)
        except asyncio.CancelledError:
            self.cancelled.append(host)
            raise
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome


def _spec(delay: float, attempts: int) -> Any:
    return ConstantSpeculativeExecutionPolicy(delay, attempts).new_plan("ks", None)


def _run(answers: dict[str, Any], hosts: list[str], delay: float, attempts: int,
         timeout: float | None = None) -> tuple[Any, Executions]:
    ex = Executions(answers)

    async def main() -> Any:
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        return await speculate(ex.run, iter(hosts), _spec(delay, attempts), loop, deadline)
    return asyncio.run(main()), ex


def test_the_first_answer_wins_and_the_others_are_cancelled() -> None:
    (result, sent), ex = _run({"a": (0.5, "from a"), "b": (0.02, "from b"), "c": (0.5, "c")},
                              ["a", "b", "c"], 0.05, 5)
    assert result == "from b" and sent == 2
    assert [h for h, _ in ex.sent] == ["a", "b"] and ex.cancelled == ["a"]
    assert ex.sent[1][1] - ex.sent[0][1] >= 0.045  # after the policy's delay


def test_an_early_answer_sends_nothing_more() -> None:
    (result, sent), ex = _run({"a": (0.0, "a")}, ["a", "b"], 0.05, 5)
    assert (result, sent) == ("a", 1) and not ex.cancelled


def test_no_host_left_sends_nothing_and_the_plan_ends_it() -> None:
    (result, sent), ex = _run({"a": (0.2, "a")}, ["a"], 0.01, 5)
    assert (result, sent) == ("a", 1) and [h for h, _ in ex.sent] == ["a"]
    (result, sent), ex = _run({"a": (0.2, "a"), "b": (0.6, "b"), "c": (0.01, "c")},
                              ["a", "b", "c"], 0.01, 1)  # one speculative execution at most
    assert (result, sent) == ("a", 2)


def test_an_error_ends_the_call_but_no_host_left_waits_for_the_others() -> None:
    (result, sent), ex = _run({"a": (0.2, "a"), "b": (0.0, NoHostAvailable("none", {}))},
                              ["a", "b"], 0.01, 5)
    assert (result, sent) == ("a", 2)
    with pytest.raises(ValueError, match="bad"):
        _run({"a": (0.2, "a"), "b": (0.0, ValueError("bad"))}, ["a", "b"], 0.01, 5)
    with pytest.raises(NoHostAvailable):
        _run({}, [], 0.01, 5)


def test_no_execution_is_scheduled_past_the_timeout() -> None:
    (result, sent), ex = _run({"a": (0.15, "a"), "b": (0.0, "b")}, ["a", "b"], 0.1, 5,
                              timeout=0.08)
    assert (result, sent) == ("a", 1)
