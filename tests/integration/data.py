"""The integration schema and the values written to it.

Every CQL type is a column of ``everything``: scalars, nested and frozen collections,
tuples, UDTs (nested, with a quoted field name), duration, and vectors of fixed-size
and variable-size elements. The rows are written with the driver alone (keys below
``CODEC_KEY_OFFSET``) and again, with the same values, through cqlcodec's binding
(keys plus ``CODEC_KEY_OFFSET``).
"""

from __future__ import annotations

import datetime
import math
import random
import uuid
from decimal import Decimal
from typing import Any, Final

from cassandra.cluster import Session
from cassandra.util import Date, Duration, Time

KEYSPACE: Final = "cqlcodec_it"
CODEC_KEY_OFFSET: Final = 1000
PAGED_PARTITIONS: Final = 3
PAGED_ROWS_PER_PARTITION: Final = 90
BIG_DIM: Final = 1536

TYPES_CQL: Final = [
    "CREATE TYPE address (street text, zip int, tags frozen<set<text>>)",
    'CREATE TYPE person (name text, home frozen<address>, born date, "Nick Name" text, '
    "scores list<int>)",
]

EVERYTHING_COLUMNS: Final[list[tuple[str, str]]] = [
    ("a_ascii", "ascii"),
    ("a_bigint", "bigint"),
    ("a_blob", "blob"),
    ("a_boolean", "boolean"),
    ("a_date", "date"),
    ("a_decimal", "decimal"),
    ("a_double", "double"),
    ("a_duration", "duration"),
    ("a_float", "float"),
    ("a_inet", "inet"),
    ("a_int", "int"),
    ("a_smallint", "smallint"),
    ("a_text", "text"),
    ("a_time", "time"),
    ("a_timestamp", "timestamp"),
    ("a_timeuuid", "timeuuid"),
    ("a_tinyint", "tinyint"),
    ("a_uuid", "uuid"),
    ("a_varchar", "varchar"),
    ("a_varint", "varint"),
    ("l_int", "list<int>"),
    ("l_duration", "list<duration>"),
    ("s_text", "set<text>"),
    ("s_date", "set<date>"),
    ("m_text_int", "map<text, int>"),
    ("m_date_time", "map<date, time>"),
    ("m_uuid_dec", "map<uuid, decimal>"),
    ("l_fset", "list<frozen<set<int>>>"),
    ("s_ftuple", "set<frozen<tuple<int, text>>>"),
    ("m_flist_fmap", "map<frozen<list<int>>, frozen<map<text, int>>>"),
    ("m_nested", "map<text, frozen<list<frozen<map<int, frozen<set<text>>>>>>>"),
    ("f_list", "frozen<list<text>>"),
    ("f_map", "frozen<map<int, frozen<set<bigint>>>>"),
    ("tup", "tuple<int, text, boolean>"),
    ("tup_nested", "tuple<date, time, frozen<list<duration>>, frozen<address>>"),
    ("udt", "frozen<person>"),
    ("udt_list", "list<frozen<address>>"),
    ("udt_map", "map<text, frozen<address>>"),
    ("v_float3", "vector<float, 3>"),
    ("v_float_big", f"vector<float, {BIG_DIM}>"),
    ("v_text2", "vector<text, 2>"),
    ("v_bigint2", "vector<bigint, 2>"),
    ("v_date2", "vector<date, 2>"),
]
COLUMN_NAMES: Final = [name for name, _ in EVERYTHING_COLUMNS]


def address(street: str | None, zip_code: int | None, tags: set[str] | None) -> tuple[Any, ...]:
    """An address UDT value as a tuple (the driver binds tuples to UDTs positionally)."""
    return (street, zip_code, tags)


def big_vector(seed: int) -> list[float]:
    """A float32-exact vector<float, 1536> value."""
    rnd = random.Random(seed)
    return [float(rnd.randint(-2**20, 2**20)) / 1024.0 for _i in range(BIG_DIM)]


def everything_rows() -> list[dict[str, Any]]:
    """Rows of ``everything`` keyed by column name; every value is driver input."""
    typical: dict[str, Any] = {
        "k": 1,
        "a_ascii": "ascii text",
        "a_bigint": 1234567890123,
        "a_blob": b"\x00\x01binary\xff",
        "a_boolean": True,
        "a_date": datetime.date(2024, 2, 29),
        "a_decimal": Decimal("12345.678900"),
        "a_double": 3.141592653589793,
        "a_duration": Duration(1, 2, 3_000_000_123),
        "a_float": 1.5,
        "a_inet": "192.168.1.20",
        "a_int": -42,
        "a_smallint": 1234,
        "a_text": "héllo wörld ✓",
        "a_time": datetime.time(13, 45, 30, 123456),
        "a_timestamp": datetime.datetime(2021, 6, 1, 12, 30, 45, 678000),
        "a_timeuuid": uuid.UUID("7e1a9c36-9d2a-11ee-8c90-0242ac120002"),
        "a_tinyint": -7,
        "a_uuid": uuid.UUID("12345678-1234-5678-1234-567812345678"),
        "a_varchar": "varchar value",
        "a_varint": 123456789012345678901234567890,
        "l_int": [3, 1, 2, 1],
        "l_duration": [Duration(0, 0, 1), Duration(-1, -2, -3)],
        "s_text": {"b", "a", "c"},
        "s_date": {datetime.date(1969, 12, 31), datetime.date(2000, 1, 1)},
        "m_text_int": {"one": 1, "two": 2, "three": 3},
        "m_date_time": {datetime.date(2020, 5, 17): datetime.time(0, 0, 1)},
        "m_uuid_dec": {uuid.UUID(int=5): Decimal("-1.5"), uuid.UUID(int=1): Decimal("0")},
        "l_fset": [{1, 2}, {3}, set()],
        "s_ftuple": {(1, "a"), (2, "b"), (1, "c")},
        "m_flist_fmap": {(1, 2): {"x": 1}, (3,): {"y": 2, "z": 3}},
        "m_nested": {"n": [{1: {"p", "q"}}, {2: {"r"}, 3: set()}]},
        "f_list": ["z", "y", ""],
        "f_map": {1: {10, -10}, 2: set()},
        "tup": (7, "seven", False),
        "tup_nested": (datetime.date(1999, 12, 31), datetime.time(23, 59, 59),
                       [Duration(2, 0, 0)], address("Main St", 12345, {"home"})),
        "udt": ("Ada", address("Elm St", 99999, {"a", "b"}), datetime.date(1815, 12, 10),
                "Countess", [1, 2, 3]),
        "udt_list": [address("A", 1, None), address(None, None, {"x"})],
        "udt_map": {"work": address("Office", 2, set())},
        "v_float3": [1.0, -2.5, 3.25],
        "v_float_big": big_vector(1),
        "v_text2": ["first", "second ✓"],
        "v_bigint2": [-(2**63), 2**63 - 1],
        "v_date2": [datetime.date(1970, 1, 1), datetime.date(2038, 1, 19)],
    }
    edges: dict[str, Any] = {
        "k": 2,
        "a_ascii": "",
        "a_bigint": -(2**63),
        "a_blob": b"",
        "a_boolean": False,
        "a_date": Date(-1_000_000),  # before year 1: outside datetime.date
        "a_decimal": Decimal("-1E+30"),
        "a_double": -math.inf,
        "a_duration": Duration(-2**31, -2**31, -(2**63)),
        "a_float": math.inf,
        "a_inet": "2001:db8::ff00:42:8329",
        "a_int": 2**31 - 1,
        "a_smallint": -(2**15),
        "a_text": "",
        "a_time": Time(86_399_999_999_999),
        "a_timestamp": datetime.datetime(1901, 12, 13, 20, 45, 52, 1000),
        "a_timeuuid": uuid.UUID("00000000-0000-1000-8000-000000000000"),
        "a_tinyint": 127,
        "a_uuid": uuid.UUID(int=0),
        "a_varchar": "𝄞 astral",
        "a_varint": -(2**200),
        "l_int": [],
        "l_duration": [Duration(0, 0, 0)],
        "s_text": {""},
        "s_date": {Date(3_000_000)},  # after year 9999
        "m_text_int": {"": -(2**31)},
        "m_date_time": {Date(-1): Time(0)},
        "m_uuid_dec": {},
        "l_fset": [set()],
        "s_ftuple": {(0, "")},
        "m_flist_fmap": {(): {}},
        "m_nested": {"": []},
        "f_list": [],
        "f_map": {},
        "tup": (None, None, None),
        "tup_nested": (None, None, None, None),
        "udt": (None, None, None, None, None),
        "udt_list": [],
        "udt_map": {},
        "v_float3": [0.0, -0.0, 3.4028234663852886e38],
        "v_float_big": big_vector(2),
        "v_text2": ["", ""],
        "v_bigint2": [0, -1],
        "v_date2": [Date(-(2**31)), Date(2**31 - 1)],
    }
    nulls: dict[str, Any] = {"k": 3}
    nulls.update({name: None for name in COLUMN_NAMES})
    return [typical, edges, nulls]


def create_schema(session: Session) -> None:
    """Drop and recreate the keyspace, its types, tables, index and rows."""
    session.execute(f"DROP KEYSPACE IF EXISTS {KEYSPACE}", timeout=120)
    session.execute(f"CREATE KEYSPACE {KEYSPACE} WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 1}", timeout=60)
    session.set_keyspace(KEYSPACE)
    columns = ", ".join(f"{name} {cql}" for name, cql in EVERYTHING_COLUMNS)
    for ddl in [
        *TYPES_CQL,
        f"CREATE TABLE everything (k int PRIMARY KEY, {columns})",
        "CREATE TABLE paged (p int, c int, label text, score double, tags set<text>, "
        "PRIMARY KEY (p, c)) WITH CLUSTERING ORDER BY (c DESC)",
        "CREATE TABLE counters (k text PRIMARY KEY, hits counter)",
        "CREATE TABLE composite (a int, b text, c int, v text, PRIMARY KEY ((a, b), c))",
        "CREATE TABLE ann (k int PRIMARY KEY, v vector<float, 3>, label text)",
        "CREATE INDEX ann_v ON ann (v) USING 'sai' "
        "WITH OPTIONS = {'similarity_function': 'euclidean'}",
        "CREATE TABLE ann_big (k int PRIMARY KEY, v vector<float, 1536>)",
        "CREATE INDEX ann_big_v ON ann_big (v) USING 'sai' "
        "WITH OPTIONS = {'similarity_function': 'dot_product'}",
    ]:
        session.execute(ddl, timeout=60)  # schema changes are slow on a busy 2-core machine

    insert = session.prepare(
        f"INSERT INTO everything (k, {', '.join(COLUMN_NAMES)}) "
        f"VALUES (?, {', '.join('?' for _n in COLUMN_NAMES)})")
    for row in everything_rows():
        session.execute(insert, [row["k"]] + [row.get(n) for n in COLUMN_NAMES])

    put = session.prepare("INSERT INTO paged (p, c, label, score, tags) VALUES (?, ?, ?, ?, ?)")
    for p in range(PAGED_PARTITIONS):
        for c in range(PAGED_ROWS_PER_PARTITION):
            session.execute(put, (p, c, f"row {p}/{c}", c / 7.0, {f"t{c % 5}", f"p{p}"}))
    session.execute("UPDATE counters SET hits = hits + 41 WHERE k = 'a'")
    session.execute("UPDATE counters SET hits = hits - 9000000000 WHERE k = 'b'")
    put_ann = session.prepare("INSERT INTO ann (k, v, label) VALUES (?, ?, ?)")
    for k, vector in ANN_POINTS.items():
        session.execute(put_ann, (k, vector, f"point {k}"))
    put_big = session.prepare("INSERT INTO ann_big (k, v) VALUES (?, ?)")
    for k in range(ANN_BIG_ROWS):
        session.execute(put_big, (k, unit_big_vector(k)))


ANN_POINTS: Final[dict[int, list[float]]] = {
    k: [float(k % 5), float(k // 5), float((k * 7) % 3)] for k in range(25)
}
ANN_BIG_ROWS: Final = 12


def unit_big_vector(k: int) -> list[float]:
    """A 1536-d unit vector (dot_product needs unit length): the axis ``k``."""
    v = [0.0] * BIG_DIM
    v[k] = 1.0
    return v
