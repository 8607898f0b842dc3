"""Byte-level reads and writes: librt where available, else the struct shim.

Compiled modules import these names from here; mypyc still emits its inlined
primitives because the names resolve to ``librt.strings``.
"""

try:
    from librt.strings import BytesWriter as BytesWriter
    from librt.strings import read_f32_be as read_f32_be
    from librt.strings import read_f64_be as read_f64_be
    from librt.strings import read_i16_be as read_i16_be
    from librt.strings import read_i32_be as read_i32_be
    from librt.strings import read_i64_be as read_i64_be
    from librt.strings import write_f32_be as write_f32_be
    from librt.strings import write_f64_be as write_f64_be
    from librt.strings import write_i16_be as write_i16_be
    from librt.strings import write_i32_be as write_i32_be
    from librt.strings import write_i64_be as write_i64_be

    HAVE_LIBRT = True
except ImportError:  # interpreted only (e.g. PyPy): same signatures, same exception types
    from cqlcodec._librt_shim import BytesWriter  # type: ignore[assignment]
    from cqlcodec._librt_shim import read_f32_be, read_f64_be, read_i16_be
    from cqlcodec._librt_shim import read_i32_be, read_i64_be
    from cqlcodec._librt_shim import write_f32_be  # type: ignore[assignment]
    from cqlcodec._librt_shim import write_f64_be  # type: ignore[assignment]
    from cqlcodec._librt_shim import write_i16_be  # type: ignore[assignment]
    from cqlcodec._librt_shim import write_i32_be  # type: ignore[assignment]
    from cqlcodec._librt_shim import write_i64_be  # type: ignore[assignment]

    HAVE_LIBRT = False
