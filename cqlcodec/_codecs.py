"""Builds the codec of a CqlType: dispatch on the kind to the codec modules."""

from __future__ import annotations

from cqlcodec import _kinds as K
from cqlcodec._codec import FLAG_HASHABLE, Codec
from cqlcodec._collections import (
    ListCodec,
    MapCodec,
    SetCodec,
    TupleCodec,
    UdtCodec,
)
from cqlcodec._composite import CassandraCompositeCodec
from cqlcodec._scalars import custom_codec, scalar_codec
from cqlcodec._types import CqlType
from cqlcodec._vector import vector_codec


def build_codec(t: CqlType, flags: int = 0) -> Codec:
    """A new codec for ``t``; ``flags`` are FLAG_* bits from ``cqlcodec._codec``.

    Element codecs of sets and map keys are built hashable; the other flags
    apply throughout the nesting.
    """
    t = t.unwrapped()
    kind = t.kind
    if kind in K.SCALAR_NAMES:
        return scalar_codec(kind, flags)
    subs = t.subtypes
    if kind == K.LIST:
        return ListCodec(t.cql_name, subs[0].codec(flags), flags)
    if kind == K.SET:
        return SetCodec(t.cql_name, subs[0].codec(flags | FLAG_HASHABLE), flags)
    if kind == K.MAP:
        return MapCodec(t.cql_name, subs[0].codec(flags | FLAG_HASHABLE),
                        subs[1].codec(flags), flags)
    if kind == K.TUPLE:
        return TupleCodec(t.cql_name, [s.codec(flags) for s in subs])
    if kind == K.UDT:
        return UdtCodec(t, [s.codec(flags) for s in subs])
    if kind == K.VECTOR:
        return vector_codec(t, flags)
    if kind == K.COMPOSITE:
        return CassandraCompositeCodec(t.cql_name, [s.codec(flags) for s in subs])
    return custom_codec(t.cql_name)
