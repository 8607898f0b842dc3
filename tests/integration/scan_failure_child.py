"""A table scan whose later splits fail while the reader holds the earlier pages, in its
own process (see test_scan_release.py).

``python scan_failure_child.py MODE HOST PORT KEYSPACE``: creates a table, starts
``scan_table`` on it one split at a time and drops the table once the first page has
arrived, so that a later split fails. MODE ``pyarrow`` collects with ``to_arrow()``;
MODE ``ctypes`` blocks pyarrow before cqlcodec is imported and collects with
``to_polars()``. Prints ``caught ScanError`` when the scan's error reached the handler.
"""

from __future__ import annotations

import sys

MODE, HOST, PORT, KEYSPACE = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
if MODE == "ctypes":
    sys.modules["pyarrow"] = None  # type: ignore[assignment]

from cassandra.cluster import Cluster  # noqa: E402
from cassandra.concurrent import execute_concurrent_with_args  # noqa: E402

from cqlcodec.driver import ScanError, ScanProgress, scan_table  # noqa: E402

TABLE = f"{KEYSPACE}.release_scan_{MODE}"

cluster = Cluster([HOST], port=PORT, connect_timeout=20, control_connection_timeout=20)
session = cluster.connect()
session.default_timeout = 60
session.execute(f"DROP TABLE IF EXISTS {TABLE}")
session.execute(f"CREATE TABLE {TABLE} (p int PRIMARY KEY, s text, v double)")
insert = session.prepare(f"INSERT INTO {TABLE} (p, s, v) VALUES (?, ?, ?)")
execute_concurrent_with_args(session, insert, [(i, f"row {i}", i / 3) for i in range(2000)])
dropped: list[bool] = []


def drop_after_the_first_page(progress: ScanProgress) -> None:
    if not dropped:
        dropped.append(True)
        session.execute(f"DROP TABLE {TABLE}")


scan = scan_table(session, TABLE, splits=16, concurrency=1, fetch_size=50,
                  progress=drop_after_the_first_page)
try:
    got = scan.to_arrow() if MODE == "pyarrow" else scan.to_polars()
    print(f"no error: {len(got)} rows", flush=True)
except ScanError:
    print("caught ScanError", flush=True)
finally:
    cluster.shutdown()
