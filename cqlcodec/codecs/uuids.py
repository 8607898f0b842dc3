"""Codecs of uuid and timeuuid: 16 bytes in RFC 4122 (big-endian) order.

Both decode to ``uuid.UUID`` and encode from ``uuid.UUID`` (and subclasses)
only. timeuuid encoding requires a version-1 (time-based) RFC 4122 UUID, as
Cassandra does, and raises EncodeValueError otherwise; decoding does not check
the version, so whatever the server stored reads back. Decoding demands
exactly 16 bytes; zero bytes decode to ``None``.

``uuid.UUID(bytes=...)`` spends most of its time validating arguments; the
decoder builds the object the way ``UUID.__init__`` leaves it (its two slots
``int`` and ``is_safe``) when the running Python's UUID has exactly those
slots, and falls back to ``UUID(int=...)`` otherwise.
"""

from __future__ import annotations

from typing import Callable, Final, final
from uuid import UUID, SafeUUID

from mypy_extensions import i64

from cqlcodec.codecs.base import Codec
from cqlcodec.codecs.fixed import wrong_width
from cqlcodec.runtime.buffers import BytesWriter
from cqlcodec.runtime.wire import out_of_range, wrong_type

_SAFE_UNKNOWN: Final = SafeUUID.unknown


def _fast_construction_is_safe() -> bool:
    """True if a UUID built from its slots equals one built by ``UUID(int=...)``."""
    if getattr(UUID, "__slots__", None) != ("int", "is_safe", "__weakref__"):
        return False
    probe = 0x0123456789ABCDEF0FEDCBA987654321
    u = object.__new__(UUID)
    object.__setattr__(u, "int", probe)
    object.__setattr__(u, "is_safe", _SAFE_UNKNOWN)
    ref = UUID(int=probe)
    return u == ref and u.is_safe is ref.is_safe and hash(u) == hash(ref) and str(u) == str(ref)


FAST_UUID: Final = _fast_construction_is_safe()
# Bound once: the attribute and global lookups cost more than the calls.
_new_object: Final[Callable[[type[UUID]], UUID]] = object.__new__
_int_from_bytes: Final = int.from_bytes
_UUID_CLASS: Final = UUID


def make_uuid(value: int) -> UUID:
    """A ``uuid.UUID`` with the 128-bit integer ``value``, without argument checks."""
    if FAST_UUID:
        u = _new_object(_UUID_CLASS)
        object.__setattr__(u, "int", value)
        object.__setattr__(u, "is_safe", _SAFE_UNKNOWN)
        return u
    return UUID(int=value)


def uuid_int(value: object, cql_name: str) -> int:
    """The 128-bit integer of a ``uuid.UUID`` value, else EncodeTypeError."""
    if isinstance(value, UUID):
        n: int = value.int
        return n
    raise wrong_type(cql_name, value, "a uuid.UUID")


@final
class UuidCodec(Codec):
    """uuid: any 16-byte UUID."""

    def __init__(self) -> None:
        super().__init__("uuid", 16)

    def encode(self, value: object) -> bytes:
        return uuid_int(value, "uuid").to_bytes(16, "big")

    def encode_into(self, w: BytesWriter, value: object) -> None:
        w.write(uuid_int(value, "uuid").to_bytes(16, "big"))

    def decode(self, buf: bytes, pos: i64, n: i64) -> object:
        if n == 16:
            return make_uuid(_int_from_bytes(buf[pos: pos + 16], "big"))
        if n == 0:
            return None
        raise wrong_width("uuid", pos, 16, n)


def timeuuid_bytes(value: object) -> bytes:
    """The 16 bytes of a version-1 UUID, else EncodeTypeError/EncodeValueError."""
    data = uuid_int(value, "timeuuid").to_bytes(16, "big")
    # version nibble (byte 6, high 4 bits) is 1; variant (byte 8, high 2 bits) is RFC 4122
    if data[6] >> 4 != 1 or data[8] >> 6 != 2:
        raise out_of_range("timeuuid", value,
                           "a timeuuid must be a version 1 (time-based) RFC 4122 UUID")
    return data


@final
class TimeUuidCodec(Codec):
    """timeuuid: a version-1 UUID."""

    def __init__(self) -> None:
        super().__init__("timeuuid", 16)

    def encode(self, value: object) -> bytes:
        return timeuuid_bytes(value)

    def encode_into(self, w: BytesWriter, value: object) -> None:
        w.write(timeuuid_bytes(value))

    def decode(self, buf: bytes, pos: i64, n: i64) -> object:
        if n == 16:
            return make_uuid(_int_from_bytes(buf[pos: pos + 16], "big"))
        if n == 0:
            return None
        raise wrong_width("timeuuid", pos, 16, n)
