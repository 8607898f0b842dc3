"""JSON lines of a :class:`~cqlcodec.ColumnBatch`, built column by column with pyarrow.

Each column becomes Arrow string arrays of its values' JSON texts (``null`` for a null);
one ``take`` puts them in line order, with the key texts between them, and its data buffer
is written as it is. Integers and booleans are turned into
text by Arrow's casts, text columns are quoted by Arrow when no character in them needs
an escape, floats by Arrow's cast where its text is ``float.__repr__``'s (what :mod:`json`
writes), by ``float.__repr__`` elsewhere; every other type goes
value by value through :func:`cqlcodec.driver.json_values.to_json` and the same
encoder settings as a whole row. The bytes are those of encoding each row's dict
``{name: to_json(value, type)}`` with ``json.JSONEncoder(ensure_ascii=False,
allow_nan=False, separators=(",", ":"))``, one row a line.

Arrays and scalars of texts made here are built from their buffers: ``pyarrow.array``
and ``pyarrow.scalar`` of Python values import pandas where it is installed (about half
a second of CPU, once per process).
"""

from __future__ import annotations

import json
from array import array as typed_array
from collections.abc import Callable
from itertools import accumulate
from typing import Any, Final

from cqlcodec import kinds as K

__all__ = ["jsonl_buffer", "ordered_values", "reference_lines"]

_INTEGER_KINDS: Final = (K.TINYINT, K.SMALLINT, K.INT, K.BIGINT, K.COUNTER)
_TEXT_KINDS: Final = (K.TEXT, K.ASCII)
_FLOAT_KINDS: Final = (K.FLOAT, K.DOUBLE)
# the characters json escapes when ensure_ascii is off: '"', '\' and the C0 controls (in
# UTF-8 no byte of a longer character is below 0x80, so the bytes tell)
_ESCAPED_BYTES: Final = bytes(range(0x20)) + b'"\\'
_ENCODER: Final = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))
_quote: Final[Callable[[str], str]] = json.encoder.encode_basestring
_NON_FINITE: Final = {"nan": '"NaN"', "inf": '"Infinity"', "-inf": '"-Infinity"'}
# Arrow's double texts that are repr's too (an integral value's once ".0" is put after it),
# for a pyarrow that lays them out otherwise than _float_texts expects: a plain decimal at or
# above 1e-4 (repr writes smaller ones with an exponent; Arrow writes an exponent from 1e10 on)
_REPR_TEXT: Final = r"^-?(?:0\.0{0,3}[1-9][0-9]*|[1-9][0-9]*\.[0-9]+|0\.0)$"


def jsonl_buffer(pa: Any, batch: Any) -> Any:
    """The rows of ``batch`` as JSON lines (UTF-8, each ending in a newline), as a
    pyarrow buffer; the mapping of :mod:`cqlcodec.driver.json_values`."""
    names = batch.names
    if len(set(names)) < len(names):  # a repeated name: one key, as a dict keeps it
        return pa.py_buffer("".join(reference_lines(batch)).encode("utf-8"))
    kernels = _kernels()
    record = pa.record_batch(batch)
    keys: list[str] = []
    columns: list[list[Any]] = []
    between = "{"
    for i, (name, t) in enumerate(zip(names, batch.types)):
        texts, quote = _column_texts(pa, kernels, record.column(i), t, batch.column(i))
        keys.append(between + _quote(name) + ":" + quote)
        columns.append(texts)
        between = quote + ","
    keys.append(between[:-1] + "}\n")
    rows = len(record)
    if not rows:
        return pa.py_buffer(b"")
    # every text of every row, in line order, taken from one chunked array of the keys
    # and the columns' texts (one take is about half the CPU of an element-wise join)
    pieces = pa.chunked_array([_strings(pa, keys), *(a for texts in columns for a in texts)])
    order = _line_order(pa, rows, tuple(len(texts) for texts in columns))
    lines = kernels.call_function("take", [pieces, order]).combine_chunks()
    offsets = memoryview(lines.buffers()[1]).cast("B").cast("i")
    start, end = offsets[lines.offset], offsets[lines.offset + len(lines)]
    return lines.buffers()[2].slice(start, end - start)


_ORDERS: Final[dict[tuple[int, tuple[int, ...]], Any]] = {}


def _line_order(pa: Any, rows: int, widths: tuple[int, ...]) -> Any:
    """The indices that take a batch's texts in line order from the chunked array of
    its keys (one element each, then the one after the last column) followed by its
    columns' text arrays (``widths[c]`` arrays of ``rows`` texts for column ``c``): for
    each row, a key, then that row's text of each of its column's arrays, and so on,
    then the last key. The same for every batch of a layout and size, so kept."""
    found = _ORDERS.get((rows, widths))
    if found is not None:
        return found
    stride = len(widths) + 1 + sum(widths)
    order = typed_array("i", bytes(4 * rows * stride))
    place, start = 0, len(widths) + 1
    for key, width in enumerate(widths):
        order[place::stride] = typed_array("i", [key]) * rows
        place += 1
        for _ in range(width):
            order[place::stride] = typed_array("i", range(start, start + rows))
            place, start = place + 1, start + rows
    order[place::stride] = typed_array("i", [len(widths)]) * rows
    found = pa.Array.from_buffers(pa.int32(), rows * stride, [None, pa.py_buffer(order)])
    if len(_ORDERS) >= 8:
        _ORDERS.clear()
    _ORDERS[rows, widths] = found
    return found


def reference_lines(batch: Any) -> list[str]:
    """The rows of ``batch`` as JSON lines, row by row through
    :func:`~cqlcodec.driver.json_values.to_json` (what :func:`jsonl_buffer` must equal)."""
    import pyarrow

    from cqlcodec.driver.json_values import to_json

    names, types = batch.names, batch.types
    record = pyarrow.record_batch(batch)
    columns = [ordered_values(record.column(i), t, batch.column(i)) for i, t in enumerate(types)]
    return [_ENCODER.encode({n: to_json(v, t) for n, v, t in zip(names, values, types)}) + "\n"
            for values in zip(*columns)]


def _kernels() -> Any:
    """The module with pyarrow's ``call_function`` and its option classes. Its own
    extension module where it has them: ``pyarrow.compute`` builds a Python wrapper of
    every kernel when imported (about 70 ms of CPU, a third of a microsecond per row of a
    200,000-row unload), and nothing here needs those wrappers."""
    try:
        import pyarrow._compute as kernels
        for name in ("call_function", "CastOptions", "MatchSubstringOptions",
                     "ScalarAggregateOptions"):
            getattr(kernels, name)
    except (ImportError, AttributeError):
        import pyarrow.compute as kernels
    return kernels


def _column_texts(pa: Any, kernels: Any, array: Any, t: Any, column: Any) -> tuple[list[Any], str]:
    """One column's values as Arrow string arrays whose element-wise join is their JSON
    texts (``null`` for a null), and the quote to put around each (``'"'`` for a text
    column without nulls or characters to escape: its array is then the column itself)."""
    kind = t.unwrapped().kind
    types = pa.types
    call = kernels.call_function
    if kind in _INTEGER_KINDS and types.is_integer(array.type) or \
            kind == K.BOOLEAN and types.is_boolean(array.type):
        return [_null_texts(pa, kernels, _cast(kernels, array, pa.string()))], ""
    if kind in _TEXT_KINDS and types.is_string(array.type):
        data = array.buffers()[2]
        if data is None or _no_escapes(data):
            if not array.null_count:
                return [array], '"'
            quote = _scalar(pa, '"')
            quoted = call("binary_join_element_wise", [quote, array, quote, _scalar(pa, "")])
            return [_null_texts(pa, kernels, quoted)], ""
        return [_strings(pa, ["null" if v is None else _quote(v) for v in array.to_pylist()])], ""
    if kind in _FLOAT_KINDS and types.is_floating(array.type):
        return _float_texts(pa, kernels, array), ""
    from cqlcodec.driver.json_values import to_json

    encode = _ENCODER.encode
    return [_strings(pa, [encode(to_json(v, t)) for v in ordered_values(array, t, column)])], ""


def _holds_set(t: Any) -> bool:
    t = t.unwrapped()
    return t.kind == K.SET or any(_holds_set(s) for s in t.subtypes)


def ordered_values(array: Any, t: Any, column: Any) -> list[Any]:
    """The values of a column (``column``, a :class:`~cqlcodec.Column`; ``array``, its
    Arrow array) for :func:`~cqlcodec.driver.json_values.to_json`: a type holding a set
    read from the Arrow array, whose lists keep the server's order of the elements (a
    Python set would not, and per-element write times and TTLs follow that order)."""
    if not _holds_set(t):
        return list(column.to_pylist())
    from cqlcodec.columnar.bind_input import arrow_values

    return arrow_values(array, t)


def _no_escapes(data: Any) -> bool:
    """Whether no byte of the buffer ``data`` is one JSON escapes (a deleting
    ``bytes.translate`` scans about six times faster than a regex search)."""
    text = memoryview(data).tobytes()
    return len(text.translate(None, _ESCAPED_BYTES)) == len(text)


def _float_texts(pa: Any, kernels: Any, array: Any) -> list[Any]:
    """``float.__repr__`` of each value of a float or double column (a float widened to
    double first, as Python reads it), ``null`` for a null, NaN and the infinities as
    quoted names: Arrow's texts and, where a value is integral, ``.0`` to put after them.

    Arrow's text of a double has the same digits as ``repr`` (the fewest that read back as
    the same double), laid out as ``repr`` lays them out from 1e-4 up to 1e10 (but for the
    ``.0`` of an integral value): it writes an exponent below 1e-6 and from 1e10 up,
    ``repr`` below 1e-4 and from 1e16 up. A value in that range (or zero) keeps Arrow's
    text; the others (and every value, if this pyarrow lays out its texts otherwise) go
    through ``repr``."""
    call = kernels.call_function
    doubles = _cast(kernels, array, pa.float64())
    texts = _null_texts(pa, kernels, _cast(kernels, doubles, pa.string()))
    integral = call("equal", [doubles, call("floor", [doubles])])
    point = None
    if call("any", [integral]).as_py():  # Arrow writes 2.0 as "2"; repr as "2.0"
        point = call("if_else", [integral, _scalar(pa, ".0"), _scalar(pa, "")])
        if point.null_count:
            point = call("coalesce", [point, _scalar(pa, "")])
    if _arrow_lays_out_as_repr(pa, kernels):
        size = call("abs", [doubles])
        low, high, zero = _doubles(pa, (1e-4, 1e10, 0.0))
        in_range = call("and", [call("greater_equal", [size, low]), call("less", [size, high])])
        kept = call("or", [in_range, call("equal", [size, zero])])
    else:
        joined = texts if point is None else \
            call("binary_join_element_wise", [texts, point, _scalar(pa, "")])
        kept = call("match_substring_regex", [joined], kernels.MatchSubstringOptions(_REPR_TEXT))
    if call("all", [kept], kernels.ScalarAggregateOptions(min_count=0)).as_py():
        return [texts] if point is None else [texts, point]  # a null's kept is null
    out = texts.to_pylist()
    points = [""] * len(out) if point is None else point.to_pylist()
    values = doubles.to_pylist()
    for i, keep in enumerate(kept.to_pylist()):
        out[i] = out[i] + points[i] if keep or keep is None else _float_text(values[i])
    return [_strings(pa, out)]


_LAYOUT_CHECKED: Final[list[bool]] = []
# the edges of the range where Arrow's layout is repr's, and values with many digits
_LAYOUT_PROBES: Final = (1e-4, 1.0000000000000002e-4, 0.00015, 0.1, 0.30000000000000004,
                         1 / 3, 1.0, 2.5, 123456789.0, 999999999.5, 9999999999.0,
                         9999999999.999998, 0.0, -0.0, -1e-4, -9999999999.0, 5e-4 / 3)


def _arrow_lays_out_as_repr(pa: Any, kernels: Any) -> bool:
    """Whether this pyarrow's texts of doubles from 1e-4 up to 1e10 are ``repr``'s (once
    ``.0`` follows an integral value's), checked once a process on values at the edges."""
    if not _LAYOUT_CHECKED:
        texts = _cast(kernels, _doubles(pa, _LAYOUT_PROBES), pa.string()).to_pylist()
        _LAYOUT_CHECKED.append(all(
            text + (".0" if value == int(value) else "") == float.__repr__(value)
            for text, value in zip(texts, _LAYOUT_PROBES)))
    return _LAYOUT_CHECKED[0]


def _cast(kernels: Any, array: Any, to: Any) -> Any:
    return array if array.type == to else \
        kernels.call_function("cast", [array], kernels.CastOptions.safe(to))


def _null_texts(pa: Any, kernels: Any, texts: Any) -> Any:
    """``texts`` with ``null`` for each null."""
    if not texts.null_count:
        return texts
    return kernels.call_function("coalesce", [texts, _scalar(pa, "null")])


def _float_text(value: float | None) -> str:
    if value is None:
        return "null"
    text = float.__repr__(value)
    return _NON_FINITE.get(text, text)


def _strings(pa: Any, texts: list[str]) -> Any:
    """An Arrow string array of ``texts``, from its buffers."""
    data = "".join(texts).encode("utf-8")
    if len(data) == sum(map(len, texts)):  # all ASCII: a text's length is its bytes'
        lengths: Any = map(len, texts)
    else:
        lengths = (len(text.encode("utf-8")) for text in texts)
    offsets = typed_array("i", accumulate(lengths, initial=0))
    return pa.StringArray.from_buffers(len(texts), pa.py_buffer(offsets), pa.py_buffer(data))


def _doubles(pa: Any, values: tuple[float, ...]) -> Any:
    """An Arrow double array of ``values``, from its buffer."""
    return pa.Array.from_buffers(pa.float64(), len(values),
                                 [None, pa.py_buffer(typed_array("d", values))])


def _scalar(pa: Any, text: str) -> Any:
    """An Arrow string scalar of ``text``."""
    return _strings(pa, [text])[0]
