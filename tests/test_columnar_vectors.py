"""Fixed-layout vector columns read from the body on first use.

The walk copies nothing of a ``vector<float, n>`` (or any fixed-width numeric
element) column: it records where each vector starts in the body, and
``to_numpy()`` converts them in one strided step (runs one stride apart) or a gather
(uneven rows, null rows); Arrow, ``to_pylist()`` and a page whose vectors are a small
part of its body read the values the bulk way. Every form must agree with the row
path on every layout: uniform and uneven rows, nulls, vectors inside lists and UDTs,
every element type, one row and none.
"""

from __future__ import annotations

import random
import struct
from typing import Any

import pytest
from hotwire import Cell, rows_body
from test_columnar import col

import cqlcodec
from cqlcodec import parse_type
from cqlcodec.columnar import walk
from cqlcodec.columnar.builders import FixedNode, VectorNode, column_pylist
from cqlcodec.protocol.results import read_rows_header

np = pytest.importorskip("numpy")

# the element types Cassandra serializes at a fixed width (smallint and tinyint elements
# carry a length each: their vectors take another path)
ELEMENTS = {"float": "f", "double": "d", "int": "i", "bigint": "q", "timestamp": "q"}


def vector_bytes(element: str, values: list[int]) -> bytes:
    return struct.pack(f">{len(values)}{ELEMENTS[element]}", *values)


def page(element: str, dim: int, nrows: int, *, text: bool, null_every: int = 0,
         seed: int = 1) -> tuple[bytes, list[list[int] | None]]:
    """(id int, [note text,] v vector<element, dim>) with ``nrows`` rows, every
    ``null_every``-th vector null; and the vectors' values as written."""
    rng = random.Random(seed)
    low, high = -10**6, 10**6
    cols = [col("id", "int")] + ([col("note", "text")] if text else []) \
        + [col("v", f"vector<{element}, {dim}>")]
    rows: list[list[Cell]] = []
    written: list[list[int] | None] = []
    for r in range(nrows):
        row: list[Cell] = [struct.pack(">i", r)]
        if text:
            row.append(("x" * rng.randrange(0, 40)).encode())
        if null_every and r % null_every == 1:
            row.append(None)
            written.append(None)
        else:
            values = [rng.randint(low, high) for _i in range(dim)]
            row.append(vector_bytes(element, values))
            written.append(values)
        rows.append(row)
    return rows_body(cols, rows), written


def row_path(body: bytes) -> list[Any]:
    """The rows ``decode_result`` gives for ``body``."""
    result = cqlcodec.decode_result(body, 4)
    assert isinstance(result, cqlcodec.RowsResult)
    return list(result.rows)


def walked_vector(body: bytes) -> VectorNode:
    """The vector column's builder as the walk leaves it (compiled: the slot walk)."""
    head = read_rows_header(body, 4, len(body), 4, None, 0, None)
    nodes, _unset, _n = walk.walk_rows(body, head.rows_at, len(body), head.desc, False)
    node = nodes[-1]
    assert isinstance(node, VectorNode)
    return node


@pytest.mark.parametrize("element", sorted(ELEMENTS))
@pytest.mark.parametrize("layout", ["uniform", "uneven", "nulls", "uneven nulls"])
def test_every_form_matches_the_row_path(element: str, layout: str) -> None:
    from cqlcodec.columnar.numpy_conv import from_body, to_numpy

    dim, nrows = 24, 70
    body, written = page(element, dim, nrows, text="uneven" in layout,
                         null_every=5 if "nulls" in layout else 0)
    expected = [None if r[-1] is None else list(r[-1]) for r in row_path(body)]
    node = walked_vector(body)
    assert isinstance(node.item, FixedNode) and node.item.lazy  # nothing copied yet
    runs = node.item.runs
    assert runs is not None
    by_numpy = from_body(node.item, runs, nrows, dim).tobytes()  # Arrow's way with numpy
    assert column_pylist(node, [], None) == expected  # read the bulk way (Arrow without numpy)
    assert node.item.le_values() == by_numpy
    want = np.array([v if v is not None else [0] * dim for v in written], np.int64)
    for matrix in (to_numpy(walked_vector(body), lambda: expected),  # numpy first
                   cqlcodec.decode_columns(body, 4)["v"].to_numpy()):
        values = np.ma.getdata(matrix)
        assert values.shape == (nrows, dim)
        as_ints = values.view(np.int64) if element == "timestamp" else values.astype(np.int64)
        assert (as_ints == want).all()
        if "nulls" in layout:
            assert list(np.ma.getmaskarray(matrix)[:, 0]) == [v is None for v in written]
        else:
            assert not np.ma.isMaskedArray(matrix)


@pytest.mark.parametrize("layout", ["uniform", "uneven", "nulls"])
def test_arrow_reads_the_same_vectors(layout: str) -> None:
    pa = pytest.importorskip("pyarrow")
    body, _written = page("float", 16, 40, text=layout == "uneven",
                          null_every=3 if layout == "nulls" else 0)
    expected = [r[-1] for r in row_path(body)]
    table = pa.table(cqlcodec.decode_columns(body, 4))
    assert [None if v is None else list(v) for v in table.column("v").to_pylist()] == \
        [None if v is None else list(v) for v in expected]
    node = walked_vector(body)
    assert pa.array(cqlcodec.decode_columns(body, 4)["v"]).to_pylist() == \
        [None if v is None else list(v) for v in expected]
    assert column_pylist(node, [], None) == [None if v is None else list(v) for v in expected]


def test_single_row_no_rows_and_all_null() -> None:
    one, _written = page("float", 768, 1, text=False)
    (row,) = row_path(one)
    assert (cqlcodec.decode_columns(one, 4)["v"].to_numpy()[0] == np.array(row[-1], np.float32)).all()
    empty = rows_body([col("id", "int"), col("v", "vector<float, 8>")], [])
    assert cqlcodec.decode_columns(empty, 4)["v"].to_numpy().shape == (0, 8)
    nulls = rows_body([col("id", "int"), col("v", "vector<double, 8>")],
                      [[struct.pack(">i", r), None] for r in range(30)])
    matrix = cqlcodec.decode_columns(nulls, 4)["v"].to_numpy()
    assert matrix.shape == (30, 8) and np.ma.getmaskarray(matrix).all()
    assert cqlcodec.decode_columns(nulls, 4)["v"].to_pylist() == [None] * 30


def test_small_vectors_in_a_large_body_are_copied_at_once() -> None:
    """A page whose vectors are under half its body keeps no reference to the body."""
    rows: list[list[Cell]] = [[b"t" * 500, vector_bytes("float", [r, r + 1, r + 2])]
                              for r in range(40)]
    body = rows_body([col("t", "text"), col("v", "vector<float, 3>")], rows)
    node = walked_vector(body)
    assert isinstance(node.item, FixedNode)
    assert not node.item.lazy and node.item.runs is None
    assert cqlcodec.decode_columns(body, 4)["v"].to_numpy().tolist() == \
        [[float(r), r + 1.0, r + 2.0] for r in range(40)]


@pytest.mark.parametrize("cql", ["list<frozen<vector<float, 4>>>",
                                 "frozen<tuple<int, vector<float, 4>>>"])
def test_vectors_inside_lists_and_tuples(cql: str) -> None:
    t = parse_type(cql)
    rng = random.Random(cql)
    values: list[Any] = []
    for r in range(60):
        vec = [float(rng.randint(-50, 50)) for _i in range(4)]
        if r % 7 == 3:
            values.append(None)
        elif cql.startswith("list"):
            values.append([vec, [v + 1 for v in vec]] if r % 2 else [])
        else:
            values.append((r, vec if r % 5 else None))
    body = rows_body([col("c", cql)], [[None if v is None else bytes(t.serialize(v))]
                                      for v in values])
    batch = cqlcodec.decode_columns(body, 4)
    assert batch["c"].to_pylist() == [r[0] for r in row_path(body)]
    pa = pytest.importorskip("pyarrow")
    assert pa.array(batch["c"]).to_pylist() is not None
