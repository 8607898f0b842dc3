"""The rows of the driver's own row factories, with their classes made once.

The driver's ``named_tuple_factory`` makes a new namedtuple class (``eval`` of its source)
for every page it is given: for a one-row answer that is most of the client's cost. Here
the class the driver's factory makes for a list of column names is made once, by the
driver's own factory (so field names follow its renaming rules exactly: characters it
cleans, names ``namedtuple`` refuses, duplicates, and what it logs about them), and kept
per column names in a bounded cache; each row is then made as that class's ``__new__``
makes it. ``dict_factory`` and ``ordered_dict_factory`` rows are the driver's
dictionaries of the same names and values; ``tuple_factory`` returns the rows as they are.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final

from cassandra.query import named_tuple_factory

__all__ = ["CLASS_LIMIT", "dict_rows", "named_tuple_rows", "ordered_dict_rows", "row_class"]

CLASS_LIMIT: Final = 512
"""How many row classes (distinct column-name lists) are kept; the oldest eighth goes first."""

_classes: dict[tuple[str, ...], type[Any]] = {}
_lock: Final = threading.Lock()
_MODULE: Final = "cassandra.query"


def row_class(colnames: Sequence[str]) -> type[Any] | None:
    """The namedtuple class the driver's ``named_tuple_factory`` makes for ``colnames``
    (made once per distinct names), or None where the driver's factory fails for them."""
    key = tuple(colnames)
    found = _classes.get(key)
    if found is None:
        found = _make_class(key)
    return found


def _make_class(key: tuple[str, ...]) -> type[Any] | None:
    try:
        # the driver's own factory names the fields (and logs what it logs about them)
        sample = named_tuple_factory(list(key), [(None,) * len(key)])
    except Exception:
        return None
    made: type[Any] = type(sample[0])
    # the driver's namedtuple takes the module of whichever Python frame called its
    # compiled factory; a class kept for many pages gets the factory's own module
    made.__module__ = _MODULE
    with _lock:
        if len(_classes) >= CLASS_LIMIT:
            for old in list(_classes)[: CLASS_LIMIT // 8]:
                _classes.pop(old, None)
        _classes[key] = made
    return made


def named_tuple_rows(colnames: Sequence[str], rows: Iterable[tuple[Any, ...]],
                     fallback: Callable[[Any, Any], Any]) -> list[Any]:
    """``named_tuple_factory(colnames, rows)``: each row an instance of the kept class
    (``fallback``, the driver's factory, where no class can be made: it raises its error)."""
    made = row_class(colnames)
    if made is None:
        out: list[Any] = fallback(colnames, rows)
        return out
    return rows_of_class(made, rows)


def rows_of_class(made: type[Any], rows: Iterable[tuple[Any, ...]]) -> list[Any]:
    """Each row an instance of ``made`` (a class of :func:`row_class`)."""
    new: Any = tuple.__new__
    return [new(made, row) for row in rows]


def dict_rows(colnames: Sequence[str], rows: Iterable[tuple[Any, ...]]) -> list[dict[str, Any]]:
    """``dict_factory(colnames, rows)``: a dict of each row by column name."""
    return [dict(zip(colnames, row)) for row in rows]


def ordered_dict_rows(colnames: Sequence[str],
                      rows: Iterable[tuple[Any, ...]]) -> list[OrderedDict[str, Any]]:
    """``ordered_dict_factory(colnames, rows)``: an OrderedDict of each row by column name."""
    return [OrderedDict(zip(colnames, row)) for row in rows]
