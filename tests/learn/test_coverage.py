"""``learn coverage``: code lines inside exercises, per file, per chapter and for the FX core."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from minifx.learn import coverage
from minifx.learn import workspace as ws
from minifx.learn.exercises import CHAPTERS, EXERCISES

ROOT = Path(__file__).resolve().parents[2]

SAMPLE = textwrap.dedent('''\
    """Module docstring,
    two lines."""

    # a comment
    X = """not a docstring:
    counts"""


    class A:
        """Class docstring."""

        def f(self, a,
              b):
            """Function docstring."""
            # comment inside
            return (a +  # trailing comment
                    b)
    ''')


def test_code_lines_leave_out_blank_lines_comments_and_docstrings():
    assert sorted(coverage.code_lines(SAMPLE)) == [5, 6, 9, 12, 13, 16, 17]


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.id)
def test_an_exercise_counts_the_code_lines_its_stub_takes_away(exercise):
    # Independent of the span arithmetic: stub the function in its file and count
    # what the file lost (the stub's one raise line is code the learner does not write).
    text = ws.reference_text(exercise)
    stubbed = text.replace(ws.solution(exercise), ws.stub(exercise))
    lost = len(coverage.code_lines(text)) - len(coverage.code_lines(stubbed)) + 1
    assert len(coverage.exercise_lines(exercise, text)) == lost


def test_the_fx_core_share_adds_up_its_files():
    shares = {s.name: s for s in coverage.file_shares(ROOT)}
    core = coverage.core_share(ROOT)
    assert core.total == sum(shares[f].total for f in coverage.FX_CORE)
    assert core.inside == sum(shares[f].inside for f in coverage.FX_CORE)
    assert 0 < core.inside < core.total


def test_the_command_prints_every_file_every_chapter_and_the_core(tmp_path):
    done = subprocess.run([sys.executable, "-m", "minifx", "learn", "coverage"], cwd=tmp_path,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    for share in coverage.file_shares(ROOT):
        assert re.search(rf"^{re.escape(share.name)}\s+{share.inside}\s+of\s+{share.total}\s+"
                         rf"{share.percent:.1f}%$", out, re.M), share
    for chapter in CHAPTERS:
        share = coverage.chapter_share(ROOT, chapter)
        assert re.search(rf"^{chapter}\s+{share.inside}\s+of\s+{share.total}\s", out, re.M)
    core = coverage.core_share(ROOT)
    assert re.search(rf"^FX core\s+{core.inside}\s+of\s+{core.total}\s", out, re.M)
