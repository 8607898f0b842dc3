"""Codec of inet: an IPv4 (4 bytes) or IPv6 (16 bytes) address.

Decodes to ``str``: dotted-quad for IPv4, the compressed text form of the
platform's ``inet_ntop`` for IPv6 (as the drivers return, e.g. '::1' or
'::ffff:1.2.3.4'). Any other length raises DecodeError.

Encodes from ``ipaddress.IPv4Address``/``IPv6Address`` (and their interface
subclasses: the address part) or ``str``. Strings are parsed strictly: only a
real dotted-quad IPv4 address or IPv6 text, no ``inet_aton`` shorthands
('127.1', '0x7f.1', '1'), no surrounding spaces, no ports or zone ids.
An IPv4-mapped IPv6 address stays 16 bytes.
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Callable, Final, final

from mypy_extensions import i64

from cqlcodec.codecs.base import Codec
from cqlcodec.runtime.buffers import BytesWriter
from cqlcodec.runtime.wire import malformed, out_of_range, wrong_type

# plain ints and the functions held in Finals: no module attribute lookup per call
_AF_INET: Final[int] = int(socket.AF_INET)
_AF_INET6: Final[int] = int(socket.AF_INET6)
_inet_pton: Final[Callable[[int, str], bytes]] = socket.inet_pton
_inet_ntop: Final[Callable[[int, bytes], str]] = socket.inet_ntop


def inet_bytes(value: object) -> bytes:
    """The 4 or 16 address bytes of ``value`` (str or ipaddress object)."""
    if isinstance(value, str):
        family = _AF_INET6 if ":" in value else _AF_INET
        try:
            return _inet_pton(family, value)
        except (OSError, ValueError):
            raise out_of_range("inet", value, "not an IPv4 or IPv6 address") from None
    if isinstance(value, ipaddress.IPv4Address) or isinstance(value, ipaddress.IPv6Address):
        return value.packed
    raise wrong_type("inet", value, "a str or an ipaddress.IPv4Address/IPv6Address")


@final
class InetCodec(Codec):
    """inet: 4 or 16 address bytes; decodes to str."""

    def __init__(self) -> None:
        super().__init__("inet", -1)

    def encode(self, value: object) -> bytes:
        return inet_bytes(value)

    def encode_into(self, w: BytesWriter, value: object) -> None:
        w.write(inet_bytes(value))

    def decode(self, buf: bytes, pos: i64, n: i64) -> object:
        if n == 4:
            return f"{buf[pos]}.{buf[pos + 1]}.{buf[pos + 2]}.{buf[pos + 3]}"
        if n == 16:
            return _inet_ntop(_AF_INET6, buf[pos: pos + 16])
        if n == 0:
            return None
        raise malformed("inet", pos, f"an inet value is 4 or 16 bytes, got {n}")
