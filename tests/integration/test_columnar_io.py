"""Columnar IO against a real Cassandra 5: ``execute_columns`` (pages into ColumnBatches,
pandas, polars, pyarrow) and ``insert_columns`` (DataFrames and numpy matrices into
tables), each compared with the driver's own row path, with and without ``install``,
at protocol v4 and v5, with the session's protocol handler (Cython where the driver
has it) and with the driver's pure-Python one."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from cassandra.cluster import Session
from cassandra.protocol import _ProtocolHandler

import cqlcodec
import cqlcodec.driver
from cqlcodec.driver import InsertError, execute_columns, insert_columns

from .compare import assert_plain_equal
from .conftest import SessionPair
from .data import ANN_POINTS, COLUMN_NAMES, EVERYTHING_COLUMNS, PAGED_PARTITIONS, PAGED_ROWS_PER_PARTITION

pytestmark = pytest.mark.integration
pa = pytest.importorskip("pyarrow")  # to_arrow and the table comparisons

EVERYTHING_KEYS = (1, 2, 3)
COPY_OFFSET = 5000
SELECT_EVERYTHING = f"SELECT k, {', '.join(COLUMN_NAMES)} FROM everything WHERE k IN (1, 2, 3)"


@pytest.fixture(scope="module")
def tables(pair: SessionPair) -> None:
    """The tables these tests write (created once, on the first session pair)."""
    s = pair.plain
    columns = ", ".join(f"{name} {cql}" for name, cql in EVERYTHING_COLUMNS)
    for ddl in [f"CREATE TABLE IF NOT EXISTS columnar_copy (k int PRIMARY KEY, {columns})",
                "CREATE TABLE IF NOT EXISTS columnar_ck (p int, c int, v text, PRIMARY KEY (p, c))",
                "CREATE TABLE IF NOT EXISTS columnar_emb (k int PRIMARY KEY, v vector<float, 16>)"]:
        s.execute(ddl, timeout=60)


@pytest.fixture(params=["installed", "plain", "pure-handler"])
def session(request: pytest.FixtureRequest, pair: SessionPair, tables: None) -> Iterator[Session]:
    """A session with cqlcodec installed, the driver alone, and the driver alone decoding
    with its pure-Python protocol handler (no Cython RESULT parser)."""
    if request.param == "installed":
        yield pair.codec
        return
    s = pair.plain
    if request.param == "plain":
        yield s
        return
    saved = s.client_protocol_handler
    s.client_protocol_handler = _ProtocolHandler
    try:
        yield s
    finally:
        s.client_protocol_handler = saved


def _by_key(pylists: dict[str, list[Any]]) -> dict[int, dict[str, Any]]:
    keys = pylists["k"]
    return {k: {name: values[i] for name, values in pylists.items()} for i, k in enumerate(keys)}


def _driver_rows(pair: SessionPair, query: str) -> dict[int, Any]:
    return {row.k: row for row in pair.plain.execute(query)}


def _batch_pylists(pages: Any) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for batch in pages:
        for column in batch:
            out.setdefault(column.name, []).extend(column.to_pylist())
    return out


def test_read_every_type_like_the_row_path(pair: SessionPair, session: Session) -> None:
    pages = execute_columns(session, SELECT_EVERYTHING)
    got = _by_key(_batch_pylists(pages))
    want = _driver_rows(pair, SELECT_EVERYTHING)
    assert sorted(got) == sorted(want) == list(EVERYTHING_KEYS)
    for k, row in want.items():
        for name in COLUMN_NAMES:
            assert_plain_equal(getattr(row, name), got[k][name], f"k={k} {name}")


def test_read_into_dataframes(session: Session) -> None:
    pytest.importorskip("pandas")
    pytest.importorskip("polars")
    table = execute_columns(session, SELECT_EVERYTHING).to_arrow()
    assert table.num_rows == 3 and table.column_names == ["k", *COLUMN_NAMES]
    assert str(table.schema.field("v_float_big").type) == "fixed_size_list<item: float>[1536]"
    frame = execute_columns(session, SELECT_EVERYTHING).to_pandas()
    assert frame.shape == (3, 1 + len(COLUMN_NAMES))
    assert sorted(frame["k"].tolist()) == list(EVERYTHING_KEYS)
    polars_frame = execute_columns(session, SELECT_EVERYTHING).to_polars()
    assert polars_frame.shape == (3, 1 + len(COLUMN_NAMES))
    streamed = pa.RecordBatchReader.from_stream(execute_columns(session, SELECT_EVERYTHING)).read_all()
    assert streamed.equals(table)


@pytest.mark.parametrize("via", ["pandas", "pyarrow", "batches"])
def test_every_type_round_trips_through_a_dataframe(pair: SessionPair, session: Session, via: str) -> None:
    """Read with execute_columns, write the frame back with insert_columns (keys moved),
    read both tables again: the copy equals the original, value for value, in the
    columnar path and in the driver's row path."""
    if via == "pandas":
        pytest.importorskip("pandas")
    original = execute_columns(session, SELECT_EVERYTHING)
    frame: Any
    if via == "pandas":
        frame = original.to_pandas()
        frame["k"] = frame["k"] + COPY_OFFSET
    else:
        table = original.to_arrow()
        k = pa.compute.add(table.column("k"), pa.scalar(COPY_OFFSET, pa.int32()))
        table = table.set_column(0, "k", k)
        frame = table if via == "pyarrow" else {name: table.column(name) for name in table.column_names}
    names = ", ".join(["k", *COLUMN_NAMES])
    insert = session.prepare(f"INSERT INTO columnar_copy ({names}) VALUES "
                             f"({', '.join('?' for _ in range(1 + len(COLUMN_NAMES)))})")
    result = insert_columns(session, insert, frame, concurrency=4)
    assert result.written == 3 and not result.failures
    copy_query = (f"SELECT {names} FROM columnar_copy WHERE k IN "
                  f"({', '.join(str(k + COPY_OFFSET) for k in EVERYTHING_KEYS)})")
    copied = _by_key(_batch_pylists(execute_columns(session, copy_query)))
    source = _by_key(_batch_pylists(execute_columns(session, SELECT_EVERYTHING)))
    for k in EVERYTHING_KEYS:
        for name in COLUMN_NAMES:
            assert copied[k + COPY_OFFSET][name] == source[k][name] or _both_nan(
                copied[k + COPY_OFFSET][name], source[k][name]), f"k={k} {name}"
    driver_copy = _driver_rows(pair, copy_query)
    driver_source = _driver_rows(pair, SELECT_EVERYTHING)
    for k in EVERYTHING_KEYS:
        for name in COLUMN_NAMES:
            assert_plain_equal(getattr(driver_copy[k + COPY_OFFSET], name), source[k][name],
                               f"driver k={k} {name}")
            assert repr(getattr(driver_copy[k + COPY_OFFSET], name)) == repr(
                getattr(driver_source[k], name)), f"driver row path k={k} {name}"


def _both_nan(a: Any, b: Any) -> bool:
    return isinstance(a, float) and isinstance(b, float) and a != a and b != b


def test_three_pages_equal_one_page(session: Session) -> None:
    query = "SELECT p, c, label, score, tags FROM paged"
    total = PAGED_PARTITIONS * PAGED_ROWS_PER_PARTITION
    paged = execute_columns(session, query, fetch_size=total // 3)
    first = next(paged)
    assert paged.pages_fetched == 1 and len(first) == total // 3 and first.has_more_pages
    rest = list(paged)
    assert paged.pages_fetched >= 3 and sum(len(b) for b in [first, *rest]) == total
    whole = execute_columns(session, query, fetch_size=total + 10)
    one = list(whole)
    assert len(one) == 1 and len(one[0]) == total and not one[0].has_more_pages
    paged_table = pa.Table.from_batches([pa.record_batch(b) for b in [first, *rest] if len(b)])
    assert paged_table.equals(pa.table(one[0]))
    assert execute_columns(session, query, fetch_size=total // 3).to_arrow().equals(pa.table(one[0]))
    limited = execute_columns(session, query, fetch_size=40, limit=100).to_arrow()
    assert limited.num_rows == 100 and limited.equals(pa.table(one[0]).slice(0, 100))


def test_prepared_statement_with_parameters(pair: SessionPair, session: Session) -> None:
    pytest.importorskip("polars")
    ps = session.prepare("SELECT c, label FROM paged WHERE p = ?")
    frame = execute_columns(session, ps, [1], fetch_size=25).to_polars()
    want = [(row.c, row.label) for row in pair.plain.execute("SELECT c, label FROM paged WHERE p = 1")]
    assert list(zip(frame["c"].to_list(), frame["label"].to_list())) == want


def test_ann_query_returns_its_rows_as_a_batch(pair: SessionPair, session: Session) -> None:
    query = "SELECT k, v, label FROM ann ORDER BY v ANN OF [3.0, 4.0, 1.0] LIMIT 5"
    batches = list(execute_columns(session, query))
    assert len(batches) == 1
    batch = batches[0]
    rows = list(pair.plain.execute(query))
    assert batch["k"].to_pylist() == [r.k for r in rows]
    matrix = batch["v"].to_numpy()
    assert matrix.shape == (5, 3) and matrix.dtype == np.float32
    assert matrix.tolist() == [ANN_POINTS[r.k] for r in rows]


def test_insert_a_matrix_of_embeddings(session: Session) -> None:
    n = 600
    matrix = np.random.default_rng(5).standard_normal((n, 16)).astype(np.float32)
    insert = session.prepare("INSERT INTO columnar_emb (k, v) VALUES (?, ?)")
    result = insert_columns(session, insert, {"k": np.arange(n), "v": matrix}, chunk_rows=250)
    assert result.written == n and result.requests == n
    back = execute_columns(session, "SELECT k, v FROM columnar_emb", fetch_size=200).to_arrow()
    order = np.argsort(back.column("k").to_numpy())
    vectors = np.stack(back.column("v").to_numpy(zero_copy_only=False))[order]
    assert np.array_equal(vectors, matrix)
    arrays = execute_columns(session, "SELECT k, v FROM columnar_emb", fetch_size=200).to_numpy()
    assert arrays["v"].shape == (n, 16) and arrays["v"].dtype == np.float32  # over 3+ pages
    assert np.array_equal(arrays["v"][np.argsort(arrays["k"])], matrix)


def test_batches_by_partition_and_by_replica(session: Session) -> None:
    pytest.importorskip("pandas")
    insert = session.prepare("INSERT INTO columnar_ck (p, c, v) VALUES (?, ?, ?)")
    p = np.repeat(np.arange(10, 20, dtype=np.int32), 30)
    c = np.tile(np.arange(30, dtype=np.int32), 10)
    labels = [f"label {i}" for i in range(len(p))]
    result = insert_columns(session, insert, {"p": p, "c": c, "v": labels}, batch_by_partition=True)
    assert result.written == 300 and result.requests == 10  # 30 short rows fit one batch
    result = insert_columns(session, insert, {"p": p + 100, "c": c, "v": labels},
                            batch_by_replica=True, batch_bytes=2048)
    assert result.written == 300 and result.requests < 300
    query = "SELECT p, c, v FROM columnar_ck WHERE p IN ({})"
    for offset in (0, 100):
        keys = ", ".join(str(x) for x in range(10 + offset, 20 + offset))
        got = execute_columns(session, query.format(keys)).to_pandas()
        assert sorted(zip(got["p"], got["c"], got["v"])) == sorted(
            zip((p + offset).tolist(), c.tolist(), labels))


def test_failed_rows_are_reported(session: Session) -> None:
    insert = session.prepare("INSERT INTO columnar_ck (p, c, v) VALUES (?, ?, ?)")
    columns = {"p": [1, 1, None, 1], "c": [7, None, 8, 9], "v": ["a", "b", "c", "d"]}
    with pytest.raises(InsertError) as info:
        insert_columns(session, insert, columns)
    failures = info.value.result.failures
    assert [f.row for f in failures] == [1, 2]  # server-side null clustering key, null routing key
    assert info.value.result.written == 2
    result = insert_columns(session, insert, columns, raise_on_error=False)
    assert [f.row for f in result.failures] == [1, 2]
    got = _batch_pylists(execute_columns(session, "SELECT c, v FROM columnar_ck WHERE p = 1"))
    assert (got["c"], got["v"]) == ([7, 9], ["a", "d"])
    with pytest.raises(cqlcodec.BindTypeError) as bad:
        insert_columns(session, insert, {"p": [1, 2], "c": [1, "x"], "v": ["a", "b"]})
    assert bad.value.row == 1 and bad.value.column == "c"


def test_statements_without_rows_are_refused(session: Session) -> None:
    with pytest.raises(cqlcodec.CodecError, match="no rows"):
        execute_columns(session, "INSERT INTO columnar_ck (p, c, v) VALUES (0, 0, 'x')")
