"""Columnar results: a RESULT Rows page decoded straight into typed column buffers.

``decode_columns(body, protocol_version, prepared=None)`` returns a
:class:`ColumnBatch` of :class:`Column` objects: exact Python values
(``to_pylist``), numpy arrays (``to_numpy``) and Arrow arrays through the Arrow
PyCapsule interface, without pyarrow.
"""

from cqlcodec.columnar.batch import Column, ColumnBatch, decode_columns

__all__ = ["Column", "ColumnBatch", "decode_columns"]

# binding rows from columns: importing the module registers Prepared.bind_columnar
from cqlcodec.columnar.bind import bind_columnar as bind_columnar  # noqa: E402
