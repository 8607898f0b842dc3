"""cqlcodec.runtime.collector: the cyclic collector held off while rows are built, and
switched back on exactly when it was on before."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator

import pytest

from cqlcodec.runtime import collector


@pytest.fixture(autouse=True)
def _collector_on() -> Iterator[None]:
    gc.enable()
    yield
    gc.enable()


def test_a_pause_holds_collections_off_until_it_ends() -> None:
    collector.pause()
    assert not gc.isenabled()
    collector.resume()
    assert gc.isenabled()


def test_nested_pauses_resume_with_the_outermost() -> None:
    collector.pause()
    collector.pause()
    collector.resume()
    assert not gc.isenabled()
    collector.resume()
    assert gc.isenabled()


def test_a_collector_switched_off_before_stays_off() -> None:
    gc.disable()
    collector.pause()
    collector.resume()
    assert not gc.isenabled()


def test_pauses_overlapping_in_threads_resume_once_all_ended() -> None:
    first_paused, second_paused, first_done = (threading.Event() for _ in range(3))
    seen: list[bool] = []

    def first() -> None:
        collector.pause()
        first_paused.set()
        second_paused.wait(10)
        collector.resume()
        seen.append(gc.isenabled())  # the second pause is still under way
        first_done.set()

    thread = threading.Thread(target=first)
    thread.start()
    first_paused.wait(10)
    collector.pause()
    second_paused.set()
    first_done.wait(10)
    thread.join(10)
    collector.resume()
    assert seen == [False]
    assert gc.isenabled()
