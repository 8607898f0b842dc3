"""Byte-level reads and writes: librt where available, else the struct shim.

Compiled modules import these names from here; mypyc still emits its inlined
primitives because the names resolve to ``librt.strings``.
"""

import sys
from typing import Final

from cqlcodec.runtime.build import COMPILED

try:
    from librt.strings import BytesWriter as BytesWriter
    from librt.strings import read_f32_be as read_f32_be
    from librt.strings import read_f64_be as read_f64_be
    from librt.strings import read_i16_be as read_i16_be
    from librt.strings import read_i32_be as read_i32_be
    from librt.strings import read_i32_le as read_i32_le
    from librt.strings import read_i64_be as read_i64_be
    from librt.strings import read_i64_le as read_i64_le
    from librt.strings import write_f32_be as write_f32_be
    from librt.strings import write_f64_be as write_f64_be
    from librt.strings import write_i16_be as write_i16_be
    from librt.strings import write_i16_le as write_i16_le
    from librt.strings import write_i32_be as write_i32_be
    from librt.strings import write_i32_le as write_i32_le
    from librt.strings import write_i64_be as write_i64_be
    from librt.strings import write_i64_le as write_i64_le

    HAVE_LIBRT = True
except ImportError:  # interpreted only (e.g. PyPy): same signatures, same exception types
    # isort: off
    from cqlcodec.runtime.librt_shim import BytesWriter  # type: ignore[assignment]  # noqa: F401
    from cqlcodec.runtime.librt_shim import read_f32_be, read_f64_be, read_i16_be  # noqa: F401
    from cqlcodec.runtime.librt_shim import read_i32_be, read_i32_le  # noqa: F401
    from cqlcodec.runtime.librt_shim import read_i64_be, read_i64_le  # noqa: F401
    from cqlcodec.runtime.librt_shim import write_f32_be  # type: ignore[assignment]  # noqa: F401
    from cqlcodec.runtime.librt_shim import write_f64_be  # type: ignore[assignment]  # noqa: F401
    from cqlcodec.runtime.librt_shim import write_i16_be  # type: ignore[assignment]  # noqa: F401
    from cqlcodec.runtime.librt_shim import write_i32_be  # type: ignore[assignment]  # noqa: F401
    from cqlcodec.runtime.librt_shim import write_i64_be  # type: ignore[assignment]  # noqa: F401
    from cqlcodec.runtime.librt_shim import write_i16_le  # type: ignore[assignment]  # noqa: F401
    from cqlcodec.runtime.librt_shim import write_i32_le  # type: ignore[assignment]  # noqa: F401
    from cqlcodec.runtime.librt_shim import write_i64_le  # type: ignore[assignment]  # noqa: F401
    # isort: on

    HAVE_LIBRT = False

_SHARE_SCRATCH: Final = COMPILED and bool(
    getattr(sys, "_is_gil_enabled", lambda: True)())
_scratch: Final = BytesWriter()


def scratch_writer() -> BytesWriter:
    """An empty writer for encoding a few bytes that ends with ``getvalue()``.

    Compiled and with the GIL this is one shared writer: the caller must not run
    Python code or allocate between this call and ``getvalue()`` (the librt
    writes of a few bytes do neither), so no other thread and no re-entrant call
    can use it meanwhile; it saves allocating a writer per value (~8 ns).
    Interpreted (threads switch between bytecodes) or without the GIL, a new one.
    """
    if _SHARE_SCRATCH:
        w = _scratch
        w.truncate(0)
        return w
    return BytesWriter()
