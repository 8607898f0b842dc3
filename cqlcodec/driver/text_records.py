"""The careful reading of CSV and JSON lines text, line by line, for loads that go on
past bad rows (``load_table(..., max_errors=...)``, ``load --max-errors``).

A record that cannot be read is an :class:`Unreadable`: a CSV record with more or
fewer fields than the header, with text after a closing quote or with a quote that is
never closed, a line that is no JSON object, or bytes that are no UTF-8 text. It names
the physical line it starts on (counting from 1, the CSV header is line 1), and
reading goes on with the next record. A CSV record over several lines that cannot be
read is taken as its first line alone, and reading goes on at the line after it, so
an unclosed quote costs one line, not the rest of the file.

:func:`csv_records` and :func:`jsonl_records` give the records in groups of at most
``chunk_rows``; :mod:`cqlcodec.driver.sources` converts the good ones.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Final

# the longest field read: any cell the server takes (a blob of hundreds of MB in hex)
_FIELD_LIMIT: Final = (1 << 31) - 1

__all__ = ["RecordGroup", "Unreadable", "csv_pieces", "csv_records", "jsonl_records", "raw_text"]


@dataclass(frozen=True)
class Unreadable:
    """A record of a text source that could not be read: the line it starts on (from
    1), why, its raw text (bytes that are no UTF-8 as ``\\x..`` escapes) and the values
    read from it by column name where any could be (CSV fields by their place)."""

    line: int
    reason: str
    text: str
    values: dict[str, Any] = field(default_factory=dict)


@dataclass
class RecordGroup:
    """Up to ``chunk_rows`` consecutive records of a text source: the good ones (CSV:
    lists of field texts; JSON lines: the decoded objects) with the line each starts
    on, and the unreadable ones."""

    records: list[Any] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    unreadable: list[Unreadable] = field(default_factory=list)

    def size(self) -> int:
        """Records in the group, good and unreadable."""
        return len(self.records) + len(self.unreadable)


def raw_text(data: bytes) -> str:
    """A raw line as text, without its line break; bytes that are no UTF-8 as escapes."""
    return data.rstrip(b"\r\n").decode("utf-8", "backslashreplace")


class _LineFeed:
    """The lines given to :func:`csv.reader`: numbered, decoded, and taken back when a
    record over several lines turns out unreadable (all but its first line are read
    again). ``taken`` holds the lines of the record being read."""

    def __init__(self, raw: Iterator[bytes], first_line: int) -> None:
        self.raw = raw
        self.next_line = first_line
        self.pending: list[tuple[int, bytes]] = []   # taken back, the next one last
        self.taken: list[tuple[int, bytes]] = []
        self.undecodable = False

    def __iter__(self) -> _LineFeed:
        return self

    def __next__(self) -> str:
        if self.pending:
            number, data = self.pending.pop()
        else:
            data = next(self.raw)
            number = self.next_line
            self.next_line += 1
        self.taken.append((number, data))
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            self.undecodable = True
            return data.decode("utf-8", "replace")

    def start_record(self) -> None:
        """Forgets the lines of the record before."""
        self.taken = []
        self.undecodable = False

    def take_back(self, lines: list[tuple[int, bytes]]) -> None:
        """Lines to be read again, in their order."""
        self.pending.extend(reversed(lines))


def csv_records(raw: Iterator[bytes], first_line: int, names: list[str], delimiter: str,
                chunk_rows: int) -> Iterator[RecordGroup]:
    """The records of CSV text (``raw``: its lines as bytes, the first being line
    ``first_line``, after the header) whose header is ``names``, in groups of at most
    ``chunk_rows``. Empty lines are skipped. A record is its fields' texts, None for an
    empty field that was not quoted (``""`` is an empty text, nothing is null)."""
    feed = _LineFeed(raw, first_line)
    if csv.field_size_limit() < _FIELD_LIMIT:  # the csv module's default: 128 KiB
        csv.field_size_limit(_FIELD_LIMIT)
    reader = csv.reader(feed, delimiter=delimiter, strict=True)
    width = len(names)
    group = RecordGroup()
    while True:
        feed.start_record()
        reason = ""
        try:
            fields: list[str] | None = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            fields = None
            reason = f"malformed CSV ({exc})"
        taken = feed.taken
        if fields is not None and not fields:
            continue  # an empty line
        if not reason and fields is not None and len(fields) != width:
            reason = f"{len(fields)} fields where the header has {width}"
        if not reason and not feed.undecodable and fields is not None:
            group.records.append(_nulls_apart(fields, taken, delimiter) if "" in fields
                                 else fields)
            group.lines.append(taken[0][0])
        else:
            number, data = taken[0]
            text = raw_text(data)
            if not _is_utf8(data):
                reason = "not UTF-8 text"
            elif len(taken) > 1:
                reason = (f"{reason or 'not UTF-8 text'}, in a record of {len(taken)} lines "
                          "from this one (a quote not closed?); reading goes on at the next "
                          "line")
            if len(taken) > 1:
                feed.take_back(taken[1:])
            group.unreadable.append(Unreadable(number, reason, text,
                                               _fields_by_name(text, names, delimiter)))
        if group.size() >= chunk_rows:
            yield group
            group = RecordGroup()
    if group.size():
        yield group


def _nulls_apart(fields: list[str], taken: list[tuple[int, bytes]],
                 delimiter: str) -> list[str | None]:
    """The fields of a record read from the lines ``taken``, each empty one that was
    not quoted as None: CSV keeps ``""`` (an empty text) apart from nothing (null), as
    cqlsh and dsbulk write them (:mod:`csv` reads both as ``''``)."""
    text = b"".join(data for _, data in taken).decode("utf-8")
    out: list[str | None] = list(fields)
    pos = 0
    for i, value in enumerate(fields):
        if text.startswith('"', pos):  # quoted: to the closing quote (doubled inside)
            close = pos
            while True:
                close = text.find('"', close + 1)
                if close < 0 or not text.startswith('"', close + 1):
                    break
                close += 1
            pos = close + 2  # past the quote and the delimiter
            continue
        if not value:
            out[i] = None
        end = text.find(delimiter, pos)
        if end < 0:
            break
        pos = end + 1
    return out


def csv_pieces(read: Callable[[int], bytes], size: int) -> Iterator[bytes]:
    """The bytes ``read(n)`` gives (until it gives none), read ``size`` at a time, in
    pieces that each end at the end of a CSV record: the last line break of what was
    read after an even number of quotes (RFC 4180 quoting, as CSV writers quote: a
    quote inside a quoted field is doubled). A record longer than ``size`` makes its
    piece longer: none is cut, so each piece can be read on its own (after the first,
    without the header)."""
    held: list[bytes] = []
    odd = False  # an odd number of quotes in held
    while True:
        data = read(size)
        if not data:
            if held:
                yield b"".join(held)
            return
        end = _record_end(data, odd)
        if end < 0:
            held.append(data)
            odd = odd != bool(data.count(b'"') & 1)
            continue
        held.append(data[:end])
        yield b"".join(held)
        rest = data[end:]
        held = [rest] if rest else []
        odd = bool(rest.count(b'"') & 1)


def _record_end(data: bytes, odd: bool) -> int:
    """The index after the last line break of ``data`` outside quotes (an odd number
    of quotes before ``data`` when ``odd``), -1 when there is none."""
    quotes = (data.count(b'"') + odd) & 1  # of everything up to ``pos``
    pos = len(data)
    while True:
        brk = data.rfind(b"\n", 0, pos)
        if brk < 0:
            return -1
        quotes ^= data.count(b'"', brk, pos) & 1
        if not quotes:
            return brk + 1
        pos = brk


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _fields_by_name(text: str, names: list[str], delimiter: str) -> dict[str, Any]:
    """The fields of one line by column name, read leniently (what the bad-rows file
    shows of an unreadable record): every column, None where the line has no field;
    surplus fields are left out (the line is in the error)."""
    try:
        fields = next(csv.reader([text], delimiter=delimiter), [])
    except csv.Error:
        fields = []
    return {name: fields[i] if i < len(fields) else None for i, name in enumerate(names)}


def jsonl_records(raw: Iterator[bytes], chunk_rows: int, *,
                  tolerant: bool) -> Iterator[RecordGroup]:
    """The JSON objects of JSON lines text (``raw``: its lines as bytes, from line 1),
    in groups of at most ``chunk_rows``; blank lines are skipped. A line that is no
    JSON object is :class:`Unreadable` when ``tolerant``, else a ``ValueError`` naming
    the line."""
    group = RecordGroup()
    for number, data in enumerate(raw, 1):
        if not data.strip():
            continue
        try:
            row = json.loads(data.decode("utf-8"))
            if not isinstance(row, dict):
                raise ValueError(f"a JSON {type(row).__name__}, not an object")
        except UnicodeDecodeError:
            if not tolerant:
                raise ValueError(f"line {number} is not UTF-8 text") from None
            group.unreadable.append(Unreadable(number, "not UTF-8 text", raw_text(data)))
        except ValueError as exc:
            if not tolerant:
                raise ValueError(f"line {number} is no JSON object ({exc})") from None
            group.unreadable.append(Unreadable(number, f"no JSON object ({exc})",
                                               raw_text(data)))
        else:
            group.records.append(row)
            group.lines.append(number)
        if group.size() >= chunk_rows:
            yield group
            group = RecordGroup()
    if group.size():
        yield group
