"""The fuzz targets: one function per public decoding entry point.

Each ``case_*`` function makes one or a few cases from ``rng`` and hands them to
the :class:`~fuzz.engine.Engine`.  Entry points that are not (yet) part of
cqlcodec's API are skipped and reported as such.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import cqlcodec
from cqlcodec import CqlType, list_of, map_of, scalar_type, set_of, tuple_of, user_type
from cqlcodec import kinds as K

from . import bodies as B
from .engine import Engine, judge_value
from .model import (
    NormError,
    Verdict,
    constructor_expr,
    gen_value_bytes,
    normalize,
    random_type,
    read_option_ref,
    ref_decode,
    write_option,
)
from .mutate import mutate, set_slot, truncate
from .refwire import Reader, Reject, Writer

try:
    import numpy  # noqa: F401

    HAVE_NUMPY = True
except ImportError:  # pragma: no cover - numpy is a test dependency
    HAVE_NUMPY = False

BAD_VERSIONS: tuple[int, ...] = (-(1 << 63), -1, 0, 1, 2, 6, 65, 0x41, 1 << 31, 1 << 64)


def api(name: str) -> Callable[..., Any] | None:
    """A public cqlcodec function, or None while it does not exist yet."""
    fn = getattr(cqlcodec, name, None)
    return fn if callable(fn) else None


def available_targets() -> dict[str, bool]:
    return {
        "deserialize": True,
        "truncate_all": True,
        "read_type_option": api("read_type_option") is not None,
        "decode_result": api("decode_result") is not None,
        "decode_prepared": api("decode_prepared") is not None,
        "result_with_prepared": api("decode_result") is not None and api("decode_prepared") is not None,
        "protocol_versions": True,
        "deep_nesting": True,
        "decode_columns": api("decode_columns") is not None,
        "reassembler": True,
    }


# --------------------------------------------------------------------------- deserialize

def _deserialize_case(engine: Engine, t: CqlType, data: bytes, desc: str, rng: random.Random) -> None:
    pv = rng.choice([3, 4, 4, 5])
    tz_aware = rng.random() < 0.2
    use_numpy = HAVE_NUMPY and rng.random() < 0.1
    verdict = ref_decode(t, data)
    arg: bytes | bytearray | memoryview = data
    roll = rng.random()
    if roll < 0.05:
        arg = bytearray(data)
    elif roll < 0.1:
        arg = memoryview(data)
    repro = {"type": constructor_expr(t), "data": data.hex(), "pv": pv, "tz_aware": tz_aware,
             "numpy": use_numpy, "mutation": desc, "arg": type(arg).__name__}

    def call() -> object:
        return t.deserialize(arg, pv, tz_aware=tz_aware, numpy=use_numpy)

    engine.run("deserialize", repro, len(data), call, judge_value(verdict, lambda v: normalize(t, v)))


def case_deserialize(engine: Engine, rng: random.Random) -> None:
    t = random_type(rng, rng.choice([1, 2, 3, 4]))
    data, slots, _expected = gen_value_bytes(rng, t)
    if rng.random() < 0.2:
        _deserialize_case(engine, t, data, "valid", rng)
        return
    donors = [data]
    mutated, desc = mutate(data, slots, rng, donors)
    _deserialize_case(engine, t, mutated, desc, rng)


def case_truncate_all(engine: Engine, rng: random.Random) -> None:
    """A valid value cut at every byte, and every length word set to every hostile value."""
    t = random_type(rng, rng.choice([1, 2, 3]))
    data, slots, _expected = gen_value_bytes(rng, t, max_elements=12)
    if len(data) > 400:
        data = data[:400]
        slots = [s for s in slots if s.offset + s.width <= 400]
    for at in range(len(data)):
        cut, desc = truncate(data, at)
        _deserialize_case(engine, t, cut, desc, rng)
    for slot in slots[:20]:
        for _i in range(4):
            mutated, desc = set_slot(data, slot, rng)
            _deserialize_case(engine, t, mutated, desc, rng)


# --------------------------------------------------------------------------- read_type_option

def _option_verdict(buf: bytes, offset: int) -> tuple[Verdict, int]:
    if offset < 0 or offset > len(buf):
        return Verdict("reject", None, "offset outside the buffer"), -1
    r = Reader(buf, offset)
    try:
        t = read_option_ref(r)
    except Reject as exc:
        return Verdict("reject", None, str(exc)), -1
    except RecursionError:
        return Verdict("either", None, "reference recursion limit"), -1
    if t is None:
        return Verdict("either", None, "custom class name or empty tuple/UDT"), -1
    return Verdict("accept", t.cql_name), r.pos


def case_read_type_option(engine: Engine, rng: random.Random) -> None:
    fn = api("read_type_option")
    assert fn is not None
    t = random_type(rng, rng.choice([1, 2, 3, 4]))
    w = Writer()
    prefix = rng.randbytes(rng.choice([0, 0, 1, 5]))
    w.raw(prefix)
    write_option(w, t)
    w.raw(rng.randbytes(rng.choice([0, 0, 3])))
    buf, desc = w.getvalue(), "valid"
    offset = len(prefix)
    roll = rng.random()
    if roll < 0.75:
        buf, desc = mutate(buf, w.slots, rng)
    elif roll < 0.8:
        offset = rng.choice([-1, -2, -(1 << 62), len(buf), len(buf) + 1, 1 << 40, (1 << 63) - 1])
        desc = f"offset={offset}"
    verdict, next_offset = _option_verdict(buf, offset)
    repro = {"data": buf.hex(), "offset": offset, "mutation": desc, "type": constructor_expr(t)}

    def call() -> object:
        return fn(buf, offset)

    def judge(value: object, error: BaseException | None) -> tuple[str, str] | None:
        if error is not None:
            if verdict.kind == "accept":
                return ("rejected-valid", f"{type(error).__name__}: {str(error)[:200]}")
            return None
        if verdict.kind == "reject":
            return ("accepted-malformed", f"{verdict.reason}; got {value!r}")
        if not (isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], CqlType)
                and type(value[1]) is int):
            return ("wrong-shape", f"read_type_option returned {value!r}")
        if verdict.kind == "accept":
            if value[0].cql_name != verdict.value or value[1] != next_offset:
                return ("wrong-value", f"expected ({verdict.value}, {next_offset}), got "
                                       f"({value[0].cql_name}, {value[1]})")
        elif not offset < value[1] <= len(buf):
            return ("wrong-value", f"next offset {value[1]} outside ({offset}, {len(buf)}]")
        return None

    engine.run("read_type_option", repro, len(buf), call, judge)


# --------------------------------------------------------------------------- results

def _spec_form(spec: object) -> tuple[object, ...]:
    t = getattr(spec, "type")
    return (getattr(spec, "keyspace"), getattr(spec, "table"), getattr(spec, "name"),
            t.cql_name if isinstance(t, CqlType) else repr(t))


def _cell_form(t: CqlType, v: object) -> object:
    return B.UNSET_FORM if v is cqlcodec.UNSET else normalize(t, v)


def result_form(res: object) -> object:
    """The normal form of a decoded result (the same shape ``bodies.ref_result`` builds)."""
    if isinstance(res, cqlcodec.RowsResult):
        types = [c.type for c in res.columns]
        out_rows = []
        names = [c.name for c in res.columns]
        for row in res.rows:
            if isinstance(row, dict):  # dict_factory: a repeated name keeps the last column
                if len(set(names)) != len(names):
                    return None
                row = tuple(row[name] for name in names)
            if not isinstance(row, tuple):
                raise NormError(f"row decoded to {type(row).__name__}")
            out_rows.append(tuple(_cell_form(t, v) for t, v in zip(types, row, strict=True)))
        if res.has_more_pages != (res.paging_state is not None or bool(res.flags & 2)):
            raise NormError("has_more_pages disagrees with the flags")
        return ("rows", tuple(_spec_form(c) for c in res.columns), tuple(out_rows),
                res.paging_state, res.new_metadata_id)
    if isinstance(res, cqlcodec.VoidResult):
        return ("void",)
    if isinstance(res, cqlcodec.SetKeyspaceResult):
        return ("set_keyspace", res.keyspace)
    if isinstance(res, cqlcodec.SchemaChangeResult):
        return ("schema_change", res.change_type, res.target, res.keyspace, res.name,
                tuple(res.argument_types))
    if isinstance(res, cqlcodec.Prepared):
        return ("prepared", res.query_id, res.result_metadata_id,
                tuple(_spec_form(c) for c in res.bind_columns), tuple(res.pk_indexes),
                tuple(_spec_form(c) for c in res.result_columns))
    raise NormError(f"decode_result returned {type(res).__name__}")


def _form_judge(verdict: Verdict) -> Callable[[object, BaseException | None], tuple[str, str] | None]:
    def judge(value: object, error: BaseException | None) -> tuple[str, str] | None:
        if error is not None:
            if verdict.kind == "accept":
                return ("rejected-valid", f"{type(error).__name__}: {str(error)[:200]}")
            return None
        if verdict.kind == "reject":
            return ("accepted-malformed", f"{verdict.reason}; got {type(value).__name__}")
        form = result_form(value)
        if verdict.kind == "accept" and form is not None and form != verdict.value:
            return ("wrong-value", f"expected {str(verdict.value)[:300]}, got {str(form)[:300]}")
        return None

    return judge


_result_judge = _form_judge


def _result_case(engine: Engine, target: str, body: bytes, pv: int, desc: str,
                 prepared: object, known: list[B.Column] | None, extra: dict[str, object]) -> None:
    fn = api("decode_result")
    assert fn is not None
    verdict = B.ref_result(body, pv, known)
    rng = random.Random(body)
    factory = rng.choice(["tuple_factory", "tuple_factory", "dict_factory", "named_tuple_factory"])
    options: dict[str, object] = {"row_factory": getattr(cqlcodec, factory),
                                  "tz_aware": rng.random() < 0.2,
                                  "numpy_vectors": HAVE_NUMPY and rng.random() < 0.15}
    repro = {"data": body.hex(), "pv": pv, "mutation": desc, **extra,
             "options": {**options, "row_factory": factory}}

    roll = rng.random()
    arg: bytes | bytearray | memoryview = (
        body if roll < 0.8 else bytearray(body) if roll < 0.9 else memoryview(body))
    repro["arg"] = type(arg).__name__

    def call() -> object:
        return fn(arg, pv, prepared, **options)

    engine.run(target, repro, len(body), call, _result_judge(verdict))


def case_decode_result(engine: Engine, rng: random.Random) -> None:
    pv = rng.choice([3, 4, 5])
    body = B.gen_body(rng, pv)
    data, desc = body.data, "valid"
    if rng.random() < 0.8:
        data, desc = mutate(body.data, body.slots, rng)
    _result_case(engine, "decode_result", data, pv, desc, None, None, {})


def case_decode_columns(engine: Engine, rng: random.Random) -> None:
    """decode_columns against the row path on the same (often mutated) Rows body: both
    refuse it with the same DecodeError (hash flooding: when the columns are turned into
    Python values) or the columns equal the rows' columns."""
    fn = api("decode_columns")
    assert fn is not None
    pv = rng.choice([3, 4, 5])
    body = B.gen_rows_body(rng, pv)
    data, desc = body.data, "valid"
    if rng.random() < 0.8:
        data, desc = mutate(body.data, body.slots, rng)
    expected: list[list[object]] | None = None
    expected_error = ""
    try:
        result: Any = cqlcodec.decode_result(data, pv)
        if isinstance(result, cqlcodec.RowsResult):
            expected = [[row[i] for row in result.rows] for i in range(len(result.columns))]
        else:  # a mutated kind word
            expected_error = f"expected a RESULT of kind Rows (2), got kind {result.kind}"
    except cqlcodec.DecodeError as exc:
        expected_error = str(exc)

    def call() -> object:
        return [c.to_pylist() for c in fn(data, pv)]

    def judge(value: object, error: BaseException | None) -> tuple[str, str] | None:
        if error is not None and not isinstance(error, cqlcodec.DecodeError):
            return "unexpected exception", f"{type(error).__name__}: {error}"
        if expected is None:
            if error is None:
                return "accepted what the row path refuses", expected_error
            if str(error) != expected_error and not (
                    "hash flooding" in expected_error and "hash flooding" in str(error)):
                return "error differs from the row path", f"{error} != {expected_error}"
            return None
        if error is not None:
            return "refused what the row path accepts", str(error)
        if comparable(value) != comparable(expected):
            return "values differ from the row path", desc
        return None

    engine.run("decode_columns", {"data": data.hex(), "pv": pv, "mutation": desc},
               len(data), call, judge)


def comparable(v: object) -> object:
    """A comparable form of decoded values: type names kept, floats by repr (NaN, -0.0),
    ints in hex (no digit limit), sets and maps order-free (NaN hashes by identity)."""
    name = type(v).__name__
    if isinstance(v, bool) or v is None:
        return (name, v)
    if isinstance(v, int):
        return (name, hex(v))
    if isinstance(v, float):
        return (name, repr(v))
    if isinstance(v, (set, frozenset)):
        return (name, sorted(repr(comparable(x)) for x in v))
    if isinstance(v, (dict, cqlcodec.FrozenMap)):
        return (name, sorted(repr((comparable(k), comparable(x))) for k, x in v.items()))
    if isinstance(v, (list, tuple)):
        return (name, [comparable(x) for x in v])
    return (name, repr(v))


def _prepared_for(rng: random.Random, pv: int, cols: list[B.Column]) -> tuple[object, bytes] | None:
    body = B.gen_prepared_body(rng, pv, False, cols)
    try:
        return cqlcodec.decode_prepared(body.data, pv), body.data
    except cqlcodec.DecodeError:
        return None  # a generated body the codec refuses shows up in the decode_prepared target


def case_result_with_prepared(engine: Engine, rng: random.Random) -> None:
    pv = rng.choice([3, 4, 5])
    cols = B.random_columns(rng, rng.choice([1, 2, 3]), "ks", "t")
    found = _prepared_for(rng, pv, cols)
    if found is None:
        return
    prepared, pbody = found
    body = B.gen_rows_body(rng, pv, cols, no_metadata=True)
    data, desc = body.data, "valid"
    if rng.random() < 0.8:
        data, desc = mutate(body.data, body.slots, rng)
    _result_case(engine, "result_with_prepared", data, pv, desc, prepared, cols,
                 {"prepared_body": pbody.hex()})


def case_decode_prepared(engine: Engine, rng: random.Random) -> None:
    fn = api("decode_prepared")
    assert fn is not None
    pv = rng.choice([3, 4, 5])
    body = B.gen_prepared_body(rng, pv, False)
    data, desc = body.data, "valid"
    if rng.random() < 0.8:
        data, desc = mutate(body.data, body.slots, rng)
    verdict = B.ref_prepared(data, pv)
    repro = {"data": data.hex(), "pv": pv, "mutation": desc}

    def call() -> object:
        return fn(data, pv)

    judge = _form_judge(verdict)
    engine.run("decode_prepared", repro, len(data), call, judge)


# --------------------------------------------------------------------------- reassembler

def _ref_crc24(value: int, length: int) -> int:
    """CRC24 of a v5 segment header, bit by bit from the protocol's description."""
    crc = 0x875060
    for _ in range(length):
        crc ^= (value & 0xFF) << 16
        value >>= 8
        for _bit in range(8):
            crc <<= 1
            if crc & 0x1000000:
                crc ^= 0x1974F0B
    return crc


def _ref_segment(payload: bytes, self_contained: bool) -> bytes:
    import zlib

    header = len(payload) | (int(self_contained) << 17)
    crc32 = zlib.crc32(payload, zlib.crc32(b"\xfa\x2d\x55\xca"))
    return (header.to_bytes(3, "little") + _ref_crc24(header, 3).to_bytes(3, "little")
            + payload + crc32.to_bytes(4, "little"))


def _reassemble(data: bytes, sizes: list[int], segments: bool,
                fill_from: int = 1 << 20) -> tuple[list[tuple[Any, ...]], str]:
    """Frames cut from ``data`` fed in chunks of ``sizes`` (then 64 KiB), and the error;
    bodies of ``fill_from`` bytes and more are filled in place as they arrive."""
    from cqlcodec.connection import FrameReassembler
    from cqlcodec.errors import FramingError

    r = FrameReassembler((3, 4, 5), fill_from)
    if segments:
        r.enable_segments(None)
    out: list[tuple[Any, ...]] = []
    at = 0
    chunks = iter(sizes)
    try:
        while at < len(data):
            size = next(chunks, 65536)
            r.write(data[at:at + size])
            at += size
            while r.next_frame():
                out.append((r.version, r.flags, r.stream, r.opcode, r.body))
    except FramingError as exc:
        return out, str(exc)
    return out, ""


def case_reassembler(engine: Engine, rng: random.Random) -> None:
    """Frames and v5 segments from hostile streams in any chunking: the same frames
    (and error) as from one read, the generated frames when nothing was broken."""
    version = rng.choice([4, 5])
    frames = []
    for _ in range(rng.randrange(0, 8)):
        size = rng.choice([0, rng.randrange(1, 300), rng.randrange(300, 300_000)])
        frames.append((version, rng.randrange(256), rng.randrange(-32768, 32768),
                       rng.randrange(256), rng.randbytes(size)))
    stream = b"".join(bytes([0x80 | v, f]) + s.to_bytes(2, "big", signed=True) + bytes([o])
                      + len(b).to_bytes(4, "big") + b for v, f, s, o, b in frames)
    data = stream
    if version == 5:
        parts = []
        at = 0
        while at < len(stream):
            n = rng.choice([rng.randrange(1, 200), 0x1FFFF, rng.randrange(1, 0x1FFFF)])
            parts.append(_ref_segment(stream[at:at + n], n >= len(stream) - at and at == 0))
            at += n
        data = b"".join(parts)
    broken = data
    if data and rng.random() < 0.4:
        spoilt = bytearray(data)
        for _ in range(rng.randrange(1, 4)):
            spoilt[rng.randrange(len(spoilt))] ^= rng.randrange(1, 256)
        broken = bytes(spoilt[:rng.randrange(len(spoilt) + 1)] if rng.random() < 0.3 else spoilt)
    sizes = [rng.choice([1, rng.randrange(1, 12), rng.randrange(1, 5000), 1 << 20])
             for _ in range(rng.randrange(0, 40))]
    whole = _reassemble(broken, [len(broken)], version == 5)

    def same(value: object, error: BaseException | None) -> tuple[str, str] | None:
        if value != whole:
            return ("chunking-changes-frames", f"{len(sizes)} chunks")
        if broken is data and (whole[1] or len(whole[0]) != len(frames) or whole[0] != frames):
            return ("wrong-frames", f"{len(whole[0])} of {len(frames)} frames, error {whole[1]!r}")
        return None

    fill_from = rng.choice([1, 300, 1 << 20])
    engine.run("reassembler", {"api": "FrameReassembler", "version": version,
                               "data": broken[:4096].hex(), "sizes": sizes[:40],
                               "fill_from": fill_from},
               len(broken), lambda: _reassemble(broken, sizes, version == 5, fill_from), same)


# --------------------------------------------------------------------------- versions and nesting

def case_protocol_versions(engine: Engine, rng: random.Random) -> None:
    pv = rng.choice(BAD_VERSIONS)
    t = random_type(rng, 1)
    data, _slots, _v = gen_value_bytes(rng, t)
    allowed = (cqlcodec.ProtocolVersionError,)

    def must_refuse(value: object, error: BaseException | None) -> tuple[str, str] | None:
        if error is None:
            return ("accepted-malformed", f"protocol version {pv} accepted")
        return None

    engine.run("protocol_versions", {"api": "deserialize", "type": constructor_expr(t),
                                     "data": data.hex(), "pv": pv},
               len(data), lambda: t.deserialize(data, pv), must_refuse, allowed)
    engine.run("protocol_versions", {"api": "serialize", "type": "int", "pv": pv}, 4,
               lambda: scalar_type(K.INT).serialize(1, pv), must_refuse, allowed)
    fn = api("decode_result")
    if fn is not None:
        body = B.gen_body(rng, 4).data
        engine.run("protocol_versions", {"api": "decode_result", "data": body.hex(), "pv": pv},
                   len(body), lambda: fn(body, pv), must_refuse, allowed)
    fp = api("decode_prepared")
    if fp is not None:
        pb = B.gen_prepared_body(rng, 4, False).data
        engine.run("protocol_versions", {"api": "decode_prepared", "data": pb.hex(), "pv": pv},
                   len(pb), lambda: fp(pb, pv), must_refuse, allowed)


def nested_type(rng: random.Random, depth: int) -> CqlType:
    t: CqlType = scalar_type(rng.choice([K.INT, K.TEXT, K.FLOAT]))
    for _i in range(depth):
        roll = rng.randrange(5)
        if roll == 0:
            t = list_of(t)
        elif roll == 1:
            t = set_of(t)
        elif roll == 2:
            t = map_of(scalar_type(K.INT), t)
        elif roll == 3:
            t = tuple_of(t)
        else:
            t = user_type("ks", f"u{depth}_{_i}", [("f", t)])
    return t


def nested_option(kind: int, depth: int) -> bytes:
    w = Writer()
    for _i in range(depth):
        w.short(kind, slot=False)
        if kind == K.TUPLE:
            w.short(1, slot=False)
        elif kind == K.MAP:
            w.short(K.INT, slot=False)
    w.short(K.INT, slot=False)
    return w.getvalue()


def case_deep_nesting(engine: Engine, rng: random.Random) -> None:
    """Deeply nested options (hostile metadata) and values of moderately deep types."""
    fn = api("read_type_option")
    if fn is not None:
        kind = rng.choice([K.LIST, K.SET, K.MAP, K.TUPLE])
        depth = rng.choice([50, 200, 1000, 5000, 30000])
        buf = nested_option(kind, depth)
        if rng.random() < 0.3:
            buf = buf[: rng.randrange(len(buf))]

        def deep_ok(value: object, error: BaseException | None) -> tuple[str, str] | None:
            return None

        engine.run("deep_nesting", {"api": "read_type_option", "kind": kind, "depth": depth,
                                    "data_len": len(buf)},
                   len(buf), lambda: fn(buf, 0), deep_ok)
    depth = rng.choice([5, 20, 40])
    t = nested_type(rng, depth)
    data, slots, _v = gen_value_bytes(rng, t, max_elements=depth * 3)
    if slots and rng.random() < 0.7:
        data, desc = mutate(data, slots, rng)
    else:
        desc = "valid"
    _deserialize_case(engine, t, data, f"deep{depth}:{desc}", rng)


def case_selftest_crash(engine: Engine, rng: random.Random) -> None:
    """Not a real target: crashes the process so the parent's crash handling can be tested."""
    import os
    import signal

    engine.recorder.record({"target": "selftest_crash", "data": "dead"})
    os.kill(os.getpid(), signal.SIGSEGV)


def case_selftest_hang(engine: Engine, rng: random.Random) -> None:
    """Not a real target: hangs so the parent's timeout handling can be tested."""
    engine.recorder.record({"target": "selftest_hang", "data": "beef"})
    while True:
        pass


SELFTESTS: dict[str, Callable[[Engine, random.Random], None]] = {
    "selftest_crash": case_selftest_crash,
    "selftest_hang": case_selftest_hang,
}

TARGETS: dict[str, Callable[[Engine, random.Random], None]] = {
    "deserialize": case_deserialize,
    "truncate_all": case_truncate_all,
    "read_type_option": case_read_type_option,
    "decode_result": case_decode_result,
    "decode_prepared": case_decode_prepared,
    "result_with_prepared": case_result_with_prepared,
    "protocol_versions": case_protocol_versions,
    "deep_nesting": case_deep_nesting,
    "decode_columns": case_decode_columns,
    "reassembler": case_reassembler,
}

