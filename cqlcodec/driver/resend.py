"""Rows whose write failed for a passing reason, written again until they are written or
the work's :class:`~cqlcodec.driver.outage.Patience` gives up.

A row that timed out, found no replica or lost its connection is sent again; what the
server refused stays a failure. A timeout is not a failure: the first write may have
landed, so only writes that give the same result when repeated come here. Inserts
without a write time of their own are: the driver gives every request a newer client
timestamp, so a list written again replaces the first copy. Writes with the source's
write times (:mod:`cqlcodec.driver.cell_times`) are not, for non-frozen lists, and
retry through :mod:`cqlcodec.driver.list_repeats` instead. Counter updates are not
idempotent and never come here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from cassandra import OperationTimedOut, Unavailable, WriteTimeout
from cassandra.cluster import NoHostAvailable, Session
from cassandra.connection import ConnectionException
from cassandra.query import PreparedStatement

from cqlcodec.driver.columns import InsertFailure, StatementFor, insert_columns
from cqlcodec.driver.outage import Patience
from cqlcodec.driver.row_take import take_chunk_rows

__all__ = ["RETRYABLE", "insert_until_written", "prepare_patiently"]

RETRYABLE: Final = (WriteTimeout, OperationTimedOut, Unavailable, NoHostAvailable,
                    ConnectionException, OSError)


def prepare_patiently(session: Session, cql: str,
                      patience: Patience) -> PreparedStatement | tuple[Exception, str]:
    """``cql`` prepared, again while the cluster is unreachable and ``patience`` lasts;
    else the last error and why it was not tried again."""
    while True:
        try:
            return session.prepare(cql)
        except RETRYABLE as exc:
            reason = patience.wait_to_retry()
            if reason is not None:
                return exc, reason


def insert_until_written(session: Session, pa: Any, statement: PreparedStatement,
                         chunk: Mapping[str, Any], failures: list[InsertFailure],
                         patience: Patience, *, concurrency: int, batch_by_replica: bool,
                         batch_bytes: int, batch_by_partition: bool = False,
                         nulls: str = "unset", statement_for: StatementFor | None = None
                         ) -> tuple[list[InsertFailure], int]:
    """Sends the rows of ``chunk`` that failed with a :data:`RETRYABLE` error again
    (waiting between rounds as ``patience`` says) and returns what still failed, by row
    of ``chunk``, and the requests the rounds sent. The batching options are those of
    :func:`~cqlcodec.driver.insert_columns`, and so are ``nulls`` and ``statement_for``."""
    requests = 0
    while True:
        again = [f.row for f in failures if isinstance(f.error, RETRYABLE)]
        if not again or patience.wait_to_retry() is not None:
            return failures, requests
        kept = [f for f in failures if not isinstance(f.error, RETRYABLE)]
        retried = insert_columns(session, statement, take_chunk_rows(pa, chunk, again),
                                 concurrency=max(1, concurrency // 4),
                                 batch_by_replica=batch_by_replica,
                                 batch_by_partition=batch_by_partition, batch_bytes=batch_bytes,
                                 chunk_rows=len(again), raise_on_error=False, nulls=nulls,
                                 statement_for=statement_for)
        requests += retried.requests
        if len(retried.failures) < len(again):
            patience.progressed()
        failures = kept + [InsertFailure(again[f.row], f.error) for f in retried.failures]
