"""Binding Python values to a prepared statement's bind markers.

The path is chosen once per call from the statement (never per value):

* no column-encryption policy (the fast path): the statement's serializer
  tuple, built once per :class:`~cqlcodec.Prepared` from the shared serializer
  cache, and one loop over the values; in the interpreted build, int, bigint,
  double, float and boolean values of the exact Python type are packed with
  precomputed ``struct`` packers planned once per statement
  (``cqlcodec._interp_fast.plan_bind``) and everything else uses the codecs;
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
from typing import TYPE_CHECKING, Callable, Final, Mapping, Sequence, Union

from mypy_extensions import i64

from cqlcodec._cache import find_serializer, make_serializers
from cqlcodec._codec import Codec
from cqlcodec._encryption import ColumnEncryptionPolicy, EncryptingCodec
from cqlcodec._rt import BytesWriter, write_i32_be
from cqlcodec._wire import short_repr
from cqlcodec.errors import BindError, BindTypeError, BindValueError
from cqlcodec.values import UNSET, _UnsetType

if TYPE_CHECKING:
    from cqlcodec._metadata import Prepared

BoundValue = Union[bytes, None, _UnsetType]
"""One encoded bind value: content bytes, None (null) or UNSET (not set)."""

_UNSET: Final = UNSET
# True when this module is a compiled extension (the interpreted fast paths are skipped).
_COMPILED: Final = not __file__.endswith(".py")
BindPlan = list[Union[tuple[type, Callable[[object], bytes]], None]]
_MISSING: Final = object()
_MAX_VALUES: Final = 0xFFFF
_MAX_LEN: Final = 0x7FFFFFFF


class Bound:
    """The encoded values of one execution of a prepared statement.

    ``values`` holds one entry per bind column: the content bytes, ``None``
    for null or :data:`cqlcodec.UNSET`. ``routing_key`` is the partition key
    as drivers compute it for token-aware routing, and :meth:`values_block`
    the ``[short] n`` + ``[value]``\\ s block of an EXECUTE body.
    """

    def __init__(self, prepared: Prepared, values: list[BoundValue]) -> None:
        self.prepared: Final = prepared
        self.values: Final = values
        self._routing_key: bytes | None = None

    @property
    def routing_key(self) -> bytes | None:
        """The routing key, or None if the statement has no partition-key indexes.

        One component: its encoded value as is. Several: for each component
        ``[unsigned short] length``, the bytes and a ``0x00`` byte. A null
        component raises BindValueError (no token can be computed).
        """
        key = self._routing_key
        if key is not None:
            return key
        pks = self.prepared.pk_indexes
        if len(pks) == 0:
            return None
        if len(pks) == 1:
            key = self._component(pks[0])
        else:
            w = BytesWriter()
            for i in pks:
                part = self._component(i)
                size = len(part)
                if size > 0xFFFF:
                    col = self.prepared.bind_columns[i]
                    raise BindValueError(
                        f'partition-key column "{col.name}" ({col.type.cql_name}) value of '
                        f"{size} bytes is too long for a composite routing key (max 65535)",
                        col.name, col.type.cql_name, "bytes")
                w.append((size >> 8) & 0xFF)
                w.append(size & 0xFF)
                w.write(part)
                w.append(0)
            key = w.getvalue()
        self._routing_key = key
        return key

    def _component(self, index: int) -> bytes:
        value = self.values[index]
        if isinstance(value, bytes):
            return value
        col = self.prepared.bind_columns[index]
        raise BindValueError(
            f'partition-key column "{col.name}" ({col.type.cql_name}) is null: '
            "no routing key can be computed", col.name, col.type.cql_name, "NoneType")

    def values_block(self) -> bytes:
        """``[short] n`` then each value as ``[value]`` (-1 null, -2 unset): an EXECUTE body part."""
        values = self.values
        n = len(values)
        if n > _MAX_VALUES:
            raise BindValueError(f"{n} values cannot be sent in one request (max 65535)")
        w = BytesWriter()
        w.append((n >> 8) & 0xFF)
        w.append(n & 0xFF)
        for v in values:
            if isinstance(v, bytes):
                size = len(v)
                if size > _MAX_LEN:
                    raise BindValueError(f"a value of {size} bytes is too long for a [value]")
                write_i32_be(w, size)
                w.write(v)
            elif v is None:
                write_i32_be(w, -1)
            else:
                write_i32_be(w, -2)
        return w.getvalue()

    def __repr__(self) -> str:
        return f"Bound({self.values!r})"


def bind_values(prep: Prepared, values: object) -> Bound:
    """Encode ``values`` for ``prep`` (see :meth:`cqlcodec.Prepared.bind`)."""
    policy = prep.column_encryption_policy
    plan: BindPlan | None = None
    if policy is None:
        sers = prep._serializers
        if sers is None:
            sers = make_serializers([c.type for c in prep.bind_columns])
            if not _COMPILED:
                from cqlcodec._interp_fast import plan_bind

                prep._bind_plan = plan_bind(sers)
            prep._serializers = sers
        plan = prep._bind_plan
    else:
        sers = _encrypting_serializers(prep, policy)
    ncols = len(prep.bind_columns)
    out: list[BoundValue] = [_UNSET] * ncols
    if isinstance(values, list) or isinstance(values, tuple):
        if plan is not None:
            n = _bind_sequence_planned(prep, sers, plan, values, out)
        else:
            n = _bind_sequence(prep, sers, values, out)
    elif values is None:
        n = 0
    elif isinstance(values, dict) or isinstance(values, MappingABC):
        _bind_mapping(prep, sers, values, out)
        return Bound(prep, out)
    elif isinstance(values, (str, bytes, bytearray, memoryview)):
        raise BindTypeError(
            f"bind values must be a sequence or a mapping of column names, "
            f"not {type(values).__name__}", "", None, type(values).__name__)
    elif isinstance(values, SequenceABC):
        n = _bind_sequence(prep, sers, list(values), out)
    else:
        raise BindTypeError(
            f"bind values must be a sequence or a mapping of column names, "
            f"not {type(values).__name__}", "", None, type(values).__name__)
    if n < ncols:
        _fill_missing(prep, n)
    return Bound(prep, out)


def _bind_sequence(prep: Prepared, sers: tuple[Codec, ...],
                   values: list[object] | tuple[object, ...], out: list[BoundValue]) -> int:
    n = len(values)
    ncols = len(sers)
    if n > ncols:
        raise BindValueError(
            f"too many values to bind: got {n}, the statement has {ncols} bind markers",
            "", None, type(values).__name__)
    is_pk = prep.is_pk
    v3 = prep.protocol_version < 4
    for i in range(n):
        v = values[i]
        if v is None:
            out[i] = None
        elif v is _UNSET:
            if v3 or is_pk[i]:
                raise _unset_error(prep, i)
        else:
            try:
                out[i] = sers[i].encode(v)
            except Exception as exc:
                raise _encode_error(prep, i, v, exc)
    return n


def _bind_sequence_planned(prep: Prepared, sers: tuple[Codec, ...], plan: BindPlan,
                           values: list[object] | tuple[object, ...],
                           out: list[BoundValue]) -> int:
    """``_bind_sequence`` with direct struct packers (interpreted build only).

    A value of exactly the planned Python type is packed directly; anything else,
    or a value ``struct`` refuses, goes through the column's codec as usual.
    """
    n = len(values)
    if n > len(sers):
        return _bind_sequence(prep, sers, values, out)  # raises the usual error
    is_pk = prep.is_pk
    v3 = prep.protocol_version < 4
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
                raise _unset_error(prep, i)
        else:
            try:
                out[i] = sers[i].encode(v)
            except Exception as exc:
                raise _encode_error(prep, i, v, exc)
    return n


def _bind_mapping(prep: Prepared, sers: tuple[Codec, ...], values: Mapping[str, object],
                  out: list[BoundValue]) -> None:
    cols = prep.bind_columns
    is_pk = prep.is_pk
    v3 = prep.protocol_version < 4
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
                raise _unset_error(prep, i)
        elif v is None:
            out[i] = None
        elif v is _UNSET:
            if v3 or is_pk[i]:
                raise _unset_error(prep, i)
        else:
            try:
                out[i] = sers[i].encode(v)
            except Exception as exc:
                raise _encode_error(prep, i, v, exc)


def _fill_missing(prep: Prepared, n: int) -> None:
    """Values n.. were not given: fine (UNSET) on v4+ unless a partition-key column."""
    cols = prep.bind_columns
    if prep.protocol_version < 4:
        raise BindValueError(
            f"too few values to bind: got {n}, the statement has {len(cols)} bind markers "
            "(protocol v3 has no UNSET, every column needs a value)",
            cols[n].name, cols[n].type.cql_name, "")
    is_pk = prep.is_pk
    for i in range(n, len(cols)):
        if is_pk[i]:
            raise _unset_error(prep, i)


def _unset_error(prep: Prepared, i: int) -> BindValueError:
    col = prep.bind_columns[i]
    if prep.protocol_version < 4:
        why = (f"UNSET needs protocol v4 or later (this statement uses "
               f"v{prep.protocol_version})")
    else:
        why = "the column is part of the partition key (routing key) and must have a value"
    return BindValueError(f'cannot leave column "{col.name}" ({col.type.cql_name}) unset: {why}',
                          col.name, col.type.cql_name, "_UnsetType")


def _encode_error(prep: Prepared, i: int, value: object, exc: Exception) -> BindError:
    col = prep.bind_columns[i]
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


def _encrypting_serializers(prep: Prepared, policy: ColumnEncryptionPolicy) -> tuple[Codec, ...]:
    sers: list[Codec] = []
    for col in prep.bind_columns:
        key = col.key
        if policy.contains_column(key):
            sers.append(EncryptingCodec(policy, key, find_serializer(policy.column_type(key))))
        else:
            sers.append(find_serializer(col.type))
    return tuple(sers)
