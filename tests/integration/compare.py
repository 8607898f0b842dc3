"""Strict comparison of values returned by two driver sessions, and the plain form of
a driver value (what cqlcodec returns with ``plain_values=True``)."""

from __future__ import annotations

import datetime
import math
from collections.abc import Mapping
from typing import Any

from cassandra.util import Date, Duration, OrderedMap, SortedSet, Time

import cqlcodec


def _kind(value: object) -> str:
    t = type(value)
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        # the driver may build a new UDT namedtuple class per metadata parse:
        # compare by name and fields, not by class identity
        return f"namedtuple {t.__name__}{tuple(getattr(value, '_fields'))}"
    return f"{t.__module__}.{t.__qualname__}"


def assert_same(expected: Any, actual: Any, path: str = "value") -> None:
    """``actual`` has the same types (recursively) and the same values as ``expected``."""
    assert _kind(actual) == _kind(expected), (
        f"{path}: type {_kind(actual)} != {_kind(expected)} ({actual!r} vs {expected!r})")
    if isinstance(expected, float):
        assert (math.isnan(expected) and math.isnan(actual)) or (
            expected == actual and math.copysign(1.0, expected) == math.copysign(1.0, actual)), (
            f"{path}: {actual!r} != {expected!r}")
    elif isinstance(expected, OrderedMap):
        assert isinstance(actual, OrderedMap)
        exp_items, act_items = list(expected.items()), list(actual.items())
        assert len(exp_items) == len(act_items), f"{path}: {actual!r} != {expected!r}"
        for i, ((ek, ev), (ak, av)) in enumerate(zip(exp_items, act_items)):
            assert_same(ek, ak, f"{path}.key[{i}]")
            assert_same(ev, av, f"{path}[{ek!r}]")
            assert_same(ev, actual[ek], f"{path}[{ek!r}] (lookup)")
    elif isinstance(expected, (list, tuple, SortedSet)):
        exp_list, act_list = list(expected), list(actual)
        assert len(exp_list) == len(act_list), f"{path}: {actual!r} != {expected!r}"
        for i, (e, a) in enumerate(zip(exp_list, act_list)):
            assert_same(e, a, f"{path}[{i}]")
    elif isinstance(expected, (Date, Time, Duration)):
        assert repr(expected) == repr(actual) and expected == actual, (
            f"{path}: {actual!r} != {expected!r}")
    elif hasattr(expected, "__dict__") and not isinstance(expected, type):
        # a class registered with Cluster.register_user_type
        assert vars(expected).keys() == vars(actual).keys(), f"{path}: {actual!r} != {expected!r}"
        for name in vars(expected):
            assert_same(getattr(expected, name), getattr(actual, name), f"{path}.{name}")
    else:
        assert expected == actual, f"{path}: {actual!r} != {expected!r}"


def assert_same_rows(expected: list[Any], actual: list[Any], what: str) -> None:
    """Two lists of rows (named tuples) are the same, value by value."""
    assert len(actual) == len(expected), f"{what}: {len(actual)} rows != {len(expected)}"
    for i, (e, a) in enumerate(zip(expected, actual)):
        assert tuple(getattr(e, "_fields", ())) == tuple(getattr(a, "_fields", ())), what
        for name, ev, av in zip(getattr(e, "_fields", range(len(e))), e, a):
            assert_same(ev, av, f"{what} row {i} column {name}")


def plain(value: Any, hashable: bool = False) -> Any:
    """The value cqlcodec decodes (plain_values=True) for a value the driver decoded."""
    if value is None:
        return None
    if isinstance(value, Date):
        try:
            return value.date()
        except ValueError:
            return cqlcodec.Date(value.days_from_epoch)
    if isinstance(value, Time):
        return cqlcodec.Time(value.nanosecond_time)
    if isinstance(value, Duration):
        return cqlcodec.Duration(value.months, value.days, value.nanoseconds)
    if isinstance(value, SortedSet):
        items = [plain(e, True) for e in value]
        return frozenset(items) if hashable else set(items)
    if isinstance(value, Mapping):
        pairs = [(plain(k, True), plain(v, hashable)) for k, v in value.items()]
        return cqlcodec.FrozenMap(pairs) if hashable else dict(pairs)
    if isinstance(value, tuple):
        return tuple(plain(e, hashable) for e in value)
    if isinstance(value, list):
        items = [plain(e, hashable) for e in value]
        return tuple(items) if hashable else items
    return value


def assert_plain_equal(driver_value: Any, codec_value: Any, path: str) -> None:
    """cqlcodec's plain value equals the plain form of the driver's value."""
    expected = plain(driver_value)
    if hasattr(codec_value, "dtype"):  # a numpy vector
        assert isinstance(driver_value, list), path
        assert codec_value.tolist() == driver_value, path
        return
    assert expected == codec_value, f"{path}: {codec_value!r} != {expected!r}"
    if isinstance(expected, (datetime.date, datetime.time)) or expected is None:
        assert type(expected) is type(codec_value), path
