"""A griffe extension for the docs build: Sphinx roles in docstrings become code.

cqlcodec's docstrings name other objects the Sphinx way (``:class:`Prepared```,
``:func:`~cqlcodec.decode_result```); the site renders them as inline code.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|data|attr|exc|mod|obj):`~?([^`]+)`")


class SphinxRolesToCode(griffe.Extension):
    """Rewrite ``:role:`target``` as ```target``` in every docstring griffe loads."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = _ROLE.sub(r"`\1`", obj.docstring.value)
