"""An Arrow C stream of many record batches, produced one at a time from an iterator.

:func:`stream_capsule_of` turns an iterator of objects that export Arrow struct
arrays (``__arrow_c_array__``: a :class:`~cqlcodec.ColumnBatch`, or a pyarrow
``RecordBatch``) into an ``arrow_array_stream`` PyCapsule. The consumer pulls the
batches (``get_next``) one by one, so the producer's memory holds about one batch
beyond what the consumer keeps. Every struct a batch exports is *moved* into the
consumer's struct (the source's ``release`` is cleared), which is how the Arrow C
data interface hands ownership over; nothing is copied.

The stream's schema is the first batch's. A later batch whose Arrow type differs
(a varint or decimal column whose values need another Arrow type on another page)
is cast to the stream's schema with pyarrow when pyarrow is installed and the cast
is exact (``safe=True``), else the stream fails with an error naming the column.

Where pyarrow is installed the stream is pyarrow's own reader over the batches
(``RecordBatchReader.from_batches``; each batch imported without a copy): pyarrow
may release a foreign stream while a Python exception is pending (after a failed
``get_next``), and a ctypes ``release`` callback cannot run then, which aborts the
process. The ctypes stream serves consumers without pyarrow (polars, DuckDB), which
release it only after they have turned the failure into their own error.
"""

from __future__ import annotations

import ctypes
import itertools
import threading
from collections.abc import Callable, Iterator
from ctypes import CFUNCTYPE, c_char_p, c_int, c_void_p
from typing import Any, Final

from cqlcodec.columnar import export
from cqlcodec.columnar.arrow import ArrowArray, ArrowArrayStream, ArrowSchema, Field, schema_capsule
from cqlcodec.columnar.ctypes_guard import address_kept_forever, guarded
from cqlcodec.errors import CodecError

EIO: Final = 5
ENOSYS: Final = 38

_get_pointer: Final = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = c_void_p
_get_pointer.argtypes = [ctypes.py_object, c_char_p]
_capsule_new: Final = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [c_void_p, c_char_p, c_void_p]

_RELEASE: Final = CFUNCTYPE(None, c_void_p)
_GET_SCHEMA: Final = CFUNCTYPE(c_int, c_void_p, c_void_p)
_GET_NEXT: Final = CFUNCTYPE(c_int, c_void_p, c_void_p)
_GET_ERROR: Final = CFUNCTYPE(c_void_p, c_void_p)

Exporter = Callable[[], tuple[object, object]]
"""Returns the ``(arrow_schema, arrow_array)`` capsules of one batch."""


class StreamSchemaError(CodecError, TypeError):
    """A batch of a stream has an Arrow type that cannot be cast exactly to the stream's."""


Signature = tuple[str, str, int, bytes, tuple[Any, ...]]
"""An exported schema without its buffers: (format, name, flags, metadata, children)."""


class _State:
    """One stream: its source of batches, its schema and its last error."""

    def __init__(self, batches: Iterator[Any], first: Any) -> None:
        self.batches = batches
        self.pending: Any = first
        self.signature = _signature(first.__arrow_c_schema__())
        self.schema = _schema_field(self.signature)
        self.error = ctypes.create_string_buffer(1)


_STATES: dict[int, _State] = {}        # token -> stream state, until the stream is released
_STRUCTS: dict[int, ArrowArrayStream] = {}  # id(capsule) -> the struct it points at
_lock: Final = threading.RLock()  # a release may run inside another
_tokens: Final = itertools.count(1)


def _move(capsule: object, name: bytes, struct: type[ctypes.Structure], out: int) -> None:
    """Move the struct a capsule points at into ``out`` (the capsule keeps a released struct)."""
    src = _get_pointer(capsule, name)
    if not src:
        raise CodecError(f"not an {name.decode()} capsule")
    ctypes.memmove(out, src, ctypes.sizeof(struct))
    setattr(struct.from_address(src), "release", None)


def _signature(capsule: object) -> Signature:
    """The :data:`Signature` of an exported schema (the capsule keeps its struct)."""
    return _schema_tuple(int(_get_pointer(capsule, b"arrow_schema") or 0))


def _metadata_bytes(addr: int) -> bytes:
    """The Arrow metadata blob at ``addr``: int32 count, then length-prefixed keys and values."""
    if not addr:
        return b""
    count = ctypes.c_int32.from_address(addr).value
    end = addr + 4
    for _ in range(2 * count):
        end += 4 + ctypes.c_int32.from_address(end).value
    return ctypes.string_at(addr, end - addr)


def _schema_tuple(addr: int) -> Signature:
    s = ArrowSchema.from_address(addr)
    fmt = ctypes.string_at(s.format).decode() if s.format else ""
    name = ctypes.string_at(s.name).decode("utf-8", "replace") if s.name else ""
    kids: list[Signature] = []
    if s.n_children and s.children:
        pointers = (c_void_p * s.n_children).from_address(s.children)
        kids = [_schema_tuple(int(p or 0)) for p in pointers]
    return (fmt, name, int(s.flags), _metadata_bytes(s.metadata or 0), tuple(kids))


def _schema_field(sig: Signature) -> Field:
    """A buffer-less field that exports exactly the schema ``sig`` describes."""
    fmt, name, flags, metadata, kids = sig
    return Field(fmt, name, (flags & 2) != 0, 0, 0, [], [_schema_field(k) for k in kids],
                 metadata or None)


def _describe_difference(want: Signature, got: Signature) -> str:
    for w, g in zip(want[4], got[4]):
        if w != g:
            return f'column "{w[1]}" is Arrow format {g[0]!r} on this page, {w[0]!r} on the first'
    return "the columns differ from the first page's"


class _SchemaOnly:
    """Exports one schema (``__arrow_c_schema__``), for pyarrow.schema()."""

    def __init__(self, f: Field) -> None:
        self.f = f

    def __arrow_c_schema__(self) -> object:
        return export.schema_capsule(self.f)


def _cast_to_first(state: _State, batch: Any, got: Signature) -> tuple[object, object]:
    """The batch's capsules cast exactly to the stream's schema (with pyarrow)."""
    why = _describe_difference(state.signature, got)
    try:
        import pyarrow
    except ImportError:
        raise StreamSchemaError(f"{why}; install pyarrow to cast pages to one schema, or iterate "
                                "the batches one by one") from None
    target = pyarrow.schema(_SchemaOnly(state.schema))
    try:
        record = pyarrow.record_batch(batch).cast(target, safe=True)
    except (pyarrow.ArrowInvalid, pyarrow.ArrowNotImplementedError) as exc:
        raise StreamSchemaError(f"{why}, and the values do not cast exactly ({exc}); iterate "
                                "the batches one by one") from None
    capsules: tuple[object, object] = record.__arrow_c_array__()
    return capsules


def _state_of(stream: int | None) -> _State:
    token = ArrowArrayStream.from_address(stream or 0).private_data or 0
    state = _STATES.get(token)
    if state is None:
        raise CodecError("the stream was released")
    return state


def _fail(stream: int | None, exc: BaseException) -> int:
    token = ArrowArrayStream.from_address(stream or 0).private_data or 0
    state = _STATES.get(token)
    if state is not None:
        state.error = ctypes.create_string_buffer(f"cqlcodec: {exc}".encode("utf-8", "replace"))
    return EIO


def _get_schema(stream: int | None, out: int | None) -> int:
    try:
        _move(schema_capsule(_state_of(stream).schema), b"arrow_schema", ArrowSchema, out or 0)
        return 0
    except BaseException as exc:  # reported through get_last_error; never unwinds into C
        return _fail(stream, exc)


def _next_capsules(state: _State) -> tuple[object, object] | None:
    """The ``(schema, array)`` capsules of the stream's next batch in its schema, or None at
    the end (empty pages typed differently are left out; other differences cast exactly or
    refused)."""
    while True:
        batch = state.pending
        state.pending = None
        if batch is None:
            batch = next(state.batches, None)
        if batch is None:
            return None
        schema, array = batch.__arrow_c_array__()
        got = _signature(schema)
        if got == state.signature:
            return schema, array
        if len(batch) == 0:
            continue  # an empty page may type a column differently (no value to go by)
        return _cast_to_first(state, batch, got)


def _get_next(stream: int | None, out: int | None) -> int:
    try:
        capsules = _next_capsules(_state_of(stream))
        if capsules is None:
            ctypes.memset(out or 0, 0, ctypes.sizeof(ArrowArray))  # release NULL: the end
            return 0
        _move(capsules[1], b"arrow_array", ArrowArray, out or 0)
        return 0
    except BaseException as exc:
        return _fail(stream, exc)


def _get_error(stream: int | None) -> int | None:
    token = ArrowArrayStream.from_address(stream or 0).private_data or 0
    state = _STATES.get(token)
    if state is None or not state.error.value:
        return None
    return ctypes.addressof(state.error)


def _release(stream: int | None, _states: Any = _STATES, _lock: Any = _lock,
             _struct: Any = ArrowArrayStream) -> None:
    s = _struct.from_address(stream or 0)
    if not s.release:
        return
    s.release = None
    with _lock:
        _states.pop(s.private_data or 0, None)


def _destroy(capsule: int | None, _structs: Any = _STRUCTS, _lock: Any = _lock,
             _release: Any = _release) -> None:
    with _lock:
        struct = _structs.pop(capsule or 0, None)
    if struct is not None and struct.release:
        _release(ctypes.addressof(struct))


_ADDRESSES: Final = [address_kept_forever(callback) for callback in (
    _GET_SCHEMA(_get_schema), _GET_NEXT(_get_next), _GET_ERROR(_get_error),
    _RELEASE(guarded(_release)), _RELEASE(guarded(_destroy)))]


def stream_capsule_of(batches: Iterator[Any], first: Any) -> object:
    """An ``arrow_array_stream`` capsule over ``first`` and then the rest of ``batches``.

    ``first`` fixes the schema (``__arrow_c_schema__``); every item exports a struct
    array (``__arrow_c_array__``). Batches are pulled from the iterator only when the
    consumer asks for the next one.
    """
    try:
        import pyarrow
    except ImportError:
        return ctypes_stream_capsule_of(batches, first)
    state = _State(batches, first)
    schema = pyarrow.schema(_SchemaOnly(state.schema))
    reader = pyarrow.RecordBatchReader.from_batches(schema, _record_batches(state, pyarrow))
    capsule: object = reader.__arrow_c_stream__()
    return capsule


def _record_batches(state: _State, pyarrow: Any) -> Iterator[Any]:
    """The stream's batches as pyarrow record batches of its schema."""
    while (capsules := _next_capsules(state)) is not None:
        yield pyarrow.record_batch(_Capsules(*capsules))


class _Capsules:
    """A batch's exported ``(schema, array)`` capsules, for ``pyarrow.record_batch``."""

    def __init__(self, schema: object, array: object) -> None:
        self.capsules = (schema, array)

    def __arrow_c_array__(self, requested_schema: object | None = None) -> tuple[object, object]:
        return self.capsules


def ctypes_stream_capsule_of(batches: Iterator[Any], first: Any) -> object:
    """:func:`stream_capsule_of` without pyarrow: the stream's callbacks are ctypes
    functions (for consumers that are not pyarrow; see the module docstring)."""
    state = _State(batches, first)
    token = next(_tokens)
    struct = ArrowArrayStream()
    struct.get_schema, struct.get_next, struct.get_last_error, struct.release = _ADDRESSES[:4]
    struct.private_data = token
    with _lock:
        _STATES[token] = state
    capsule: object = _capsule_new(ctypes.addressof(struct), b"arrow_array_stream", _ADDRESSES[4])
    with _lock:
        _STRUCTS[id(capsule)] = struct  # the destructor is called with the capsule object
    return capsule


def live_streams() -> int:
    """How many streams are not yet released (for leak tests)."""
    return len(_STATES)
