"""How :func:`cqlcodec.driver.diff_tables` compares: the roles of a diff scan's columns,
the primary key of a row as a hashable value, and whether two cells are equal.

Values are compared as the scans decode them (:meth:`cqlcodec.Column.to_pylist`). A
column whose type holds no ``float``/``double`` and no collection compares by Python
equality; the others compare through their JSON forms
(:func:`cqlcodec.driver.json_values.to_json`: exact, the server's order for sets and
maps), with two rules: a null and an empty collection (``list``, ``set``, ``map``,
frozen or not) are equal, and floats and doubles within ``float_tolerance`` of each
other (absolute) are equal, at any depth (a ``vector<float, n>`` element by element).
NaN equals NaN. Write times compare exactly, TTLs within ``ttl_tolerance`` seconds, for
the cells set on both sides whose values are equal (a cell that differs or is missing
on one side is reported by its value alone).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from cqlcodec import kinds as K
from cqlcodec.driver.cell_times import TTL, WRITETIME
from cqlcodec.driver.json_values import to_json
from cqlcodec.errors import CodecError
from cqlcodec.types.model import CqlType

__all__ = ["DiffError", "DiffLayout", "Side", "frozen_value", "same_cell", "same_times"]

_COLLECTIONS: Final = (K.LIST, K.SET, K.MAP)
_FLOATS: Final = (K.FLOAT, K.DOUBLE)


class DiffError(CodecError):
    """Two tables cannot be compared (unknown table, different primary keys, a column
    missing from the target) or a diff cannot go on (its state directory belongs to
    another diff, a split could not be read)."""


def _has_kind(t: CqlType, kinds: tuple[int, ...]) -> bool:
    u = t.unwrapped()
    return u.kind in kinds or any(_has_kind(s, kinds) for s in u.subtypes)


@dataclass(frozen=True)
class CellRule:
    """How one column compares: ``plain`` ones by ``==``; the others through JSON, with
    ``empty_is_null`` for collections."""

    name: str
    cql_type: CqlType
    plain: bool
    empty_is_null: bool


def rule_of(name: str, t: CqlType) -> CellRule:
    """The :class:`CellRule` of column ``name`` of type ``t``."""
    plain = not _has_kind(t, (*_FLOATS, *_COLLECTIONS, K.UDT, K.TUPLE, K.VECTOR))
    return CellRule(name, t, plain, t.unwrapped().kind in _COLLECTIONS)


def frozen_value(value: Any) -> Any:
    """``value`` as a hashable value that is equal exactly when the values are equal
    (lists, tuples, sets in their order, maps and UDTs as tuples; floats by their
    text, so NaN finds NaN)."""
    if isinstance(value, float):
        return ("float", repr(value))
    if isinstance(value, dict):
        return ("map", tuple((frozen_value(k), frozen_value(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple, set, frozenset)):
        return ("seq", tuple(frozen_value(v) for v in value))
    try:
        hash(value)
    except TypeError:
        return ("repr", repr(value))
    return value


def _close(a: Any, b: Any, tolerance: float) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or abs(a - b) <= tolerance or (math.isnan(a) and math.isnan(b))
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y, tolerance) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(_close(a[k], b[k], tolerance) for k in a)
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    return bool(a == b)


def json_cell(value: Any, rule: CellRule) -> Any:
    """The JSON form of a cell (an empty collection as null)."""
    found = to_json(value, rule.cql_type)
    if rule.empty_is_null and not found and found is not None:
        return None
    return found


def same_cell(a: Any, b: Any, rule: CellRule, float_tolerance: float) -> bool:
    """Whether cells ``a`` and ``b`` of a column are equal by the module's rules."""
    same = a == b
    if same is True:  # (a numpy comparison is an array: it goes the long way)
        return True
    if rule.plain:
        return False
    return _close(json_cell(a, rule), json_cell(b, rule), float_tolerance)


def same_times(a: Any, b: Any, tolerance: float | None) -> bool:
    """Whether two write times (``tolerance`` None: exact) or two TTLs (within
    ``tolerance`` seconds) are equal; lists (element cells) entry by entry."""
    if isinstance(a, list) or isinstance(b, list):
        if not (isinstance(a, list) and isinstance(b, list)) or len(a) != len(b):
            return False
        return all(same_times(x, y, tolerance) for x, y in zip(a, b))
    if a is None or b is None or tolerance is None:
        return bool(a == b)
    return bool(abs(a - b) <= tolerance)


class Side:
    """Where one table's diff scan puts each column: positions by name in its batches."""

    def __init__(self, names: Sequence[str], types: Sequence[CqlType]) -> None:
        self.position = {name: i for i, name in enumerate(names) if i > 0}  # 0: the token
        self.types = {name: t for name, t in zip(names, types)}


class DiffLayout:
    """The columns of a diff: the partition key, the clustering key, the static and
    regular columns compared, and the write-time and TTL columns compared, with their
    positions in the source's and the target's batches."""

    def __init__(self, partition_key: Sequence[str], clustering_key: Sequence[str],
                 static: Sequence[str], regular: Sequence[str], source: Side, target: Side,
                 writetime: bool, ttl: bool) -> None:
        self.partition_key = list(partition_key)
        self.clustering_key = list(clustering_key)
        self.keys = [*partition_key, *clustering_key]
        self.source = source
        self.target = target
        self.key_rules = [rule_of(n, source.types[n]) for n in self.keys]
        for name in [*self.keys, *static, *regular]:
            if name not in target.position:
                raise DiffError(f"the target table has no column {name!r}")
        self.static = [rule_of(n, source.types[n]) for n in static]
        self.regular = [rule_of(n, source.types[n]) for n in regular]
        # (time column, value column, tolerance (None: exact), static)
        self.times: list[tuple[str, str, float | None, bool]] = []
        for rules, is_static in ((self.static, True), (self.regular, False)):
            for rule in rules:
                for on, pattern in ((writetime, WRITETIME), (ttl, TTL)):
                    name = pattern.format(rule.name)
                    if on and name in source.position and name in target.position:
                        self.times.append((name, rule.name,
                                           None if pattern == WRITETIME else 0.0, is_static))

    def key_of(self, row: Sequence[Any], side: Side) -> tuple[Any, ...]:
        """(token, key values made hashable) of a row of ``side``."""
        position = side.position
        return (row[0], *[row[position[r.name]] if r.plain else frozen_value(row[position[r.name]])
                          for r in self.key_rules])

    def static_only(self, row: Sequence[Any], side: Side) -> bool:
        """Whether the row is a partition's static cells alone (no clustering row)."""
        return bool(self.clustering_key) and all(
            row[side.position[n]] is None for n in self.clustering_key)

    def key_json(self, row: Sequence[Any], side: Side, partition_only: bool = False) -> dict[str, Any]:
        """The key of a row as JSON values, by column name."""
        rules = self.key_rules[:len(self.partition_key)] if partition_only else self.key_rules
        return {r.name: to_json(row[side.position[r.name]], r.cql_type) for r in rules}

    def compare(self, a: Sequence[Any], b: Sequence[Any], static: bool, float_tolerance: float,
                ttl_tolerance: float) -> dict[str, tuple[Any, Any]]:
        """The cells of source row ``a`` and target row ``b`` that differ: the static
        columns (``static``) or the regular ones, and their times, as
        ``{column: (source JSON, target JSON)}``."""
        found: dict[str, tuple[Any, Any]] = {}
        src, dst = self.source.position, self.target.position
        for rule in self.static if static else self.regular:
            x, y = a[src[rule.name]], b[dst[rule.name]]
            if not same_cell(x, y, rule, float_tolerance):
                found[rule.name] = (json_cell(x, rule), json_cell(y, rule))
        for name, column, tolerance, is_static in self.times:
            if is_static != static or column in found:  # a value that differs: its times too
                continue
            if a[src[column]] is None or b[dst[column]] is None:  # no cell (or an empty one)
                continue
            x, y = a[src[name]], b[dst[name]]
            if not same_times(x, y, None if tolerance is None else ttl_tolerance):
                found[name] = (x, y)
        return found
