"""Turning the Python values users hold into ints and floats for the encoders.

Integer columns take ``int`` and any object with ``__index__`` (numpy
integers), never ``bool`` or ``numpy.bool_``: a bool bound to a number column
is almost always a mistake. float/double columns take ``float``, ``int`` and
objects with ``__float__`` or ``__index__`` (numpy floats, Decimal), again not
bools. The fast paths (exact int/float) are inlined by the codecs; these
functions are the slow paths and the error messages.
"""

from __future__ import annotations

import operator

from cqlcodec.runtime.wire import out_of_range, wrong_type


def is_bool_like(value: object) -> bool:
    """True for ``bool`` and numpy's boolean scalar (``numpy.bool_``/``numpy.bool``)."""
    if isinstance(value, bool):
        return True
    t = type(value)
    return t.__module__ == "numpy" and (t.__name__ == "bool_" or t.__name__ == "bool")


def coerce_int(value: object, cql_name: str) -> int:
    """``value`` as an int for an integer column, else EncodeTypeError."""
    if isinstance(value, int) and not isinstance(value, bool):
        return int(value)
    if is_bool_like(value):
        raise wrong_type(cql_name, value, "an int (bool is not accepted for number columns)")
    if not hasattr(type(value), "__index__"):
        raise wrong_type(cql_name, value, "an int or an object with __index__")
    try:
        result: int = operator.index(value)  # type: ignore[arg-type]
    except Exception:
        raise wrong_type(cql_name, value, "an int or an object with __index__") from None
    return result


def coerce_float(value: object, cql_name: str) -> float:
    """``value`` as a float for a float/double column, else EncodeTypeError/EncodeValueError."""
    if isinstance(value, float):
        return float(value)
    if is_bool_like(value):
        raise wrong_type(cql_name, value, "a float (bool is not accepted for number columns)")
    if isinstance(value, str) or isinstance(value, bytes) or isinstance(value, bytearray):
        raise wrong_type(cql_name, value, "a float, an int or an object with __float__")
    t = type(value)
    if not (isinstance(value, int) or hasattr(t, "__float__") or hasattr(t, "__index__")):
        raise wrong_type(cql_name, value, "a float, an int or an object with __float__")
    try:
        result: float = float(value)  # type: ignore[arg-type]
    except OverflowError:
        raise out_of_range(cql_name, value, "too large for a double") from None
    except ValueError as exc:  # e.g. Decimal('sNaN')
        raise out_of_range(cql_name, value, f"cannot convert to float ({exc})") from None
    except Exception as exc:
        raise wrong_type(cql_name, value, f"a number convertible to float ({exc})") from None
    return result
