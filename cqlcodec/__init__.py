"""cqlcodec: a typed, mypyc-compiled codec for the CQL native protocol (v3-v5).

The same sources run compiled (C extensions built by mypyc) or interpreted;
:data:`COMPILED` says which build is active.
"""

from __future__ import annotations

from cqlcodec._version import __version__
from cqlcodec.errors import (
    BindError,
    BindTypeError,
    BindValueError,
    CodecError,
    DecodeError,
    EncodeError,
    EncodeTypeError,
    EncodeValueError,
    ProtocolVersionError,
    TypeParseError,
    UnsupportedTypeError,
)
from cqlcodec.values import UNSET

__all__ = [
    "COMPILED",
    "BindError",
    "BindTypeError",
    "BindValueError",
    "CodecError",
    "DecodeError",
    "EncodeError",
    "EncodeTypeError",
    "EncodeValueError",
    "ProtocolVersionError",
    "TypeParseError",
    "UnsupportedTypeError",
    "UNSET",
    "__version__",
]

# --- types (issue 2) ---
from cqlcodec import _kinds as kinds
from cqlcodec._types import (
    CqlType,
    custom_type,
    frozen,
    list_of,
    map_of,
    reversed_type,
    scalar_type,
    set_of,
    tuple_of,
    user_type,
    vector_of,
)

__all__ += [
    "kinds",
    "CqlType",
    "custom_type",
    "frozen",
    "list_of",
    "map_of",
    "reversed_type",
    "scalar_type",
    "set_of",
    "tuple_of",
    "user_type",
    "vector_of",
]
# --- end types ---

# --- parsing (issue 2) ---
from cqlcodec._option import read_type_option
from cqlcodec._parse import parse_type

__all__ += [
    "parse_type",
    "read_type_option",
]
# --- end parsing ---

# --- values (issue 3) ---
from cqlcodec.values import Date, Duration, Time

__all__ += ["Date", "Duration", "Time"]
from cqlcodec.containers import FrozenMap, UdtValue, udt_class

__all__ += ["FrozenMap", "UdtValue", "udt_class"]
# --- end values ---

# --- hot path: caches, metadata, bind, results (issue 4) ---
from cqlcodec._bind import Bound
from cqlcodec._cache import (
    cache_limit,
    cache_sizes,
    clear_caches,
    find_deserializer,
    find_serializer,
    make_deserializers,
    make_serializers,
    set_cache_limit,
)
from cqlcodec._encryption import ColumnEncryptionPolicy
from cqlcodec._metadata import ColumnSpec, Prepared, decode_prepared
from cqlcodec._results import (
    Result,
    RowsResult,
    SchemaChangeResult,
    SetKeyspaceResult,
    VoidResult,
    decode_result,
    decode_rows_result,
)
from cqlcodec._rows import dict_factory, named_tuple_factory, tuple_factory

__all__ += [
    "Bound",
    "cache_limit",
    "cache_sizes",
    "clear_caches",
    "find_deserializer",
    "find_serializer",
    "make_deserializers",
    "make_serializers",
    "set_cache_limit",
    "ColumnEncryptionPolicy",
    "ColumnSpec",
    "Prepared",
    "decode_prepared",
    "Result",
    "RowsResult",
    "SchemaChangeResult",
    "SetKeyspaceResult",
    "VoidResult",
    "decode_result",
    "decode_rows_result",
    "dict_factory",
    "named_tuple_factory",
    "tuple_factory",
]
# --- end hot path ---

# --- columnar results ---
from cqlcodec.columnar import Column, ColumnBatch, decode_columns

__all__ += ["Column", "ColumnBatch", "decode_columns"]
# --- end columnar results ---


def _compiled() -> bool:
    """True when the core modules were loaded from mypyc-built extension modules."""
    from cqlcodec import _codec, _types, _wire

    suffixes = {m.__file__.rsplit(".", 1)[-1] for m in (_codec, _types, _wire) if m.__file__}
    if suffixes == {"py"}:
        return False
    if suffixes <= {"so", "pyd"}:
        return True
    raise ImportError(
        "cqlcodec is half compiled: some core modules are extensions and some are .py "
        f"({sorted(suffixes)}); reinstall it"
    )


COMPILED: bool = _compiled()
"""True exactly when the running cqlcodec modules are mypyc-compiled extensions."""

# Load the codec factory (and, interpreted, the fast paths) now rather than on the
# first decode, so the first call costs what every later call costs.
from cqlcodec import _codecs  # noqa: E402,F401

if not COMPILED:
    from cqlcodec import _interp_fast  # noqa: E402,F401
