"""Which hosts a request goes to, in order: the session's load-balancing policy decides.

The policy's ``make_query_plan`` is given the keyspace and a statement carrying the
request's routing key (token-aware policies find the replicas from the cluster's token
map); hosts that are down are skipped, as the driver skips them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from cassandra.policies import RoundRobinPolicy

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
    plan: Any
    if type(policy) is RoundRobinPolicy:
        plan = round_robin_plan(policy)
    else:
        stmt = request.statement
        if stmt is None:
            stmt = Routed(request.keyspace, request.table, request.routing_key)
        plan = policy.make_query_plan(session.keyspace, stmt)
    for host in plan:
        if host.is_up is not False:
            yield host


def first_host(plan: Iterator[Any]) -> Any:
    """The next host of ``plan`` (None: no more)."""
    for host in plan:
        return host
    return None


def round_robin_plan(policy: Any) -> list[Any]:
    """The driver's ``RoundRobinPolicy.make_query_plan()`` as a list: its live hosts from
    its next position on, the position moved on by one (the same hosts in the same order
    as its own plan, without a Python call)."""
    pos: int = policy._position
    policy._position = pos + 1
    hosts = list(policy._live_hosts)
    length = len(hosts)
    if not length:
        return hosts
    pos %= length
    return hosts[pos:] + hosts[:pos] if pos else hosts
