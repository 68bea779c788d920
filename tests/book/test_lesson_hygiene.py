"""The lessons stand on their own: they cite what a reader can find, and write nothing.

Two rules from issue 8. A lesson names the documents it follows by title and
public address, never by a file name that exists only beside the project.
And every block runs from any working directory without writing into the
checkout: the lesson runner (``lesson_blocks.CheckoutGuard``, used by the root
conftest.py and the site build) runs each block from a scratch directory and
fails the block that touched the checkout. These tests pin both rules down,
and the figure blocks the site draws.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from book import lesson_blocks, mkdocs_hooks

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted((ROOT / "lessons").glob("*.md"))

FORBIDDEN = [
    (r"\b\d{3}_[0-9a-f]{16}\b", "the file name of a document kept beside the project"),
    (r"shared/", "a folder beside the project"),
    (r"\bSPEC\b", "the project's internal contract"),
    (r"\bseeds\b|\bseed\s+\d|\bthe seed\b|\bseed's\b|\bseed documents?\b",
     "'seed', the project's word for a document"),
    (r"\bthe survey\b|\busage notes\b|\bblog notes\b|\breference pages\b|\blist of documents\b",
     "a nickname for a document that no reader can look up"),
]


def _prose(text: str) -> str:
    """The page without its fenced blocks (code may say manual_seed)."""
    return lesson_blocks.FENCE.sub("", text)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_a_lesson_cites_what_a_reader_can_find(page):
    text = _prose(page.read_text())
    for pattern, what in FORBIDDEN:
        match = re.search(pattern, text, re.IGNORECASE)
        assert match is None, (
            f"{page.name} names {match.group(0)!r}: {what}. Cite a document by its title "
            "and the public pages it cites."
        )
    if page.name.startswith("ch"):
        assert "https://" in text, f"{page.name} links no public page for its sources"


def test_the_forbidden_names_are_caught():
    for sample in ("see 001_ebe72b4bb009fc41.txt", "kept in shared/seeds/",
                   "seed 002's module", "the seed's printout", "as the survey says",
                   "the blog notes", "SPEC section 3"):
        assert any(re.search(p, sample, re.IGNORECASE) for p, _ in FORBIDDEN), sample
    for fine in ("torch.manual_seed(0)", "one random seed on both sides", "specify"):
        assert not any(re.search(p, fine, re.IGNORECASE) for p, _ in FORBIDDEN), fine


# -- the runner's guard ------------------------------------------------------------
def test_a_block_that_writes_into_the_checkout_fails(tmp_path):
    checkout = tmp_path / "checkout"
    (checkout / "lessons").mkdir(parents=True)
    (checkout / "lessons" / "page.md").write_text("old")
    guard = lesson_blocks.CheckoutGuard(checkout)
    try:
        with pytest.raises(AssertionError, match=r"wrote lessons/figure\.svg"):
            with guard.running("the block at page.md line 3"):
                (checkout / "lessons" / "figure.svg").write_text("<svg/>")
        with pytest.raises(AssertionError, match=r"changed lessons/page\.md"):
            with guard.running("the block at page.md line 9"):
                os.utime(checkout / "lessons" / "page.md", ns=(1, 1))  # same bytes, rewritten
    finally:
        guard.close()


def test_a_block_runs_from_a_scratch_directory(tmp_path):
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    guard = lesson_blocks.CheckoutGuard(checkout)
    here = os.getcwd()
    try:
        with guard.running("a block"):
            assert Path.cwd() == guard.scratch.resolve()
            Path("scratch.txt").write_text("a relative path lands in scratch")
        assert os.getcwd() == here
        assert (guard.scratch / "scratch.txt").exists()
        assert list(checkout.iterdir()) == []
    finally:
        guard.close()
    assert not guard.scratch.exists()


def test_the_lesson_runner_uses_the_guard():
    """The root conftest.py runs every block under the guard, so a lesson that writes fails."""
    conftest = (ROOT / "conftest.py").read_text()
    assert "_checkout_guard().running(" in conftest
    hook = (ROOT / "book" / "mkdocs_hooks.py").read_text()
    assert "guard.running(" in hook


# -- figure blocks -----------------------------------------------------------------
PAGE = """# A page

```python
import minifx
import tensor


def f(x):
    return tensor.relu(x) + 1


gm = minifx.symbolic_trace(f)
```

```figure
name: ch99_example
caption: The graph of f, [drawn]
graph: gm
```

    ```figure
    name: ch99_indented
    caption: Inside an admonition
    graph: gm.graph
    ```
"""


def test_figure_blocks_are_parsed_with_their_place():
    blocks = lesson_blocks.parse_blocks(PAGE, "page.md")
    assert [b.language for b in blocks] == ["python", "figure", "figure"]
    first, second = blocks[1].figure, blocks[2].figure
    assert (first.name, first.caption, first.graph) == (
        "ch99_example", "The graph of f, [drawn]", "gm")
    assert blocks[1].line == 15
    assert blocks[2].indent == "    " and second.graph == "gm.graph"


@pytest.mark.parametrize(
    "body, message",
    [
        ("name: ch99_x\ncaption: c", "figure block needs graph"),
        ("name: bad name\ncaption: c\ngraph: g", "must look like chNN_something"),
        ("name: ch99_x\ncaption: c\ngraph: g\nshape: box", "figure line 'shape: box'"),
    ],
)
def test_a_malformed_figure_is_named(body, message):
    with pytest.raises(lesson_blocks.LessonError, match=message):
        lesson_blocks.parse_figure(body, "page.md:3")


def test_a_figure_is_drawn_from_the_page_namespace():
    namespace: dict = {}
    blocks = lesson_blocks.parse_blocks(PAGE, "page.md")
    lesson_blocks.run_python(blocks[0], namespace, "page.md")
    for block in blocks[1:]:  # a GraphModule, and a Graph that belongs to one
        svg = lesson_blocks.draw_figure(block.figure, namespace)
        assert svg.lstrip().startswith(b"<?xml") and b"<svg" in svg
    namespace["number"] = 3
    bad = lesson_blocks.Figure("ch99_bad", "c", "number")
    with pytest.raises(lesson_blocks.LessonError, match="is a int, expected a GraphModule"):
        lesson_blocks.draw_figure(bad, namespace)


def test_the_site_hook_draws_figures_and_writes_them_into_the_page(tmp_path):
    page = tmp_path / "ch99_page.md"
    page.write_text(PAGE)
    drawn = mkdocs_hooks._draw_page(page, PAGE)
    assert sorted(drawn) == ["ch99_example", "ch99_indented"]

    class FakeFile:
        src_uri = "ch99_page.md"

    class FakePage:
        file = FakeFile()

    markdown = mkdocs_hooks.on_page_markdown(PAGE, FakePage(), None, None)
    assert "```figure" not in markdown
    assert '<figure class="graph-figure" id="figure-ch99_example" markdown="span">' in markdown
    assert "  ![The graph of f, (drawn)](figures/ch99_example.svg)" in markdown
    assert "<figcaption>The graph of f, [drawn]</figcaption>" in markdown
    assert "    <figcaption>Inside an admonition</figcaption>" in markdown  # stays indented
    assert markdown.startswith("# A page\n\n```python\n")


def test_figure_names_are_unique_in_the_book():
    names = []
    for page in PAGES:
        names += [b.figure.name for b in lesson_blocks.parse_blocks(page.read_text(), page.name)
                  if b.language == "figure"]
    assert len(names) == len(set(names)), names


def test_an_output_mismatch_shows_the_lines_that_differ_first():
    expected = "\n".join(f"line {k}" for k in range(30))
    printed = expected.replace("line 25", "line 25 changed")
    block = lesson_blocks.Block("python", "", 0, 0, line=99, expected=expected)
    message = lesson_blocks.output_mismatch(block, printed)
    head = message.splitlines()[:4]
    assert head[0].startswith("block at line 99 printed other lines than the lesson shows")
    assert head[2:4] == ["-line 25", "+line 25 changed"]
    assert printed in message and expected in message  # both in full, after
    assert lesson_blocks.output_mismatch(block, expected + "\n") is None
