"""Concurrent execution of many statements."""

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple

from cassandra.cluster import Session
from cassandra.query import PreparedStatement, Statement

class ExecutionResult(NamedTuple):
    success: bool
    result_or_exc: Any

def execute_concurrent(session: Session,
                       statements_and_parameters: Iterable[tuple[str | Statement | PreparedStatement,
                                                                  Sequence[Any] | Mapping[str, Any] | None]],
                       concurrency: int = 100, raise_on_first_error: bool = True,
                       results_generator: bool = False,
                       execution_profile: object = ...) -> Iterator[ExecutionResult] | list[ExecutionResult]: ...
def execute_concurrent_with_args(session: Session, statement: str | Statement | PreparedStatement,
                                 parameters: Iterable[Sequence[Any] | Mapping[str, Any]],
                                 *args: Any, **kwargs: Any) -> Iterator[ExecutionResult] | list[ExecutionResult]: ...
