"""Fixtures of the multi-node tests: a real 3-node Cassandra cluster on 127.0.0.1-3
(``tools/cluster.sh``; ``CQLCODEC_CLUSTER=127.0.0.1:<port>``), run by ``nox -s cluster``.

Without ``CQLCODEC_CLUSTER`` every test here is skipped.
"""

from __future__ import annotations

import os

import pytest
from cassandra.cluster import Cluster, Session

CLUSTER = os.environ.get("CQLCODEC_CLUSTER", "")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    here = os.path.dirname(__file__)
    skip = pytest.mark.skip(reason="set CQLCODEC_CLUSTER=127.0.0.1:port to run (tools/cluster.sh)")
    for item in items:
        if str(item.path).startswith(here) and not CLUSTER:
            item.add_marker(skip)


def connect_rf2(keyspace: str) -> tuple[Cluster, Session]:
    """A driver ``Cluster`` on the 3 nodes (its default policy: token-aware) and a session,
    with ``keyspace`` created (replication factor 2) unless it exists."""
    _host, _, port = CLUSTER.rpartition(":")
    cluster = Cluster(["127.0.0.1", "127.0.0.2", "127.0.0.3"], port=int(port),
                      connect_timeout=20, control_connection_timeout=20)
    s = cluster.connect()
    s.execute(f"CREATE KEYSPACE IF NOT EXISTS {keyspace} WITH replication = "
              "{'class': 'SimpleStrategy', 'replication_factor': 2}", timeout=120)
    return cluster, s
