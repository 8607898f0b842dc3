"""Builds the codec of a CqlType: one dispatch on the type's kind.

The codecs live in modules by family; their docstrings state the accepted
Python values and the decoding rules:

* :mod:`cqlcodec.codecs.fixed`: tinyint, smallint, int, bigint, counter, float, double, boolean
* :mod:`cqlcodec.codecs.numeric`: varint, decimal
* :mod:`cqlcodec.codecs.strings`: text/varchar, ascii, blob, unknown custom types, empty
* :mod:`cqlcodec.codecs.uuids`: uuid, timeuuid
* :mod:`cqlcodec.codecs.inet`: inet
* :mod:`cqlcodec.codecs.temporal`: timestamp, date, time, duration
* :mod:`cqlcodec.codecs.collections`: list, set, map, tuple, user-defined types
* :mod:`cqlcodec.codecs.vector`: vector<T, n>

Every codec decodes a zero-length value to ``None`` except text, ascii and
blob ('' and b''), and raises DecodeError for a fixed-width value of another width.
Importing this module registers :func:`build_codec` with ``cqlcodec.types.model``,
which is how ``CqlType.codec()`` reaches it without importing this layer.
"""

from __future__ import annotations

from cqlcodec import kinds as K
from cqlcodec.codecs.base import FLAG_HASHABLE, FLAG_TZ_AWARE, Codec
from cqlcodec.codecs.collections import (
    ListCodec,
    MapCodec,
    SetCodec,
    TupleCodec,
    UdtCodec,
)
from cqlcodec.codecs.composite import CassandraCompositeCodec
from cqlcodec.codecs.fixed import (
    BigIntCodec,
    BooleanCodec,
    DoubleCodec,
    FloatCodec,
    IntCodec,
    SmallIntCodec,
    TinyIntCodec,
)
from cqlcodec.codecs.inet import InetCodec
from cqlcodec.codecs.numeric import DecimalCodec, VarintCodec
from cqlcodec.codecs.strings import AsciiCodec, BlobCodec, EmptyCodec, RawCodec, TextCodec
from cqlcodec.codecs.temporal import DateCodec, DurationCodec, TimeCodec, TimestampCodec
from cqlcodec.codecs.uuids import TimeUuidCodec, UuidCodec
from cqlcodec.codecs.vector import vector_codec
from cqlcodec.types.model import CqlType, register_codec_builder


def build_codec(t: CqlType, flags: int = 0) -> Codec:
    """A new codec for ``t``; ``flags`` are FLAG_* bits from ``cqlcodec.codecs.base``.

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


def scalar_codec(kind: int, flags: int = 0) -> Codec:
    """A new codec for the scalar ``kind`` (``cqlcodec.kinds``); ``flags`` are FLAG_* bits.

    Only FLAG_TZ_AWARE changes a scalar codec (timestamps decode to aware UTC
    datetimes); scalar values are always hashable.
    """
    if kind == K.INT:
        return IntCodec()
    if kind == K.TEXT or kind == 0x000A:
        return TextCodec()
    if kind == K.BIGINT:
        return BigIntCodec("bigint")
    if kind == K.DOUBLE:
        return DoubleCodec()
    if kind == K.FLOAT:
        return FloatCodec()
    if kind == K.BOOLEAN:
        return BooleanCodec()
    if kind == K.UUID:
        return UuidCodec()
    if kind == K.TIMESTAMP:
        return TimestampCodec((flags & FLAG_TZ_AWARE) != 0)
    if kind == K.DATE:
        return DateCodec()
    if kind == K.DECIMAL:
        return DecimalCodec()
    if kind == K.VARINT:
        return VarintCodec()
    if kind == K.ASCII:
        return AsciiCodec()
    if kind == K.BLOB:
        return BlobCodec()
    if kind == K.COUNTER:
        return BigIntCodec("counter")
    if kind == K.TIMEUUID:
        return TimeUuidCodec()
    if kind == K.INET:
        return InetCodec()
    if kind == K.TIME:
        return TimeCodec()
    if kind == K.SMALLINT:
        return SmallIntCodec()
    if kind == K.TINYINT:
        return TinyIntCodec()
    if kind == K.DURATION:
        return DurationCodec()
    if kind == K.EMPTY:
        return EmptyCodec("empty")
    raise ValueError(f"not a scalar kind: {kind:#06x}")


def custom_codec(cql_name: str) -> Codec:
    """The codec of a custom type cqlcodec does not know: its values are raw bytes."""
    if cql_name == "empty" or cql_name.endswith("org.apache.cassandra.db.marshal.EmptyType'"):
        return EmptyCodec(cql_name)
    return RawCodec(cql_name)


register_codec_builder(build_codec)
