"""Driver mode's row factories: the rows equal the driver's own factories' rows (type,
class name, field names, values) for every factory and for names the driver renames,
with one namedtuple class per column names instead of one per page."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from cassandra.query import dict_factory, named_tuple_factory, ordered_dict_factory, tuple_factory
from hypothesis import given
from hypothesis import strategies as st

import cqlcodec.driver.installer as drv
from cqlcodec.driver import row_classes

FACTORIES = (named_tuple_factory, dict_factory, ordered_dict_factory, tuple_factory)

# clean names, and names the driver cleans, renames positionally or suffixes
NAMES = [
    ["id", "name", "score", "ts", "tags"],
    ["[applied]", "b c", "d-e", "f.g"],
    ["a", "a", "a_", "A"],
    ["class", "def", "None", "True", "x"],
    ["1x", "_private", "__dunder__", "_", "9"],
    ["é", "naïve", "日本", "ok"],
    ["", "  ", "$", "count(*)"],
    ["system.ttl(v)", "writetime(v)", "v"],
    [f"c{i}" for i in range(300)],
    [],
]


def _shape(rows: Any) -> list[Any]:
    return [(type(r).__name__, type(r).__mro__[1:], getattr(r, "_fields", None),
             list(r.items()) if isinstance(r, dict) else tuple(r)) for r in rows]


@pytest.mark.parametrize("factory", FACTORIES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("names", NAMES, ids=range(len(NAMES)))
def test_rows_equal_the_drivers(factory: Any, names: list[str]) -> None:
    ours = drv._PAUSED_FACTORIES[id(factory)]
    assert ours == factory
    for count in (0, 1, 3, drv.PAUSE_FROM + 1):
        rows = [tuple(range(i, i + len(names))) for i in range(count)]
        got, expected = ours(names, list(rows)), factory(names, list(rows))
        assert got == expected
        assert _shape(got) == _shape(expected)
        if factory is named_tuple_factory:
            for r in got:
                assert r._asdict() == expected[0]._asdict() if count == 1 else True
                assert type(r).__module__ == "cassandra.query"
                assert repr(r) == repr(expected[got.index(r)])


@given(st.lists(st.text(max_size=6), max_size=8))
def test_any_names_as_the_driver(names: list[str]) -> None:
    rows = [tuple(range(len(names))), tuple([None] * len(names))]
    for factory in FACTORIES:
        try:
            expected = factory(names, list(rows))
        except Exception as exc:  # the driver's factory fails: so does ours, the same way
            with pytest.raises(type(exc)):
                drv._PAUSED_FACTORIES[id(factory)](names, list(rows))
            continue
        got = drv._PAUSED_FACTORIES[id(factory)](names, list(rows))
        assert _shape(got) == _shape(expected)


def test_a_class_per_column_names_not_per_page() -> None:
    ours = drv._PAUSED_FACTORIES[id(named_tuple_factory)]
    first, second = ours(["k", "v"], [(1, 2)]), ours(["k", "v"], [(3, 4), (5, 6)])
    assert type(first[0]) is type(second[0]) is type(second[1])
    assert type(ours(["k", "w"], [(1, 2)])[0]) is not type(first[0])
    # the driver alone makes one per page
    assert type(named_tuple_factory(["k", "v"], [(1, 2)])[0]) is not type(
        named_tuple_factory(["k", "v"], [(1, 2)])[0])


def test_the_class_cache_is_bounded() -> None:
    for i in range(row_classes.CLASS_LIMIT + 50):
        assert row_classes.row_class([f"bounded_{i}", "v"]) is not None
        assert len(row_classes._classes) <= row_classes.CLASS_LIMIT
    assert row_classes.row_class(["bounded_0", "v"]) is not None  # made again


def test_the_drivers_warning_once_per_class(caplog: pytest.LogCaptureFixture) -> None:
    """Names namedtuple refuses: the driver's own warning, once when the class is made."""
    ours = drv._PAUSED_FACTORIES[id(named_tuple_factory)]
    names = ["warned", "class", "warned"]
    with caplog.at_level(logging.WARNING, logger="cassandra.query"):
        for _ in range(3):
            row = ours(names, [(1, 2, 3)])[0]
    assert row._fields == named_tuple_factory(names, [(1, 2, 3)])[0]._fields
    warned = [r for r in caplog.records if r.name == "cassandra.query"]
    assert len(warned) == 2  # one from ours (made once), one from the driver's call above


@pytest.mark.parametrize("factory", FACTORIES, ids=lambda f: f.__name__)
def test_rows_without_a_length_as_the_driver(factory: Any) -> None:
    """A session's own protocol handler may hand the factory an iterator (the driver's
    LazyProtocolHandler does): the rows are the driver's, not a TypeError from len()."""
    names = ["k", "v", "class"]
    for count in (0, 3, drv.PAUSE_FROM + 1):
        rows = [(i, str(i), None) for i in range(count)]
        got = drv._PAUSED_FACTORIES[id(factory)](names, iter(rows))
        expected = factory(names, iter(rows))
        if factory is tuple_factory:  # the driver's returns the rows it is given
            got, expected = list(got), list(expected)
        assert got == expected
        assert _shape(got) == _shape(expected)
