"""Large frame bodies made as ``bytes`` first and filled as the socket delivers them.

A frame body is a ``bytes`` (the drivers' message code wraps it in ``io.BytesIO``,
which shares a ``bytes`` without copying it; cqlcodec's decoders read ``bytes``).
Joined from the socket's buffers once the whole frame has arrived, a large body costs
the process twice in fresh memory: the buffers stay alive until the frame is complete
(15 MB of them for a 15 MB page, which the allocator hands back to the system and
asks for again, frame after frame), and the body itself is new memory the kernel maps
in one 4 KiB page at a time. On a 2-core machine reading 61 MB of vectors that was
about 30,000 page faults, more system time than all of the decoding.

Here a large body is made before its bytes arrive, with the C API's own way to build a
``bytes`` in place: ``PyBytes_FromStringAndSize(NULL, n)`` gives an object nobody else
has seen yet, whose buffer may be written until it is handed out. Its memory is
advised for transparent huge pages (Linux, ``madvise``), and each socket buffer is
copied into it as soon as it arrives and then dropped. Every byte is still copied once.

The C calls go through :mod:`ctypes` (CPython only). Where any of it is missing
(another interpreter, no ctypes, no ``madvise``), :func:`new_body` is None and
large bodies are joined like small ones; without ``madvise`` only the advice is left out.
"""

from __future__ import annotations

import ctypes
import mmap
import platform
import sys
from collections.abc import Callable
from typing import Any, Final

# bodies this large and larger are filled in place (below it, joining is as cheap)
FILL_FROM: Final = 1 << 20
_HUGE_PAGE: Final = 1 << 21


def _advise_huge() -> Callable[[int, int], None] | None:
    advice = getattr(mmap, "MADV_HUGEPAGE", None)
    if advice is None or not sys.platform.startswith("linux"):
        return None
    try:
        madvise = ctypes.CDLL(None, use_errno=True).madvise
    except (OSError, AttributeError):
        return None
    madvise.restype = ctypes.c_int
    madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    page = mmap.PAGESIZE

    def advise(address: int, size: int) -> None:
        start = (address + page - 1) & ~(page - 1)
        end = (address + size) & ~(page - 1)
        if end - start >= _HUGE_PAGE:
            madvise(start, end - start, advice)  # advice only: a refusal changes nothing

    return advise


class _InPlace:
    """The C API calls that make and fill a ``bytes`` in place."""

    def __init__(self, make: Any, address_of: Any,
                 advise: Callable[[int, int], None] | None) -> None:
        self.make = make
        self.address_of = address_of
        self.move: Any = ctypes.memmove
        self.advise = advise

    def new_body(self, size: int) -> tuple[bytes, int]:
        body: bytes = self.make(None, size)
        address: int = self.address_of(body)
        if self.advise is not None:
            self.advise(address, size)
        return body, address

    def copy_into(self, address: int, source: bytes, start: int, size: int) -> None:
        self.move(address, self.address_of(source) + start, size)


def _in_place() -> _InPlace | None:
    if platform.python_implementation() != "CPython":
        return None
    try:
        api = ctypes.pythonapi
        make = api.PyBytes_FromStringAndSize
        address_of = api.PyBytes_AsString
    except AttributeError:
        return None
    make.restype = ctypes.py_object
    make.argtypes = [ctypes.c_void_p, ctypes.c_ssize_t]
    address_of.restype = ctypes.c_void_p
    address_of.argtypes = [ctypes.py_object]
    return _InPlace(make, address_of, _advise_huge())


_IN_PLACE: Final = _in_place()


def new_body(size: int) -> tuple[bytes, int] | None:
    """A new ``bytes`` of ``size`` bytes, not yet written, and the address of its
    first byte; None where bodies cannot be filled in place. Only the caller may see
    the object until all ``size`` bytes are written (by :func:`copy_into`)."""
    if _IN_PLACE is None:
        return None
    return _IN_PLACE.new_body(size)


def copy_into(address: int, source: bytes, start: int, size: int) -> None:
    """Copy ``source[start:start + size]`` to ``address`` (inside a body from
    :func:`new_body`, with room for ``size`` bytes there)."""
    assert _IN_PLACE is not None
    _IN_PLACE.copy_into(address, source, start, size)


def fills_in_place() -> bool:
    """Whether large bodies are filled in place here (see the module's docstring)."""
    return _IN_PLACE is not None
