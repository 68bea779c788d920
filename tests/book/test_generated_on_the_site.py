"""What the site build generates instead of a lesson typing it: the line counts
of included source sections, and the drawing of the layers from the imports.

Both exist because typed copies drifted: a learner found five wrong counts
in the titles of included snippets, and a hand-drawn map of the modules
would go stale the same way. The oracle for a count is pymdownx.snippets
itself, the extension that includes the lines.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import markdown
import pytest

from book import import_graph, mkdocs_hooks

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted((ROOT / "lessons").glob("*.md"))


def _included_lines(spec: str) -> int:
    """How many lines pymdownx.snippets puts in for ``--8<-- "spec"``, as the site builds it."""
    md = markdown.Markdown(extensions=["pymdownx.snippets"], extension_configs={
        "pymdownx.snippets": {"base_path": [str(ROOT)], "check_paths": True}})
    fence = ["```py", f'--8<-- "{spec}"', "```"]
    return len(md.preprocessors["snippet"].run(fence)) - 2


def _titled_snippets(text: str) -> list[tuple[str, str]]:
    """(title line, snippet spec) of each collapsible block whose body includes a snippet."""
    found = []
    lines = text.split("\n")
    for index, line in enumerate(lines):
        if mkdocs_hooks.ADMONITION_TITLE.match(line):
            depth = len(line) - len(line.lstrip())
            for body in lines[index + 1:]:
                if body.strip() and len(body) - len(body.lstrip()) <= depth:
                    break
                snippet = mkdocs_hooks.SNIPPET.search(body)
                if snippet:
                    spec = snippet.group("path") + (
                        f":{snippet.group('section')}" if snippet.group("section") else "")
                    found.append((line, spec))
                    break
    return found


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_no_lesson_types_a_line_count(page):
    for line, _ in _titled_snippets(page.read_text()):
        assert not mkdocs_hooks.LINE_COUNT.search(line), (
            f"{page.name}: {line.strip()!r} types a line count; the site build counts it")


def test_the_counts_the_site_shows_are_what_the_snippets_include():
    checked = 0
    for page in PAGES:
        text = page.read_text()
        built = mkdocs_hooks.count_snippet_lines(text).split("\n")
        for line, spec in _titled_snippets(text):
            shown = built[text.split("\n").index(line)]
            count = int(re.search(r"\((\d+) lines?\)\"$", shown).group(1))
            assert count == _included_lines(spec), (page.name, spec, shown)
            checked += 1
    assert checked >= 20  # the book has that many titled snippets; none was skipped


def test_a_count_follows_the_file(tmp_path):
    source = tmp_path / "code.py"
    source.write_text("a = 1\n# --8<-- [start:two]\nb = 2\n# --8<-- [start:inner]\nc = 3\n"
                      "# --8<-- [end:inner]\n# --8<-- [end:two]\n")
    assert mkdocs_hooks.snippet_line_count("code.py", "two", root=tmp_path) == 2
    assert mkdocs_hooks.snippet_line_count("code.py", None, root=tmp_path) == 3
    with pytest.raises(mkdocs_hooks.PluginError, match="not marked once"):
        mkdocs_hooks.snippet_line_count("code.py", "missing", root=tmp_path)


# -- the layers ---------------------------------------------------------------------
def _package(root: Path, name: str, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        path = root / name / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root / name


def test_layers_come_from_the_imports(tmp_path):
    lib = _package(tmp_path, "lib", {"__init__.py": "from .core import Thing\n",
                                     "core.py": "import lib.base\n", "base.py": "",
                                     "sub/__init__.py": "", "sub/a.py": "from lib import core\n"})
    app = _package(tmp_path, "app", {
        "__init__.py": "", "top.py": "import lib\nfrom . import mid\n",
        "mid.py": "from .low import x\n\ndef later():\n    import app.top\n", "low.py": ""})
    graph = import_graph.read_packages(lib, app)
    assert graph.top["app.mid"] == {"app.low"} and graph.inner["app.mid"] == {"app.top"}
    edges = import_graph.group_edges(graph)
    assert edges["lib.sub"] == {"lib.core"} and edges["app.top"] == {"lib", "app.mid"}
    layer = import_graph.layers(edges)
    assert (layer["lib.base"], layer["lib.core"], layer["lib.sub"]) == (0, 1, 2)
    assert layer["lib"] == 2 and layer["app.top"] == 3
    dot = import_graph.layers_dot(graph)
    assert '"lib.sub" [label="lib.sub/"' in dot and '"lib" [label="lib (public names)"' in dot
    assert '{ rank=same; "layer 0"; "app" "app.low" "lib.base" }' in dot


def test_a_longer_path_hides_the_short_edge():
    edges = {"tracer": {"graph", "node"}, "graph": {"node"}, "node": set()}
    assert import_graph.reduced(edges) == {"tracer": {"graph"}, "graph": {"node"},
                                           "node": set()}


def test_the_drawing_shows_every_module_of_the_checkout():
    graph = import_graph.project_graph()
    dot = import_graph.layers_dot(graph)
    for module in graph.modules:
        assert f'"{import_graph.group_of(module)}"' in dot, module
    assert import_graph.find_cycle(import_graph.group_edges(graph)) is None
    svg = mkdocs_hooks.layers_svg()
    assert b"<svg" in svg and b"minifx.tracer" in svg


def test_the_architecture_page_shows_the_drawing():
    page = (ROOT / "lessons" / "architecture.md").read_text()
    assert mkdocs_hooks.LAYERS_FIGURE in page
    result = subprocess.run(["git", "ls-files", "lessons/figures"], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.stdout == ""  # drawn at build time, never committed
