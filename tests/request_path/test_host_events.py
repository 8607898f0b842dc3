"""The request path's listener of the driver's host events (cqlcodec/requests/pool.py)."""

from __future__ import annotations

import asyncio
from typing import Any

from cassandra.cluster import Cluster

from cqlcodec.requests.pool import HostEvents


def test_a_listener_whose_loop_closed_leaves_the_cluster() -> None:
    cluster = Cluster(contact_points=["127.0.0.1"])  # never connected
    loop = asyncio.new_event_loop()
    seen: list[Any] = []
    events = HostEvents(loop, cluster, seen.append, seen.append)
    cluster.register_listener(events)
    try:
        events.on_up("host")  # the loop is open: handed to it
        loop.run_until_complete(asyncio.sleep(0))
        assert seen == ["host"] and events in cluster.listeners
    finally:
        loop.close()
    events.on_remove("host")  # a FastSession never closed, its loop gone
    assert seen == ["host"] and events not in cluster.listeners
    events.on_up("host")  # told again: nothing to do, no error
    cluster.shutdown()
