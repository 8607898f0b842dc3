"""The examples of the documentation (and README.md) run, in whichever build is installed.

Every fenced ``python`` block of a page runs, in page order, in one namespace per
page (so a block may use what an earlier block of the same page made). A block
whose first line is ``# needs: server`` needs a running Cassandra (or what such a
block made): it is not run here, so every block that uses a session is marked; those
pages run against the test server in tests/integration/test_doc_server_examples.py.
Other needs (``# needs: pandas, pyarrow``) are modules: the block is skipped where
one is missing.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest
from doc_pages import DOCS, ROOT, code_blocks, pages

# pages with an example that needs no server
PAGES = [page for page in pages() if any("server" not in b.needs for b in code_blocks(page))]


# what an example that needs a running cluster mentions; such a block must be marked
_LOOKS_CONNECTED = re.compile(r"Cluster\(|\bsession\b|\bconnect\b|contact_points|"
                              r"\b\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\b")


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_page_examples_run(page: Path) -> None:
    namespace: dict[str, object] = {"__name__": f"docs_example_{page.stem.replace('-', '_')}"}
    ran = 0
    for block in code_blocks(page):
        if "server" in block.needs:
            continue
        missing = [m for m in block.needs if importlib.util.find_spec(m) is None]
        if missing:
            continue
        assert not _LOOKS_CONNECTED.search(block.code), (
            f"the example at {block.id} looks as if it reaches a server (a session, a Cluster, "
            f"connect, an address): mark it '# needs: server' (tests never leave this machine)")
        try:
            exec(compile(block.code, block.id, "exec"), namespace)
        except Exception as exc:
            raise AssertionError(f"the example at {block.id} failed: {exc!r}\n{block.code}") from exc
        ran += 1
    if ran == 0:
        pytest.skip(f"{page.name}: every example needs a server or a missing module")


def test_extraction_sees_markers_and_indented_fences(tmp_path: Path) -> None:
    page = tmp_path / "p.md"
    page.write_text("x\n\n```python\n# needs: server\nsession.execute('q')\n```\n\n"
                    "- item\n\n    ```python\n    a = 1\n    ```\n\n```bash\nls\n```\n")
    blocks = code_blocks(page)
    assert [b.needs for b in blocks] == [["server"], []]
    assert blocks[1].code == "a = 1\n" and blocks[0].line == 4


def test_every_page_with_examples_is_found() -> None:
    if not DOCS.is_dir():
        pytest.skip("docs/ is not in this checkout")
    assert any(p.name == "tour.md" for p in PAGES)
