"""Kind codes of CQL types.

Scalar and collection kinds equal their native-protocol ``[option]`` ids;
kinds that have no option id of their own (they travel as custom 0x0000 class
names, or exist only in schema text) use values above 0xFF.
"""

from typing import Final

CUSTOM: Final = 0x0000
"""custom: a Java marshal class the protocol names by text (option 0x0000); values are bytes."""
ASCII: Final = 0x0001
"""ascii: US-ASCII text (option 0x0001)."""
BIGINT: Final = 0x0002
"""bigint: 64-bit signed integer (option 0x0002)."""
BLOB: Final = 0x0003
"""blob: arbitrary bytes (option 0x0003)."""
BOOLEAN: Final = 0x0004
"""boolean (option 0x0004)."""
COUNTER: Final = 0x0005
"""counter: 64-bit signed counter value (option 0x0005)."""
DECIMAL: Final = 0x0006
"""decimal: int32 scale and varint unscaled value (option 0x0006)."""
DOUBLE: Final = 0x0007
"""double: IEEE 754 binary64 (option 0x0007)."""
FLOAT: Final = 0x0008
"""float: IEEE 754 binary32 (option 0x0008)."""
INT: Final = 0x0009
"""int: 32-bit signed integer (option 0x0009)."""
TEXT: Final = 0x000D  # option 0x000A (v1/v2 "text") is read as this too
"""text / varchar: UTF-8 text (option 0x000D; the v1/v2 option 0x000A reads as this too)."""
TIMESTAMP: Final = 0x000B
"""timestamp: milliseconds since the Unix epoch, int64 (option 0x000B)."""
UUID: Final = 0x000C
"""uuid (option 0x000C)."""
VARINT: Final = 0x000E
"""varint: arbitrary-precision signed integer (option 0x000E)."""
TIMEUUID: Final = 0x000F
"""timeuuid: a version 1 UUID (option 0x000F)."""
INET: Final = 0x0010
"""inet: an IPv4 or IPv6 address (option 0x0010)."""
DATE: Final = 0x0011
"""date: days since the epoch, as uint32 centred on 2**31 (option 0x0011)."""
TIME: Final = 0x0012
"""time: nanoseconds since midnight (option 0x0012)."""
SMALLINT: Final = 0x0013
"""smallint: 16-bit signed integer (option 0x0013)."""
TINYINT: Final = 0x0014
"""tinyint: 8-bit signed integer (option 0x0014)."""
DURATION: Final = 0x0015
"""duration: months, days and nanoseconds as vints (option 0x0015)."""
LIST: Final = 0x0020
"""list<T> (option 0x0020)."""
MAP: Final = 0x0021
"""map<K, V> (option 0x0021)."""
SET: Final = 0x0022
"""set<T> (option 0x0022)."""
UDT: Final = 0x0030
"""a user-defined type (option 0x0030)."""
TUPLE: Final = 0x0031
"""tuple<T1, T2, ...> (option 0x0031)."""
VECTOR: Final = 0x0100
"""vector<T, n>: no option id of its own (Java VectorType)."""
FROZEN: Final = 0x0101
"""frozen<T>: schema text only; it wraps its subtype and encodes as it."""
REVERSED: Final = 0x0102
"""a clustering column in descending order (Java ReversedType); encodes as its subtype."""
EMPTY: Final = 0x0103
"""empty (Java EmptyType): only zero-length values."""
COMPOSITE: Final = 0x0104  # Java CompositeType(T1, T2, ...): a tuple of components
"""Java CompositeType(T1, T2, ...): a tuple of components."""

SCALAR_NAMES: Final[dict[int, str]] = {
    ASCII: "ascii",
    BIGINT: "bigint",
    BLOB: "blob",
    BOOLEAN: "boolean",
    COUNTER: "counter",
    DECIMAL: "decimal",
    DOUBLE: "double",
    FLOAT: "float",
    INT: "int",
    TEXT: "text",
    TIMESTAMP: "timestamp",
    UUID: "uuid",
    VARINT: "varint",
    TIMEUUID: "timeuuid",
    INET: "inet",
    DATE: "date",
    TIME: "time",
    SMALLINT: "smallint",
    TINYINT: "tinyint",
    DURATION: "duration",
    EMPTY: "empty",
}
"""The CQL name of each scalar kind."""

JAVA_SCALAR_NAMES: Final[dict[int, str]] = {
    ASCII: "AsciiType",
    BIGINT: "LongType",
    BLOB: "BytesType",
    BOOLEAN: "BooleanType",
    COUNTER: "CounterColumnType",
    DECIMAL: "DecimalType",
    DOUBLE: "DoubleType",
    FLOAT: "FloatType",
    INT: "Int32Type",
    TEXT: "UTF8Type",
    TIMESTAMP: "TimestampType",
    UUID: "UUIDType",
    VARINT: "IntegerType",
    TIMEUUID: "TimeUUIDType",
    INET: "InetAddressType",
    DATE: "SimpleDateType",
    TIME: "TimeType",
    SMALLINT: "ShortType",
    TINYINT: "ByteType",
    DURATION: "DurationType",
    EMPTY: "EmptyType",
}
"""The Java marshal class of each scalar kind (without the ``org.apache.cassandra.db.marshal.``
package)."""

# Cassandra's valueLengthIfFixed(): the content width of types whose values
# always have the same size. Vectors of these subtypes carry no per-element
# length. smallint, tinyint, date and time are fixed on the wire but are *not*
# fixed-size for Cassandra, so vectors of them are length-prefixed.
FIXED_SIZES: Final[dict[int, int]] = {
    BIGINT: 8,
    BOOLEAN: 1,
    COUNTER: 8,
    DOUBLE: 8,
    FLOAT: 4,
    INT: 4,
    TIMESTAMP: 8,
    UUID: 16,
    TIMEUUID: 16,
    EMPTY: 0,
}
"""The content width in bytes of each fixed-size kind (Cassandra's ``valueLengthIfFixed``)."""
