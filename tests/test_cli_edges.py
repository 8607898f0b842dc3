"""The command line's edges without a server (issue 46): no abbreviated options, a
refused ``--password``, flags that mean nothing together, stdin without a format; CQL
names as users write them; the row estimate of the progress line."""

from __future__ import annotations

import argparse
import io
from pathlib import Path

import pytest
from test_cli_tables import closed_port, run

from cqlcodec.cli import exits
from cqlcodec.cli.main import build_parser
from cqlcodec.cli.progress import Progress
from cqlcodec.driver.estimates import SAMPLE_ROWS, RowEstimate, partitions_in
from cqlcodec.types.names import (
    CqlNameError,
    column_of,
    cql_name,
    cql_table_name,
    parse_names,
    quote_name,
    split_table_name,
)

MARKER = "S3cretPW-marker-46"

# the least a subcommand needs to parse (its required positionals and options)
BASE_ARGS = {
    "encode": ["encode", "int", "1"],
    "decode": ["decode", "int", "00000001"],
    "decode-result": ["decode-result", "00"],
    "bench": ["bench"],
    "demo": ["demo"],
    "unload": ["unload", "ks.t", "-o", "d"],
    "load": ["load", "ks.t", "f.csv"],
    "count": ["count", "ks.t"],
    "copy": ["copy", "ks.t", "ks.t2"],
    "diff": ["diff", "ks.t", "ks.u"],
}


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise AssertionError("no subcommands")


def _long_options(parser: argparse.ArgumentParser) -> dict[str, int | str | None]:
    """Every long option of ``parser`` and how many values it takes."""
    return {o: a.nargs for a in parser._actions for o in a.option_strings if o.startswith("--")}


def test_no_prefix_of_a_long_option_is_accepted() -> None:
    parser = build_parser()
    subs = _subparsers(parser)
    assert set(subs) == set(BASE_ARGS), "a new subcommand: add it to BASE_ARGS"
    tried = 0
    for name, sub in subs.items():
        options = _long_options(sub)
        for option, nargs in options.items():
            for end in range(3, len(option)):
                prefix = option[:end]
                if prefix in options:
                    continue
                word = prefix if nargs == 0 else f"{prefix}=x"
                _, extra = parser.parse_known_args([*BASE_ARGS[name], word])
                assert extra == [word], (name, option, word)
                tried += 1
    top = _long_options(parser)
    for option in top:
        for end in range(3, len(option)):
            _, extra = parser.parse_known_args([option[:end], "demo"])
            assert extra == [option[:end]]
            tried += 1
    assert tried > 300


@pytest.mark.parametrize("words", [
    ["--password", MARKER], [f"--password={MARKER}"], ["-p", MARKER], [f"-p{MARKER}"],
    ["--username", "u", "--password", MARKER], ["--pass", MARKER], [f"--passw={MARKER}"],
])
@pytest.mark.parametrize("command", [["count", "ks.t"], ["unload", "ks.t", "-o", "d"],
                                     ["load", "ks.t", "f.csv"], ["diff", "ks.t", "ks.u"]])
def test_a_password_option_is_refused_and_never_shown(tmp_path: Path, command: list[str],
                                                      words: list[str]) -> None:
    proc = run(tmp_path, *command, *words, "--port", str(closed_port()))
    assert proc.returncode == exits.USAGE
    assert MARKER not in proc.stdout + proc.stderr
    if words[0] in ("--password", "-p") or words[0].startswith(("--password=", "-pS")):
        assert "--password-env" in proc.stderr and "asked for it" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("args, fragment", [
    (["count", "ks.t", "--json"], "--json"),
    (["count", "ks.t", "--top", "3"], "--top"),
    (["count", "ks.t", "--by", "host", "--top", "3"], "--top"),
    (["count", "ks.t", "--by", "partition", "--where", "a = 1"], "--where"),
    (["unload", "ks.t", "-o", "-", "--format", "csv", "--resume"], "--resume"),
    (["unload", "ks.t", "-o", "d", "--format", "csv", "--parquet-compression", "zstd"],
     "--parquet-compression"),
    (["load", "ks.t", "-"], "--format"),
    (["load", "ks.t", "f.csv", "--format", "csv"], "--format"),
    (["load", "ks.t", "-", "f.csv", "--format", "csv"], "alone"),
    (["load", "ks.t", "f.csv", "--no-batch", "--batch-bytes", "9000"], "--no-batch"),
    (["unload", "ks.t", "-o", "d", "--columns", '"a'], "unclosed quote"),
    (["unload", "ks.t", "-o", "d", "--columns", '"a"b'], "after a closing quote"),
])
def test_flags_that_mean_nothing_together_exit_2_before_connecting(
        tmp_path: Path, args: list[str], fragment: str) -> None:
    # the port is closed: reaching the connection would exit 4
    proc = run(tmp_path, *args, "--port", str(closed_port()))
    assert proc.returncode == exits.USAGE, proc.stderr
    assert fragment in proc.stderr and "Traceback" not in proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_names_follow_cqls_rule() -> None:
    assert split_table_name('"Odd_KS"."SrcTable"') == ("Odd_KS", "SrcTable")
    assert split_table_name("Odd_KS.SrcTable") == ("odd_ks", "srctable")
    assert split_table_name(' "a.b" . "x ""y"" z" ') == ("a.b", 'x "y" z')
    assert split_table_name('"T"', "ks") == ("ks", "T")
    for bad in ['"ks".', '"ks.t', 'ks."t"x', 'k"s.t', '"".t', "a.b.c"]:
        with pytest.raises(CqlNameError):
            split_table_name(bad)
    assert parse_names('"a b",Key, "q""t" ,ünï,,"x,y"') == [
        ("a b", True), ("Key", False), ('q"t', True), ("ünï", False), ("x,y", True)]
    known = ["Key", "key", "a b", "select", 'q"t', "ünï"]
    assert column_of("Key", known) == "key"          # unquoted folds
    assert column_of('"Key"', known) == "Key"        # quoted keeps its case
    assert column_of("KEY", ["Key"]) is None
    assert column_of("Key", ["Key"]) == "Key"        # the metadata's spelling still works
    assert column_of("a b", known) == "a b" and column_of('"a b"', known) == "a b"
    assert column_of('"q""t"', known) == 'q"t' and column_of('q"t', known) == 'q"t'
    assert column_of("SELECT", known) == "select" and column_of("ÜNÏ", known) == "ünï"
    assert [cql_name(n) for n in known] == ['"Key"', "key", '"a b"', '"select"', '"q""t"',
                                            '"ünï"']
    assert cql_table_name("Odd_KS", "t1") == '"Odd_KS".t1'
    assert quote_name('a"b') == '"a""b"'


def test_the_row_estimate_scales_partitions_by_rows_per_partition() -> None:
    assert partitions_in([[1, 1, 1, 2, 2, 3]]) == 3
    assert partitions_in([[1, 1, 1, 1], ["a", "a", "b", "b"]]) == 2
    assert partitions_in([[]]) == 0
    plain = RowEstimate(5000, clustered=False)
    assert plain.rows == 5000 and not plain.sampling
    clustered = RowEstimate(5000, clustered=True)

    def rows() -> int | None:
        return clustered.rows

    assert rows() is None                             # not known yet: no time left shown
    clustered.split_done(480, 50)
    assert rows() == 48_000
    clustered.page(5000, 500)                         # pages win over finished splits
    assert rows() == 50_000
    sampled = 5000
    while clustered.sampling:
        clustered.page(5000, 5000)
        sampled += 5000
    assert sampled >= SAMPLE_ROWS
    before = rows()
    clustered.page(5000, 1)                           # no longer sampling: no change
    assert rows() == before


def test_the_progress_line_says_when_the_estimate_is_not_known() -> None:
    p = Progress("unloaded", "splits", 16, 0, enabled=True, stream=io.StringIO())
    estimate = RowEstimate(5000, clustered=True)
    p.estimate = lambda: estimate.rows
    p.add_rows(500)
    assert "not known yet" in p.line() and "ETA 0:00" not in p.line()
    estimate.page(500, 50)
    line = p.line()
    assert "~50.0k rows (estimated)" in line and "ETA" in line


def test_the_default_install_has_the_fast_crc_where_a_wheel_exists(tmp_path: Path) -> None:
    tomllib = pytest.importorskip("tomllib")
    markers = pytest.importorskip("packaging.markers")
    requirements = pytest.importorskip("packaging.requirements")
    project = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text())
    found = [requirements.Requirement(d) for d in project["project"]["dependencies"]]
    (crc,) = [r for r in found if r.name == "zlib-ng"]
    assert crc.marker is not None
    base = markers.default_environment()

    def wanted(**env: str) -> bool:
        return bool(crc.marker.evaluate({**base, **env}))

    cpython = {"platform_python_implementation": "CPython"}
    for machine in ("x86_64", "aarch64", "arm64", "AMD64", "ARM64"):
        for version in ("3.10", "3.12", "3.14"):
            assert wanted(**cpython, platform_machine=machine, python_version=version)
    for machine in ("i686", "ppc64le", "s390x", "armv7l"):  # zlib-ng has no wheel there
        assert not wanted(**cpython, platform_machine=machine, python_version="3.12")
    assert not wanted(platform_python_implementation="PyPy", platform_machine="x86_64",
                      python_version="3.10")
    assert not wanted(**cpython, platform_machine="x86_64", python_version="3.15")
    # the version line says which CRC32 this process uses
    from cqlcodec.cli.main import version_line
    from cqlcodec.connection.checksums import crc32_provider

    assert version_line().endswith(f"v5 CRC32: {crc32_provider()})")
    proc = run(tmp_path, "--version")
    assert proc.returncode == 0 and f"v5 CRC32: {crc32_provider()}" in proc.stdout


def test_help_and_docs_name_json_lines_batch_warnings_and_ttl_nulls(tmp_path: Path) -> None:
    proc = run(tmp_path, "--help")
    lines = {line.split()[0]: line for line in proc.stdout.splitlines()
             if line.strip().startswith(("unload ", "load "))}
    assert "JSON lines" in lines["unload"] and "JSON lines" in lines["load"]
    guide = Path(__file__).parent.parent / "docs" / "guide"
    loading = (guide / "loading.md").read_text()
    assert "batch_size_warn_threshold" in loading and "Server warning: Batch for" in loading
    assert "Length must be positive" in (guide / "migrations.md").read_text()
