"""An asyncio program on cqlcodec.aio, checked by ``mypy --strict`` (the typecheck session)
and run against the test server by tests/integration/test_aio.py::test_the_example_program_runs.

    python tests/integration/aio_example.py 127.0.0.1:9042 keyspace
"""

from __future__ import annotations

import asyncio
import sys

from cassandra.cluster import Cluster, Session

import cqlcodec.driver
from cqlcodec import ColumnBatch, aio
from cqlcodec.driver import ColumnPages, InsertResult


async def summary(session: Session, keyspace: str) -> str:
    """Counts the rows of the ``paged`` table three ways, concurrently."""
    rows_task = asyncio.ensure_future(aio.execute(session, f"SELECT * FROM {keyspace}.paged"))
    pages: ColumnPages = await aio.execute_columns(session, f"SELECT p, c FROM {keyspace}.paged",
                                                   fetch_size=100)
    by_page = sum(len(batch) for batch in pages)
    streamed = 0
    async for batch in aio.stream_columns(session, f"SELECT p FROM {keyspace}.paged", limit=50):
        streamed += batch.num_rows
    scanned = 0
    async with aio.scan_table(session, f"{keyspace}.paged", ["p", "c"], fetch_size=64) as scan:
        async for one in scan:
            part: ColumnBatch = one
            scanned += len(part)
    rows = await rows_task
    session.execute(f"CREATE TABLE IF NOT EXISTS {keyspace}.aio_example (k int PRIMARY KEY, "
                    "v text)")
    insert = session.prepare(f"INSERT INTO {keyspace}.aio_example (k, v) VALUES (?, ?)")
    written: InsertResult = await aio.insert_columns(session, insert,
                                                     {"k": [1, 2], "v": ["a", "b"]})
    return f"{len(rows)} {by_page} {streamed} {scanned} {written.written}"


def main(argv: list[str]) -> None:
    host, _, port = argv[1].rpartition(":")
    cluster = Cluster([host], port=int(port))
    cqlcodec.driver.install(cluster)
    try:
        print(asyncio.run(summary(cluster.connect(), argv[2])))
    finally:
        cluster.shutdown()


if __name__ == "__main__":
    main(sys.argv)
