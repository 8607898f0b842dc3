"""The length-word floor of a Rows page, compiled by ``nox -s bench`` with mypyc.

:func:`walk_length_words` reads every cell's ``[int]`` length and steps over its
bytes, checking both against the body's end, and nothing else: no value is read or
written. No decoder of the page into columns can do less, so the columnar
benchmarks (W5 (b), (c), (e)) print cqlcodec's time over this one. The bench session
compiles this file with the same mypyc and optimisation level as cqlcodec
(``tools/build_floor.py``); without the compiled module the floor is left out.
"""

from __future__ import annotations

from librt.strings import read_i32_be
from mypy_extensions import i64


def walk_length_words(buf: bytes, pos: i64, end: i64, nrows: i64, ncols: i64) -> i64:
    """Step over ``nrows`` x ``ncols`` cells at ``pos``; the position after the last."""
    for _r in range(nrows):
        for _c in range(ncols):
            if pos + 4 > end:
                raise ValueError(f"no length word at {pos}")
            raw: int = read_i32_be(buf, pos)
            n: i64 = raw
            pos += 4
            if n > 0:
                if n > end - pos:
                    raise ValueError(f"a value of {n} bytes at {pos} runs past the end")
                pos += n
    return pos
