"""Some rows of a chunk's columns (Arrow arrays, record batches or Python lists), taken
without making pyarrow import pandas.

``pa.array(...)`` (and ``pa.scalar``) ask pandas whether their argument is one of its
arrays, which imports pandas when it is installed: a second of CPU in a process that
never uses it, once per load or copy. The row positions here become an Arrow array
straight from a numpy buffer instead, and a take of every row in order is no take.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["row_indices", "take_rows", "take_chunk_rows"]


def row_indices(pa: Any, rows: Sequence[int]) -> Any:
    """``rows`` as an Arrow int64 array (what ``take`` takes)."""
    import numpy as np

    ints = np.asarray(rows, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(ints), [None, pa.py_buffer(ints)])


def _every_row(indices: Any, count: int) -> bool:
    import numpy as np

    if len(indices) != count:
        return False
    if not count:
        return True
    ints = np.frombuffer(indices.buffers()[1], dtype=np.int64, count=count)
    return bool((ints == np.arange(count, dtype=np.int64)).all())


def take_rows(pa: Any, data: Any, rows: Sequence[int], indices: Any = None) -> Any:
    """Rows ``rows`` (positions, in the order given) of ``data``: a list of Python values,
    an Arrow array, chunked array, record batch or table. ``indices``, when given, is
    :func:`row_indices` of ``rows`` already made."""
    if isinstance(data, list):
        return [data[i] for i in rows]
    if indices is None:
        indices = row_indices(pa, rows)
    return data if _every_row(indices, len(data)) else data.take(indices)


def take_chunk_rows(pa: Any, chunk: Mapping[str, Any], rows: Sequence[int]) -> dict[str, Any]:
    """Rows ``rows`` of every column of ``chunk`` (lists or Arrow arrays)."""
    indices = row_indices(pa, rows)
    return {name: take_rows(pa, column, rows, indices) for name, column in chunk.items()}
