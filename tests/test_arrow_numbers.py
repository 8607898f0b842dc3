"""Numpy arrays read from Arrow buffers (``cqlcodec.columnar.arrow_numbers``), the rows
taken from Arrow columns (``cqlcodec.driver.row_take``) and the int reader of
``cqlcodec.driver.cell_times``: sliced and chunked arrays, nulls anywhere, against what
``to_pylist`` gives; and none of them imports pandas (a second of CPU per process)."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from cqlcodec.columnar.arrow_numbers import arrow_fixed_values, arrow_validity
from cqlcodec.driver.cell_times import _ints
from cqlcodec.driver.row_take import row_indices, take_chunk_rows, take_rows

pa = pytest.importorskip("pyarrow")
np = pytest.importorskip("numpy")

VALUES = [1, None, -(2 ** 62), 7, None, 2 ** 40 + 3, 0, None, 9, 10, 11]


def _shapes(whole: Any, type_: Any, values: list[Any]) -> list[Any]:
    return [whole, whole.slice(3), whole.slice(1, 6),
            pa.chunked_array([whole.slice(0, 4), whole.slice(4)]),
            pa.chunked_array([], type=type_),
            pa.array([v for v in values if v is not None], type=type_)]


def _int_cases() -> list[Any]:
    out = []
    for type_ in (pa.int64(), pa.int32()):
        values = [v if v is None or type_ == pa.int64() else v % 2 ** 31 for v in VALUES]
        out += _shapes(pa.array(values, type=type_), type_, values)
    return out


def _number_cases() -> list[Any]:
    out = []
    for type_ in (pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(),
                  pa.uint32(), pa.uint64(), pa.float16(), pa.float32(), pa.float64(), pa.bool_()):
        if pa.types.is_boolean(type_):
            values: list[Any] = [True, None, False, True, None, True, False, None, True]
        elif pa.types.is_floating(type_):
            values = [1.5, None, -2.0, float("inf"), None, 0.25, -0.0, None, 3.0]
        else:
            values = [v if v is None else v % 100 for v in VALUES]
        whole = pa.array(values, type=type_ if type_ != pa.float16() else pa.float32())
        whole = whole.cast(type_) if type_ == pa.float16() else whole
        out += _shapes(whole, type_, values)
    return out


def _id(column: Any) -> str:
    return f"{type(column).__name__}-{column.type}-{len(column)}-{column.null_count}"


@pytest.mark.parametrize("column", _int_cases(), ids=_id)
def test_ints_and_set_values_read_from_the_buffers(column: Any) -> None:
    listed = column.to_pylist()
    assert arrow_validity(column).tolist() == [v is not None for v in listed]
    assert _ints(column, -5).tolist() == [-5 if v is None else v for v in listed]
    assert _ints(column, -5).dtype == np.int64


@pytest.mark.parametrize("column", _number_cases(), ids=_id)
def test_fixed_width_values_with_a_fill_where_null(column: Any) -> None:
    listed = column.to_pylist()
    fill = True if pa.types.is_boolean(column.type) else 42
    got = arrow_fixed_values(column, fill)
    assert got.dtype == np.dtype(column.type.to_pandas_dtype())
    assert [float(g) if isinstance(g, float) else g for g in got.tolist()] == \
        [fill if v is None else v for v in listed]
    assert np.signbit(got).tolist() == np.signbit(
        np.array([fill if v is None else v for v in listed], dtype=got.dtype)).tolist()


def test_set_values_of_other_types() -> None:
    texts = pa.array(["a", None, "ccc", None, ""]).slice(1)
    assert arrow_validity(texts).tolist() == [False, True, False, True]
    assert arrow_validity(pa.array([None, None], type=pa.null())).tolist() == [False, False]
    assert arrow_validity(pa.array([[1], None, []])).tolist() == [True, False, True]
    with pytest.raises(TypeError, match="not a fixed-width number type"):
        arrow_fixed_values(pa.array(["a"]))


def test_rows_taken_in_the_order_given() -> None:
    column = pa.chunked_array([pa.array(["a", None, "c"]), pa.array(["d", "e"])])
    assert take_rows(pa, column, [4, 0, 1, 0]).to_pylist() == ["e", "a", None, "a"]
    assert take_rows(pa, ["a", None, "c"], [2, 2, 0]) == ["c", "c", "a"]
    batch = pa.record_batch({"k": pa.array([1, 2, 3]), "v": pa.array(["x", "y", None])})
    assert take_rows(pa, batch, [2, 0]).to_pylist() == [{"k": 3, "v": None}, {"k": 1, "v": "x"}]
    assert take_rows(pa, batch.slice(1), [1]).to_pylist() == [{"k": 3, "v": None}]
    assert row_indices(pa, [5, 0, 2 ** 40]).to_pylist() == [5, 0, 2 ** 40]
    taken = take_chunk_rows(pa, {"k": pa.array([1, 2, 3]), "v": [10, 20, 30]}, [1, 1])
    assert taken["k"].to_pylist() == [2, 2] and taken["v"] == [20, 20]


def test_every_row_in_order_is_the_column_itself() -> None:
    column = pa.array([1, 2, 3])
    assert take_rows(pa, column, [0, 1, 2]) is column
    assert take_rows(pa, column, []).to_pylist() == []
    assert take_rows(pa, column, [0, 2, 1]).to_pylist() == [1, 3, 2]
    assert take_rows(pa, column, [0, 1]).to_pylist() == [1, 2]
    empty = pa.array([], type=pa.int64())
    assert take_rows(pa, empty, []) is empty


def test_binding_and_taking_arrow_columns_leave_pandas_unimported() -> None:
    pytest.importorskip("pandas")
    code = """
import sys
import numpy as np
import pyarrow as pa
import cqlcodec
from cqlcodec.columnar.bind_input import source_of
from cqlcodec.driver.row_take import take_chunk_rows
def made(type_, values, valid):  # pa.array and from_pylist import pandas themselves
    bits = pa.py_buffer(np.packbits(np.array(valid), bitorder="little"))
    return pa.Array.from_buffers(type_, len(valid), [bits, pa.py_buffer(values)])
ints = made(pa.int32(), np.arange(3, dtype=np.int32), [True, True, True])
with_nulls = made(pa.int64(), np.arange(2, dtype=np.int64), [True, False])
flags = made(pa.bool_(), np.packbits([True, True]), [True, False])
stamps = made(pa.timestamp("ms"), np.arange(2, dtype=np.int64), [False, True])
assert with_nulls.null_count == 1 and "pandas" not in sys.modules
floats = pa.Array.from_buffers(pa.float32(), 4, [None, pa.py_buffer(np.arange(4, dtype=np.float32))])
vectors = pa.FixedSizeListArray.from_arrays(floats, 2)
for name, column in (("a", ints), ("b", with_nulls), ("c", flags), ("d", stamps), ("e", vectors)):
    source_of(name, column)
take_chunk_rows(pa, {"a": ints, "b": ints}, [2, 1])
print("pandas" in sys.modules)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env=None)
    assert out.stdout.strip() == "False", out.stderr
