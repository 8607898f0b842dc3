"""Arrow C data interface export (PyCapsules) with the standard library's ctypes.

No Arrow library is needed to produce the capsules: the ``ArrowSchema``,
``ArrowArray`` and ``ArrowArrayStream`` structs are filled here and point at
the finished column buffers (zero copy; the ``bytes`` objects stay alive until
the consumer releases the structs).

Lifetime: one export (a schema, an array or a stream) owns a holder in
``_LIVE`` with every ctypes object and buffer it references and a count of the
structs not yet released. Each struct's ``private_data`` is the holder's key;
its ``release`` callback releases the children it still owns (those the
consumer did not move out), marks itself released and drops one count; a
capsule adds one count that its destructor drops. When the count reaches zero
the holder goes away. Callbacks run with the GIL (ctypes takes it), so
consumers may release from any thread.
"""

from __future__ import annotations

import ctypes
import itertools
import struct
import threading
from collections.abc import Sequence
from ctypes import CFUNCTYPE, Structure, c_char_p, c_int, c_int64, c_void_p
from typing import Any, Final

from cqlcodec import kinds as K
from cqlcodec.columnar.builders import DEC256_VARINT, DurationNode, FixedNode, ListNode, Node, VarintNode
from cqlcodec.columnar.ctypes_guard import address_kept_forever, guarded

FLAG_NULLABLE: Final = 2
EIO: Final = 5


class ArrowSchema(Structure):
    _fields_ = [
        ("format", c_void_p), ("name", c_void_p), ("metadata", c_void_p),
        ("flags", c_int64), ("n_children", c_int64), ("children", c_void_p),
        ("dictionary", c_void_p), ("release", c_void_p), ("private_data", c_void_p),
    ]


class ArrowArray(Structure):
    _fields_ = [
        ("length", c_int64), ("null_count", c_int64), ("offset", c_int64),
        ("n_buffers", c_int64), ("n_children", c_int64), ("buffers", c_void_p),
        ("children", c_void_p), ("dictionary", c_void_p), ("release", c_void_p),
        ("private_data", c_void_p),
    ]


class ArrowArrayStream(Structure):
    _fields_ = [
        ("get_schema", c_void_p), ("get_next", c_void_p), ("get_last_error", c_void_p),
        ("release", c_void_p), ("private_data", c_void_p),
    ]


_RELEASE: Final = CFUNCTYPE(None, c_void_p)
_GET_SCHEMA: Final = CFUNCTYPE(c_int, c_void_p, c_void_p)
_GET_NEXT: Final = CFUNCTYPE(c_int, c_void_p, c_void_p)
_GET_ERROR: Final = CFUNCTYPE(c_void_p, c_void_p)

_capsule_new: Final = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [c_void_p, c_char_p, c_void_p]

_SCHEMA_NAME: Final = b"arrow_schema"
_ARRAY_NAME: Final = b"arrow_array"
_STREAM_NAME: Final = b"arrow_array_stream"


class _Holder:
    """Everything one export keeps alive, and how many of its structs are unreleased."""

    def __init__(self) -> None:
        self.keep: list[object] = []
        self.refs = 0
        self.error = ctypes.create_string_buffer(1)
        self.batch: Any = None
        self.done = False


_LIVE: dict[int, _Holder] = {}
_CAPSULES: dict[int, int] = {}
_lock: Final = threading.RLock()  # a release may run inside another (a freed holder)
_tokens: Final = itertools.count(1)


def _new_holder() -> tuple[int, _Holder]:
    h = _Holder()
    token = next(_tokens)
    with _lock:
        _LIVE[token] = h
    return token, h


def _unref(token: int, _live: Any = _LIVE, _lock: Any = _lock) -> None:
    with _lock:
        h = _live.get(token)
        if h is None:
            return
        h.refs -= 1
        if h.refs <= 0:
            del _live[token]


def _cstr(h: _Holder, text: str | bytes) -> int:
    raw = text.encode("utf-8") if isinstance(text, str) else text
    b = ctypes.create_string_buffer(raw, len(raw) + 1)
    h.keep.append(b)
    return ctypes.addressof(b)


def _ptr_array(h: _Holder, addresses: Sequence[int | None]) -> int:
    arr = (c_void_p * max(1, len(addresses)))(*addresses)
    h.keep.append(arr)
    return ctypes.addressof(arr)


def _buffer_address(h: _Holder, data: bytes | None) -> int | None:
    if data is None:
        return None
    h.keep.append(data)
    p = ctypes.cast(c_char_p(data), c_void_p).value
    assert p is not None
    return p


def _metadata(pairs: list[tuple[str, str]]) -> bytes:
    out = [struct.pack("=i", len(pairs))]
    for k, v in pairs:
        kb = k.encode()
        vb = v.encode()
        out.append(struct.pack("=i", len(kb)) + kb + struct.pack("=i", len(vb)) + vb)
    return b"".join(out)


# --- the release callbacks ----------------------------------------------------------------
# They run from C at any time (see cqlcodec.columnar.ctypes_guard): each clears its
# struct's ``release`` before anything else, and everything they use is bound as a
# default argument, so that they still work while interpreter shutdown clears modules.

def _release_tree(struct_type: type[ArrowSchema] | type[ArrowArray], addr: int | None,
                  _unref: Any = _unref, _pointers: Any = c_void_p) -> None:
    """Release a schema or an array and its still-unreleased children (same layout).

    A loop, not a recursion: a recursive call would look this function up in the module,
    which interpreter shutdown may already have cleared. Every struct is read before the
    first count is dropped (dropping the last one frees the structs)."""
    tokens: list[int] = []
    pending = [addr]
    while pending:
        at = pending.pop()
        if not at:
            continue
        s = struct_type.from_address(at)
        if not s.release:
            continue
        s.release = None
        tokens.append(s.private_data or 0)
        if s.n_children and s.children:
            pending += (_pointers * s.n_children).from_address(s.children)
    for token in tokens:
        _unref(token)


def _release_schema(addr: int | None, _tree: Any = _release_tree,
                    _struct: Any = ArrowSchema) -> None:
    _tree(_struct, addr)


def _release_array(addr: int | None, _tree: Any = _release_tree,
                   _struct: Any = ArrowArray) -> None:
    _tree(_struct, addr)


def _release_stream(addr: int | None, _unref: Any = _unref,
                    _struct: Any = ArrowArrayStream) -> None:
    if not addr:
        return
    s = _struct.from_address(addr)
    if not s.release:
        return
    s.release = None
    _unref(s.private_data or 0)


def _callback_address(fn: Any) -> int:
    """The C address of a ctypes release callback running ``fn`` (kept for ever)."""
    return address_kept_forever(_RELEASE(guarded(fn)))


_RELEASE_SCHEMA_ADDR: Final = _callback_address(_release_schema)
_RELEASE_ARRAY_ADDR: Final = _callback_address(_release_array)
_RELEASE_STREAM_ADDR: Final = _callback_address(_release_stream)


def _capsule_destructor(capsule: int | None, _capsules: Any = _CAPSULES, _live: Any = _LIVE,
                        _unref: Any = _unref, _addressof: Any = ctypes.addressof,
                        _releases: Any = ((ArrowSchema, _release_schema),
                                          (ArrowArray, _release_array),
                                          (ArrowArrayStream, _release_stream))) -> None:
    token = _capsules.pop(capsule or 0, None)
    if token is None:
        return
    h = _live.get(token)
    if h is not None and h.keep:
        top = h.keep[0]
        for struct_type, release in _releases:
            if isinstance(top, struct_type) and top.release:
                release(_addressof(top))
    _unref(token)


_DESTRUCTOR_ADDR: Final = _callback_address(_capsule_destructor)


def _capsule(token: int, h: _Holder, top: Structure, name: bytes) -> object:
    h.refs += 1  # the capsule's own reference
    cap: object = _capsule_new(ctypes.addressof(top), name, _DESTRUCTOR_ADDR)
    _CAPSULES[id(cap)] = token
    return cap


# --- a field and an array description of a node -------------------------------------------

class Field:
    """One schema entry and its array: format, name, flags, metadata, buffers, children."""

    def __init__(self, fmt: str, name: str, nullable: bool, length: int, null_count: int,
                 buffers: list[bytes | None], children: list[Field],
                 metadata: bytes | None = None) -> None:
        self.fmt = fmt
        self.name = name
        self.nullable = nullable
        self.length = length
        self.null_count = null_count
        self.buffers = buffers
        self.children = children
        self.metadata = metadata


def field_of(node: Node, name: str, nullable: bool = True,
             interval_as_struct: bool = False) -> Field:
    """The schema/array description of a finished builder.

    ``interval_as_struct`` is the export for polars, which imports neither Arrow
    month_day_nano intervals nor decimal256: durations as ``struct<months: int32,
    days: int32, nanoseconds: int64>`` and varints of 39 to 76 digits as their
    two's-complement ``binary`` (as varints of more digits always are)."""
    kids: list[Field] = []
    if isinstance(node, ListNode):
        if node.kind == K.MAP:
            n_entries = node.items[0].length
            kids = [Field("+s", "entries", False, n_entries, 0, [None], [
                field_of(node.items[0], "key", node.fmt != "+m", interval_as_struct),
                field_of(node.items[1], "value", True, interval_as_struct)])]
        else:
            kids = [field_of(node.items[0], "item", True, interval_as_struct)]
    else:
        names = node.child_names()
        children = node.children()
        if names:
            kids = [field_of(c, nm, True, interval_as_struct) for c, nm in zip(children, names)]
        elif children:
            kids = [field_of(children[0], "item", True, interval_as_struct)]
    meta = None
    ext = node.extension()
    if ext:
        meta = _metadata([("ARROW:extension:name", ext), ("ARROW:extension:metadata", "")])
    if node.fmt == "n":
        return Field("n", name, nullable, node.length, node.length, [], [])
    if interval_as_struct and isinstance(node, DurationNode):
        parts = node.parts()
        kids = [Field(fmt, part, True, node.length, node.nulls, [node.validity(), data], [])
                for fmt, part, data in zip(("i", "i", "l"), ("months", "days", "nanoseconds"),
                                           parts)]
        return Field("+s", name, nullable, node.length, node.nulls, [node.validity()], kids)
    if interval_as_struct and isinstance(node, VarintNode) and node.fmt == DEC256_VARINT:
        return Field("Z" if node.large else "z", name, nullable, node.length, node.nulls,
                     [node.validity(), node.offs, node.blob], [])
    if isinstance(node, FixedNode) and node.lazy:
        read_from_body(node)
    return Field(node.fmt, name, nullable, node.length, node.nulls,
                 [node.validity()] + node.buffers(), kids, meta)


def read_from_body(node: FixedNode) -> None:
    """The values of a vector column's items still in the body, with numpy when it is
    installed (one conversion instead of a gather and a byte swap)."""
    try:
        from cqlcodec.columnar.numpy_conv import from_body
    except ImportError:  # no numpy: buffers() reads them
        return
    runs = node.runs
    if runs is not None:
        node.take_values(from_body(node, runs, len(runs.starts) >> 3, runs.run_len).tobytes())


def batch_field(names: Sequence[str], nodes: Sequence[Node], num_rows: int,
                interval_as_struct: bool = False) -> Field:
    """The struct field whose children are the columns of a batch."""
    return Field("+s", "", False, num_rows, 0, [None],
                 [field_of(n, nm, True, interval_as_struct) for n, nm in zip(nodes, names)])


def _fill_schema(h: _Holder, token: int, s: ArrowSchema, f: Field) -> None:
    h.refs += 1
    s.format = _cstr(h, f.fmt)
    s.name = _cstr(h, f.name)
    s.metadata = _cstr(h, f.metadata) if f.metadata is not None else None
    s.flags = FLAG_NULLABLE if f.nullable else 0
    s.n_children = len(f.children)
    kids: list[int | None] = []
    for child in f.children:
        cs = ArrowSchema()
        h.keep.append(cs)
        _fill_schema(h, token, cs, child)
        kids.append(ctypes.addressof(cs))
    s.children = _ptr_array(h, kids) if kids else None
    s.dictionary = None
    s.private_data = token
    s.release = _RELEASE_SCHEMA_ADDR


def _fill_array(h: _Holder, token: int, a: ArrowArray, f: Field) -> None:
    h.refs += 1
    a.length = f.length
    a.null_count = f.null_count
    a.offset = 0
    a.n_buffers = len(f.buffers)
    a.buffers = _ptr_array(h, [_buffer_address(h, b) for b in f.buffers])
    a.n_children = len(f.children)
    kids: list[int | None] = []
    for child in f.children:
        ca = ArrowArray()
        h.keep.append(ca)
        _fill_array(h, token, ca, child)
        kids.append(ctypes.addressof(ca))
    a.children = _ptr_array(h, kids) if kids else None
    a.dictionary = None
    a.private_data = token
    a.release = _RELEASE_ARRAY_ADDR


# --- public entry points ------------------------------------------------------------------

def schema_capsule(f: Field) -> object:
    """A PyCapsule ``arrow_schema`` for ``f``."""
    token, h = _new_holder()
    s = ArrowSchema()
    h.keep.append(s)
    _fill_schema(h, token, s, f)
    return _capsule(token, h, s, _SCHEMA_NAME)


def array_capsules(f: Field) -> tuple[object, object]:
    """The ``(arrow_schema, arrow_array)`` capsule pair for ``f``."""
    token, h = _new_holder()
    a = ArrowArray()
    h.keep.append(a)
    _fill_array(h, token, a, f)
    return schema_capsule(f), _capsule(token, h, a, _ARRAY_NAME)


def stream_capsule(f: Field) -> object:
    """An ``arrow_array_stream`` capsule giving one struct array (a record batch)."""
    token, h = _new_holder()
    st = ArrowArrayStream()
    h.keep.append(st)
    h.refs += 1

    def get_schema(_stream: int | None, out: int | None) -> int:
        try:
            assert out
            stoken, sh = _new_holder()
            _fill_schema(sh, stoken, ArrowSchema.from_address(out), f)
            return 0
        except Exception as exc:  # reported through get_last_error
            _set_error(h, exc)
            return EIO

    def get_next(_stream: int | None, out: int | None) -> int:
        try:
            assert out
            target = ArrowArray.from_address(out)
            if h.done:
                ctypes.memset(out, 0, ctypes.sizeof(ArrowArray))  # release NULL: the end
                return 0
            atoken, ah = _new_holder()
            _fill_array(ah, atoken, target, f)
            h.done = True
            return 0
        except Exception as exc:
            _set_error(h, exc)
            return EIO

    def get_error(_stream: int | None) -> int | None:
        return ctypes.addressof(h.error) if h.error.value else None

    callbacks = (_GET_SCHEMA(get_schema), _GET_NEXT(get_next), _GET_ERROR(get_error))
    h.keep.append(callbacks)
    st.get_schema = ctypes.cast(callbacks[0], c_void_p).value
    st.get_next = ctypes.cast(callbacks[1], c_void_p).value
    st.get_last_error = ctypes.cast(callbacks[2], c_void_p).value
    st.private_data = token
    st.release = _RELEASE_STREAM_ADDR
    return _capsule(token, h, st, _STREAM_NAME)


def _set_error(h: _Holder, exc: BaseException) -> None:
    h.error = ctypes.create_string_buffer(f"cqlcodec: {exc}".encode("utf-8", "replace"))


def live_exports() -> int:
    """How many exports still hold buffers (for leak tests)."""
    return len(_LIVE)

