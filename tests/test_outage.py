"""Retries bounded by time without progress (:class:`Patience`) and the driver's host
events (:class:`HostWatch`), without a server: the count and time bounds, progress
that restarts the clock, the up event that ends a wait, and the waiting text."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import pytest

from cqlcodec.driver.outage import HostWatch, Patience, check_retry_options


@dataclass(frozen=True)
class Host:
    """What the watch reads of a driver host: its address."""

    address: str


def test_retries_bound_the_failures_in_a_row_when_given() -> None:
    patience = Patience(None, retry_timeout=60.0, retries=2)
    assert patience.wait_to_retry() is None
    assert patience.wait_to_retry() is None
    assert patience.wait_to_retry() == "failed 3 times in a row"
    patience.progressed()
    assert patience.failures == 0 and patience.wait_to_retry() is None


def test_without_progress_the_retry_timeout_ends_the_retries() -> None:
    patience = Patience(None, retry_timeout=0.5)
    reasons: list[str] = []
    while not reasons:
        reason = patience.wait_to_retry()
        if reason is not None:
            reasons.append(reason)
    assert reasons[0].startswith("no progress for ") and "(retry_timeout 0.5 s)" in reasons[0]
    assert patience.failures >= 2  # it retried in between, with a backoff
    patience.progressed()
    assert patience.wait_to_retry() is None  # progress restarts the clock


def test_zero_retry_timeout_gives_up_at_the_first_failure() -> None:
    patience = Patience(None, retry_timeout=0.0)
    reason = patience.wait_to_retry()
    assert reason is not None and "1 failures in a row" in reason


@pytest.mark.parametrize("timeout, retries", [(-1.0, None), (float("nan"), None), (1.0, -1)])
def test_bad_retry_options(timeout: float, retries: int | None) -> None:
    with pytest.raises(ValueError, match="retr"):
        check_retry_options(timeout, retries)


def test_the_watch_says_what_is_awaited_and_wakes_on_the_up_event() -> None:
    watch = HostWatch()
    host = Host("127.0.0.1")
    waiter = object()
    assert watch.waiting_text() == ""
    watch.on_down(host)
    watch.set_waiting(waiter, ("127.0.0.1",), time.monotonic() - 12.2)
    assert watch.waiting_text() == "waiting for 127.0.0.1 (down 12 s)"
    seen = watch.ups()
    assert watch.wait_for_up(seen, 0.05) is False
    threading.Timer(0.05, watch.on_up, (host,)).start()
    assert watch.wait_for_up(seen, 60.0) is True
    watch.clear_waiting(waiter)
    assert watch.waiting_text() == ""


def test_the_command_line_default_is_the_librarys() -> None:
    from cqlcodec.cli import table_commands
    from cqlcodec.driver import outage

    assert table_commands.DEFAULT_RETRY_TIMEOUT == outage.DEFAULT_RETRY_TIMEOUT
