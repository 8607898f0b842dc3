"""The page walk: a RESULT Rows body into one finished builder per column.

Metadata is read exactly as :func:`cqlcodec.decode_result` reads it (the parse
description of a no-metadata page is cached on the ``Prepared``). Then every
cell is visited once, in row order, and appended to its column's builder.
Any failure — a bad length, a malformed value, text that is not UTF-8 — stops
the walk; the body is then decoded once more through the row path, so the
DecodeError raised is exactly the one ``decode_result`` raises (the first bad
cell, naming its type, column, row and offset). Nothing is returned from a body
that failed half-way.
"""

from __future__ import annotations

from typing import Any, Final

from mypy_extensions import i64

from cqlcodec.codecs.encryption import ColumnEncryptionPolicy, DecryptingCodec
from cqlcodec.columnar.builders import Node, make_node
from cqlcodec.errors import DecodeError
from cqlcodec.protocol.columns import ColumnSpec
from cqlcodec.protocol.prepared import Prepared
from cqlcodec.protocol.results import RESULT_ROWS, decode_result, read_rows_header
from cqlcodec.protocol.rows import RowsDesc, _cell_error, _wrap_error
from cqlcodec.runtime.buffers import read_i32_be
from cqlcodec.runtime.wire import check_protocol_version, malformed, read_int

INT32_MAX: Final = 0x7FFFFFFF


class Page:
    """A decoded Rows page in columns: finished builders plus the page's metadata."""

    def __init__(self, columns: tuple[ColumnSpec, ...], nodes: list[Node],
                 unset: list[list[int]], num_rows: int, paging_state: bytes | None,
                 flags: int, new_metadata_id: bytes | None) -> None:
        self.columns: Final = columns
        self.nodes: Final = nodes
        self.unset: Final = unset
        self.num_rows: Final = num_rows
        self.paging_state: Final = paging_state
        self.flags: Final = flags
        self.new_metadata_id: Final = new_metadata_id


def decode_page(body: bytes | bytearray | memoryview, protocol_version: int,
                prepared: Prepared | None,
                column_encryption_policy: ColumnEncryptionPolicy | None,
                large_threshold: int = INT32_MAX) -> Page:
    """Decode a RESULT body of kind Rows into a :class:`Page` (DecodeError otherwise).

    ``large_threshold``: bodies longer than this use 64-bit offsets (large_utf8,
    large_binary, large_list); the default keeps 32-bit offsets whenever they fit.
    """
    if protocol_version != 4:
        check_protocol_version(protocol_version)
    buf = body if isinstance(body, bytes) else bytes(body)
    end: i64 = len(buf)
    kind: int = read_i32_be(buf, 0) if end >= 4 else read_int(buf, 0, end, "RESULT kind")
    policy = column_encryption_policy
    if policy is None and prepared is not None:
        policy = prepared.column_encryption_policy
    if kind != RESULT_ROWS:
        other: Any = decode_result(buf, protocol_version, prepared,
                                   column_encryption_policy=policy)
        raise DecodeError(f"expected a RESULT of kind Rows (2), got kind {other.kind}",
                          "RESULT", 0)
    head = read_rows_header(buf, 4, end, protocol_version, prepared, 0, policy)
    desc = head.desc
    try:
        nodes, unset, nrows = walk_rows(buf, head.rows_at, end, desc, end > large_threshold)
    except DecodeError as exc:
        raise row_path_error(buf, protocol_version, prepared, policy, exc) from None
    return Page(desc.columns, nodes, unset, nrows, head.paging_state, head.flags,
                head.new_metadata_id)


def row_path_error(buf: bytes, protocol_version: int, prepared: Prepared | None,
                   policy: ColumnEncryptionPolicy | None, exc: DecodeError) -> DecodeError:
    """The error the row path raises for this body (the first bad cell), else ``exc``."""
    try:
        decode_result(buf, protocol_version, prepared, column_encryption_policy=policy)
    except DecodeError as row_exc:
        return row_exc
    return exc


def walk_rows(buf: bytes, p: i64, end: i64, desc: RowsDesc,
              large: bool) -> tuple[list[Node], list[list[int]], int]:
    """Walk ``[int] rows_count`` and the cells at ``p``; every builder finished."""
    if end - p < 4:
        read_int(buf, p, end, "RESULT rows_count")  # raises, naming what is missing
    raw_rows: int = read_i32_be(buf, p)
    nrows: i64 = raw_rows
    pos: i64 = p + 4
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
    nodes: list[Node] = []
    decrypt: list[DecryptingCodec | None] = []
    encrypted = False
    for c in range(ncols):
        codec = codecs[c]
        if isinstance(codec, DecryptingCodec):
            policy: Any = codec.policy
            nodes.append(make_node(policy.column_type(codec.key), large))
            decrypt.append(codec)
            encrypted = True
        else:
            nodes.append(make_node(desc.columns[c].type, large))
            decrypt.append(None)
    unset: list[list[int]] = [[] for _c in range(ncols)]
    unset_ok = desc.protocol_version >= 4
    r: i64 = 0
    c2: i64 = 0
    cell: i64 = pos
    try:
        while r < nrows:
            c2 = 0
            while c2 < ncols:
                cell = pos
                if pos + 4 > end:
                    raise _cell_error(desc, r, c2, cell, "truncated: no [int] length left")
                n: int = read_i32_be(buf, pos)
                pos += 4
                node = nodes[c2]
                if n >= 0:
                    if n > end - pos:
                        raise _cell_error(desc, r, c2, cell,
                                          f"value of {n} bytes but only {end - pos} remain")
                    dec = decrypt[c2] if encrypted else None
                    if dec is None:
                        node.append(buf, pos, n)
                    else:
                        plain = plaintext(dec, buf, pos, n)
                        node.append(plain, 0, len(plain))
                    pos += n
                elif n == -1:
                    node.append_null()
                elif n == -2:
                    if not unset_ok:
                        raise _cell_error(desc, r, c2, cell,
                                          "length -2 (not set) needs protocol v4 or later")
                    node.append_null()
                    unset[c2].append(r)
                else:
                    raise _cell_error(desc, r, c2, cell, f"invalid value length {n}")
                c2 += 1
            r += 1
    except DecodeError as exc:
        if exc.column is not None:
            raise
        raise _wrap_error(desc, r, c2, cell, exc)
    except Exception as exc:
        raise _wrap_error(desc, r, c2, cell, exc)
    if pos != end:
        raise malformed("RESULT rows", pos, f"{end - pos} trailing bytes after {nrows} rows")
    for c in range(ncols):
        try:
            nodes[c].finish()
        except DecodeError as exc:
            raise _wrap_error(desc, 0, c, 0, exc)
    return nodes, unset, nrows


def plaintext(dec: DecryptingCodec, buf: bytes, pos: i64, n: i64) -> bytes:
    """The decrypted content of one non-null cell of an encrypted column."""
    policy: Any = dec.policy  # untyped call: a bytearray/memoryview result is accepted too
    plain: object = policy.decrypt(dec.key, buf[pos: pos + n])
    if isinstance(plain, bytes):
        return plain
    if isinstance(plain, (bytearray, memoryview)):
        return bytes(plain)
    raise TypeError(f"the column encryption policy's decrypt() returned "
                    f"{type(plain).__name__}, not bytes")
