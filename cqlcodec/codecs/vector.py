"""Codecs of ``vector<T, n>`` (Cassandra 5 ``VectorType``; travels as custom type 0x0000).

Layout, exactly as Cassandra decides it (spec section 3.7): when the element type
is fixed-size in Cassandra's sense (``valueLengthIfFixed``; ``CqlType.fixed_size >=
0``: boolean, int, bigint, counter, float, double, timestamp, uuid, timeuuid and
vectors of those) the content is the ``n`` element contents concatenated with no
length prefixes; otherwise (text, varint, decimal, smallint, tinyint, date, time,
duration, inet, collections, tuples, UDTs, vectors of those) every element is an
``[unsigned vint]`` length followed by its content.

Rules: exactly ``n`` elements both ways (EncodeValueError naming the expected and
observed counts; DecodeError for a fixed layout whose size is not ``n * size``, or
a variable layout that does not hold exactly ``n`` elements); no null elements
(EncodeTypeError); the outer protocol version does not matter (vectors exist
only from Cassandra 5 and their layout is the same in v3-v5). Values decode to
``list`` (``tuple`` with FLAG_HASHABLE); with FLAG_NUMPY float/double/int/bigint
vectors decode to native-endian numpy arrays (see :mod:`cqlcodec.codecs.numpy_vectors`,
imported only when needed: this compiled module never imports numpy).

Speed: float/double/int/bigint vectors have their own codec. Decoding to a list
goes through ``array`` + ``byteswap`` + ``tolist`` (the measured floor, in both
builds). Encoding a list uses an inlined librt loop in the compiled build and one
precomputed ``struct.Struct`` per codec in the interpreted build; both validate
(float32 overflow, int ranges, no null, bool only if the element codec accepts
it) and fall back to the element codec for other element types (numpy scalars,
``__index__``/``__float__`` objects).
"""

from __future__ import annotations

import struct
import sys
from array import array
from collections.abc import Callable, Iterable, Mapping
from typing import Final

from mypy_extensions import i64

from cqlcodec import kinds as K
from cqlcodec.codecs.base import FLAG_HASHABLE, FLAG_NUMPY, Codec
from cqlcodec.codecs.collections import CompositeCodec
from cqlcodec.codecs.fixed import F32_OVERFLOW
from cqlcodec.errors import EncodeError, EncodeTypeError, UnsupportedTypeError
from cqlcodec.runtime.buffers import (
    BytesWriter,
    write_f32_be,
    write_f64_be,
    write_i32_be,
    write_i64_be,
)
from cqlcodec.runtime.build import COMPILED
from cqlcodec.runtime.wire import malformed, out_of_range, read_uvint, short_repr, write_uvint, wrong_type
from cqlcodec.types.model import CqlType

_SWAP: Final = sys.byteorder == "little"
_MAX_DIMENSION: Final = 0x7FFFFFFF
_INF: Final = float("inf")
_I32_MIN: Final = -(1 << 31)
_I32_MAX: Final = (1 << 31) - 1


def _int_typecode() -> str:
    for code in ("i", "l"):
        if array(code).itemsize == 4:
            return code
    return ""


def _long_typecode() -> str:
    for code in ("q", "l"):
        if array(code).itemsize == 8:
            return code
    return ""


# kind -> (array typecode, struct code, element size)
_NUMERIC: Final[dict[int, tuple[str, str, int]]] = {
    K.FLOAT: ("f", "f", 4),
    K.DOUBLE: ("d", "d", 8),
    K.INT: (_int_typecode(), "i", 4),
    K.BIGINT: (_long_typecode(), "q", 8),
}


def vector_codec(t: CqlType, flags: int) -> Codec:
    """The codec of the vector type ``t`` for the given FLAG_* bits."""
    dim = t.dimension
    if dim < 1 or dim > _MAX_DIMENSION:
        raise UnsupportedTypeError(f"{t.cql_name}: vector dimension must be 1 to {_MAX_DIMENSION}")
    sub = t.subtypes[0]
    elem = sub.codec(flags)
    size = sub.fixed_size
    if size < 0:
        return VariableVectorCodec(t.cql_name, elem, dim, flags)
    kind = sub.unwrapped().kind
    spec = _NUMERIC.get(kind)
    if spec is not None and spec[0] != "":
        return NumericVectorCodec(t.cql_name, elem, dim, kind, spec[0], spec[1], spec[2], flags)
    return FixedVectorCodec(t.cql_name, elem, dim, size, flags)


def _null_element(cql_name: str, value: object, i: int) -> EncodeTypeError:
    return wrong_type(cql_name, value, f"no null elements (element {i} is None)")


def _is_array(value: object) -> bool:
    # a class attribute lookup: cheap, and never builds the interface dict
    return hasattr(type(value), "__array_interface__")


class VectorCodec(CompositeCodec):
    """Shared parts of the vector codecs: element codec, dimension, value intake."""

    def __init__(self, cql_name: str, elem: Codec, dim: i64, size: i64, flags: int) -> None:
        super().__init__(cql_name, size * dim if size >= 0 else -1, [elem])
        self.elem: Final = elem
        self.dim: Final = dim
        self.hashable: Final = (flags & FLAG_HASHABLE) != 0

    def items_of(self, value: object) -> list[object]:
        """The elements of ``value`` as a list of exactly ``dim`` items."""
        if isinstance(value, list):
            items = value
        elif isinstance(value, tuple):
            items = list(value)
        elif isinstance(value, (str, bytes, bytearray, memoryview)) or isinstance(value, Mapping):
            raise wrong_type(self.cql_name, value, "a sequence of elements")
        elif _is_array(value):
            converted: object = value.tolist()  # type: ignore[attr-defined]
            if not isinstance(converted, list):  # a 0-d array
                raise wrong_type(self.cql_name, value, "a 1-D array or a sequence of elements")
            items = converted
        elif isinstance(value, Iterable):
            items = list(value)
        else:
            raise wrong_type(self.cql_name, value, "a sequence of elements")
        if len(items) != self.dim:
            raise self.wrong_dimension(value, len(items))
        return items

    def wrong_dimension(self, value: object, observed: int) -> EncodeError:
        return out_of_range(self.cql_name, value,
                            f"expected {self.dim} elements, observed {observed}")

    def finish(self, out: list[object]) -> object:
        if self.hashable:
            return tuple(out)
        return out


class FixedVectorCodec(VectorCodec):
    """A vector of a fixed-size element type without a numeric fast path."""

    def __init__(self, cql_name: str, elem: Codec, dim: i64, size: i64, flags: int) -> None:
        super().__init__(cql_name, elem, dim, size, flags)
        self.size: Final = size

    def encode_into(self, w: BytesWriter, value: object) -> None:
        items = self.items_of(value)
        elem = self.elem
        size = self.size
        i = 0
        for x in items:
            if x is None:
                raise _null_element(self.cql_name, value, i)
            start: i64 = len(w)
            elem.encode_into(w, x)
            if len(w) - start != size:
                raise out_of_range(self.cql_name, value,
                                   f"element {i} encoded to {len(w) - start} bytes, not {size}")
            i += 1

    def decode(self, buf: bytes, pos: i64, n: i64) -> object:
        if n == 0:
            return None
        if n != self.fixed_size:
            raise malformed(self.cql_name, pos,
                            f"expected {self.fixed_size} bytes ({self.dim} elements of "
                            f"{self.size}), observed {n}")
        elem = self.elem
        size = self.size
        out: list[object] = []
        p = pos
        for _i in range(self.dim):
            out.append(elem.decode(buf, p, size))
            p += size
        return self.finish(out)


class VariableVectorCodec(VectorCodec):
    """A vector of a variable-size element type: ``[unsigned vint]`` length per element."""

    def __init__(self, cql_name: str, elem: Codec, dim: i64, flags: int) -> None:
        super().__init__(cql_name, elem, dim, -1, flags)

    def encode_into(self, w: BytesWriter, value: object) -> None:
        items = self.items_of(value)
        elem = self.elem
        i = 0
        for x in items:
            if x is None:
                raise _null_element(self.cql_name, value, i)
            b = elem.encode(x)
            write_uvint(w, len(b))
            w.write(b)
            i += 1

    def decode(self, buf: bytes, pos: i64, n: i64) -> object:
        if n == 0:
            return None
        cql_name = self.cql_name
        dim = self.dim
        end = pos + n
        if dim > n:
            raise malformed(cql_name, pos,
                            f"{n} bytes cannot hold {dim} length-prefixed elements")
        elem = self.elem
        out: list[object] = []
        p = pos
        i: i64 = 0
        while i < dim:
            if p >= end:
                raise malformed(cql_name, p,
                                f"ran out of bytes after {i} of {dim} elements")
            ln, q = read_uvint(buf, p, end, cql_name)
            rest: int = end - q  # compared as int: ln may not fit an i64
            if ln > rest:
                raise malformed(cql_name, p,
                                # format(), not f"{ln}": mypyc 2.4.1 leaks ints >= 2**62 it str()s
                                "element " + format(i, "d") + " length " + format(ln, "d")
                                + f" exceeds the {end - q} bytes that remain")
            out.append(elem.decode(buf, q, ln))
            p = q + ln
            i += 1
        if p != end:
            raise malformed(cql_name, p,
                            f"{end - p} bytes remain after the last of {dim} elements")
        return self.finish(out)


class NumericVectorCodec(VectorCodec):
    """``vector<float|double|int|bigint, n>``: the hot path (see the module docstring)."""

    def __init__(self, cql_name: str, elem: Codec, dim: i64, kind: int, typecode: str,
                 struct_code: str, size: i64, flags: int) -> None:
        super().__init__(cql_name, elem, dim, size, flags)
        self.kind: Final = kind
        self.typecode: Final = typecode
        self.packer: Final = struct.Struct(f">{dim}{struct_code}")
        self.want_numpy: Final = (flags & FLAG_NUMPY) != 0 and not self.hashable
        self.np_decode: Callable[[bytes, int], object] | None = None
        self.np_encode: Callable[[object], bytes | None] | None = None
        # the struct fast path (interpreted build) takes bools; use it unchecked
        # only if the element codec itself accepts a bool
        self.check_bools: Final = not _accepts(elem, True)
        self.size: Final = size
        # two bytes that are zero in the encodings of both 0 and 1 (see _may_hold_bool)
        self.probe: Final = 3 if kind == K.FLOAT else 2 if kind == K.DOUBLE else size - 2
        self.probe2: Final = 2 if kind == K.FLOAT else 3 if kind == K.DOUBLE else size - 3

    # --- encoding ---

    def encode(self, value: object) -> bytes:
        if isinstance(value, list):
            items = value
        else:
            if not isinstance(value, tuple) and _is_array(value):
                done = self._encode_array(value)
                if done is not None:
                    return done
            items = self.items_of(value)
        if len(items) != self.dim:
            raise self.wrong_dimension(value, len(items))
        if not COMPILED:
            # one struct call for the whole vector; on any refusal the element loop
            # below raises the precise error
            try:
                packed: bytes = self.packer.pack(*items)
            except (struct.error, OverflowError, TypeError, ValueError, DeprecationWarning):
                pass  # DeprecationWarning: older numpy warns on np.bool_ as an index (-W error)
            else:
                if not self.check_bools or not self._may_hold_bool(packed) \
                        or not _has_bool(items):
                    return packed
        w = BytesWriter()
        self.write_items(w, value, items)
        return w.getvalue()

    def encode_into(self, w: BytesWriter, value: object) -> None:
        if COMPILED and isinstance(value, list):
            if len(value) != self.dim:
                raise self.wrong_dimension(value, len(value))
            self.write_items(w, value, value)
            return
        w.write(self.encode(value))

    def _encode_array(self, value: object) -> bytes | None:
        enc = self.np_encode
        if enc is None:
            from cqlcodec.codecs import numpy_vectors as numpy_support

            enc = numpy_support.vector_encoder(self.kind, self.dim, self.cql_name)
            self.np_encode = enc
        return enc(value)

    def _may_hold_bool(self, packed: bytes) -> bool:
        """False when no element of ``packed`` is the encoding of 0 or 1.

        The interpreted build packs a whole vector with one struct call, and struct
        takes bools, which the element codecs refuse. A bool (or numpy.bool_) packs
        exactly like 0 or 1, so when neither encoding occurs there was no bool and
        the exact per-element type scan (about 12 ns per element interpreted) is
        skipped. The probe byte is zero in both encodings and rarely zero in other
        values; its zero positions are found with memchr over a strided copy, and
        an element is suspect only if a second such byte is zero too.
        """
        size = self.size
        probe2 = self.probe2
        col = packed[self.probe::size]
        find = col.find
        j = find(0)
        seen = 0
        while j >= 0:
            if packed[j * size + probe2] == 0:
                return True  # maybe 0 or 1 (a false alarm costs one type scan)
            seen += 1
            if seen > 16:  # data with many zero probe bytes: just scan the types
                return True
            j = find(0, j + 1)
        return False

    def write_items(self, w: BytesWriter, value: object, items: list[object]) -> None:
        """Write exactly ``dim`` elements (already counted) with full validation."""
        kind = self.kind
        cql_name = self.cql_name
        i = 0
        f: float
        n: int
        if kind == K.FLOAT:
            for x in items:
                if type(x) is float:
                    f = x
                    if f >= F32_OVERFLOW or f <= -F32_OVERFLOW:
                        if f != _INF and f != -_INF:
                            raise out_of_range(cql_name, value,
                                               f"element {i} ({f!r}) does not fit a 32-bit float")
                    write_f32_be(w, f)
                else:
                    self._write_other(w, value, x, i)
                i += 1
        elif kind == K.DOUBLE:
            for x in items:
                if type(x) is float:
                    f = x
                    write_f64_be(w, f)
                else:
                    self._write_other(w, value, x, i)
                i += 1
        elif kind == K.INT:
            for x in items:
                if type(x) is int:
                    n = x
                    if n < _I32_MIN or n > _I32_MAX:
                        # format(), not f"{n}": mypyc 2.4.1 leaks ints >= 2**62 it str()s
                        raise out_of_range(cql_name, value, f"element {i} ("
                                           + format(n, "d") + ") does not fit a 32-bit int")
                    write_i32_be(w, n)
                else:
                    self._write_other(w, value, x, i)
                i += 1
        else:
            try:
                for x in items:
                    if type(x) is int:
                        n = x
                        write_i64_be(w, n)  # raises OverflowError/ValueError out of range
                    else:
                        self._write_other(w, value, x, i)
                    i += 1
            except (OverflowError, ValueError):
                if isinstance(items[i], int):
                    raise out_of_range(cql_name, value,
                                       f"element {i} ({items[i]}) does not fit a 64-bit bigint"
                                       ) from None
                raise

    def _write_other(self, w: BytesWriter, value: object, x: object, i: int) -> None:
        if x is None:
            raise _null_element(self.cql_name, value, i)
        if self.kind == K.FLOAT and isinstance(x, float):  # float subclasses, e.g. numpy.float64
            f: float = x
            if (f >= F32_OVERFLOW or f <= -F32_OVERFLOW) and f != _INF and f != -_INF:
                raise out_of_range(self.cql_name, value,
                                   f"element {i} ({short_repr(x)}) does not fit a 32-bit float")
        self.elem.encode_into(w, x)

    # --- decoding ---

    def decode(self, buf: bytes, pos: i64, n: i64) -> object:
        if n == 0:
            return None
        if n != self.fixed_size:
            raise malformed(self.cql_name, pos,
                            f"expected {self.fixed_size} bytes ({self.dim} elements), "
                            f"observed {n}")
        if self.want_numpy:
            dec = self.np_decode
            if dec is None:
                dec = self._numpy_decoder()
            return dec(buf, pos)
        a = array(self.typecode, buf[pos:pos + n])
        if _SWAP:
            a.byteswap()
        out = a.tolist()
        if self.hashable:
            return tuple(out)
        return out

    def _numpy_decoder(self) -> Callable[[bytes, int], object]:
        from cqlcodec.codecs import numpy_vectors as numpy_support

        dec = numpy_support.vector_decoder(self.kind, self.dim)
        self.np_decode = dec
        return dec


def _has_bool(items: list[object]) -> bool:
    """Whether any item is a bool or a numpy bool (exact; one pass over the types)."""
    for t in set(map(type, items)):
        if issubclass(t, bool) or (t.__module__ == "numpy" and t.__name__ in ("bool_", "bool")):
            return True
    return False


def _accepts(elem: Codec, value: object) -> bool:
    """Whether the element codec encodes ``value`` (used to mirror its bool policy)."""
    try:
        elem.encode(value)
    except EncodeError:
        return False
    except NotImplementedError:
        return False
    return True
