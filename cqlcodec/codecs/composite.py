"""Codec of Cassandra's ``CompositeType(T1, T2, ...)`` (a custom type, class name on the wire).

Content layout, as Cassandra's CompositeType reads and builds it: an optional
``0xFFFF`` static marker, then per component an unsigned ``[short]`` length, that
many bytes of the component's own type and one end-of-component byte. A value may
carry a prefix of the components (none of them is ever null).

Decisions:

* Decoding gives a ``tuple`` of the components the value carries, in order, each
  decoded by its type (a zero-length component follows that type's zero-length
  rule: ``None``, or ``''``/``b''`` for text and blob), as the drivers return it.
  A leading ``0xFFFF`` is Cassandra's static marker and is skipped, as Cassandra
  does. Any end-of-component byte is accepted (the drivers ignore it; only values
  written through unvalidated CQL literals have a non-zero one before the end).
* A truncated length, component or end-of-component byte, and more components than
  the type has, are DecodeErrors naming the type and the absolute byte offset
  (Cassandra's own validation refuses such values; the drivers ignore extra
  components).
* Encoding takes a sequence (not text, bytes or a mapping) of at most as many items
  as there are components: each item is encoded by its type (``None`` as an empty
  component), with end-of-component byte 0, as Cassandra builds values. A
  component longer than 65535 bytes, or a first one of exactly 65535 (it would read
  back as the static marker), is an EncodeValueError.
"""

from __future__ import annotations

from typing import Final

from mypy_extensions import i64

from cqlcodec.codecs.base import Codec
from cqlcodec.codecs.collections import CompositeCodec, sequence_items
from cqlcodec.runtime.buffers import BytesWriter, write_i16_be
from cqlcodec.runtime.wire import malformed, out_of_range

_STATIC_MARKER: Final = 0xFFFF
_MAX_COMPONENT: Final = 0xFFFF


class CassandraCompositeCodec(CompositeCodec):
    """Java ``CompositeType``: decodes to a tuple of the components present."""

    def __init__(self, cql_name: str, components: list[Codec]) -> None:
        super().__init__(cql_name, -1, components)
        self.components: Final = components

    def encode_into(self, w: BytesWriter, value: object) -> None:
        items = sequence_items(self.cql_name, value, "a tuple or another sequence of components")
        codecs = self.components
        if len(items) > len(codecs):
            raise out_of_range(self.cql_name, value,
                               f"{len(items)} items for a composite of {len(codecs)} components")
        for i, item in enumerate(items):
            data = b"" if item is None else codecs[i].encode(item)
            size = len(data)
            if size > _MAX_COMPONENT or (i == 0 and size == _STATIC_MARKER):
                raise out_of_range(
                    self.cql_name, value,
                    f"component {i} is {size} bytes long; a composite component holds at most "
                    f"{_MAX_COMPONENT - 1 if i == 0 else _MAX_COMPONENT} bytes")
            write_i16_be(w, size if size < 0x8000 else size - 0x10000)
            w.write(data)
            w.write(b"\x00")

    def decode(self, buf: bytes, pos: i64, n: i64) -> object:
        if n == 0:
            return None
        cql_name = self.cql_name
        codecs = self.components
        count = len(codecs)
        end = pos + n
        p = pos
        if n >= 2 and buf[p] == 0xFF and buf[p + 1] == 0xFF:
            p += 2
        out: list[object] = []
        while p < end:
            i = len(out)
            if i >= count:
                raise malformed(cql_name, p, f"more than the {count} components of the type")
            if end - p < 2:
                raise malformed(cql_name, p, f"truncated: needs 2 bytes for the length of "
                                f"component {i} but only {end - p} remain")
            size: i64 = (buf[p] << 8) | buf[p + 1]
            p += 2
            if size >= end - p:
                raise malformed(cql_name, p - 2, f"component {i} of {size} bytes and its "
                                f"end-of-component byte exceed the {end - p} bytes that remain")
            out.append(codecs[i].decode(buf, p, size))
            p += size + 1
        return tuple(out)
