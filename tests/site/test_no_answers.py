"""No answer in sight: a built page shows an exercise's stub, never its body.

The lessons explain a function by its stub (signature and docstring); the
reference body may appear only inside a collapsed "Reference solution" block
(``??? example "Reference solution: ..."``, a ``<details>`` element on the
page) placed after the chapter's exercise list. This test reads every built
page's code blocks outside such blocks and fails when one of them holds an
exercise's body: the whole body, or any run of ``RUN`` of its code lines.
"""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

from minifx.learn.coverage import exercise_lines
from minifx.learn.exercises import EXERCISES, Exercise

ROOT = Path(__file__).resolve().parents[2]
RUN = 4  # this many consecutive lines of a body give it away
EXERCISES_BY_ID = {e.id: e for e in EXERCISES}


class _CodeOutsideSolutions(HTMLParser):
    """The text of each ``<pre>`` block that is not inside a Reference solution."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks: list[str] = []
        self._details: list[bool] = []  # one entry per open <details>: a solution?
        self._summary: list[str] | None = None
        self._pre: list[str] | None = None

    def handle_starttag(self, tag: str, attrs) -> None:
        if tag == "details":
            self._details.append(False)
        elif tag == "summary" and self._details:
            self._summary = []
        elif tag == "pre" and not any(self._details):
            self._pre = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "details" and self._details:
            self._details.pop()
        elif tag == "summary" and self._summary is not None:
            text = "".join(self._summary).strip()
            self._details[-1] = text.startswith("Reference solution")
            self._summary = None
        elif tag == "pre" and self._pre is not None:
            self.blocks.append("".join(self._pre))
            self._pre = None

    def handle_data(self, data: str) -> None:
        if self._summary is not None:
            self._summary.append(data)
        if self._pre is not None:
            self._pre.append(data)


def _code(text: str) -> list[str]:
    """The lines that hold code, stripped: no blank lines, no comment-only lines."""
    lines = (line.split("#")[0].strip() if line.strip().startswith("#") else line.strip()
             for line in text.splitlines())
    return [line for line in lines if line]


def _body(exercise: Exercise) -> list[str]:
    source = (ROOT / exercise.file).read_text()
    numbers = sorted(exercise_lines(exercise, source))
    lines = source.splitlines()
    return _code("\n".join(lines[n - 1] for n in numbers))


def _shows(block: list[str], body: list[str]) -> bool:
    run = min(RUN, len(body))
    pieces = {tuple(body[i:i + run]) for i in range(len(body) - run + 1)}
    return any(tuple(block[i:i + run]) in pieces for i in range(len(block) - run + 1))


def test_no_page_shows_an_exercise_body_outside_a_reference_solution(built_site: Path):
    bodies = {e.id: _body(e) for e in EXERCISES}
    shown = []
    for page in sorted(built_site.rglob("*.html")):
        parser = _CodeOutsideSolutions()
        parser.feed(page.read_text())
        for block in map(_code, parser.blocks):
            shown += [f"{page.relative_to(built_site)}: {e} ({EXERCISES_BY_ID[e].qualname})"
                      for e, body in bodies.items() if body and _shows(block, body)]
    assert not shown, "exercise bodies printed outside a Reference solution block:\n" + \
        "\n".join(sorted(set(shown)))



def test_the_reader_finds_a_body_in_a_plain_block_and_not_in_a_solution():
    exercise = EXERCISES[0]
    body = "\n".join(_body(exercise))
    plain = f"<p>text</p><pre><code>{body}</code></pre>"
    hidden = (f'<details class="example"><summary>Reference solution: x</summary>'
              f"<pre><code>{body}</code></pre></details>")
    other = (f'<details class="note"><summary>Why</summary>'
             f"<pre><code>{body}</code></pre></details>")
    for html, expected in ((plain, True), (hidden, False), (other, True)):
        parser = _CodeOutsideSolutions()
        parser.feed(html)
        found = any(_shows(_code(b), _body(exercise)) for b in parser.blocks)
        assert found is expected, html
