"""Conformance of ``unload`` and ``load``: what cqlcodec unloads loads back exactly, every
CQL type with its edge values through every format (Parquet, Arrow, CSV, JSON lines;
gzip and zstd; stdout piped to stdin), against the real server.

The table is generated from the codec's kind registry (:mod:`cqlcodec.kinds`): each
scalar kind is a column and the element of a list, a set, a map and a vector column,
and a field of one tuple and one UDT column; :func:`test_every_kind_is_a_column_or_said_why_not`
fails for a kind that is neither given edge values here nor named with the reason it
is no column, so a new kind cannot be skipped silently. Rows take the edge values in
turn (a collection all of them, none, or one), the last row is all nulls; the table
unloaded in each format is loaded into a second table, and every cell must be equal.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator, Mapping
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from cassandra.cluster import Session

import cqlcodec.driver as cd
from cqlcodec import Date, Duration, Time
from cqlcodec import kinds as K

from .conftest import ADDRESS, new_cluster

pytest.importorskip("pyarrow")

KS = "cqlcodec_formats"
ROOT = Path(cd.__file__).resolve().parent.parent.parent
TEXTS = ["", "𝄞 astral ✓ é", 'sep, "quoted", semi;colon\nnew line\r\nCRLF\ttab', "null", "NULL",
         " lead and trail ", "\\N", "0x00", "[1, 2]"]
# every scalar kind's edge values, as bound through cqlcodec (out-of-range dates as
# Date, timestamps as int milliseconds)
EDGES: dict[int, list[Any]] = {
    K.ASCII: ["", "plain", 'a,b"c\nd\r\te', "\x00\x7f", "NaN"],
    K.BIGINT: [-(2**63), 2**63 - 1, 0, -1],
    K.BLOB: [b"", b"\x00\xff", bytes(range(256)), b","],
    K.BOOLEAN: [True, False],
    K.DECIMAL: [Decimal("0"), Decimal("-1E+30"), Decimal("1.50"), Decimal("1E-40"),
                Decimal("-0.000"), Decimal("123456789012345678901234567890123456789012345.6789"),
                Decimal("9" * 80)],
    K.DOUBLE: [math.nan, math.inf, -math.inf, -0.0, 5e-324, 1.7976931348623157e308, 0.1],
    K.FLOAT: [math.nan, math.inf, -math.inf, -0.0, 1.401298464324817e-45,
              3.4028234663852886e38, 0.10000000149011612],
    K.INT: [-(2**31), 2**31 - 1, 0],
    K.SMALLINT: [-(2**15), 2**15 - 1, 0],
    K.TINYINT: [-128, 127, 0],
    K.TEXT: TEXTS,
    K.TIMESTAMP: [-(2**63), 2**63 - 1, 0, -1, -62_135_596_800_000, -62_135_596_800_001,
                  253_402_300_799_999, 253_402_300_800_000, -86_400_000 * 1_000_000,
                  dt.datetime(2024, 2, 29, 23, 59, 59, 999000, dt.timezone.utc)],
    K.UUID: [uuid.UUID(int=0), uuid.UUID(int=2**128 - 1),
             uuid.UUID("12345678-1234-5678-1234-567812345678")],
    K.TIMEUUID: [uuid.UUID("7e1a9c36-9d2a-11ee-8c90-0242ac120002"),
                 uuid.UUID("00000000-0000-1000-8000-000000000000")],
    K.VARINT: [0, -(2**200), 2**64, 10**80, -(10**120) - 7, 2**63 - 1],
    K.INET: ["0.0.0.0", "::1", "2001:db8::ff00:42:8329", "255.255.255.255"],
    K.DATE: [Date(-(2**31)), Date(2**31 - 1), Date(-1_000_000), Date(5_000_000), Date(0),
             dt.date(1, 1, 1), dt.date(9999, 12, 31), Date(-719_163)],
    K.TIME: [Time(0), Time(86_399_999_999_999), Time(1)],
    K.DURATION: [Duration(0, 0, 0), Duration(-(2**31), -(2**31), -(2**63)),
                 Duration(2**31 - 1, 2**31 - 1, 2**63 - 1), Duration(1, 2, 3)],
}
# kinds (K's constants) that are element types of no column here, each with its reason
NOT_COLUMNS: dict[int, str] = {
    K.CUSTOM: "a Java class name: no CQL type to create a column of",
    K.EMPTY: "no CQL syntax creates one",
    K.COMPOSITE: "Java CompositeType: internal, no CQL syntax",
    K.REVERSED: "a clustering order, not a type of its own (reversed_ columns have it)",
    K.FROZEN: "a wrapper: frozen<...> columns below have it",
    K.COUNTER: "counters live in tables of counters only (test_counters_round_trip)",
}
# the kinds built from others, each by a function of the table below
COMPOSITE_KINDS = {K.LIST, K.SET, K.MAP, K.VECTOR, K.TUPLE, K.UDT}
# kinds that cannot be set elements or map keys
NOT_KEYS = {K.DURATION}
SCALARS = sorted(EDGES)
ROWS = max(len(v) for v in EDGES.values()) + 1  # the last: all nulls
# (id, --format, --compress, through a pipe)
FORMATS = [("parquet", "parquet", None, False), ("arrow", "arrow", None, False),
           ("csv", "csv", None, False), ("csv.gz", "csv", "gzip", False),
           ("jsonl", "jsonl", None, False), ("jsonl.zst", "jsonl", "zstd", False),
           ("csv-pipe", "csv", None, True), ("jsonl-pipe", "jsonl", None, True)]


def all_kinds() -> set[int]:
    """Every kind constant of :mod:`cqlcodec.kinds`."""
    return {v for n, v in vars(K).items() if n.isupper() and isinstance(v, int)}


def name(kind: int) -> str:
    return K.SCALAR_NAMES[kind]


def edge(kind: int, i: int) -> Any:
    values = EDGES[kind]
    return values[i % len(values)]


def collection(kind: int, i: int) -> list[Any]:
    """All the edge values of ``kind``, none, or one, by row."""
    if i % 3 == 0:
        return list(EDGES[kind])
    return [] if i % 3 == 1 else [edge(kind, i)]


Column = tuple[str, str, Callable[[int], Any]]


def by_row(kind: int, shape: str) -> Callable[[int], Any]:
    """The value of row ``i`` of a column of ``shape`` with elements of ``kind``."""
    def value(i: int) -> Any:
        if shape == "scalar":
            return edge(kind, i)
        if shape == "vector":
            return [edge(kind, i), edge(kind, i + 1)]
        items = collection(kind, i + 1 if shape == "frozen" else i)
        if shape == "indexed":
            return dict(enumerate(items))
        return {v: v for v in items} if shape == "map" else items
    return value


def udt_value(i: int) -> dict[str, Any]:
    return {f"f_{name(k)}": edge(k, i) for k in SCALARS}


def columns() -> list[Column]:
    """(name, CQL type, value of row i) of every column but the key."""
    cols: list[Column] = []
    for kind in SCALARS:
        n = name(kind)
        cols += [(f"s_{n}", n, by_row(kind, "scalar")),
                 (f"l_{n}", f"list<{n}>", by_row(kind, "list")),
                 (f"v_{n}", f"vector<{n}, 2>", by_row(kind, "vector")),
                 (f"fl_{n}", f"frozen<list<{n}>>", by_row(kind, "frozen"))]
        if kind in NOT_KEYS:
            cols.append((f"m_{n}", f"map<int, {n}>", by_row(kind, "indexed")))
        else:
            cols += [(f"t_{n}", f"set<{n}>", by_row(kind, "list")),
                     (f"m_{n}", f"map<{n}, {n}>", by_row(kind, "map"))]
    names = ", ".join(name(k) for k in SCALARS)
    cols.append(("tup", f"tuple<{names}>", lambda i: tuple(edge(k, i) for k in SCALARS)))
    cols.append(("u", "all_kinds", udt_value))
    cols.append(("nested", "map<text, frozen<list<frozen<all_kinds>>>>",
                 lambda i: {TEXTS[i % len(TEXTS)]: [udt_value(i + 1)]}))
    return cols


COLUMNS = columns()
BUILT = {K.LIST, K.VECTOR, K.SET, K.MAP, K.TUPLE, K.UDT}


def test_every_kind_is_a_column_or_said_why_not() -> None:
    assert BUILT == COMPOSITE_KINDS
    assert set(EDGES) | COMPOSITE_KINDS | set(NOT_COLUMNS) == all_kinds()
    assert not set(EDGES) & set(NOT_COLUMNS)


@pytest.fixture(scope="module")
def session() -> Iterator[Session]:
    cluster = new_cluster(5)
    cd.install(cluster)
    s = cluster.connect()
    s.execute(f"DROP KEYSPACE IF EXISTS {KS}", timeout=120)
    s.execute(f"CREATE KEYSPACE {KS} WITH replication = "
              "{'class': 'SimpleStrategy', 'replication_factor': 1}", timeout=60)
    fields = ", ".join(f"f_{name(k)} {name(k)}" for k in SCALARS)
    s.execute(f"CREATE TYPE {KS}.all_kinds ({fields})", timeout=60)
    yield s
    s.execute(f"DROP KEYSPACE IF EXISTS {KS}", timeout=120)
    cluster.shutdown()


@pytest.fixture(scope="module")
def source(session: Session) -> str:
    create_all(session, ["source"])
    table = f"{KS}.source"
    names = ["k"] + [n for n, _, _ in COLUMNS]
    insert = session.prepare(f"INSERT INTO {table} ({', '.join(names)}) "
                             f"VALUES ({', '.join('?' * len(names))})")
    for i in range(ROWS - 1):
        session.execute(insert, [i] + [value(i) for _, _, value in COLUMNS])
    session.execute(f"INSERT INTO {table} (k) VALUES ({ROWS - 1})")
    return table


def canon(v: Any) -> Any:
    """A comparable form of a decoded value: floats and decimals by their text (NaN
    equal to NaN, -0.0 unlike 0.0, 1.50 unlike 1.5), sets and maps in order."""
    if v is None or isinstance(v, (bool, int, str, bytes)):
        return (type(v).__name__, v)
    if isinstance(v, float):
        return ("float", repr(v))
    if isinstance(v, Decimal):
        return ("decimal", str(v))
    if isinstance(v, (set, frozenset)):
        return ("set", tuple(sorted((canon(x) for x in v), key=repr)))
    if isinstance(v, Mapping):
        return ("map", tuple(sorted(((canon(k), canon(x)) for k, x in v.items()), key=repr)))
    if isinstance(v, (list, tuple)):
        return (type(v).__name__, tuple(canon(x) for x in v))
    return (type(v).__name__, repr(v))


def rows_of(session: Session, table: str) -> dict[int, tuple[Any, ...]]:
    names = ["k"] + [n for n, _, _ in COLUMNS]
    rows = session.execute(f"SELECT {', '.join(names)} FROM {table}", timeout=60)
    return {row[0]: tuple(canon(v) for v in row) for row in rows}


def cli(*args: str, stdin: Any = None, stdout: Any = None) -> subprocess.Popen[bytes]:
    host, _, port = ADDRESS.rpartition(":")
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("CQLCODEC_DEBUG", None)
    return subprocess.Popen([sys.executable, "-m", "cqlcodec", *args, "--host",
                             host or "127.0.0.1", "--port", port or "9042", "--timeout", "30",
                             "--quiet"], stdin=stdin, stdout=stdout,
                            stderr=subprocess.PIPE, env=env, cwd=ROOT)


def finished(*procs: subprocess.Popen[bytes]) -> None:
    """Waits for every process (they run at once) and checks that each succeeded."""
    errors = []
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        if proc.returncode != 0:
            errors.append(err.decode("utf-8", "replace"))
    assert errors == []


def unload(table: str, fmt: str, compress: str | None, out: Any,
           fetch_size: int | None = None) -> subprocess.Popen[bytes]:
    """``unload`` of ``table`` to the directory ``out``, or to stdout (``out`` None). Text
    formats in pages of two rows, so that a page of edge values follows one of common
    values (their Arrow types differ); Parquet and Arrow in one page per split here, in
    pages of two in test_columnar_files_of_pages_of_differing_types."""
    extra = ["--compress", compress] if compress else []
    fetch = fetch_size or (2 if fmt in ("csv", "jsonl") else 5000)
    return cli("unload", table, "-o", "-" if out is None else str(out), "--format", fmt,
               "--splits", "2", "--fetch-size", str(fetch), *extra,
               stdout=subprocess.PIPE if out is None else None)


def piped(table: str, target: str, fmt: str) -> list[subprocess.Popen[bytes]]:
    """``unload -o - | load -`` from ``table`` into ``target``, started."""
    out = unload(table, fmt, None, None)
    into = cli("load", target, "-", "--format", fmt, stdin=out.stdout)
    assert out.stdout is not None
    out.stdout.close()
    return [into, out]


def create_all(session: Session, tables: list[str]) -> None:
    """The target tables, created at once (each like the source)."""
    spec = ", ".join(f"{n} {t}" for n, t, _ in COLUMNS)
    futures = [session.execute_async(f"CREATE TABLE IF NOT EXISTS {KS}.{table} "
                                     f"(k int PRIMARY KEY, {spec})", timeout=120)
               for table in tables]
    for future in futures:
        future.result()


@pytest.fixture(scope="module")
def loaded(session: Session, source: str,
           tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Every format's round trip, all at once: the source unloaded in each format and
    loaded into a target table of its own; the target of each format's id."""
    base = tmp_path_factory.mktemp("formats")
    targets = {f[0]: f"target_{i}" for i, f in enumerate(FORMATS)}
    create_all(session, list(targets.values()))
    files = [f for f in FORMATS if not f[3]]
    pipes = [p for f in FORMATS if f[3] for p in piped(source, f"{KS}.{targets[f[0]]}", f[1])]
    finished(*[unload(source, fmt, compress, base / ident) for ident, fmt, compress, _ in files])
    finished(*pipes, *[cli("load", f"{KS}.{targets[ident]}", str(base / ident))
                       for ident, *_ in files])
    return {ident: f"{KS}.{table}" for ident, table in targets.items()}


@pytest.mark.parametrize("ident", [f[0] for f in FORMATS])
def test_every_type_and_edge_survives_unload_and_load(session: Session, source: str,
                                                      loaded: dict[str, str],
                                                      ident: str) -> None:
    want, got = rows_of(session, source), rows_of(session, loaded[ident])
    assert sorted(got) == sorted(want)
    names = ["k"] + [n for n, _, _ in COLUMNS]
    differing = [(k, names[c], want[k][c], got[k][c]) for k in sorted(want)
                 for c in range(len(names)) if want[k][c] != got[k][c]]
    assert differing == []


def test_scan_to_parquet_and_load_table(session: Session, source: str, tmp_path: Path) -> None:
    """The API's own round trip: ``scan_table(...).to_parquet`` (a file per split) and
    ``load_table``, durations included."""
    create_all(session, ["from_scan"])
    cd.scan_table(session, source).to_parquet(str(tmp_path / "scan") + os.sep)
    result = cd.load_table(session, f"{KS}.from_scan", tmp_path / "scan")
    assert (result.rows, result.failures) == (ROWS, [])
    assert rows_of(session, f"{KS}.from_scan") == rows_of(session, source)


@pytest.mark.parametrize("fmt", ["parquet", "arrow"])
def test_columnar_files_of_pages_of_differing_types(session: Session, source: str,
                                                    tmp_path: Path, fmt: str) -> None:
    """Pages of two rows give the varint and decimal columns (and elements, fields)
    other Arrow types page by page (int64, decimal128, decimal256, binary; scales):
    each split is still one file of one schema (:mod:`cqlcodec.driver.columnar_files`),
    listed in the manifest, holding no decimal256, read by pyarrow and DuckDB (and
    polars: Parquet), and loads back to every cell."""
    duckdb = pytest.importorskip("duckdb")
    pa = pytest.importorskip("pyarrow")
    out = tmp_path / "pages"
    finished(unload(source, fmt, None, out, fetch_size=2))
    manifest = json.loads((out / "_manifest.json").read_text())
    files = sorted(d["file"] for d in manifest["done"].values() if d["file"])
    assert files == sorted(p.name for p in out.iterdir() if p.name != "_manifest.json")
    assert sum(d["rows"] for d in manifest["done"].values()) == ROWS
    # DuckDB's timestamps end in year 294247 (its microseconds): the varint and decimal
    # columns, which are what differs by page
    numbers = ", ".join(n for n, _, _ in COLUMNS if n.endswith(("_varint", "_decimal")))
    kinds: set[tuple[str, str]] = set()
    for file in files:
        path = out / file
        if fmt == "parquet":
            table = pytest.importorskip("pyarrow.parquet").read_table(path)
            read = duckdb.sql(f"SELECT {numbers} FROM read_parquet('{path}')")
            assert pytest.importorskip("polars").read_parquet(path).height == table.num_rows
        else:
            table = pa.ipc.open_file(path).read_all()
            read = duckdb.from_arrow(table).project(numbers)
        assert len(read.fetchall()) == table.num_rows
        assert "decimal256" not in str(table.schema)
        kinds.add((str(table.schema.field("s_varint").type),
                   str(table.schema.field("s_decimal").type)))
    # a file that widened: varints of 77 digits and decimals of a negative scale
    assert {v for v, _ in kinds} <= {"int64", "decimal128(38, 0)", "binary"}
    assert "binary" in {v for v, _ in kinds} and "string" in {d for _, d in kinds}
    create_all(session, [f"pages_{fmt}"])
    finished(cli("load", f"{KS}.pages_{fmt}", str(out)))
    assert rows_of(session, f"{KS}.pages_{fmt}") == rows_of(session, source)


def test_counters_round_trip(session: Session, tmp_path: Path) -> None:
    """The one kind of its own tables: counters at their edges, through CSV and JSON
    lines and Parquet."""
    session.execute(f"CREATE TABLE IF NOT EXISTS {KS}.counts (k int PRIMARY KEY, n counter)")
    session.execute(f"CREATE TABLE IF NOT EXISTS {KS}.counts_back (k int PRIMARY KEY, "
                    "n counter)")
    values = [-(2**63), 2**63 - 1, 0, -1]
    for k, n in enumerate(values):
        session.execute(f"UPDATE {KS}.counts SET n = n + {n} WHERE k = {k}")
    formats = ("csv", "jsonl", "parquet")
    finished(*[unload(f"{KS}.counts", fmt, None, tmp_path / fmt) for fmt in formats])
    for fmt in formats:
        session.execute(f"TRUNCATE {KS}.counts_back", timeout=60)
        finished(cli("load", f"{KS}.counts_back", str(tmp_path / fmt)))
        back = {r.k: r.n for r in session.execute(f"SELECT k, n FROM {KS}.counts_back")}
        assert back == dict(enumerate(values)), fmt


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_cells_of_megabytes_in_text_formats(session: Session, tmp_path: Path, fmt: str) -> None:
    """Blobs of 3 MB (6 MB of hex: more than the CSV reader's first blocks) and text
    of 1.5 MB, unloaded and loaded back exactly, from files and through a pipe."""
    session.execute(f"CREATE TABLE IF NOT EXISTS {KS}.big (k int PRIMARY KEY, b blob, t text)")
    create = f"CREATE TABLE IF NOT EXISTS {KS}.big_{{}} (k int PRIMARY KEY, b blob, t text)"
    session.execute(create.format(fmt))
    session.execute(create.format(f"{fmt}_piped"))
    insert = session.prepare(f"INSERT INTO {KS}.big (k, b, t) VALUES (?, ?, ?)")
    blobs = {k: bytes([k]) * (3_000_000 + k) for k in range(2)}
    texts = {k: ("x,\"\n" * 375_000)[k:] for k in range(2)}
    for k in range(2):
        session.execute(insert, [k, blobs[k], texts[k]], timeout=60)
    session.execute(insert, [2, b"small", "small"])
    want = {**{k: (blobs[k], texts[k]) for k in range(2)}, 2: (b"small", "small")}
    finished(unload(f"{KS}.big", fmt, None, tmp_path / fmt))
    finished(cli("load", f"{KS}.big_{fmt}", str(tmp_path / fmt)),
             *piped(f"{KS}.big", f"{KS}.big_{fmt}_piped", fmt))
    for table in (f"big_{fmt}", f"big_{fmt}_piped"):
        back = {r.k: (r.b, r.t) for r in session.execute(f"SELECT k, b, t FROM {KS}.{table}")}
        assert back == want, table
