"""The documentation's examples marked ``# needs: server`` run against the test server.

tests/docs/test_doc_examples.py runs every other example of a page; here a page's
``python`` blocks all run in order (the server ones too) in one namespace, in a fresh
working directory, with what the pages take as given:

- ``session`` (keyspace ``shop``) and ``cluster`` on the test server, and the ``shop``
  keyspace with the tables the examples read and write (``SHOP_TABLES``), refilled per page;
- the names a page's prose introduces before its examples (``GIVEN``: a prepared
  statement, a matrix, a second session for a migration, ...);
- the contact points: an example's addresses (``"10.0.0.1"``, ...) and port 9042 are the
  test server's (``_at_test_server``); everything else runs as printed.

The pages whose examples need Dask or Ray (``# needs: server, dask, ray``) run in the
``ray`` session (``CQLCODEC_DOCS_ENGINES=1``; it installs both), every other page in the
integration sessions; a module a collected page needs that is missing fails, nothing is
skipped. The count of blocks run is printed at the end of the run (tests/integration/
conftest.py: ``docs examples that need a server: N blocks of M pages run``).
"""

from __future__ import annotations

import ast
import asyncio
import importlib.util
import inspect
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import ADDRESS, new_cluster

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "docs"))
from doc_pages import ROOT, CodeBlock, code_blocks, pages  # noqa: E402

SHOP_TABLES = {
    "orders": "id int PRIMARY KEY, customer text, total double",
    "orders_copy": "id int PRIMARY KEY, customer text, total double",
    "items": "shop text, id int, name text, price double, description text, "
             "PRIMARY KEY (shop, id)",
    "expensive": "shop text, id int, price double, PRIMARY KEY (shop, id)",
    "item_embeddings": "id int PRIMARY KEY, embedding vector<float, 3>",
    "events": "id int PRIMARY KEY, at timestamp, kind text",
    "embeddings": "id int PRIMARY KEY, embedding vector<float, 768>",
    "emb": "id int PRIMARY KEY, v vector<float, 768>",
    "sessions": "id int PRIMARY KEY, user text, data text",
}
ROWS = 50

# what a page's text introduces before its examples, by page
GIVEN = {
    "README.md": "",
    "docs/guide/columnar-io.md": """
import numpy as np
import polars
import pyarrow
import pyarrow.parquet
from cqlcodec.driver import execute_columns

prepared = session.prepare("SELECT * FROM shop.orders WHERE id = ?")
writer = pyarrow.parquet.ParquetWriter(
    "orders.parquet", pyarrow.record_batch(next(iter(execute_columns(session, prepared, [7])))).schema)
query = "SELECT id, total FROM shop.orders"
ann_query = "SELECT id, embedding FROM shop.embeddings LIMIT 3"
insert_items = session.prepare("INSERT INTO shop.items (shop, id, name, price) VALUES (?, ?, ?, ?)")
frame = {"shop": ["north"] * 3, "id": [100, 101, 102], "name": ["a", "b", "c"], "price": [1.0, 2.0, 3.0]}
from cqlcodec import ColumnSpec, Prepared, parse_type
item_columns = [ColumnSpec("shop", "items", "id", parse_type("int")),
                ColumnSpec("shop", "items", "name", parse_type("text"))]
cqlcodec_prepared = Prepared(bind_columns=item_columns, result_columns=[], pk_indexes=[0])
ids, names = [1, 2], ["lamp", "desk"]
""",
    "docs/guide/dask-ray.md": """
import pyarrow

secret = "never-printed"

def embed(batch):
    ids = batch.column("id")
    return pyarrow.table({"id": ids, "embedding": [[float(i), 0.5, 1.0] for i in ids.to_pylist()]})
""",
    "docs/guide/migrations.md": "old_session = new_session = session\n",
    "docs/guide/whole-tables.md": """
import sys
import duckdb
import pyarrow
from cqlcodec.driver import plan_splits, read_split

worker_session = session
""",
}


def _shop(session: Any) -> None:
    """The ``shop`` keyspace, its tables emptied and filled: ROWS orders, items in two
    shops, events, embeddings, sessions (some cells with a TTL)."""
    session.execute("CREATE KEYSPACE IF NOT EXISTS shop WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    for name, columns in SHOP_TABLES.items():
        session.execute(f"CREATE TABLE IF NOT EXISTS shop.{name} ({columns})")
        session.execute(f"TRUNCATE shop.{name}")
    run = session.execute
    for k in range(ROWS):
        run("INSERT INTO shop.orders (id, customer, total) VALUES (%s, %s, %s)",
            (k, f"customer {k % 7}", k * 2.5))
        run("INSERT INTO shop.items (shop, id, name, price, description) VALUES (%s, %s, %s, %s, %s)",
            ("north" if k % 2 else "south", k, f"item {k}", float(k), f"a thing called {k}"))
        run("INSERT INTO shop.events (id, at, kind) VALUES (%s, toTimestamp(now()), %s)",
            (k, "click"))
        run("INSERT INTO shop.sessions (id, user, data) VALUES (%s, %s, %s) USING TTL 86400",
            (k, f"user {k}", "x" * k))
    vector = [0.25] * 768
    for k in range(5):
        run("INSERT INTO shop.embeddings (id, embedding) VALUES (%s, %s)", (k, vector))
        run("INSERT INTO shop.emb (id, v) VALUES (%s, %s)", (k, vector))


def _files(session: Any) -> None:
    """The files the loading guide reads: a directory of Parquet files and a JSON lines
    file with one bad row (the budget example's)."""
    import json

    from cqlcodec.driver import scan_table

    scan_table(session, "shop.orders").to_parquet("exports/orders/")
    with open("orders.jsonl", "w", encoding="utf-8") as f:
        for k in range(ROWS):
            total: object = "not a number" if k == 13 else k * 2.5
            f.write(json.dumps({"id": k, "customer": f"customer {k}", "total": total}) + "\n")


def _at_test_server(code: str, host: str, port: int) -> str:
    """The example with its addresses replaced by the test server's: every IPv4 literal
    is ``host`` (a list of them one entry), port 9042 is ``port``, and a ``Cluster([...])``
    without a port gets it."""
    code = re.sub(r'"\d{1,3}(?:\.\d{1,3}){3}"', f'"{host}"', code)
    code = re.sub(rf'"{re.escape(host)}"(?:\s*,\s*"{re.escape(host)}")+', f'"{host}"', code)
    code = re.sub(r"\b9042\b", str(port), code)
    return re.sub(r"Cluster\((\[[^\]]*\])\)", rf"Cluster(\1, port={port})", code)


# the modules of the engine pages: those pages run in the ray session (Dask and Ray are
# both installed there, CQLCODEC_DOCS_ENGINES=1), the other pages in the integration sessions
ENGINE_MODULES = frozenset({"dask", "distributed", "ray"})
ENGINES = os.environ.get("CQLCODEC_DOCS_ENGINES") == "1"


def _needs(page: Path) -> set[str]:
    return {n for b in code_blocks(page) for n in b.needs if n != "server"}


ALL_PAGES = [p for p in pages() if any("server" in b.needs for b in code_blocks(p))]
# README.md last: dask-ray.md calls ray.init(), README's Ray Data read uses that Ray
PAGES = sorted((p for p in ALL_PAGES if bool(_needs(p) & ENGINE_MODULES) == ENGINES),
               key=lambda p: p.name == "README.md")
_ran: list[str] = []


def ran_blocks() -> list[str]:
    """The server blocks run so far in this process (the summary line of conftest)."""
    return list(_ran)


@pytest.fixture(scope="module", autouse=True)
def _ray_stopped() -> Iterator[None]:
    """Ray, started by an example (``ray.init()`` or Ray Data's own), is shut down once
    the pages have run (one start for all of them)."""
    yield
    ray = sys.modules.get("ray")
    if ray is not None and ray.is_initialized():
        ray.shutdown()


@pytest.fixture()
def shop_session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Any, Any]]:
    """(cluster, session) on the test server with cqlcodec installed, keyspace ``shop``
    filled, in a fresh working directory holding the loading guide's files."""
    import cqlcodec.driver

    monkeypatch.chdir(tmp_path)
    cluster = new_cluster(5)
    cqlcodec.driver.install(cluster)
    session = cluster.connect()
    _shop(session)
    session.set_keyspace("shop")
    _files(session)
    yield cluster, session
    cluster.shutdown()


def _run(block: CodeBlock, namespace: dict[str, Any], host: str, port: int) -> None:
    code = _at_test_server(block.code, host, port)
    compiled = compile(code, block.id, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    try:
        outcome = eval(compiled, namespace)  # noqa: S307 - the documentation's own example
        if inspect.iscoroutine(outcome):  # a block with a top-level await
            asyncio.run(outcome)
    except Exception as exc:
        raise AssertionError(f"the example at {block.id} failed: {exc!r}\n{code}") from exc


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_server_examples_run(page: Path, shop_session: tuple[Any, Any]) -> None:
    cluster, session = shop_session
    host, _, port = ADDRESS.rpartition(":")
    relative = str(page.relative_to(ROOT))
    namespace: dict[str, Any] = {"__name__": f"docs_example_{page.stem.replace('-', '_')}",
                                 "cluster": cluster, "session": session}
    exec(compile(GIVEN.get(relative, ""), f"GIVEN[{relative}]", "exec"), namespace)
    try:
        for block in code_blocks(page):
            _run(block, namespace, host or "127.0.0.1", int(port or "9042"))
            if "server" in block.needs:
                _ran.append(block.id)
    finally:
        _close(namespace, cluster)


def _close(namespace: dict[str, Any], fixture_cluster: Any) -> None:
    """Close what the examples opened: clusters, Dask clients, files (Ray stays up for
    the next page: ``_ray_stopped``)."""
    for value in list(namespace.values()):
        closer = None
        if type(value).__name__ == "Cluster" and value is not fixture_cluster:
            closer = value.shutdown
        elif type(value).__name__ in ("Client", "ParquetWriter", "BadRowsFile"):
            closer = value.close
        if closer is not None:
            try:
                closer()
            except Exception:  # noqa: BLE001 - closing twice or after a failure
                pass


def test_every_module_the_pages_need_is_here() -> None:
    """Nothing is skipped: every module the collected pages need is installed (the
    integration sessions install duckdb for whole-tables.md; the ray session Dask)."""
    missing = {str(p.relative_to(ROOT)): sorted(n for n in _needs(p)
                                                 if importlib.util.find_spec(n) is None)
               for p in PAGES}
    assert {page: m for page, m in missing.items() if m} == {}
    assert PAGES, "no page with a server example collected"
