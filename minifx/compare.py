"""``python -m minifx compare``: trace one torch model with minifx and torch.fx, side by side.

A learner who has read how minifx traces wants to see it hold up against the
real thing on their own model. This module loads ``FILE.py:NAME``, traces it
with both tracers, prints the two graphs and the two generated codes in two
columns with the differing lines marked, runs both GraphModules on the same
inputs and says whether everything agrees. It needs torch, so it is imported
only by the command line, never by ``import minifx``.
"""

from __future__ import annotations

import copy
import difflib
import importlib.util
import inspect
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO


class CompareError(Exception):
    """A problem with the command's input, reported as one line."""


# --8<-- [start:load]
def load_root(spec: str) -> tuple[Any, Any]:
    """Load ``FILE.py:NAME`` and return ``(root, file_module)``.

    NAME may be a function, a ``torch.nn.Module`` instance, or a ``torch.nn.Module``
    class that can be built with no arguments (it is built here).
    """
    import torch

    path_text, sep, name = spec.rpartition(":")
    if not sep or not path_text or not name:
        raise CompareError(f"expected FILE.py:NAME, got {spec!r}")
    path = Path(path_text)
    if not path.is_file():
        raise CompareError(f"no such file: {path_text}")
    module = _import_file(path)
    obj: Any = module
    for part in name.split("."):
        if not hasattr(obj, part):
            raise CompareError(f"{path_text} has no name {name!r}")
        obj = getattr(obj, part)
    if isinstance(obj, type) and issubclass(obj, torch.nn.Module):
        try:
            obj = obj()
        except TypeError as exc:
            raise CompareError(f"cannot build {name} with no arguments: {exc}") from None
    elif not isinstance(obj, torch.nn.Module) and not inspect.isfunction(obj):
        kind = type(obj).__name__
        raise CompareError(
            f"{name} is a {kind}: expected a function, an nn.Module instance or an nn.Module class"
        )
    return obj, module


def _import_file(path: Path) -> Any:
    module_name = f"_minifx_compare_{path.stem}"
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


def make_inputs(shapes: Sequence[str] | None, file_module: Any, name: str) -> tuple:
    """Random float32 inputs from ``--input-shape`` texts, else FILE's ``example_inputs``."""
    import torch

    if shapes:
        inputs = []
        for text in shapes:
            try:
                shape = [int(part) for part in text.split(",") if part.strip()]
            except ValueError:
                message = f"bad --input-shape {text!r}: expected integers like 2,3"
                raise CompareError(message) from None
            inputs.append(torch.randn(shape, dtype=torch.float32))
        return tuple(inputs)
    examples = getattr(file_module, "example_inputs", None)
    if examples is None:
        raise CompareError(
            f"no inputs for {name}: pass --input-shape (one per input) "
            f"or define example_inputs in {Path(file_module.__file__).name}"
        )
    return tuple(examples) if isinstance(examples, (tuple, list)) else (examples,)


# --8<-- [start:side_by_side]
def side_by_side(left: str, right: str, headers: tuple[str, str] = ("minifx", "torch.fx")) -> str:
    """Two texts in two columns; a middle mark says how each row differs.

    The marks are those of ``diff -y``: ``|`` the lines differ, ``<`` only on the
    left, ``>`` only on the right, blank when equal.
    """
    a, b = left.splitlines(), right.splitlines()
    width = max([len(line) for line in a] + [len(headers[0])])
    rows = [(headers[0], " ", headers[1]), ("-" * len(headers[0]), " ", "-" * len(headers[1]))]
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            rows += [(line, " ", line) for line in a[i1:i2]]
            continue
        lefts, rights = a[i1:i2], b[j1:j2]
        for k in range(max(len(lefts), len(rights))):
            la = lefts[k] if k < len(lefts) else None
            rb = rights[k] if k < len(rights) else None
            mark = "|" if la is not None and rb is not None else ("<" if rb is None else ">")
            rows.append((la or "", mark, rb or ""))
    return "\n".join(f"{la:<{width}} {mark} {rb}".rstrip() for la, mark, rb in rows)
# --8<-- [end:side_by_side]


def output_difference(actual: Any, expected: Any, where: str = "output") -> str | None:
    """Why two (nested) outputs differ, or None when they agree."""
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


def _kind(value: Any) -> str:
    if isinstance(value, (tuple, list, dict)):
        return f"{type(value).__name__} of {len(value)}"
    return type(value).__name__


def _clone(inputs: tuple) -> tuple:
    """Fresh copies, so an in-place op in one run cannot change the other's inputs."""
    return copy.deepcopy(inputs)


# --8<-- [start:compare]
def compare(root: Any, inputs: tuple, out: TextIO | None = None) -> bool:
    """Trace ``root`` with minifx and torch.fx, print both, run both; True when all agree."""
    import torch.fx

    import minifx

    out = sys.stdout if out is None else out
    traced = {}
    for label, trace in (("minifx", minifx.symbolic_trace), ("torch.fx", torch.fx.symbolic_trace)):
        try:  # each tracer gets its own copy: tracing may store constants on the root
            traced[label] = trace(_fresh(root))
        except Exception as exc:  # any failure is the answer to report
            print(f"== {label} cannot trace it: {type(exc).__name__} ==\n{exc}\n", file=out)
    if len(traced) < 2:
        print("minifx and torch.fx DIFFER" if traced else "neither can trace it", file=out)
        return False
    ours, theirs = traced["minifx"], traced["torch.fx"]
    verdicts = []
    for title, left, right in (
        ("graph", str(ours.graph), str(theirs.graph)),
        ("code", ours.code, theirs.code),
    ):
        same = left == right
        verdicts.append(same)
        print(f"== {title}: {'same' if same else 'DIFFERENT'} ==", file=out)
        print(side_by_side(left.strip("\n").rstrip(), right.strip("\n").rstrip()), file=out)
        print(file=out)
    try:
        problem = output_difference(ours(*_clone(inputs)), theirs(*_clone(inputs)))
    except Exception as exc:  # a GraphModule that cannot run is a difference too
        problem = f"running them failed: {type(exc).__name__}: {exc}"
    verdicts.append(problem is None)
    print(f"== outputs: {'same' if problem is None else 'DIFFERENT'} ==", file=out)
    if problem:
        print(problem, file=out)
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


def main(argv: Sequence[str]) -> int:
    """Entry point of ``python -m minifx compare FILE.py:NAME [--input-shape 2,3 ...]``."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m minifx compare",
        description="Trace a torch module or function with minifx and torch.fx and compare.",
    )
    parser.add_argument("target", metavar="FILE.py:NAME")
    parser.add_argument(
        "--input-shape",
        action="append",
        metavar="2,3",
        help="shape of one random float32 input; repeat once per input",
    )
    parser.add_argument(
        "--convert",
        action="store_true",
        help="also convert the model to tensor (chapter 11) and check that it agrees with torch",
    )
    args = parser.parse_args(argv)
    try:
        import torch  # noqa: F401
    except ImportError:
        print("error: compare needs PyTorch, which is not installed", file=sys.stderr)
        return 2
    try:
        root, file_module = load_root(args.target)
        name = args.target.rpartition(":")[2]
        inputs = make_inputs(args.input_shape, file_module, name)
    except CompareError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    agree = compare(root, inputs)
    if args.convert:
        from minifx.convert import check_conversion

        report = check_conversion(root, inputs)
        print(f"\n{report.text}")
        agree = agree and report.agree
    return 0 if agree else 1
