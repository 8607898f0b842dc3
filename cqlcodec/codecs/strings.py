"""Codecs of the byte-string types: text, ascii, blob, unknown custom types and empty.

* text (varchar): UTF-8. Encoding takes ``str``; a lone surrogate raises
  EncodeValueError. Decoding is strict UTF-8 (DecodeError naming the offset of
  the first bad byte).
* ascii: 7-bit ASCII. Encoding takes ``str`` and rejects non-ASCII characters
  (EncodeValueError); decoding rejects bytes >= 0x80.
* blob: raw bytes. Encoding takes bytes, bytearray and memoryview only (not
  int, not str); decoding returns ``bytes``.
* A zero-length text/ascii/blob value decodes to '' / b'' (never ``None``).
* Custom types cqlcodec does not know: raw bytes in and out, like blob, but a
  zero-length value decodes to ``None`` as for every non-string type.
* empty (Cassandra's EmptyType): every value is zero bytes long; encoding takes
  an empty bytes-like value, decoding any other length raises DecodeError.
"""

from __future__ import annotations

from typing import final

from mypy_extensions import i64

from cqlcodec.codecs.base import Codec
from cqlcodec.runtime.buffers import BytesWriter
from cqlcodec.runtime.wire import malformed, out_of_range, wrong_type


def bytes_value(value: object, cql_name: str) -> bytes:
    """``value`` as ``bytes`` for a blob-like column: bytes, bytearray or memoryview."""
    if isinstance(value, bytes):
        return value if type(value) is bytes else bytes(value)
    if isinstance(value, bytearray):
        return bytes(value)
    if isinstance(value, memoryview):
        return value.tobytes()
    raise wrong_type(cql_name, value, "bytes, bytearray or memoryview")


@final
class TextCodec(Codec):
    """text / varchar: UTF-8."""

    def __init__(self) -> None:
        super().__init__("text", -1)

    def encode(self, value: object) -> bytes:
        if isinstance(value, str):
            try:
                return value.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise out_of_range(
                    "text", value,
                    f"not encodable as UTF-8 ({exc.reason} at index {exc.start})") from None
        raise wrong_type("text", value, "a str")

    def encode_into(self, w: BytesWriter, value: object) -> None:
        w.write(self.encode(value))

    def decode(self, buf: bytes, pos: i64, n: i64) -> object:
        try:
            return buf[pos: pos + n].decode("utf-8")
        except UnicodeDecodeError as exc:
            raise malformed("text", pos + exc.start,
                            f"invalid UTF-8 ({exc.reason})") from None


@final
class AsciiCodec(Codec):
    """ascii: 7-bit US-ASCII."""

    def __init__(self) -> None:
        super().__init__("ascii", -1)

    def encode(self, value: object) -> bytes:
        if isinstance(value, str):
            try:
                return value.encode("ascii")
            except UnicodeEncodeError as exc:
                raise out_of_range(
                    "ascii", value,
                    f"non-ASCII character {value[exc.start]!r} at index {exc.start}") from None
        raise wrong_type("ascii", value, "a str")

    def encode_into(self, w: BytesWriter, value: object) -> None:
        w.write(self.encode(value))

    def decode(self, buf: bytes, pos: i64, n: i64) -> object:
        try:
            return buf[pos: pos + n].decode("ascii")
        except UnicodeDecodeError as exc:
            raise malformed("ascii", pos + exc.start,
                            f"byte {buf[pos + exc.start]:#04x} is not ASCII") from None


@final
class BlobCodec(Codec):
    """blob: raw bytes; a zero-length value decodes to b''."""

    def __init__(self) -> None:
        super().__init__("blob", -1)

    def encode(self, value: object) -> bytes:
        if type(value) is bytes:
            return value
        return bytes_value(value, "blob")

    def encode_into(self, w: BytesWriter, value: object) -> None:
        w.write(self.encode(value))

    def decode(self, buf: bytes, pos: i64, n: i64) -> object:
        return buf[pos: pos + n]


@final
class RawCodec(Codec):
    """A custom type cqlcodec does not know: raw bytes; zero length decodes to None."""

    def encode(self, value: object) -> bytes:
        if type(value) is bytes:
            return value
        return bytes_value(value, self.cql_name)

    def encode_into(self, w: BytesWriter, value: object) -> None:
        w.write(self.encode(value))

    def decode(self, buf: bytes, pos: i64, n: i64) -> object:
        if n == 0:
            return None
        return buf[pos: pos + n]


@final
class EmptyCodec(Codec):
    """Cassandra's EmptyType: every value has zero bytes."""

    def __init__(self, cql_name: str) -> None:
        super().__init__(cql_name, 0)

    def encode(self, value: object) -> bytes:
        data = bytes_value(value, self.cql_name)
        if len(data) != 0:
            raise out_of_range(self.cql_name, value, "values of the empty type have no bytes")
        return b""

    def encode_into(self, w: BytesWriter, value: object) -> None:
        self.encode(value)

    def decode(self, buf: bytes, pos: i64, n: i64) -> object:
        if n != 0:
            raise malformed(self.cql_name, pos,
                            f"values of the empty type have no bytes, got {n}")
        return None
