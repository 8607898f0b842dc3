"""The benchmark workloads W1-W7: exact inputs, independent of any codec.

Used by ``python -m cqlcodec bench`` and by ``benchmarks/`` (which loads this file by
path, since its driver environments do not install cqlcodec). Never compiled.

Everything here is plain standard library: the type specs are CQL strings parsed by a
tiny local parser, values come from ``random.Random`` with the documented seeds, and
the wire bytes are produced by :func:`encode_value`, so cqlcodec and the drivers are
fed byte-identical inputs and checked against the same expected values.

Native protocol v4 (``PROTO``) everywhere.
"""

from __future__ import annotations

import calendar
import random
import string
import struct
import uuid
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal
from functools import lru_cache
from typing import Final

SEED: Final = 20240517
PROTO: Final = 4
KEYSPACE: Final = "peerbench"
TABLE: Final = "t"
QUERY_ID: Final = b"\x01" * 16

EPOCH: Final = datetime(1970, 1, 1)
EPOCH_DATE: Final = date(1970, 1, 1)
TEXT_ALPHABET: Final = string.ascii_uppercase + string.ascii_lowercase + string.digits

VECTOR_DIMS: Final = (4, 128, 768, 1536)
ROW_PATH_K_VECTOR: Final = 64  # W1 row path: t(64 rows) vs t(1 row)
ROW_PATH_K_SCALAR: Final = 1000  # W3 row path: t(1000 rows) vs t(1 row)

# RESULT kinds and Rows metadata flags (native protocol spec, section 4.2.5).
KIND_ROWS: Final = 2
KIND_PREPARED: Final = 4
FLAG_GLOBAL_TABLES_SPEC: Final = 0x1
FLAG_NO_METADATA: Final = 0x4

Value = object
"""A Python value of some CQL type (None is null)."""


# --------------------------------------------------------------------------- type specs


@dataclass(frozen=True)
class Spec:
    """A parsed CQL type string: ``name`` plus parameters (``dim`` for vectors)."""

    name: str
    params: tuple[Spec, ...] = ()
    dim: int = 0

    def __str__(self) -> str:
        if self.name == "vector":
            return f"vector<{self.params[0]}, {self.dim}>"
        if self.params:
            return f"{self.name}<{', '.join(str(p) for p in self.params)}>"
        return self.name


_SCALAR_OPTIONS: Final[dict[str, int]] = {
    "ascii": 0x0001,
    "bigint": 0x0002,
    "blob": 0x0003,
    "boolean": 0x0004,
    "decimal": 0x0006,
    "double": 0x0007,
    "float": 0x0008,
    "int": 0x0009,
    "timestamp": 0x000B,
    "uuid": 0x000C,
    "text": 0x000D,
    "varint": 0x000E,
    "date": 0x0011,
}
_MARSHAL: Final[dict[str, str]] = {
    "float": "FloatType",
    "double": "DoubleType",
    "int": "Int32Type",
    "bigint": "LongType",
}
_MARSHAL_PREFIX: Final = "org.apache.cassandra.db.marshal."


def parse_spec(text: str) -> Spec:
    """Parse the CQL type strings used by the workloads (scalars, list, map, tuple, vector)."""
    spec, pos = _parse(text.replace(" ", ""), 0)
    if pos != len(text.replace(" ", "")):
        raise ValueError(f"trailing text in type spec {text!r}")
    return spec


def _parse(text: str, pos: int) -> tuple[Spec, int]:
    end = pos
    while end < len(text) and (text[end].isalnum() or text[end] == "_"):
        end += 1
    name = text[pos:end]
    if not name:
        raise ValueError(f"expected a type name at {pos} in {text!r}")
    if end >= len(text) or text[end] != "<":
        return Spec(name), end
    params: list[Spec] = []
    dim = 0
    pos = end + 1
    while True:
        if name == "vector" and params:
            stop = text.index(">", pos)
            dim = int(text[pos:stop])
            return Spec(name, tuple(params), dim), stop + 1
        param, pos = _parse(text, pos)
        params.append(param)
        if text[pos] == ">":
            return Spec(name, tuple(params), dim), pos + 1
        if text[pos] != ",":
            raise ValueError(f"expected ',' or '>' at {pos} in {text!r}")
        pos += 1


# --------------------------------------------------------------------------- encoding


def f32(x: float) -> float:
    """Round a float to the nearest float32 (so float round trips are exact)."""
    result: float = struct.unpack(">f", struct.pack(">f", x))[0]
    return result


def varint_bytes(n: int) -> bytes:
    """Minimal big-endian two's complement encoding of ``n`` (CQL varint)."""
    size = (n + (n < 0)).bit_length() // 8 + 1
    return n.to_bytes(size, "big", signed=True)


def timestamp_millis(value: datetime) -> int:
    """Milliseconds since the epoch of a naive UTC datetime."""
    return calendar.timegm(value.utctimetuple()) * 1000 + value.microsecond // 1000


def encode_value(spec: Spec, value: Value) -> bytes:
    """The content bytes of ``value`` as CQL type ``spec`` (no length prefix; not None)."""
    name = spec.name
    if name == "int":
        return struct.pack(">i", value)
    if name == "bigint":
        return struct.pack(">q", value)
    if name == "double":
        return struct.pack(">d", value)
    if name == "float":
        return struct.pack(">f", value)
    if name in ("text", "ascii"):
        assert isinstance(value, str)
        return value.encode("utf-8")
    if name == "blob":
        assert isinstance(value, bytes)
        return value
    if name == "boolean":
        return b"\x01" if value else b"\x00"
    if name == "uuid":
        assert isinstance(value, uuid.UUID)
        return value.bytes
    if name == "varint":
        assert isinstance(value, int)
        return varint_bytes(value)
    if name == "decimal":
        assert isinstance(value, Decimal)
        sign, digits, exponent = value.as_tuple()
        assert isinstance(exponent, int)
        unscaled = int("".join(str(d) for d in digits)) * (-1 if sign else 1)
        return struct.pack(">i", -exponent) + varint_bytes(unscaled)
    if name == "timestamp":
        assert isinstance(value, datetime)
        return struct.pack(">q", timestamp_millis(value))
    if name == "date":
        assert isinstance(value, date)
        return struct.pack(">I", (value - EPOCH_DATE).days + 2**31)
    if name == "list":
        assert isinstance(value, list)
        return struct.pack(">i", len(value)) + b"".join(
            cell_bytes(spec.params[0], item) for item in value
        )
    if name == "map":
        assert isinstance(value, dict)
        key_spec, value_spec = spec.params
        return struct.pack(">i", len(value)) + b"".join(
            cell_bytes(key_spec, k) + cell_bytes(value_spec, v) for k, v in value.items()
        )
    if name == "tuple":
        assert isinstance(value, tuple)
        return b"".join(cell_bytes(p, item) for p, item in zip(spec.params, value))
    if name == "vector":
        assert isinstance(value, list)
        elem = spec.params[0]
        return b"".join(encode_value(elem, item) for item in value)
    raise ValueError(f"no encoder for {spec}")


def cell_bytes(spec: Spec, value: Value) -> bytes:
    """A ``[bytes]`` cell: int32 length then content; None is length -1."""
    if value is None:
        return struct.pack(">i", -1)
    content = encode_value(spec, value)
    return struct.pack(">i", len(content)) + content


def option_bytes(spec: Spec) -> bytes:
    """The ``[option]`` describing ``spec`` in result metadata."""
    name = spec.name
    if name in _SCALAR_OPTIONS:
        return struct.pack(">H", _SCALAR_OPTIONS[name])
    if name == "list":
        return struct.pack(">H", 0x0020) + option_bytes(spec.params[0])
    if name == "map":
        return struct.pack(">H", 0x0021) + option_bytes(spec.params[0]) + option_bytes(spec.params[1])
    if name == "tuple":
        return struct.pack(">HH", 0x0031, len(spec.params)) + b"".join(
            option_bytes(p) for p in spec.params
        )
    if name == "vector":
        elem = _MARSHAL_PREFIX + _MARSHAL[spec.params[0].name]
        return struct.pack(">H", 0x0000) + string_bytes(
            f"{_MARSHAL_PREFIX}VectorType({elem}, {spec.dim})"
        )
    raise ValueError(f"no [option] for {spec}")


def string_bytes(text: str) -> bytes:
    """A protocol ``[string]``: uint16 length then UTF-8."""
    data = text.encode("utf-8")
    return struct.pack(">H", len(data)) + data


# --------------------------------------------------------------------------- value generators


def vector_value(dim: int) -> list[float]:
    """W1 vector data: ``dim`` float32-rounded uniforms from ``Random(SEED + dim)``."""
    rng = random.Random(SEED + dim)
    return [f32(rng.uniform(-1, 1)) for _i in range(dim)]


def vector_bytes(values: list[float]) -> bytes:
    """``vector<float, N>`` wire bytes: N big-endian float32, no per-element lengths."""
    return struct.pack(">%df" % len(values), *values)


def gen_value(spec: Spec, rng: random.Random) -> Value:
    """One random value of ``spec`` (the W5/W6 generators)."""
    name = spec.name
    if name == "int":
        return rng.randint(-(2**31), 2**31 - 1)
    if name == "bigint":
        return rng.randint(-(2**63), 2**63 - 1)
    if name == "double":
        return rng.uniform(-1e6, 1e6)
    if name == "float":
        return f32(rng.uniform(-1, 1))
    if name == "text":
        size = rng.randint(8, 24)
        return "".join(rng.choice(TEXT_ALPHABET) for _i in range(size))
    if name == "boolean":
        return rng.random() < 0.5
    if name == "uuid":
        return uuid.UUID(int=rng.getrandbits(128))
    if name == "decimal":
        return Decimal(rng.randint(-(10**9), 10**9)).scaleb(-4)
    if name == "timestamp":
        return EPOCH + timedelta(milliseconds=rng.randint(1_500_000_000_000, 1_800_000_000_000))
    if name == "date":
        return EPOCH_DATE + timedelta(days=rng.randint(10000, 25000))
    if name == "vector":
        return [f32(rng.uniform(-1, 1)) for _i in range(spec.dim)]
    raise ValueError(f"no generator for {spec}")


Column = tuple[str, Spec]
Row = tuple[Value, ...]


def columns_of(text: str) -> list[Column]:
    """``'c_int int, v vector<float,768>'`` -> [(name, Spec), ...] (commas inside <> kept)."""
    columns: list[Column] = []
    depth = 0
    start = 0
    for i, ch in enumerate(text + ","):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "," and depth == 0:
            name, _sep, spec = text[start:i].strip().partition(" ")
            columns.append((name, parse_spec(spec)))
            start = i + 1
    return columns


def gen_rows(columns: list[Column], nrows: int, seed: int, null_frac: float = 0.0) -> list[Row]:
    """Rows of random values; per cell in row order, null with probability ``null_frac``."""
    rng = random.Random(seed)
    rows: list[Row] = []
    for _r in range(nrows):
        row: list[Value] = []
        for _name, spec in columns:
            if null_frac > 0 and rng.random() < null_frac:
                row.append(None)
            else:
                row.append(gen_value(spec, rng))
        rows.append(tuple(row))
    return rows


# --------------------------------------------------------------------------- message bodies


def metadata_bytes(columns: list[Column]) -> bytes:
    """Global table spec then ``[string name][option type]`` per column."""
    return (
        string_bytes(KEYSPACE)
        + string_bytes(TABLE)
        + b"".join(string_bytes(name) + option_bytes(spec) for name, spec in columns)
    )


def rows_body(columns: list[Column], rows: list[Row], prepared: bool) -> bytes:
    """A RESULT/Rows body: NO_METADATA when ``prepared``, else inline global-table metadata."""
    if prepared:
        head = struct.pack(">iii", KIND_ROWS, FLAG_NO_METADATA, len(columns))
    else:
        head = struct.pack(">iii", KIND_ROWS, FLAG_GLOBAL_TABLES_SPEC, len(columns))
        head += metadata_bytes(columns)
    cells = b"".join(
        cell_bytes(spec, value) for row in rows for (_name, spec), value in zip(columns, row)
    )
    return head + struct.pack(">i", len(rows)) + cells


def prepared_body(
    bind_columns: list[Column],
    result_columns: list[Column],
    pk_indexes: list[int],
    query_id: bytes = QUERY_ID,
) -> bytes:
    """A v4 RESULT/Prepared body: query id, bind metadata with pk indexes, result metadata."""
    body = struct.pack(">i", KIND_PREPARED)
    body += struct.pack(">H", len(query_id)) + query_id
    body += struct.pack(">iii", FLAG_GLOBAL_TABLES_SPEC, len(bind_columns), len(pk_indexes))
    body += b"".join(struct.pack(">H", i) for i in pk_indexes)
    body += metadata_bytes(bind_columns)
    if result_columns:
        body += struct.pack(">ii", FLAG_GLOBAL_TABLES_SPEC, len(result_columns))
        body += metadata_bytes(result_columns)
    else:
        body += struct.pack(">ii", FLAG_NO_METADATA, 0)
    return body


# --------------------------------------------------------------------------- the cases


@dataclass(frozen=True)
class ScalarCase:
    """A W3/W4 case: one value of one type and its content bytes."""

    label: str
    spec: Spec
    value: Value
    data: bytes


def _scalar_cases() -> list[ScalarCase]:
    raw: list[tuple[str, str, Value]] = [
        ("Int32Type", "int", -123456789),
        ("LongType", "bigint", 1234567890123456789),
        ("DoubleType", "double", 12345.6789),
        ("FloatType", "float", f32(3.14159)),
        ("UTF8Type 'hello world'", "text", "hello world"),
        ("BooleanType", "boolean", True),
        ("UUIDType", "uuid", uuid.UUID("3f2504e0-4f89-11d3-9a0c-0305e82c3301")),
        ("DecimalType 12345.6789", "decimal", Decimal("12345.6789")),
        ("IntegerType (8-byte varint)", "varint", 0x7123456789ABCDEF),
        ("TimestampType", "timestamp", datetime(2024, 5, 17, 12, 34, 56, 789000)),
        ("SimpleDateType", "date", date(2024, 5, 17)),
        ("list<int> x10", "list<int>", [100000 + 7919 * i for i in range(10)]),
        ("map<text,int> x10", "map<text, int>", {"key%d" % i: 100000 + i for i in range(10)}),
        ("tuple<int,text,double>", "tuple<int, text, double>", (42, "hello", 2.718281828459045)),
    ]
    cases = []
    for label, text, value in raw:
        spec = parse_spec(text)
        cases.append(ScalarCase(label, spec, value, encode_value(spec, value)))
    return cases


SCALAR_CASES: Final = _scalar_cases()
"""W3/W4, in the order of the published W3/W4 table."""


@dataclass(frozen=True)
class RowsCase:
    """A W5 case: columns, generated rows, and both RESULT bodies."""

    key: str
    columns: list[Column]
    rows: list[Row]
    prepared: bytes
    unprepared: bytes

    @property
    def values(self) -> int:
        """Number of cells (rows x columns, nulls included)."""
        return len(self.rows) * len(self.columns)


_W5_TEN: Final = (
    "c_int int, c_bigint bigint, c_double double, c_float float, c_text text, "
    "c_boolean boolean, c_uuid uuid, c_timestamp timestamp, c_decimal decimal, c_date date"
)
_W5_FIVE: Final = "c_int int, c_bigint bigint, c_double double, c_text text, c_boolean boolean"

ROWS_SPECS: Final[dict[str, tuple[str, int, float]]] = {
    "a": (_W5_TEN, 1, 0.0),
    "b": (_W5_FIVE, 100, 0.0),
    "c": (_W5_FIVE, 1000, 0.0),
    "d": ("id int, embedding vector<float,768>", 100, 0.0),
    "e": (_W5_FIVE, 1000, 0.2),
}
"""W5: key -> (columns, rows, null fraction)."""


def rows_case(key: str) -> RowsCase:
    """Build W5 case ``key`` (seed ``SEED + ord(key)``)."""
    text, nrows, null_frac = ROWS_SPECS[key]
    columns = columns_of(text)
    rows = gen_rows(columns, nrows, SEED + ord(key), null_frac)
    return RowsCase(key, columns, rows, rows_body(columns, rows, True), rows_body(columns, rows, False))


W7_ROWS: Final = 100_000
"""W7: rows in its one page."""


@lru_cache(maxsize=2)
def page_case(nrows: int = W7_ROWS) -> RowsCase:
    """W7: one page of ``nrows`` rows of W5 (a)'s ten columns, no nulls (seed ``SEED + 700``).

    A shorter page holds the first rows of the full one. Cached: the full page takes
    seconds to generate.
    """
    columns = columns_of(_W5_TEN)
    rows = gen_rows(columns, nrows, SEED + 700)
    prepared = rows_body(columns, rows, True)
    head = len(struct.pack(">iii", KIND_ROWS, FLAG_NO_METADATA, len(columns)))
    unprepared = rows_body(columns, [], False)[:-4] + prepared[head:]
    return RowsCase("W7", columns, rows, prepared, unprepared)


@dataclass(frozen=True)
class BindCase:
    """A W6 case: bind columns, one row of values, the expected ``[bytes]`` contents."""

    key: str
    columns: list[Column]
    values: Row
    expected: list[bytes]


BIND_SPECS: Final[dict[str, str]] = {
    "a": _W5_TEN,
    "b": "id int, name text, ts bigint, embedding vector<float,1536>",
}


def bind_case(key: str) -> BindCase:
    """Build W6 case ``key`` (seed ``SEED + 100 + ord(key)``)."""
    columns = columns_of(BIND_SPECS[key])
    values = gen_rows(columns, 1, SEED + 100 + ord(key))[0]
    expected = [encode_value(spec, v) for (_name, spec), v in zip(columns, values)]
    return BindCase(key, columns, values, expected)


def single_column_rows(spec: Spec, value: Value, nrows: int) -> tuple[list[Column], list[Row]]:
    """The W1/W3 row-path input: column ``v`` holding ``value`` in each of ``nrows`` rows."""
    return [("v", spec)], [(value,)] * nrows


def wide_columns(count: int) -> list[Column]:
    """``count`` columns cycling through the W5 (a) types, for the parse-description benchmarks."""
    base = columns_of(_W5_TEN)
    return [(f"c{i}", base[i % len(base)][1]) for i in range(count)]

