"""The native clients ``server_io.py --only peers`` measures against cqlcodec.

Each peer reads what cqlcodec reads, its own way, on protocol v4 (the only one they
speak): ``vectors`` (20,000 rows of ``vector<float, 768>`` into one float32 matrix),
``mixed`` (the mixed rows into a pandas DataFrame, from the peer's rows) and ``rows``
(the peer's rows as Python lists, nothing after). ``open_peer`` connects (outside the
measurement) and returns the read to time, run all three in one event loop (the peers'
sessions need a running loop, even rsylla's synchronous one); a peer that is not installed or cannot do a
read raises :class:`PeerCannot` with the reason, which the benchmark's cell shows.

- acsylla 1.2.0 (the C++ driver): pages of ``FETCH_SIZE`` rows; vectors come as the raw
  cell bytes (big-endian floats), turned into the matrix with numpy; it cannot decode
  ``decimal`` (``UNREADABLE``).
- scyllapy 1.3.3 (scylla-rust-driver 0.12): one unpaged query (it has no page size, and
  its paged iteration is far slower); rows are dicts.
- rsylla 0.1.1 (scylla-rust-driver 1.4): one query, rows as lists.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

# column types a peer fails to decode: its mixed reads leave those columns out (less work
# than cqlcodec does, so a ratio against it is on the peer's side), and the cell says so
UNREADABLE = {"acsylla": {"decimal": "acsylla 1.2.0 fails on decimal cells (UnicodeDecodeError)"}}
PACKAGES = {"acsylla": "acsylla==1.2.0", "scyllapy": "scyllapy==1.3.3", "rsylla": "rsylla==0.1.1"}


class PeerCannot(Exception):
    """The peer is not installed or cannot do this read; the message says why."""


Read = Callable[[], Awaitable[Any]]
Close = Callable[[], Awaitable[None]]


async def open_peer(peer: str, what: str, host: str, port: int, keyspace: str, query: str, dim: int,
                    fetch_size: int) -> tuple[Read, Close]:
    """Connect ``peer`` and return (the read ``what`` of ``query``, close)."""
    try:
        module = __import__(peer)
    except ImportError as exc:
        raise PeerCannot(f"{PACKAGES[peer]} not installed here ({exc})") from exc
    opener = {"acsylla": _acsylla, "scyllapy": _scyllapy, "rsylla": _rsylla}[peer]
    return await opener(module, what, host, port, keyspace, query, dim, fetch_size)


def _vector_matrix(cells: list[bytes], dim: int) -> Any:
    import numpy

    return numpy.frombuffer(b"".join(cells), dtype=">f4").reshape(-1, dim).astype(numpy.float32)


async def _acsylla(acsylla: Any, what: str, host: str, port: int, keyspace: str, query: str, dim: int,
             fetch_size: int) -> tuple[Read, Close]:
    cluster = acsylla.create_cluster([host], port=port, protocol_version=4, request_timeout=120)
    session = await cluster.create_session(keyspace=keyspace)

    async def pages() -> Any:
        statement = acsylla.create_statement(query, page_size=fetch_size, native_types=True)
        while True:
            result = await session.execute(statement)
            yield result
            if not result.has_more_pages():
                return
            statement.set_page_state(result.page_state())

    async def read() -> Any:
        if what == "vectors":
            cells = [row.column_value_by_index(0) async for page in pages() for row in page]
            if cells and not isinstance(cells[0], bytes):
                raise PeerCannot(f"acsylla gives vector cells as {type(cells[0]).__name__}")
            return _vector_matrix(cells, dim)
        names: list[str] = []
        rows: list[tuple[Any, ...]] = []
        async for page in pages():
            names = page.columns_names()
            rows.extend(row.as_tuple() for row in page)
        if what == "rows":
            return rows
        import pandas

        return pandas.DataFrame(rows, columns=names)

    return read, session.close


async def _scyllapy(scyllapy: Any, what: str, host: str, port: int, keyspace: str, query: str, dim: int,
              fetch_size: int) -> tuple[Read, Close]:
    scylla = scyllapy.Scylla([f"{host}:{port}"], keyspace=keyspace)
    await scylla.startup()

    async def read() -> Any:
        rows = (await scylla.execute(scyllapy.Query(query, request_timeout=120_000))).all()
        if what == "vectors":
            cells = [row["v"] for row in rows]
            if cells and not isinstance(cells[0], bytes):
                raise PeerCannot(f"scyllapy gives vector cells as {type(cells[0]).__name__}")
            return _vector_matrix(cells, dim)
        if what == "rows":
            return rows
        import pandas

        return pandas.DataFrame(rows)

    async def close() -> None:
        await scylla.shutdown()

    return read, close


async def _rsylla(rsylla: Any, what: str, host: str, port: int, keyspace: str, query: str, dim: int,
            fetch_size: int) -> tuple[Read, Close]:
    session = await rsylla.SessionBuilder().known_node(f"{host}:{port}").use_keyspace(keyspace, False).build()

    async def read() -> Any:
        result = await session.execute(query)
        if what == "vectors":
            cells = [row[0] for row in result.rows()]
            if cells and not isinstance(cells[0], bytes):
                raise PeerCannot(f"rsylla gives vector<float, {dim}> cells as {type(cells[0]).__name__} "
                                 f"({str(cells[0])[:40]!r}...), not numbers")
            return _vector_matrix(cells, dim)
        rows = [row.columns() for row in result.rows()]
        if what == "rows":
            return rows
        import pandas

        return pandas.DataFrame(rows, columns=[spec["name"] for spec in result.col_specs()])

    async def close() -> None:
        pass

    return read, close
