"""The CRC32 that protocol v5 puts after every segment payload: zlib-ng's when it is
installed, else the standard library's zlib.

Every byte a v5 connection receives passes through this CRC once. The zlib that CPython
links computes it at about 2.7 GB/s; zlib-ng (``pip install cqlcodec[zlib-ng]``) folds it
with carry-less multiplication at about 12.6 GB/s on the same machine. Reading 60 MB of
vectors, that is the difference between the largest single cost of the connection thread
and a small one. Both compute the same CRC-32 (ISO-HDLC polynomial, ``crc`` continued the
way ``zlib.crc32(data, crc)`` continues it); the tests check them against each other.
"""

from __future__ import annotations

import importlib
import zlib
from collections.abc import Callable
from typing import Final

Crc32 = Callable[[memoryview, int], int]


def _zlib_ng_crc32() -> Crc32 | None:
    try:
        module = importlib.import_module("zlib_ng.zlib_ng")
    except ImportError:
        return None
    found: Crc32 = module.crc32
    return found


ZLIB_NG_CRC32: Final = _zlib_ng_crc32()
CRC32: Final[Crc32] = ZLIB_NG_CRC32 if ZLIB_NG_CRC32 is not None else zlib.crc32


def crc32_provider() -> str:
    """Which library computes the segments' CRC32: ``"zlib-ng"`` or ``"zlib"``."""
    return "zlib-ng" if ZLIB_NG_CRC32 is not None else "zlib"
