"""The value commands of ``python -m cqlcodec`` (see :mod:`cqlcodec.cli`).

    cqlcodec encode TYPE VALUE         content bytes of VALUE as hex
    cqlcodec decode TYPE HEX           the Python value of the content bytes
    cqlcodec decode-result HEX|FILE    a RESULT message body (rows, prepared, ...)
    cqlcodec bench                     quick benchmark of the active build (W1/W2, W5, W6)
    cqlcodec demo                      round trips a few values, shows which build runs

Bad input prints one line ``cqlcodec: error: ...`` on stderr and exits with status 2
(set ``CQLCODEC_DEBUG=1`` for the traceback).
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import sys
import time as clock
import timeit
import uuid
from datetime import date, datetime, time, timedelta, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any, Callable, Final

import cqlcodec
from cqlcodec import ColumnSpec, CqlType, Prepared, decode_result, parse_type
from cqlcodec import bench_workloads as wl

EXIT_USAGE: Final = 2
TEXT_TYPES: Final = frozenset(["text", "varchar", "ascii"])

VALUE_HELP: Final = """\
VALUE is a Python literal (ast.literal_eval syntax: 42, -1.5, 'text', b'\\x00', [1, 2],
{1, 2}, {'k': 1}, (1, 'a'), None, True) in which these constructors may also be called
with literal arguments: UUID('...'), Decimal('1.50'), datetime(2024, 5, 17, 12, 0),
date(2024, 5, 17), time(12, 30), timedelta(...), Date(days), Time(nanoseconds),
Duration(months, days, nanoseconds), set(), frozenset([...]), float('nan');
the names UTC, inf and nan are known. For text/varchar/ascii a VALUE that is not a
string literal is taken verbatim; for blob a 0x... hex string is accepted.
"""

_CONSTRUCTORS: Final[dict[str, Callable[..., object]]] = {
    "UUID": uuid.UUID,
    "uuid": uuid.UUID,
    "Decimal": Decimal,
    "datetime": datetime,
    "date": date,
    "time": time,
    "timedelta": timedelta,
    "Date": cqlcodec.Date,
    "Time": cqlcodec.Time,
    "Duration": cqlcodec.Duration,
    "set": set,
    "frozenset": frozenset,
    "float": float,
    "int": int,
}
_NAMES: Final[dict[str, object]] = {"UTC": timezone.utc, "inf": float("inf"), "nan": float("nan")}
_MAX_POWER: Final = 4096
_HEX_TEXT: Final = re.compile(r"\s*(0[xX])?[0-9a-fA-F\s:_]*")


class UsageError(Exception):
    """Bad command-line input: reported on one line, exit status 2."""


# --------------------------------------------------------------------------- VALUE literals


def parse_value(text: str) -> object:
    """Evaluate a VALUE literal (see VALUE_HELP); raises UsageError when it is not one."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise UsageError(f"cannot parse VALUE {text!r} as a Python literal: {exc.msg}") from None
    return _evaluate(tree.body)


def _evaluate(node: ast.expr) -> object:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.List):
        return [_evaluate(e) for e in node.elts]
    if isinstance(node, ast.Tuple):
        return tuple(_evaluate(e) for e in node.elts)
    if isinstance(node, ast.Set):
        return {_hashable(_evaluate(e)) for e in node.elts}
    if isinstance(node, ast.Dict):
        out: dict[object, object] = {}
        for key, value in zip(node.keys, node.values):
            if key is None:
                raise UsageError("'**' is not allowed in a VALUE")
            out[_hashable(_evaluate(key))] = _evaluate(value)
        return out
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        operand = _evaluate(node.operand)
        if isinstance(operand, (int, float, Decimal)) and not isinstance(operand, bool):
            return -operand if isinstance(node.op, ast.USub) else +operand
    if isinstance(node, ast.BinOp):
        return _arithmetic(node)
    if isinstance(node, ast.Name) and node.id in _NAMES:
        return _NAMES[node.id]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _CONSTRUCTORS:
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            raise UsageError("'*' and '**' are not allowed in a VALUE")
        args = [_evaluate(a) for a in node.args]
        kwargs = {str(k.arg): _evaluate(k.value) for k in node.keywords}
        try:
            return _CONSTRUCTORS[node.func.id](*args, **kwargs)
        except (TypeError, ValueError, ArithmeticError, cqlcodec.CodecError) as exc:
            raise UsageError(f"{ast.unparse(node)}: {exc}") from None
    raise UsageError(f"not allowed in a VALUE: {ast.unparse(node)!r} (see --help)")


def _arithmetic(node: ast.BinOp) -> object:
    left, right = _evaluate(node.left), _evaluate(node.right)
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (left, right)):
        raise UsageError(f"arithmetic only on numbers: {ast.unparse(node)!r}")
    assert isinstance(left, (int, float)) and isinstance(right, (int, float))
    if isinstance(node.op, ast.Add):
        return left + right
    if isinstance(node.op, ast.Sub):
        return left - right
    if isinstance(node.op, ast.Mult):
        return left * right
    if isinstance(node.op, ast.Pow) and abs(right) <= _MAX_POWER and abs(left) <= 2**32:
        return left**right
    raise UsageError(f"unsupported arithmetic in a VALUE: {ast.unparse(node)!r}")


def _hashable(value: object) -> object:
    try:
        hash(value)
    except TypeError:
        raise UsageError(f"set elements and map keys must be hashable, got {value!r}") from None
    return value


def value_for(t: CqlType, text: str) -> object:
    """The Python value of VALUE ``text`` for type ``t`` (text and blob conveniences)."""
    base = t.unwrapped().cql_name
    if base in TEXT_TYPES:
        try:
            value = parse_value(text)
        except UsageError:
            return text
        return value if isinstance(value, str) else text
    if base == "blob" and text.startswith(("0x", "0X")):
        return parse_hex(text)
    return parse_value(text)


def parse_hex(text: str) -> bytes:
    """Bytes from hex text; ``0x`` prefix, whitespace, ':' and '_' separators allowed."""
    cleaned = "".join(text.split()).replace(":", "").replace("_", "")
    if cleaned[:2] in ("0x", "0X"):
        cleaned = cleaned[2:]
    try:
        return bytes.fromhex(cleaned)
    except ValueError:
        raise UsageError(f"not hexadecimal bytes: {_short(text)}") from None


def _short(text: str, limit: int = 60) -> str:
    return repr(text) if len(text) <= limit else repr(text[:limit]) + "..."


def parse_cql_type(text: str) -> CqlType:
    """parse_type with the error reported as a usage error."""
    try:
        return parse_type(text)
    except cqlcodec.TypeParseError as exc:
        raise UsageError(str(exc)) from None


# --------------------------------------------------------------------------- commands


def cmd_encode(args: argparse.Namespace) -> int:
    t = parse_cql_type(args.type)
    value = value_for(t, args.value)
    data = t.serialize(value, args.protocol)
    print(data.hex())
    return 0


def cmd_decode(args: argparse.Namespace) -> int:
    t = parse_cql_type(args.type)
    data = parse_hex(args.hex)
    value = t.deserialize(data, args.protocol, tz_aware=args.tz_aware, numpy=args.numpy)
    print(repr(value))
    return 0


DEMO_VALUES: Final[list[tuple[str, object]]] = [
    ("int", -123456789),
    ("bigint", 1234567890123456789),
    ("double", 12345.6789),
    ("text", "hello wörld"),
    ("boolean", True),
    ("uuid", uuid.UUID("3f2504e0-4f89-11d3-9a0c-0305e82c3301")),
    ("decimal", Decimal("12345.6789")),
    ("varint", 0x7123456789ABCDEF),
    ("timestamp", datetime(2024, 5, 17, 12, 34, 56, 789000)),
    ("date", date(2024, 5, 17)),
    ("list<int>", [1, 2, 3]),
    ("set<text>", {"a"}),
    ("map<text, int>", {"key": 1}),
    ("tuple<int, text, double>", (42, "hello", 2.5)),
    ("vector<float, 3>", [0.5, -1.0, 2.0]),
]


def cmd_demo(args: argparse.Namespace) -> int:
    build = "compiled (mypyc)" if cqlcodec.COMPILED else "interpreted"
    print(f"cqlcodec {cqlcodec.__version__}: COMPILED={cqlcodec.COMPILED} ({build})")
    width = max(len(name) for name, _v in DEMO_VALUES)
    failures = 0
    for name, value in DEMO_VALUES:
        t = parse_type(name)
        data = t.serialize(value, args.protocol)
        back = t.deserialize(data, args.protocol)
        same = back == value
        failures += not same
        hex_text = data.hex() if len(data) <= 24 else data[:24].hex() + "..."
        print(f"  {name:<{width}}  {value!r:<40}  -> {hex_text:<52} -> {back!r}"
              f"{'' if same else '  MISMATCH'}")
    print("all round trips exact" if not failures else f"{failures} round trips differ")
    return 0 if not failures else 1


def read_body(source: str) -> bytes:
    """RESULT body bytes from hex text, a file (binary or hex text) or '-' (stdin, binary)."""
    if source == "-":
        return sys.stdin.buffer.read()
    if _HEX_TEXT.fullmatch(source) and not os.path.exists(source):
        return parse_hex(source)
    path = Path(source)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read {_short(source)}: {exc.strerror or exc} "
                         "(give the body as hex or a file name)") from None
    try:
        return parse_hex(data.decode("ascii"))
    except (UnicodeDecodeError, UsageError):
        return data


def _column_line(spec: ColumnSpec) -> str:
    return f"  {spec.name}  {spec.type.cql_name}  ({spec.keyspace}.{spec.table})"


def describe_result(result: object, max_rows: int) -> list[str]:
    """Human-readable lines for a decoded RESULT."""
    if isinstance(result, cqlcodec.RowsResult):
        lines = [f"Rows: {len(result.columns)} columns, {len(result.rows)} rows, "
                 f"has_more_pages={result.has_more_pages}"]
        if result.paging_state is not None:
            lines.append(f"paging_state: {result.paging_state.hex()}")
        if result.new_metadata_id is not None:
            lines.append(f"new_metadata_id: {result.new_metadata_id.hex()}")
        lines.append("columns:")
        lines += [_column_line(c) for c in result.columns]
        lines.append("rows:")
        lines += [f"  {row!r}" for row in result.rows[:max_rows]]
        if len(result.rows) > max_rows:
            lines.append(f"  ... {len(result.rows) - max_rows} more rows (--max-rows)")
        return lines
    if isinstance(result, Prepared):
        lines = [f"Prepared: query_id={result.query_id.hex()}, pk_indexes={list(result.pk_indexes)}"]
        if result.result_metadata_id is not None:
            lines.append(f"result_metadata_id: {result.result_metadata_id.hex()}")
        lines.append("bind columns:")
        lines += [_column_line(c) for c in result.bind_columns]
        lines.append("result columns:")
        lines += [_column_line(c) for c in result.result_columns]
        return lines
    if isinstance(result, cqlcodec.SetKeyspaceResult):
        return [f"Set_keyspace: {result.keyspace}"]
    if isinstance(result, cqlcodec.SchemaChangeResult):
        name = f".{result.name}" if result.name else ""
        args = f"({', '.join(result.argument_types)})" if result.argument_types else ""
        return [f"Schema_change: {result.change_type} {result.target} {result.keyspace}{name}{args}"]
    if isinstance(result, cqlcodec.VoidResult):
        return ["Void"]
    return [repr(result)]


def cmd_decode_result(args: argparse.Namespace) -> int:
    body = read_body(args.body)
    result = decode_result(body, args.protocol, tz_aware=args.tz_aware, numpy_vectors=args.numpy)
    print("\n".join(describe_result(result, args.max_rows)))
    return 0


# --------------------------------------------------------------------------- bench


def _bench_columns(columns: list[wl.Column]) -> list[ColumnSpec]:
    return [ColumnSpec(wl.KEYSPACE, wl.TABLE, name, parse_type(str(spec))) for name, spec in columns]


def bench_cases() -> list[tuple[str, str, dict[str, Any], int]]:
    """(label, statement, globals, values per op) of the quick benchmark; each checked once.

    The inputs are the benchmark workloads of ``cqlcodec.bench_workloads`` (the same
    bytes ``nox -s bench`` measures).
    """
    cases: list[tuple[str, str, dict[str, Any], int]] = []
    vt = parse_type("vector<float, 1536>")
    vector = wl.vector_value(1536)
    data = wl.vector_bytes(vector)
    if vt.deserialize(data) != vector or vt.serialize(vector) != data:
        raise AssertionError("vector<float, 1536> round trip differs")
    cases.append(("W1 vector<float,1536> -> list", "des(data, 4)", {"des": vt.deserialize, "data": data}, 1536))
    try:
        import numpy
    except ImportError:
        pass
    else:
        cases.append(("W1 vector<float,1536> -> numpy", "des(data, 4, numpy=True)",
                      {"des": vt.deserialize, "data": data}, 1536))
        array = numpy.asarray(vector, dtype=numpy.float32)
        cases.append(("W2 vector<float,1536> <- float32 array", "ser(v, 4)",
                      {"ser": vt.serialize, "v": array}, 1536))
    cases.append(("W2 vector<float,1536> <- list", "ser(v, 4)", {"ser": vt.serialize, "v": vector}, 1536))
    for key in wl.ROWS_SPECS:
        rc = wl.rows_case(key)
        columns = _bench_columns(rc.columns)
        prepared = Prepared([], columns, protocol_version=wl.PROTO)
        got = decode_result(rc.prepared, wl.PROTO, prepared)
        if not isinstance(got, cqlcodec.RowsResult) or got.rows != rc.rows:
            raise AssertionError(f"W5 ({key}) rows differ")
        cases.append((f"W5 ({key}) {len(rc.rows)} x {len(columns)} rows, prepared",
                      "decode(body, 4, prepared)",
                      {"decode": decode_result, "body": rc.prepared, "prepared": prepared}, rc.values))
    for key in wl.BIND_SPECS:
        bc = wl.bind_case(key)
        columns = _bench_columns(bc.columns)
        prepared = Prepared(columns, (), [0], wl.PROTO, wl.QUERY_ID)
        if prepared.bind(bc.values).values != bc.expected:
            raise AssertionError(f"W6 ({key}) bound values differ")
        cases.append((f"W6 ({key}) bind {len(columns)} values", "bind(values)",
                      {"bind": prepared.bind, "values": bc.values}, len(columns)))
    return cases


def cmd_bench(args: argparse.Namespace) -> int:
    if args.min_time <= 0 or args.repeat < 1:
        raise UsageError("--min-time must be > 0 and --repeat >= 1")
    build = "compiled" if cqlcodec.COMPILED else "interpreted"
    print(f"cqlcodec {cqlcodec.__version__}, {build} build (COMPILED={cqlcodec.COMPILED}): "
          f"thread CPU time per operation, GC off, best of {args.repeat}")
    print(f"{'workload':<44} {'µs/op':>10} {'ns/value':>9}")
    for label, stmt, env, values in bench_cases():
        if args.filter and args.filter.lower() not in label.lower():
            continue
        timer = timeit.Timer(stmt, globals=env, timer=clock.thread_time)
        number = 1
        while True:
            elapsed = timer.timeit(number)
            if elapsed >= args.min_time:
                break
            number = number * 10 if elapsed < args.min_time / 50 else int(number * args.min_time / elapsed) + 1
        best = min(timer.repeat(args.repeat, number)) / number
        print(f"{label:<44} {best * 1e6:>10.2f} {best * 1e9 / values:>9.1f}")
    return 0


# --------------------------------------------------------------------------- argument parsing


def add_commands(sub: Any) -> None:
    """Adds encode, decode, decode-result, bench and demo to the tool's subparsers."""
    def protocol(p: argparse.ArgumentParser) -> None:
        p.add_argument("--protocol", type=int, default=4, metavar="N",
                       help="native protocol version, 3 to 5 (default 4)")

    p = sub.add_parser("encode", help="encode VALUE as TYPE, print the content bytes as hex",
                       description="Print the content bytes (no length prefix) of VALUE as CQL TYPE, in hex.",
                       epilog=VALUE_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("type", metavar="TYPE", help="a CQL type, e.g. int, list<text>, vector<float, 3>")
    p.add_argument("value", metavar="VALUE", help="a Python literal (see below)")
    protocol(p)
    p.set_defaults(run=cmd_encode)

    p = sub.add_parser("decode", help="decode hex content bytes as TYPE, print the Python value",
                       description="Decode the content bytes HEX (no length prefix) as CQL TYPE.")
    p.add_argument("type", metavar="TYPE", help="a CQL type, e.g. int, map<text, int>")
    p.add_argument("hex", metavar="HEX", help="the bytes in hex ('0x' prefix and spaces allowed)")
    p.add_argument("--tz-aware", action="store_true", help="timestamps as aware UTC datetimes")
    p.add_argument("--numpy", action="store_true", help="numeric vectors as numpy arrays")
    protocol(p)
    p.set_defaults(run=cmd_decode)

    p = sub.add_parser("decode-result", help="decode a RESULT message body (hex, file or '-')",
                       description="Decode a RESULT body (starting with its [int] kind): rows, prepared, "
                                   "set_keyspace, schema_change or void. Rows sent with the no-metadata "
                                   "flag cannot be decoded without their prepared statement.")
    p.add_argument("body", metavar="HEX|FILE", help="the body as hex, a file (binary or hex text), or '-' for stdin")
    p.add_argument("--tz-aware", action="store_true", help="timestamps as aware UTC datetimes")
    p.add_argument("--numpy", action="store_true", help="numeric vector columns as numpy arrays")
    p.add_argument("--max-rows", type=int, default=50, metavar="N", help="print at most N rows (default 50)")
    protocol(p)
    p.set_defaults(run=cmd_decode_result)

    p = sub.add_parser("bench", help="quick benchmark of the active build (W1/W2, W5, W6)",
                       description="Time vector (de)serialization, RESULT rows decoding and bind on the "
                                   "workloads of the benchmark suite, in this process, with the active "
                                   "build. For the side-by-side comparison with the drivers run "
                                   "'nox -s bench' from a source checkout.")
    p.add_argument("--min-time", type=float, default=0.05, metavar="S",
                   help="seconds of CPU time per repeat (default 0.05)")
    p.add_argument("--repeat", type=int, default=3, metavar="N", help="repeats, best is shown (default 3)")
    p.add_argument("--filter", default="", metavar="TEXT", help="only workloads whose label contains TEXT")
    p.set_defaults(run=cmd_bench)

    p = sub.add_parser("demo", help="round-trip a few values and show which build is active",
                       description="Encode and decode a few values of several types; prints COMPILED=True/False.")
    protocol(p)
    p.set_defaults(run=cmd_demo)
