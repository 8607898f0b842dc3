"""Fast paths for the interpreted build only (this module is never compiled).

Interpreted, every Python-level call costs tens of nanoseconds, so the generic
cell-by-cell loops are slow. The tricks measured in the mypyc notes (section
2.3 d/d'/e) win there and lose when compiled, so ``cqlcodec.protocol.rows`` and
``cqlcodec.protocol.bind`` select them once, when a parse description or a prepared
statement's bind plan is built, and only when running interpreted.

Rows (:func:`plan_rows`): a row loop is generated for the column layout.
Consecutive fixed-width columns (int, bigint, counter, double, float, boolean,
smallint, tinyint; also uuid, timeuuid, timestamp and date, whose raw struct
value is then converted inline) are read with **one precomputed**
``struct.Struct`` per run, length words included, and every length word is
compared with the width; the
length word of the variable-width cell after a run is read by the same struct.
text, ascii and blob cells are sliced and decoded inline; other types call
their codec. A run whose length words do not all match (a null, an empty
value) is decoded cell by cell inline; when every column is fixed-width and there are
no nulls, ``Struct.iter_unpack`` decodes the whole block. Anything unusual
(a not-set cell, bad lengths, truncation, invalid UTF-8, a codec error) stops
the loop *before* the row is stored and hands that row to the checked loop in
``cqlcodec.protocol.rows``, which decodes it or raises the same error, with the same
message, as it would without this module.

Bind (:func:`plan_bind`): values of exactly the expected Python type are
encoded directly: int, bigint, double, float and boolean with a precomputed
``struct.Struct`` (range-checked by ``struct`` itself), text with
``str.encode``, blob as is, uuid by its ``bytes``. Any other value, or one the
direct encoder refuses, goes to the column's codec, which encodes it or raises
the usual error. (Grouping several columns into one ``Struct.pack`` is not
used: ``Bound.values`` keeps one bytes object per column.)

The generated functions are built from column *kinds* only; column names and
other data never enter the generated source.
"""

from __future__ import annotations

import operator
import struct
import threading
import uuid
from datetime import date, timedelta
from typing import Any, Callable, Sequence

from cqlcodec.codecs.base import Codec
from cqlcodec.codecs.fixed import (
    BigIntCodec,
    BooleanCodec,
    DoubleCodec,
    FloatCodec,
    IntCodec,
    SmallIntCodec,
    TinyIntCodec,
)
from cqlcodec.codecs.strings import AsciiCodec, BlobCodec, TextCodec
from cqlcodec.codecs.temporal import (
    _DATE_OFFSET,
    _EPOCH,
    _EPOCH_UTC,
    _UNIX_EPOCH_ORDINAL,
    DateCodec,
    TimestampCodec,
)
from cqlcodec.codecs.uuids import _SAFE_UNKNOWN, FAST_UUID, TimeUuidCodec, UuidCodec
from cqlcodec.protocol.shapes import FastRows, Row

_STRUCT_CHARS: dict[type, str] = {
    IntCodec: "i", BigIntCodec: "q", DoubleCodec: "d", FloatCodec: "f", BooleanCodec: "?",
    SmallIntCodec: "h", TinyIntCodec: "b",
}
_TEXT_ENCODINGS: dict[type, str] = {TextCodec: "utf-8", AsciiCodec: "ascii"}
# fixed-width columns whose struct value needs a conversion: codec type -> struct char.
# A value the conversion refuses (a timestamp or date outside datetime's range)
# raises, so the row goes to the checked loop, which returns the int / Date form.
_CONVERTED_CHARS: dict[type, str] = {
    UuidCodec: "16s", TimeUuidCodec: "16s", TimestampCodec: "q", DateCodec: "I",
}
_CONVERSION_NAMES: dict[str, Any] = {
    "NEW": object.__new__, "SET": object.__setattr__, "UUID": uuid.UUID,
    "FROM_BYTES": int.from_bytes, "SAFE_UNKNOWN": _SAFE_UNKNOWN,
    "TD": timedelta, "EPOCH": _EPOCH, "EPOCH_UTC": _EPOCH_UTC,
    "ORD": date.fromordinal,
}


def _conversion(codec: Codec, k: int) -> list[str]:
    """Statements turning column ``k``'s raw struct value ``v{k}`` into its decoded value."""
    v = f"v{k}"
    t = type(codec)
    if t is UuidCodec or t is TimeUuidCodec:
        if FAST_UUID:  # as _uuids.make_uuid: the slots, without UUID.__init__'s checks
            return [f"if {v} is not None:",
                    "    u = NEW(UUID)",
                    f"    SET(u, 'int', FROM_BYTES({v}, 'big'))",
                    "    SET(u, 'is_safe', SAFE_UNKNOWN)",
                    f"    {v} = u"]
        return [f"if {v} is not None:", f"    {v} = UUID(bytes={v})"]
    if isinstance(codec, TimestampCodec):
        epoch = "EPOCH_UTC" if codec.tz_aware else "EPOCH"
        return [f"if {v} is not None:", f"    {v} = {epoch} + TD(0, 0, 0, {v})"]
    if t is DateCodec:
        return [f"if {v} is not None:",
                f"    {v} = ORD({v} - {_DATE_OFFSET - _UNIX_EPOCH_ORDINAL})"]
    raise AssertionError(f"no conversion for {t.__name__}")
_I32 = struct.Struct(">i")


class _Stop(Exception):
    """A row the fast loop leaves to the checked loop."""


_PLAN_CACHE_LIMIT = 128
_plans: dict[tuple[Codec, ...], FastRows] = {}
_plans_lock = threading.Lock()


def plan_rows(columns: Sequence[object], codecs: Sequence[Codec],
              protocol_version: int) -> FastRows | None:
    """A generated row loop for these column codecs, or None if none would help.

    Loops are cached by the codec objects (which are themselves cached per
    type), so results with inline metadata do not generate code per message.
    """
    if not codecs:
        return None
    key = tuple(codecs)
    found = _plans.get(key)
    if found is not None:
        return found
    chars = [_STRUCT_CHARS.get(type(c)) for c in codecs]
    if all(ch is not None for ch in chars):
        plan = _plan_fixed_rows(codecs, "".join(ch for ch in chars if ch))
    else:
        chars = [ch if ch is not None else _CONVERTED_CHARS.get(type(c))
                 for c, ch in zip(codecs, chars)]
        plan = _plan_mixed_rows(codecs, chars)
    with _plans_lock:
        if len(_plans) >= _PLAN_CACHE_LIMIT:
            for old in list(_plans)[: _PLAN_CACHE_LIMIT // 4]:
                del _plans[old]
        _plans[key] = plan
    return plan


def plan_cache_size() -> int:
    """How many generated row loops are cached (at most 128)."""
    return len(_plans)


def _plan_fixed_rows(codecs: Sequence[Codec], chars: str) -> FastRows:
    """All columns fixed-width: ``iter_unpack`` over the block, every length word verified."""
    row_struct = struct.Struct(">" + "".join("i" + ch for ch in chars))
    size = row_struct.size
    widths = tuple(struct.calcsize(">" + ch) for ch in chars)
    ncols = len(chars)
    lens = slice(0, 2 * ncols, 2)
    vals = slice(1, 2 * ncols, 2)
    iter_unpack = row_struct.iter_unpack

    def fixed_rows(buf: bytes, pos: int, end: int, r: int, nrows: int,
                   rows: list[Row]) -> tuple[int, int]:
        count = min(nrows - r, (end - pos) // size)
        if count <= 0:
            return r, pos
        view = memoryview(buf)[pos: pos + count * size]
        for t in iter_unpack(view):
            if t[lens] != widths:
                return r, pos
            rows[r] = t[vals]
            r += 1
            pos += size
        return r, pos

    return fixed_rows


def _plan_mixed_rows(codecs: Sequence[Codec], chars: list[str | None]) -> FastRows:
    """Generate a row loop for a layout with variable-width columns."""
    ncols = len(codecs)
    env: dict[str, Any] = {"_Stop": _Stop, "I32": _I32.unpack_from, **_CONVERSION_NAMES}
    body: list[str] = []
    pending_len = False  # the current column's length word was read by the previous struct
    i = 0
    while i < ncols:
        if chars[i] is not None:
            j = i
            while j < ncols and chars[j] is not None:
                j += 1
            run = list(range(i, j))
            fmt = ">" + "".join("i" + str(chars[k]) for k in run)
            prefetch = j < ncols  # read the next (variable) cell's length word too
            if prefetch:
                fmt += "i"
            s = struct.Struct(fmt)
            env[f"S{i}"] = s.unpack_from
            targets = []
            for k in run:
                targets += [f"l{k}", f"v{k}"]
            if prefetch:
                targets.append(f"n{j}")
            body.append(f"{', '.join(targets)} = S{i}(buf, pos)")
            checks = " and ".join(
                f"l{k} == {struct.calcsize('>' + str(chars[k]))}" for k in run)
            body.append(f"if {checks}:")
            body.append(f"    pos += {s.size}")
            body.append("else:  # a null or empty cell in the run: cell by cell")
            for k in run:
                width = struct.calcsize(">" + str(chars[k]))
                env[f"U{k}"] = struct.Struct(">" + str(chars[k])).unpack_from
                body.append("    n = I32(buf, pos)[0]")
                body.append("    pos += 4")
                body.append(f"    if n == {width}:")
                body.append(f"        v{k} = U{k}(buf, pos)[0]")
                body.append(f"        pos += {width}")
                body.append("    elif n == -1 or n == 0:")
                body.append(f"        v{k} = None")
                body.append("    else:")
                body.append("        raise _Stop")
            if prefetch:
                body.append(f"    n{j} = I32(buf, pos)[0]")
                body.append("    pos += 4")
            for k in run:
                if type(codecs[k]) in _CONVERTED_CHARS:
                    body += _conversion(codecs[k], k)
            pending_len = prefetch
            i = j
            continue
        if not pending_len:
            body.append(f"n{i} = I32(buf, pos)[0]")
            body.append("pos += 4")
        pending_len = False
        codec = codecs[i]
        body.append(f"if n{i} >= 0:")
        body.append(f"    e = pos + n{i}")
        body.append("    if e > end:")
        body.append("        raise _Stop")
        encoding = _TEXT_ENCODINGS.get(type(codec))
        if encoding is not None:
            body.append(f"    v{i} = buf[pos:e].decode({encoding!r})")
        elif type(codec) is BlobCodec:
            body.append(f"    v{i} = buf[pos:e]")
        else:
            env[f"D{i}"] = codec.decode
            body.append(f"    v{i} = D{i}(buf, pos, n{i})")
        body.append("    pos = e")
        body.append(f"elif n{i} == -1:")
        body.append(f"    v{i} = None")
        body.append("else:")
        body.append("    raise _Stop")
        i += 1
    values = ", ".join(f"v{k}" for k in range(ncols)) + ("," if ncols == 1 else "")
    lines = [
        "def mixed_rows(buf, pos, end, r, nrows, rows):",
        "    start = pos",
        "    try:",
        "        while r < nrows:",
        "            start = pos",
    ]
    lines += ["            " + line for line in body]
    lines += [
        "            if pos > end:",
        "                raise _Stop",
        f"            rows[r] = ({values})",
        "            r += 1",
        "    except Exception:",
        "        return r, start",
        "    return r, pos",
    ]
    source = "\n".join(lines) + "\n"
    exec(compile(source, "<cqlcodec generated row loop>", "exec"), env)
    fn: FastRows = env["mixed_rows"]
    return fn


# --- bind ------------------------------------------------------------------------------

BindPlan = list[tuple[type, Callable[[object], bytes]] | None]
"""Per bind column: (exact Python type, struct pack) for the direct path, or None."""

_PACKERS: dict[type, tuple[type, Callable[[Any], bytes]]] = {
    IntCodec: (int, struct.Struct(">i").pack),
    BigIntCodec: (int, struct.Struct(">q").pack),
    DoubleCodec: (float, struct.Struct(">d").pack),
    FloatCodec: (float, struct.Struct(">f").pack),
    BooleanCodec: (bool, struct.Struct(">?").pack),
    TextCodec: (str, str.encode),  # UTF-8; unencodable text falls back to the codec
    BlobCodec: (bytes, bytes),
    UuidCodec: (uuid.UUID, operator.attrgetter("bytes")),
}


def plan_bind(codecs: Sequence[Codec]) -> BindPlan | None:
    """Per-column direct encoders for a statement's serializers, or None if none applies."""
    plan: BindPlan = [_PACKERS.get(type(codec)) for codec in codecs]
    if all(p is None for p in plan):
        return None
    return plan
