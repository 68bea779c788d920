"""minifx's modules import each other without a cycle, and no import inside a
function hides one.

The graph is read from the source with ``ast``, not by importing, by
``book/import_graph.py`` (the book's tooling) (the site draws its layers
from the same reading): an edge A -> B is an import of minifx module B in
module A. Imports under ``if TYPE_CHECKING:`` are only for annotations, never
run, and are left out (node.py and graph.py name each other's classes that
way: a Node belongs to a Graph, a Graph holds Nodes).

An import inside a function is allowed only when it is listed below with its
reason; and even the listed ones, drawn as edges, must not close a cycle, so
none of them can be the thing that keeps a cycle from failing at import time.
"""

from __future__ import annotations

from pathlib import Path

import minifx
from book.import_graph import find_cycle, read_packages

# The package as Python imports it (under ``minifx learn`` that is the learner's copy).
GRAPH = read_packages(Path(minifx.__file__).parent)
MODULES = GRAPH.modules
IMPORTS = {module: (GRAPH.top[module], GRAPH.inner[module]) for module in MODULES}

# (importing module, imported module) -> why the import waits until a function runs.
ALLOWED_FUNCTION_IMPORTS = {
    # Importing the torch adapter imports torch; ``import minifx`` must not.
    ("minifx.convert.bad_input", "minifx.frameworks.torch_framework"):
        "the torch adapter imports torch",
    ("minifx.compare", "minifx.frameworks.published"):
        "making torchvision importable imports torch",
    ("minifx.quantization.backend", "minifx.quantization.torch_support"):
        "the torch side of quantization imports torch",
    # The numba backend's passes (and numba itself) load only when that backend is used.
    ("minifx.compiler.backends", "minifx.compiler.fusion"):
        "numba loads only when the numba backend is asked for",
}


def test_the_graph_is_read_from_every_module():
    assert "minifx.tracer" in MODULES and "minifx.frameworks.torch_framework" in MODULES
    top, _ = IMPORTS["minifx.graph"]
    assert {"minifx.codegen", "minifx.node", "minifx.namespace"} <= top


def test_top_level_imports_have_no_cycle():
    assert find_cycle(GRAPH.edges(with_function_imports=False)) is None


def test_function_level_imports_would_close_no_cycle_either():
    cycle = find_cycle(GRAPH.edges(with_function_imports=True))
    assert cycle is None, "an import inside a function hides a cycle: " + " -> ".join(cycle)


def test_every_function_level_import_has_a_reason():
    found = {(module, target) for module, (_, inner) in IMPORTS.items() for target in inner}
    assert found - set(ALLOWED_FUNCTION_IMPORTS) == set(), (
        "move these imports to the top of the module, or list them with their reason")
    assert set(ALLOWED_FUNCTION_IMPORTS) - found == set(), "the allow-list names imports that went"


def test_the_cycle_finder_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_the_interface_imports_none_of_its_adapters():
    top, inner = IMPORTS["minifx._framework"]
    assert not {t for t in top | inner if t.startswith("minifx.frameworks")}
