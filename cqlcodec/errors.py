"""The cqlcodec exception hierarchy.

Every exception cqlcodec raises on purpose derives from :class:`CodecError`.
Each concrete class also derives from the built-in exception a Python user
would expect (``ValueError`` for bad values and bytes, ``TypeError`` for a
value of the wrong Python type), so existing ``except ValueError`` code keeps
working.
"""

from __future__ import annotations


class CodecError(Exception):
    """Base class of every cqlcodec exception."""


class ProtocolVersionError(CodecError, ValueError):
    """A protocol version cqlcodec does not support (it supports 3, 4 and 5)."""


class TypeParseError(CodecError, ValueError):
    """A CQL type string or Java marshal class name could not be parsed.

    ``text`` is the input and ``position`` the character offset of the problem.
    """

    def __init__(self, message: str, text: str = "", position: int = -1) -> None:
        if position >= 0:
            shown = text
            if len(text) > 120:  # a window around the position, not a huge message
                start = max(0, position - 60)
                shown = text[start: start + 120]
                shown = ("..." if start > 0 else "") + shown + (
                    "..." if start + 120 < len(text) else "")
            message = f"{message} (at position {position} in {shown!r})"
        super().__init__(message)
        self.text = text
        self.position = position


class DecodeError(CodecError, ValueError):
    """Malformed bytes: wrong width, truncation, bad lengths, trailing garbage.

    ``cql_type`` names the type being decoded, ``offset`` the byte offset in
    the buffer that was handed to cqlcodec, and ``column`` the result column
    when the error happened while decoding rows (else ``None``).
    """

    def __init__(self, message: str, cql_type: str | None = None,
                 offset: int | None = None, column: str | None = None) -> None:
        super().__init__(message)
        self.cql_type = cql_type
        self.offset = offset
        self.column = column


class EncodeError(CodecError):
    """A Python value could not be encoded as the requested CQL type.

    Raised as :class:`EncodeTypeError` (also a ``TypeError``) when the Python
    type is wrong and :class:`EncodeValueError` (also a ``ValueError``) when the
    value is out of range for the CQL type.
    """

    def __init__(self, message: str, cql_type: str | None = None) -> None:
        super().__init__(message)
        self.cql_type = cql_type


class EncodeTypeError(EncodeError, TypeError):
    """The value's Python type cannot be encoded as the CQL type."""


class EncodeValueError(EncodeError, ValueError):
    """The value has an acceptable type but is out of range for the CQL type."""


class BindError(EncodeError):
    """Binding a value to a prepared-statement column failed.

    ``column`` is the bind column's name, ``cql_type`` its CQL type and
    ``value_type`` the Python type of the offending value; the underlying
    error is chained as ``__cause__``. ``row`` is the row's index when many rows
    are bound at once (``Prepared.bind_columnar``), else None.
    """

    def __init__(self, message: str, column: str = "", cql_type: str | None = None,
                 value_type: str = "") -> None:
        super().__init__(message, cql_type)
        self.column = column
        self.value_type = value_type
        self.row: int | None = None


class BindTypeError(BindError, TypeError):
    """A bind failure caused by a value of the wrong Python type."""


class BindValueError(BindError, ValueError):
    """A bind failure caused by an out-of-range value, or a wrong number of values."""


class UnsupportedTypeError(CodecError, ValueError):
    """The operation is not possible for this CQL type (e.g. a UDT known only by name)."""


class TypeTooDeepError(DecodeError, UnsupportedTypeError):
    """Metadata describing a type nested deeper than cqlcodec supports.

    A :class:`DecodeError` naming the offset, and an :class:`UnsupportedTypeError`:
    the bytes may be well-formed, only beyond cqlcodec's nesting bound.
    """


class FramingError(DecodeError):
    """A connection's byte stream breaks the protocol's framing.

    ``checksum`` is true for a CRC24 header or CRC32 payload mismatch of a protocol v5
    segment, false for a frame header the protocol forbids (an unsupported version, a
    negative body length). cqlcodec's connection class turns it into the driver's own
    exception (``CrcMismatchException``, ``ProtocolError``) before anyone sees it.
    """

    def __init__(self, message: str, checksum: bool) -> None:
        super().__init__(message)
        self.checksum = checksum


class UnsupportedRequestError(CodecError, TypeError):
    """What cqlcodec's request path (:mod:`cqlcodec.requests`) does not do (yet); the
    message names the driver call that does it."""
