"""ctypes callbacks that a C consumer may call in any state of the interpreter.

CPython's ctypes runs a callback as an ordinary Python call: it takes the GIL, calls
the function and, when the function returns, checks the thread's error indicator. A
consumer may call a ``release`` callback while a Python exception is being raised (it
drops an imported array while the frame that holds it unwinds). Then:

- every C function the callback calls through the generic call path that returns a
  result while the indicator is set fails with ``SystemError`` (its result "with an
  exception set"), so the callback stops half way (and Arrow C++ aborts on a
  ``release`` left set);
- when the callback returns, ctypes finds the indicator set, turns it into a
  ``SystemError`` and prints it as unraisable, which clears it. Nothing in Python can
  set the indicator after that check, so the pending exception cannot survive a
  ctypes callback: the consumer then returns an error with no exception set.

:func:`guarded` makes the first thing a callback does a call to ``PyErr_Fetch``
(which takes the pending exception and clears the indicator: every later call is
safe), runs the work, and then raises the taken exception again, which ctypes prints
(``Exception ignored on calling ctypes callback function``) instead of losing it
silently. :func:`keep_forever` keeps the callback objects alive through interpreter
shutdown, when a consumer may still release an array held by a module being torn
down.
"""

from __future__ import annotations

import ctypes
import itertools
from collections.abc import Callable
from ctypes import byref, c_void_p, py_object
from typing import Any, Final

_fetch: Final = ctypes.pythonapi.PyErr_Fetch
_fetch.restype = None
_restore: Final = ctypes.pythonapi.PyErr_Restore
_restore.restype = None
_restore.argtypes = [c_void_p, c_void_p, c_void_p]
_incref: Final = ctypes.pythonapi.Py_IncRef
_incref.restype = None
_incref.argtypes = [py_object]

_SLOTS: Final = 64
# PyErr_Fetch's out parameters: one triple per concurrent call (picked by a counter,
# whose next value needs no call that checks the error indicator).
_triples: Final = tuple((c_void_p(), c_void_p(), c_void_p()) for _ in range(_SLOTS))
_calls: Final = itertools.count()
_refs: Final = tuple((byref(a), byref(b), byref(c)) for a, b, c in _triples)


def guarded(work: Callable[[int | None], None]) -> Callable[[int | None], None]:
    """A callback running ``work(address)`` with the error indicator cleared first
    (see the module docstring); an exception taken from the indicator is raised again
    after the work, an exception of the work itself is raised as usual."""

    def callback(address: int | None, _work: Any = work, _counter: Any = _calls,
                 _fetch: Any = _fetch, _restore: Any = _restore, _refs: Any = _refs,
                 _triples: Any = _triples, _mask: int = _SLOTS - 1) -> None:
        for n in _counter:  # noqa: B007  (next() through FOR_ITER: no result check)
            break
        _fetch(*_refs[n & _mask])
        kind, value, trace = [s.value for s in _triples[n & _mask]]
        try:
            _work(address)
        finally:
            if kind:
                _restore(kind, value, trace)  # raises it here: ctypes prints it

    return callback


def address_kept_forever(callback: Any) -> int:
    """The C address of a ctypes callback object, which keeps one reference never given
    back (so that it outlives interpreter shutdown)."""
    _incref(callback)
    address = ctypes.cast(callback, c_void_p).value
    assert address is not None
    return address
