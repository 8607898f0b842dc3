"""The Arrow PyCapsules of a column or a batch: pyarrow's when pyarrow is installed,
else the ctypes structs of :mod:`cqlcodec.columnar.arrow`.

pyarrow-owned structs release through pyarrow's C code, which is safe in every state
of the interpreter; the ctypes release callbacks are safe except in the one case the
columnar guide documents (a consumer other than pyarrow releasing while a Python
exception is being raised: the release completes, the exception is reported as
unraisable and the consumer then raises ``SystemError``).
"""

from __future__ import annotations

from typing import Any

from cqlcodec.columnar import arrow, pyarrow_export
from cqlcodec.columnar.arrow import Field

_pyarrow: list[Any] = []


def pyarrow_or_none() -> Any:
    """The pyarrow module, or None when it cannot be imported (looked up once)."""
    if not _pyarrow:
        try:
            import pyarrow
        except ImportError:
            pyarrow = None
        _pyarrow.append(pyarrow)
    return _pyarrow[0]


def schema_capsule(f: Field) -> object:
    """An ``arrow_schema`` capsule for ``f``."""
    pa = pyarrow_or_none()
    return arrow.schema_capsule(f) if pa is None else pyarrow_export.schema_capsule(pa, f)


def array_capsules(f: Field) -> tuple[object, object]:
    """The ``(arrow_schema, arrow_array)`` capsule pair for ``f`` (zero copy)."""
    pa = pyarrow_or_none()
    return arrow.array_capsules(f) if pa is None else pyarrow_export.array_capsules(pa, f)


def stream_capsule(f: Field) -> object:
    """An ``arrow_array_stream`` capsule giving the struct field ``f`` as one record batch."""
    pa = pyarrow_or_none()
    return arrow.stream_capsule(f) if pa is None else pyarrow_export.stream_capsule(pa, f)
