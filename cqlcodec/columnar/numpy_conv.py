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
        return inner.reshape(node.length, node.dim, *inner.shape[1:])  # 3-D for vectors of vectors
    return None


_WIRE: Final = {kind: (np.dtype(name), np.dtype(name).newbyteorder(">"))
                for kind, name in _DTYPES.items()}


def strided_view(item: FixedNode, runs: Runs, rows: int, dim: int) -> Any:
    """The ``(rows, dim)`` big-endian view of vectors lying one stride apart in the body
    (``runs.stride >= 0``), nothing copied."""
    return np.ndarray((rows, dim), _WIRE[item.kind][1], runs.src, runs.first,
                      (runs.stride, item.width))


def from_body(item: FixedNode, runs: Runs, rows: int, dim: int) -> Any:
    """The ``(rows, dim)`` matrix of a vector column whose values are still in the body
    (big-endian runs at ``runs.starts``): one strided conversion when the runs lie at
    one stride apart, else a gather of the runs and one conversion; null rows are 0."""
    native, wire = _WIRE[item.kind]
    width = item.width
    if rows == 0:
        return np.empty((0, dim), native)
    src = runs.src
    if runs.stride >= 0:  # no null run, and one stride apart (or a single run)
        return strided_view(item, runs, rows, dim).astype(native)
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


def objects(values: list[Any]) -> Any:
    """A 1-D object array holding ``values`` as they are (lists stay list objects)."""
    out = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):
        out[i] = v
    return out


def full_mask(node: Node, shape: tuple[int, ...]) -> Any:
    """True where a cell of ``node``'s typed array (of ``shape``) is null: a null row,
    or for a vector column also a null element; None when nothing is."""
    mask = mask_of(node)
    if not isinstance(node, VectorNode):
        return mask
    inner_mask = full_mask(node.item, (shape[0] * shape[1], *shape[2:]))
    if mask is None and inner_mask is None:
        return None
    full = np.zeros(shape, dtype=bool)
    if mask is not None:
        full |= mask.reshape(shape[0], *[1] * (len(shape) - 1))
    if inner_mask is not None:
        full |= inner_mask.reshape(shape)
    return full


def to_numpy(node: Node, pylist: Any) -> Any:
    """numpy form of a column: typed arrays for numeric, temporal and boolean columns and
    vectors of them (2-D), masked where null; a 1-D object array of ``pylist()`` otherwise."""
    values = typed(node)
    if values is None:
        return objects(pylist())
    mask = full_mask(node, values.shape)
    if mask is None:
        return values
    return np.ma.MaskedArray(values, mask=mask)


def _fill(out: Any, node: Node) -> None:
    """Write ``node``'s typed values into ``out`` (as many rows as it has), converting a
    vector column straight from the body when its runs lie one stride apart."""
    if isinstance(node, VectorNode):
        item = node.item
        if isinstance(item, FixedNode) and item.lazy and item.runs is not None \
                and item.runs.stride >= 0 and node.length > 0:
            np.copyto(out, strided_view(item, item.runs, node.length, node.dim))
            return
    out[...] = typed(node)


def joined(nodes: list[Node], pylists: list[Any]) -> Any:
    """One column's numpy form over many pages (``nodes``, with ``pylists`` giving each
    page's values as :func:`to_numpy` takes them): the result is allocated once and each
    page written into it, so a vector column is converted from the bodies in one pass."""
    rows = [node.length for node in nodes]
    total = sum(rows)
    kept = [i for i, n in enumerate(rows) if n > 0]  # an empty page may type a column otherwise
    if not kept:
        return to_numpy(nodes[0], pylists[0]) if nodes else objects([])
    if len(kept) == 1:
        return to_numpy(nodes[kept[0]], pylists[kept[0]])
    firsts = [typed_shape(nodes[i]) for i in kept]
    if any(f is None for f in firsts) or len(set(firsts)) != 1:
        values: list[Any] = []
        for i in kept:
            values.extend(pylists[i]())
        return objects(values)
    first = firsts[0]
    assert first is not None
    dtype, trailing = first
    shape = (total, *trailing)
    out = np.empty(shape, dtype)
    mask: Any = None
    at = 0
    for i in kept:
        node = nodes[i]
        part = out[at: at + rows[i]]
        _fill(part, node)
        page_mask = full_mask(node, part.shape)
        if page_mask is not None:
            if mask is None:
                mask = np.zeros(shape, dtype=bool)
            mask[at: at + rows[i]] = page_mask
        at += rows[i]
    return out if mask is None else np.ma.MaskedArray(out, mask=mask)


def typed_shape(node: Node) -> tuple[Any, tuple[int, ...]] | None:
    """The dtype of ``node``'s typed array and the shape of one row of it (``()`` for a
    flat column, ``(n,)`` for a vector, ``(n, m)`` for a vector of vectors), or None when
    the column has no typed form; nothing is converted."""
    if isinstance(node, VectorNode):
        inner = typed_shape(node.item)
        return None if inner is None else (inner[0], (node.dim, *inner[1]))
    if isinstance(node, FixedNode):
        return np.dtype(_DTYPES[node.kind]), ()
    if isinstance(node, BoolNode):
        return np.dtype(np.bool_), ()
    if isinstance(node, VarintNode) and node.fmt == "l":
        return np.dtype(np.int64), ()
    return None
