"""JSON lines of a :class:`~cqlcodec.ColumnBatch`, built column by column with pyarrow.

Each column becomes one Arrow string array of its values' JSON texts (``null`` for a
null); one element-wise join of those arrays with the key texts between them gives the
lines, and its data buffer is written as it is. Integers and booleans are turned into
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
import re
from array import array as typed_array
from collections.abc import Callable
from itertools import accumulate
from typing import Any, Final

from cqlcodec import kinds as K

__all__ = ["jsonl_buffer", "reference_lines"]

_INTEGER_KINDS: Final = (K.TINYINT, K.SMALLINT, K.INT, K.BIGINT, K.COUNTER)
_TEXT_KINDS: Final = (K.TEXT, K.ASCII)
_FLOAT_KINDS: Final = (K.FLOAT, K.DOUBLE)
# the characters json escapes when ensure_ascii is off: '"', '\' and the C0 controls (in
# UTF-8 no byte of a longer character is below 0x80, so the bytes tell)
_NEEDS_ESCAPE: Final = re.compile(rb'[\x00-\x1f"\\]')
_ENCODER: Final = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))
_quote: Final[Callable[[str], str]] = json.encoder.encode_basestring
_NON_FINITE: Final = {"nan": '"NaN"', "inf": '"Infinity"', "-inf": '"-Infinity"'}
# Arrow's double texts that are repr's too (an integral value's once ".0" is put after it):
# a plain decimal at or above 1e-4 (repr writes smaller ones with an exponent; Arrow writes
# an exponent from 1e10 on)
_REPR_TEXT: Final = r"^-?(?:0\.0{0,3}[1-9][0-9]*|[1-9][0-9]*\.[0-9]+|0\.0)$"


def jsonl_buffer(pa: Any, batch: Any) -> Any:
    """The rows of ``batch`` as JSON lines (UTF-8, each ending in a newline), as a
    pyarrow buffer; the mapping of :mod:`cqlcodec.driver.json_values`."""
    names = batch.names
    if len(set(names)) < len(names):  # a repeated name: one key, as a dict keeps it
        return pa.py_buffer("".join(reference_lines(batch)).encode("utf-8"))
    kernels = _kernels()
    record = pa.record_batch(batch)
    pieces: list[Any] = []
    between = "{"
    for i, (name, t) in enumerate(zip(names, batch.types)):
        texts, quote = _column_texts(pa, kernels, record.column(i), t, batch.column(i))
        pieces += [_scalar(pa, between + _quote(name) + ":" + quote), texts]
        between = quote + ","
    pieces += [_scalar(pa, between[:-1] + "}\n"), _scalar(pa, "")]
    lines = kernels.call_function("binary_join_element_wise", pieces)
    offsets = memoryview(lines.buffers()[1]).cast("B").cast("i")
    start, end = offsets[lines.offset], offsets[lines.offset + len(lines)]
    return lines.buffers()[2].slice(start, end - start)


def reference_lines(batch: Any) -> list[str]:
    """The rows of ``batch`` as JSON lines, row by row through
    :func:`~cqlcodec.driver.json_values.to_json` (what :func:`jsonl_buffer` must equal)."""
    from cqlcodec.driver.json_values import to_json

    names, types = batch.names, batch.types
    columns = [batch.column(i).to_pylist() for i in range(len(names))]
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


def _column_texts(pa: Any, kernels: Any, array: Any, t: Any, column: Any) -> tuple[Any, str]:
    """One column's values as an Arrow string array of their JSON texts, and the quote
    to put around each (``'"'`` for a text column without nulls or characters to
    escape: its array is then the column itself)."""
    kind = t.unwrapped().kind
    types = pa.types
    call = kernels.call_function
    if kind in _INTEGER_KINDS and types.is_integer(array.type) or \
            kind == K.BOOLEAN and types.is_boolean(array.type):
        return _null_texts(pa, kernels, _cast(kernels, array, pa.string())), ""
    if kind in _TEXT_KINDS and types.is_string(array.type):
        data = array.buffers()[2]
        if data is None or _NEEDS_ESCAPE.search(memoryview(data)) is None:
            if not array.null_count:
                return array, '"'
            quote = _scalar(pa, '"')
            quoted = call("binary_join_element_wise", [quote, array, quote, _scalar(pa, "")])
            return _null_texts(pa, kernels, quoted), ""
        return _strings(pa, ["null" if v is None else _quote(v) for v in array.to_pylist()]), ""
    if kind in _FLOAT_KINDS and types.is_floating(array.type):
        return _float_texts(pa, kernels, array), ""
    from cqlcodec.driver.json_values import to_json

    encode = _ENCODER.encode
    return _strings(pa, [encode(to_json(v, t)) for v in column.to_pylist()]), ""


def _float_texts(pa: Any, kernels: Any, array: Any) -> Any:
    """``float.__repr__`` of each value of a float or double column (a float widened to
    double first, as Python reads it), ``null`` for a null, NaN and the infinities as
    quoted names. Arrow's text of a double has the same digits as ``repr`` (the fewest
    that read back as the same double) laid out otherwise; where its text is already
    ``repr``'s (a plain decimal, an integral value once ``.0`` is added) it is kept, and
    only the rest (exponents, values under 1e-4, non-finite) goes through ``repr``."""
    call = kernels.call_function
    doubles = _cast(kernels, array, pa.float64())
    texts = _cast(kernels, doubles, pa.string())
    integral = call("equal", [doubles, call("floor", [doubles])])
    if call("any", [integral]).as_py():  # Arrow writes 2.0 as "2"; repr as "2.0"
        point = call("if_else", [integral, _scalar(pa, ".0"), _scalar(pa, "")])
        texts = call("binary_join_element_wise", [texts, point, _scalar(pa, "")])
    kept = call("match_substring_regex", [texts], kernels.MatchSubstringOptions(_REPR_TEXT))
    if call("all", [kept], kernels.ScalarAggregateOptions(min_count=0)).as_py():
        return _null_texts(pa, kernels, texts)  # every value's text (a null's is null)
    out = texts.to_pylist()
    values = doubles.to_pylist()
    for i, keep in enumerate(kept.to_pylist()):
        if not keep:
            out[i] = _float_text(values[i])
    return _strings(pa, out)


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


def _scalar(pa: Any, text: str) -> Any:
    """An Arrow string scalar of ``text``."""
    return _strings(pa, [text])[0]
