"""ColumnPages.to_numpy: one array per column over every page, equal to the pages'
own ``Column.to_numpy()`` arrays put one after another (masks included)."""

from __future__ import annotations

import struct
from typing import Any

import pytest
from hotwire import Cell, rows_body
from test_columnar import col
from test_columnar_vectors import page

import cqlcodec
from cqlcodec.errors import CodecError

np = pytest.importorskip("numpy")
pytest.importorskip("cassandra")

from cqlcodec.driver.columns import ColumnPages  # noqa: E402  (needs a driver)


def _pages(bodies: list[bytes]) -> ColumnPages:
    return ColumnPages.of_batches([cqlcodec.decode_columns(body, 4) for body in bodies])


def _expected(bodies: list[bytes], name: str) -> Any:
    parts = [cqlcodec.decode_columns(body, 4)[name].to_numpy() for body in bodies]
    parts = [p for p in parts if len(p)]
    return np.ma.concatenate(parts) if any(np.ma.isMaskedArray(p) for p in parts) \
        else np.concatenate(parts)


def _same(got: Any, want: Any) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.ma.isMaskedArray(got) == np.ma.isMaskedArray(want)
    assert (np.ma.getmaskarray(got) == np.ma.getmaskarray(want)).all()
    assert (np.ma.getdata(got)[~np.ma.getmaskarray(got)] ==
            np.ma.getdata(want)[~np.ma.getmaskarray(want)]).all()


@pytest.mark.parametrize("element", ["float", "double", "int", "bigint", "timestamp"])
@pytest.mark.parametrize("text", [False, True], ids=["one stride apart", "uneven"])
def test_vector_pages_make_one_matrix(element: str, text: bool) -> None:
    """Pages of every kind (vectors one stride apart in the body or gathered from uneven
    rows, with null vectors, empty) give the matrix the pages give one by one."""
    bodies = [page(element, 12, 40, text=text, seed=1)[0],
              page(element, 12, 33, text=text, seed=2)[0],
              page(element, 12, 0, text=text)[0],
              page(element, 12, 25, text=text, null_every=4, seed=3)[0],
              page(element, 12, 7, text=text, seed=4)[0]]
    got = _pages(bodies).to_numpy()
    assert list(got) == (["id", "note", "v"] if text else ["id", "v"])
    _same(got["v"], _expected(bodies, "v"))
    _same(got["id"], _expected(bodies, "id"))
    assert got["v"].shape == (105, 12)


def test_vectors_without_nulls_are_a_plain_matrix() -> None:
    bodies = [page("float", 768, 50, text=False, seed=s)[0] for s in range(4)]
    matrix = _pages(bodies).to_numpy(["v"])["v"]
    assert not np.ma.isMaskedArray(matrix)
    assert matrix.dtype == np.float32 and matrix.shape == (200, 768)
    assert matrix.flags.writeable and matrix.flags.c_contiguous
    _same(matrix, _expected(bodies, "v"))


def _body(cql: str, cells: list[Cell]) -> bytes:
    return rows_body([col("k", "int"), col("c", cql)],
                     [[struct.pack(">i", i), cell] for i, cell in enumerate(cells)])


def test_scalars_nulls_and_objects() -> None:
    ints = [_body("bigint", [struct.pack(">q", 5), None]), _body("bigint", [struct.pack(">q", -7)])]
    _same(_pages(ints).to_numpy()["c"], _expected(ints, "c"))
    assert list(np.ma.getmaskarray(_pages(ints).to_numpy()["c"])) == [False, True, False]
    texts = [_body("text", [b"a", None]), _body("text", [b"bc"])]
    got = _pages(texts).to_numpy([1])["c"]
    assert got.dtype == object and list(got) == ["a", None, "bc"]


def test_lists_stay_one_object_per_row() -> None:
    """Lists of one length in every row are still one list object per row, not a 2-D
    array (per page and joined)."""
    two = struct.pack(">i", 2) + b"".join(struct.pack(">i", 4) + struct.pack(">i", v) for v in (1, 2))
    bodies = [_body("list<int>", [two, two]), _body("list<int>", [two])]
    assert cqlcodec.decode_columns(bodies[0], 4)["c"].to_numpy().shape == (2,)
    got = _pages(bodies).to_numpy()["c"]
    assert got.shape == (3,) and list(got) == [[1, 2]] * 3


def test_a_varint_typed_on_one_page_only_becomes_objects() -> None:
    """A varint page whose values fit int64 has a typed form, one with a larger value has
    not: the column over both is an object array of exact ints."""
    small = (5).to_bytes(1, "big", signed=True)
    large = (1 << 70).to_bytes(10, "big", signed=True)
    bodies = [_body("varint", [small]), _body("varint", [large, None])]
    got = _pages(bodies).to_numpy()["c"]
    assert got.dtype == object and list(got) == [5, 1 << 70, None]


def test_read_pages_are_refused() -> None:
    pages = _pages([_body("int", [struct.pack(">i", 1)])])
    assert list(pages.to_numpy()["c"]) == [1]
    with pytest.raises(CodecError, match=r"already consumed by to_numpy\(\)"):
        pages.to_numpy()


def test_vectors_of_vectors_are_3_d() -> None:
    """``vector<vector<float, 2>, 3>``: (rows, 3, 2), a null row masked, per page and over
    pages (it raised a numpy ValueError per page before)."""
    t = cqlcodec.parse_type("vector<vector<float, 2>, 3>")
    cells = [[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], None, [[7.0, 8.0], [9.0, 1.0], [2.0, 3.0]]]
    bodies = [_body("vector<vector<float, 2>, 3>", [None if c is None else t.serialize(c) for c in cells])
              for _page in range(2)]
    one = cqlcodec.decode_columns(bodies[0], 4)["c"].to_numpy()
    assert one.shape == (3, 3, 2) and one.dtype == np.float32
    assert list(np.ma.getmaskarray(one)[:, 0, 0]) == [False, True, False]
    assert np.ma.getdata(one)[2].tolist() == cells[2]
    got = _pages(bodies).to_numpy()["c"]
    _same(got, _expected(bodies, "c"))
    assert got.shape == (6, 3, 2)
