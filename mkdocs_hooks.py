"""mkdocs hook: draw each lesson's ``figure`` blocks into the built site.

For every page with figures, ``on_files`` runs the page's python blocks in
order (as the tests do, from a scratch directory, output discarded), draws
each figure's graph with FxGraphDrawer and adds the SVG to the site as a
generated file ``figures/<name>.svg``: nothing is written into ``lessons/``,
and ``mkdocs build --strict`` sees the file when it checks links.
``on_page_markdown`` then replaces each figure block by an image with its
caption. The block rules are ``lesson_blocks.py``'s, shared with the tests.
"""

from __future__ import annotations

import html
import sys
import warnings
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # mkdocs loads hooks by path

from mkdocs.exceptions import PluginError  # noqa: E402
from mkdocs.structure.files import File, Files  # noqa: E402

import lesson_blocks  # noqa: E402

FIGURE_DIR = "figures"


def _draw_page(path: Path, text: str) -> dict[str, bytes]:
    """Run one page's code and draw its figures: {name: svg}."""
    blocks = lesson_blocks.parse_blocks(text, str(path))
    if not any(b.language == "figure" for b in blocks):
        return {}
    last_figure = max(i for i, b in enumerate(blocks) if b.language == "figure")
    blocks = blocks[: last_figure + 1]  # what comes after the last figure need not run
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
                        else:
                            drawn[block.figure.name] = lesson_blocks.draw_figure(
                                block.figure, namespace)
                except Exception as exc:
                    raise PluginError(
                        f"figures of {path.name}: the block at line {block.line} failed: "
                        f"{type(exc).__name__}: {exc}"
                    ) from exc
        finally:
            guard.close()
    return drawn


def on_files(files: Files, config: Any) -> Files:
    owner: dict[str, str] = {}
    for page_file in list(files.documentation_pages()):
        path = Path(page_file.abs_src_path)
        text = path.read_text(encoding="utf-8")
        if "```figure" not in text:
            continue
        for name, svg in _draw_page(path, text).items():
            if name in owner:
                raise PluginError(
                    f"figure name {name} is used twice: in {owner[name]} and {page_file.src_uri}")
            owner[name] = page_file.src_uri
            files.append(File.generated(config, f"{FIGURE_DIR}/{name}.svg", content=svg))
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


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    if "```figure" not in markdown:
        return markdown
    depth = page.file.src_uri.count("/")
    pieces, last = [], 0
    for block in lesson_blocks.parse_blocks(markdown, page.file.src_uri):
        if block.language != "figure":
            continue
        pieces.append(markdown[last:block.start])
        pieces.append(figure_markdown(block.figure, block.indent, depth))
        last = block.end
    pieces.append(markdown[last:])
    return "".join(pieces)
