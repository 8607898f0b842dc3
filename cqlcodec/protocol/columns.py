"""One column of a statement or a result: :class:`ColumnSpec`."""

from __future__ import annotations

from typing import NamedTuple

from cqlcodec.codecs.encryption import ColumnKey
from cqlcodec.types.model import CqlType


class ColumnSpec(NamedTuple):
    """One column of a statement or result: keyspace, table, name and CQL type.

    An immutable named tuple (like the drivers' ``ColumnMetadata``): equal,
    hashable and unpackable by value. ``key`` is the ``(keyspace, table, name)``
    tuple column-encryption policies use.
    """

    keyspace: str
    table: str
    name: str
    type: CqlType

    @property
    def key(self) -> ColumnKey:
        """``(keyspace, table, name)``: the column as a column-encryption policy sees it."""
        return (self.keyspace, self.table, self.name)
