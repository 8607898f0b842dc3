"""Arrow export through arrays and schemas that pyarrow owns (zero copy over our buffers).

An :class:`~cqlcodec.columnar.arrow.Field` becomes a ``pyarrow.Array`` made with
``pyarrow.Array.from_buffers`` over ``pyarrow.py_buffer`` views of the column's
``bytes`` (no copy), and a ``pyarrow.Field`` of the same name, type, nullability and
extension. The capsules handed out are then pyarrow's: their ``release`` callbacks
are pyarrow's C code, which runs whatever the Python state (an exception being
raised, interpreter shutdown, another thread). The structs they export are the ones
:mod:`cqlcodec.columnar.arrow` fills with ctypes, field for field (a test compares
both).
"""

from __future__ import annotations

from typing import Any

from cqlcodec.columnar.arrow import Field

_UUID_EXTENSION = "arrow.uuid"


def _parametrised(pa: Any, fmt: str) -> Any:
    """The pyarrow type of a format with a parameter after ``:`` (no children)."""
    head, _, arg = fmt.partition(":")
    if head == "w":
        return pa.binary(int(arg))
    if head == "d":  # d:precision,scale[,bitwidth]
        parts = arg.split(",")
        make = pa.decimal256 if len(parts) > 2 and parts[2] == "256" else pa.decimal128
        return make(int(parts[0]), int(parts[1]))
    if head == "tsm":
        return pa.timestamp("ms", tz=arg or None)
    raise ValueError(f"cqlcodec: no pyarrow type for Arrow format {fmt!r}")


_plain: dict[str, Any] = {}


def _plain_types(pa: Any) -> dict[str, Any]:
    """The pyarrow types of the formats without parameters or children (made once)."""
    if not _plain:
        _plain.update(_made_plain_types(pa))
    return _plain


def _made_plain_types(pa: Any) -> dict[str, Any]:
    return {
        "n": pa.null(), "b": pa.bool_(), "c": pa.int8(), "s": pa.int16(), "i": pa.int32(),
        "l": pa.int64(), "f": pa.float32(), "g": pa.float64(), "tdD": pa.date32(),
        "ttn": pa.time64("ns"), "tin": pa.month_day_nano_interval(), "z": pa.binary(),
        "Z": pa.large_binary(), "u": pa.string(), "U": pa.large_string(),
    }


def _is_uuid(f: Field) -> bool:
    return f.metadata is not None and _UUID_EXTENSION.encode() in f.metadata


def data_type(pa: Any, f: Field) -> Any:
    """The pyarrow type of ``f`` (its format string, children and extension)."""
    fmt = f.fmt
    if _is_uuid(f) and hasattr(pa, "uuid"):
        return pa.uuid()
    if fmt == "+s":
        return pa.struct([field(pa, c) for c in f.children])
    if fmt == "+l":
        return pa.list_(field(pa, f.children[0]))
    if fmt == "+L":
        return pa.large_list(field(pa, f.children[0]))
    if fmt.startswith("+w:"):
        return pa.list_(field(pa, f.children[0]), int(fmt[3:]))
    if fmt == "+m":
        key, value = f.children[0].children
        return pa.map_(field(pa, key), field(pa, value))
    plain = _plain_types(pa).get(fmt)
    return plain if plain is not None else _parametrised(pa, fmt)


def field(pa: Any, f: Field, type_: Any = None) -> Any:
    """The ``pyarrow.Field`` of ``f`` (of type ``type_`` when given)."""
    t = data_type(pa, f) if type_ is None else type_
    return pa.field(f.name, t, nullable=f.nullable, metadata=_metadata(pa, f, t))


def _metadata(pa: Any, f: Field, t: Any) -> dict[bytes, bytes] | None:
    """The field's extension metadata where its type does not carry it (``arrow.uuid``
    before pyarrow 18: fixed-size binary with the metadata, as the ctypes export gives)."""
    if not _is_uuid(f) or isinstance(t, pa.BaseExtensionType):
        return None
    return {b"ARROW:extension:name": _UUID_EXTENSION.encode(), b"ARROW:extension:metadata": b""}


def array(pa: Any, f: Field, type_: Any = None) -> Any:
    """``f`` as a pyarrow array over its buffers (no copy; each ``bytes`` stays alive
    as long as pyarrow holds its buffer)."""
    t = data_type(pa, f) if type_ is None else type_
    storage = t.storage_type if isinstance(t, pa.BaseExtensionType) else t
    if f.fmt == "n":
        return pa.nulls(f.length)
    buffers = [None if b is None else pa.py_buffer(b) for b in f.buffers]
    children = [array(pa, c, _child_type(pa, storage, i)) for i, c in enumerate(f.children)]
    made = pa.Array.from_buffers(storage, f.length, buffers, f.null_count,
                                 children=children or None)
    if storage is not t:
        return pa.ExtensionArray.from_storage(t, made)
    return made


def _child_type(pa: Any, t: Any, i: int) -> Any:
    if isinstance(t, pa.MapType):  # one child: the entries struct of key and item
        return pa.struct([t.key_field, t.item_field])
    if isinstance(t, (pa.ListType, pa.LargeListType, pa.FixedSizeListType)):
        return t.value_type
    return t.field(i).type


def schema_capsule(pa: Any, f: Field) -> object:
    """An ``arrow_schema`` capsule of ``f``, exported by pyarrow."""
    capsule: object = field(pa, f).__arrow_c_schema__()
    return capsule


def array_capsules(pa: Any, f: Field) -> tuple[object, object]:
    """The ``(arrow_schema, arrow_array)`` capsules of ``f``, exported by pyarrow."""
    made = array(pa, f)
    _, array_capsule = made.__arrow_c_array__()
    schema = field(pa, f, made.type).__arrow_c_schema__()
    return schema, array_capsule


def stream_capsule(pa: Any, f: Field) -> object:
    """An ``arrow_array_stream`` capsule of the struct field ``f`` as one record batch,
    exported by pyarrow."""
    batch = pa.RecordBatch.from_struct_array(array(pa, f))
    capsule: object = pa.RecordBatchReader.from_batches(batch.schema, [batch]).__arrow_c_stream__()
    return capsule
