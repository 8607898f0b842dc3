"""The API reference covers every public name, and every public name has a docstring.

The public names of a module are its ``__all__``, read statically with griffe (the
tool that renders the reference), so modules whose optional dependencies are not
installed are checked too. These tests check the built site: ``python3 -m nox -s
docs`` builds it, sets ``CQLCODEC_DOCS_SITE`` to its directory and names this module
(``check_*`` modules are not collected by the ``tests`` sessions).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from doc_pages import DOCS, PUBLIC_MODULES, ROOT, present_public_modules

if TYPE_CHECKING:
    import griffe

SITE = os.environ.get("CQLCODEC_DOCS_SITE", "")
pytestmark = pytest.mark.skipif(
    not SITE, reason="checks the built site: run `python3 -m nox -s docs` (CQLCODEC_DOCS_SITE unset)")


@pytest.fixture(scope="module")
def modules() -> dict[str, griffe.Module]:
    griffe = pytest.importorskip("griffe")
    loader = griffe.GriffeLoader(search_paths=[str(ROOT)])
    for name in present_public_modules():
        loader.load(name)
    loader.resolve_aliases(implicit=False, external=False)
    return {name: loader.modules_collection[name] for name in present_public_modules()}


def public_names(module: griffe.Module) -> list[str]:
    """``__all__``; for a module without one, the public names it defines itself."""
    if module.exports is not None:
        return [str(name) for name in module.exports]
    return [name for name, member in module.members.items()
            if not name.startswith("_") and not member.is_alias]


def target(obj: griffe.Object | griffe.Alias) -> griffe.Object | griffe.Alias:
    """What an imported name stands for (the object itself when it is no import)."""
    import griffe
    return obj.final_target if isinstance(obj, griffe.Alias) else obj


def anchors(page: str) -> set[str]:
    html = (Path(SITE) / "reference" / page.replace(".md", ".html")).read_text(encoding="utf-8")
    return set(re.findall(r'\bid="([^"]+)"', html))


def test_every_public_module_has_its_page_and_directive(modules: dict[str, griffe.Module]) -> None:
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for name, page in present_public_modules().items():
        source = DOCS / "reference" / page
        assert source.exists(), f"{name}: add docs/reference/{page} with '::: {name}'"
        assert re.search(rf"^::: {re.escape(name)}\s*$", source.read_text(), re.MULTILINE), (
            f"docs/reference/{page} has no '::: {name}' directive")
        assert f"reference/{page}" in nav, f"mkdocs.yml nav lacks '- {name}: reference/{page}'"


def test_every_public_name_is_in_the_reference(modules: dict[str, griffe.Module]) -> None:
    missing = []
    for name, module in modules.items():
        ids = anchors(PUBLIC_MODULES[name])
        names = public_names(module)
        assert names, f"{name} has no public names"
        for public in names:
            obj = target(module[public])
            if obj.is_module:  # a public submodule (cqlcodec.kinds): it has its own page
                if obj.path not in PUBLIC_MODULES:
                    missing.append(f"{name}.{public} (module {obj.path} is not in PUBLIC_MODULES)")
            elif f"{name}.{public}" not in ids:
                missing.append(f"{name}.{public}")
    assert not missing, f"public names missing from the built reference: {missing}"


def test_every_public_name_has_a_docstring(modules: dict[str, griffe.Module]) -> None:
    """Names in ``__all__``, and the public methods and properties of public classes."""
    missing = []
    for name, module in modules.items():
        if not module.docstring:
            missing.append(name)
        for public in public_names(module):
            obj = target(module[public])
            if not obj.docstring:
                missing.append(f"{name}.{public}")
            if obj.is_class:
                for member_name, member in obj.members.items():
                    member = target(member)
                    if member_name.startswith("_") or not (member.is_function or "property" in member.labels):
                        continue
                    if not member.docstring:
                        missing.append(f"{name}.{public}.{member_name}")
    assert not missing, f"public names without a docstring: {sorted(set(missing))}"


def test_the_reference_shows_typed_signatures() -> None:
    """Signatures come from the sources (griffe), so they carry the annotations in any build."""
    html = (Path(SITE) / "reference" / "cqlcodec.html").read_text(encoding="utf-8")
    start = html.index('id="cqlcodec.parse_type"')
    section = re.sub(r"<[^>]+>", "", html[start:start + 8000])
    assert "user_types" in section and "CqlType" in section
