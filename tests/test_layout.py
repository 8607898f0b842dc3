"""The package layout: layers import one way, no cycles, generated files are current."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "cqlcodec"

# Lower layers first; a module may import its own layer and the layers before it.
LAYERS: list[tuple[str, ...]] = [
    ("errors", "kinds", "_version", "bench_workloads"),
    ("runtime",),
    ("values",),
    ("types",),
    ("containers",),
    ("codecs",),
    ("protocol",),
    ("columnar",),
    ("connection",),
    ("__init__", "driver"),
    ("requests",),
    ("dask", "ray", "cli", "__main__", "aio"),
]


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


def _layer(module: str) -> int:
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else "__init__"
    for index, names in enumerate(LAYERS):
        if top in names:
            return index
    raise AssertionError(f"{module} is in no layer of tests/test_layout.py")


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.Module, module: str) -> set[str]:
    """cqlcodec modules imported anywhere in the module (functions too), except
    under ``if TYPE_CHECKING:``, which only the type checker sees."""
    found: set[str] = set()
    package = module if (PACKAGE / Path(*module.split(".")[1:]) / "__init__.py").exists() \
        else module.rpartition(".")[0]

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for branch in node.orelse:
                visit(branch)
            return
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "cqlcodec")
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1]
                                + ([base] if base else []))
            if base.split(".")[0] == "cqlcodec":
                for alias in node.names:
                    candidate = f"{base}.{alias.name}"
                    as_path = PACKAGE / Path(*candidate.split(".")[1:])
                    is_module = as_path.with_suffix(".py").exists() or (as_path / "__init__.py").exists()
                    found.add(candidate if is_module else base)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    found.discard(module)
    return found


def _graph() -> dict[str, set[str]]:
    graph = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        graph[module] = _imports(ast.parse(path.read_text(encoding="utf-8")), module)
    return graph


def test_no_import_cycles() -> None:
    graph = _graph()
    state: dict[str, int] = {}
    stack: list[str] = []

    def walk(module: str) -> None:
        state[module] = 1
        stack.append(module)
        for dep in sorted(graph.get(module, ())):
            if dep == "cqlcodec" or dep not in graph:
                continue
            if state.get(dep) == 1:
                cycle = stack[stack.index(dep):] + [dep]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if dep not in state:
                walk(dep)
        stack.pop()
        state[module] = 2

    for module in graph:
        if module not in state:
            walk(module)


def test_layers_import_one_way() -> None:
    wrong = []
    for module, deps in _graph().items():
        for dep in deps:
            if dep == "cqlcodec" and module != "cqlcodec":
                if _layer(module) < _layer("cqlcodec"):
                    wrong.append(f"{module} imports the package itself")
                continue
            if _layer(dep) > _layer(module):
                wrong.append(f"{module} (layer {_layer(module)}) imports {dep} (layer {_layer(dep)})")
    assert not wrong, "\n".join(sorted(wrong))


def test_the_checker_sees_cycles_and_upward_imports() -> None:
    tree = ast.parse("from cqlcodec.protocol.rows import x\n"
                     "if TYPE_CHECKING:\n    from cqlcodec.driver import y\n"
                     "def f():\n    from cqlcodec.codecs import cache\n")
    assert _imports(tree, "cqlcodec.types.model") == {
        "cqlcodec.protocol.rows", "cqlcodec.codecs.cache"}
    assert _layer("cqlcodec.protocol.rows") > _layer("cqlcodec.types.model")


# driver/installer.py fills the drivers' own value objects (SortedSet, OrderedMapSerializedKey)
# without re-sorting them; driver/columns.py and driver/sender.py give one ResponseFuture
# its protocol handler, as the drivers' execute_async does; requests/routing.py moves a
# RoundRobinPolicy's position on, as its make_query_plan does. Those attributes belong to
# the driver.
FOREIGN_WRITES = {"cqlcodec/driver/installer.py", "cqlcodec/driver/columns.py",
                  "cqlcodec/driver/sender.py", "cqlcodec/requests/routing.py"}


def _assigned(target: ast.expr) -> list[ast.expr]:
    if isinstance(target, (ast.Tuple, ast.List)):
        return [t for elt in target.elts for t in _assigned(elt)]
    if isinstance(target, ast.Starred):
        return _assigned(target.value)
    return [target]


def test_no_module_writes_another_objects_private_attributes() -> None:
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if str(path.relative_to(ROOT)) in FOREIGN_WRITES:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                targets = [node.target]
            for target in targets:
                for t in _assigned(target):
                    if (isinstance(t, ast.Attribute) and t.attr.startswith("_")
                            and not t.attr.startswith("__")
                            and not (isinstance(t.value, ast.Name) and t.value.id in ("self", "cls"))):
                        wrong.append(f"{path.relative_to(ROOT)}:{t.lineno}: {ast.unparse(t)}")
    assert not wrong, "\n".join(wrong)


def test_kinds_is_a_real_module() -> None:
    import cqlcodec
    import cqlcodec.kinds

    assert cqlcodec.kinds is cqlcodec.kinds  # the attribute and the module are one
    assert cqlcodec.kinds.INT == 0x0009


@pytest.mark.parametrize(("script_name", "generated"), [
    ("gen_rowloops.py", ("protocol", "rowloops.py")),
    ("gen_slots.py", ("columnar", "slots.py")),
])
def test_generated_loops_are_current(script_name: str, generated: tuple[str, str]) -> None:
    script = ROOT / "tools" / script_name
    if not script.exists():
        pytest.skip("tools/ is not beside the tests")
    result = subprocess.run([sys.executable, str(script), "--check"], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "GENERATED FILE - DO NOT EDIT" in PACKAGE.joinpath(*generated).read_text()
