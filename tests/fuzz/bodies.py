"""Valid RESULT and PREPARED bodies, and a reference parser for any body.

The generator writes bodies of every RESULT kind (spec section 5) for protocol
versions 3-5 with every rows-metadata flag, remembering where each length word
and count sits.  :func:`ref_result` and :func:`ref_prepared` return a
:class:`~fuzz.model.Verdict` for an arbitrary body, with the expected outcome in
a normal form built from plain tuples (see :func:`result_form`).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from cqlcodec import CqlType

from .model import (
    Ctx,
    Verdict,
    _dec,
    _empty_value,
    gen_content,
    padding_budget,
    random_type,
    read_option_ref,
    wire_type,
    write_option,
)
from .refwire import Reader, Reject, Slot, Unsure, Writer

KIND_VOID = 1
KIND_ROWS = 2
KIND_SET_KEYSPACE = 3
KIND_PREPARED = 4
KIND_SCHEMA_CHANGE = 5
GLOBAL_TABLES_SPEC = 0x0001
HAS_MORE_PAGES = 0x0002
NO_METADATA = 0x0004
METADATA_CHANGED = 0x0008
CONTINUOUS_PAGING = 0x40000000
LAST_CONTINUOUS_PAGE = 0x80000000
KNOWN_ROWS_FLAGS = GLOBAL_TABLES_SPEC | HAS_MORE_PAGES | NO_METADATA | METADATA_CHANGED
UNSET_FORM = ("UNSET",)

Column = tuple[str, str, str, CqlType]


@dataclass
class Body:
    """A generated body with its slots and the context needed to decode it."""

    data: bytes
    slots: list[Slot]
    protocol_version: int
    kind: str  # "void" | "rows" | "set_keyspace" | "prepared" | "schema_change"
    result_columns: list[Column] = field(default_factory=list)  # for NO_METADATA rows


def random_columns(rng: random.Random, n: int, ks: str = "", table: str = "") -> list[Column]:
    cols: list[Column] = []
    for i in range(n):
        name = rng.choice(["a", "b", "col", "Quoted Name", "ü", "k"]) + str(i)
        cols.append((ks or rng.choice(["ks", "other"]), table or rng.choice(["t", "u"]), name,
                     random_type(rng, rng.choice([0, 1, 2, 3]))))
    return cols


def _write_col_specs(w: Writer, cols: list[Column], global_spec: bool) -> None:
    for ks, table, name, t in cols:
        if not global_spec:
            w.string(ks)
            w.string(table)
        w.string(name)
        write_option(w, t)


def _write_rows_metadata(w: Writer, rng: random.Random, cols: list[Column], pv: int,
                         no_metadata: bool, paging: bytes | None, new_id: bytes | None) -> None:
    same_table = len({(c[0], c[1]) for c in cols}) <= 1 and bool(cols)
    global_spec = same_table and not no_metadata and rng.random() < 0.7
    flags = 0
    if global_spec:
        flags |= GLOBAL_TABLES_SPEC
    if paging is not None:
        flags |= HAS_MORE_PAGES
    if no_metadata:
        flags |= NO_METADATA
    if new_id is not None:
        flags |= METADATA_CHANGED
    w.i32(flags, slot=False)
    w.i32(len(cols))
    if paging is not None:
        w.i32(len(paging))
        w.raw(paging)
    if no_metadata:
        return
    if new_id is not None:
        w.short_bytes(new_id)
    if global_spec:
        w.string(cols[0][0])
        w.string(cols[0][1])
    _write_col_specs(w, cols, global_spec)


def gen_rows_body(rng: random.Random, pv: int, cols: list[Column] | None = None,
                  no_metadata: bool = False, max_rows: int = 6) -> Body:
    """A Rows RESULT body (kind word included)."""
    if cols is None:
        ncols = rng.choice([0, 1, 1, 2, 3, 5])
        ks, table = ("ks", "t") if rng.random() < 0.7 else ("", "")
        cols = random_columns(rng, ncols, ks, table)
    w = Writer()
    w.i32(KIND_ROWS, slot=False)
    paging = rng.randbytes(rng.choice([0, 3, 16])) if rng.random() < 0.3 else None
    new_id = rng.randbytes(16) if pv >= 5 and not no_metadata and rng.random() < 0.2 else None
    _write_rows_metadata(w, rng, cols, pv, no_metadata, paging, new_id)
    nrows = rng.choice([0, 1, 2, max_rows]) if cols else 0
    w.i32(nrows)
    budget = [30]
    for _r in range(nrows):
        for _ks, _table, _name, t in cols:
            roll = rng.random()
            if roll < 0.1:
                w.i32(-1)
                continue
            at = w.begin_i32_len()
            gen_content(w, rng, t, budget)
            w.end_i32_len(at)
    return Body(w.getvalue(), w.slots, pv, "rows", cols)


def gen_prepared_body(rng: random.Random, pv: int, with_kind: bool,
                      result_cols: list[Column] | None = None) -> Body:
    """A PREPARED body (with or without the leading kind word)."""
    w = Writer()
    if with_kind:
        w.i32(KIND_PREPARED, slot=False)
    w.short_bytes(rng.randbytes(16))
    if pv >= 5:
        w.short_bytes(rng.randbytes(16))
    nbind = rng.choice([0, 1, 2, 4])
    bind_cols = random_columns(rng, nbind, "ks", "t")
    global_spec = bool(bind_cols) and rng.random() < 0.8
    w.i32(GLOBAL_TABLES_SPEC if global_spec else 0, slot=False)
    w.i32(nbind)
    if pv >= 4:
        pk = sorted(rng.sample(range(nbind), rng.randint(0, nbind))) if nbind else []
        w.i32(len(pk))
        for i in pk:
            w.short(i)
    if global_spec:
        w.string("ks")
        w.string("t")
    _write_col_specs(w, bind_cols, global_spec)
    if result_cols is None:
        result_cols = random_columns(rng, rng.choice([0, 1, 3]), "ks", "t")
    _write_rows_metadata(w, rng, result_cols, pv, not result_cols, None, None)
    return Body(w.getvalue(), w.slots, pv, "prepared", result_cols)


def gen_body(rng: random.Random, pv: int) -> Body:
    """A RESULT body of a random kind."""
    roll = rng.random()
    if roll < 0.6:
        return gen_rows_body(rng, pv)
    w = Writer()
    if roll < 0.67:
        w.i32(KIND_VOID, slot=False)
        return Body(w.getvalue(), w.slots, pv, "void")
    if roll < 0.74:
        w.i32(KIND_SET_KEYSPACE, slot=False)
        w.string(rng.choice(["ks", "Mixed Case", "ü" * 3, ""]))
        return Body(w.getvalue(), w.slots, pv, "set_keyspace")
    if roll < 0.87:
        return gen_prepared_body(rng, pv, True)
    w.i32(KIND_SCHEMA_CHANGE, slot=False)
    w.string(rng.choice(["CREATED", "UPDATED", "DROPPED"]))
    target = rng.choice(["KEYSPACE", "TABLE", "TYPE", "FUNCTION", "AGGREGATE"])
    w.string(target)
    w.string("ks")
    if target != "KEYSPACE":
        w.string("name")
    if target in ("FUNCTION", "AGGREGATE"):
        args = rng.choice([[], ["int"], ["text", "frozen<list<int>>"]])
        w.short(len(args))
        for a in args:
            w.string(a)
    return Body(w.getvalue(), w.slots, pv, "schema_change")


# --------------------------------------------------------------------------- reference parser

def _ref_col_specs(ctx: Ctx, r: Reader, n: int, global_spec: bool) -> list[tuple[str, str, str, CqlType | None]]:
    g_ks = g_table = ""
    if global_spec:
        g_ks = r.string("global keyspace")
        g_table = r.string("global table")
    cols: list[tuple[str, str, str, CqlType | None]] = []
    for _i in range(n):
        ks, table = (g_ks, g_table) if global_spec else (r.string("keyspace"), r.string("table"))
        name = r.string("column name")
        t = read_option_ref(r)
        if t is None:
            ctx.either("column type given by a class name the codec's parser decides on")
        cols.append((ks, table, name, t))
    return cols


def _ref_rows_metadata(ctx: Ctx, r: Reader, pv: int,
                       known: list[Column] | None,
                       ) -> tuple[list[tuple[str, str, str, CqlType | None]], bytes | None, bytes | None, int]:
    flags = r.i32("rows flags") & 0xFFFFFFFF
    if flags & CONTINUOUS_PAGING:
        raise Unsure("DSE continuous paging: drivers disagree on where its [int] sits")
    if flags & NO_METADATA and flags & METADATA_CHANGED:
        raise Unsure("no_metadata together with metadata_changed (forbidden by the v5 spec)")
    if flags & ~KNOWN_ROWS_FLAGS & ~LAST_CONTINUOUS_PAGE:
        ctx.either(f"unknown rows flags {flags:#x}")
    ncols = r.i32("column count")
    if ncols < 0:
        raise Reject(f"negative column count {ncols}")
    paging = None
    if flags & HAS_MORE_PAGES:
        size = r.i32("paging state length")
        if size < -1:
            raise Reject(f"paging state length {size}")
        if size >= 0:  # -1: a null paging state
            paging = r.take(size, "paging state")
    if flags & NO_METADATA:
        if known is None:
            ctx.either("no-metadata rows without known columns")
            return [("", "", "", None)] * min(ncols, r.remaining() + 1), paging, None, flags
        if len(known) != ncols:
            ctx.either("no-metadata column count differs from the prepared columns")
            return [("", "", "", None)] * min(ncols, r.remaining() + 1), paging, None, flags
        return [(c[0], c[1], c[2], wire_type(c[3])) for c in known], paging, None, flags
    new_id = None
    if flags & METADATA_CHANGED:
        if pv < 5:
            ctx.either("metadata_changed before v5")
        new_id = r.short_bytes("new metadata id")
    if ncols * 4 > r.remaining():
        raise Reject("column count larger than the data can hold")
    return _ref_col_specs(ctx, r, ncols, bool(flags & GLOBAL_TABLES_SPEC)), paging, new_id, flags


def _ref_rows(ctx: Ctx, r: Reader, pv: int, known: list[Column] | None) -> object:
    cols, paging, new_id, _flags = _ref_rows_metadata(ctx, r, pv, known)
    nrows = r.i32("row count")
    if nrows < 0:
        raise Reject(f"negative row count {nrows}")
    if cols and nrows * 4 * len(cols) > r.remaining():
        raise Reject("row count larger than the data can hold")
    if not cols and nrows:
        raise Reject("rows without columns")
    rows: list[tuple[object, ...]] = []
    for _r in range(nrows):
        cells: list[object] = []
        for _ks, _table, _name, t in cols:
            size = r.i32("cell length")
            if size < -2:
                raise Reject(f"cell length {size}")
            if size == -2:
                if pv < 4:
                    raise Reject("not-set cell before protocol v4")
                cells.append(UNSET_FORM)
                continue
            if size == -1:
                cells.append(None)
                continue
            start = r.pos
            r.take(size, "cell")
            if t is None:
                ctx.either("column type given by a custom class name")
                cells.append(None)
            else:
                cells.append(_dec(ctx, t, r.data, start, size, False, 0) if size else _empty_value(t))
        rows.append(tuple(cells))
    col_form = tuple((c[0], c[1], c[2], c[3].cql_name if c[3] is not None else None) for c in cols)
    return ("rows", col_form, tuple(rows), paging, new_id)


def _ref_prepared_body(ctx: Ctx, r: Reader, pv: int) -> object:
    query_id = r.short_bytes("query id")
    result_id = r.short_bytes("result metadata id") if pv >= 5 else None
    flags = r.i32("prepared flags")
    nbind = r.i32("bind column count")
    if nbind < 0:
        raise Reject(f"negative bind column count {nbind}")
    pk: list[int] = []
    if pv >= 4:
        npk = r.i32("partition key count")
        if npk < 0:
            raise Reject(f"negative pk count {npk}")
        if npk * 2 > r.remaining():
            raise Reject("pk count larger than the data")
        pk = [r.short("pk index") for _i in range(npk)]
        if any(i >= nbind for i in pk):
            raise Reject("partition key index past the bind columns")
        if len(set(pk)) != len(pk):
            ctx.either("a partition key index given twice")
    if nbind * 4 > r.remaining():
        raise Reject("bind column count larger than the data can hold")
    bind = _ref_col_specs(ctx, r, nbind, bool(flags & GLOBAL_TABLES_SPEC))
    cols, _paging, _new_id, rflags = _ref_rows_metadata(ctx, r, pv, [])
    if rflags & NO_METADATA and not cols:
        cols = []
    bind_form = tuple((c[0], c[1], c[2], c[3].cql_name if c[3] is not None else None) for c in bind)
    col_form = tuple((c[0], c[1], c[2], c[3].cql_name if c[3] is not None else None) for c in cols)
    return ("prepared", query_id, result_id, bind_form, tuple(pk), col_form)


def _ref_schema_change(r: Reader) -> object:
    change = r.string("change type")
    target = r.string("target")
    if target not in ("KEYSPACE", "TABLE", "TYPE", "FUNCTION", "AGGREGATE"):
        raise Unsure(f"unknown schema change target {target!r}")
    ks = r.string("keyspace")
    name = ""
    args: tuple[str, ...] = ()
    if target != "KEYSPACE":
        name = r.string("name")
    if target in ("FUNCTION", "AGGREGATE"):
        n = r.short("argument count")
        args = tuple(r.string("argument") for _i in range(n))
    return ("schema_change", change, target, ks, name, args)


def _verdict(body: bytes, parse: Callable[[Ctx, Reader], object]) -> Verdict:
    """The reference's verdict on ``body``: ``parse`` must consume all of it."""
    ctx = Ctx(padding_left=padding_budget(len(body)))
    r = Reader(body)
    try:
        form = parse(ctx, r)
        if r.remaining():
            raise Reject("bytes after the body")
    except Unsure as exc:
        return Verdict("either", None, str(exc))
    except Reject as exc:
        return Verdict("reject", None, str(exc))
    except RecursionError:
        return Verdict("either", None, "reference recursion limit")
    if ctx.ambiguous:
        return Verdict("either", form, "; ".join(ctx.ambiguous[:3]))
    return Verdict("accept", form)


def ref_result(body: bytes, pv: int, known: list[Column] | None) -> Verdict:
    """What ``decode_result(body, pv, prepared)`` must do; ``known`` = the prepared's result columns."""

    def parse(ctx: Ctx, r: Reader) -> object:
        kind = r.i32("result kind")
        if kind == KIND_VOID:
            return ("void",)
        if kind == KIND_ROWS:
            return _ref_rows(ctx, r, pv, known)
        if kind == KIND_SET_KEYSPACE:
            return ("set_keyspace", r.string("keyspace"))
        if kind == KIND_PREPARED:
            return _ref_prepared_body(ctx, r, pv)
        if kind == KIND_SCHEMA_CHANGE:
            return _ref_schema_change(r)
        raise Reject(f"unknown result kind {kind}")

    return _verdict(body, parse)


def ref_prepared(body: bytes, pv: int) -> Verdict:
    """What ``decode_prepared(body, pv)`` must do (body without the kind word)."""
    return _verdict(body, lambda ctx, r: _ref_prepared_body(ctx, r, pv))
