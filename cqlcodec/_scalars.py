"""The codecs of the scalar CQL types: one native Codec class per type.

``scalar_codec(kind, flags)`` returns the codec of a scalar kind and
``custom_codec(cql_name)`` the raw-bytes codec of a custom type cqlcodec does
not know. The codecs live in modules by family; their docstrings state the
accepted Python values and the decoding rules:

* :mod:`cqlcodec._fixed`: tinyint, smallint, int, bigint, counter, float, double, boolean
* :mod:`cqlcodec._numeric`: varint, decimal
* :mod:`cqlcodec._strings`: text/varchar, ascii, blob, unknown custom types, empty
* :mod:`cqlcodec._uuids`: uuid, timeuuid
* :mod:`cqlcodec._inet`: inet
* :mod:`cqlcodec._temporal`: timestamp, date, time, duration (a timestamp outside
  datetime's years 1..9999 decodes to its int milliseconds)

Every codec decodes a zero-length value to ``None`` except text, ascii and
blob ('' and b''), and raises DecodeError for a fixed-width value of another width.
"""

from __future__ import annotations

from cqlcodec import _kinds as K
from cqlcodec._codec import FLAG_TZ_AWARE, Codec
from cqlcodec._fixed import (
    BigIntCodec,
    BooleanCodec,
    DoubleCodec,
    FloatCodec,
    IntCodec,
    SmallIntCodec,
    TinyIntCodec,
)
from cqlcodec._inet import InetCodec
from cqlcodec._numeric import DecimalCodec, VarintCodec
from cqlcodec._strings import AsciiCodec, BlobCodec, EmptyCodec, RawCodec, TextCodec
from cqlcodec._temporal import DateCodec, DurationCodec, TimeCodec, TimestampCodec
from cqlcodec._uuids import TimeUuidCodec, UuidCodec


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
