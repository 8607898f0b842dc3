"""Hypothesis-driven fuzzing: random bytes and targeted mutations that hypothesis shrinks.

Each property hands its case to the shared :class:`~fuzz.engine.Engine` (in
keep-last mode, so the reproducer kept for a failure is the shrunk one) and
fails when the engine reports a problem.  :func:`run_all` runs every property
with a given seed and example count and returns what went wrong.
"""

from __future__ import annotations

import random
import traceback
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from cqlcodec import CqlType, list_of, map_of, scalar_type, set_of, tuple_of, user_type, vector_of

from . import bodies as B
from .engine import Engine, judge_value
from .model import SCALARS, constructor_expr, gen_value_bytes, normalize, random_type, ref_decode
from .mutate import INT_SPECIALS, SHORT_SPECIALS, UVINT_SPECIALS
from .targets import _option_verdict, _result_judge, api

_SCALAR_TYPES = st.sampled_from(SCALARS).map(scalar_type)


def _extend(children: st.SearchStrategy[CqlType]) -> st.SearchStrategy[CqlType]:
    return st.one_of(
        children.map(list_of),
        children.map(set_of),
        st.tuples(children, children).map(lambda kv: map_of(*kv)),
        st.lists(children, min_size=1, max_size=4).map(lambda ts: tuple_of(*ts)),
        st.lists(children, min_size=1, max_size=3).map(
            lambda ts: user_type("ks", "u", [(f"f{i}", s) for i, s in enumerate(ts)])),
        st.tuples(children, st.integers(1, 6)).map(lambda cd: vector_of(*cd)),
    )


TYPES: st.SearchStrategy[CqlType] = st.recursive(_SCALAR_TYPES, _extend, max_leaves=8)


def _apply_ops(data: bytes, slots: list[Any], ops: list[tuple[int, int, int]]) -> tuple[bytes, str]:
    """Targeted mutations chosen by hypothesis: (op, where, what)."""
    descs = []
    for op, where, what in ops:
        if op == 0 and slots:
            s = slots[where % len(slots)]
            if s.offset + s.width > len(data):
                continue
            if s.kind == "int":
                new = INT_SPECIALS[what % len(INT_SPECIALS)].to_bytes(4, "big", signed=True)
            elif s.kind == "short":
                new = SHORT_SPECIALS[what % len(SHORT_SPECIALS)].to_bytes(2, "big")
            else:
                new = UVINT_SPECIALS[what % len(UVINT_SPECIALS)]
            data = data[:s.offset] + new + data[s.offset + s.width:]
            descs.append(f"slot{where % len(slots)}={new.hex()}")
        elif op == 1:
            at = where % (len(data) + 1)
            data = data[:at]
            descs.append(f"cut@{at}")
        elif op == 2 and data:
            at = where % len(data)
            data = data[:at] + bytes([data[at] ^ (1 << (what % 8))]) + data[at + 1:]
            descs.append(f"flip@{at}.{what % 8}")
        elif op == 3:
            data = data + bytes([what & 0xFF])
            descs.append(f"append:{what & 0xFF:02x}")
    return data, "+".join(descs) or "valid"


_OPS = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 1 << 16), st.integers(0, 255)),
                max_size=3)


def _check(problem: str | None) -> None:
    assert problem is None, problem


def properties(engine: Engine) -> dict[str, Callable[..., None]]:
    """The hypothesis properties (undecorated by settings/seed), bound to ``engine``."""

    @given(t=TYPES, data=st.binary(max_size=96), pv=st.sampled_from([3, 4, 5]))
    def raw_deserialize(t: CqlType, data: bytes, pv: int) -> None:
        verdict = ref_decode(t, data)
        _check(engine.run("hyp_raw_deserialize",
                          {"type": constructor_expr(t), "data": data.hex(), "pv": pv},
                          len(data), lambda: t.deserialize(data, pv),
                          judge_value(verdict, lambda v: normalize(t, v))))

    @given(type_seed=st.integers(0, 1 << 32), ops=_OPS)
    def mutated_deserialize(type_seed: int, ops: list[tuple[int, int, int]]) -> None:
        rng = random.Random(type_seed)
        t = random_type(rng, 3)
        data, slots, _v = gen_value_bytes(rng, t)
        data, desc = _apply_ops(data, slots, ops)
        verdict = ref_decode(t, data)
        _check(engine.run("hyp_mutated_deserialize",
                          {"type": constructor_expr(t), "data": data.hex(), "mutation": desc},
                          len(data), lambda: t.deserialize(data),
                          judge_value(verdict, lambda v: normalize(t, v))))

    props: dict[str, Callable[..., None]] = {
        "raw_deserialize": raw_deserialize,
        "mutated_deserialize": mutated_deserialize,
    }
    read_option = api("read_type_option")
    if read_option is not None:
        fn_opt = read_option

        @given(data=st.binary(max_size=64))
        def raw_option(data: bytes) -> None:
            verdict, nxt = _option_verdict(data, 0)

            def judge(value: object, error: BaseException | None) -> tuple[str, str] | None:
                if error is None and verdict.kind == "reject":
                    return ("accepted-malformed", f"{verdict.reason}; got {value!r}")
                if error is not None and verdict.kind == "accept":
                    return ("rejected-valid", f"{type(error).__name__}: {error}")
                return None

            _check(engine.run("hyp_raw_option", {"data": data.hex()}, len(data),
                              lambda: fn_opt(data, 0), judge))

        props["raw_option"] = raw_option
    decode_result = api("decode_result")
    if decode_result is not None:
        fn_res = decode_result

        @given(kind=st.sampled_from([1, 2, 3, 4, 5, 0, 6, -1]), payload=st.binary(max_size=200),
               pv=st.sampled_from([3, 4, 5]))
        def raw_result(kind: int, payload: bytes, pv: int) -> None:
            body = kind.to_bytes(4, "big", signed=True) + payload
            verdict = B.ref_result(body, pv, None)
            _check(engine.run("hyp_raw_result", {"data": body.hex(), "pv": pv}, len(body),
                              lambda: fn_res(body, pv), _result_judge(verdict)))

        @given(body_seed=st.integers(0, 1 << 32), ops=_OPS, pv=st.sampled_from([3, 4, 5]))
        def mutated_result(body_seed: int, ops: list[tuple[int, int, int]], pv: int) -> None:
            gen = B.gen_body(random.Random(body_seed), pv)
            body, desc = _apply_ops(gen.data, gen.slots, ops)
            verdict = B.ref_result(body, pv, None)
            _check(engine.run("hyp_mutated_result",
                              {"data": body.hex(), "pv": pv, "mutation": desc}, len(body),
                              lambda: fn_res(body, pv), _result_judge(verdict)))

        props["raw_result"] = raw_result
        props["mutated_result"] = mutated_result
    return props


def run_all(engine: Engine, base_seed: int, max_examples: int,
            only: set[str] | None = None) -> list[dict[str, str]]:
    """Run every property once with ``max_examples``; returns the hypothesis failures."""
    problems: list[dict[str, str]] = []
    for name, prop in properties(engine).items():
        if only and name not in only:
            continue
        test = seed(base_seed)(settings(
            max_examples=max_examples, deadline=None, database=None, derandomize=False,
            suppress_health_check=list(HealthCheck),
            phases=[Phase.generate, Phase.target, Phase.shrink],
            print_blob=False,
        )(prop))
        try:
            test()
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # noqa: BLE001 - report, don't stop the run
            problems.append({"property": name, "error": "".join(
                traceback.format_exception_only(type(exc), exc))[-1500:]})
    return problems


