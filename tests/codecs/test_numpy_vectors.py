"""numpy arrays for numeric vectors: decoding on request, encoding any numeric dtype."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
from typing import Any

import pytest

from cqlcodec import (
    CodecError,
    EncodeTypeError,
    EncodeValueError,
    kinds,
    list_of,
    scalar_type,
    set_of,
    vector_of,
)
from cqlcodec.codecs import numpy_vectors as numpy_support

np: Any = pytest.importorskip("numpy")

FLOAT = scalar_type(kinds.FLOAT)
DOUBLE = scalar_type(kinds.DOUBLE)
INT = scalar_type(kinds.INT)
BIGINT = scalar_type(kinds.BIGINT)
NUMERIC = [(FLOAT, "f", np.float32), (DOUBLE, "d", np.float64), (INT, "i", np.int32),
           (BIGINT, "q", np.int64)]
F32_OVERFLOW = 3.4028235677973366e38


@pytest.mark.parametrize(("sub", "code", "dtype"), NUMERIC)
def test_decode_to_native_arrays(sub: Any, code: str, dtype: Any) -> None:
    values = [1, -2, 3, 0, 7]
    data = struct.pack(f">5{code}", *values)
    t = vector_of(sub, 5)
    arr = t.deserialize(data, numpy=True)
    assert isinstance(arr, np.ndarray)
    assert arr.dtype == np.dtype(dtype) and arr.dtype.isnative
    assert arr.shape == (5,) and arr.tolist() == values
    assert arr.flags.writeable and arr.flags.owndata
    arr[0] = 9  # a private copy, not a view of the buffer
    assert t.deserialize(data) == values
    assert t.deserialize(b"", numpy=True) is None


def test_decode_at_an_offset_and_nested() -> None:
    c = vector_of(FLOAT, 2).codec(2)
    buf = b"\x00" * 3 + struct.pack(">2f", 1.5, -1.0)
    assert c.decode(buf, 3, 8).tolist() == [1.5, -1.0]  # type: ignore[attr-defined]
    t = list_of(vector_of(DOUBLE, 2))
    got = t.deserialize(t.serialize([[1.0, 2.0], [3.0, 4.0]]), numpy=True)
    assert isinstance(got, list) and all(isinstance(a, np.ndarray) for a in got)
    # where hashable values are needed, vectors stay tuples
    s = set_of(vector_of(INT, 2))
    assert s.deserialize(s.serialize([[1, 2]]), numpy=True) == {(1, 2)}
    # non-numeric vectors are unaffected
    tv = vector_of(scalar_type(kinds.TEXT), 1)
    assert tv.deserialize(tv.serialize(["a"]), numpy=True) == ["a"]


@pytest.mark.parametrize("dtype", ["<f4", ">f4", "<f8", ">f8", "f2", "i1", "u1", "<i2", ">i4",
                                   "<i8", ">u4", "u8", "longdouble"])
def test_encode_any_numeric_dtype_to_float_and_double(dtype: str) -> None:
    values = [0, 1, 2, 100, 3]
    arr = np.array(values, dtype=dtype)
    assert vector_of(FLOAT, 5).serialize(arr) == struct.pack(">5f", *values)
    assert vector_of(DOUBLE, 5).serialize(arr) == struct.pack(">5d", *values)


@pytest.mark.parametrize("dtype", ["i1", "u1", "<i2", ">i2", "<i4", ">i4", "<i8", ">i8", "u2",
                                   "u4", "u8"])
def test_encode_integer_dtypes_to_int_vectors(dtype: str) -> None:
    values = [0, 1, 2, 100, 3]
    arr = np.array(values, dtype=dtype)
    assert vector_of(INT, 5).serialize(arr) == struct.pack(">5i", *values)
    assert vector_of(BIGINT, 5).serialize(arr) == struct.pack(">5q", *values)


def test_encode_checks_values_not_just_dtypes() -> None:
    with pytest.raises(EncodeValueError):
        vector_of(INT, 2).serialize(np.array([1, 2**31], dtype=np.int64))
    with pytest.raises(EncodeValueError):
        vector_of(INT, 2).serialize(np.array([-(2**31) - 1, 0], dtype=np.int64))
    with pytest.raises(EncodeValueError):
        vector_of(INT, 1).serialize(np.array([2**32 - 1], dtype=np.uint32))
    with pytest.raises(EncodeValueError):
        vector_of(BIGINT, 1).serialize(np.array([2**64 - 1], dtype=np.uint64))
    assert vector_of(INT, 2).serialize(np.array([-(2**31), 2**31 - 1], dtype=np.int64)) \
        == struct.pack(">2i", -(2**31), 2**31 - 1)
    assert vector_of(BIGINT, 1).serialize(np.array([2**63 - 1], dtype=np.uint64)) \
        == struct.pack(">q", 2**63 - 1)


def test_float32_overflow_from_wider_floats() -> None:
    t = vector_of(FLOAT, 3)
    for big in (1e39, -1e300, F32_OVERFLOW):
        with pytest.raises(EncodeValueError):
            t.serialize(np.array([0.5, big, 0.25]))
    below = np.nextafter(F32_OVERFLOW, 0.0)
    assert t.serialize(np.array([below, np.inf, -np.inf])) == bytes.fromhex(
        "7f7fffff 7f800000 ff800000".replace(" ", ""))
    got = t.serialize(np.array([np.nan, 1.0, 2.0]))
    assert got[4:] == struct.pack(">2f", 1.0, 2.0)
    assert np.isnan(struct.unpack(">f", got[:4])[0])
    ld = np.array([1.0, 2.0, 1e39], dtype=np.longdouble)
    with pytest.raises(EncodeValueError):
        t.serialize(ld)


def test_refused_dtypes_and_shapes() -> None:
    for arr in (np.array([1.5, 2.0]), np.array([1.0, 2.0], dtype=np.float32)):
        with pytest.raises(EncodeTypeError):
            vector_of(INT, 2).serialize(arr)
        with pytest.raises(EncodeTypeError):
            vector_of(BIGINT, 2).serialize(arr)
    for bad in (np.array([True, False]), np.array([1 + 2j, 3j]), np.array(["a", "b"]),
                np.array(["2024-01-01", "2024-01-02"], dtype="datetime64[D]")):
        for sub in (FLOAT, DOUBLE, INT, BIGINT):
            with pytest.raises(EncodeTypeError):
                vector_of(sub, 2).serialize(bad)
    with pytest.raises(EncodeValueError, match="expected 3 elements, observed 2"):
        vector_of(FLOAT, 3).serialize(np.zeros(2, dtype=np.float32))
    with pytest.raises(EncodeValueError, match="1-D"):
        vector_of(FLOAT, 2).serialize(np.zeros((1, 2), dtype=np.float32))
    with pytest.raises(EncodeValueError):
        vector_of(FLOAT, 1).serialize(np.float32(1.0).reshape(()))
    for zero_d in (np.array("a"), np.array(None, dtype=object), np.array(1.0, dtype=object)):
        for sub in (FLOAT, scalar_type(kinds.TEXT)):
            with pytest.raises(EncodeTypeError):
                vector_of(sub, 1).serialize(zero_d)


def test_views_scalars_and_object_arrays() -> None:
    base = np.arange(10, dtype=np.float32)
    assert vector_of(FLOAT, 5).serialize(base[::2]) == struct.pack(">5f", 0, 2, 4, 6, 8)
    assert vector_of(DOUBLE, 3).serialize(base[::-1][:3]) == struct.pack(">3d", 9, 8, 7)
    # numpy scalars in a list go through the element codecs
    assert vector_of(FLOAT, 2).serialize([np.float32(1.5), np.float64(2.0)]) \
        == struct.pack(">2f", 1.5, 2.0)
    assert vector_of(INT, 2).serialize([np.int64(5), np.uint8(6)]) == struct.pack(">2i", 5, 6)
    with pytest.raises(EncodeTypeError):
        vector_of(INT, 1).serialize([np.bool_(True)])
    with pytest.raises(EncodeTypeError):
        vector_of(FLOAT, 2).serialize([np.float32(1.0), np.bool_(False)])
    with pytest.raises(EncodeValueError):
        vector_of(FLOAT, 1).serialize([np.float64(1e300)])
    obj = np.array([1.0, 2], dtype=object)
    assert vector_of(FLOAT, 2).serialize(obj) == struct.pack(">2f", 1.0, 2.0)
    with pytest.raises(EncodeTypeError):
        vector_of(FLOAT, 2).serialize(np.array([1.0, None], dtype=object))
    # arrays for non-numeric element types are taken element by element
    assert vector_of(scalar_type(kinds.SMALLINT), 2).serialize(np.array([1, -1])) \
        == bytes.fromhex("0200010 2ffff".replace(" ", ""))
    nested = vector_of(vector_of(FLOAT, 2), 2)
    assert nested.serialize(np.array([[1, 2], [3, 4]], dtype=np.float32)) \
        == struct.pack(">4f", 1, 2, 3, 4)


def test_round_trip_random_arrays() -> None:
    rng = np.random.default_rng(7)
    for sub, _code, dtype in NUMERIC:
        if np.dtype(dtype).kind == "f":
            arr = rng.standard_normal(1536).astype(dtype)
        else:
            info = np.iinfo(dtype)
            arr = rng.integers(info.min, info.max, 1536, dtype=dtype, endpoint=True)
        t = vector_of(sub, 1536)
        data = t.serialize(arr)
        assert data == t.serialize(arr.tolist())
        assert data == t.serialize(arr.astype(arr.dtype.newbyteorder()))
        back: Any = t.deserialize(data, numpy=True)
        assert back.dtype == arr.dtype and (back == arr).all()


def test_numpy_missing_is_a_clear_codec_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(numpy_support, "np", None)
    with pytest.raises(CodecError, match=r"pip install cqlcodec\[numpy\]") as info:
        numpy_support.require_numpy()
    assert isinstance(info.value, ImportError)


def test_numpy_is_imported_only_when_used() -> None:
    code = (
        "import sys\n"
        "sys.modules['numpy'] = None  # any import of numpy now fails\n"
        "from cqlcodec import vector_of, scalar_type, kinds, CodecError\n"
        "t = vector_of(scalar_type(kinds.FLOAT), 2)\n"
        "assert t.deserialize(t.serialize([1.0, 2.0])) == [1.0, 2.0]\n"
        "import cqlcodec.codecs.numpy_vectors as ns\n"
        "assert not ns.HAVE_NUMPY\n"
        "try:\n"
        "    t.deserialize(t.serialize([1.0, 2.0]), numpy=True)\n"
        "except CodecError as exc:\n"
        "    assert 'pip install cqlcodec[numpy]' in str(exc)\n"
        "else:\n"
        "    raise AssertionError('no error')\n"
        "print('ok')\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    # run from the tests directory (no cqlcodec/ there): `-P` would need Python 3.11+
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, check=False, timeout=120,
                         cwd=os.path.dirname(os.path.abspath(__file__)))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
