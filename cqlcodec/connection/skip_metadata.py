"""Skip-metadata for prepared statements on protocol v5, where the result metadata id
makes it safe.

The drivers never set the EXECUTE flag 0x02 (skip metadata): every answer to a prepared
``SELECT`` repeats its column specs, which the driver then parses into new type classes.
On protocol v5 a prepared statement carries a result metadata id; sent with the flag,
the server leaves the metadata out while that id is current, and answers with the new
metadata and its id (flag ``METADATA_CHANGED``) once the table has changed.

The id and the columns it describes travel together: a statement's ``result_metadata``
becomes a :class:`ResultColumns`, the same list of the driver's column tuples that also
carries its ``metadata_id`` and its statement. The connection's ``send_msg`` is handed
that list by the driver (for decoding the answer); the EXECUTE it sends then names the
list's own id, so the columns an answer without metadata is decoded with are always the
ones its id stands for, whatever other threads do to the statement meanwhile. A
``METADATA_CHANGED`` answer is decoded with the metadata it carries and gives the
statement a new :class:`ResultColumns` (:func:`columns_changed`): the next executions
send the new id.

Only on v5, only through cqlcodec's connection class (:mod:`.driver_class`) and only
for answers that install()'s protocol handler decodes (:data:`HANDLER_FLAG`); the
driver's own connection classes send the driver's EXECUTE, which carries the metadata.
"""

from __future__ import annotations

import io
from typing import Any, Final

from cassandra.protocol import ExecuteMessage

SKIP_METADATA: Final = 0x02
VERSION: Final = 5


class ResultColumns(list):  # type: ignore[type-arg]
    """A prepared statement's result metadata (the driver's list of column tuples) with
    the result metadata id that stands for it and the statement it belongs to."""

    __slots__ = ("metadata_id", "statement")

    def __init__(self, columns: list[Any], metadata_id: bytes, statement: Any) -> None:
        super().__init__(columns)
        self.metadata_id = metadata_id
        self.statement = statement


class SkipMetadataExecute(ExecuteMessage):
    """The driver's EXECUTE with the skip-metadata flag set (protocol v5 only)."""

    def send_body(self, f: io.BytesIO, protocol_version: int, *more: Any) -> None:
        """The driver's body, then its ``[int] flags`` with 0x02 added: the flags follow
        the ``[short bytes]`` query id, result metadata id and ``[short]`` consistency.
        ``more``: what else the driver passes (scylla-driver: its protocol features)."""
        at = f.tell()
        super().send_body(f, protocol_version, *more)
        metadata_id = self.result_metadata_id
        if protocol_version != VERSION or metadata_id is None:
            return
        flags_at = at + 2 + len(self.query_id) + 2 + len(metadata_id) + 2
        end = f.tell()
        f.seek(flags_at)
        flags = int.from_bytes(f.read(4), "big") | SKIP_METADATA
        f.seek(flags_at)
        f.write(flags.to_bytes(4, "big"))
        f.seek(end)


def track(statement: Any) -> None:
    """Give a v5 prepared statement with result columns and an id its
    :class:`ResultColumns` (again, after the driver's own code re-prepared it)."""
    columns = statement.result_metadata
    if type(columns) is list and columns and statement.protocol_version == VERSION:
        metadata_id = statement.result_metadata_id
        if metadata_id:
            _set_columns(statement, ResultColumns(columns, metadata_id, statement))


HANDLER_FLAG: Final = "cqlcodec_skips_metadata"
"""The attribute (True, in the class's own namespace: not inherited) of a protocol
handler class whose RESULT decoding takes the columns of an answer without metadata
from ``result_metadata``: install()'s handler. Answers for any other handler (columnar
reads, which keep the body as it is; a subclass an application made) carry their
metadata."""


def before_send(msg: Any, decoder: Any, result_metadata: Any, protocol_version: int) -> None:
    """Make ``msg`` (the driver's EXECUTE) skip the metadata that ``result_metadata``, the
    list its answer will be decoded with (by ``decoder``), describes."""
    if (type(result_metadata) is ResultColumns and protocol_version == VERSION
            and (type(msg) is ExecuteMessage or type(msg) is SkipMetadataExecute)
            and getattr(getattr(decoder, "__self__", None), "__dict__", {}).get(HANDLER_FLAG)):
        msg.__class__ = SkipMetadataExecute
        msg.result_metadata_id = result_metadata.metadata_id


def columns_changed(sent: Any, columns: list[Any], metadata_id: bytes) -> None:
    """A ``METADATA_CHANGED`` answer to an EXECUTE sent with ``sent``: the statement's
    result columns become ``columns``, with their new ``metadata_id``."""
    if type(sent) is not ResultColumns:
        return
    statement = sent.statement
    current = statement.result_metadata
    if type(current) is ResultColumns and current.metadata_id == metadata_id:
        return  # another answer got there first
    _set_columns(statement, ResultColumns(columns, metadata_id, statement))


def _set_columns(statement: Any, columns: ResultColumns) -> None:
    """Make ``columns`` and their id the statement's result metadata: through
    ``update_result_metadata`` where the driver has it (scylla-driver 3.29.12 makes
    ``result_metadata`` and ``result_metadata_id`` read-only, replaced as one pair),
    else by setting both attributes (cassandra-driver)."""
    update = getattr(statement, "update_result_metadata", None)
    if update is not None:
        update(columns, columns.metadata_id)
    else:
        statement.result_metadata = columns
        statement.result_metadata_id = columns.metadata_id
