"""Reading CSV and JSON lines sources past the records that cannot be read
(``cqlcodec.driver.text_records`` and the tolerant ``open_source``): which records are
unreadable, the lines they are reported at, and that the rest is read whole."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

from cqlcodec.driver.sources import LoadError, open_source, source_parts
from cqlcodec.driver.text_records import csv_records, jsonl_records

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
