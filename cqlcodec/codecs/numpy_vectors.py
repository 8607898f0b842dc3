"""numpy glue for the numeric vector types (optional; never compiled).

``vector<float|double|int|bigint, n>`` values decode to native-endian 1-D numpy
arrays when asked for (``CqlType.deserialize(..., numpy=True)``), with no
per-element Python objects, and numpy arrays of any numeric dtype and byte
order encode to those vectors.

numpy is an optional dependency (``pip install cqlcodec[numpy]``). This module
imports without it; every function that needs numpy then raises
:class:`NumpyUnavailableError`. The compiled vector codecs import this module
lazily, only when a numpy array is encoded or numpy output is requested.

Encoding rules (value-based safe casting):

* the array must be 1-D with exactly ``dim`` elements (else EncodeValueError);
* bool, complex, datetime, string and other non-numeric dtypes are refused
  (EncodeTypeError), and so are floating-point arrays for int/bigint vectors;
* integer arrays encode to int/bigint vectors when every value fits (else
  EncodeValueError) and to float/double vectors by rounding, like Python ints;
* floating-point arrays encode to float vectors when no finite value overflows
  float32 (NaN and infinities are kept; rounding is accepted, as for Python
  floats), else EncodeValueError;
* object arrays are handed back to the generic element-by-element path.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, Final

from cqlcodec import kinds as K
from cqlcodec.errors import CodecError
from cqlcodec.runtime.wire import out_of_range, wrong_type

__all__ = ["HAVE_NUMPY", "NumpyUnavailableError", "require_numpy", "vector_decoder",
           "vector_encoder", "encode_vector"]

try:
    np: Any = importlib.import_module("numpy")
except ImportError:  # the optional extra is not installed
    np = None

HAVE_NUMPY: Final = np is not None

# the float32 overflow threshold: 2**128 - 2**103 (halfway between FLT_MAX and 2**128);
# finite doubles at or beyond it round to infinity
F32_OVERFLOW: Final = 3.4028235677973366e38

_ELEMENT: Final[dict[int, tuple[str, str]]] = {
    K.FLOAT: (">f4", "float32"),
    K.DOUBLE: (">f8", "float64"),
    K.INT: (">i4", "int32"),
    K.BIGINT: (">i8", "int64"),
}
_INT_RANGE: Final[dict[int, tuple[int, int]]] = {
    K.INT: (-(1 << 31), (1 << 31) - 1),
    K.BIGINT: (-(1 << 63), (1 << 63) - 1),
}


class NumpyUnavailableError(CodecError, ImportError):
    """numpy output or input was requested but numpy is not installed."""


def require_numpy() -> Any:
    """The numpy module, or NumpyUnavailableError naming the extra to install."""
    if np is None:
        raise NumpyUnavailableError(
            "numpy is not installed; numpy arrays for vectors need it: "
            "pip install cqlcodec[numpy]")
    return np


def vector_decoder(kind: int, dim: int) -> Callable[[bytes, int], Any]:
    """A function ``(buf, pos) -> ndarray`` decoding ``dim`` big-endian elements at ``pos``.

    The caller has checked that ``buf`` holds them. The array is native-endian,
    writable and owns its memory.
    """
    numpy = require_numpy()
    be_name, ne_name = _ELEMENT[kind]
    be = numpy.dtype(be_name)
    ne = numpy.dtype(ne_name)
    frombuffer = numpy.frombuffer

    def decode(buf: bytes, pos: int) -> Any:
        return frombuffer(buf, be, dim, pos).astype(ne)

    return decode


_targets: dict[int, tuple[Any, Any]] = {}


def _target(numpy: Any, kind: int) -> tuple[Any, Any]:
    """(big-endian dtype, native dtype) of a vector kind, built once."""
    found = _targets.get(kind)
    if found is None:
        be_name, ne_name = _ELEMENT[kind]
        found = (numpy.dtype(be_name), numpy.dtype(ne_name))
        _targets[kind] = found
    return found


def vector_encoder(kind: int, dim: int, cql_name: str) -> Callable[[Any], bytes | None]:
    """A function ``value -> content bytes`` for one vector type (see :func:`encode_vector`).

    A 1-D native array of the vector's own element type and length, the common case,
    takes one ``astype`` with every other lookup done here once; anything else goes
    through :func:`encode_vector`.
    """
    numpy = require_numpy()
    be, ne = _target(numpy, kind)
    ndarray = numpy.ndarray
    shape = (dim,)

    def encode(value: Any) -> bytes | None:
        if type(value) is ndarray and value.dtype is ne and value.shape == shape:
            return value.astype(be).tobytes()  # type: ignore[no-any-return]
        return encode_vector(value, kind, dim, cql_name)

    return encode


def encode_vector(value: Any, kind: int, dim: int, cql_name: str) -> bytes | None:
    """The content bytes of the numeric vector ``value`` (an array-like), or None for
    object arrays, which the caller encodes element by element."""
    numpy = require_numpy()
    be, ne = _target(numpy, kind)
    arr = value if isinstance(value, numpy.ndarray) else numpy.asarray(value)
    dt = arr.dtype
    if dt == ne and arr.ndim == 1 and arr.shape[0] == dim:  # the common case: no checks
        return bytes(arr.astype(be).tobytes())
    code = dt.kind
    if code == "O":
        return None
    if code not in "iuf":
        raise wrong_type(cql_name, value, f"a numeric array, not dtype {dt}")
    if arr.ndim != 1:
        raise out_of_range(cql_name, value,
                           f"expected a 1-D array of {dim} elements, observed shape {arr.shape}")
    if arr.shape[0] != dim:
        raise out_of_range(cql_name, value,
                           f"expected {dim} elements, observed {arr.shape[0]}")
    if kind == K.FLOAT or kind == K.DOUBLE:
        if code == "f" and (kind == K.FLOAT and dt.itemsize > 4 or dt.itemsize > 8):
            _check_float_range(numpy, arr, value, cql_name,
                               F32_OVERFLOW if kind == K.FLOAT else None)
            with numpy.errstate(over="ignore"):
                return bytes(arr.astype(be).tobytes())
        return bytes(arr.astype(be).tobytes())
    if code == "f":
        raise wrong_type(cql_name, value,
                         f"an integer array for {cql_name}, not dtype {dt}")
    if not numpy.can_cast(dt, be, "safe") and arr.size:
        lo, hi = _INT_RANGE[kind]
        amin = int(arr.min())
        amax = int(arr.max())
        if amin < lo or amax > hi:
            bad = amin if amin < lo else amax
            raise out_of_range(cql_name, value,
                               f"element {bad} does not fit {_ELEMENT[kind][1]}")
    return bytes(arr.astype(be).tobytes())


def _check_float_range(numpy: Any, arr: Any, value: object, cql_name: str,
                       limit: float | None) -> None:
    """Refuse finite values that overflow the target width (float32, or float64 for
    wider source dtypes such as longdouble)."""
    if limit is None:
        info = numpy.finfo(numpy.float64)
        limit_arr = numpy.asarray(info.max, dtype=arr.dtype)
        # values above float64 max that still round to it are rare; refuse anything beyond
        finite = arr[numpy.isfinite(arr)]
        if finite.size and (numpy.abs(finite) > limit_arr).any():
            raise out_of_range(cql_name, value, "an element does not fit a 64-bit float")
        return
    hi = arr.max()
    lo = arr.min()
    if -limit < lo and hi < limit:  # both finite and in range (NaN makes this False)
        return
    finite = arr[numpy.isfinite(arr)]
    if finite.size and (numpy.abs(finite) >= limit).any():
        bad = finite[numpy.abs(finite) >= limit][0]
        raise out_of_range(cql_name, value, f"element {float(bad)!r} does not fit a 32-bit float")
