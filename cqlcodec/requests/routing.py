"""Which hosts a request goes to, in order: the session's load-balancing policy decides.

The policy's ``make_query_plan`` is given the keyspace and a statement carrying the
request's routing key (token-aware policies find the replicas from the cluster's token
map); hosts that are down are skipped, as the driver skips them. Two of the driver's
policies are followed here without a Python call per request: ``RoundRobinPolicy``, and
cassandra-driver's ``TokenAwarePolicy`` over its ``DCAwareRoundRobinPolicy`` (the
default), when their code is the code this module follows (checked once per class by
its source: scylla-driver's token-aware policy, which also routes by tablets, and any
other version or subclass are asked as they are).
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Iterator
from random import shuffle
from typing import Any, Final

from cassandra.policies import (
    DCAwareRoundRobinPolicy,
    HostDistance,
    RoundRobinPolicy,
    TokenAwarePolicy,
)

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


class HostPlan:
    """The hosts to try for a request, best first: an iterator of the driver's ``Host``
    objects that skips hosts that are down (except a host the caller named)."""

    def __init__(self, hosts: list[Any] | None, more: Iterator[Any] | None,
                 skip_down: bool = True, start: int = 0) -> None:
        # the plan as a list (RoundRobinPolicy, host=), from ``start`` round to the
        # position before it (the list is shared: never changed here), else None
        self._hosts = hosts
        self._start = start
        self._at = 0
        self._more = more  # else the policy's own plan
        self._skip_down = skip_down

    def __iter__(self) -> HostPlan:
        return self

    def __next__(self) -> Any:
        host = self.next_host()
        if host is None:
            raise StopIteration
        return host

    def next_host(self) -> Any:
        """The next host (None: no more)."""
        hosts = self._hosts
        if hosts is not None:
            length = len(hosts)
            while self._at < length:
                at = self._start + self._at
                host = hosts[at - length if at >= length else at]
                self._at += 1
                if not self._skip_down or host.is_up is not False:
                    return host
            return None
        more = self._more
        if more is not None:
            for host in more:
                if host.is_up is not False:
                    return host
        return None


def query_plan(session: Any, request: Request) -> HostPlan:
    """The hosts to try for ``request``; only ``request.host`` when it names one, as the
    driver's ``host=`` targeting does."""
    if request.host is not None:
        return HostPlan([request.host], None, False)
    policy = request.load_balancing
    if type(policy) is RoundRobinPolicy:
        hosts, start = round_robin_hosts(policy)
        return HostPlan(hosts, None, True, start)
    stmt = request.statement
    if stmt is None:
        stmt = Routed(request.keyspace, request.table, request.routing_key)
    if type(policy) is TokenAwarePolicy and followed(policy):
        return HostPlan(None, token_aware_plan(policy, session.keyspace, stmt))
    return HostPlan(None, iter(policy.make_query_plan(session.keyspace, stmt)))


def first_host(plan: Iterator[Any]) -> Any:
    """The next host of ``plan`` (None: no more)."""
    if isinstance(plan, HostPlan):
        return plan.next_host()
    for host in plan:
        return host
    return None


class _LiveHosts:
    """A round-robin policy's live hosts as a list, kept while the policy's frozenset is
    the same object (the driver makes a new one on every up or down): the set and its
    list in one tuple, replaced whole (loops of other threads may read it meanwhile)."""

    def __init__(self) -> None:
        self.pair: tuple[object, list[Any]] = (None, [])


_LIVE: Final = _LiveHosts()


def round_robin_hosts(policy: Any) -> tuple[list[Any], int]:
    """The driver's ``RoundRobinPolicy.make_query_plan()`` without a Python call: its live
    hosts (a list shared between calls, not to be changed) and the place to start from
    and go round to the one before it; the policy's position moved on by one."""
    pos: int = policy._position
    policy._position = pos + 1
    live = policy._live_hosts
    of, hosts = _LIVE.pair
    if live is not of:
        hosts = list(live)  # the same order as the policy's iteration of the set
        _LIVE.pair = (live, hosts)
    length = len(hosts)
    return hosts, pos % length if length else 0


# sha256 of the source of cassandra-driver's TokenAwarePolicy.make_query_plan,
# DCAwareRoundRobinPolicy.distance and DCAwareRoundRobinPolicy._dc that
# token_aware_plan follows (3.30.1)
_FOLLOWED_SOURCES: Final = frozenset({
    "2176981432fcde58cb6b8cbf7c27633e2a5ed5d9d22d826b5f6c426db604eafa",
})
_FOLLOWED: Final[dict[type, bool]] = {}


def source_digest(functions: list[Any]) -> str | None:
    """sha256 of the functions' source text (None when it cannot be read)."""
    try:
        text = "".join(inspect.getsource(f) for f in functions)
    except (OSError, TypeError):
        return None
    return hashlib.sha256(text.encode()).hexdigest()


def followed(policy: Any) -> bool:
    """Whether :func:`token_aware_plan` gives what ``policy.make_query_plan`` gives: a
    ``TokenAwarePolicy`` over a ``DCAwareRoundRobinPolicy``, both of the code followed."""
    child = getattr(policy, "_child_policy", None)
    if type(child) is not DCAwareRoundRobinPolicy:
        return False
    known = _FOLLOWED.get(TokenAwarePolicy)
    if known is None:
        digest = source_digest([TokenAwarePolicy.make_query_plan,
                                DCAwareRoundRobinPolicy.distance, DCAwareRoundRobinPolicy._dc])
        known = digest in _FOLLOWED_SOURCES
        _FOLLOWED[TokenAwarePolicy] = known
    return known


def token_aware_plan(policy: Any, working_keyspace: str | None, query: Any) -> Iterator[Any]:
    """``policy.make_query_plan(working_keyspace, query)`` of a policy :func:`followed`:
    the replicas of the routing key that are up and in the local datacenter (shuffled
    when the policy says so), then the child policy's plan without them (a replica
    there only when remote)."""
    keyspace = query.keyspace if query.keyspace else working_keyspace
    child: Any = policy._child_policy
    routing_key = query.routing_key
    if routing_key is None or keyspace is None:
        for host in child.make_query_plan(keyspace, query):
            yield host
        return
    replicas = policy._cluster_metadata.get_replicas(keyspace, routing_key)
    if policy.shuffle_replicas:
        shuffle(replicas)
    for replica in replicas:
        # child.distance(replica) == LOCAL: its datacenter (else the local one) is local
        if replica.is_up and (replica.datacenter or child.local_dc) == child.local_dc:
            yield replica
    for host in child.make_query_plan(keyspace, query):
        if host not in replicas or child.distance(host) == HostDistance.REMOTE:
            yield host
