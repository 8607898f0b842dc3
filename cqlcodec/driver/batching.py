"""How big a batch is in the server's own measure, so :func:`insert_columns` never sends
one the server refuses.

Cassandra refuses a batch that spans several partitions when the *data size* of its
mutations exceeds ``batch_size_fail_threshold`` (50 KiB by default) with "Batch too
large". That size is not the bytes of the bound values: per row (and partition) the
server counts liveness and deletion info, per cell a timestamp, a TTL and a local
deletion time besides the value (and the path of a non-frozen collection's element
cells), and the clustering values; the partition key itself is not counted.
:class:`MutationSizer` estimates that measure from the encoded values of one row, never
below what the server counts for the statements this module is used with (INSERT and
UPDATE of whole values).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any, Final

from cassandra import InvalidRequest
from cassandra.cluster import Session
from cassandra.query import PreparedStatement

from cqlcodec.protocol.batch import value_bytes
from cqlcodec.protocol.prepared import Bound

__all__ = ["MutationSizer", "is_batch_too_large"]

# Measured against Cassandra 5.0.9 (the sizes it logs for batches of known rows): each
# row alone in its partition counts 50 bytes besides its cells and clustering values
# (partition and row liveness and deletion info), each cell 20 besides its value
# (timestamp, TTL, local deletion time) and, for a collection element, its path.
CELL_OVERHEAD: Final = 20
ROW_OVERHEAD: Final = 50
# A non-frozen collection written whole: its complex deletion (12).
COLLECTION_OVERHEAD: Final = 12
# A list element's cell path is a timeuuid (set and map elements carry their key, which
# the serialized collection's bytes already hold).
ELEMENT_PATH: Final = 16
# A counter cell holds a counter context (a header and one shard) instead of 8 bytes.
COUNTER_EXTRA: Final = 40

_PARTITION: Final = 0
_CLUSTERING: Final = 1
_CELL: Final = 2
_MULTI_CELL: Final = 3
_COUNTER: Final = 4
_COLLECTIONS: Final = ("list<", "set<", "map<")
_COUNT: Final = struct.Struct(">i")


class MutationSizer:
    """Estimates the server's data size of the rows one prepared INSERT/UPDATE writes.

    Built once per statement from the table's schema in the driver's metadata: each
    bind column is a partition-key column (not counted), a clustering column (its
    value), a regular column (a cell), a non-frozen collection (one cell per element)
    or a counter. Bind markers that are not columns (``USING TTL ?``) count as cells,
    which only overestimates.
    """

    def __init__(self, session: Session, statement: PreparedStatement) -> None:
        roles: list[int] = []
        metadata = session.cluster.metadata
        for column in statement.column_metadata or ():
            roles.append(_role(metadata, column))
        self.roles: Final = roles
        self._simple = all(r in (_PARTITION, _CLUSTERING, _CELL) for r in roles)
        self._base = ROW_OVERHEAD + CELL_OVERHEAD * sum(1 for r in roles if r == _CELL)

    def row_sizes(self, bounds: list[Bound]) -> list[int]:
        """:meth:`row_size` of each bound row (the common case summed in compiled code)."""
        if not self._simple:
            return [self.row_size(b.values) for b in bounds]
        base = self._base  # every value bytes or None: partition-key bytes overcount a little
        return [base + n if n >= 0 else self.row_size(b.values)
                for n, b in zip(value_bytes(bounds), bounds)]

    def row_size(self, values: Sequence[object]) -> int:
        """The data size the server counts for one row written with ``values`` (the
        encoded bind values: bytes, ``None`` for null, anything else for unset), as if
        the row were alone in its partition; never below the server's count."""
        size = ROW_OVERHEAD
        roles = self.roles
        for i, value in enumerate(values):
            role = roles[i] if i < len(roles) else _CELL
            if role == _PARTITION:
                continue
            if value is None:
                size += 0 if role == _CLUSTERING else CELL_OVERHEAD
            elif isinstance(value, (bytes, bytearray, memoryview)):
                n = len(value)
                if role == _CLUSTERING:
                    size += n
                elif role == _MULTI_CELL:
                    elements = _COUNT.unpack_from(value)[0] if n >= 4 else 0
                    size += COLLECTION_OVERHEAD + n + (CELL_OVERHEAD + ELEMENT_PATH) * max(elements, 0)
                elif role == _COUNTER:
                    size += CELL_OVERHEAD + COUNTER_EXTRA + n
                else:
                    size += CELL_OVERHEAD + n
        return size


def _role(metadata: Any, column: Any) -> int:
    keyspace = metadata.keyspaces.get(column.keyspace_name)
    table = keyspace.tables.get(column.table_name) if keyspace is not None else None
    if table is None:
        return _CELL
    name = column.name
    if any(c.name == name for c in table.partition_key):
        return _PARTITION
    if any(c.name == name for c in table.clustering_key):
        return _CLUSTERING
    found = table.columns.get(name)
    if found is None:
        return _CELL
    cql_type = str(found.cql_type)
    if cql_type == "counter":
        return _COUNTER
    if cql_type.startswith(_COLLECTIONS):
        return _MULTI_CELL
    return _CELL


def is_batch_too_large(error: object) -> bool:
    """Whether ``error`` is the server refusing a batch for its size (an
    ``InvalidRequest`` saying "Batch too large"), which splitting the batch cures."""
    return isinstance(error, InvalidRequest) and "batch too large" in str(error).lower()
