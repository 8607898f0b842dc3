"""CQL names as users give them: keyspaces, tables and columns, on the command line and
in the Python API.

CQL's rule: a double-quoted identifier keeps its case and may hold any character (``""``
writes a quote); an unquoted one is folded to lower case. ``"Odd_KS"."SrcTable"`` names
keyspace ``Odd_KS`` and table ``SrcTable``; ``Odd_KS.SrcTable`` names ``odd_ks.srctable``.
Every place cqlcodec takes a name from a user parses it here, and every message shows a
name as CQL writes it (:func:`cql_name`: bare when it is lower case and no keyword,
quoted otherwise), so a name copied from a message works when given back.

A column name given unquoted that matches no column once folded is taken as it is when
the table has a column of exactly that name: names handed around as the driver's
metadata spells them (``"Key"`` as a Python string) keep working.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Final

from cqlcodec.errors import CodecError

__all__ = ["CqlNameError", "column_of", "cql_name", "cql_table_name", "parse_names",
           "quote_name", "quoted_identifier", "split_table_name"]

_BARE: Final = re.compile(r"[a-z][a-z0-9_]*")
# CQL's reserved keywords (Cassandra 5.0): a column of one of these names must be quoted
RESERVED: Final = frozenset("""
add aggregate all allow alter and apply as asc ascii authorize batch begin by
columnfamily create default delete desc describe drop entries execute from full grant
if in index infinity insert into is keyspace limit mbean mbeans modify nan norecursive
not null of on or order primary rename replace revoke schema select set table to token
truncate unlogged unset update use using view where with
""".split())


class CqlNameError(CodecError, ValueError):
    """A name that cannot be read: an unclosed quote, text after a closing quote, an
    empty name."""


def quote_name(name: str) -> str:
    """``name`` as a quoted CQL identifier (exact case, inner quotes doubled)."""
    return '"' + name.replace('"', '""') + '"'


def cql_name(name: str) -> str:
    """``name`` as CQL writes it: bare when it reads back as itself (lower case letters,
    digits and ``_``, starting with a letter, no reserved keyword), else quoted."""
    if _BARE.fullmatch(name) and name not in RESERVED:
        return name
    return quote_name(name)


def cql_table_name(keyspace: str, table: str) -> str:
    """``keyspace.table`` as CQL writes it (see :func:`cql_name`)."""
    return f"{cql_name(keyspace)}.{cql_name(table)}"


def quoted_identifier(text: str, start: int) -> tuple[str, int]:
    """The double-quoted identifier that starts at ``text[start]`` (a ``"``): its name
    (``""`` read as one quote) and the index after its closing quote; ``("", -1)`` when
    the quote is never closed. The one reader of quoted names (type strings too)."""
    parts: list[str] = []
    p = start + 1
    while True:
        close = text.find('"', p)
        if close < 0:
            return "", -1
        parts.append(text[p:close])
        if text[close + 1: close + 2] == '"':
            parts.append('"')
            p = close + 2
            continue
        return "".join(parts), close + 1


def _pieces(text: str, separator: str, what: str) -> list[tuple[str, bool]]:
    """The names of ``text`` cut at ``separator`` outside quotes: (name, quoted) each,
    a quoted one unescaped, an unquoted one stripped and not yet folded."""
    found: list[tuple[str, bool]] = []
    at = 0
    end = len(text)
    while True:
        while at < end and text[at].isspace():
            at += 1
        if at < end and text[at] == '"':
            name, after = quoted_identifier(text, at)
            if after < 0:
                raise CqlNameError(f"unclosed quote in {what} {text!r}")
            if not name:
                raise CqlNameError(f'empty quoted name "" in {what} {text!r}')
            at = after
            while at < end and text[at].isspace():
                at += 1
            if at < end and text[at] != separator:
                raise CqlNameError(f"text after a closing quote in {what} {text!r} (a quote "
                                   'inside a quoted name is written "")')
            found.append((name, True))
        else:
            stop = text.find(separator, at)
            stop = end if stop < 0 else stop
            word = text[at:stop].strip()
            if '"' in word:
                raise CqlNameError(f"a quote inside an unquoted name in {what} {text!r}")
            found.append((word, False))
            at = stop
        if at >= end:
            return found
        at += 1  # the separator


def parse_names(text: str, what: str = "names") -> list[tuple[str, bool]]:
    """The comma-separated names of ``text`` (``--columns '"a b",Key'``) in order, each
    as (name, quoted): a quoted one unescaped with its case, an unquoted one stripped
    (fold it, or resolve it with :func:`column_of`). Empty names are dropped."""
    return [(n, q) for n, q in _pieces(text, ",", what) if n]


def split_table_name(text: str, default_keyspace: str | None = None) -> tuple[str, str]:
    """(keyspace, table) of ``"ks.table"`` (or ``"table"`` with ``default_keyspace``),
    quoted parts kept as they are, unquoted ones folded to lower case.
    :class:`CqlNameError` when it cannot be read or names no keyspace."""
    pieces = _pieces(text, ".", "table name")
    names = [n if quoted else n.lower() for n, quoted in pieces]
    if len(names) == 1 and names[0]:
        if not default_keyspace:
            raise CqlNameError(f"table {text!r} names no keyspace and the session has none: "
                               "write it as 'keyspace.table'")
        return default_keyspace, names[0]
    if len(names) != 2 or not all(names):
        raise CqlNameError(f"cannot read table name {text!r}: write it as 'keyspace.table' "
                           '(a name that keeps its case in double quotes: \'"Ks"."Table"\')')
    return names[0], names[1]


def column_of(given: str, known: Collection[str]) -> str | None:
    """The column of ``known`` (a table's exact column names) that the user-given name
    ``given`` names by CQL's rule (quoted: exactly; unquoted: folded to lower case, or
    exactly when only that matches); None when it names none."""
    text = given.strip()
    if text.startswith('"'):
        name, _ = _pieces(text, "\0", "column name")[0]
        return name if name in known else None
    if text.lower() in known:
        return text.lower()
    return given if given in known else (text if text in known else None)
