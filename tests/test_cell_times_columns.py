"""The column readers of ``cqlcodec.driver.cell_times`` that find the rows of one write
at once: set values and ints read from Arrow buffers (sliced and chunked arrays, nulls
anywhere), against the values ``to_pylist`` gives."""

from __future__ import annotations

from typing import Any

import pytest

from cqlcodec.driver.cell_times import _ints, _valid

pa = pytest.importorskip("pyarrow")
np = pytest.importorskip("numpy")

VALUES = [1, None, -(2 ** 62), 7, None, 2 ** 40 + 3, 0, None, 9, 10, 11]


def _cases() -> list[Any]:
    out = []
    for type_ in (pa.int64(), pa.int32()):
        values = [v if v is None or type_ == pa.int64() else v % 2 ** 31 for v in VALUES]
        whole = pa.array(values, type=type_)
        out += [whole, whole.slice(3), whole.slice(1, 6),
                pa.chunked_array([whole.slice(0, 4), whole.slice(4)]),
                pa.array([v for v in values if v is not None], type=type_)]
    return out


@pytest.mark.parametrize("column", _cases(), ids=lambda c: f"{type(c).__name__}-{c.type}-{len(c)}")
def test_ints_and_set_values_read_from_the_buffers(column: Any) -> None:
    listed = column.to_pylist()
    assert _valid(column).tolist() == [v is not None for v in listed]
    assert _ints(column, -5).tolist() == [-5 if v is None else v for v in listed]


def test_set_values_of_other_types() -> None:
    texts = pa.array(["a", None, "ccc", None, ""]).slice(1)
    assert _valid(texts).tolist() == [False, True, False, True]
    assert _valid(pa.array([None, None], type=pa.null())).tolist() == [False, False]
    assert _valid(pa.array([[1], None, []])).tolist() == [True, False, True]
