"""The request path's binding keeps a native copy of a statement's bind plan on the
statement and makes it again when the statement changes (new bind metadata after a
re-prepare, another protocol version): the bytes are always the driver's for the
statement as it is now."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("cassandra")

from cassandra.cqltypes import Int32Type, LongType, UTF8Type  # noqa: E402
from cassandra.protocol import ColumnMetadata  # noqa: E402
from cassandra.query import BoundStatement, PreparedStatement  # noqa: E402

from cqlcodec.requests.statements import Binder  # noqa: E402


def _statement(types: list[Any]) -> Any:
    columns = [ColumnMetadata("ks", "t", f"c{i}", t) for i, t in enumerate(types)]
    made: Any = PreparedStatement
    return made(columns, b"q-bind", [0], "insert", "ks", 4, None, None, None)


def _drivers(ps: Any, values: tuple[Any, ...]) -> tuple[list[Any], Any]:
    bound = BoundStatement(ps).bind(values)
    return list(bound.values), bound.routing_key


def test_values_and_routing_key_are_the_drivers() -> None:
    ps = _statement([Int32Type, UTF8Type])
    binder = Binder()
    for values in [(1, "a"), (-7, ""), (2**31 - 1, "é" * 300)]:
        assert binder.bind(ps, values) == _drivers(ps, values)


def test_a_statement_whose_columns_changed_is_bound_by_its_new_columns() -> None:
    ps = _statement([Int32Type, UTF8Type])
    binder = Binder()
    values, _ = binder.bind(ps, (5, "x"))
    assert values[0] == (5).to_bytes(4, "big")
    ps.column_metadata = [ColumnMetadata("ks", "t", "c0", LongType),
                          ColumnMetadata("ks", "t", "c1", UTF8Type)]
    values, key = binder.bind(ps, (5, "x"))
    assert values[0] == (5).to_bytes(8, "big")  # a bigint now: the plan was made again
    assert (values, key) == _drivers(ps, (5, "x"))


def test_a_statement_whose_routing_changed_routes_by_its_new_key_columns() -> None:
    ps = _statement([Int32Type, UTF8Type])
    binder = Binder()
    assert binder.bind(ps, (5, "x"))[1] == (5).to_bytes(4, "big")
    ps.routing_key_indexes = [1]
    assert binder.bind(ps, (5, "x")) == _drivers(ps, (5, "x")) and \
        binder.bind(ps, (5, "x"))[1] == b"x"


class _Columns:
    """A statement class whose bind columns are a property (not in the instance's dict)."""

    def __get__(self, ps: Any, kind: Any = None) -> Any:
        kind_of_first = LongType if ps is not None and ps.__dict__.get("_wide") else Int32Type
        return [ColumnMetadata("ks", "t", "c0", kind_of_first),
                ColumnMetadata("ks", "t", "c1", UTF8Type)] if ps is not None else self

    def __set__(self, ps: Any, value: Any) -> None:
        pass  # the columns follow ``_wide``


def test_a_subclass_with_a_columns_property_is_read_as_attributes() -> None:
    made: Any = type("Subclassed", (PreparedStatement,), {"column_metadata": _Columns()})
    ps = made([], b"q-sub", [0], "insert", "ks", 4, None, None, None)
    binder = Binder()
    first, _ = binder.bind(ps, (5, "x"))
    ps._wide = True  # a new columns list each time: the plan is made again each call
    second, _ = binder.bind(ps, (5, "x"))
    assert (first[0], second[0]) == ((5).to_bytes(4, "big"), (5).to_bytes(8, "big"))


def test_values_cqlcodec_refuses_get_the_drivers_error() -> None:
    ps = _statement([Int32Type, UTF8Type])
    with pytest.raises(Exception) as ours:
        Binder().bind(ps, ("not an int", "x"))
    with pytest.raises(Exception) as theirs:
        _drivers(ps, ("not an int", "x"))
    assert type(ours.value) is type(theirs.value)


class _Cluster:
    timestamp_generator = staticmethod(lambda: 1)
    protocol_version = 4


class _Session:
    cluster = _Cluster()
    default_fetch_size = 5000
    use_client_timestamp = True
    keyspace = None


def test_a_request_routes_by_the_table_of_the_statements_bind_columns_now() -> None:
    from cassandra.cluster import _NOT_SET, EXEC_PROFILE_DEFAULT, ExecutionProfile

    from cqlcodec.requests.statements import build_request

    ps = _statement([Int32Type, UTF8Type])
    binder = Binder()
    profile = ExecutionProfile()
    req = build_request(_Session(), binder, EXEC_PROFILE_DEFAULT, profile, ps, (1, "a"),
                        _NOT_SET, None, False, _NOT_SET)
    assert (req.keyspace, req.table, req.fetch_size, req.timestamp) == ("ks", "t", 5000, 1)
    ps.column_metadata = [ColumnMetadata("ks2", "t2", "c0", Int32Type),
                          ColumnMetadata("ks2", "t2", "c1", UTF8Type)]
    ps.fetch_size = 10
    req = build_request(_Session(), binder, EXEC_PROFILE_DEFAULT, profile, ps, (1, "a"),
                        _NOT_SET, None, False, _NOT_SET)
    assert (req.keyspace, req.table, req.fetch_size) == ("ks2", "t2", 10)
    made: Any = PreparedStatement
    bare = made([], b"q-none", None, "select now() from system.local", "ks", 4, None, None, None)
    req = build_request(_Session(), binder, EXEC_PROFILE_DEFAULT, profile, bare, (), _NOT_SET,
                        None, False, _NOT_SET)
    assert (req.keyspace, req.table) == ("ks", None)  # no bind columns: the statement's keyspace
