"""Python value classes for CQL values that have no exact builtin equivalent."""

from __future__ import annotations

from typing import Final


class _UnsetType:
    """The type of :data:`UNSET`: a bind value that leaves the column untouched."""

    __slots__ = ()
    _instance: _UnsetType | None = None

    def __new__(cls) -> _UnsetType:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNSET"

    def __bool__(self) -> bool:
        return False

    def __reduce__(self) -> str:
        return "UNSET"


UNSET: Final = _UnsetType()
"""Bind value meaning "not set" (protocol v4+ length -2): the column keeps its value."""
