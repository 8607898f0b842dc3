"""cqlcodec: a typed, mypyc-compiled codec for the CQL native protocol (v3-v5).

The same sources run compiled (C extensions built by mypyc) or interpreted;
:data:`COMPILED` says which build is active.

Layout, in the direction of the dependencies (each layer imports only the ones
before it):

1. ``errors``, ``kinds``: the error hierarchy and the kind codes (leaves);
2. ``runtime/``: the COMPILED flag, byte readers/writers, wire primitives;
3. ``values``: Date, Time, Duration, UNSET;
4. ``types/``: the CqlType model, CQL text and ``[option]`` readers;
5. ``containers``: FrozenMap and UDT value classes;
6. ``codecs/``: a codec per type family, the builder and the caches;
7. ``protocol/``: column specs, binding, rows, prepared statements, RESULT bodies;
8. this module (the public API), ``driver`` and the CLI (``__main__``).
"""

from __future__ import annotations

from cqlcodec import kinds
from cqlcodec._version import __version__
from cqlcodec.codecs.cache import (
    cache_limit,
    cache_sizes,
    clear_caches,
    find_deserializer,
    find_serializer,
    make_deserializers,
    make_serializers,
    set_cache_limit,
)
from cqlcodec.codecs.encryption import ColumnEncryptionPolicy
from cqlcodec.containers import FrozenMap, UdtValue, udt_class
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
from cqlcodec.protocol.columns import ColumnSpec
from cqlcodec.protocol.metadata import decode_prepared
from cqlcodec.protocol.prepared import Bound, Prepared
from cqlcodec.protocol.results import (
    Result,
    RowsResult,
    SchemaChangeResult,
    SetKeyspaceResult,
    VoidResult,
    decode_result,
    decode_rows_result,
)
from cqlcodec.protocol.rows import dict_factory, named_tuple_factory, tuple_factory
from cqlcodec.types.model import (
    CqlType,
    composite_type,
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
from cqlcodec.types.option import read_type_option
from cqlcodec.types.parse import parse_type
from cqlcodec.values import UNSET, Date, Duration, Time

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
    "kinds",
    "CqlType",
    "composite_type",
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
    "parse_type",
    "read_type_option",
    "Date",
    "Duration",
    "Time",
    "FrozenMap",
    "UdtValue",
    "udt_class",
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

# --- columnar results ---
from cqlcodec.columnar import Column, ColumnBatch, decode_columns

__all__ += ["Column", "ColumnBatch", "decode_columns"]
# --- end columnar results ---


def _compiled() -> bool:
    """The build flag, after checking that the core modules all come from one build."""
    from cqlcodec.codecs import base
    from cqlcodec.runtime import build, wire
    from cqlcodec.types import model

    suffixes = {m.__file__.rsplit(".", 1)[-1] for m in (base, build, model, wire) if m.__file__}
    if len(suffixes) > 1 and not suffixes <= {"so", "pyd"}:
        raise ImportError(
            "cqlcodec is half compiled: some core modules are extensions and some are .py "
            f"({sorted(suffixes)}); reinstall it"
        )
    return build.COMPILED


COMPILED: bool = _compiled()
"""True exactly when the running cqlcodec modules are mypyc-compiled extensions."""

# Load the codec builder (and, interpreted, the fast paths) now rather than on the
# first decode, so the first call costs what every later call costs.
from cqlcodec.codecs import builder as _builder  # noqa: E402,F401

if not COMPILED:
    from cqlcodec.protocol import interp_fast as _interp_fast  # noqa: E402,F401
