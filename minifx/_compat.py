"""What torch.fx does only for speed or for compatibility: skip it on a first read.

Each piece is used in one place, which says so in its docstring:

- ``stack_comment``: the ``# File: model.py:12 in forward, code: ...`` comments of
  ``GraphModule.print_readable`` (codegen.py, ``CodeWriter.write``).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .node import Node

_stack_re = re.compile(r'^File "(.+)", line (\d+), in (.+)$')


def stack_summary(stack_trace: str | None) -> str | None:
    """``File: <file>:<line> in <fn>, code: <code>`` from the innermost frame."""
    if not stack_trace:
        return None
    lines = stack_trace.strip().split("\n")
    for i in range(len(lines) - 2, -1, -1):
        match = _stack_re.match(lines[i].strip())
        if match:
            file, lineno, name = match.groups()
            return f"File: {file}:{lineno} in {name}, code: {lines[i + 1].strip()}"
    return None


def stack_comment(node: Node, previous: str | None, body: list[str]) -> str | None:
    """Append ``# <where node was traced>`` to ``body`` when it differs from ``previous``
    (the last comment written); return the comment now in force."""
    if node.op in ("placeholder", "output"):
        return previous
    summary = stack_summary(node.stack_trace) or "No stacktrace found for following nodes"
    if summary != previous:
        body.append(f"\n# {summary}\n")
    return summary
