"""Fixtures of the multi-node tests: a real 3-node Cassandra cluster on 127.0.0.1-3
(``tools/cluster.sh``; ``CQLCODEC_CLUSTER=127.0.0.1:<port>``), run by ``nox -s cluster``.

Without ``CQLCODEC_CLUSTER`` every test here is skipped.
"""

from __future__ import annotations

import os

import pytest

CLUSTER = os.environ.get("CQLCODEC_CLUSTER", "")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    here = os.path.dirname(__file__)
    skip = pytest.mark.skip(reason="set CQLCODEC_CLUSTER=127.0.0.1:port to run (tools/cluster.sh)")
    for item in items:
        if str(item.path).startswith(here) and not CLUSTER:
            item.add_marker(skip)
