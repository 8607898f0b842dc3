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
# --- end parsing ---

# --- values (issue 3) ---
# --- end values ---

# --- hot path: caches, metadata, bind, results (issue 4) ---
# --- end hot path ---


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
