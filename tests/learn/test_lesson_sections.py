"""Each chapter's lesson ends with its "Exercises" section, listing the table's exercises.

The list itself is a python block (``show_chapter("chNN")``) whose output
block the lesson tests check against the table, so a row that moves shows
up as a failing lesson until the page is updated.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from minifx.learn.exercises import CHAPTERS, chapter_exercises

LESSONS = Path(__file__).resolve().parents[2] / "lessons"
# The page that ends each chapter's text (chapter 2 has a second page, on tracing's limits,
# and chapter 0 a side track on the kernels; the exercises sit on the main page).
PAGES = {
    "ch00": "ch00_tensor.md", "ch01": "ch01_first_example.md",
    "ch02": "ch02_symbolic_tracing.md", "ch03": "ch03_ir.md", "ch04": "ch04_interpreter.md",
    "ch05": "ch05_transformer.md", "ch06": "ch06_codegen.md", "ch07": "ch07_fusion.md",
    "ch08": "ch08_compile.md", "ch09": "ch09_torch.md", "ch10": "ch10_quantization.md",
    "ch11": "ch11_convert.md", "ch12": "ch12_below_the_api.md",
}


def test_every_chapter_has_a_page():
    assert sorted(PAGES) == sorted(CHAPTERS)


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_lesson_ends_with_its_exercises(chapter):
    text = (LESSONS / PAGES[chapter]).read_text()
    headings = re.findall(r"^## (.+)$", text, re.M)
    assert headings[-1] == "Exercises", f"{PAGES[chapter]} ends with {headings[-1]!r}"
    section = text[text.rindex("\n## Exercises\n"):]
    assert f"python -m minifx learn start {chapter}" in section
    assert f"python -m minifx learn check {chapter}" in section
    assert "MINIFX_WORKSPACE=workspace" in section
    assert f'show_chapter("{chapter}")' in section and "```output\n" in section
    for exercise in chapter_exercises(chapter):
        assert f"{exercise.id}  {exercise.qualname} ({exercise.file})" in section
        assert f"`{exercise.qualname.split('.')[-1]}`" in section or \
            f"`{exercise.qualname}`" in section, f"the prose names {exercise.qualname}"
