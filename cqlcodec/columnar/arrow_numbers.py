"""Numpy arrays read from the buffers of pyarrow arrays of fixed-width values.

pyarrow's own ways (``fill_null(0)``, ``is_null()``, ``pa.scalar``) make pyarrow ask
pandas whether a value is one of its arrays, which imports pandas when it is installed:
a second of CPU in a process that never uses pandas. Reading the validity bitmap and
the value buffer with numpy is the same answer without that, and without a copy when
there is no null.
"""

from __future__ import annotations

from typing import Any

__all__ = ["arrow_validity", "arrow_fixed_values", "chunks_of"]


def chunks_of(column: Any) -> list[Any]:
    """The arrays of a chunked array, or ``[column]`` for an array."""
    return list(column.chunks) if hasattr(column, "chunks") else [column]


def arrow_validity(column: Any) -> Any:
    """Which values of an Arrow array (or chunked array) are set, as a numpy bool array."""
    import numpy as np

    parts = []
    for chunk in chunks_of(column):
        n = len(chunk)
        buffers = chunk.buffers()
        bitmap = buffers[0] if buffers else None
        if not chunk.null_count:
            parts.append(np.ones(n, dtype=bool))
        elif bitmap is None:  # the null type: nothing set
            parts.append(np.zeros(n, dtype=bool))
        else:
            bits = np.unpackbits(np.frombuffer(bitmap, dtype=np.uint8), bitorder="little")
            parts.append(bits[chunk.offset:chunk.offset + n].astype(bool))
    if not parts:
        return np.zeros(0, dtype=bool)
    return np.concatenate(parts) if len(parts) != 1 else parts[0]


def _numpy_type(pa: Any, t: Any) -> Any:
    types = pa.types
    if not (types.is_integer(t) or types.is_floating(t)):
        raise TypeError(f"not a fixed-width number type: {t}")
    width = t.bit_width // 8
    if types.is_signed_integer(t):
        return f"i{width}"
    if types.is_unsigned_integer(t):
        return f"u{width}"
    return f"f{width}"


def arrow_fixed_values(column: Any, fill: int | float | bool = 0) -> Any:
    """The values of an Arrow array (or chunked array) of integers, floats or booleans
    as a numpy array of the same type, ``fill`` where null."""
    import numpy as np
    import pyarrow as pa

    parts = []
    for chunk in chunks_of(column):
        n = len(chunk)
        data = chunk.buffers()[1]
        if pa.types.is_boolean(chunk.type):
            values = np.zeros(n, dtype=bool) if data is None else np.unpackbits(
                np.frombuffer(data, dtype=np.uint8),
                bitorder="little")[chunk.offset:chunk.offset + n].astype(bool)
        else:
            dtype = np.dtype(_numpy_type(pa, chunk.type))
            values = np.zeros(n, dtype=dtype) if data is None else np.frombuffer(
                data, dtype=dtype, count=chunk.offset + n)[chunk.offset:]
        if chunk.null_count:
            values = np.where(arrow_validity(chunk), values, np.asarray(fill, dtype=values.dtype))
        parts.append(values)
    if not parts:
        return np.zeros(0, dtype=bool if pa.types.is_boolean(column.type)
                        else _numpy_type(pa, column.type))
    return np.concatenate(parts) if len(parts) != 1 else parts[0]
