"""The codec interface every CQL type's encoder/decoder implements.

A codec turns one Python value into the *content* bytes of a CQL value and
back. Null is never content: callers handle the ``-1`` length themselves and
never pass ``None`` to ``encode``.
"""

from __future__ import annotations

from typing import Final

from mypy_extensions import i64

from cqlcodec.runtime.buffers import BytesWriter, write_i32_be

# Flags selecting decode variants of one CQL type (see build_codec).
FLAG_TZ_AWARE: Final = 1  # timestamps decode to aware UTC datetimes
FLAG_NUMPY: Final = 2  # numeric vectors decode to numpy arrays
FLAG_HASHABLE: Final = 4  # collections decode to hashable equivalents (set elements, map keys)


class Codec:
    """Encoder and decoder of the content bytes of one CQL type.

    ``cql_name`` is the CQL type's canonical name and ``fixed_size`` the width
    of every value when the type is fixed-size in Cassandra's sense (used for
    the vector layout), else -1. Subclasses override ``encode`` and ``decode``
    and may override ``encode_into`` to write straight into a buffer.
    """

    def __init__(self, cql_name: str, fixed_size: i64 = -1) -> None:
        self.cql_name = cql_name
        self.fixed_size = fixed_size

    def encode(self, value: object) -> bytes:
        """Return the content bytes of ``value`` (never ``None``)."""
        raise NotImplementedError

    def encode_into(self, w: BytesWriter, value: object) -> None:
        """Append the content bytes of ``value`` to ``w`` (no length prefix)."""
        w.write(self.encode(value))

    def encode_value_into(self, w: BytesWriter, value: object) -> None:
        """Append ``value`` as a ``[bytes]``: [int] length then content; ``None`` is -1."""
        if value is None:
            write_i32_be(w, -1)
            return
        start: int = len(w)
        write_i32_be(w, 0)
        self.encode_into(w, value)
        size: int = len(w) - start - 4
        w[start] = (size >> 24) & 0xFF
        w[start + 1] = (size >> 16) & 0xFF
        w[start + 2] = (size >> 8) & 0xFF
        w[start + 3] = size & 0xFF

    def decode(self, buf: bytes, pos: i64, n: i64) -> object:
        """Decode the ``n`` content bytes at ``buf[pos:pos+n]``.

        The caller guarantees ``n >= 0`` and ``pos + n <= len(buf)``. A zero
        length decodes to ``None`` for every type except blob, ascii and text.
        Malformed content raises DecodeError naming the type and offset.
        """
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.cql_name}>"
