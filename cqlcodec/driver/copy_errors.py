"""The error of a copy (:func:`cqlcodec.driver.copy_table`), apart from the copy itself
so that the modules it uses can raise it too."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cqlcodec.errors import CodecError

if TYPE_CHECKING:
    from cqlcodec.driver.copy import CopyResult

__all__ = ["CopyError"]


class CopyError(CodecError):
    """A copy could not begin (an unknown table or column, columns the target lacks, a
    state directory of another copy) or did not finish: ``result`` is the
    :class:`CopyResult` so far (None when nothing began); with a state directory the
    splits copied are recorded and ``resume=True`` continues."""

    def __init__(self, message: str, result: CopyResult | None = None) -> None:
        super().__init__(message)
        self.result = result
