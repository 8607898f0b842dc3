"""A griffe extension for the docs build: Sphinx markup in docstrings becomes Markdown.

cqlcodec's docstrings name other objects the Sphinx way (``:class:`Prepared```,
``:func:`~cqlcodec.decode_result```); the site renders them as inline code.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|data|attr|exc|mod|obj):`~?([^`]+)`")
# reStructuredText's literal-block marker: "text::" reads "text:", a lone "::" goes
_LITERAL_ALONE = re.compile(r"^[ \t]*::[ \t]*\n", re.MULTILINE)
_LITERAL_AFTER_TEXT = re.compile(r"(\S)::[ \t]*$", re.MULTILINE)


class SphinxRolesToCode(griffe.Extension):
    """Rewrite ``:role:`target``` as ```target``` (and ``::`` markers) in every docstring."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            text = _ROLE.sub(r"`\1`", obj.docstring.value)
            text = _LITERAL_ALONE.sub("", text)
            obj.docstring.value = _LITERAL_AFTER_TEXT.sub(r"\1:", text)
