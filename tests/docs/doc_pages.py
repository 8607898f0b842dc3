"""What the documentation tests share: the public modules and the pages' code blocks.

``PUBLIC_MODULES`` is the one list of modules whose public names (their ``__all__``)
the API reference must cover, each on its own page ``docs/reference/<page>.md``
holding a ``::: module`` directive. A module listed here whose source does not exist
(an optional part not merged yet) is skipped; once it exists, it must be covered.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

# module -> its reference page under docs/reference/
PUBLIC_MODULES: dict[str, str] = {
    "cqlcodec": "cqlcodec.md",
    "cqlcodec.driver": "driver.md",
    "cqlcodec.aio": "aio.md",
    "cqlcodec.errors": "errors.md",
    "cqlcodec.kinds": "kinds.md",
    "cqlcodec.dask": "dask.md",
    "cqlcodec.ray": "ray.md",
}


def module_source(module: str) -> Path | None:
    """The source file or package directory of ``module`` in the tree, or None."""
    path = ROOT.joinpath(*module.split("."))
    if path.is_dir() and (path / "__init__.py").exists():
        return path
    if path.with_suffix(".py").exists():
        return path.with_suffix(".py")
    return None


def present_public_modules() -> dict[str, str]:
    """The entries of ``PUBLIC_MODULES`` whose source exists in this tree."""
    return {m: page for m, page in PUBLIC_MODULES.items() if module_source(m) is not None}


@dataclass
class CodeBlock:
    """A fenced ``python`` block of a page: its text, first line number and needs."""

    page: Path
    line: int
    code: str
    needs: list[str]

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


_FENCE = re.compile(r"^(?P<indent>[ \t]*)```python[^\n]*\n(?P<code>.*?)^(?P=indent)```[ \t]*$",
                    re.MULTILINE | re.DOTALL)
# a first line ``# needs: server`` (or ``# needs: pandas, polars``) says what a block needs;
# ``server`` means a running Cassandra and the session of the previous blocks: never run here
_NEEDS = re.compile(r"^#\s*needs:\s*(?P<needs>[\w ,.-]+)$")


def code_blocks(page: Path) -> list[CodeBlock]:
    """The ``python`` blocks of a Markdown page, in order."""
    text = page.read_text(encoding="utf-8")
    blocks = []
    for match in _FENCE.finditer(text):
        indent = match.group("indent")
        lines = [line[len(indent):] if line.startswith(indent) else line
                 for line in match.group("code").splitlines()]
        needs: list[str] = []
        if lines:
            found = _NEEDS.match(lines[0].strip())
            if found:
                needs = [n.strip() for n in found.group("needs").split(",") if n.strip()]
        line = text.count("\n", 0, match.start()) + 2
        blocks.append(CodeBlock(page, line, "\n".join(lines) + "\n", needs))
    return blocks


def pages() -> list[Path]:
    """Every Markdown page of the site, and README.md (its tour runs too)."""
    found = sorted(DOCS.rglob("*.md")) if DOCS.is_dir() else []
    readme = ROOT / "README.md"
    return [readme, *found] if readme.exists() else found
