"""``learn coverage``: how much of the code the learner writes, from the exercise table.

A *code line* is a line that holds a token of code: blank lines, comments and
docstrings (the first string statement of a module, class or function) do
not count, so the figure measures code to write, not prose to read. An
exercise contributes the code lines of its body, after the docstring: the
signature and the docstring are handed to the learner with the stub.

Per chapter, the share is the chapter's own exercise lines over the code
lines of the files its exercises live in, less the lines that other
chapters' exercises already hand the learner: a file that several chapters
grow (node.py: chapter 1 writes the Node, chapter 4 adds two methods) is not
charged in full to each of them. The FX core is the fixed list of
files below (torch.fx's own core: the IR, tracing, code generation,
interpreting), whatever the exercises cover.
"""

from __future__ import annotations

import ast
import functools
import io
import tokenize
from dataclasses import dataclass
from pathlib import Path

from .exercises import CHAPTERS, EXERCISES, Exercise, chapter_exercises
from .stubs import function_span

FX_CORE: tuple[str, ...] = tuple(
    f"minifx/{name}.py" for name in (
        "node", "graph", "namespace", "codegen", "magic_methods", "proxy", "tracer",
        "graph_module", "interpreter", "transformer", "wrapping"))

_NOT_CODE = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT,
             tokenize.DEDENT, tokenize.ENCODING, tokenize.ENDMARKER}


def _docstring_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                    and isinstance(body[0].value.value, str)):
                lines.update(range(body[0].lineno, body[0].end_lineno + 1))
    return lines


@functools.lru_cache(maxsize=64)  # a file is read once per exercise in it: parse it once
def code_lines(source: str) -> frozenset[int]:
    """The 1-based numbers of the lines that hold code (no blank, comment or docstring line)."""
    lines: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type not in _NOT_CODE:
            lines.update(range(token.start[0], token.end[0] + 1))
    return frozenset(lines - _docstring_lines(ast.parse(source)))


def exercise_lines(exercise: Exercise, source: str) -> set[int]:
    """The code lines of an exercise's body (after its docstring), 1-based."""
    span = function_span(source, exercise.qualname)
    return code_lines(source) & set(range(span.body + 1, span.end + 1))


@dataclass(frozen=True)
class Share:
    name: str
    inside: int  # code lines inside exercises
    total: int  # code lines

    @property
    def percent(self) -> float:
        return 100.0 * self.inside / self.total if self.total else 0.0

    def line(self, width: int) -> str:
        return f"{self.name:<{width}}  {self.inside:>5} of {self.total:>5}  {self.percent:5.1f}%"


def _lines_in(source: str, file: str, pool: list[Exercise]) -> set[int]:
    inside: set[int] = set()
    for exercise in pool:
        if exercise.file == file:
            inside |= exercise_lines(exercise, source)
    return inside


def _file_shares(root: Path, files: list[str], pool: list[Exercise],
                 elsewhere: list[Exercise] = ()) -> list[Share]:
    """Per file, the lines of ``pool``'s exercises over its code lines, without the
    lines of the exercises in ``elsewhere``."""
    shares = []
    for file in files:
        source = (root / file).read_text()
        inside = _lines_in(source, file, pool)
        others = _lines_in(source, file, list(elsewhere)) - inside
        shares.append(Share(file, len(inside), len(code_lines(source) - others)))
    return shares


def _total(name: str, shares: list[Share]) -> Share:
    return Share(name, sum(s.inside for s in shares), sum(s.total for s in shares))


def file_shares(root: Path) -> list[Share]:
    """One share per file that has exercises or belongs to the FX core, in table order."""
    files = list(dict.fromkeys([*(e.file for e in EXERCISES), *FX_CORE]))
    return _file_shares(root, files, EXERCISES)


def chapter_share(root: Path, chapter: str) -> Share:
    """The chapter's exercise lines over the code lines of the files they live in,
    those inside other chapters' exercises left out."""
    pool = chapter_exercises(chapter)
    files = list(dict.fromkeys(e.file for e in pool))
    others = [e for e in EXERCISES if e.chapter != chapter]
    return _total(chapter, _file_shares(root, files, pool, others))


def core_share(root: Path) -> Share:
    """Every exercise's lines in the FX core's files over those files' code lines."""
    return _total("FX core", _file_shares(root, list(FX_CORE), EXERCISES))


def report(root: Path) -> str:
    """The text of ``learn coverage``: per file, per chapter, then the FX core."""
    files = file_shares(root)
    width = max(len(s.name) for s in files)
    lines = [f"{'file':<{width}}  exercise code lines of all code lines"]
    lines += [s.line(width) for s in files]
    lines.append("")
    lines.append(f"{'chapter':<{width}}  its exercises' code lines of its files' code lines,"
                 " less other chapters' exercises")
    lines += [chapter_share(root, c).line(width) for c in CHAPTERS]
    lines.append("")
    lines.append(core_share(root).line(width) + "  (" + ", ".join(
        Path(f).stem for f in FX_CORE) + ")")
    return "\n".join(lines)
