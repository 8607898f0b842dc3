"""The table commands' argument handling and exit statuses, without a server: usage
errors, missing files, an unreachable host, a missing password, missing pyarrow; the
contact-point parsing, the progress line and the unload manifest."""

from __future__ import annotations

import argparse
import io
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

import cqlcodec
from cqlcodec.cli import exits
from cqlcodec.cli.connect import ConnectError, contact_points, password
from cqlcodec.cli.main import build_parser
from cqlcodec.cli.progress import Progress, summary
from cqlcodec.cli.unload_files import Manifest, ManifestError, remove_temporaries, split_file_name

# the directory holding the cqlcodec in use (the source tree or site-packages)
ROOT = Path(cqlcodec.__file__).resolve().parent.parent


def run(tmp_path: Path, *args: str, env: dict[str, str] | None = None,
        stdin: int | None = subprocess.DEVNULL) -> subprocess.CompletedProcess[str]:
    environ = dict(os.environ)
    environ.pop("CQLCODEC_DEBUG", None)
    environ.pop("CQLCODEC_PASSWORD", None)
    environ.update(env or {})
    environ["PYTHONPATH"] = os.pathsep.join(
        [p for p in (environ.pop("CQLCODEC_TEST_PATH", str(ROOT)),
                     environ.get("PYTHONPATH", "")) if p])
    return subprocess.run([sys.executable, "-m", "cqlcodec", *args], capture_output=True,
                          text=True, cwd=tmp_path, env=environ, timeout=120, stdin=stdin)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("args, fragment", [
    (["unload", "ks.t"], "-o/--output"),
    (["unload", "ks.t", "-o", "d", "--format", "xml"], "invalid choice"),
    (["unload", "ks.t", "-o", "d", "--splits", "0"], "at least 1"),
    (["load", "ks.t"], "FILE_OR_DIR"),
    (["load", "ks.t", "f.csv", "--concurrency", "x"], "not a number"),
    (["count"], "KEYSPACE.TABLE"),
    (["count", "ks.t", "--consistency", "SOME"], "invalid choice"),
    (["count", "ks.t", "--protocol-version", "9"], "invalid choice"),
    (["count", "ks.t", "--retry-timeout", "-1"], "at least 0"),
    (["unload", "ks.t", "-o", "d", "--retry-timeout", "soon"], "not a number"),
])
def test_usage_errors_exit_2(args: list[str], fragment: str) -> None:
    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args(args)
    assert exit_.value.code == exits.USAGE
    assert fragment  # the parser's own message, checked end to end below


def test_usage_error_message_end_to_end(tmp_path: Path) -> None:
    proc = run(tmp_path, "unload", "ks.t", "--format", "xml", "-o", "d")
    assert proc.returncode == 2
    assert "invalid choice" in proc.stderr and "Traceback" not in proc.stderr


def test_options_are_parsed() -> None:
    args = build_parser().parse_args([
        "unload", "ks.t", "-o", "out", "--format", "csv", "--columns", "a,b", "--where", "a > 1",
        "--resume", "--host", "10.0.0.1,10.0.0.2", "--host", "10.0.0.3:9043", "--port", "9999",
        "--username", "me", "--ssl", "--consistency", "quorum", "--protocol-version", "4",
        "--splits", "32", "--concurrency", "3", "--fetch-size", "100", "--quiet"])
    assert (args.format, args.columns, args.where, args.resume) == ("csv", "a,b", "a > 1", True)
    assert args.consistency == "QUORUM" and args.protocol_version == 4 and args.ssl
    assert (args.splits, args.concurrency, args.fetch_size, args.quiet) == (32, 3, 100, True)
    assert contact_points(args) == [("10.0.0.1", 9999), ("10.0.0.2", 9999), ("10.0.0.3", 9043)]
    assert (args.retry_timeout, args.retries) == (120.0, None)  # time-bounded, no count bound


@pytest.mark.parametrize("command", [["unload", "ks.t", "-o", "d"], ["load", "ks.t", "f.csv"],
                                     ["count", "ks.t"]])
def test_retry_options_of_every_table_command(command: list[str]) -> None:
    args = build_parser().parse_args([*command, "--retry-timeout", "2.5", "--retries", "7"])
    assert (args.retry_timeout, args.retries) == (2.5, 7)
    assert contact_points(build_parser().parse_args(["count", "t"])) == [("127.0.0.1", 9042)]
    with pytest.raises(ConnectError) as err:
        contact_points(argparse.Namespace(host=["h:x"], port=1))
    assert err.value.status == exits.USAGE


def test_password_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SECRET", "s3cret")
    args = argparse.Namespace(username="me", password_env="MY_SECRET")
    assert password(args) == "s3cret"
    assert password(argparse.Namespace(username=None, password_env="X")) is None


def test_missing_password_without_a_terminal_is_a_usage_error(tmp_path: Path) -> None:
    proc = run(tmp_path, "count", "ks.t", "--username", "me", "--port", str(closed_port()))
    assert proc.returncode == exits.USAGE, proc.stderr
    assert "CQLCODEC_PASSWORD" in proc.stderr


def test_missing_file_is_bad_input_before_connecting(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")  # without it the command stops earlier, saying so
    proc = run(tmp_path, "load", "ks.t", "nothing.parquet", "--port", str(closed_port()))
    assert proc.returncode == exits.BAD_INPUT, proc.stderr
    assert "nothing.parquet: no such file" in proc.stderr
    (tmp_path / "notes.txt").write_text("x")
    proc = run(tmp_path, "load", "ks.t", "notes.txt")
    assert proc.returncode == exits.BAD_INPUT and "unknown file format" in proc.stderr


def test_unreachable_host_exits_4(tmp_path: Path) -> None:
    proc = run(tmp_path, "count", "ks.t", "--port", str(closed_port()), "--timeout", "5")
    assert proc.returncode == exits.CONNECTION, proc.stderr
    assert "cannot connect to 127.0.0.1" in proc.stderr
    assert len(proc.stderr.splitlines()) == 1


def test_without_pyarrow_the_command_says_what_to_install(tmp_path: Path) -> None:
    blocker = tmp_path / "blocked"
    (blocker / "pyarrow").mkdir(parents=True)
    (blocker / "pyarrow" / "__init__.py").write_text("raise ImportError('pyarrow is blocked')\n")
    env = {"CQLCODEC_TEST_PATH": os.pathsep.join([str(blocker), str(ROOT)])}
    proc = run(tmp_path, "unload", "ks.t", "-o", "out", "--port", str(closed_port()), env=env)
    assert proc.returncode == exits.MISSING_DEPENDENCY, proc.stderr
    assert "pip install 'cqlcodec[arrow]'" in proc.stderr


@pytest.mark.parametrize("variable, default", [("OPENBLAS_NUM_THREADS", "1"),
                                               ("ARROW_DEFAULT_MEMORY_POOL", "system")])
@pytest.mark.parametrize("user_setting", [None, "mine"])
def test_settings_pyarrow_imports_under_unless_the_user_said(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variable: str, default: str,
        user_setting: str | None) -> None:
    """numpy, imported with pyarrow, would start OpenBLAS's spinning thread pool that no
    command uses, and Arrow's mimalloc would keep each thread's freed memory; a stand-in
    pyarrow reports the setting it was imported under."""
    blocker = tmp_path / "blocked"
    (blocker / "pyarrow").mkdir(parents=True)
    (blocker / "pyarrow" / "__init__.py").write_text(
        "import os, sys\n"
        f"sys.stderr.write('seen ' + os.environ.get({variable!r}, '-') + '\\n')\n"
        "raise ImportError('pyarrow is blocked')\n")
    monkeypatch.delenv(variable, raising=False)
    env = {"CQLCODEC_TEST_PATH": os.pathsep.join([str(blocker), str(ROOT)])}
    if user_setting is not None:
        env[variable] = user_setting
    proc = run(tmp_path, "unload", "ks.t", "-o", "out", "--port", str(closed_port()), env=env)
    assert proc.returncode == exits.MISSING_DEPENDENCY, proc.stderr
    assert f"seen {user_setting or default}\n" in proc.stderr


def test_help_lists_the_exit_statuses(tmp_path: Path) -> None:
    proc = run(tmp_path, "unload", "--help")
    assert proc.returncode == 0
    assert "exit statuses" in proc.stdout and "--resume" in proc.stdout


def test_progress_line_and_summary() -> None:
    stream = io.StringIO()
    p = Progress("unloaded", "splits", 4, 1000, enabled=True, stream=stream)
    p.add_rows(250)
    p.unit_done()
    line = p.line()
    assert "unloaded 250 rows" in line and "splits 1/4" in line and "ETA" in line
    assert "\r" in stream.getvalue()
    p.finish()
    quiet = io.StringIO()
    q = Progress("loaded", "files", 1, 0, enabled=False, stream=quiet)
    q.add_rows(5)
    q.unit_done()
    assert quiet.getvalue() == ""
    assert summary("loaded", 1000, 2.0).startswith("loaded 1,000 rows in 2.00 s (500 rows/s)")
    waiting = Progress("unloaded", "splits", 4, 0, enabled=False)
    assert "waiting" not in waiting.line()
    waiting.status = lambda: "waiting for 127.0.0.1 (down 12 s)"
    assert waiting.line().endswith(" | waiting for 127.0.0.1 (down 12 s)")


def test_manifest_round_trip_and_mismatch(tmp_path: Path) -> None:
    header = {"table": "ks.t", "columns": None, "where": None, "format": "parquet"}
    m = Manifest(str(tmp_path), header, [{"start": -5, "end": 5}], {})
    m.save()
    m.finished(0, split_file_name(0, "parquet"), 7)
    again = Manifest.load(str(tmp_path))
    assert again is not None and again.done == {"0": {"file": "part-00000.parquet", "rows": 7}}
    assert again.rows_done() == 7
    again.check_matches(header)
    with pytest.raises(ManifestError, match="another unload"):
        again.check_matches(dict(header, format="csv"))
    (tmp_path / ".part-00001.parquet.tmp-1-2").write_bytes(b"partial")
    remove_temporaries(str(tmp_path))
    assert sorted(os.listdir(tmp_path)) == ["_manifest.json"]
    (tmp_path / "_manifest.json").write_text("{not json")
    with pytest.raises(ManifestError):
        Manifest.load(str(tmp_path))
    assert json.loads(json.dumps(header)) == header


def test_parquet_row_groups_are_bounded_in_bytes(tmp_path: Path) -> None:
    """A split's Parquet file gets a row group per ROW_GROUP_BYTES of Arrow data, so
    that what a split holds before writing does not grow with the table."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    from hotwire import rows_body

    from cqlcodec import parse_type
    from cqlcodec.cli.unload_files import ROW_GROUP_BYTES, write_split

    cols = [("ks", "t", "k", parse_type("int")), ("ks", "t", "v", parse_type("text"))]
    body = rows_body(cols, [[k.to_bytes(4, "big"), b"x" * 200] for k in range(4000)])
    pages = [cqlcodec.decode_columns(body, 4) for _ in range(4)]
    page_bytes = pa.record_batch(pages[0]).nbytes
    assert ROW_GROUP_BYTES / 2 < page_bytes < ROW_GROUP_BYTES  # a row group per 2 pages
    assert write_split(iter(pages), str(tmp_path), "part-00000.parquet", "parquet") == 16_000
    meta = pq.ParquetFile(tmp_path / "part-00000.parquet").metadata
    assert [meta.row_group(i).num_rows for i in range(meta.num_row_groups)] == [8000, 8000]


def test_max_errors_is_0_or_more(tmp_path: Path) -> None:
    """Issue 46, item 6: --max-errors -1 is a usage error (status 2) before connecting."""
    for value in ("-1", "x"):
        with pytest.raises(SystemExit) as exit_:
            build_parser().parse_args(["load", "ks.t", "f.csv", "--max-errors", value])
        assert exit_.value.code == exits.USAGE
    assert build_parser().parse_args(["load", "ks.t", "f.csv", "--max-errors", "0"]).max_errors == 0
    done = run(tmp_path, "load", "ks.t", "f.csv", "--max-errors", "-1")
    assert done.returncode == exits.USAGE and "must be at least 0, got -1" in done.stderr, \
        done.stderr


def test_the_bad_rows_file_of_a_load_without_bad_rows(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 46, item 5: a new file in the current directory named after the table,
    CSV for CSV sources, never one that exists."""
    from cqlcodec.cli.table_commands import _bad_rows_name
    from cqlcodec.driver.sources import SourcePart

    monkeypatch.chdir(tmp_path)
    csv_part, jsonl_part = SourcePart("a.csv", "csv"), SourcePart("a.jsonl", "jsonl")
    first = _bad_rows_name('ks."Odd T"', [csv_part])
    assert first.startswith("cqlcodec-bad-rows-ks._Odd_T_-") and first.endswith(".csv")
    Path(first).write_text("taken")
    second = _bad_rows_name('ks."Odd T"', [csv_part])
    assert second != first and second.endswith("-2.csv")
    assert _bad_rows_name("ks.t", [csv_part, jsonl_part]).endswith(".jsonl")


# --------------------------------------------------------------------------- copy

def test_copy_target_options_default_to_the_sources() -> None:
    from cqlcodec.cli.connect import target_args

    parser = build_parser()
    same = parser.parse_args(["copy", "a.t", "b.t", "--host", "10.0.0.1", "-u", "me"])
    assert target_args(same) is None  # no --to- option: the source's session serves both
    args = parser.parse_args(["copy", "a.t", "b.t", "--host", "10.0.0.1", "--port", "9142",
                              "-u", "me", "--ssl", "--to-host", "10.1.0.1", "--to-port", "9043",
                              "--to-username", "other", "--to-password-env", "OTHER_PW",
                              "--to-consistency", "quorum", "--to-timeout", "5"])
    target = target_args(args)
    assert target is not None
    assert (target.host, target.port, target.username, target.password_env) == \
        (["10.1.0.1"], 9043, "other", "OTHER_PW")
    assert (target.ssl, target.consistency, target.timeout) == (True, "QUORUM", 5.0)
    assert contact_points(target) == [("10.1.0.1", 9043)]
    assert (args.host, args.port, args.username) == (["10.0.0.1"], 9142, "me")  # unchanged
    only_ssl = target_args(parser.parse_args(["copy", "a.t", "b.t", "--to-ssl"]))
    assert only_ssl is not None and only_ssl.ssl and only_ssl.port == 9042


def test_copy_usage_errors(tmp_path: Path) -> None:
    done = run(tmp_path, "copy", "a.t", "b.t", "--resume")
    assert done.returncode == exits.USAGE and "--state" in done.stderr
    done = run(tmp_path, "copy", "a.t", "b.t", "--to-password", "secret-word-44")
    assert done.returncode == exits.USAGE and "secret-word-44" not in done.stderr
    done = run(tmp_path, "copy", "a.t", "b.t", "--no-batch", "--batch-bytes", "100")
    assert done.returncode == exits.USAGE
    done = run(tmp_path, "copy", "a.t", "b.t", "--host", "127.0.0.1", "--port", "1",
               "--timeout", "2")
    assert done.returncode == exits.CONNECTION, done.stderr
