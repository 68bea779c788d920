"""mkdocs hook: draw each lesson's ``figure`` blocks into the built site.

For every page with figures, ``on_files`` runs the page's python blocks in
order (as the tests do, from a scratch directory, output discarded), draws
each figure's graph with FxGraphDrawer and adds the SVG to the site as a
generated file ``figures/<name>.svg``: nothing is written into ``lessons/``,
and ``mkdocs build --strict`` sees the file when it checks links.
``on_page_markdown`` then replaces each figure block by an image with its
caption. The block rules are ``lesson_blocks.py``'s, shared with the tests.

A ``stepper`` block (a recorded pass) is made in the same run of the page:
``stepper_view.py`` draws every step into HTML with inline SVG, which
``on_page_content`` puts where ``on_page_markdown`` left a placeholder (after
Markdown, so that nothing reads the SVG as Markdown). The page's script,
``lessons/javascripts/stepper.js``, steps through it.

Two more things are generated here rather than typed, so they cannot drift
from the code: the line count in the title of a collapsible block that
includes a section of a source file (``??? example "minifx/node.py: node
class"`` gets ``(197 lines)``, counted from the file at build time), and the
drawing of minifx's and tensor's layers (``figures/layers.svg``), made from
their imports by ``import_graph.py``, the reader the architecture test uses.
"""

from __future__ import annotations

import html
import re
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

# mkdocs loads hooks by path, as a module of no package: the checkout goes on the path
# so that ``book`` (and minifx, which the pages run) import from it.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mkdocs.exceptions import PluginError  # noqa: E402
from mkdocs.structure.files import File, Files  # noqa: E402

from book import import_graph, lesson_blocks, stepper_view  # noqa: E402

FIGURE_DIR = "figures"
LAYERS_FIGURE = f"{FIGURE_DIR}/layers.svg"
ROOT = Path(__file__).resolve().parents[1]  # the checkout: book/ sits at its root

# A collapsible block's title line, and a snippet line inside its body.
ADMONITION_TITLE = re.compile(
    r'^(?P<head>[ \t]*(?:\?\?\?\+?|!!!)[ \t]+[\w-]+[ \t]+)"(?P<title>[^"]*)"[ \t]*$')
SNIPPET = re.compile(r'--8<--[ \t]+"(?P<path>[^":]+)(?::(?P<section>[\w-]+))?"')
LINE_COUNT = re.compile(r"\(\d+ lines?\)")
SECTION_MARKER = re.compile(r"--8<-- \[(?:start|end):[\w-]+\]")


# The steppers made by on_files, by name, as HTML: on_page_content puts them in.
STEPPERS: dict[str, str] = {}
STEPPER_SLOT = re.compile(
    r'(?:<p>)?<div class="fx-stepper-slot" data-stepper="(?P<name>[\w]+)"></div>(?:</p>)?')


def _draw_page(path: Path, text: str, steppers: dict[str, str] | None = None) -> dict[str, bytes]:
    """Run one page's code and draw its figures: {name: svg}; its steppers go into ``steppers``."""
    blocks = lesson_blocks.parse_blocks(text, str(path))
    if not any(b.language in lesson_blocks.DRAWN for b in blocks):
        return {}
    last_drawn = max(i for i, b in enumerate(blocks) if b.language in lesson_blocks.DRAWN)
    blocks = blocks[: last_drawn + 1]  # what comes after the last drawing need not run
    guard = lesson_blocks.CheckoutGuard()
    namespace: dict[str, Any] = {"__name__": "__lesson__"}
    drawn = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # torch's own, at import
        try:
            for block in blocks:
                try:
                    with guard.running(f"the block at {path.name} line {block.line}"):
                        if block.language == "python":
                            lesson_blocks.run_python(block, namespace, str(path))
                        elif block.stepper is not None:
                            stepper = block.stepper
                            recording = lesson_blocks.recording_of(stepper, namespace)
                            if steppers is not None:
                                steppers[stepper.name] = stepper_view.render(
                                    stepper.name, stepper.caption, recording)
                        else:
                            drawn[block.figure.name] = lesson_blocks.draw_figure(
                                block.figure, namespace)
                except Exception as exc:
                    raise PluginError(
                        f"drawings of {path.name}: the block at line {block.line} failed: "
                        f"{type(exc).__name__}: {exc}"
                    ) from exc
        finally:
            guard.close()
    return drawn


def snippet_line_count(path: str, section: str | None, root: Path = ROOT) -> int:
    """How many lines ``--8<-- "path:section"`` includes (the section markers,
    which pymdownx.snippets drops, not counted)."""
    source = root / path
    if not source.is_file():
        raise PluginError(f"snippet {path}: no such file")
    lines = source.read_text(encoding="utf-8").splitlines()
    if section is not None:
        start = [i for i, line in enumerate(lines) if f"--8<-- [start:{section}]" in line]
        end = [i for i, line in enumerate(lines) if f"--8<-- [end:{section}]" in line]
        if len(start) != 1 or len(end) != 1 or end[0] < start[0]:
            raise PluginError(f"snippet {path}:{section}: the section is not marked once "
                              "with --8<-- [start:...] and [end:...]")
        lines = lines[start[0] + 1:end[0]]
    return sum(1 for line in lines if not SECTION_MARKER.search(line))


def count_snippet_lines(markdown: str) -> str:
    """Give each collapsible block that includes a snippet its line count, in its title.

    The count is made here, from the file as it is, because the code it
    counts changes under the lessons; a lesson types only ``path: name``.
    """
    lines = markdown.split("\n")
    for index, line in enumerate(lines):
        title = ADMONITION_TITLE.match(line)
        if not title:
            continue
        text = LINE_COUNT.sub("", title.group("title")).rstrip()  # a typed count is redone
        depth = len(line) - len(line.lstrip())
        for body in lines[index + 1:]:
            if body.strip() and len(body) - len(body.lstrip()) <= depth:
                break  # the block's body ended before any snippet
            snippet = SNIPPET.search(body)
            if snippet:
                count = snippet_line_count(snippet.group("path"), snippet.group("section"))
                lines[index] = (f'{title.group("head")}"{text} '
                                f'({count} line{"s" if count != 1 else ""})"')
                break
    return "\n".join(lines)


def layers_svg(root: Path = ROOT) -> bytes:
    """The layers of tensor and minifx, drawn by Graphviz from their imports."""
    dot_text = import_graph.layers_dot(import_graph.project_graph(root))
    try:
        done = subprocess.run(["dot", "-Tsvg"], input=dot_text.encode(), capture_output=True,
                              check=True)
    except FileNotFoundError as exc:
        raise PluginError("drawing the layers needs Graphviz's dot program "
                          "(apt-get install graphviz)") from exc
    except subprocess.CalledProcessError as exc:
        raise PluginError(f"dot failed on the layers: {exc.stderr.decode()}") from exc
    return done.stdout


def on_files(files: Files, config: Any) -> Files:
    files.append(File.generated(config, LAYERS_FIGURE, content=layers_svg()))
    owner: dict[str, str] = {}
    for page_file in list(files.documentation_pages()):
        path = Path(page_file.abs_src_path)
        text = path.read_text(encoding="utf-8")
        if "```figure" not in text and "```stepper" not in text:
            continue
        steppers: dict[str, str] = {}
        for name, svg in _draw_page(path, text, steppers).items():
            if name in owner:
                raise PluginError(
                    f"figure name {name} is used twice: in {owner[name]} and {page_file.src_uri}")
            owner[name] = page_file.src_uri
            files.append(File.generated(config, f"{FIGURE_DIR}/{name}.svg", content=svg))
        for name, block in steppers.items():
            if name in owner:
                raise PluginError(
                    f"stepper name {name} is used twice: in {owner[name]} and {page_file.src_uri}")
            owner[name] = page_file.src_uri
            STEPPERS[name] = block
    return files


def figure_markdown(figure: lesson_blocks.Figure, indent: str, page_depth: int) -> str:
    """The figure as Markdown in HTML: an image (so mkdocs checks the link) and a caption."""
    src = "../" * page_depth + f"{FIGURE_DIR}/{figure.name}.svg"
    alt = figure.caption.replace("[", "(").replace("]", ")")
    lines = [
        f'<figure class="graph-figure" id="figure-{figure.name}" markdown="span">',
        f"  ![{alt}]({src})",
        f"  <figcaption>{html.escape(figure.caption)}</figcaption>",
        "</figure>",
    ]
    return "\n".join(indent + line for line in lines)


def stepper_slot(stepper: lesson_blocks.Stepper, indent: str) -> str:
    """Where the stepper goes: a placeholder that on_page_content fills after Markdown ran."""
    return f'{indent}<div class="fx-stepper-slot" data-stepper="{stepper.name}"></div>'


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    if "--8<--" in markdown:
        markdown = count_snippet_lines(markdown)
    if "```figure" not in markdown and "```stepper" not in markdown:
        return markdown
    depth = page.file.src_uri.count("/")
    pieces, last = [], 0
    for block in lesson_blocks.parse_blocks(markdown, page.file.src_uri):
        if block.language == "figure":
            replacement = figure_markdown(block.figure, block.indent, depth)
        elif block.language == "stepper":
            replacement = stepper_slot(block.stepper, block.indent)
        else:
            continue
        pieces.append(markdown[last:block.start])
        pieces.append(replacement)
        last = block.end
    pieces.append(markdown[last:])
    return "".join(pieces)


def on_page_content(html_text: str, page: Any, config: Any, files: Files) -> str:
    """Put each stepper, drawn by on_files, where its placeholder is."""
    def filled(match: re.Match[str]) -> str:
        name = match.group("name")
        if name not in STEPPERS:
            raise PluginError(f"{page.file.src_uri}: stepper {name} was not made")
        return STEPPERS[name]

    return STEPPER_SLOT.sub(filled, html_text)
