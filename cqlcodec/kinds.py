"""Kind codes of CQL types.

Scalar and collection kinds equal their native-protocol ``[option]`` ids;
kinds that have no option id of their own (they travel as custom 0x0000 class
names, or exist only in schema text) use values above 0xFF.
"""

from typing import Final

CUSTOM: Final = 0x0000
ASCII: Final = 0x0001
BIGINT: Final = 0x0002
BLOB: Final = 0x0003
BOOLEAN: Final = 0x0004
COUNTER: Final = 0x0005
DECIMAL: Final = 0x0006
DOUBLE: Final = 0x0007
FLOAT: Final = 0x0008
INT: Final = 0x0009
TEXT: Final = 0x000D  # option 0x000A (v1/v2 "text") is read as this too
TIMESTAMP: Final = 0x000B
UUID: Final = 0x000C
VARINT: Final = 0x000E
TIMEUUID: Final = 0x000F
INET: Final = 0x0010
DATE: Final = 0x0011
TIME: Final = 0x0012
SMALLINT: Final = 0x0013
TINYINT: Final = 0x0014
DURATION: Final = 0x0015
LIST: Final = 0x0020
MAP: Final = 0x0021
SET: Final = 0x0022
UDT: Final = 0x0030
TUPLE: Final = 0x0031
VECTOR: Final = 0x0100
FROZEN: Final = 0x0101
REVERSED: Final = 0x0102
EMPTY: Final = 0x0103
COMPOSITE: Final = 0x0104  # Java CompositeType(T1, T2, ...): a tuple of components

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
