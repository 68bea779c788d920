"""diff_rows: the two texts aligned line by line, each row marked.

The alignment is difflib's (SequenceMatcher without its junk heuristic) over
the lines with the known differences spelled the common way; blank lines are
left out. The properties below hold for any two texts; the oracle for how
many lines pair up is difflib itself.
"""

import difflib

from hypothesis import given, settings
from hypothesis import strategies as st

from minifx.compare import KNOWN_DIFFERENCES, diff_rows

LINES = st.lists(st.sampled_from(["a", "b", "c", "d", "", "   "]), max_size=12)


def _kept(lines):
    return [line for line in lines if line.strip()]


@settings(deadline=None, max_examples=200)
@given(LINES, LINES)
def test_rows_keep_both_texts_in_order_and_mark_each_pair(left, right):
    rows = diff_rows("\n".join(left), "\n".join(right))
    assert [r.left for r in rows if r.left is not None] == _kept(left)
    assert [r.right for r in rows if r.right is not None] == _kept(right)
    for r in rows:
        if r.left is None:
            assert r.mark == ">"
        elif r.right is None:
            assert r.mark == "<"
        else:
            assert r.mark == (" " if r.left == r.right else "|"), r
        assert r.why is None  # no known difference among these lines
    # As many rows pair equal lines as difflib matches.
    matcher = difflib.SequenceMatcher(None, _kept(left), _kept(right), autojunk=False)
    assert sum(r.mark == " " for r in rows) == sum(b.size for b in matcher.get_matching_blocks())


def test_lines_that_differ_only_by_a_known_difference_pair_up_with_the_reason():
    ours = 'wrap("helper")\n\ndef forward(self, x):\n    return x'
    theirs = 'torch.fx._symbolic_trace.wrap("helper")\ndef forward(self, x):\n    return x'
    rows = diff_rows(ours, theirs)
    assert [r.mark for r in rows] == ["~", " ", " "]
    assert rows[0].left == 'wrap("helper")'
    assert rows[0].right == 'torch.fx._symbolic_trace.wrap("helper")'
    assert rows[0].why == KNOWN_DIFFERENCES[1].why
    assert rows[1].why is None


def test_a_common_line_is_not_junk_in_a_long_text():
    # difflib's autojunk would ignore a line that fills more than 1% of a 200+ line text.
    left = ["x"] * 150 + ["y"] + ["x"] * 100
    right = ["y"] + ["x"] * 250
    rows = diff_rows("\n".join(left), "\n".join(right))
    matcher = difflib.SequenceMatcher(None, left, right, autojunk=False)
    assert sum(r.mark == " " for r in rows) == sum(b.size for b in matcher.get_matching_blocks())


def test_unequal_runs_pair_up_then_leave_the_rest_alone():
    rows = diff_rows("a\nb1\nb2\nb3\nc", "a\nB1\nc\nd")
    assert [(r.left, r.mark, r.right) for r in rows] == [
        ("a", " ", "a"), ("b1", "|", "B1"), ("b2", "<", None), ("b3", "<", None),
        ("c", " ", "c"), (None, ">", "d")]
