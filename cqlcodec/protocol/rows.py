"""The rows loop of a RESULT Rows body, its parse description, and row factories.

A :class:`RowsDesc` ("parse description") holds what decoding the rows of one
column layout needs: the column specs and names, one deserializer per column
(decrypting ones for encrypted columns), the protocol version, the
encryption policy and the decode flags it was built for, and — in the
interpreted build only — the generated fast row loop of
``cqlcodec.protocol.interp_fast``, chosen once when the description is built.

Each cell is a ``[value]``: ``[int]`` length ``>= 0`` then content, ``-1`` null,
``-2`` not set (``UNSET``, v4+ only), anything else an error. Compiled, rows of
up to ``MAX_COLUMNS`` columns are decoded by the column-count-specialised loops
of ``cqlcodec.protocol.rowloops``; wider rows, and any row a fast loop stops at, go
through :func:`decode_checked`, which decodes cell by cell and names the
column, its type, the row index and the byte offset in every error. Nothing is
returned from a body that failed half-way.
"""

from __future__ import annotations

import collections
import re
import threading
from typing import Any, Final

from mypy_extensions import i64

from cqlcodec import kinds as K
from cqlcodec.codecs.base import Codec
from cqlcodec.codecs.cache import find_deserializer_flags, make_deserializers_flags
from cqlcodec.codecs.encryption import ColumnEncryptionPolicy, DecryptingCodec
from cqlcodec.errors import DecodeError
from cqlcodec.protocol.columns import ColumnSpec
from cqlcodec.protocol.rowloops import MAX_COLUMNS, decode_rows_fixed
from cqlcodec.protocol.shapes import FastRows, Row
from cqlcodec.runtime.buffers import read_i32_be
from cqlcodec.runtime.build import COMPILED
from cqlcodec.runtime.wire import malformed
from cqlcodec.types.model import CqlType
from cqlcodec.values import UNSET

_UNSET: Final = UNSET
_EMPTY_ROW: Final[Row] = ()


class RowsDesc:
    """Parse description of one column layout (see the module docstring)."""

    def __init__(self, columns: tuple[ColumnSpec, ...], codecs: tuple[Codec, ...],
                 protocol_version: int, policy: ColumnEncryptionPolicy | None,
                 flags: int, fast: FastRows | None) -> None:
        self.columns: Final = columns
        self.names: Final = tuple([c.name for c in columns])
        self.codecs: Final = list(codecs)
        self.protocol_version: Final = protocol_version
        self.policy: Final = policy
        self.flags: Final = flags
        self.fast: Final = fast
        # whether a value may end before its last fields (the message's padding budget):
        # a tuple or UDT anywhere in a column's type; an encrypted column's real type is
        # the policy's, so any column under a policy counts
        self.pads: Final = policy is not None or any(may_pad(c.type) for c in columns)

    def matches(self, protocol_version: int, policy: ColumnEncryptionPolicy | None,
                flags: int) -> bool:
        """True if this description decodes rows for these settings."""
        return (self.protocol_version == protocol_version and self.policy is policy
                and self.flags == flags)


def may_pad(t: CqlType) -> bool:
    """Whether values of ``t`` may hold a tuple or UDT (or a custom type, which cqlcodec
    does not look into), whose trailing fields a value may leave out."""
    kind = t.kind
    if kind == K.TUPLE or kind == K.UDT or kind == K.CUSTOM:
        return True
    for sub in t.subtypes:
        if may_pad(sub):
            return True
    return False


def build_rows_desc(columns: tuple[ColumnSpec, ...], protocol_version: int,
                    policy: ColumnEncryptionPolicy | None, flags: int) -> RowsDesc:
    """A new parse description for ``columns`` (deserializers from the shared caches)."""
    if policy is None:
        codecs = make_deserializers_flags([c.type for c in columns], flags)
    else:
        found: list[Codec] = []
        for col in columns:
            key = col.key
            if policy.contains_column(key):
                found.append(DecryptingCodec(
                    policy, key, find_deserializer_flags(policy.column_type(key), flags)))
            else:
                found.append(find_deserializer_flags(col.type, flags))
        codecs = tuple(found)
    return RowsDesc(columns, codecs, protocol_version, policy, flags,
                    _fast_rows(columns, codecs, protocol_version, policy))


def with_codecs(desc: RowsDesc, codecs: tuple[Codec, ...]) -> RowsDesc:
    """A copy of ``desc`` that decodes its columns with ``codecs`` (one per column)."""
    if len(codecs) != len(desc.columns):
        raise ValueError(f"{len(codecs)} codecs for {len(desc.columns)} columns")
    return RowsDesc(desc.columns, codecs, desc.protocol_version, desc.policy, desc.flags,
                    _fast_rows(desc.columns, codecs, desc.protocol_version, desc.policy))


def _fast_rows(columns: tuple[ColumnSpec, ...], codecs: tuple[Codec, ...],
               protocol_version: int, policy: ColumnEncryptionPolicy | None) -> FastRows | None:
    """The interpreted build's generated row loop for these codecs (None when compiled)."""
    if COMPILED or policy is not None:
        return None
    from cqlcodec.protocol.interp_fast import plan_rows

    return plan_rows(columns, codecs, protocol_version)


def decode_rows(buf: bytes, pos: i64, end: i64, nrows: i64,
                desc: RowsDesc) -> tuple[list[Row], i64]:
    """Decode ``nrows`` rows starting at ``pos``; returns (rows, next position).

    Compiled, rows of up to ``MAX_COLUMNS`` columns go through the loops of
    ``cqlcodec.protocol.rowloops``; interpreted, through the description's fast path
    when it has one. Both hand any row they cannot decode to the checked loop,
    which decodes it or raises the error naming column, row and offset.
    """
    codecs = desc.codecs
    ncols: i64 = len(codecs)
    if nrows < 0:
        raise malformed("rows", pos - 4, f"negative rows_count {nrows}")
    if nrows > 0:
        if ncols == 0:
            raise malformed("rows", pos - 4, f"rows_count {nrows} for a result with no columns")
        if nrows > (end - pos) // (4 * ncols):
            raise malformed("rows", pos - 4,
                            f"rows_count {nrows} x {ncols} columns cannot fit in the "
                            f"{end - pos} bytes that remain")
    rows: list[Row] = [_EMPTY_ROW] * nrows
    r: i64 = 0
    fast = desc.fast
    if fast is not None:
        while r < nrows:
            done, next_pos = fast(buf, pos, end, r, nrows, rows)
            r = done
            pos = next_pos
            if r < nrows:  # the fast path stopped at row r: decode it carefully
                pos = decode_checked(buf, pos, end, r, r + 1, desc, rows)
                r += 1
        return rows, pos
    if COMPILED and ncols <= MAX_COLUMNS:
        r, pos = decode_rows_fixed(buf, pos, end, 0, nrows, codecs,
                                   desc.protocol_version >= 4, rows)
    if r < nrows:
        pos = decode_checked(buf, pos, end, r, nrows, desc, rows)
    return rows, pos


def decode_checked(buf: bytes, pos: i64, end: i64, r: i64, stop: i64, desc: RowsDesc,
                   rows: list[Row]) -> i64:
    """Decode rows ``r..stop`` into ``rows`` cell by cell; returns the next position.

    Every error names the column, its type, the row index and the cell offset.
    """
    codecs = desc.codecs
    ncols: i64 = len(codecs)
    unset_ok = desc.protocol_version >= 4
    row: list[object] = [None] * ncols
    c: i64 = 0
    cell: i64 = pos
    try:
        while r < stop:
            c = 0
            while c < ncols:
                cell = pos
                if pos + 4 > end:
                    raise _cell_error(desc, r, c, cell, "truncated: no [int] length left")
                n: int = read_i32_be(buf, pos)
                pos += 4
                if n >= 0:
                    if n > end - pos:
                        raise _cell_error(desc, r, c, cell,
                                          f"value of {n} bytes but only {end - pos} remain")
                    row[c] = codecs[c].decode(buf, pos, n)
                    pos += n
                elif n == -1:
                    row[c] = None
                elif n == -2:
                    if not unset_ok:
                        raise _cell_error(desc, r, c, cell,
                                          "length -2 (not set) needs protocol v4 or later")
                    row[c] = _UNSET
                else:
                    raise _cell_error(desc, r, c, cell, f"invalid value length {n}")
                c += 1
            rows[r] = tuple(row)
            r += 1
    except DecodeError as exc:
        if exc.column is not None:
            raise
        raise _wrap_error(desc, r, c, cell, exc)
    except Exception as exc:
        raise _wrap_error(desc, r, c, cell, exc)
    return pos


def _cell_error(desc: RowsDesc, r: i64, c: i64, offset: i64, why: str) -> DecodeError:
    col = desc.columns[c]
    cql = col.type.cql_name
    return DecodeError(f'malformed {cql} in column "{col.name}" (row {r}) at offset '
                       f"{offset}: {why}", cql, offset, col.name)


def _wrap_error(desc: RowsDesc, r: i64, c: i64, offset: i64, exc: Exception) -> DecodeError:
    col = desc.columns[c]
    cql = col.type.cql_name
    inner = exc.offset if isinstance(exc, DecodeError) and exc.offset is not None else offset
    err = DecodeError(f'cannot decode column "{col.name}" ({cql}), row {r}, cell at offset '
                      f"{offset}: {exc}", cql, inner, col.name)
    err.__cause__ = exc  # explicit: mypyc drops the cause of ``raise ... from exc``
    return err


# --- row factories -------------------------------------------------------------------

def tuple_factory(names: tuple[str, ...], rows: list[Row]) -> list[Any]:
    """Rows as tuples (the default; returns ``rows`` itself)."""
    return rows


def dict_factory(names: tuple[str, ...], rows: list[Row]) -> list[Any]:
    """Rows as dicts keyed by column name (a repeated name keeps the last column)."""
    return [dict(zip(names, row)) for row in rows]


_NOT_ALNUM: Final = re.compile("[^a-zA-Z0-9]")
_ALNUM: Final = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
_ROW_CLASS_LIMIT: Final = 256
_row_classes: dict[tuple[str, ...], Any] = {}
_row_classes_lock: Final = threading.Lock()
_namedtuple: Final[Any] = collections.namedtuple


def _field_name(name: str) -> str:
    # Trim trailing characters other than [A-Za-z0-9_], then leading ones other than
    # [A-Za-z0-9], then replace the rest; plain scans, because an anchored regex
    # backtracks quadratically on hostile column names.
    end = len(name)
    while end > 0 and name[end - 1] not in _ALNUM and name[end - 1] != "_":
        end -= 1
    start = 0
    while start < end and name[start] not in _ALNUM:
        start += 1
    return _NOT_ALNUM.sub("_", name[start:end])


def row_class(names: tuple[str, ...]) -> Any:
    """The (cached) namedtuple class for these column names.

    Names are cleaned like the drivers do (characters other than letters and
    digits become ``_``; leading and trailing junk is dropped); names that are
    still not valid, keywords or duplicates become positional ``_<index>``.
    """
    cls: Any = _row_classes.get(names)
    if cls is None:
        cls = _namedtuple("Row", [_field_name(n) for n in names], rename=True)
        with _row_classes_lock:
            if len(_row_classes) >= _ROW_CLASS_LIMIT:
                for old in list(_row_classes)[: _ROW_CLASS_LIMIT // 4]:
                    _row_classes.pop(old, None)
            _row_classes[names] = cls
    return cls


def named_tuple_factory(names: tuple[str, ...], rows: list[Row]) -> list[Any]:
    """Rows as namedtuples (attribute and index access; see :func:`row_class`)."""
    make = row_class(names)._make
    return [make(row) for row in rows]
