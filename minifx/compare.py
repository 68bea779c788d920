"""``python -m minifx compare``: trace one torch model with minifx and torch.fx, side by side.

A learner who has read how minifx traces wants to see it hold up against the
real thing on their own model, or on a published one. This module loads
``FILE.py:NAME`` (or ``MODULE:NAME`` from an installed package, such as
``torchvision.models:resnet18``), traces it with both tracers, prints the two
graphs and the two generated codes in two columns with the differing lines
marked, runs both GraphModules on the same inputs and says whether everything
agrees. It needs torch, so it is imported only by the command line, never by
``import minifx``."""

from __future__ import annotations

import copy
import difflib
import importlib.util
import inspect
import re
import shutil
import sys
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import minifx
from minifx.convert import check_conversion
from minifx.node import fetch_path


class CompareError(Exception):
    """A problem with the command's input, reported as one line."""


# --8<-- [start:load]
_MODULE_PATH = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


# --8<-- [start:load_root]
def load_root(spec: str) -> tuple[Any, Any]:
    """Load ``FILE.py:NAME`` or ``MODULE:NAME`` and return ``(root, its module)``.

    NAME may be a function, a ``torch.nn.Module`` instance, or a ``torch.nn.Module``
    class that can be built with no arguments (it is built here). A function that
    takes no positional argument has no input to trace: it is a builder
    (``torchvision.models:resnet18``), called here with no arguments (so a
    torchvision builder gives random weights) to make the module.

    The spec splits at its last colon. Each problem is a CompareError of one line:

    - no colon, or nothing before or after it: ``expected FILE.py:NAME or
      MODULE:NAME, got '<spec>'``;
    - the part before it is an existing file: imported (``_import_file``); else a
      path ending in ``.py`` or not a dotted module name (``_MODULE_PATH``): ``no
      such file: <path>``; else a module imported by name (``_import_module``);
    - NAME (a dotted path inside the module, ``fetch_path``) missing: ``<path> has
      no name '<NAME>'``;
    - an ``nn.Module`` class that cannot be built with no arguments (TypeError):
      ``cannot build <NAME> with no arguments: <the error>``;
    - a builder (a function for which ``_is_builder`` holds) whose result is no
      ``nn.Module``: ``<NAME>() takes no input, so it was called to build a
      module, and returned a <type>: expected an nn.Module``;
    - anything but a function or an ``nn.Module`` instance: ``<NAME> is a <type>:
      expected a function, an nn.Module instance or an nn.Module class``.

    Returns the object (built, for a class or a builder) and the module it came from.
    """
    import torch

    path_text, sep, name = spec.rpartition(":")
    if not sep or not path_text or not name:
        raise CompareError(f"expected FILE.py:NAME or MODULE:NAME, got {spec!r}")
    path = Path(path_text)
    if path.is_file():
        module = _import_file(path)
    elif path_text.endswith(".py") or not _MODULE_PATH.fullmatch(path_text):
        raise CompareError(f"no such file: {path_text}")
    else:
        module = _import_module(path_text)
    try:
        obj: Any = fetch_path(module, name)
    except AttributeError:
        raise CompareError(f"{path_text} has no name {name!r}") from None
    if isinstance(obj, type) and issubclass(obj, torch.nn.Module):
        try:
            obj = obj()
        except TypeError as exc:
            raise CompareError(f"cannot build {name} with no arguments: {exc}") from None
    elif inspect.isfunction(obj) and _is_builder(obj):
        obj = obj()
        if not isinstance(obj, torch.nn.Module):
            raise CompareError(
                f"{name}() takes no input, so it was called to build a module, and returned "
                f"a {type(obj).__name__}: expected an nn.Module")
    elif not isinstance(obj, torch.nn.Module) and not inspect.isfunction(obj):
        kind = type(obj).__name__
        raise CompareError(
            f"{name} is a {kind}: expected a function, an nn.Module instance or an nn.Module class"
        )
    return obj, module
# --8<-- [end:load_root]


def _is_builder(fn: Any) -> bool:
    """No positional parameter, and every other one has a default: ``resnet18(*, weights=None,
    **kwargs)``. A function to trace takes its inputs positionally."""
    for parameter in inspect.signature(fn).parameters.values():
        if parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD,
                              parameter.VAR_POSITIONAL):
            return False
        if parameter.kind is parameter.KEYWORD_ONLY and parameter.default is parameter.empty:
            return False
    return True


def _import_module(name: str) -> Any:
    """An installed module by its dotted name (``torchvision.models``)."""
    if name.split(".")[0] in ("torchvision", "timm"):  # timm imports torchvision
        from .frameworks.published import make_torchvision_importable

        make_torchvision_importable()
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (name + ".").startswith(exc.name + "."):
            raise CompareError(f"no such file or module: {name}") from None
        raise CompareError(f"cannot import {name}: {_first_line(exc)}") from None
    except Exception as exc:  # the module's own code failed: say how, in one line
        raise CompareError(f"cannot import {name}: {_first_line(exc)}") from None


_FILE_PREFIX = "_minifx_compare_"  # a FILE.py is imported under this prefix and its stem


def _import_file(path: Path) -> Any:
    module_name = f"{_FILE_PREFIX}{path.stem}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise CompareError(f"cannot import {path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # classes defined there must be findable (deepcopy, pickle)
    sys.path.insert(0, str(path.resolve().parent))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.pop(0)
    return module
# --8<-- [end:load]


SEED = 0  # inputs and every run start from this seed, on both sides
INDEX_HIGH = 10  # integer inputs are drawn from [0, INDEX_HIGH) unless an Embedding is smaller


# --8<-- [start:parse_shape]
def _parse_shape(text: str) -> tuple[list[int], Any]:
    """``2,3`` or ``4:int64`` as (shape, torch dtype).

    The text before the first colon is the shape: sizes separated by commas, blank
    pieces skipped (``""`` is a 0-d shape, ``[]``). The text after it names a torch
    dtype (``torch.<name>``, spaces stripped); without one, ``torch.float32``. Each
    problem is a CompareError naming the text: ``bad --input-shape '<text>':
    expected integers like 2,3 (a dtype may follow: 4:int64)`` when a size is not an
    integer, ``...: sizes cannot be negative``, and ``...: unknown dtype '<name>'
    (for example float32, float64, int64, int32, bool)`` when torch has no dtype of
    that name (``torch.<name>`` missing or not a ``torch.dtype``).
    """
    import torch

    shape_text, _, dtype_text = text.partition(":")
    try:
        shape = [int(part) for part in shape_text.split(",") if part.strip()]
    except ValueError:
        raise CompareError(
            f"bad --input-shape {text!r}: expected integers like 2,3 (a dtype may follow: 4:int64)"
        ) from None
    if any(size < 0 for size in shape):
        raise CompareError(f"bad --input-shape {text!r}: sizes cannot be negative")
    dtype = torch.float32
    if dtype_text:
        dtype = getattr(torch, dtype_text.strip(), None)
        if not isinstance(dtype, torch.dtype):
            raise CompareError(
                f"bad --input-shape {text!r}: unknown dtype {dtype_text!r} "
                "(for example float32, float64, int64, int32, bool)"
            )
    return shape, dtype
# --8<-- [end:parse_shape]


def _index_high(root: Any) -> int:
    """Integer inputs are most often indices: keep them inside every Embedding of ``root``."""
    import torch

    modules = root.modules() if isinstance(root, torch.nn.Module) else []
    sizes = [m.num_embeddings for m in modules if isinstance(m, torch.nn.Embedding)]
    return min([INDEX_HIGH, *sizes])


def random_input(shape: list[int], dtype: Any, index_high: int = INDEX_HIGH) -> Any:
    """A random tensor: normal floats, integers in ``[0, index_high)``, or booleans."""
    import torch

    if dtype == torch.bool:
        return torch.randint(0, 2, shape).bool()
    if dtype.is_floating_point or dtype.is_complex:
        return torch.randn(shape, dtype=dtype)
    return torch.randint(0, index_high, shape, dtype=dtype)


def make_inputs(
    shapes: Sequence[str] | None, file_module: Any, name: str, root: Any = None
) -> tuple:
    """Random inputs from ``--input-shape`` texts (seeded), else FILE's ``example_inputs``."""
    import torch

    if shapes:
        parsed = [_parse_shape(text) for text in shapes]
        torch.manual_seed(SEED)
        high = _index_high(root)
        return tuple(random_input(shape, dtype, high) for shape, dtype in parsed)
    examples = getattr(file_module, "example_inputs", None)
    if examples is None:
        where = file_module.__name__
        if where.startswith(_FILE_PREFIX):
            where = Path(file_module.__file__).name
        raise CompareError(
            f"no inputs for {name}: pass --input-shape (one per input) "
            f"or define example_inputs in {where}"
        )
    return tuple(examples) if isinstance(examples, (tuple, list)) else (examples,)


# --8<-- [start:known]
@dataclass(frozen=True)
class KnownDifference:
    """A difference minifx documents as necessary: a line that must name its own library.

    ``ours`` and ``theirs`` match the two spellings; both are read as
    ``common`` before the texts are compared.
    """

    why: str
    theirs: re.Pattern
    ours: re.Pattern
    common: str


KNOWN_DIFFERENCES = (
    KnownDifference(
        why="the check that concrete_args records is each library's own _assert_is_none",
        theirs=re.compile(r"torch\.fx\._symbolic_trace\._assert_is_none"),
        ours=re.compile(r"minifx\.tracer\._assert_is_none|minifx_tracer__assert_is_none"),
        common="<fx>._assert_is_none",
    ),
    KnownDifference(
        why="the wrap(...) line above forward, which keeps a wrapped function a leaf when the "
        "code is traced again, calls each library's own wrap",
        theirs=re.compile(r'^torch\.fx\._symbolic_trace\.wrap\((?="[A-Za-z_][A-Za-z0-9_]*"\)$)'),
        ours=re.compile(r'^wrap\((?="[A-Za-z_][A-Za-z0-9_]*"\)$)'),
        common="<fx>.wrap(",
    ),
)
# --8<-- [end:known]


def _canonical(line: str, ours: bool) -> tuple[str, str | None]:
    """The line with each known difference spelled the common way, and why it changed."""
    why = None
    for known in KNOWN_DIFFERENCES:
        pattern = known.ours if ours else known.theirs
        if pattern.search(line):
            line, why = pattern.sub(known.common, line), known.why
    return line, why


# --8<-- [start:side_by_side]
@dataclass
class Row:
    left: str | None
    mark: str  # " " equal, "~" a known difference, "|" differ, "<" only left, ">" only right
    right: str | None
    why: str | None = None


# --8<-- [start:diff_rows]
def diff_rows(left: str, right: str) -> list[Row]:
    """The two texts line by line, aligned as ``diff -y`` aligns them, each row marked.

    Blank lines carry no meaning in a graph or in code and are left out. Lines
    are matched after the known differences are read the common way, so such
    a line pairs up with its twin and is marked ``~``, not ``|``.
    """
    a = [line for line in left.splitlines() if line.strip()]
    b = [line for line in right.splitlines() if line.strip()]
    a_can = [_canonical(line, ours=True) for line in a]
    b_can = [_canonical(line, ours=False) for line in b]
    matcher = difflib.SequenceMatcher(
        None, [t for t, _ in a_can], [t for t, _ in b_can], autojunk=False)
    rows = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            for i, j in zip(range(i1, i2), range(j1, j2)):
                why = a_can[i][1] or b_can[j][1]
                same = a[i] == b[j]
                rows.append(Row(a[i], " " if same else "~", b[j], None if same else why))
            continue
        lefts, rights = a[i1:i2], b[j1:j2]
        for k in range(max(len(lefts), len(rights))):
            la = lefts[k] if k < len(lefts) else None
            rb = rights[k] if k < len(rights) else None
            if la is not None and rb is not None:
                rows.append(Row(la, "|", rb))
            elif la is not None:
                rows.append(Row(la, "<", None))
            else:
                rows.append(Row(None, ">", rb))
    return rows
# --8<-- [end:diff_rows]


def _cut(text: str, width: int) -> list[str]:
    """A line broken at spaces into pieces of at most ``width`` characters.

    Continuations are indented four more than the line, so they read as one.
    """
    if len(text) <= width:
        return [text]
    indent = " " * min(len(text) - len(text.lstrip()) + 4, width // 2)
    return textwrap.wrap(text, width, subsequent_indent=indent, break_on_hyphens=False)


# --8<-- [start:two_columns]
def side_by_side(
    left: str,
    right: str,
    headers: tuple[str, str] = ("minifx", "torch.fx"),
    width: int | None = None,
    only_differences: bool = False,
) -> str:
    """Two texts in two columns; a middle mark says how each row differs.

    The marks are those of ``diff -y`` (``|`` the lines differ, ``<`` only on
    the left, ``>`` only on the right, blank when equal), and ``~`` for a known
    difference. The whole fits in ``width`` characters (the terminal's width
    by default): a line longer than its column goes on in the next row.

    The rows are ``diff_rows(left, right)``; with ``only_differences``, those
    marked ``" "`` are left out. ``width`` goes through ``_width`` (at least
    ``MIN_WIDTH``). The left column is as wide as its longest text (the left
    header included), but at most ``(width - 3) // 2``; the right column takes
    what is left after the left one and the three characters of the mark
    (``" | "``). The first two lines are the headers and a dash under each, as
    long as the header. Each row is cut to its columns (``_cut``) and printed
    on as many lines as its longer side needs: the left piece padded to the
    column, a space, the mark (on the row's first line only, a space on the
    others), a space and the right piece. Every line has its trailing spaces
    stripped; the lines are joined with newlines.
    """
    rows = diff_rows(left, right)
    if only_differences:
        rows = [row for row in rows if row.mark != " "]
    width = _width(width)
    texts = [row.left or "" for row in rows] + [headers[0]]
    column = min(max(len(t) for t in texts), (width - 3) // 2)
    lines = [f"{headers[0]:<{column}}   {headers[1]}".rstrip(),
             f"{'-' * len(headers[0]):<{column}}   {'-' * len(headers[1])}".rstrip()]
    right_column = width - column - 3
    for row in rows:
        lefts = _cut(row.left or "", column)
        rights = _cut(row.right or "", right_column)
        for k in range(max(len(lefts), len(rights))):
            la = lefts[k] if k < len(lefts) else ""
            rb = rights[k] if k < len(rights) else ""
            mark = row.mark if k == 0 else " "
            lines.append(f"{la:<{column}} {mark} {rb}".rstrip())
    return "\n".join(lines)
# --8<-- [end:two_columns]
# --8<-- [end:side_by_side]


# --8<-- [start:output_difference]
def output_difference(actual: Any, expected: Any, where: str = "output") -> str | None:
    """Why two (nested) outputs differ, or None when they agree.

    ``expected`` decides what ``actual`` must be, and ``where`` names the place
    (``output``, ``output[1]``, ``output['key']``) in each message:

    - a tensor: ``actual`` must be a tensor (else ``<where>: <type> instead of a
      Tensor``) close to it by ``torch.testing.assert_close``, else ``<where>: <the
      first line of its message>``;
    - a tuple or list: ``actual`` of the same type and length, else ``<where>:
      <kind> instead of <kind>`` (a kind is ``tuple of 2``, ``list of 3``, or a
      type name, ``_kind``); then item by item, the first difference found;
    - a dict: ``actual`` a dict with the same keys in the same order, else the
      same kind message; then value by value, the first difference found;
    - anything else: equal (``==``), else ``<where>: <actual!r> != <expected!r>``.
    """
    import torch

    if isinstance(expected, torch.Tensor):
        if not isinstance(actual, torch.Tensor):
            return f"{where}: {type(actual).__name__} instead of a Tensor"
        try:
            torch.testing.assert_close(actual, expected)
        except AssertionError as exc:
            return f"{where}: {str(exc).splitlines()[0]}"
        return None
    if isinstance(expected, (tuple, list)):
        if type(actual) is not type(expected) or len(actual) != len(expected):
            return f"{where}: {_kind(actual)} instead of {_kind(expected)}"
        for i, (x, y) in enumerate(zip(actual, expected)):
            problem = output_difference(x, y, f"{where}[{i}]")
            if problem:
                return problem
        return None
    if isinstance(expected, dict):
        if not isinstance(actual, dict) or list(actual) != list(expected):
            return f"{where}: {_kind(actual)} instead of {_kind(expected)}"
        for key in expected:
            problem = output_difference(actual[key], expected[key], f"{where}[{key!r}]")
            if problem:
                return problem
        return None
    return None if actual == expected else f"{where}: {actual!r} != {expected!r}"
# --8<-- [end:output_difference]


def _kind(value: Any) -> str:
    if isinstance(value, (tuple, list, dict)):
        return f"{type(value).__name__} of {len(value)}"
    return type(value).__name__


def _clone(inputs: tuple) -> tuple:
    """Fresh copies, so an in-place op in one run cannot change the other's inputs."""
    return copy.deepcopy(inputs)


# --8<-- [start:compare]
def _prepared(root: Any) -> Any:
    """A copy of ``root`` for one side, in eval mode: dropout off, batch norm on its stats."""
    copied = _fresh(root)
    if not inspect.isfunction(copied) and callable(getattr(copied, "eval", None)):
        copied.eval()
    return copied


def _run(gm: Any, inputs: tuple) -> tuple[Any, BaseException | None]:
    """Run from the seed, on fresh copies of the inputs: (output, None) or (None, error)."""
    import torch

    torch.manual_seed(SEED)
    try:
        return gm(*_clone(inputs)), None
    except Exception as exc:  # a failure is an answer to compare with the other side's
        return None, exc


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def _trace_both(root: Any, out: TextIO, width: int | None) -> dict[str, Any]:
    """Each tracer's GraphModule (in eval mode) of its own copy of ``root``, or the
    exception it raised, by label; a failure is printed with its message."""
    import torch.fx

    traced: dict[str, Any] = {}
    for label, trace in (("minifx", minifx.symbolic_trace), ("torch.fx", torch.fx.symbolic_trace)):
        try:
            traced[label] = trace(_prepared(root))
            traced[label].eval()
        except Exception as exc:  # any failure is the answer to report
            traced[label] = exc
            print(f"== {label} cannot trace it: {type(exc).__name__} ==", file=out)
            print(_wrapped(f"{exc}\n", width), file=out)
    return traced


# --8<-- [start:compare_texts]
def _compare_texts(ours: Any, theirs: Any, out: TextIO, width: int | None,
                   only_differences: bool) -> list[bool]:
    """Print the two graphs, then the two codes, side by side with a verdict each, then
    the known differences met; one verdict per text (True: same, known lines aside).

    For each of ``("graph", str(gm.graph))`` and ``("code", gm.code)``: the rows of
    ``diff_rows`` (ours on the left) are the same when every mark is ``" "`` or ``"~"``.
    The heading is ``== graph: same ==``, ``== graph: same but for known lines (~) ==``
    when a ``~`` row is among them, or ``== graph: DIFFERENT ==``. Then the table
    (``side_by_side``, with ``width`` and ``only_differences``) and an empty line,
    except when ``only_differences`` is set and every row is ``" "``: then the
    heading alone. After both texts, each distinct reason of the ``~`` rows, in the
    order first met, on a line ``~ known: <why>`` (wrapped to ``width``); then one
    empty line if there was any.
    """
    verdicts, known = [], {}
    for title, left, right in (
        ("graph", str(ours.graph), str(theirs.graph)),
        ("code", ours.code, theirs.code),
    ):
        rows = diff_rows(left, right)
        same = all(row.mark in " ~" for row in rows)
        verdicts.append(same)
        whys = [row.why for row in rows if row.mark == "~"]
        known.update(dict.fromkeys(whys))
        verdict = "DIFFERENT" if not same else "same but for known lines (~)" if whys else "same"
        print(f"== {title}: {verdict} ==", file=out)
        if not (only_differences and all(row.mark == " " for row in rows)):
            print(side_by_side(left, right, width=width, only_differences=only_differences),
                  file=out)
            print(file=out)
    for why in known:
        print(_wrapped(f"~ known: {why}", width), file=out)
    if known:
        print(file=out)
    return verdicts
# --8<-- [end:compare_texts]


# --8<-- [start:compare_outputs]
def _compare_outputs(ours: Any, theirs: Any, inputs: tuple, out: TextIO,
                     width: int | None) -> bool:
    """Run both GraphModules on ``inputs`` (``_run``: fresh copies, one seed) and print
    the verdict; True when they agree.

    Both run: they agree when ``output_difference`` finds nothing, and the heading is
    ``== outputs: same ==``; else ``== outputs: DIFFERENT ==`` followed by the
    difference. Both raise exceptions of the same type (by name): agreement, with
    ``== outputs: both fail the same way (<type>) ==`` and one line per side,
    ``minifx:   <first line>`` and ``torch.fx: <first line>`` (``_first_line``).
    Otherwise (one raises, or the types differ): ``== outputs: DIFFERENT ==`` and one
    line per side, ``minifx raises <first line>`` or ``minifx runs``, the same for
    ``torch.fx``. Text below a heading is wrapped to ``width``.
    """
    (our_out, our_error), (their_out, their_error) = _run(ours, inputs), _run(theirs, inputs)
    if our_error is None and their_error is None:
        problem = output_difference(our_out, their_out)
        verdict = "same" if problem is None else "DIFFERENT"
    elif our_error and their_error and type(our_error).__name__ == type(their_error).__name__:
        problem = None
        verdict = f"both fail the same way ({type(our_error).__name__})"
    else:
        problem = "\n".join(
            f"{label} {'raises ' + _first_line(err) if err else 'runs'}"
            for label, err in (("minifx", our_error), ("torch.fx", their_error)))
        verdict = "DIFFERENT"
    print(f"== outputs: {verdict} ==", file=out)
    if problem:
        print(_wrapped(problem, width), file=out)
    elif our_error is not None:
        both = f"minifx:   {_first_line(our_error)}\ntorch.fx: {_first_line(their_error)}"
        print(_wrapped(both, width), file=out)
    return problem is None
# --8<-- [end:compare_outputs]


def compare(
    root: Any,
    inputs: tuple,
    out: TextIO | None = None,
    *,
    width: int | None = None,
    only_differences: bool = False,
) -> bool:
    """Trace ``root`` with minifx and torch.fx, print both, run both; True when all agree.

    Both sides get their own copy of ``root`` in eval mode and run from the
    same seed. Known differences are shown (``~``) and do not count; both
    sides failing with the same exception type is agreement, and says so.
    """
    out = sys.stdout if out is None else out
    traced = _trace_both(root, out, width)
    failures = {label: v for label, v in traced.items() if isinstance(v, BaseException)}
    if failures:
        # same type by name: each library has its own TraceError class
        agree = len(failures) == 2 and len({type(e).__name__ for e in failures.values()}) == 1
        if agree:
            kind = type(failures["minifx"]).__name__
            print(f"both fail to trace it with {kind}: minifx and torch.fx agree", file=out)
        else:
            print("minifx and torch.fx DIFFER", file=out)
        return agree
    ours, theirs = traced["minifx"], traced["torch.fx"]
    verdicts = _compare_texts(ours, theirs, out, width, only_differences)
    verdicts.append(_compare_outputs(ours, theirs, inputs, out, width))
    agree = all(verdicts)
    print("minifx and torch.fx agree" if agree else "minifx and torch.fx DIFFER", file=out)
    return agree
# --8<-- [end:compare]


def _fresh(root: Any) -> Any:
    """A copy of a module for one tracer (a function needs none; an uncopyable module is shared)."""
    if inspect.isfunction(root):
        return root
    try:
        return copy.deepcopy(root)
    except Exception:  # a module holding a lock or a file: both tracers see the same one
        return root


def build_parser() -> Any:
    """The options of ``python -m minifx compare``; a new option is one more add_argument."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m minifx compare",
        description="Trace a torch module or function with minifx and torch.fx and compare.",
    )
    parser.add_argument(
        "target", metavar="FILE.py:NAME",
        help="a function, an nn.Module instance or class in FILE.py, or MODULE:NAME for an "
        "installed module (torchvision.models:resnet18: a builder called with no arguments)")
    parser.add_argument(
        "--input-shape",
        action="append",
        metavar="2,3[:DTYPE]",
        help="shape of one random input (float32, or the dtype after a colon: 4:int64); "
        "repeat once per input",
    )
    parser.add_argument("--diff", action="store_true", help="print only the lines that differ")
    parser.add_argument(
        "--convert",
        action="store_true",
        help="also convert the model to tensor (chapter 11) and check that it agrees with torch",
    )
    return parser


def main(argv: Sequence[str]) -> int:
    """Entry point of ``python -m minifx compare FILE.py:NAME|MODULE:NAME [options]``."""
    args = build_parser().parse_args(argv)
    try:
        import torch  # noqa: F401
    except ImportError:
        print("error: compare needs PyTorch, which is not installed", file=sys.stderr)
        return 2
    try:
        root, file_module = load_root(args.target)
        name = args.target.rpartition(":")[2]
        inputs = make_inputs(args.input_shape, file_module, name, root)
    except CompareError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    agree = compare(root, inputs, only_differences=args.diff)
    if args.convert:
        report = check_conversion(root, inputs)
        print(f"\n{report.text}")
        agree = agree and report.agree
    return 0 if agree else 1


MIN_WIDTH = 40


def terminal_width() -> int:
    """The terminal's width (COLUMNS where set; 100 when the output is not a terminal)."""
    return shutil.get_terminal_size((100, 24)).columns


def _width(width: int | None) -> int:
    return max(MIN_WIDTH, width or terminal_width())


def _wrapped(text: str, width: int | None) -> str:
    """Prose (a message, a note) broken into lines that fit the width."""
    return "\n".join(
        "\n".join(_cut(line, _width(width))) if line else "" for line in text.split("\n"))
