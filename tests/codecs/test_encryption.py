"""Column encryption: bind encrypts after encoding, rows decrypt before decoding."""

from __future__ import annotations

import struct

import oracle
import pytest
from hotwire import NO_METADATA, Cell, Col, rows_body

from cqlcodec import (
    UNSET,
    BindTypeError,
    BindValueError,
    ColumnEncryptionPolicy,
    ColumnSpec,
    CqlType,
    DecodeError,
    Prepared,
    decode_rows_result,
    parse_type,
)

ColumnKey = tuple[str, str, str]
BLOB = parse_type("blob")
INT = parse_type("int")
TEXT = parse_type("text")


class XorPolicy:
    """A test policy that really transforms bytes: XOR with a key, plus a 1-byte tag."""

    def __init__(self, key: bytes, columns: dict[ColumnKey, CqlType]) -> None:
        self.key = key
        self.columns = columns
        self.calls: list[tuple[str, ColumnKey, bytes]] = []
        self.fail_decrypt = False
        self.fail_encrypt = False

    def _xor(self, data: bytes) -> bytes:
        return bytes(b ^ self.key[i % len(self.key)] for i, b in enumerate(data))

    def contains_column(self, column: ColumnKey) -> bool:
        return column in self.columns

    def column_type(self, column: ColumnKey) -> CqlType:
        return self.columns[column]

    def encrypt(self, column: ColumnKey, data: bytes) -> bytes:
        self.calls.append(("encrypt", column, data))
        if self.fail_encrypt:
            raise ValueError("key unavailable")
        return b"\xee" + self._xor(data)

    def decrypt(self, column: ColumnKey, data: bytes) -> bytes:
        self.calls.append(("decrypt", column, data))
        assert isinstance(data, bytes)
        if self.fail_decrypt or data[:1] != b"\xee":
            raise ValueError("bad ciphertext")
        return self._xor(data[1:])


# server-side schema: the encrypted columns are blobs
COLS: list[Col] = [("ks", "t", "id", INT), ("ks", "t", "secret", BLOB), ("ks", "t", "n", BLOB)]
PLAIN = {("ks", "t", "secret"): TEXT, ("ks", "t", "n"): INT}


def policy() -> XorPolicy:
    return XorPolicy(b"k3y!", dict(PLAIN))


def specs() -> tuple[ColumnSpec, ...]:
    return tuple(ColumnSpec(*c) for c in COLS)


def test_policy_satisfies_the_protocol() -> None:
    p: ColumnEncryptionPolicy = policy()  # mypy checks the structural protocol
    assert p.contains_column(("ks", "t", "n"))


def test_bind_encrypts_encoded_plaintext() -> None:
    pol = policy()
    prep = Prepared(specs(), (), [0], 4, column_encryption_policy=pol)
    bound = prep.bind([1, "hello", 7])
    assert bound.values[0] == struct.pack(">i", 1)
    assert bound.values[1] == b"\xee" + pol._xor(b"hello")
    assert bound.values[2] == b"\xee" + pol._xor(struct.pack(">i", 7))
    assert [c[:2] for c in pol.calls] == [("encrypt", ("ks", "t", "secret")),
                                          ("encrypt", ("ks", "t", "n"))]
    assert pol.calls[0][2] == b"hello"


def test_null_and_unset_are_never_encrypted() -> None:
    pol = policy()
    prep = Prepared(specs(), (), [0], 4, column_encryption_policy=pol)
    assert prep.bind([1, None, UNSET]).values == [struct.pack(">i", 1), None, UNSET]
    assert prep.bind({"id": 1}).values == [struct.pack(">i", 1), UNSET, UNSET]
    assert pol.calls == []


def test_bind_checks_plaintext_type() -> None:
    prep = Prepared(specs(), (), [0], 4, column_encryption_policy=policy())
    with pytest.raises(BindTypeError, match='"secret"'):
        prep.bind([1, b"raw bytes"])  # the plaintext type is text


def test_encrypt_failures_are_bind_errors() -> None:
    pol = policy()
    pol.fail_encrypt = True
    prep = Prepared(specs(), (), [0], 4, column_encryption_policy=pol)
    with pytest.raises(BindValueError, match='"secret"') as info:
        prep.bind([1, "x"])
    assert isinstance(info.value.__cause__, ValueError)


def test_encrypt_must_return_bytes() -> None:
    class Bad(XorPolicy):
        def encrypt(self, column: ColumnKey, data: bytes) -> bytes:
            return "text"  # type: ignore[return-value]

    prep = Prepared(specs(), (), [0], 4, column_encryption_policy=Bad(b"k", dict(PLAIN)))
    with pytest.raises(BindTypeError, match="not bytes"):
        prep.bind([1, "x"])


def _rows(pol: XorPolicy) -> tuple[list[list[Cell]], list[tuple[object, ...]]]:
    cells: list[list[Cell]] = [
        [struct.pack(">i", 1), b"\xee" + pol._xor(b"abc"), b"\xee" + pol._xor(struct.pack(">i", 5))],
        [struct.pack(">i", 2), None, None],
        [struct.pack(">i", 3), b"\xee" + pol._xor(b""), b"\xee" + pol._xor(struct.pack(">i", -1))],
    ]
    return cells, [(1, "abc", 5), (2, None, None), (3, "", -1)]


@pytest.mark.parametrize("no_metadata", [False, True])
def test_rows_decrypt_before_decoding(no_metadata: bool) -> None:
    pol = policy()
    cells, expected = _rows(pol)
    prep = Prepared([], specs(), [], 4, column_encryption_policy=pol)
    body = rows_body(COLS, cells, flags=NO_METADATA if no_metadata else 0)
    r = decode_rows_result(body, 4, prep)
    assert r.rows == expected
    decrypted = [c for c in pol.calls if c[0] == "decrypt"]
    assert len(decrypted) == 4  # null cells never reach decrypt
    assert all(c[2][:1] == b"\xee" for c in decrypted)


def test_policy_given_per_call() -> None:
    pol = policy()
    cells, expected = _rows(pol)
    body = rows_body(COLS, cells)
    assert decode_rows_result(body, 4, column_encryption_policy=pol).rows == expected
    raw = decode_rows_result(body, 4).rows
    assert raw[1] == (2, None, None) and raw[0][1] == cells[0][1]


def test_round_trip_bind_then_decode() -> None:
    pol = policy()
    prep = Prepared(specs(), specs(), [0], 5, column_encryption_policy=pol)
    values: list[list[object]] = [[1, "héllo", 42], [2, None, -7], [3, "", None]]
    cells: list[list[Cell]] = []
    for v in values:
        out = prep.bind(v).values
        cells.append([c if isinstance(c, bytes) or c is None else None for c in out])
    r = decode_rows_result(rows_body(COLS, cells, flags=NO_METADATA), 5, prep)
    assert r.rows == [tuple(v) for v in values]


def test_parse_description_checks_policy_identity() -> None:
    pol = policy()
    other = policy()
    cells, expected = _rows(pol)
    prep = Prepared([], specs(), [], 4, column_encryption_policy=pol)
    body = rows_body(COLS, cells, flags=NO_METADATA)
    decode_rows_result(body, 4, prep)
    first = prep._rows_desc
    assert first is not None and first.policy is pol
    decode_rows_result(body, 4, prep)
    assert prep._rows_desc is first
    assert decode_rows_result(body, 4, prep, column_encryption_policy=other).rows == expected
    assert prep._rows_desc is not first and prep._rows_desc is not None
    assert prep._rows_desc.policy is other
    assert other.calls and all(c[0] == "decrypt" for c in other.calls)


def test_decrypt_failures_are_decode_errors() -> None:
    pol = policy()
    cells, _expected = _rows(pol)
    pol.fail_decrypt = True
    with pytest.raises(DecodeError, match='column "secret"') as info:
        decode_rows_result(rows_body(COLS, cells), 4, column_encryption_policy=pol)
    assert info.value.column == "secret" and isinstance(info.value.__cause__, ValueError)


def test_keys_match_driver_col_desc() -> None:
    spec = ColumnSpec("ks", "t", "secret", BLOB)
    desc = oracle.driver_col_desc("ks", "t", "secret")
    assert spec.key == desc and hash(spec.key) == hash(desc)
    assert {desc: 1}[spec.key] == 1
