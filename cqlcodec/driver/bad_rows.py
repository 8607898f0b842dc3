"""The bad-rows file of a load: every row that could not be converted, bound or
written, appended with its error and its position in the source.

A CSV source's bad rows are written as CSV (the row's columns, then ``_error`` and
``_source``; a header line when the file is new); every other source's as JSON lines
(the row's columns, then ``"_error"`` and ``"_source"``), values in the mapping of
:mod:`cqlcodec.driver.json_values` where the column's type is known, else as text.
``_source`` is ``file:line`` for CSV and JSON lines files (the line the row starts on,
counting from 1; a CSV header is line 1), else ``file:row`` (rows counted from 1 within
the file) or ``source:row`` for in-memory sources. A record that could not be read at
all has what could be read of it in the columns and its whole line at the end of the
error (``...; the line: TEXT``).
"""

from __future__ import annotations

import csv
import datetime
import json
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, TextIO

__all__ = ["BadRow", "BadRowsFile"]

ERROR_COLUMN: Final = "_error"
SOURCE_COLUMN: Final = "_source"
FIRST_KEPT: Final = 5


@dataclass(frozen=True)
class BadRow:
    """One row that was not loaded: its values by column name (as read), the error,
    where it is in the source, and its index in the whole load (from 0)."""

    values: Mapping[str, Any]
    error: str
    source: str
    row: int


class BadRowsFile:
    """Appends :class:`BadRow` s to ``path``: CSV when ``csv_format`` (the source was
    CSV), else JSON lines. ``types`` maps column names to CqlTypes for JSON."""

    def __init__(self, path: str, csv_format: bool, types: Mapping[str, Any] | None = None) -> None:
        self.path = path
        self.csv_format = csv_format
        self.types = dict(types or {})
        self.count = 0
        self.first: list[BadRow] = []  # the first FIRST_KEPT rows added, for a report
        self._header_written = os.path.exists(path) and os.path.getsize(path) > 0
        self._file: TextIO | None = None
        self._lock = threading.Lock()

    def add(self, bad: BadRow) -> None:
        """Appends one row (the file is opened on the first)."""
        with self._lock:
            if self._file is None:
                self._file = open(self.path, "a", encoding="utf-8", newline="")
            names = list(bad.values)
            if self.csv_format:
                writer = csv.writer(self._file)
                if not self._header_written:
                    writer.writerow([*names, ERROR_COLUMN, SOURCE_COLUMN])
                    self._header_written = True
                writer.writerow([*(_csv_text(bad.values[n]) for n in names), bad.error,
                                 bad.source])
            else:
                row = {n: self._json_value(n, bad.values[n]) for n in names}
                row[ERROR_COLUMN] = bad.error
                row[SOURCE_COLUMN] = bad.source
                self._file.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
            self._file.flush()
            self.count += 1
            if len(self.first) < FIRST_KEPT:
                self.first.append(bad)

    def _json_value(self, name: str, value: Any) -> Any:
        from cqlcodec.driver.json_values import to_json

        t = self.types.get(name)
        if t is not None:
            try:
                return to_json(value, t)
            except (TypeError, ValueError, AttributeError):
                pass
        if isinstance(value, (bytes, bytearray)):
            return "0x" + bytes(value).hex()
        if isinstance(value, (datetime.date, datetime.datetime)):
            return value.isoformat()
        return value

    def close(self) -> None:
        """Closes the file."""
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None


def _csv_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, (bytes, bytearray)):
        return "0x" + bytes(value).hex()
    if isinstance(value, datetime.datetime):
        return value.isoformat()
    return str(value)
