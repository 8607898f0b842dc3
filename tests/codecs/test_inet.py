"""Scalar codecs: inet (cqlcodec.codecs.inet)."""

from __future__ import annotations

import ipaddress

import pytest
from scalar_checks import check, dec, decode_error, enc, encode_error

from cqlcodec.errors import EncodeTypeError, EncodeValueError

# --- inet -------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "hexed"), [
    ("127.0.0.1", "7f000001"), ("0.0.0.0", "00000000"), ("255.255.255.255", "ffffffff"),
    ("::1", "00000000000000000000000000000001"), ("::", "00" * 16),
    ("2001:db8::1", "20010db8000000000000000000000001"),
    ("2001:db8:0:1::1", "20010db8000000010000000000000001"),
    ("::ffff:1.2.3.4", "00000000000000000000ffff01020304"),
    ("1::", "00010000000000000000000000000000"),
    ("fe80::1:2:3:4", "fe800000000000000001000200030004"),
])
def test_inet_vectors(text: str, hexed: str) -> None:
    check("inet", text, hexed)


def test_inet_accepts_ipaddress_and_other_spellings() -> None:
    assert enc("inet", ipaddress.IPv4Address("10.1.2.3")) == bytes.fromhex("0a010203")
    assert enc("inet", ipaddress.IPv6Address("2001:db8::1")) == bytes.fromhex(
        "20010db8000000000000000000000001")
    assert enc("inet", ipaddress.ip_interface("10.1.2.3/8")) == bytes.fromhex("0a010203")
    assert enc("inet", "2001:DB8:0:0:0:0:0:1") == bytes.fromhex("20010db8000000000000000000000001")
    assert dec("inet", bytes.fromhex("20010DB8000000000000000000000001")) == "2001:db8::1"


@pytest.mark.parametrize("text", ["127.1", "1", "0x7f.0.0.1", "1.2.3", "1.2.3.4.5", "256.1.1.1",
                                  " 1.2.3.4", "1.2.3.4 ", "1.2.3.4:80", "01.2.3.4",
                                  "fe80::1%eth0", "1:2:3:4:5:6:7:8:9", ":::", "localhost",
                                  "", "1.2.3.4\x00", "１.2.3.4"])
def test_inet_rejects_non_addresses(text: str) -> None:
    encode_error("inet", text, EncodeValueError, "address")


def test_inet_wrong_types_and_lengths() -> None:
    for bad in (b"\x7f\x00\x00\x01", 2130706433, None, ("127.0.0.1",)):
        encode_error("inet", bad, EncodeTypeError)
    for n in (1, 3, 5, 8, 15, 17):
        decode_error("inet", b"\x01" * n, "4 or 16 bytes")
