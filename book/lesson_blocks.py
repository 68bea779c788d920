"""The lessons' fenced blocks: found, run and drawn the same way by the tests and the site.

Two readers execute a lesson: the test suite (root ``conftest.py``, one test
per block) and the site build (``mkdocs_hooks.py``, which draws the figures).
Both take their rules from this one module, so a page the tests pass is a page
the site can build.

A lesson page holds four kinds of fenced blocks that matter here:

- ``python``: runs, in page order, in one namespace per page;
- ``output`` right after a python block: what that block must print;
- ``figure``: a picture of a graph, three ``key: value`` lines::

      name: ch03_double_relu
      caption: The graph after the rewrite
      graph: small

  and optionally ``colour_by: <meta key>`` (boxes coloured by that
  ``node.meta`` value, see ``FxGraphDrawer``). ``graph`` is a Python
  expression evaluated in the page's namespace after every python block
  above it has run; it gives a GraphModule or a Graph.
- ``stepper``: a recorded pass to step through on the page, the same three
  lines with ``recording:`` in place of ``graph:``, an expression that gives
  a ``Recorder`` or a ``PassManager`` built with ``record=True`` that has
  run (``stepper_view.py`` draws it). An optional ``torch_fx:`` line names
  a recording of the same pass run by torch.fx; each step is then marked as
  giving torch.fx's graph or not.

Every block runs from a scratch working directory and must leave the
checkout as it found it (:class:`CheckoutGuard`): a lesson stands on its own,
from anywhere, and writes nothing next to the code.
"""

from __future__ import annotations

import contextlib
import difflib
import io
import os
import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]  # the checkout: book/ sits at its root

FENCE = re.compile(
    r"^(?P<indent>[ \t]*)```(?P<language>[^\s`{]*)[^\n]*\n(?P<body>.*?)^(?P=indent)```[ \t]*$",
    re.MULTILINE | re.DOTALL,
)
FIGURE_NAME = re.compile(r"^ch\d\d[a-z]?_[A-Za-z0-9_]+$")
FIGURE_KEYS = ("name", "caption", "graph")
FIGURE_OPTIONAL_KEYS = ("colour_by",)
STEPPER_KEYS = ("name", "caption", "recording")
STEPPER_OPTIONAL_KEYS = ("torch_fx",)
DRAWN = ("figure", "stepper")  # the blocks that name something to draw, not code


class LessonError(Exception):
    """A lesson block that is malformed, naming the page and the line."""


@dataclass
class Figure:
    name: str
    caption: str
    graph: str
    colour_by: str | None = None


@dataclass
class Stepper:
    name: str
    caption: str
    recording: str
    torch_fx: str | None = None  # the same pass recorded as torch.fx runs it


@dataclass
class Block:
    """One fenced block of a page: where it is and what it holds."""

    language: str  # "python", "figure" or "stepper"
    source: str  # the body, without the block's indentation
    start: int  # offsets of the whole fenced block in the page text
    end: int
    line: int  # 1-based line of the opening fence
    indent: str = ""
    expected: str | None = None  # python: the output block that follows
    figure: Figure | None = field(default=None)
    stepper: Stepper | None = field(default=None)


def _dedent(body: str, indent: str) -> str:
    if not indent:
        return body
    return "".join(
        line[len(indent):] if line.startswith(indent) else line.lstrip(" \t")
        for line in body.splitlines(keepends=True)
    )


def _parse_keys(kind: str, body: str, where: str, keys: tuple[str, ...],
                optional: tuple[str, ...] = ()) -> dict[str, str]:
    """The ``key: value`` lines of a figure or stepper block, checked."""
    values: dict[str, str] = {}
    for raw in body.splitlines():
        if not raw.strip():
            continue
        key, sep, value = raw.partition(":")
        key = key.strip()
        if not sep or key not in keys + optional:
            raise LessonError(
                f"{where}: {kind} line {raw.strip()!r}: expected 'key: value' with key one of "
                f"{', '.join(keys + optional)}"
            )
        values[key] = value.strip()
    missing = [k for k in keys if not values.get(k)]
    if missing:
        raise LessonError(f"{where}: {kind} block needs {', '.join(missing)}")
    if not FIGURE_NAME.match(values["name"]):
        raise LessonError(
            f"{where}: {kind} name {values['name']!r} must look like chNN_something "
            "(letters, digits, underscores)"
        )
    return values


def parse_figure(body: str, where: str) -> Figure:
    """The ``key: value`` lines of a figure block, checked."""
    values = _parse_keys("figure", body, where, FIGURE_KEYS, FIGURE_OPTIONAL_KEYS)
    return Figure(values["name"], values["caption"], values["graph"], values.get("colour_by"))


def parse_stepper(body: str, where: str) -> Stepper:
    """The ``key: value`` lines of a stepper block, checked."""
    values = _parse_keys("stepper", body, where, STEPPER_KEYS, STEPPER_OPTIONAL_KEYS)
    return Stepper(values["name"], values["caption"], values["recording"], values.get("torch_fx"))


def parse_blocks(text: str, path: str = "<lesson>") -> list[Block]:
    """The page's python blocks (each with its expected output), figure and stepper blocks."""
    fences = list(FENCE.finditer(text))
    blocks = []
    for index, match in enumerate(fences):
        language = match.group("language")
        if language != "python" and language not in DRAWN:
            continue
        indent = match.group("indent")
        line = text.count("\n", 0, match.start()) + 1
        block = Block(language, _dedent(match.group("body"), indent), match.start(),
                      match.end(), line, indent)
        if language == "python" and index + 1 < len(fences):
            following = fences[index + 1]
            if (following.group("language") == "output"
                    and not text[match.end():following.start()].strip()):
                block.expected = _dedent(following.group("body"), following.group("indent"))
        if language == "figure":
            block.figure = parse_figure(block.source, f"{path}:{line}")
        if language == "stepper":
            block.stepper = parse_stepper(block.source, f"{path}:{line}")
        blocks.append(block)
    return blocks


def _strip_lines(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines())


def run_python(block: Block, namespace: dict[str, Any], path: str) -> str:
    """Run a python block in the page's namespace; what it printed."""
    # Pad with blank lines so that a traceback points at the lesson's own line.
    code = compile("\n" * block.line + block.source, path, "exec")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(code, namespace)
    return printed.getvalue()


def output_mismatch(block: Block, printed: str) -> str | None:
    """Why the printed text is not the lesson's output block, or None when it is.

    The lines that differ come first (a reader, or ``learn check``, that shows
    only the start of the message still sees the difference), then both texts
    in full.
    """
    if block.expected is None or _strip_lines(printed) == _strip_lines(block.expected):
        return None
    ours, theirs = _strip_lines(printed).splitlines(), _strip_lines(block.expected).splitlines()
    differ = [line for line in difflib.unified_diff(theirs, ours, lineterm="", n=0)
              if not line.startswith(("---", "+++"))]
    return (
        f"block at line {block.line} printed other lines than the lesson shows "
        "(- the lesson, + printed):\n" + "\n".join(differ) + "\n"
        f"printed in full:\n{printed}\n"
        f"the lesson shows:\n{block.expected}"
    )


def draw_figure(figure: Figure, namespace: dict[str, Any]) -> bytes:
    """Evaluate the figure's graph expression and draw it as SVG bytes."""
    from minifx.graph import Graph
    from minifx.graph_module import GraphModule
    from minifx.passes.graph_drawer import FxGraphDrawer

    value = eval(figure.graph, namespace)  # the lesson's own expression, as a block would run it
    if isinstance(value, Graph):
        owner = value.owning_module
        if owner is None:
            raise LessonError(
                f"figure {figure.name}: the graph {figure.graph!r} belongs to no module; "
                "give a GraphModule"
            )
        value = owner if owner.graph is value else GraphModule(owner, value)
    if not isinstance(value, GraphModule):
        raise LessonError(
            f"figure {figure.name}: {figure.graph!r} is a {type(value).__name__}, "
            "expected a GraphModule or a Graph"
        )
    drawer = FxGraphDrawer(value, figure.name, colour_by=figure.colour_by)
    svg = drawer.get_dot_graph().create_svg()
    if b"<svg" not in svg:
        raise LessonError(f"figure {figure.name}: Graphviz gave no SVG")
    return svg


def _recording(name: str, expression: str, namespace: dict[str, Any]) -> dict[str, Any]:
    from minifx.passes.infra.recorder import Recorder

    value = eval(expression, namespace)  # the lesson's own expression
    recorder = value if isinstance(value, Recorder) else getattr(value, "recorder", None)
    if not isinstance(recorder, Recorder):
        raise LessonError(
            f"stepper {name}: {expression!r} is a {type(value).__name__}, "
            "expected a Recorder or a PassManager built with record=True"
        )
    if not recorder.steps:
        raise LessonError(
            f"stepper {name}: {expression!r} recorded no step (run the pass before the block)")
    return recorder.as_dict()


def recording_of(stepper: Stepper, namespace: dict[str, Any]) -> dict[str, Any]:
    """Evaluate the stepper's expression: the recording's data (``Recorder.as_dict()``).

    A PassManager counts by its recorder, so a lesson can name the manager
    it ran; one that recorded nothing (built without ``record=True``, or not
    run yet) is refused, as is anything else. With ``torch_fx:``, torch.fx's
    recording of the same pass comes along as ``"torch_fx"``, and must have
    as many steps.
    """
    recording = _recording(stepper.name, stepper.recording, namespace)
    if stepper.torch_fx is not None:
        theirs = _recording(stepper.name, stepper.torch_fx, namespace)
        if len(theirs["steps"]) != len(recording["steps"]):
            raise LessonError(
                f"stepper {stepper.name}: {stepper.torch_fx!r} has {len(theirs['steps'])} steps, "
                f"{stepper.recording!r} {len(recording['steps'])}: they cannot be compared")
        recording["torch_fx"] = theirs
    return recording


def check_drawn(block: Block, namespace: dict[str, Any]) -> None:
    """What the tests do with a figure or stepper block: make it, as the site will."""
    if block.figure is not None:
        draw_figure(block.figure, namespace)
    elif block.stepper is not None:
        recording_of(block.stepper, namespace)
    else:
        raise LessonError(f"the block at line {block.line} is {block.language}, not drawn")


# -- the checkout must stay as it was ------------------------------------------
SKIPPED_DIRS = {".git", ".venv", "site", "__pycache__", ".hypothesis", ".pytest_cache",
                "workspace", "build", "node_modules", ".ruff_cache"}


def checkout_state(root: Path = ROOT) -> dict[str, tuple[int, int]]:
    """Every file of the checkout (not the venv, caches or the built site) with its mtime and size.

    The modification time catches a lesson that rewrites a file with the same
    bytes, which a content check would miss.
    """
    state = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in SKIPPED_DIRS and not d.endswith(".egg-info")]
        for name in files:
            path = os.path.join(folder, name)
            try:
                info = os.stat(path)
            except FileNotFoundError:  # removed while we walked
                continue
            state[os.path.relpath(path, root)] = (info.st_mtime_ns, info.st_size)
    return state


def state_changes(before: dict, after: dict) -> list[str]:
    """What changed between two states, one line per file."""
    changes = [f"wrote {p}" for p in sorted(after) if p not in before]
    changes += [f"deleted {p}" for p in sorted(before) if p not in after]
    changes += [f"changed {p}" for p in sorted(after) if p in before and before[p] != after[p]]
    return changes


class CheckoutGuard:
    """Run lesson code from a scratch directory and fail if it touched the checkout."""

    def __init__(self, root: Path = ROOT) -> None:
        self.root = root
        self.scratch = Path(tempfile.mkdtemp(prefix="minifx-lesson-"))

    @contextlib.contextmanager
    def running(self, what: str) -> Iterator[None]:
        before = checkout_state(self.root)
        here = os.getcwd()
        os.chdir(self.scratch)
        try:
            yield
        finally:
            os.chdir(here)
        changes = state_changes(before, checkout_state(self.root))
        if changes:
            raise AssertionError(
                f"{what} wrote into the checkout {self.root} ({'; '.join(changes)}): "
                "a lesson must write nothing there (use a temporary directory)"
            )

    def close(self) -> None:
        import shutil

        shutil.rmtree(self.scratch, ignore_errors=True)
