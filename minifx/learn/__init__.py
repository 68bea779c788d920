"""Build it yourself: ``python -m minifx learn`` (exercises cut from the reference code).

- :mod:`.exercises`: the one table (chapter, id, file, function, title, hint, tests);
- :mod:`.stubs`: cut a function out of a file with ``ast``, make its stub;
- :mod:`.workspace`: the learner's copy of the packages, ``start``;
- :mod:`.check`: run a chapter's tests against the workspace, one line per exercise;
- :mod:`.cli`: the command line.
"""

from .cli import show_chapter
from .exercises import CHAPTERS, EXERCISES, Exercise, chapter_exercises, find_exercise

__all__ = ["CHAPTERS", "EXERCISES", "Exercise", "chapter_exercises", "find_exercise",
           "show_chapter"]
