"""``tensor``'s three layers: their line budgets, and the direction of their imports.

The backend is three folders (``tensor/backend/__init__.py`` says why):
``reference`` (NumPy), ``kernels`` (the numba kernels the book teaches) and
``fast`` (speed only). Each may import only the layers before it, and
``minifx`` may use ``tensor``'s public modules only: never a name with a
leading underscore, so that the book's compiler (chapter 8) reads like any
user of ``tensor``.

A budget counts *code lines*: lines holding a token of code, without blank
lines, comments or docstrings (``minifx.learn.coverage.code_lines``, the same
measure as ``learn coverage``). A budget that pinches asks for simpler code,
never for shorter explanations.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from minifx.learn.coverage import code_lines

ROOT = Path(__file__).resolve().parents[2]
BACKEND = ROOT / "tensor" / "backend"

LAYERS = ("reference", "kernels", "fast")
# Chapter 12's part of tensor, below its public API: the primitive table and its
# router, the dispatch modes, fake tensors and their meta functions. It came after
# the other budgets were set, and has one of its own.
BELOW_THE_API = ("ops.py", "dispatch.py", "fake.py", "_fake_tensor.py", "_meta.py",
                 "_fake_array.py")
# The fast layer's int8 kernels (chapter 10's speed: VNNI and AMX products, packed
# weights, the epilogue) came after the other budgets were set, with a goal of their
# own (int8 at torch's int8 speed), and have a budget of their own.
FAST_INT8 = ("qgemm.py", "int8_simd.py", "amx.py")
# The most code lines each part of ``tensor`` may have.
BUDGETS = {
    "reference": 500,
    "kernels": 2000,
    "fast": 2000,
    "fast int8": 600,
    "front end and nn": 5000,
    "below the API": 800,
}


def _files(part: str) -> list[Path]:
    outside = [p for p in sorted((ROOT / "tensor").rglob("*.py")) if BACKEND not in p.parents]
    below = [ROOT / "tensor" / name for name in BELOW_THE_API]
    if part == "front end and nn":
        return [p for p in outside if p not in below]
    if part == "below the API":
        return below
    int8 = [BACKEND / "fast" / name for name in FAST_INT8]
    if part == "fast int8":
        return int8
    return [p for p in sorted((BACKEND / part).rglob("*.py")) if p not in int8]


def test_every_file_of_tensor_counts_in_one_budget():
    counted = [p for part in BUDGETS for p in _files(part)]
    everything = sorted((ROOT / "tensor").rglob("*.py"))
    left_out = {p for p in everything if p not in counted}
    # the backend's switch and torch's powers sit above the three layers
    assert left_out == {BACKEND / "__init__.py", BACKEND / "powers.py"}
    assert len(counted) == len(set(counted))


def _count(files: list[Path]) -> tuple[int, int]:
    """(code lines, all lines) of ``files``."""
    code = every = 0
    for path in files:
        source = path.read_text()
        code += len(code_lines(source))
        every += len(source.splitlines())
    return code, every


def test_each_layer_is_within_its_line_budget(capsys):
    counts = {part: _count(_files(part)) for part in BUDGETS}
    with capsys.disabled():
        print("\ncode lines (all lines) per part of tensor, against the budget:")
        for part, (code, every) in counts.items():
            print(f"  {part:18} {code:6} ({every:6})  budget {BUDGETS[part]}")
    over = {part: code for part, (code, _) in counts.items() if code > BUDGETS[part]}
    assert not over, f"over budget (code lines): {over}; simplify before raising a budget"


def _imported_modules(path: Path, package: str) -> set[str]:
    """The absolute names of the modules ``path`` (a module of ``package``) imports."""
    tree = ast.parse(path.read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1])
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)
    return names


def _package_of(path: Path) -> str:
    relative = path.relative_to(ROOT).with_suffix("")
    parts = list(relative.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    else:
        parts = parts[:-1]
    return ".".join(parts)


@pytest.mark.parametrize("layer", LAYERS)
def test_a_layer_imports_only_the_layers_before_it(layer):
    later = LAYERS[LAYERS.index(layer) + 1:]
    wrong = {}
    for path in _files(layer):
        imported = _imported_modules(path, _package_of(path))
        bad = {name for name in imported
               for other in later if name.startswith(f"tensor.backend.{other}")}
        if bad:
            wrong[str(path.relative_to(ROOT))] = sorted(bad)
    assert not wrong, f"imports from a later layer: {wrong}"


def test_the_import_reader_resolves_relative_imports():
    path = BACKEND / "fast" / "backend.py"
    imported = _imported_modules(path, _package_of(path))
    assert "tensor.backend.kernels.backend" in imported
    assert "tensor.backend.reference" in imported


def _private_tensor_names(name: str) -> bool:
    return name.startswith("tensor") and any(part.startswith("_") for part in name.split("."))


def test_minifx_imports_no_private_name_of_tensor():
    """Neither a private module (``tensor._ops``) nor a private name
    (``from tensor.backend import _active``), at the top or inside a function,
    nor in the source of the kernels the compiler generates."""
    wrong = {}
    for path in (ROOT / "minifx").rglob("*.py"):
        source = path.read_text()
        found = {name for name in _imported_modules(path, _package_of(path))
                 if _private_tensor_names(name)}
        found |= {line.strip() for line in source.splitlines()
                  if "from tensor." in line and '"' in line and _private_tensor_names(
                      line.split("from ")[1].split(" import")[0])}
        if found:
            wrong[str(path.relative_to(ROOT))] = sorted(found)
    assert not wrong, f"minifx uses private names of tensor: {wrong}"


def test_the_private_name_check_catches_one():
    assert _private_tensor_names("tensor._ops.OPS")
    assert _private_tensor_names("tensor.backend._active")
    assert not _private_tensor_names("tensor.backend.kernels.scalar")
