"""The command-line tool ``python -m cqlcodec``: commands, VALUE literals, errors.

End-to-end cases run the tool in a subprocess with the test interpreter (from a
temporary directory, so the installed build is the one imported); the VALUE parser
and the many-input properties run in-process through ``main(argv)``.
"""

from __future__ import annotations

import contextlib
import io
import os
import struct
import subprocess
import sys
import uuid
from datetime import date, datetime, timezone
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import cqlcodec
from cqlcodec.__main__ import UsageError, main, parse_hex, parse_value


def run_cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.pop("CQLCODEC_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "cqlcodec", *args], capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=120)


def assert_usage_error(proc: subprocess.CompletedProcess[str], fragment: str) -> None:
    assert proc.returncode == 2, proc
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert "error:" in lines[0] and fragment in lines[0], lines[0]
    assert "Traceback" not in proc.stderr


# --------------------------------------------------------------------------- end to end


def test_demo_reports_the_active_build(tmp_path: Path) -> None:
    proc = run_cli(tmp_path, "demo")
    assert proc.returncode == 0, proc.stderr
    assert f"COMPILED={cqlcodec.COMPILED}" in proc.stdout
    assert "all round trips exact" in proc.stdout


def test_version(tmp_path: Path) -> None:
    proc = run_cli(tmp_path, "--version")
    assert proc.returncode == 0
    assert proc.stdout.strip().startswith(f"cqlcodec {cqlcodec.__version__} (")
    assert f"COMPILED={cqlcodec.COMPILED}" in proc.stdout


@pytest.mark.parametrize("command", [[], ["encode"], ["decode"], ["decode-result"], ["bench"], ["demo"]])
def test_help_everywhere(tmp_path: Path, command: list[str]) -> None:
    proc = run_cli(tmp_path, *command, "--help")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: cqlcodec")


def test_encode_and_decode_round_trip(tmp_path: Path) -> None:
    proc = run_cli(tmp_path, "encode", "map<text, frozen<list<int>>>", "{'a': [1, -2]}")
    assert proc.returncode == 0, proc.stderr
    expected = (struct.pack(">i", 1) + struct.pack(">i", 1) + b"a"
                + struct.pack(">i", 20) + struct.pack(">iiiii", 2, 4, 1, 4, -2))
    assert proc.stdout.strip() == expected.hex()
    back = run_cli(tmp_path, "decode", "map<text, frozen<list<int>>>", proc.stdout.strip())
    assert back.returncode == 0, back.stderr
    assert back.stdout.strip() == "{'a': [1, -2]}"


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["encode", "list<", "1"], "list<"),
        (["encode", "int", "2**40"], "int"),
        (["encode", "int", "'seven'"], "int"),
        (["encode", "int", "__import__('os')"], "not allowed"),
        (["encode", "int", "[1,"], "cannot parse"),
        (["decode", "int", "0001"], "offset"),
        (["decode", "int", "xyz"], "hexadecimal"),
        (["decode", "int", "00000001", "--protocol", "9"], "protocol"),
        (["frobnicate"], "invalid choice"),
        (["encode", "int"], "required"),
        ([], "required"),
    ],
)
def test_bad_input_is_one_line_and_status_2(tmp_path: Path, args: list[str], fragment: str) -> None:
    assert_usage_error(run_cli(tmp_path, *args), fragment)


# --------------------------------------------------------------------------- in process


def run_main(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize(
    ("cql", "value", "expected"),
    [
        ("int", "-1", "ffffffff"),
        ("bigint", "2**62", "4000000000000000"),
        ("double", "-0.0", "8000000000000000"),
        ("text", "hello", b"hello".hex()),
        ("text", "'quoted'", b"quoted".hex()),
        ("text", "42", b"42".hex()),
        ("ascii", "[1]", b"[1]".hex()),
        ("blob", "b'\\x00\\xff'", "00ff"),
        ("blob", "0xCAFE", "cafe"),
        ("boolean", "False", "00"),
        ("uuid", "UUID('3f2504e0-4f89-11d3-9a0c-0305e82c3301')", "3f2504e04f8911d39a0c0305e82c3301"),
        ("decimal", "Decimal('-1.50')", "00000002ff6a"),
        ("timestamp", "datetime(1970, 1, 1, 0, 0, 1, tzinfo=UTC)", "00000000000003e8"),
        ("date", "date(1970, 1, 2)", "80000001"),
        ("set<int>", "set()", "00000000"),
        ("tuple<int, text>", "(1, None)", "0000000400000001ffffffff"),
        ("vector<float, 2>", "[1.0, -2.0]", "3f800000c0000000"),
    ],
)
def test_encode_values(capsys: pytest.CaptureFixture[str], cql: str, value: str, expected: str) -> None:
    status, out, err = run_main(capsys, "encode", cql, value)
    assert (status, err) == (0, "")
    assert out.strip() == expected


def test_parse_value_constructors() -> None:
    assert parse_value("UUID('3f2504e0-4f89-11d3-9a0c-0305e82c3301')") == uuid.UUID(
        "3f2504e0-4f89-11d3-9a0c-0305e82c3301")
    assert parse_value("[Decimal('1.5'), -2, +3.5]") == [Decimal("1.5"), -2, 3.5]
    assert parse_value("datetime(2024, 5, 17, tzinfo=UTC)") == datetime(2024, 5, 17, tzinfo=timezone.utc)
    assert parse_value("{date(2024, 5, 17): frozenset({1})}") == {date(2024, 5, 17): frozenset({1})}
    assert parse_value("Duration(1, 2, 3)") == cqlcodec.Duration(1, 2, 3)
    assert parse_value("2**63 - 1") == 2**63 - 1
    assert parse_value("float('nan')") != parse_value("float('nan')")


@pytest.mark.parametrize(
    "text",
    ["open('x')", "x", "[1] * 3", "{**{}}", "UUID(*['a'])", "lambda: 1", "1 if 1 else 2",
     "{[1]: 2}", "2 ** 10**9", "-'a'", "UUID('nope')"],
)
def test_parse_value_refuses(text: str) -> None:
    with pytest.raises(UsageError):
        parse_value(text)


def test_parse_hex_separators() -> None:
    assert parse_hex("0x00 01:02_03") == b"\x00\x01\x02\x03"
    with pytest.raises(UsageError):
        parse_hex("0x0")


@given(st.integers(min_value=-(2**31), max_value=2**31 - 1))
def test_encode_int_property(value: int) -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["encode", "int", str(value)]) == 0
    assert out.getvalue().strip() == struct.pack(">i", value).hex()


@given(st.text())
def test_encode_text_property(value: str) -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = main(["encode", "text", repr(value)])
    assert status == 0
    assert out.getvalue().strip() == value.encode("utf-8").hex()


@given(st.lists(st.integers(min_value=-(2**63), max_value=2**63 - 1), max_size=8))
def test_decode_inverts_encode_property(values: list[int]) -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["encode", "list<bigint>", repr(values)]) == 0
    hex_text = out.getvalue().strip()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["decode", "list<bigint>", hex_text]) == 0
    assert out.getvalue().strip() == repr(values)


# --------------------------------------------------------------------------- decode-result


def _string(text: str) -> bytes:
    return struct.pack(">H", len(text)) + text.encode()


ROWS_BODY = (
    struct.pack(">iii", 2, 0x0001, 2) + _string("ks") + _string("t")
    + _string("id") + struct.pack(">H", 0x0009) + _string("name") + struct.pack(">H", 0x000D)
    + struct.pack(">i", 2)
    + struct.pack(">ii", 4, 7) + struct.pack(">i", 2) + b"hi"
    + struct.pack(">ii", 4, -1) + struct.pack(">i", -1)
)


def test_decode_result_rows_from_hex(tmp_path: Path) -> None:
    proc = run_cli(tmp_path, "decode-result", ROWS_BODY.hex())
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "Rows: 2 columns, 2 rows, has_more_pages=False"
    assert "  id  int  (ks.t)" in lines and "  name  text  (ks.t)" in lines
    assert lines[-2:] == ["  (7, 'hi')", "  (-1, None)"]


@pytest.mark.parametrize("as_hex", [False, True])
def test_decode_result_from_file(tmp_path: Path, as_hex: bool) -> None:
    path = tmp_path / "body.bin"
    if as_hex:
        path.write_text(ROWS_BODY.hex() + "\n")
    else:
        path.write_bytes(ROWS_BODY)
    proc = run_cli(tmp_path, "decode-result", str(path), "--max-rows", "1")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-2:] == ["  (7, 'hi')", "  ... 1 more rows (--max-rows)"]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (struct.pack(">i", 1), "Void"),
        (struct.pack(">i", 3) + _string("app"), "Set_keyspace: app"),
        (struct.pack(">i", 5) + _string("CREATED") + _string("TABLE") + _string("ks") + _string("t"),
         "Schema_change: CREATED TABLE ks.t"),
    ],
)
def test_decode_result_other_kinds(capsys: pytest.CaptureFixture[str], body: bytes, expected: str) -> None:
    status, out, err = run_main(capsys, "decode-result", body.hex())
    assert (status, err) == (0, "")
    assert out.strip() == expected


def test_decode_result_prepared(capsys: pytest.CaptureFixture[str]) -> None:
    body = (struct.pack(">i", 4) + struct.pack(">H", 2) + b"\xab\xcd"
            + struct.pack(">iiiH", 0x0001, 1, 1, 0) + _string("ks") + _string("t")
            + _string("id") + struct.pack(">H", 0x0009)
            + struct.pack(">ii", 0x0004, 0))
    status, out, err = run_main(capsys, "decode-result", body.hex())
    assert (status, err) == (0, "")
    assert out.splitlines()[:3] == ["Prepared: query_id=abcd, pk_indexes=[0]", "bind columns:",
                                    "  id  int  (ks.t)"]


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        (ROWS_BODY[:-3].hex(), "offset"),
        (struct.pack(">iiii", 2, 0x0004, 1, 0).hex(), "no-metadata"),
        ("", "kind"),
        ("nonexistent-file.bin", "cannot read"),
    ],
)
def test_decode_result_errors(tmp_path: Path, body: str, fragment: str) -> None:
    assert_usage_error(run_cli(tmp_path, "decode-result", body), fragment)


# --------------------------------------------------------------------------- bench


def test_bench_runs_every_workload_of_the_active_build(tmp_path: Path) -> None:
    proc = run_cli(tmp_path, "bench", "--min-time", "0.0005", "--repeat", "1")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert f"COMPILED={cqlcodec.COMPILED}" in lines[0]
    labels = [line.split("  ")[0] for line in lines[2:]]
    for expected in ("W1 vector<float,1536> -> list", "W2 vector<float,1536> <- list",
                     "W5 (a) 1 x 10 rows, prepared", "W5 (e) 1000 x 5 rows, prepared",
                     "W6 (b) bind 4 values"):
        assert expected in labels
    for line in lines[2:]:
        assert float(line.split()[-2]) > 0


def test_bench_refuses_bad_options(tmp_path: Path) -> None:
    assert_usage_error(run_cli(tmp_path, "bench", "--repeat", "0"), "--repeat")
