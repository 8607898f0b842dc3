"""Memory stays flat over many operations: a short run of tools/leakcheck.py.

The full check is ``python tools/leakcheck.py`` (a million operations of every kind
against the compiled build, then each operation on its own); the first test runs
200k of them in a fresh child process and fails if resident memory keeps growing
after the warm-up batches. The per-operation tests count live Python memory blocks
(``sys.getallocatedblocks``), which finds a leak of a single object per call.
"""

from __future__ import annotations

import decimal
import gc
import os
import struct
import subprocess
import sys
from collections.abc import Callable

import pytest
from childproc import describe, run_python

import cqlcodec
from cqlcodec import CqlType, list_of, scalar_type, vector_of
from cqlcodec import kinds as K

LEAKCHECK = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                         "tools", "leakcheck.py")

CHILD = f"""
import runpy, sys
sys.argv = [{LEAKCHECK!r}, "--ops", "200000", "--batches", "8", "--warmup", "4",
            "--tolerance-mib", "8", "--per-op-after", "0"]
try:
    runpy.run_path({LEAKCHECK!r}, run_name="__main__")
except SystemExit as exc:
    sys.exit(exc.code)
"""


@pytest.mark.compiled_only
def test_rss_is_flat_over_200k_operations_of_every_kind() -> None:
    if not os.path.exists(LEAKCHECK):
        pytest.skip("tools/leakcheck.py is not next to the tests")
    proc: subprocess.CompletedProcess[str] = run_python(CHILD, timeout=600)
    print(proc.stdout)
    assert proc.returncode == 0, describe(proc)
    assert "leakcheck: OK" in proc.stdout, proc.stdout


def test_leakcheck_refuses_the_wrong_build_unless_told() -> None:
    """The tool must not silently measure the interpreted build."""
    if not os.path.exists(LEAKCHECK):
        pytest.skip("tools/leakcheck.py is not next to the tests")
    if cqlcodec.COMPILED:
        pytest.skip("only meaningful for the interpreted build")
    proc = run_python(CHILD.replace('"--ops", "200000"', '"--ops", "10"'), timeout=120)
    assert proc.returncode == 2, describe(proc)


# --------------------------------------------------------------------------- per operation

def _decode(t: CqlType, data: bytes) -> Callable[[], object]:
    def call() -> object:
        try:
            return t.deserialize(data)
        except cqlcodec.CodecError as exc:
            return exc
    return call


MYPYC_INT_STR_LEAK = ("mypyc 2.4.1 lib-rt: CPyTagged_Str() (str(), repr(), '%d' and f-strings of an "
                      "int >= 2**62 in compiled code) never releases the reference "
                      "CPyTagged_AsObject() returns, so the int leaks")

OPERATIONS: list[tuple[str, Callable[[], object], bool]] = [
    # (name, operation, leaks in the compiled build because of the mypyc bug)
    ("decimal with a 64-bit unscaled value and a scale",
     _decode(scalar_type(K.DECIMAL), struct.pack(">i", 2) + (2**62 + 5).to_bytes(8, "big")), False),
    ("decimal with a 30-digit unscaled value",
     _decode(scalar_type(K.DECIMAL), struct.pack(">i", 5) + (10**29 + 7).to_bytes(13, "big")), False),
    ("malformed vector: element length 2**63",
     _decode(vector_of(scalar_type(K.TEXT), 2), bytes.fromhex("ff8000000000000000") + b"ab"), False),
    ("malformed duration: months beyond int32",
     _decode(scalar_type(K.DURATION), bytes.fromhex("ff8000000000000000") + b"\x00\x00"), False),
    ("varint beyond 64 bits", _decode(scalar_type(K.VARINT), (2**70).to_bytes(10, "big")), False),
    ("bigint near 2**63", _decode(scalar_type(K.BIGINT), struct.pack(">q", 2**62 + 3)), False),
    ("timestamp outside datetime", _decode(scalar_type(K.TIMESTAMP), struct.pack(">q", 2**62 + 3)), False),
    ("malformed time", _decode(scalar_type(K.TIME), struct.pack(">q", 2**62 + 3)), False),
    ("malformed list count", _decode(list_of(scalar_type(K.INT)), struct.pack(">i", 2**31 - 1)), False),
    ("int out of range", lambda: _swallow(lambda: scalar_type(K.INT).serialize(2**70)), False),
    ("vector<int> element out of range",
     lambda: _swallow(lambda: vector_of(scalar_type(K.INT), 1).serialize([2**70])), False),
    ("bigint out of range", lambda: _swallow(lambda: scalar_type(K.BIGINT).serialize(2**70)), False),
    ("varint-sized smallint", lambda: _swallow(lambda: scalar_type(K.SMALLINT).serialize(-2**64)), False),
    ("vector<bigint> element out of range",
     lambda: _swallow(lambda: vector_of(scalar_type(K.BIGINT), 1).serialize([2**64])), False),
    ("vector dimension out of range", lambda: _swallow(lambda: vector_of(scalar_type(K.INT), 2**63)),
     False),
    ("timestamp out of range", lambda: _swallow(lambda: scalar_type(K.TIMESTAMP).serialize(2**64)), False),
    ("decimal encode", lambda: scalar_type(K.DECIMAL).serialize(decimal.Decimal(10**30 + 1).scaleb(-3)), False),
]


def _swallow(fn: Callable[[], object]) -> object:
    try:
        return fn()
    except (cqlcodec.CodecError, ValueError) as exc:
        return exc


@pytest.mark.parametrize(
    "name,op,mypyc_leak", [
        pytest.param(*case, marks=pytest.mark.xfail(cqlcodec.COMPILED, strict=True,
                                                    reason=MYPYC_INT_STR_LEAK) if case[2] else ())
        for case in OPERATIONS],
    ids=[case[0] for case in OPERATIONS])
def test_operation_leaves_no_objects_behind(name: str, op: Callable[[], object],
                                            mypyc_leak: bool) -> None:
    """2000 more calls leave (almost) no more live Python memory blocks than before."""
    for _i in range(300):
        op()
    gc.collect()
    before = sys.getallocatedblocks()
    for _i in range(2000):
        op()
    gc.collect()
    grown = sys.getallocatedblocks() - before
    assert grown < 200, f"{grown} blocks left behind by 2000 calls of {name}"
