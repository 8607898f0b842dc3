"""Floors: the fastest stdlib/numpy construction of what each workload returns, no codec.

They bound what any Python codec can reach (the objects must be created anyway) and
are the yardstick of the "within 1.2x of the floor" targets.
"""

from __future__ import annotations

import importlib
import os
import struct
import sys
import uuid
from array import array
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Final

import harness as h
import numpy as np
import workloads as wl

_LITTLE: Final = sys.byteorder == "little"


def _uuid_from_bytes(data: bytes) -> uuid.UUID:
    """UUID without ``__init__`` (the floor of uuid decoding)."""
    u = uuid.UUID.__new__(uuid.UUID)
    object.__setattr__(u, "int", int.from_bytes(data, "big"))
    object.__setattr__(u, "is_safe", uuid.SafeUUID.unknown)
    return u


def _decimal_floor(data: bytes) -> Decimal:
    scale = int.from_bytes(data[:4], "big", signed=True)
    return Decimal(int.from_bytes(data[4:], "big", signed=True)).scaleb(-scale)


def _date_floor(data: bytes) -> object:
    return wl.EPOCH_DATE + timedelta(days=int.from_bytes(data, "big") - 2**31)


def _ts_floor(data: bytes) -> datetime:
    ms = int.from_bytes(data, "big", signed=True)
    return wl.EPOCH + timedelta(milliseconds=ms)


class FloorAdapter:
    """Stdlib/numpy floors; cases without a meaningful floor are Unsupported."""

    name = h.IMPL_FLOOR

    def info(self) -> dict[str, object]:
        return {"impl": self.name, "numpy": np.__version__, "path": "stdlib struct/array/numpy"}

    def build(self, case: h.Case) -> h.Bench:
        bench = self._build(case)
        h.check(f"{self.name} {case.id}", h.run_once(bench), self._expected(case))
        return bench

    def _expected(self, case: h.Case) -> object:
        if case.kind in ("vec_decode", "vec_decode_numpy"):
            return wl.vector_value(case.dim)
        if case.kind in ("vec_encode", "vec_encode_f32"):
            return wl.vector_bytes(wl.vector_value(case.dim))
        if case.kind == "scalar_decode":
            return case.scalar.value
        if case.kind == "scalar_encode":
            return case.scalar.data
        if case.kind == "rows":
            return _rows_floor_expected(case.key)
        if case.kind == "rows_numpy":
            return [list(r) for r in wl.rows_case(case.key).rows]
        if case.kind == "bind":
            return wl.bind_case(case.key).expected
        if case.kind == "columns":
            if case.key == "d":
                return [v for _k, v in wl.rows_case("d").rows]
            return len(wl.rows_case(case.key).prepared)
        raise h.Unsupported(case.kind)

    def _build(self, case: h.Case) -> h.Bench:
        kind = case.kind
        if kind == "vec_decode":
            if not _LITTLE:
                raise h.Unsupported("array byteswap floor assumes a little-endian machine")
            data = wl.vector_bytes(wl.vector_value(case.dim))
            return h.Bench("a = array_f(data)\na.byteswap()\na.tolist()",
                           {"array_f": _array_f, "data": data}, "array('f') + byteswap + tolist")
        if kind == "vec_decode_numpy":
            data = wl.vector_bytes(wl.vector_value(case.dim))
            return h.Bench("frombuffer(data, be_f4).astype(f4)",
                           {"frombuffer": np.frombuffer, "data": data, "be_f4": np.dtype(">f4"),
                            "f4": np.float32}, "np.frombuffer('>f4').astype(float32)")
        if kind == "vec_encode":
            values = wl.vector_value(case.dim)
            return h.Bench("pack(*v)", {"pack": struct.Struct(">%df" % case.dim).pack, "v": values},
                           "Struct.pack(*v)")
        if kind == "vec_encode_f32":
            arr = np.asarray(wl.vector_value(case.dim), dtype=np.float32)
            return h.Bench("arr.astype(be_f4).tobytes()", {"arr": arr, "be_f4": np.dtype(">f4")},
                           "float32 ndarray .astype('>f4').tobytes()")
        if kind == "scalar_decode":
            return _scalar_decode_floor(case.scalar)
        if kind == "scalar_encode":
            return _scalar_encode_floor(case.scalar)
        if kind == "rows":
            return _rows_floor(case.key)
        if kind == "rows_numpy":
            return _rows_numpy_floor(case.key)
        if kind == "bind":
            return _bind_floor(case.key)
        if kind == "columns":
            return _columns_floor(case.key)
        raise h.Unsupported(f"no floor for {kind}")


def _array_f(data: bytes) -> array[float]:
    return array("f", data)


def _scalar_decode_floor(sc: wl.ScalarCase) -> h.Bench:
    data = sc.data
    name = sc.spec.name
    fixed = {"int": ">i", "bigint": ">q", "double": ">d", "float": ">f", "boolean": ">?"}
    if name in fixed:
        return h.Bench("unpack(data)[0]", {"unpack": struct.Struct(fixed[name]).unpack, "data": data},
                       "Struct.unpack")
    if name == "text":
        return h.Bench("data.decode('utf-8')", {"data": data}, "bytes.decode")
    if name == "uuid":
        return h.Bench("f(data)", {"f": _uuid_from_bytes, "data": data}, "UUID without __init__")
    if name == "varint":
        return h.Bench("from_bytes(data, 'big', signed=True)", {"from_bytes": int.from_bytes,
                                                                "data": data}, "int.from_bytes")
    if name == "decimal":
        return h.Bench("f(data)", {"f": _decimal_floor, "data": data}, "int.from_bytes + scaleb")
    if name == "timestamp":
        return h.Bench("f(data)", {"f": _ts_floor, "data": data}, "EPOCH + timedelta(ms)")
    if name == "date":
        return h.Bench("f(data)", {"f": _date_floor, "data": data}, "EPOCH + timedelta(days)")
    if name == "list":
        n = len(sc.value)  # type: ignore[arg-type]
        st = struct.Struct(">i" + "ii" * n)
        return h.Bench("list(unpack(data)[2::2])", {"unpack": st.unpack, "data": data},
                       "layout-specific Struct")
    if name == "map":
        return h.Bench("f(data)", {"f": _map_floor(sc), "data": data}, "layout-specific Struct")
    if name == "tuple":
        st = struct.Struct(">ii i5s id")
        return h.Bench("t = unpack(data)\n(t[1], t[3].decode(), t[5])",
                       {"unpack": st.unpack, "data": data}, "layout-specific Struct")
    raise h.Unsupported(name)


def _map_floor(sc: wl.ScalarCase) -> object:
    assert isinstance(sc.value, dict)
    fmt = ">i" + "".join(f"i{len(k)}sii" for k in sc.value)
    unpack = struct.Struct(fmt).unpack
    n = len(sc.value)

    def decode(data: bytes) -> dict[str, int]:
        t = unpack(data)
        return {t[1 + 4 * i + 1].decode(): t[1 + 4 * i + 3] for i in range(n)}

    return decode


def _scalar_encode_floor(sc: wl.ScalarCase) -> h.Bench:
    value = sc.value
    name = sc.spec.name
    fixed = {"int": ">i", "bigint": ">q", "double": ">d", "float": ">f", "boolean": ">?"}
    if name in fixed:
        return h.Bench("pack(v)", {"pack": struct.Struct(fixed[name]).pack, "v": value}, "Struct.pack")
    if name == "text":
        return h.Bench("v.encode('utf-8')", {"v": value}, "str.encode")
    if name == "uuid":
        return h.Bench("v.bytes", {"v": value}, "UUID.bytes")
    if name == "varint":
        return h.Bench("v.to_bytes(8, 'big', signed=True)", {"v": value}, "int.to_bytes (size known)")
    if name in ("decimal", "timestamp", "date", "list", "map", "tuple"):
        return h.Bench("enc(spec, v)", {"enc": wl.encode_value, "spec": sc.spec, "v": value},
                       "workloads.encode_value (reference encoder, not a floor)")
    raise h.Unsupported(name)


_W5_FIXED_ROW: Final = struct.Struct(">ii iq id i16s i?")


def _fixed_width_payload(key: str) -> bytes:
    """Fixed-width analogue of W5 (b)/(c): text as 16 bytes, length prefixes included."""
    rc = wl.rows_case(key)
    out = bytearray()
    for row in rc.rows:
        c_int, c_bigint, c_double, c_text, c_boolean = row
        text = str(c_text).encode()[:16].ljust(16, b".")
        out += _W5_FIXED_ROW.pack(4, c_int, 8, c_bigint, 8, c_double, 16, text, 1, c_boolean)
    return bytes(out)


def _rows_floor_expected(key: str) -> object:
    if key not in ("b", "c"):
        if key == "d":
            return [list(r) for r in wl.rows_case(key).rows]
        raise h.Unsupported(f"no floor for W5 ({key})")
    rc = wl.rows_case(key)
    return [(4, r[0], 8, r[1], 8, r[2], 16, str(r[3]).encode()[:16].ljust(16, b"."), 1, r[4])
            for r in rc.rows]


def _rows_floor(key: str) -> h.Bench:
    if key in ("b", "c"):
        return h.Bench("list(iter_unpack(payload))",
                       {"iter_unpack": _W5_FIXED_ROW.iter_unpack, "payload": _fixed_width_payload(key)},
                       "Struct.iter_unpack over a fixed-width analogue (text as 16 bytes)")
    if key == "d":
        rc = wl.rows_case(key)
        body = rc.prepared
        start = len(body) - sum(8 + 4 * 768 + 4 for _r in rc.rows)
        vec = struct.Struct(">768f").unpack_from
        i32 = struct.Struct(">i").unpack_from
        offsets = [start + i * (8 + 4 + 4 * 768) for i in range(len(rc.rows))]
        return h.Bench("[(i32(b, o + 4)[0], list(vec(b, o + 12))) for o in offsets]",
                       {"i32": i32, "vec": vec, "b": body, "offsets": offsets},
                       "one unpack_from pair per row")
    raise h.Unsupported(f"no floor for W5 ({key})")


def _rows_numpy_floor(key: str) -> h.Bench:
    rc = wl.rows_case(key)
    body = rc.prepared
    start = len(body) - sum(8 + 4 * 768 + 4 for _r in rc.rows)
    offsets = [start + i * (8 + 4 + 4 * 768) for i in range(len(rc.rows))]
    return h.Bench("[(i32(b, o + 4)[0], frombuffer(b, be_f4, 768, o + 12).astype(f4)) for o in offsets]",
                   {"i32": struct.Struct(">i").unpack_from, "frombuffer": np.frombuffer, "b": body,
                    "offsets": offsets, "be_f4": np.dtype(">f4"), "f4": np.float32},
                   "unpack_from + np.frombuffer per row")


def _bind_floor(key: str) -> h.Bench:
    bc = wl.bind_case(key)
    packers: list[object] = []
    for _name, spec in bc.columns:
        if spec.name in ("int", "bigint", "double", "float", "boolean"):
            fmt = {"int": ">i", "bigint": ">q", "double": ">d", "float": ">f", "boolean": ">?"}
            packers.append(struct.Struct(fmt[spec.name]).pack)
        elif spec.name == "text":
            packers.append(str.encode)
        elif spec.name == "uuid":
            packers.append(_uuid_bytes)
        elif spec.name == "vector":
            packers.append(_vector_packer(spec.dim))
        else:
            packers.append(_Encoder(spec))
    return h.Bench("[p(v) for p, v in zip(packers, values)]",
                   {"packers": packers, "values": bc.values},
                   "precompiled packers (decimal/timestamp/date via the reference encoder)")


def _uuid_bytes(u: uuid.UUID) -> bytes:
    return u.bytes


def _vector_packer(dim: int) -> object:
    pack = struct.Struct(">%df" % dim).pack

    def packer(v: list[float]) -> bytes:
        return pack(*v)

    return packer


class _Encoder:
    def __init__(self, spec: wl.Spec) -> None:
        self.spec = spec

    def __call__(self, value: object) -> bytes:
        return wl.encode_value(self.spec, value)


def _length_word_walk() -> object:
    """The compiled length-word walk (benchmarks/native/lengthword_floor.py, built by
    ``nox -s bench`` into ``CQLCODEC_FLOOR_DIR``)."""
    where = os.environ.get("CQLCODEC_FLOOR_DIR", "")
    if where and where not in sys.path:
        sys.path.insert(0, where)
    try:
        module = importlib.import_module("lengthword_floor")
    except ImportError:
        raise h.Unsupported("the compiled length-word floor is not built (tools/build_floor.py)") from None
    if not module.__file__ or not module.__file__.endswith(".so"):
        raise h.Unsupported("lengthword_floor is not compiled")
    return module.walk_length_words


def _columns_floor(key: str) -> h.Bench:
    """W5 columnar floors: (d) one frombuffer + astype of the page's 100 x 768 floats as
    one block; (b), (c), (e) the compiled walk over every cell's length word."""
    rc = wl.rows_case(key)
    body = rc.prepared
    if key == "d":
        vectors: list[list[float]] = [list(v) for _k, v in rc.rows]  # type: ignore[call-overload]
        block = b"".join(struct.pack(">768f", *v) for v in vectors)
        return h.Bench("frombuffer(block, be_f4).astype(f4).reshape(rows, 768)",
                       {"frombuffer": np.frombuffer, "block": block, "be_f4": np.dtype(">f4"),
                        "f4": np.float32, "rows": len(rc.rows)},
                       "one np.frombuffer('>f4').astype(float32) of the same values")
    kind, flags, ncols = struct.unpack_from(">iii", body, 0)
    if kind != 2 or flags != 0x0004:  # a Rows page without metadata or paging state
        raise h.Unsupported(f"W5 ({key}): unexpected page header {kind}/{flags:#x}")
    nrows = struct.unpack_from(">i", body, 12)[0]
    return h.Bench("walk(body, 16, end, nrows, ncols)",
                   {"walk": _length_word_walk(), "body": body, "end": len(body), "nrows": nrows,
                    "ncols": ncols},
                   "compiled walk over every cell's [int] length (benchmarks/native)")
