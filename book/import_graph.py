"""Who imports whom in minifx and tensor, read from the source: shared by the
architecture test and the site's drawing of the layers.

The graph is read with ``ast``, never by importing. An edge A -> B is an
import of module B of the same package in module A (relative imports
resolved; ``from pkg import name`` counts as importing ``pkg.name`` when that
is a module). Imports under ``if TYPE_CHECKING:`` are only for annotations,
never run, and are left out. Imports at the top of a module and imports
inside functions are kept apart: the first run when the module loads, the
second only when the function is called.

Two readers use it: ``tests/architecture/test_imports.py`` (no cycle, no
import inside a function hiding one) and ``mkdocs_hooks.py``, which groups
the modules into layers and draws them (:func:`layers_dot`), so the picture
on the site is the import graph of the code that is there.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]  # the checkout: book/ sits at its root


@dataclass
class ImportGraph:
    """The modules of one or more packages and each one's imports of the others."""

    modules: dict[str, Path]  # dotted name -> file
    top: dict[str, set[str]]  # imports run when the module loads
    inner: dict[str, set[str]]  # imports inside functions

    def edges(self, with_function_imports: bool = False) -> dict[str, set[str]]:
        """module -> the modules it imports, its own parent packages left out.

        A package's ``__init__`` runs before its submodules, so an import of a
        parent package from inside it closes no cycle.
        """
        edges = {}
        for module in self.modules:
            targets = set(self.top[module])
            if with_function_imports:
                targets |= self.inner[module]
            edges[module] = targets - set(parents(module))
        return edges


def module_name(path: Path, package: Path) -> str:
    """``.../minifx/passes/shape_prop.py`` -> ``minifx.passes.shape_prop``."""
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def parents(module: str) -> list[str]:
    """Importing ``a.b.c`` first imports ``a`` and ``a.b``."""
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imported(module: str, is_package: bool, node: ast.Import | ast.ImportFrom,
              modules: dict[str, Path]) -> list[str]:
    """The package's modules that one import statement loads."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        if node.level:
            base = module.split(".")
            if not is_package:
                base = base[:-1]
            base = base[: len(base) - (node.level - 1)]
            target = ".".join(base + ([node.module] if node.module else []))
        else:
            target = node.module or ""
        names = [target] + [f"{target}.{alias.name}" for alias in node.names]
    return [name for name in names if name in modules]


def _imports_of(module: str, modules: dict[str, Path]) -> tuple[set[str], set[str]]:
    """(top-level imports, imports inside functions) of one module."""
    path = modules[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_package = path.name == "__init__.py"
    top: set[str] = set()
    inner: set[str] = set()

    def visit(node: ast.AST, in_function: bool) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child, in_function)
            return
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            (inner if in_function else top).update(_imported(module, is_package, node, modules))
        inside = in_function or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                  ast.Lambda))
        for child in ast.iter_child_nodes(node):
            visit(child, inside)

    visit(tree, False)
    top.discard(module)
    inner.discard(module)
    return top, inner


def read_packages(*packages: Path) -> ImportGraph:
    """Walk every ``.py`` file of the packages and read their imports of each other."""
    modules = {module_name(p, package): p
               for package in packages for p in sorted(package.rglob("*.py"))}
    top, inner = {}, {}
    for module in modules:
        top[module], inner[module] = _imports_of(module, modules)
    return ImportGraph(modules, top, inner)


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
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


# -- the layers, for the site ---------------------------------------------------------
# A group is a package's top-level module (minifx.graph) or a whole subpackage
# (minifx.compiler, tensor.backend): what a reader opens as one thing. A
# package's own name (tensor, minifx) is its __init__: the public names.
# Groups are found from the files, never listed by hand, so a new file is drawn.

# tensor's backend is drawn one box per layer (its subpackages reference, kernels and
# fast: ARCHITECTURE.md), so that the picture shows which layer imports which.
_DRAWN_BY_SUBPACKAGE = "tensor.backend"


def group_of(module: str) -> str:
    """``minifx.compiler.kernel`` -> ``minifx.compiler``; ``tensor._tensor`` stays;
    ``tensor.backend.kernels.scalar`` -> ``tensor.backend.kernels``."""
    parts = module.split(".")
    if module.startswith(_DRAWN_BY_SUBPACKAGE + ".") and len(parts) > 2:
        folder = ROOT.joinpath(*parts[:3])
        if folder.is_dir():
            return ".".join(parts[:3])
    return ".".join(parts[:2])


def group_edges(graph: ImportGraph) -> dict[str, set[str]]:
    """group -> the groups it imports when it loads.

    An import of a package's own ``__init__`` from inside the package is left
    out (the package is loading already); ``import tensor`` from minifx is an
    edge to ``tensor``, the public names.
    """
    edges: dict[str, set[str]] = {}
    for module, targets in graph.edges().items():
        source = group_of(module)
        package = module.split(".")[0]
        edges.setdefault(source, set())
        for target in targets:
            if target != package and group_of(target) != source:
                edges[source].add(group_of(target))
    return edges


def layers(edges: dict[str, set[str]]) -> dict[str, int]:
    """Each group's layer: 0 imports no other group, N imports only layers below N.

    A group on a cycle (the architecture test says there is none) is not
    followed round it a second time.
    """
    layer: dict[str, int] = {}
    visiting: set[str] = set()

    def depth(group: str) -> int:
        if group in layer:
            return layer[group]
        if group in visiting:
            return 0
        visiting.add(group)
        below = [depth(t) for t in edges.get(group, ())]
        visiting.discard(group)
        layer[group] = 1 + max(below) if below else 0
        return layer[group]

    for group in sorted(edges):
        depth(group)
    return layer


def reduced(edges: dict[str, set[str]]) -> dict[str, set[str]]:
    """The edges without those a longer path implies (a transitive reduction), so
    each dependency is drawn once: graph -> node stays, tracer -> node goes when
    tracer -> graph -> node is there."""
    def reachable_avoiding(start: str, skip: str) -> set[str]:
        seen: set[str] = set()
        todo = [t for t in edges.get(start, ()) if t != skip]
        while todo:
            group = todo.pop()
            if group not in seen:
                seen.add(group)
                todo.extend(edges.get(group, ()))
        return seen

    return {group: {t for t in targets if t not in reachable_avoiding(group, t)}
            for group, targets in edges.items()}


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


PACKAGE_COLOURS = {"tensor": "#d9ead3", "minifx": "#cfe2f3"}


def label_of(group: str, graph: ImportGraph) -> str:
    """How a box is titled: ``minifx.compiler/`` for a subpackage (all its files are
    the one box), ``tensor (public names)`` for a package's __init__."""
    if "." not in group:
        return f"{group} (public names)"
    is_package = graph.modules[group].name == "__init__.py"
    return group + ("/" if is_package else "")


def layers_dot(graph: ImportGraph) -> str:
    """The layers as Graphviz DOT text: one row per layer, the lowest at the bottom,
    an arrow from each group to each group it imports (transitively reduced)."""
    edges = group_edges(graph)
    layer = layers(edges)
    numbers = sorted(set(layer.values()), reverse=True)  # the top row first
    lines = [
        'digraph "layers" {',
        "  rankdir=TB; ranksep=0.3; nodesep=0.12;",
        '  node [shape="box", style="filled,rounded", fontname="Helvetica", fontsize=11, '
        'color="#555555", margin="0.06,0.02", height=0.26];',
        '  edge [color="#888888", arrowsize=0.5];',
    ]
    for number in numbers:
        row = " ".join(_quote(g) for g in sorted(g for g in layer if layer[g] == number))
        lines.append(f'  "layer {number}" [shape=plaintext, style="", fontcolor="#777777"];')
        lines.append(f'  {{ rank=same; "layer {number}"; {row} }}')
    for upper, lower in zip(numbers, numbers[1:]):  # keeps the row labels in order
        lines.append(f'  "layer {upper}" -> "layer {lower}" [style=invis];')
    for group in sorted(layer):
        colour = PACKAGE_COLOURS.get(group.split(".")[0], "#eeeeee")
        lines.append(f"  {_quote(group)} [label={_quote(label_of(group, graph))}, "
                     f'fillcolor="{colour}"];')
    for group, targets in sorted(reduced(edges).items()):
        for target in sorted(targets):
            lines.append(f"  {_quote(group)} -> {_quote(target)};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def project_graph(root: Path = ROOT) -> ImportGraph:
    """The import graph of the checkout's two packages, tensor and minifx."""
    return read_packages(root / "tensor", root / "minifx")
