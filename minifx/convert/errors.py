"""ConversionError: the whole to-do list of a conversion, not its first item.

A converter that stops at the first op it cannot map makes a learner fix,
rerun, fix, rerun. The pass goes on instead: it notes every problem as an
``Unsupported`` entry, with the line of the learner's code that made the
node (from ``node.stack_trace``, which the tracer records) and what
``tensor`` offers nearby, and raises one error that lists them all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

_FRAME = re.compile(r'^\s*File "(.+)", line (\d+), in (.+)$')


# --8<-- [start:unsupported]
@dataclass(frozen=True)
class Unsupported:
    """One thing the converter cannot carry over to tensor."""

    what: str  # "call_method masked_fill", "call_module attn (MultiheadAttention)"
    reason: str  # why not
    hint: str = ""  # what tensor offers instead, if anything
    filename: str = ""  # the user's file that made the node ("" when unknown)
    lineno: int = 0
    code: str = ""  # that line of the user's code

    def where(self) -> str:
        """``model.py:12``: the file's name and line (the full path is in ``filename``)."""
        return f"{Path(self.filename).name}:{self.lineno}" if self.filename else ""
# --8<-- [end:unsupported]


def user_line(stack_trace: str | None) -> tuple[str, int, str]:
    """``(file, line, code)`` of the innermost frame of a recorded stack trace."""
    lines = (stack_trace or "").rstrip().splitlines()
    for i in range(len(lines) - 1, -1, -1):
        match = _FRAME.match(lines[i])
        if match:
            code = lines[i + 1].strip() if i + 1 < len(lines) else ""
            return match.group(1), int(match.group(2)), code
    return "", 0, ""


# --8<-- [start:error]
class ConversionError(Exception):
    """Everything in a torch model that has no ``tensor`` twin, listed at once.

    ``problems`` holds one ``Unsupported`` per node (or weight) at fault, in
    graph order; the message prints them as a numbered list with the user's
    file and line and what ``tensor`` offers nearby.
    """

    def __init__(self, model_name: str, problems: list[Unsupported]) -> None:
        self.model_name = model_name
        self.problems = list(problems)
        super().__init__(self.report())

    def report(self) -> str:
        count = len(self.problems)
        things = "thing" if count == 1 else "things"
        lines = [f"cannot convert {self.model_name} to tensor: {count} {things} to change"]
        for number, problem in enumerate(self.problems, 1):
            where = problem.where()
            lines.append(f"{number}. {problem.what}" + (f" at {where}" if where else ""))
            if problem.code:
                lines.append(f"     {problem.code}")
            lines.append(f"   {problem.reason}")
            if problem.hint:
                lines.append(f"   instead: {problem.hint}")
        return "\n".join(lines)
# --8<-- [end:error]
