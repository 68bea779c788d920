"""minifx's modules import each other without a cycle, and no import inside a
function hides one.

The graph is read from the source with ``ast``, not by importing: an edge
A -> B is an import of minifx module B in module A's body (relative imports
resolved; ``from pkg import name`` counts as importing ``pkg.name`` when that
is a module). Imports under ``if TYPE_CHECKING:`` are only for annotations,
never run, and are left out (node.py and graph.py name each other's classes
that way: a Node belongs to a Graph, a Graph holds Nodes).

An import inside a function is allowed only when it is listed below with its
reason; and even the listed ones, drawn as edges, must not close a cycle, so
none of them can be the thing that keeps a cycle from failing at import time.
"""

from __future__ import annotations

import ast
from pathlib import Path

import minifx

PACKAGE = Path(minifx.__file__).parent

# (importing module, imported module) -> why the import waits until a function runs.
ALLOWED_FUNCTION_IMPORTS = {
    # Importing the torch adapter imports torch; ``import minifx`` must not.
    ("minifx.convert.bad_input", "minifx.frameworks.torch_framework"):
        "the torch adapter imports torch",
    ("minifx.quantization.backend", "minifx.quantization.torch_support"):
        "the torch side of quantization imports torch",
    # The numba backend's passes (and numba itself) load only when that backend is used.
    ("minifx.compiler.backends", "minifx.compiler.fusion"):
        "numba loads only when the numba backend is asked for",
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imported(module: str, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The minifx modules one import statement loads."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        if node.level:
            base = module.split(".")
            if MODULES[module].name != "__init__.py":
                base = base[:-1]
            base = base[: len(base) - (node.level - 1)]
            target = ".".join(base + ([node.module] if node.module else []))
        else:
            target = node.module or ""
        names = [target] + [f"{target}.{alias.name}" for alias in node.names]
    return [name for name in names if name in MODULES]


def _imports(module: str) -> tuple[set[str], set[str]]:
    """(top-level imports, imports inside functions) of one module, as module names."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    top: set[str] = set()
    inner: set[str] = set()

    def visit(node: ast.AST, in_function: bool) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child, in_function)
            return
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            (inner if in_function else top).update(_imported(module, node))
        inside = in_function or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                  ast.Lambda))
        for child in ast.iter_child_nodes(node):
            visit(child, inside)

    visit(tree, False)
    top.discard(module)
    return top, inner


IMPORTS = {module: _imports(module) for module in MODULES}


def _parents(module: str) -> list[str]:
    """Importing ``a.b.c`` first imports ``a`` and ``a.b``: edges too."""
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def _find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One cycle as a list of modules (first == last), or None."""
    state: dict[str, str] = {}
    stack: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = "open"
        stack.append(module)
        for target in sorted(edges.get(module, ())):
            if state.get(target) == "open":
                return stack[stack.index(target):] + [target]
            if target not in state:
                found = visit(target)
                if found:
                    return found
        stack.pop()
        state[module] = "done"
        return None

    for module in sorted(edges):
        if module not in state:
            found = visit(module)
            if found:
                return found
    return None


def _edges(with_function_imports: bool) -> dict[str, set[str]]:
    edges = {}
    for module, (top, inner) in IMPORTS.items():
        targets = set(top) | (inner if with_function_imports else set())
        # A package's own __init__ runs before its submodules, so an edge from a
        # submodule to one of its parent packages is no cycle: leave parents out.
        edges[module] = {t for t in targets if t not in _parents(module)}
    return edges


def test_the_graph_is_read_from_every_module():
    assert "minifx.tracer" in MODULES and "minifx.frameworks.torch_framework" in MODULES
    top, _ = IMPORTS["minifx.graph"]
    assert {"minifx.codegen", "minifx.node", "minifx.namespace"} <= top


def test_top_level_imports_have_no_cycle():
    assert _find_cycle(_edges(with_function_imports=False)) is None


def test_function_level_imports_would_close_no_cycle_either():
    cycle = _find_cycle(_edges(with_function_imports=True))
    assert cycle is None, "an import inside a function hides a cycle: " + " -> ".join(cycle)


def test_every_function_level_import_has_a_reason():
    found = {(module, target) for module, (_, inner) in IMPORTS.items() for target in inner}
    assert found - set(ALLOWED_FUNCTION_IMPORTS) == set(), (
        "move these imports to the top of the module, or list them with their reason")
    assert set(ALLOWED_FUNCTION_IMPORTS) - found == set(), "the allow-list names imports that went"


def test_the_cycle_finder_finds_a_cycle():
    assert _find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _find_cycle({"a": {"b"}, "b": set()}) is None


def test_the_interface_imports_none_of_its_adapters():
    top, inner = IMPORTS["minifx._framework"]
    assert not {t for t in top | inner if t.startswith("minifx.frameworks")}
