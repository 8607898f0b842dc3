"""cqlcodec, compiled or interpreted: whichever build is installed in this interpreter.

The impl name says which build is expected (``cqlcodec`` = compiled, ``cqlcodec-pure``
= interpreted) and the adapter refuses to run if ``cqlcodec.COMPILED`` disagrees.
Public API only: ``parse_type``, ``CqlType.serialize/deserialize``, ``Prepared``,
``ColumnSpec``, ``decode_result``, ``decode_columns``, ``Prepared.bind``,
``find_deserializer``, ``make_deserializers``. A case whose API is not there (yet) is
reported as n/a with the missing name, a DataFrame case without its library likewise.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

import harness as h
import numpy as np
import workloads as wl


class CqlcodecAdapter:
    """cqlcodec's public API on the workloads."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.cq: Any = importlib.import_module("cqlcodec")
        expect_compiled = name == h.IMPL_CQLCODEC
        if bool(self.cq.COMPILED) != expect_compiled:
            build = "compiled" if self.cq.COMPILED else "interpreted"
            raise RuntimeError(f"impl {name} needs the {'compiled' if expect_compiled else 'interpreted'} "
                               f"build but the {build} build is installed ({self.cq.__file__})")
        self._prepared: dict[tuple[str, ...], Any] = {}

    def info(self) -> dict[str, object]:
        return {
            "impl": self.name,
            "version": self.cq.__version__,
            "COMPILED": bool(self.cq.COMPILED),
            "location": os.path.dirname(str(self.cq.__file__)),
            "path": "mypyc-compiled extensions" if self.cq.COMPILED else "interpreted .py modules",
        }

    # ---------------------------------------------------------------- helpers

    def api(self, name: str) -> Any:
        """A public name of cqlcodec, or Unsupported when it does not exist yet."""
        try:
            return getattr(self.cq, name)
        except AttributeError:
            raise h.Unsupported(f"cqlcodec.{name} is missing") from None

    def cqltype(self, spec: wl.Spec) -> Any:
        """The CqlType of a workload spec, through cqlcodec.parse_type."""
        return self.api("parse_type")(str(spec))

    def prepared(self, bind: list[wl.Column], result: list[wl.Column]) -> Any:
        """A Prepared built from column specs (as a driver builds it after PREPARE)."""
        key = tuple(f"{n} {s}" for n, s in bind) + ("|",) + tuple(f"{n} {s}" for n, s in result)
        if key not in self._prepared:
            spec = self.api("ColumnSpec")
            self._prepared[key] = self.api("Prepared")(
                bind_columns=[spec(wl.KEYSPACE, wl.TABLE, n, self.cqltype(s)) for n, s in bind],
                result_columns=[spec(wl.KEYSPACE, wl.TABLE, n, self.cqltype(s)) for n, s in result],
                pk_indexes=[0] if bind else [],
                protocol_version=wl.PROTO,
                query_id=wl.QUERY_ID,
            )
        return self._prepared[key]

    def _rows_bench(self, body: bytes, prepared: Any, what: str, expected: list[wl.Row],
                    numpy_vectors: bool = False) -> h.Bench:
        decode = self.api("decode_result")
        env: dict[str, object] = {"decode": decode, "body": body, "prepared": prepared}
        if numpy_vectors:
            stmt = "decode(body, 4, prepared, numpy_vectors=True)"
            result = decode(body, 4, prepared, numpy_vectors=True)
            if result.rows and not isinstance(result.rows[0][-1], np.ndarray):
                raise h.CheckFailed(f"{self.name} {what}: vectors did not come back as numpy arrays")
        elif prepared is None:
            stmt = "decode(body, 4)"
            result = decode(body, 4)
        else:
            stmt = "decode(body, 4, prepared)"
            result = decode(body, 4, prepared)
        h.check(f"{self.name} {what}", list(result.rows), expected)
        return h.Bench(stmt, env, "cqlcodec.decode_result")

    # ---------------------------------------------------------------- cases

    def build(self, case: h.Case) -> h.Bench:
        kind = case.kind
        if kind in ("vec_decode", "vec_decode_numpy", "vec_encode", "vec_encode_f32"):
            return self._vector(case)
        if kind in ("vec_rows", "scalar_rows"):
            if kind == "vec_rows":
                spec = wl.parse_spec(f"vector<float,{case.dim}>")
                value: object = wl.vector_value(case.dim)
            else:
                spec, value = case.scalar.spec, case.scalar.value
            columns, rows = wl.single_column_rows(spec, value, case.nrows)
            return self._rows_bench(wl.rows_body(columns, rows, True), self.prepared([], columns),
                                    case.id, rows)
        if kind == "scalar_decode":
            sc = case.scalar
            t = self.cqltype(sc.spec)
            h.check(f"{self.name} {case.id}", t.deserialize(sc.data, 4), sc.value)
            return h.Bench("des(data, 4)", {"des": t.deserialize, "data": sc.data}, "CqlType.deserialize")
        if kind == "scalar_encode":
            sc = case.scalar
            t = self.cqltype(sc.spec)
            h.check(f"{self.name} {case.id}", t.serialize(sc.value, 4), sc.data)
            return h.Bench("ser(v, 4)", {"ser": t.serialize, "v": sc.value}, "CqlType.serialize")
        if kind in ("rows", "rows_numpy"):
            rc = wl.rows_case(case.key)
            if case.flag:
                return self._rows_bench(rc.prepared, self.prepared([], rc.columns), case.id, rc.rows,
                                        numpy_vectors=kind == "rows_numpy")
            return self._rows_bench(rc.unprepared, None, case.id, rc.rows)
        if kind in ("columns", "columns_numpy"):
            return self._columns(case)
        if kind in ("frame", "rows_frame"):
            return self._frame(case)
        if kind == "bind":
            bc = wl.bind_case(case.key)
            prepared = self.prepared(bc.columns, [])
            bound = prepared.bind(bc.values)
            h.check(f"{self.name} {case.id}", list(bound.values), bc.expected)
            return h.Bench("bind(values)", {"bind": prepared.bind, "values": bc.values}, "Prepared.bind")
        if kind == "find_deserializer":
            find = self.api("find_deserializer")
            t = self.cqltype(wl.parse_spec("vector<float,1536>"))
            if find(t) is not find(t):
                raise h.CheckFailed(f"{self.name} {case.id}: find_deserializer does not cache")
            return h.Bench("find(t)", {"find": find, "t": t}, "find_deserializer (cache hit)")
        if kind == "make_deserializers":
            make = self.api("make_deserializers")
            types = [self.cqltype(spec) for _name, spec in wl.wide_columns(case.nrows)]
            if len(make(types)) != case.nrows:
                raise h.CheckFailed(f"{self.name} {case.id}: wrong number of deserializers")
            return h.Bench("make(types)", {"make": make, "types": types}, "make_deserializers (cache hit)")
        if kind == "parse_desc":
            columns = wl.wide_columns(case.nrows)
            if case.flag:
                return self._rows_bench(wl.rows_body(columns, [], True), self.prepared([], columns),
                                        case.id, [])
            return self._rows_bench(wl.rows_body(columns, [], False), None, case.id, [])
        raise h.Unsupported(kind)

    def _columns(self, case: h.Case) -> h.Bench:
        """W5 through decode_columns: the batch, every column's numpy form, or (d) the
        embeddings as one float32 matrix."""
        rc = wl.rows_case(case.key)
        env: dict[str, object] = {"decode": self.api("decode_columns"), "body": rc.prepared,
                                  "prepared": self.prepared([], rc.columns)}
        what = f"{self.name} {case.id}"
        expected = h.transpose(rc.rows)
        if case.kind == "columns_numpy":
            bench = h.Bench("[c.to_numpy() for c in decode(body, 4, prepared)]", env,
                            "decode_columns + Column.to_numpy() of every column")
            arrays: Any = h.run_once(bench)
            h.check(what, [a.tolist() for a in arrays], expected)
            return bench
        if case.key == "d":
            bench = h.Bench("decode(body, 4, prepared)['embedding'].to_numpy()", env,
                            "decode_columns + Column.to_numpy(): (rows, 768) float32 matrix")
            matrix: Any = h.run_once(bench)
            if (type(matrix) is not np.ndarray or matrix.dtype != np.float32
                    or matrix.shape != (len(rc.rows), rc.columns[1][1].dim)):
                raise h.CheckFailed(f"{what}: expected a plain float32 ndarray of shape "
                                    f"({len(rc.rows)}, {rc.columns[1][1].dim}), got {matrix!r:.120}")
            h.check(what, matrix, expected[1])
            return bench
        bench = h.Bench("decode(body, 4, prepared)", env, "cqlcodec.decode_columns")
        batch: Any = h.run_once(bench)
        if list(batch.names) != [n for n, _s in rc.columns] or batch.num_rows != len(rc.rows):
            raise h.CheckFailed(f"{what}: batch {batch!r:.160} does not match the columns and rows")
        h.check(what, [c.to_pylist() for c in batch], expected)
        return bench

    def _frame(self, case: h.Case) -> h.Bench:
        """W7: the page into a DataFrame, through decode_columns (``frame``) or through
        the rows of decode_result (``rows_frame``, as a user of the row path does)."""
        try:
            library: Any = importlib.import_module(case.key)
        except ImportError:
            raise h.Unsupported(f"{case.key} is not installed here") from None
        rc = wl.page_case(case.nrows)
        names = [n for n, _s in rc.columns]
        env: dict[str, object] = {"body": rc.prepared, "prepared": self.prepared([], rc.columns)}
        if case.kind == "rows_frame":
            env.update(decode=self.api("decode_result"), DataFrame=library.DataFrame, names=names)
            bench = h.Bench("DataFrame(decode(body, 4, prepared).rows, columns=names)", env,
                            "decode_result rows + pandas.DataFrame(rows)", clock="process", warmup=False)
        else:
            env["decode"] = self.api("decode_columns")
            note = f"decode_columns(...).to_{case.key}()"
            if case.key == "pandas":
                note += " (pyarrow: ArrowDtype columns)" if _has("pyarrow") else " (no pyarrow: numpy columns)"
            bench = h.Bench(f"decode(body, 4, prepared).to_{case.key}()", env, note,
                            clock="process", warmup=False)
        h.check_frame(f"{self.name} {case.id}", h.run_once(bench), names, rc.rows)
        return bench

    def _vector(self, case: h.Case) -> h.Bench:
        t = self.cqltype(wl.parse_spec(f"vector<float,{case.dim}>"))
        values = wl.vector_value(case.dim)
        data = wl.vector_bytes(values)
        if case.kind == "vec_decode":
            h.check(f"{self.name} {case.id}", t.deserialize(data, 4), values)
            return h.Bench("des(data, 4)", {"des": t.deserialize, "data": data}, "CqlType.deserialize")
        if case.kind == "vec_decode_numpy":
            got = t.deserialize(data, 4, numpy=True)
            if not isinstance(got, np.ndarray):
                raise h.CheckFailed(f"{self.name} {case.id}: numpy=True returned {type(got).__name__}")
            h.check(f"{self.name} {case.id}", got, values)
            return h.Bench("des(data, 4, numpy=True)", {"des": t.deserialize, "data": data},
                           "CqlType.deserialize(numpy=True)")
        if case.kind == "vec_encode":
            h.check(f"{self.name} {case.id}", t.serialize(values, 4), data)
            return h.Bench("ser(v, 4)", {"ser": t.serialize, "v": values}, "CqlType.serialize(list)")
        arr = np.asarray(values, dtype=np.float32)
        h.check(f"{self.name} {case.id}", t.serialize(arr, 4), data)
        return h.Bench("ser(arr, 4)", {"ser": t.serialize, "arr": arr}, "CqlType.serialize(float32 ndarray)")


def _has(module: str) -> bool:
    """Whether ``module`` can be imported here."""
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True
