"""Reading CSV and JSON lines sources past the records that cannot be read
(``cqlcodec.driver.text_records`` and the tolerant ``open_source``): which records are
unreadable, the lines they are reported at, and that the rest is read whole."""

from __future__ import annotations

import csv
import io
import os
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cqlcodec.driver.sources import LoadError, SourcePart, open_source, source_parts
from cqlcodec.driver.text_records import csv_pieces, csv_records, jsonl_records

NAMES = ["k", "n", "s"]


def read_csv(data: bytes, chunk_rows: int = 100) -> tuple[list[tuple[int, list[str]]],
                                                          list[tuple[int, str]]]:
    """The good records with their lines and the unreadable ones' lines and reasons."""
    good: list[tuple[int, list[str]]] = []
    bad: list[tuple[int, str]] = []
    for group in csv_records(iter(io.BytesIO(data)), 2, NAMES, ",", chunk_rows):
        assert group.size() <= chunk_rows
        good.extend(zip(group.lines, group.records))
        bad.extend((u.line, u.reason) for u in group.unreadable)
    return good, bad


def test_csv_records_set_aside_what_cannot_be_read() -> None:
    data = (b'a,1,x\n\nb,2\nc,3,"two\nlines"\nd,4,"unclosed\ne,5,y\n'
            b'f,6,\xff\ng,7,"q"junk\nh,8,z\ni,9,"open\n')
    good, bad = read_csv(data, chunk_rows=3)
    assert good == [(2, ["a", "1", "x"]), (5, ["c", "3", "two\nlines"]), (8, ["e", "5", "y"]),
                    (11, ["h", "8", "z"])]
    assert [line for line, _ in bad] == [4, 7, 9, 10, 12]
    reasons = dict(bad)
    assert reasons[4] == "2 fields where the header has 3"
    assert "quote not closed" in reasons[7] and "reading goes on at the next line" in reasons[7]
    assert reasons[9] == "not UTF-8 text"
    assert "malformed CSV" in reasons[10] and "unexpected end of data" in reasons[12]


def test_unreadable_csv_record_keeps_its_text_and_fields() -> None:
    [group] = csv_records(iter([b"b,2\n", b"c,\xff,z\n"]), 2, NAMES, ",", 10)
    first, second = group.unreadable
    assert (first.text, first.values) == ("b,2", {"k": "b", "n": "2", "s": None})
    assert second.text == "c,\\xff,z" and second.values["s"] == "z"


def test_jsonl_records() -> None:
    lines = [b'{"a": 1}\n', b"[1]\n", b"{bad\n", b"\n", b'{"a": "\xff"}\n', b'{"a": 2}\n']
    groups = list(jsonl_records(iter(lines), 2, tolerant=True))
    assert [g.size() for g in groups] == [2, 2, 1]
    assert [line for g in groups for line in g.lines] == [1, 6]
    assert [(u.line, u.reason.split(" (")[0]) for g in groups for u in g.unreadable] == [
        (2, "no JSON object"), (3, "no JSON object"), (5, "not UTF-8 text")]
    with pytest.raises(ValueError, match="line 2 is no JSON object"):
        list(jsonl_records(iter(lines[:1] + lines[2:]), 10, tolerant=False))


def chunks_of(path: Path, tolerant: bool, chunk_rows: int = 100) -> list[Any]:
    pytest.importorskip("pyarrow")
    [part] = source_parts(str(path))
    return list(open_source(part, chunk_rows, {"k": "text", "n": "int", "s": "uuid"},
                            tolerant=tolerant))


UUID = "00000000-0000-0000-0000-000000000001"


def test_tolerant_csv_source(tmp_path: Path) -> None:
    """Values that do not convert (by Arrow or by cqlcodec) and records that cannot be
    read are set aside with their lines; the rest is read, one line per row."""
    path = tmp_path / "in.csv"
    path.write_text(f"k,n,s\na,1,{UUID}\nb,2\nc,abc,{UUID}\nd,4,nouuid\ne,5,\"open\n"
                    f"f,6,{UUID}\n")
    chunks = chunks_of(path, tolerant=True)
    lines = [line for c in chunks for line in c.lines]
    assert lines == [2, 7]
    assert [str(r["k"]) for c in chunks for r in _rows(c.data)] == ["a", "f"]
    unreadable = [u for c in chunks for u in c.unreadable]
    assert [u.line for u in unreadable] == [3, 4, 5, 6]
    assert 'column "n"' in unreadable[1].reason and "int32" in unreadable[1].reason
    assert 'column "s"' in unreadable[2].reason and unreadable[2].values["s"] == "nouuid"
    with pytest.raises(LoadError, match=r"in\.csv:3: 2 fields where the header has 3"):
        chunks_of(path, tolerant=False)


def test_tolerant_csv_source_clean_rows_from_arrow(tmp_path: Path) -> None:
    """A clean file read tolerantly: Arrow's chunks, each row one line; a value over
    two lines sends the rest of the file to the careful reader, which reads it whole."""
    path = tmp_path / "in.csv"
    rows = [f"{i},{i},{UUID}" for i in range(300)]
    path.write_text("k,n,s\n" + "\n".join(rows) + "\n")
    chunks = chunks_of(path, tolerant=True, chunk_rows=100)
    assert [line for c in chunks for line in c.lines] == list(range(2, 302))
    assert not any(c.unreadable for c in chunks)
    rows[150] = '"150\nx",150,' + UUID
    path.write_text("k,n,s\n" + "\n".join(rows) + "\n")
    chunks = chunks_of(path, tolerant=True, chunk_rows=100)
    keys = [str(r["k"]) for c in chunks for r in _rows(c.data)]
    assert keys[150] == "150\nx" and len(keys) == 300
    assert [line for c in chunks for line in c.lines][149:152] == [151, 152, 154]


def _rows(data: Any) -> list[dict[str, Any]]:
    if isinstance(data, dict):
        columns = {n: (c if isinstance(c, list) else c.to_pylist()) for n, c in data.items()}
        return [dict(zip(columns, values)) for values in zip(*columns.values())]
    return list(data.to_pylist())


def _stdin_chunks(data: bytes | Any, types: dict[str, str], chunk_rows: int,
                  tolerant: bool = False) -> list[Any]:
    """The chunks of ``data`` (bytes, or a function writing to a binary file) read as
    CSV from stdin: a real pipe, written by a thread while it is read."""
    pytest.importorskip("pyarrow")
    read_end, write_end = os.pipe()

    def feed() -> None:
        with os.fdopen(write_end, "wb") as out:
            try:
                if isinstance(data, bytes):
                    out.write(data)
                else:
                    data(out)
            except BrokenPipeError:
                pass

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    try:
        with os.fdopen(read_end, "rb") as pipe:
            part = SourcePart("stdin", "csv", pipe)
            return list(open_source(part, chunk_rows, types, tolerant=tolerant))
    finally:
        writer.join()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.text(alphabet='ab,"\n\r ', max_size=12), min_size=2, max_size=2),
                max_size=30), st.integers(1, 40))
def test_csv_pieces_end_where_records_end(records: list[list[str]], size: int) -> None:
    """Pieces of any size put together are the input, and each piece read alone gives
    whole records: all of them, in order."""
    text = io.StringIO(newline="")
    csv.writer(text).writerows(records)  # lines end in CRLF; CR or LF in a field is quoted
    data = text.getvalue().encode()
    stream = io.BytesIO(data)
    pieces = list(csv_pieces(stream.read, size))
    assert b"".join(pieces) == data
    assert all(p for p in pieces)
    back = [r for p in pieces for r in csv.reader(io.StringIO(p.decode(), newline=""))]
    assert back == records


def test_stdin_csv_records_longer_than_a_piece() -> None:
    """Through a pipe, pieces of 64 KiB (chunks of 10 rows): records of a megabyte
    (quotes, separators and line breaks inside) are read whole, as every other."""
    big = 'x,"\n' * 250_000
    cells = ["small", big, "", None, big[1:] + "end", "after"]
    text = io.StringIO(newline="")
    text.write("k,t\n")
    for k, cell in enumerate(cells):
        quoted = "" if cell is None else '"' + cell.replace('"', '""') + '"'
        text.write(f"{k},{quoted}\n")
    chunks = _stdin_chunks(text.getvalue().encode(), {"k": "int", "t": "text"}, 10)
    rows = [r for c in chunks for r in _rows(c.data)]
    assert [r["k"] for r in rows] == list(range(len(cells)))
    assert [r["t"] for r in rows] == cells


def test_stdin_csv_error_names_its_line() -> None:
    """A record Arrow refuses in a later piece of stdin: the rest is read line by line,
    and the error names the record's line (stdin had none)."""
    lines = ["k,n"] + [f"{i},{i}" for i in range(20_000)]
    lines[15_001] = '"a\nb",x'  # line 15002, over two lines; n is no int
    data = ("\n".join(lines) + "\n").encode()
    with pytest.raises(LoadError, match=r"stdin:15002: .*column \"n\""):
        _stdin_chunks(data, {"k": "text", "n": "int"}, 100)


def test_a_cell_of_80_mb_through_a_pipe() -> None:
    """A blob of 40 MB (80 MB of hex, more than Arrow's 64 MiB blocks of stdin before)
    after a row of 60 MB of text, read from a pipe to the same bytes."""
    blob = bytes(range(256)) * (40_000_000 // 256)

    def write(out: Any) -> None:
        out.write(b"k,t,b\n0,")
        out.write(b"y" * 60_000_000)
        out.write(b",0x00\n1,,0x")
        for i in range(0, len(blob), 1 << 22):
            out.write(blob[i:i + (1 << 22)].hex().encode())
        out.write(b'\n2,"",0x\n')

    chunks = _stdin_chunks(write, {"k": "int", "t": "text", "b": "blob"}, 5000)
    rows = [r for c in chunks for r in _rows(c.data)]
    assert [(r["k"], r["t"] if r["t"] is None else len(r["t"])) for r in rows] == [
        (0, 60_000_000), (1, None), (2, 0)]
    assert rows[1]["b"] == blob and rows[0]["b"] == b"\x00" and rows[2]["b"] == b""


@pytest.mark.parametrize("mode", ["file", "file, tolerant", "file, tolerant, careful",
                                  "stdin", "stdin, tolerant", "stdin, careful"])
def test_csv_keeps_empty_text_apart_from_null(tmp_path: Path, mode: str) -> None:
    """``""`` is an empty text and nothing is null in every way a CSV source is read:
    Arrow's reader, the careful line-by-line reader (tolerant, after a record that
    cannot be read, or stdin from a piece Arrow refuses)."""
    rows = ['1,"",x', "2,,x", '3,"null",""', '4,"",']
    if "careful" in mode:
        rows.insert(0, '0,"a\nb",x' if mode.startswith("file") else "0,x,y,z")
    data = ("k,t,u\n" + "\n".join(rows) + "\n").encode()
    types = {"k": "int", "t": "text", "u": "text"}
    tolerant = "tolerant" in mode
    if mode.startswith("stdin"):
        if "careful" in mode:
            with pytest.raises(LoadError, match="stdin:2: 4 fields"):
                _stdin_chunks(data, types, 100)
            data = data.replace(b"0,x,y,z", b'0,"a\nb",x')
        chunks = _stdin_chunks(data, types, 100, tolerant)
    else:
        path = tmp_path / "in.csv"
        path.write_bytes(data)
        [part] = source_parts(str(path))
        chunks = list(open_source(part, 100, types, tolerant=tolerant))
    got = [(r["k"], r["t"], r["u"]) for c in chunks for r in _rows(c.data) if r["k"]]
    assert got == [(1, "", "x"), (2, None, "x"), (3, "null", ""), (4, "", None)]
