"""numpy views of finished columns (imported only when ``to_numpy`` is called)."""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from cqlcodec import kinds as K
from cqlcodec.columnar.builders import BoolNode, FixedNode, Node, Runs, VarintNode, VectorNode

_DTYPES: Final[dict[int, str]] = {
    K.TINYINT: "int8",
    K.SMALLINT: "int16",
    K.INT: "int32",
    K.BIGINT: "int64",
    K.COUNTER: "int64",
    K.FLOAT: "float32",
    K.DOUBLE: "float64",
    K.TIMESTAMP: "datetime64[ms]",
    K.DATE: "datetime64[D]",
    K.TIME: "timedelta64[ns]",
}


def typed(node: Node) -> Any:
    """The values of ``node`` as a typed array (a read-only view of the buffer except for
    dates, widened from int32 days), or None."""
    if isinstance(node, FixedNode):
        if node.kind == K.DATE:  # int32 days: datetime64[D] is 64-bit
            return np.frombuffer(node.values, np.int32).astype("datetime64[D]")
        return np.frombuffer(node.le_values(), _DTYPES[node.kind])
    if isinstance(node, BoolNode):
        return np.frombuffer(node.flags, np.bool_)
    if isinstance(node, VarintNode) and node.fmt == "l":
        return np.frombuffer(node.converted, np.int64)
    if isinstance(node, VectorNode):
        item = node.item
        runs = item.runs if isinstance(item, FixedNode) and item.lazy else None
        if runs is not None:
            assert isinstance(item, FixedNode)
            return from_body(item, runs, node.length, node.dim)
        inner = typed(item)
        if inner is None:
            return None
        return inner.reshape(node.length, node.dim)
    return None


_WIRE: Final = {kind: (np.dtype(name), np.dtype(name).newbyteorder(">"))
                for kind, name in _DTYPES.items()}


def from_body(item: FixedNode, runs: Runs, rows: int, dim: int) -> Any:
    """The ``(rows, dim)`` matrix of a vector column whose values are still in the body
    (big-endian runs at ``runs.starts``): one strided conversion when the runs lie at
    one stride apart, else a gather of the runs and one conversion; null rows are 0."""
    native, wire = _WIRE[item.kind]
    width = item.width
    if rows == 0:
        return np.empty((0, dim), native)
    src = runs.src
    stride = runs.stride
    if stride >= 0:  # no null run, and one stride apart (or a single run)
        view = np.ndarray((rows, dim), wire, src, runs.first, (stride, width))
        return view.astype(native)
    starts = np.frombuffer(runs.starts.getvalue(), "<i8")
    valid = starts >= 0
    out = np.zeros((rows, dim), native)
    if not valid.any():
        return out
    size = dim * width
    # every run of the body as a row of a sliding window; the valid runs picked out
    window = np.ndarray((len(src) - size + 1, dim), wire, buffer=src, strides=(1, width))
    out[valid] = window[starts[valid]]
    return out


def mask_of(node: Node) -> Any:
    """True where ``node`` is null (None when nothing is)."""
    if node.nulls == 0:
        return None
    return np.frombuffer(node.vbytes, np.uint8) == 0


def to_numpy(node: Node, pylist: Any) -> Any:
    """numpy form of a column: typed arrays for numeric, temporal and boolean columns and
    vectors of them (2-D), masked where null; an object array of ``pylist()`` otherwise."""
    values = typed(node)
    if values is None:
        return np.array(pylist(), dtype=object)
    mask = mask_of(node)
    if isinstance(node, VectorNode):
        inner_mask = mask_of(node.item)
        if mask is None and inner_mask is None:
            return values
        full = np.zeros(values.shape, dtype=bool)
        if mask is not None:
            full |= mask[:, None]
        if inner_mask is not None:
            full |= inner_mask.reshape(values.shape)
        return np.ma.MaskedArray(values, mask=full)
    if mask is None:
        return values
    return np.ma.MaskedArray(values, mask=mask)
