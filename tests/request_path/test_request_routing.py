"""The request path's own plan for cassandra-driver's default policy
(``TokenAwarePolicy`` over ``DCAwareRoundRobinPolicy``) against the policy's
``make_query_plan``: the same hosts in the same order for any hosts, datacenters, hosts
down, replicas and routing keys, the replicas shuffled alike; other policies are asked."""

from __future__ import annotations

import random
from typing import Any

import pytest

pytest.importorskip("cassandra")

from cassandra.policies import (  # noqa: E402
    DCAwareRoundRobinPolicy,
    SimpleConvictionPolicy,
    TokenAwarePolicy,
)
from cassandra.pool import Host  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from cqlcodec.requests.routing import (  # noqa: E402
    HostPlan,
    Routed,
    first_host,
    followed,
    token_aware_plan,
)


class _Metadata:
    def __init__(self, replicas: dict[bytes, list[Any]]) -> None:
        self.replicas = replicas

    def get_replicas(self, keyspace: str, key: bytes) -> list[Any]:
        return list(self.replicas.get(key, []))  # a new list each time, as the driver's


class _Cluster:
    def __init__(self, metadata: _Metadata) -> None:
        self.metadata = metadata


def _hosts(dcs: list[str | None], up: list[bool | None]) -> list[Any]:
    hosts = []
    for i, (dc, is_up) in enumerate(zip(dcs, up)):
        host = Host(f"127.0.0.{i + 1}:9042", SimpleConvictionPolicy, datacenter=dc, rack="r1")
        host.is_up = is_up
        hosts.append(host)
    return hosts


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_the_same_plan_as_the_policys_own(data: st.DataObject) -> None:
    n = data.draw(st.integers(1, 7))
    dcs = data.draw(st.lists(st.sampled_from(["dc1", "dc2", None]), min_size=n, max_size=n))
    up = data.draw(st.lists(st.sampled_from([True, False, None]), min_size=n, max_size=n))
    hosts = _hosts(dcs, up)
    keys = {b"k%d" % i: data.draw(st.lists(st.sampled_from(hosts), max_size=3, unique=True))
            for i in range(3)}
    child = DCAwareRoundRobinPolicy("dc1", used_hosts_per_remote_dc=data.draw(st.integers(0, 2)))
    policy = TokenAwarePolicy(child, shuffle_replicas=data.draw(st.booleans()))
    policy.populate(_Cluster(_Metadata(keys)), hosts)
    assert followed(policy)
    key = data.draw(st.sampled_from([*keys, b"nowhere", None]))
    keyspace = data.draw(st.sampled_from(["ks", None]))
    working = data.draw(st.sampled_from(["ks", None]))
    position = data.draw(st.integers(0, 10))
    seed = data.draw(st.integers(0, 2**32))
    plans = []
    for make in (policy.make_query_plan, lambda ks, q: token_aware_plan(policy, ks, q)):
        child._position = position
        random.seed(seed)
        plans.append(list(make(working, Routed(keyspace, "t", key))))
    assert plans[0] == plans[1]


def test_other_policies_are_not_followed() -> None:
    class Own(DCAwareRoundRobinPolicy):
        pass

    assert not followed(TokenAwarePolicy(Own("dc1")))
    assert followed(TokenAwarePolicy(DCAwareRoundRobinPolicy("dc1")))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from([True, False, None]), min_size=0, max_size=6),
       st.booleans(), st.booleans())
def test_a_host_plan_gives_its_hosts_in_order_without_the_down_ones(
        up: list[bool | None], as_list: bool, skip_down: bool) -> None:
    hosts = _hosts(["dc1"] * len(up), up)
    expected = [h for h in hosts if not skip_down or h.is_up is not False]
    plan = HostPlan(hosts, None, skip_down) if as_list else HostPlan(None, iter(hosts))
    if not as_list:
        expected = [h for h in hosts if h.is_up is not False]
    assert first_host(plan) is (expected[0] if expected else None)
    assert list(plan) == expected[1:]
    assert plan.next_host() is None and first_host(plan) is None
    with pytest.raises(StopIteration):
        next(plan)
    other = iter(hosts)  # any other iterator (a speculative execution's view of a plan)
    assert first_host(other) is (hosts[0] if hosts else None)
