"""The public columnar API: :func:`decode_columns`, :class:`ColumnBatch`, :class:`Column`."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from cqlcodec.codecs.encryption import ColumnEncryptionPolicy
from cqlcodec.columnar import arrow, export
from cqlcodec.columnar.builders import Node, column_pylist
from cqlcodec.columnar.unify import pandas_frame_of
from cqlcodec.columnar.walk import Page, decode_page
from cqlcodec.errors import DecodeError
from cqlcodec.protocol.columns import ColumnSpec
from cqlcodec.protocol.metadata import HAS_MORE_PAGES
from cqlcodec.protocol.prepared import Prepared
from cqlcodec.types.model import CqlType
from cqlcodec.values import UNSET


def decode_columns(body: bytes | bytearray | memoryview, protocol_version: int,
                   prepared: Prepared | None = None, *,
                   column_encryption_policy: ColumnEncryptionPolicy | None = None
                   ) -> ColumnBatch:
    """Decode a RESULT body of kind Rows into columns (a :class:`ColumnBatch`).

    Same inputs and metadata handling as :func:`cqlcodec.decode_result`: ``prepared``
    describes no-metadata pages (its cached parse description is reused) and
    supplies the default ``column_encryption_policy``. Every cell is decoded once
    into per-column buffers; no Python object is made per cell for fixed-width
    types. Malformed bodies raise exactly the DecodeError the row path raises
    (type, column, row, offset); a body of another RESULT kind raises DecodeError.
    """
    return ColumnBatch(decode_page(body, protocol_version, prepared, column_encryption_policy))


class Column:
    """One column of a :class:`ColumnBatch`.

    ``cql_type``, ``name``, ``null_count`` and ``len()``; ``to_pylist()`` gives
    exactly the values the row path gives for this column; ``to_numpy()`` a
    numpy array; the Arrow PyCapsule interface (``__arrow_c_schema__``,
    ``__arrow_c_array__``) gives the Arrow array without any Arrow library.
    """

    __slots__ = ("_node", "_spec", "_unset")

    def __init__(self, spec: ColumnSpec, node: Node, unset: list[int]) -> None:
        self._spec = spec
        self._node = node
        self._unset = unset

    @property
    def name(self) -> str:
        """The column name."""
        return self._spec.name

    @property
    def spec(self) -> ColumnSpec:
        """The column's :class:`ColumnSpec` (keyspace, table, name, type)."""
        return self._spec

    @property
    def cql_type(self) -> CqlType:
        """The column's CQL type (for an encrypted column, the plaintext type)."""
        return self._node.t if self._spec.type.unwrapped() != self._node.t else self._spec.type

    @property
    def null_count(self) -> int:
        """Number of null cells (a "not set" cell counts as null)."""
        return self._node.nulls

    @property
    def arrow_format(self) -> str:
        """The Arrow format string of this column (e.g. ``i``, ``tsm:UTC``, ``+l``)."""
        return self._node.fmt

    def __len__(self) -> int:
        return self._node.length

    def to_pylist(self) -> list[Any]:
        """The values as the row path decodes them (``None`` for null, ``UNSET`` for a
        not-set cell). A set or map with more than 64 elements sharing one hash value
        raises DecodeError (hash flooding), as the row path does."""
        try:
            return column_pylist(self._node, self._unset, UNSET)
        except DecodeError as exc:
            if exc.column is not None:
                raise
            err = DecodeError(f'cannot decode column "{self.name}" ({self.cql_type.cql_name}): '
                              f"{exc}", self.cql_type.cql_name, exc.offset, self.name)
            raise err from exc

    def to_numpy(self) -> Any:
        """numpy form: numeric, boolean and temporal columns as typed arrays
        (``datetime64[ms]`` timestamps, ``datetime64[D]`` dates, ``timedelta64[ns]``
        times), numeric vectors as 2-D ``(rows, n)`` arrays (vectors of vectors 3-D),
        a ``numpy.ma.MaskedArray``
        when there are nulls; other types as an object array of :meth:`to_pylist`.
        Typed arrays are read-only views of the column's buffers, except the matrix of
        a fixed-width numeric vector column, made anew from the page's bytes."""
        from cqlcodec.columnar.numpy_conv import to_numpy

        return to_numpy(self._node, self.to_pylist)

    def __arrow_c_schema__(self) -> object:
        """Arrow PyCapsule interface: the column's field as an ``arrow_schema`` capsule."""
        return export.schema_capsule(arrow.field_of(self._node, self.name))

    def __arrow_c_array__(self, requested_schema: object | None = None) -> tuple[object, object]:
        """Arrow PyCapsule interface: ``(arrow_schema, arrow_array)`` capsules (zero copy)."""
        return export.array_capsules(arrow.field_of(self._node, self.name))

    def __repr__(self) -> str:
        return (f"<cqlcodec.Column {self.name!r} {self.cql_type.cql_name} {len(self)} rows, "
                f"{self.null_count} nulls>")


def joined_numpy(pages: list[Column]) -> Any:
    """The numpy form of one column over many pages (its :class:`Column` in each), as
    one array allocated once (see ``ColumnPages.to_numpy``)."""
    from cqlcodec.columnar.numpy_conv import joined

    return joined([c._node for c in pages], [c.to_pylist for c in pages])


class ColumnBatch:
    """The columns of one RESULT Rows page (see :func:`decode_columns`).

    ``num_rows`` (also ``len()``), ``names``, ``types``, ``columns`` (the
    :class:`ColumnSpec` of each), ``paging_state``, ``has_more_pages``,
    ``new_metadata_id``; ``batch[i]`` or ``batch["name"]`` gives a :class:`Column`
    and iterating gives the columns in order. ``__arrow_c_stream__`` and
    ``__arrow_c_array__`` (a struct array) let pyarrow, polars and DuckDB read it
    directly; ``to_pandas()`` and ``to_polars()`` are conveniences.
    """

    def __init__(self, page: Page) -> None:
        self._page = page
        self._made: list[Column] | None = None

    @property
    def _columns(self) -> list[Column]:
        made = self._made
        if made is None:  # on first use: a page read only through Arrow never needs them
            page = self._page
            made = self._made = [Column(spec, node, unset) for spec, node, unset
                                 in zip(page.columns, page.nodes, page.unset)]
        return made

    @property
    def num_rows(self) -> int:
        """Number of rows in the page."""
        return self._page.num_rows

    @property
    def names(self) -> tuple[str, ...]:
        """Column names, in order."""
        return tuple([c.name for c in self._page.columns])

    @property
    def types(self) -> tuple[CqlType, ...]:
        """Column CQL types, in order."""
        return tuple([c.cql_type for c in self._columns])

    @property
    def columns(self) -> tuple[ColumnSpec, ...]:
        """The :class:`ColumnSpec` of each column."""
        return self._page.columns

    @property
    def paging_state(self) -> bytes | None:
        """Bytes to send for the next page, or None."""
        return self._page.paging_state

    @property
    def has_more_pages(self) -> bool:
        """The Has_more_pages flag (0x0002)."""
        return (self._page.flags & HAS_MORE_PAGES) != 0

    @property
    def new_metadata_id(self) -> bytes | None:
        """The new result metadata id when the server set Metadata_changed, else None."""
        return self._page.new_metadata_id

    def __len__(self) -> int:
        return self._page.num_rows

    def __iter__(self) -> Iterator[Column]:
        return iter(self._columns)

    def __getitem__(self, key: int | str) -> Column:
        if isinstance(key, str):
            for c in self._columns:
                if c.name == key:
                    return c
            raise KeyError(key)
        return self._columns[key]

    def column(self, key: int | str) -> Column:
        """``batch[key]``."""
        return self[key]

    def to_pydict(self) -> dict[str, list[Any]]:
        """``{name: column.to_pylist()}`` (a repeated name keeps the last column)."""
        return {c.name: c.to_pylist() for c in self._columns}

    def _field(self, interval_as_struct: bool = False) -> arrow.Field:
        return arrow.batch_field(self.names, self._page.nodes, self.num_rows,
                                 interval_as_struct)

    def __arrow_c_schema__(self) -> object:
        """Arrow PyCapsule interface: the batch schema (a struct of the columns)."""
        return export.schema_capsule(self._field())

    def __arrow_c_array__(self, requested_schema: object | None = None) -> tuple[object, object]:
        """Arrow PyCapsule interface: the batch as one struct array (zero copy)."""
        return export.array_capsules(self._field())

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        """Arrow PyCapsule interface: a stream holding this page as one record batch."""
        return export.stream_capsule(self._field())

    def to_pandas(self) -> Any:
        """A pandas DataFrame. With pyarrow installed every column keeps its exact Arrow
        type as a ``pandas.ArrowDtype`` (nullable integers, nanosecond times, decimals,
        lists...; zero copy for fixed-width columns), except a duration column, which
        holds :class:`cqlcodec.Duration` objects (see
        :func:`cqlcodec.columnar.unify.pandas_frame_of`); without pyarrow, columns come
        from :meth:`Column.to_numpy` (object columns for types without a numpy form)."""
        import pandas

        try:
            import pyarrow
        except ImportError:
            return pandas.DataFrame({c.name: c.to_numpy() for c in self._columns})
        return pandas_frame_of(pyarrow.table(self))

    def to_polars(self) -> Any:
        """A polars DataFrame (read through the Arrow stream). polars imports neither
        Arrow month_day_nano intervals nor decimal256: duration columns become
        ``struct{months, days, nanoseconds}`` here, and a varint column whose page needs
        39 to 76 digits its two's-complement ``Binary`` (as with more digits)."""
        import polars

        return polars.DataFrame(_Stream(self._field(True)))

    def __repr__(self) -> str:
        cols = ", ".join([f"{c.name} {c.cql_type.cql_name}" for c in self._columns])
        return f"<cqlcodec.ColumnBatch [{cols}] {self.num_rows} rows>"


class _Stream:
    """An object with only ``__arrow_c_stream__``, for one export variant of a batch."""

    def __init__(self, f: arrow.Field) -> None:
        self._f = f

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        return export.stream_capsule(self._f)
