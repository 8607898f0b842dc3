"""The column-encryption policy interface (client-side encryption of column values).

A policy decides which columns are encrypted, what CQL type their plaintext
has, and how bytes are encrypted and decrypted. cqlcodec calls it like this:

* bind: a non-null, non-UNSET value of a column the policy contains is encoded
  with ``column_type(key)`` (the *plaintext* type; the server column is a
  blob) and the content bytes are passed to ``encrypt(key, data)``; null and
  UNSET are sent as they are (-1 / -2), never encrypted;
* rows: a non-null cell of such a column is passed to ``decrypt(key, data)``
  and the plaintext is decoded with ``column_type(key)``; null cells are
  never passed to ``decrypt``.

Columns are identified by a ``(keyspace, table, column)`` tuple of strings.
That tuple compares and hashes equal to the driver's
``ColDesc(ks, table, col)`` namedtuple, so a driver policy keyed by
``ColDesc`` (e.g. ``AES256ColumnEncryptionPolicy``) finds its columns with
cqlcodec's keys. Its ``column_type`` returns a driver type class; wrap it to
return ``cqlcodec.parse_type(cls.cql_parameterized_type())`` instead.
"""

from __future__ import annotations

from typing import Any, Final, Protocol

from mypy_extensions import i64

from cqlcodec.codecs.base import Codec
from cqlcodec.types.model import CqlType

ColumnKey = tuple[str, str, str]
"""(keyspace, table, column): how a policy identifies a column."""


class ColumnEncryptionPolicy(Protocol):
    """What cqlcodec needs from a column-encryption policy (a structural protocol)."""

    def contains_column(self, column: ColumnKey) -> bool:
        """True if values of this column are encrypted."""
        ...

    def column_type(self, column: ColumnKey) -> CqlType:
        """The CQL type of the column's plaintext values."""
        ...

    def encrypt(self, column: ColumnKey, data: bytes) -> bytes:
        """Encrypt the encoded plaintext ``data`` of one value of ``column``."""
        ...

    def decrypt(self, column: ColumnKey, data: bytes) -> bytes:
        """Decrypt one non-null cell of ``column`` back to the encoded plaintext."""
        ...


def _as_bytes(data: object, what: str) -> bytes:
    if isinstance(data, bytes):
        return data
    if isinstance(data, (bytearray, memoryview)):
        return bytes(data)
    raise TypeError(f"the column encryption policy's {what} returned "
                    f"{type(data).__name__}, not bytes")


class EncryptingCodec(Codec):
    """Bind side: encodes with the plaintext type's codec, then encrypts."""

    def __init__(self, policy: ColumnEncryptionPolicy, key: ColumnKey, inner: Codec) -> None:
        super().__init__(inner.cql_name)
        self.policy: Final = policy
        self.key: Final = key
        self.inner: Final = inner

    def encode(self, value: object) -> bytes:
        policy: Any = self.policy  # untyped call: a bytearray/memoryview result is accepted too
        return _as_bytes(policy.encrypt(self.key, self.inner.encode(value)), "encrypt()")


class DecryptingCodec(Codec):
    """Rows side: decrypts a (non-null) cell, then decodes the plaintext type."""

    def __init__(self, policy: ColumnEncryptionPolicy, key: ColumnKey, inner: Codec) -> None:
        super().__init__(inner.cql_name)
        self.policy: Final = policy
        self.key: Final = key
        self.inner: Final = inner

    def decode(self, buf: bytes, pos: i64, n: i64) -> object:
        policy: Any = self.policy  # untyped call: a bytearray/memoryview result is accepted too
        plain = _as_bytes(policy.decrypt(self.key, buf[pos: pos + n]), "decrypt()")
        return self.inner.decode(plain, 0, len(plain))
