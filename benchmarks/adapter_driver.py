"""scylla-driver and cassandra-driver: their Cython path and the pure-Python path.

Both distributions install the ``cassandra`` package; which one is present is told by
``cassandra.protocol_features`` (scylla-driver only), whose ``decode_message`` also
takes a ``protocol_features`` argument after the protocol version. The driver is
imported with importlib, so mypy sees it as ``Any``.

* Cython path (``impl`` scylla / cassandra): ``cassandra.protocol.ProtocolHandler``,
  which must be the ``CythonProtocolHandler`` (ListParser + compiled deserializers);
  the adapter refuses to run otherwise.
* pure-Python path (``cassandra-py``): ``_ProtocolHandler`` (Python
  ``recv_results_rows`` calling ``cqltype.from_binary``), the default without extensions.

Direct (de)serialization is ``cqltype.deserialize(data, 4)`` / ``serialize(v, 4)`` on
classes built with ``apply_parameters``; bind is ``PreparedStatement.bind`` and
``BoundStatement.bind`` with bind metadata from the driver's own PREPARED parser.

Columnar (W5 columnar) is the driver's ``NumpyProtocolHandler`` (Cython only): a dict of
numpy masked arrays for six numeric types, object arrays for the rest. If it raises
(cassandra-driver 3.30.1 on numpy 2: ``ndarray.newbyteorder`` is gone) the case is
reported as failing, not timed. W7 is the Cython rows plus ``pandas.DataFrame(rows)``.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

import harness as h
import workloads as wl

_CQLTYPE_NAMES = {
    "int": "Int32Type",
    "bigint": "LongType",
    "double": "DoubleType",
    "float": "FloatType",
    "text": "UTF8Type",
    "boolean": "BooleanType",
    "uuid": "UUIDType",
    "decimal": "DecimalType",
    "varint": "IntegerType",
    "timestamp": "TimestampType",
    "date": "SimpleDateType",
}
OPCODE_RESULT = 0x08


def _module(name: str) -> Any:
    return importlib.import_module(name)


class DriverAdapter:
    """One driver code path: ``cython=True`` insists on the compiled handler."""

    def __init__(self, name: str, cython: bool) -> None:
        self.name = name
        self.cython = cython
        self.cassandra = _module("cassandra")
        self.protocol = _module("cassandra.protocol")
        self.cqltypes = _module("cassandra.cqltypes")
        self.query = _module("cassandra.query")
        try:
            features_mod = _module("cassandra.protocol_features")
        except ImportError:
            self.distribution = "cassandra-driver"
            self.features: Any = None
        else:
            self.distribution = "scylla-driver"
            self.features = features_mod.ProtocolFeatures()
        if cython:
            handler = self.protocol.ProtocolHandler
            if not getattr(self.protocol, "HAVE_CYTHON", False) or handler.__name__ != "CythonProtocolHandler":
                raise RuntimeError(
                    f"{self.distribution} {self.cassandra.__version__} has no Cython extensions here "
                    f"(ProtocolHandler is {handler.__name__}); the benchmark needs its Cython path"
                )
            self.handler = handler
        else:
            self.handler = self.protocol._ProtocolHandler
        self._metadata_cache: dict[str, Any] = {}

    # ---------------------------------------------------------------- environment

    def info(self) -> dict[str, object]:
        cqltypes_file = str(self.cqltypes.__file__)
        return {
            "impl": self.name,
            "distribution": self.distribution,
            "version": self.cassandra.__version__,
            "location": os.path.dirname(str(self.cassandra.__file__)),
            "have_cython": bool(getattr(self.protocol, "HAVE_CYTHON", False)),
            "handler": f"{self.handler.__module__}.{self.handler.__qualname__}",
            "cqltypes_compiled": not cqltypes_file.endswith(".py"),
            "path": ("Cython (CythonProtocolHandler/ListParser, compiled deserializers)" if self.cython
                     else "pure-Python path (_ProtocolHandler, cqltypes.from_binary)"),
        }

    # ---------------------------------------------------------------- helpers

    def cqltype(self, spec: wl.Spec) -> Any:
        """The driver's cqltype class for ``spec``, built with apply_parameters."""
        ct = self.cqltypes
        if spec.name == "list":
            return ct.ListType.apply_parameters([self.cqltype(spec.params[0])])
        if spec.name == "map":
            return ct.MapType.apply_parameters([self.cqltype(p) for p in spec.params])
        if spec.name == "tuple":
            return ct.TupleType.apply_parameters([self.cqltype(p) for p in spec.params])
        if spec.name == "vector":
            return ct.VectorType.apply_parameters([self.cqltype(spec.params[0]), spec.dim], None)
        return getattr(ct, _CQLTYPE_NAMES[spec.name])

    def _decode_args(self, body: bytes, result_metadata: Any) -> tuple[Any, ...]:
        if self.features is not None:
            return (4, self.features, {}, 0, 0, OPCODE_RESULT, body, None, result_metadata)
        return (4, {}, 0, 0, OPCODE_RESULT, body, None, result_metadata)

    def _decode_stmt(self) -> str:
        if self.features is not None:
            return "decode(4, features, udt, 0, 0, 8, body, None, md)"
        return "decode(4, udt, 0, 0, 8, body, None, md)"

    def decode(self, body: bytes, result_metadata: Any) -> Any:
        """decode_message of a RESULT body, as Connection.process_msg calls it."""
        return self.handler.decode_message(*self._decode_args(body, result_metadata))

    def result_metadata(self, columns: list[wl.Column]) -> Any:
        """The column_metadata the driver builds from inline metadata (PreparedStatement.result_metadata)."""
        body = wl.rows_body(columns, [], prepared=False)
        return self.decode(body, None).column_metadata

    def _rows_bench(self, body: bytes, md: Any, what: str, expected: list[wl.Row]) -> h.Bench:
        msg = self.decode(body, md)
        h.check(f"{self.name} {what}", list(msg.parsed_rows), expected)
        message_class = type(msg).__name__
        if (message_class == "FastResultMessage") != self.cython:
            raise h.CheckFailed(f"{self.name} {what}: decoded by {message_class}, "
                                f"expected the {'Cython' if self.cython else 'pure-Python'} path")
        env: dict[str, object] = {"decode": self.handler.decode_message, "body": body, "md": md,
                                  "udt": {}, "features": self.features}
        return h.Bench(self._decode_stmt(), env, f"{self.handler.__name__}.decode_message")

    # ---------------------------------------------------------------- cases

    def build(self, case: h.Case) -> h.Bench:
        kind = case.kind
        if kind == "vec_decode":
            vt = self.cqltype(wl.parse_spec(f"vector<float,{case.dim}>"))
            data = wl.vector_bytes(wl.vector_value(case.dim))
            h.check(f"{self.name} {case.id}", vt.deserialize(data, 4), wl.vector_value(case.dim))
            return h.Bench("des(data, 4)", {"des": vt.deserialize, "data": data}, "VectorType.deserialize")
        if kind == "vec_encode":
            vt = self.cqltype(wl.parse_spec(f"vector<float,{case.dim}>"))
            v = wl.vector_value(case.dim)
            h.check(f"{self.name} {case.id}", vt.serialize(v, 4), wl.vector_bytes(v))
            return h.Bench("ser(v, 4)", {"ser": vt.serialize, "v": v}, "VectorType.serialize")
        if kind in ("vec_rows", "scalar_rows"):
            if kind == "vec_rows":
                spec = wl.parse_spec(f"vector<float,{case.dim}>")
                value: object = wl.vector_value(case.dim)
            else:
                spec, value = case.scalar.spec, case.scalar.value
            columns, rows = wl.single_column_rows(spec, value, case.nrows)
            md = self.result_metadata(columns)
            return self._rows_bench(wl.rows_body(columns, rows, True), md, case.id, rows)
        if kind == "scalar_decode":
            sc = case.scalar
            t = self.cqltype(sc.spec)
            h.check(f"{self.name} {case.id}", t.deserialize(sc.data, 4), sc.value)
            return h.Bench("des(data, 4)", {"des": t.deserialize, "data": sc.data},
                           f"{t.__name__}.deserialize")
        if kind == "scalar_encode":
            sc = case.scalar
            t = self.cqltype(sc.spec)
            h.check(f"{self.name} {case.id}", t.serialize(sc.value, 4), sc.data)
            return h.Bench("ser(v, 4)", {"ser": t.serialize, "v": sc.value}, f"{t.__name__}.serialize")
        if kind == "rows":
            rc = wl.rows_case(case.key)
            if case.flag:
                return self._rows_bench(rc.prepared, self.result_metadata(rc.columns), case.id, rc.rows)
            return self._rows_bench(rc.unprepared, None, case.id, rc.rows)
        if kind == "columns":
            return self._numpy_handler(case)
        if kind == "rows_frame":
            return self._rows_frame(case)
        if kind in ("columns_numpy", "frame"):
            raise h.Unsupported("no columnar path but NumpyProtocolHandler (W5/columnar/*)")
        if kind == "bind":
            return self._bind(case)
        if kind == "make_deserializers":
            if not self.cython:
                raise h.Unsupported("the pure-Python path has no deserializer objects")
            types = [self.cqltype(spec) for _name, spec in wl.wide_columns(case.nrows)]
            make = _module("cassandra.deserializers").make_deserializers
            if len(make(types)) != case.nrows:
                raise h.CheckFailed(f"{self.name} {case.id}: wrong number of deserializers")
            return h.Bench("make(types)", {"make": make, "types": types},
                           "cassandra.deserializers.make_deserializers (no cache)")
        if kind == "parse_desc":
            columns = wl.wide_columns(case.nrows)
            if case.flag:
                body = wl.rows_body(columns, [], prepared=True)
                return self._rows_bench(body, self.result_metadata(columns), case.id, [])
            return self._rows_bench(wl.rows_body(columns, [], prepared=False), None, case.id, [])
        raise h.Unsupported(f"{self.name} has no equivalent of {kind}")

    def _numpy_handler(self, case: h.Case) -> h.Bench:
        """W5 through NumpyProtocolHandler on the same body and metadata as the row path;
        for (d), the embeddings are then stacked into one float32 matrix."""
        if not self.cython:
            raise h.Unsupported("NumpyProtocolHandler exists only with the Cython extensions")
        handler = getattr(self.protocol, "NumpyProtocolHandler", None)
        if handler is None:
            raise h.Unsupported("cassandra.protocol.NumpyProtocolHandler is None (numpy not importable)")
        rc = wl.rows_case(case.key)
        np: Any = _module("numpy")
        env: dict[str, object] = {"decode": handler.decode_message, "body": rc.prepared,
                                  "md": self.result_metadata(rc.columns), "udt": {},
                                  "features": self.features, "array": np.array, "f4": np.float32}
        what = f"{self.name} {case.id}"
        if case.key == "d":
            bench = h.Bench(f"m = {self._decode_stmt()}\narray(m.parsed_rows['embedding'].tolist(), f4)", env,
                            "NumpyProtocolHandler (object array of lists) + numpy.array(..., float32)")
        else:
            bench = h.Bench(self._decode_stmt(), env, "NumpyProtocolHandler.decode_message")
        try:
            msg = handler.decode_message(*self._decode_args(rc.prepared, env["md"]))
        except Exception as exc:
            raise h.PeerFails(f"NumpyProtocolHandler raises {type(exc).__name__}: {exc}") from exc
        if msg.parsed_rows is None:
            raise h.PeerFails("NumpyProtocolHandler returns no rows (parsed_rows is None: it swallows the "
                              f"error of its numpy parser{self._numpy_parser_error(np)})")
        got: Any = h.run_once(bench)
        expected = h.transpose(rc.rows)
        if case.key == "d":
            if got.dtype != np.float32 or got.shape != (len(rc.rows), rc.columns[1][1].dim):
                raise h.CheckFailed(f"{what}: matrix of {got.dtype} {got.shape}")
            h.check(what, got, expected[1])
        else:
            arrays = got.parsed_rows
            h.check(what, [arrays[name].tolist() for name, _s in rc.columns], expected)
        return bench

    def _numpy_parser_error(self, np: Any) -> str:
        """``, which is: <error>`` when the driver's byte-order fix-up of the numpy parser
        raises on a big-endian array (numpy 2 removed ``ndarray.newbyteorder``), else ``""``."""
        try:
            _module("cassandra.numpy_parser").make_native_byteorder(np.zeros(1, ">i4"))
        except Exception as exc:
            return f", which is: {type(exc).__name__}: {exc}"
        return ""

    def _rows_frame(self, case: h.Case) -> h.Bench:
        """W7: the Cython rows, then ``pandas.DataFrame(rows, columns=names)`` (the driver's
        row factory is left out, which only spares the driver work)."""
        if not self.cython:
            raise h.Unsupported("W7 compares with the drivers' Cython path")
        try:
            pandas: Any = _module("pandas")
        except ImportError:
            raise h.Unsupported("pandas is not installed here") from None
        rc = wl.page_case(case.nrows)
        names = [name for name, _s in rc.columns]
        env: dict[str, object] = {"decode": self.handler.decode_message, "body": rc.prepared,
                                  "md": self.result_metadata(rc.columns), "udt": {},
                                  "features": self.features, "DataFrame": pandas.DataFrame, "names": names}
        bench = h.Bench(f"DataFrame({self._decode_stmt()}.parsed_rows, columns=names)", env,
                        f"{self.handler.__name__} rows + pandas.DataFrame(rows)", clock="process",
                        warmup=False)
        h.check_frame(f"{self.name} {case.id}", h.run_once(bench), names, rc.rows)
        return bench

    def _bind(self, case: h.Case) -> h.Bench:
        bc = wl.bind_case(case.key)
        prepared_msg = self.decode(wl.prepared_body(bc.columns, [], [0]), None)
        ps = self.query.PreparedStatement(
            column_metadata=prepared_msg.bind_metadata,
            query_id=prepared_msg.query_id,
            routing_key_indexes=[0],
            query="INSERT INTO peerbench.t (...) VALUES (...)",
            keyspace=wl.KEYSPACE,
            protocol_version=4,
            result_metadata=None,
            result_metadata_id=None,
        )
        values = bc.values
        bound = ps.bind(values)
        h.check(f"{self.name} {case.id}", list(bound.values), bc.expected)
        if case.flag:
            bs = self.query.BoundStatement(ps)
            h.check(f"{self.name} {case.id}", list(bs.bind(values).values), bc.expected)
            return h.Bench("bs.bind(values)", {"bs": bs, "values": values}, "BoundStatement.bind (reused)")
        return h.Bench("bind(values)", {"bind": ps.bind, "values": values}, "PreparedStatement.bind")


def adapter(impl: str) -> DriverAdapter:
    """The adapter of a driver impl name (scylla, cassandra, cassandra-py)."""
    adapter = DriverAdapter(impl, cython=impl != h.IMPL_CASSANDRA_PY)
    expected = "scylla-driver" if impl == h.IMPL_SCYLLA else "cassandra-driver"
    if adapter.distribution != expected:
        raise RuntimeError(f"impl {impl} expects {expected} but {adapter.distribution} is installed")
    return adapter
