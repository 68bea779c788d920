"""Cut a function out of a source file, and put a stub or other code in its place.

Everything here works on source text with :mod:`ast` line numbers, so an
exercise is named by its file and qualified name (``Graph.lint``,
``map_aggregate``) and never by a copy of its code: the stub is made from the
reference each time, and the solution is the reference itself.

A *stub* keeps the decorators, the signature and the docstring (which states
the task) and replaces the body with one ``raise NotImplementedError(...)``
naming the exercise.
"""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass


class ExerciseNotFound(LookupError):
    """The file has no function with that qualified name."""


@dataclass(frozen=True)
class FunctionSpan:
    """Where one function sits in a file: 0-based line indices, end exclusive."""

    start: int  # first decorator line, or the ``def`` line
    body: int  # first line after the docstring (or after the signature)
    end: int  # the line after the function's last line
    indent: str  # the indentation of the body


def _find(tree: ast.AST, qualname: str) -> ast.FunctionDef | ast.AsyncFunctionDef:
    parts = qualname.split(".")
    scope: list[ast.stmt] = list(getattr(tree, "body", []))
    found: ast.AST | None = None
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        kinds = (ast.FunctionDef, ast.AsyncFunctionDef) if last else (ast.ClassDef,)
        # The last definition of a name wins, as it does when Python runs the file
        # (a property's setter shares its getter's name: take the getter, the first).
        matches = [s for s in scope if isinstance(s, kinds) and s.name == part]
        if not matches:
            raise ExerciseNotFound(qualname)
        found = matches[0]
        scope = list(found.body)
    assert isinstance(found, (ast.FunctionDef, ast.AsyncFunctionDef))
    return found


def function_span(source: str, qualname: str) -> FunctionSpan:
    """The lines of function ``qualname`` (``Class.method`` or ``function``) in ``source``."""
    tree = ast.parse(source)
    fn = _find(tree, qualname)
    lines = source.splitlines(keepends=True)
    start = min([fn.lineno] + [d.lineno for d in fn.decorator_list]) - 1
    first = fn.body[0]
    has_doc = (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    )
    if has_doc:
        body = first.end_lineno
    else:
        body = first.lineno - 1
    line = lines[first.lineno - 1]
    indent = line[: len(line) - len(line.lstrip())]
    return FunctionSpan(start=start, body=body, end=fn.end_lineno, indent=indent)


def function_source(source: str, qualname: str) -> str:
    """The text of the function, decorators included, indented as in the file."""
    span = function_span(source, qualname)
    return "".join(source.splitlines(keepends=True)[span.start : span.end])


def stub_source(source: str, qualname: str, message: str) -> str:
    """The function with its body replaced by ``raise NotImplementedError(message)``."""
    span = function_span(source, qualname)
    lines = source.splitlines(keepends=True)
    head = "".join(lines[span.start : span.body])
    if not head.endswith("\n"):
        head += "\n"
    return f"{head}{span.indent}raise NotImplementedError({message!r})\n"


def replace_function(source: str, qualname: str, new_text: str) -> str:
    """``source`` with function ``qualname`` replaced by ``new_text`` (a whole function)."""
    span = function_span(source, qualname)
    lines = source.splitlines(keepends=True)
    if not new_text.endswith("\n"):
        new_text += "\n"
    return "".join(lines[: span.start]) + new_text + "".join(lines[span.end :])


def is_stub(function_text: str) -> bool:
    """True when a function's body is only the ``NotImplementedError`` of a stub."""
    tree = ast.parse(_dedented(function_text))
    fn = tree.body[0]
    assert isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
    body = fn.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    return (
        len(body) == 1
        and isinstance(body[0], ast.Raise)
        and isinstance(body[0].exc, ast.Call)
        and isinstance(body[0].exc.func, ast.Name)
        and body[0].exc.func.id == "NotImplementedError"
    )


def _dedented(text: str) -> str:
    return textwrap.dedent(text)


def same_code(a: str, b: str) -> bool:
    """True when two function texts are the same code (whitespace and comments aside)."""
    try:
        return ast.dump(ast.parse(_dedented(a))) == ast.dump(ast.parse(_dedented(b)))
    except SyntaxError:
        return False
