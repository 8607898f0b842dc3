"""Binding Python values to a prepared statement's bind markers.

:class:`~cqlcodec.Prepared` calls :func:`encode_bind_values` with its columns and
serializers; this module knows columns and codecs, not statements. The path is chosen
once per call (never per value):

* no column-encryption policy (the fast path): the statement's serializer
  tuple, built once per :class:`~cqlcodec.Prepared` from the shared serializer
  cache, and one loop over the values; in the interpreted build, int, bigint,
  double, float and boolean values of the exact Python type are packed with
  precomputed ``struct`` packers planned once per statement
  (``cqlcodec.protocol.interp_fast.plan_bind``) and everything else uses the codecs;
* with a policy: the same loop over a serializer tuple in which the encrypted
  columns' serializers encode the plaintext type and then encrypt (the policy
  is asked on every bind, so a policy that gains columns is obeyed).

All paths share the checks: too many values, missing values (UNSET on v4+,
an error on v3), UNSET refused for partition-key columns and on v3, and every
encoding failure re-raised as a BindError naming the column.
"""

from __future__ import annotations

from collections.abc import Mapping as MappingABC
from collections.abc import Sequence as SequenceABC
from typing import Callable, Final, Mapping, Union

from cqlcodec.codecs.base import Codec
from cqlcodec.codecs.cache import find_serializer
from cqlcodec.codecs.encryption import ColumnEncryptionPolicy, EncryptingCodec
from cqlcodec.errors import BindError, BindTypeError, BindValueError
from cqlcodec.protocol.columns import ColumnSpec
from cqlcodec.runtime.build import COMPILED
from cqlcodec.runtime.wire import short_repr
from cqlcodec.values import UNSET, _UnsetType

BoundValue = Union[bytes, None, _UnsetType]
"""One encoded bind value: content bytes, None (null) or UNSET (not set)."""

_UNSET: Final = UNSET
BindPlan = list[Union[tuple[type, Callable[[object], bytes]], None]]
_MISSING: Final = object()


def plan_bind_fast_path(sers: tuple[Codec, ...]) -> BindPlan | None:
    """Interpreted build: direct struct packers per column (None when compiled)."""
    if COMPILED:
        return None
    from cqlcodec.protocol.interp_fast import plan_bind

    return plan_bind(sers)


def encode_bind_values(cols: tuple[ColumnSpec, ...], is_pk: list[bool], protocol_version: int,
                       sers: tuple[Codec, ...], plan: BindPlan | None,
                       values: object) -> list[BoundValue]:
    """Encode ``values`` for bind columns ``cols`` (see :meth:`cqlcodec.Prepared.bind`).

    ``sers`` holds a serializer per column, ``is_pk`` marks partition-key columns
    and ``plan`` is the interpreted build's struct plan (or None).
    """
    ncols = len(cols)
    out: list[BoundValue] = [_UNSET] * ncols
    if isinstance(values, list) or isinstance(values, tuple):
        if plan is not None:
            n = _bind_sequence_planned(cols, is_pk, protocol_version, sers, plan, values, out)
        else:
            n = _bind_sequence(cols, is_pk, protocol_version, sers, values, out)
    elif values is None:
        n = 0
    elif isinstance(values, dict) or isinstance(values, MappingABC):
        _bind_mapping(cols, is_pk, protocol_version, sers, values, out)
        return out
    elif isinstance(values, (str, bytes, bytearray, memoryview)):
        raise BindTypeError(
            f"bind values must be a sequence or a mapping of column names, "
            f"not {type(values).__name__}", "", None, type(values).__name__)
    elif isinstance(values, SequenceABC):
        n = _bind_sequence(cols, is_pk, protocol_version, sers, list(values), out)
    else:
        raise BindTypeError(
            f"bind values must be a sequence or a mapping of column names, "
            f"not {type(values).__name__}", "", None, type(values).__name__)
    if n < ncols:
        _fill_missing(cols, is_pk, protocol_version, n)
    return out


def _bind_sequence(cols: tuple[ColumnSpec, ...], is_pk: list[bool], protocol_version: int,
                   sers: tuple[Codec, ...],
                   values: list[object] | tuple[object, ...], out: list[BoundValue]) -> int:
    n = len(values)
    ncols = len(sers)
    if n > ncols:
        raise BindValueError(
            f"too many values to bind: got {n}, the statement has {ncols} bind markers",
            "", None, type(values).__name__)
    v3 = protocol_version < 4
    for i in range(n):
        v = values[i]
        if v is None:
            out[i] = None
        elif v is _UNSET:
            if v3 or is_pk[i]:
                raise _unset_error(cols[i], protocol_version)
        else:
            try:
                out[i] = sers[i].encode(v)
            except Exception as exc:
                raise _encode_error(cols[i], v, exc)
    return n


def _bind_sequence_planned(cols: tuple[ColumnSpec, ...], is_pk: list[bool], protocol_version: int,
                           sers: tuple[Codec, ...], plan: BindPlan,
                           values: list[object] | tuple[object, ...],
                           out: list[BoundValue]) -> int:
    """``_bind_sequence`` with direct struct packers (interpreted build only).

    A value of exactly the planned Python type is packed directly; anything else,
    or a value ``struct`` refuses, goes through the column's codec as usual.
    """
    n = len(values)
    if n > len(sers):
        return _bind_sequence(cols, is_pk, protocol_version, sers, values, out)  # raises the usual error
    v3 = protocol_version < 4
    for i in range(n):
        v = values[i]
        direct = plan[i]
        if direct is not None and type(v) is direct[0]:
            try:
                out[i] = direct[1](v)
                continue
            except Exception:
                pass  # out of range: the codec raises the proper error below
        if v is None:
            out[i] = None
        elif v is _UNSET:
            if v3 or is_pk[i]:
                raise _unset_error(cols[i], protocol_version)
        else:
            try:
                out[i] = sers[i].encode(v)
            except Exception as exc:
                raise _encode_error(cols[i], v, exc)
    return n


def _bind_mapping(cols: tuple[ColumnSpec, ...], is_pk: list[bool], protocol_version: int,
                  sers: tuple[Codec, ...], values: Mapping[str, object],
                  out: list[BoundValue]) -> None:
    v3 = protocol_version < 4
    for i in range(len(cols)):
        name = cols[i].name
        v = values.get(name, _MISSING)
        if v is _MISSING:
            if v3:
                raise BindValueError(
                    f'no value for column "{name}" ({cols[i].type.cql_name}) in the bind '
                    "mapping; protocol v3 has no UNSET, every column needs a value",
                    name, cols[i].type.cql_name, "")
            if is_pk[i]:
                raise _unset_error(cols[i], protocol_version)
        elif v is None:
            out[i] = None
        elif v is _UNSET:
            if v3 or is_pk[i]:
                raise _unset_error(cols[i], protocol_version)
        else:
            try:
                out[i] = sers[i].encode(v)
            except Exception as exc:
                raise _encode_error(cols[i], v, exc)


def _fill_missing(cols: tuple[ColumnSpec, ...], is_pk: list[bool], protocol_version: int, n: int) -> None:
    """Values n.. were not given: fine (UNSET) on v4+ unless a partition-key column."""
    if protocol_version < 4:
        raise BindValueError(
            f"too few values to bind: got {n}, the statement has {len(cols)} bind markers "
            "(protocol v3 has no UNSET, every column needs a value)",
            cols[n].name, cols[n].type.cql_name, "")
    for i in range(n, len(cols)):
        if is_pk[i]:
            raise _unset_error(cols[i], protocol_version)


def _unset_error(col: ColumnSpec, protocol_version: int) -> BindValueError:
    if protocol_version < 4:
        why = (f"UNSET needs protocol v4 or later (this statement uses "
               f"v{protocol_version})")
    else:
        why = "the column is part of the partition key (routing key) and must have a value"
    return BindValueError(f'cannot leave column "{col.name}" ({col.type.cql_name}) unset: {why}',
                          col.name, col.type.cql_name, "_UnsetType")


def _encode_error(col: ColumnSpec, value: object, exc: Exception) -> BindError:
    cql = col.type.cql_name
    vtype = type(value).__name__
    message = (f'cannot bind {vtype} value {short_repr(value)} to column "{col.name}" '
               f"of type {cql}: {exc}")
    err: BindError
    if isinstance(exc, TypeError):
        err = BindTypeError(message, col.name, cql, vtype)
    else:
        err = BindValueError(message, col.name, cql, vtype)
    err.__cause__ = exc  # explicit: mypyc drops the cause of ``raise ... from exc``
    return err


def encrypting_serializers(cols: tuple[ColumnSpec, ...], policy: ColumnEncryptionPolicy) -> tuple[Codec, ...]:
    sers: list[Codec] = []
    for col in cols:
        key = col.key
        if policy.contains_column(key):
            sers.append(EncryptingCodec(policy, key, find_serializer(policy.column_type(key))))
        else:
            sers.append(find_serializer(col.type))
    return tuple(sers)
