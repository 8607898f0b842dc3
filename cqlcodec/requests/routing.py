"""Which hosts a request goes to, in order: the session's load-balancing policy decides.

The policy's ``make_query_plan`` is given the keyspace and a statement carrying the
request's routing key (token-aware policies find the replicas from the cluster's token
map); hosts that are down are skipped, as the driver skips them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from cqlcodec.requests.statements import Request


class Routed:
    """What a load-balancing policy reads of a statement: its keyspace, table and routing
    key (the driver statement itself when the caller gave one)."""

    def __init__(self, keyspace: str | None, table: str | None, routing_key: bytes | None) -> None:
        self.keyspace = keyspace
        self.table = table
        self.routing_key = routing_key
        self.is_idempotent = False

    def is_lwt(self) -> bool:
        """scylla-driver's policies ask; the request path does not know (False)."""
        return False


def query_plan(session: Any, request: Request) -> Iterator[Any]:
    """The hosts to try for ``request``, best first (the driver's ``Host`` objects); only
    ``request.host`` when it names one, as the driver's ``host=`` targeting does."""
    if request.host is not None:
        yield request.host
        return
    policy = request.settings.load_balancing
    stmt = request.statement
    if stmt is None:
        stmt = Routed(request.keyspace, request.table, request.routing_key)
    for host in policy.make_query_plan(session.keyspace, stmt):
        if host.is_up is not False:
            yield host
