"""Stepper blocks: a recorded pass named in a lesson, checked by the tests, drawn by the site.

The block's rules are lesson_blocks.py's (parsed like a figure block, its
expression must give a recording); the drawing is stepper_view.py's (one
section per step, both graphs with the step's nodes marked, the code diff);
mkdocs_hooks.py puts it in the page after Markdown. The browser tests
(tests/site/test_steppers.py) step through the built pages.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from book import lesson_blocks, mkdocs_hooks, stepper_view

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted((ROOT / "lessons").glob("*.md"))

PAGE = """# A page

```python
import minifx
import tensor
from minifx.passes.infra.pass_base import PassResult
from minifx.passes.infra.pass_manager import PassManager


def add_to_mul(gm):
    found = [n for n in gm.graph.nodes if n.target is tensor.add]
    for node in found:
        node.target = tensor.mul
    return PassResult(gm, bool(found))


pm = PassManager([add_to_mul], steps=3, record=True)
pm(minifx.symbolic_trace(lambda x: tensor.add(x, 1) * 2))
```

```stepper
name: ch99_steps
caption: add_to_mul, round by round
recording: pm
```
"""


def _run(page: str = PAGE) -> tuple[list[lesson_blocks.Block], dict]:
    blocks = lesson_blocks.parse_blocks(page, "page.md")
    namespace: dict = {}
    lesson_blocks.run_python(blocks[0], namespace, "page.md")
    return blocks, namespace


def test_a_stepper_block_is_parsed_with_its_place():
    blocks = lesson_blocks.parse_blocks(PAGE, "page.md")
    assert [b.language for b in blocks] == ["python", "stepper"]
    assert blocks[1].stepper == lesson_blocks.Stepper("ch99_steps", "add_to_mul, round by round",
                                                      "pm")
    assert blocks[1].figure is None and blocks[1].line == 21


@pytest.mark.parametrize("body, message", [
    ("name: ch99_x\ncaption: c", "stepper block needs recording"),
    ("name: ch99_x\ncaption: c\ngraph: g", "stepper line 'graph: g'"),
    ("name: x\ncaption: c\nrecording: r", "must look like chNN_something"),
])
def test_a_malformed_stepper_is_named(body, message):
    with pytest.raises(lesson_blocks.LessonError, match=message):
        lesson_blocks.parse_stepper(body, "page.md:3")


def test_the_expression_must_give_a_recording_with_steps():
    blocks, namespace = _run()
    recording = lesson_blocks.recording_of(blocks[1].stepper, namespace)
    assert recording == namespace["pm"].recorder.as_dict()
    assert [s["name"] for s in recording["steps"]] == ["add_to_mul", "add_to_mul"]
    lesson_blocks.check_drawn(blocks[1], namespace)  # what the lesson tests run
    cases = {"3": "is a int, expected a Recorder",
             "PassManager([add_to_mul])": "is a PassManager, expected",  # not recording
             "PassManager([add_to_mul], record=True)": "recorded no step"}  # not run
    for expression, message in cases.items():
        with pytest.raises(lesson_blocks.LessonError, match=message):
            lesson_blocks.recording_of(lesson_blocks.Stepper("ch99_x", "c", expression),
                                       namespace)


def test_each_step_is_drawn_with_the_recorded_nodes_marked():
    blocks, namespace = _run()
    recording = lesson_blocks.recording_of(blocks[1].stepper, namespace)
    page = stepper_view.render("ch99_steps", "caption <b>", recording)
    step = recording["steps"][0]
    add = next(e["id"] for e in step["before"]["nodes"] if e["name"] == "add")
    # Graphviz writes the ids and classes; "-" comes out as &#45;.
    drawn = {html.unescape(i): html.unescape(c) for i, c in
             re.findall(r'<g id="([^"]+)" class="(node[^"]*)"', page)}
    for side in ("before", "after"):
        assert drawn[f"ch99_steps-s0-{side}-n{add}"] == "node fx-node fx-changed"
        others = [i for i in drawn if i.startswith(f"ch99_steps-s0-{side}-") and
                  not i.endswith(f"-n{add}")]
        assert len(others) == 3 and all(drawn[i] == "node fx-node" for i in others)
    assert all(c == "node fx-node" for i, c in drawn.items() if "-s1-" in i)  # no change
    assert page.count('class="fx-step"') == 2 and page.count(" hidden>") == 1
    assert "caption &lt;b&gt;" in page
    embedded = re.search(r'<script type="application/json" class="fx-stepper-data">(.*?)</script>',
                         page).group(1)
    assert json.loads(embedded) == {"name": "ch99_steps", **recording}
    assert '<span class="fx-line fx-line-del">-     add = tensor.add(x, 1)' in page
    assert '<span class="fx-line fx-line-add">+     add = tensor.mul(x, 1)' in page


def test_marks_follow_what_the_step_did():
    step = {"erased": [1], "added": [5], "replaced": [{"node": 1, "by": [6]}],
            "changed": [{"node": 2, "fields": {}}], "meta_changes": [{"node": 3, "key": "k"}]}
    assert stepper_view.marks(step) == {
        "before": {1: "erased", 2: "changed", 3: "meta"},
        "after": {5: "added", 6: "added", 2: "changed", 3: "meta"}}


def test_the_code_diff_marks_removed_and_added_lines():
    assert stepper_view.code_diff("a\nb\nc\n", "a\nB\nc\nd\n") == [
        (" ", "a"), ("-", "b"), ("+", "B"), (" ", "c"), ("+", "d")]


def test_the_site_hook_makes_the_stepper_and_puts_it_in_the_page(tmp_path):
    page = tmp_path / "ch99_page.md"
    page.write_text(PAGE)
    steppers: dict[str, str] = {}
    assert mkdocs_hooks._draw_page(page, PAGE, steppers) == {}  # no figure
    assert list(steppers) == ["ch99_steps"]

    class FakeFile:
        src_uri = "ch99_page.md"

    class FakePage:
        file = FakeFile()

    markdown = mkdocs_hooks.on_page_markdown(PAGE, FakePage(), None, None)
    assert "```stepper" not in markdown
    assert '<div class="fx-stepper-slot" data-stepper="ch99_steps"></div>' in markdown
    mkdocs_hooks.STEPPERS.update(steppers)
    try:
        filled = mkdocs_hooks.on_page_content(
            '<p><div class="fx-stepper-slot" data-stepper="ch99_steps"></div></p>',
            FakePage(), None, None)
        assert filled == steppers["ch99_steps"]
    finally:
        del mkdocs_hooks.STEPPERS["ch99_steps"]
    with pytest.raises(mkdocs_hooks.PluginError, match="stepper ch99_steps was not made"):
        mkdocs_hooks.on_page_content(
            '<div class="fx-stepper-slot" data-stepper="ch99_steps"></div>', FakePage(), None,
            None)


def test_stepper_and_figure_names_are_unique_in_the_book():
    names = []
    for page in PAGES:
        for block in lesson_blocks.parse_blocks(page.read_text(), page.name):
            drawn = block.figure or block.stepper
            if drawn is not None:
                names.append(drawn.name)
    assert len(names) == len(set(names)), names
    assert sum(1 for n in names if n.endswith("_steps")) >= 6


def test_a_torch_fx_recording_marks_each_step_same_or_not():
    blocks, namespace = _run()
    exec("other = PassManager([add_to_mul], steps=3, record=True)\n"
         "other(minifx.symbolic_trace(lambda x: tensor.add(x, 2) * 2))\n"
         "short = PassManager([add_to_mul], record=True)\n"
         "short(minifx.symbolic_trace(lambda x: tensor.add(x, 1) * 2))", namespace)
    stepper = lesson_blocks.parse_stepper(
        "name: ch99_x\ncaption: c\nrecording: pm\ntorch_fx: other", "page.md:1")
    assert stepper.torch_fx == "other"
    recording = lesson_blocks.recording_of(stepper, namespace)
    assert recording["torch_fx"] == namespace["other"].recorder.as_dict()
    page = stepper_view.render("ch99_x", "c", recording)
    # x + 1 against x + 2: every graph after a step differs; against itself, each is the same.
    assert re.findall(r'data-same="(\w+)"', page) == ["false", "false"]
    recording["torch_fx"] = {"steps": recording["steps"]}
    page = stepper_view.render("ch99_x", "c", recording)
    assert re.findall(r'data-same="(\w+)"', page) == ["true", "true"]
    with pytest.raises(lesson_blocks.LessonError, match="has 1 steps, 'pm' 2"):
        lesson_blocks.recording_of(lesson_blocks.Stepper("ch99_x", "c", "pm", "short"), namespace)
