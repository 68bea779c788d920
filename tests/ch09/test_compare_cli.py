"""``python -m minifx compare``: both tracers side by side, and one-line errors."""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from minifx.compare import side_by_side

pytestmark = pytest.mark.ch09

ROOT = Path(__file__).resolve().parents[2]


def run(*args, cwd=ROOT):
    return subprocess.run(
        [sys.executable, "-m", "minifx", "compare", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


MODELS = textwrap.dedent(
    """
    import torch
    import torch.nn.functional as F


    class Small(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(3, 4)

        def forward(self, x):
            return F.relu(self.linear(x)).sum(dim=-1)


    small = Small()


    def fn(x, y):
        return torch.sigmoid(x) * y


    class NeedsArgs(torch.nn.Module):
        def __init__(self, width):
            super().__init__()


    answer = 42
    example_inputs = (torch.randn(2, 3), torch.randn(2, 3))
    """
)


@pytest.fixture
def models(tmp_path):
    path = tmp_path / "models.py"
    path.write_text(MODELS)
    return path


def test_a_module_class_agrees(models):
    result = run(f"{models}:Small", "--input-shape", "2,3")
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["==", "graph:", "same", "=="]
    assert lines[1].split() == ["minifx", "torch.fx"]
    assert "== code: same ==" in result.stdout
    assert "== outputs: same ==" in result.stdout
    assert lines[-1] == "minifx and torch.fx agree"


def test_an_instance_and_a_function_with_example_inputs(models):
    assert run(f"{models}:small", "--input-shape", "5,3").returncode == 0
    result = run(f"{models}:fn")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "torch.sigmoid(x)" in result.stdout


@pytest.mark.parametrize(
    "target, message",
    [
        ("missing.py:Small", "error: no such file: missing.py"),
        ("{models}:Nope", "error: {models} has no name 'Nope'"),
        ("{models}:answer", "error: answer is a int: expected a function"),
        ("{models}:NeedsArgs", "error: cannot build NeedsArgs with no arguments"),
        ("{models}", "error: expected FILE.py:NAME"),
    ],
)
def test_bad_targets_say_so_in_one_line(models, target, message):
    result = run(target.format(models=models), "--input-shape", "2,3")
    assert result.returncode == 2
    assert result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1
    assert result.stderr.startswith(message.format(models=models))


def test_missing_inputs_are_named(tmp_path):
    path = tmp_path / "bare.py"
    path.write_text("import torch\n\ndef f(x):\n    return x + 1\n")
    result = run(f"{path}:f")
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "error: no inputs for f: pass --input-shape (one per input) "
        "or define example_inputs in bare.py"
    )


def test_side_by_side_marks_the_differences():
    left = "a\nb\nc\nonly left"
    right = "a\nB\nc"
    text = side_by_side(left, right).splitlines()
    assert text[0].split() == ["minifx", "torch.fx"]
    assert text[2].split() == ["a", "a"]
    assert text[3].split() == ["b", "|", "B"]
    assert text[4].split() == ["c", "c"]
    assert text[5].split() == ["only", "left", "<"]


def test_a_difference_exits_non_zero(tmp_path, monkeypatch):
    # A tracer that records one op wrong must be caught: compare against a doctored minifx.
    import torch

    import minifx
    from minifx import compare as compare_mod

    def f(x):
        return torch.relu(x) + 1

    real = minifx.symbolic_trace

    def doctored(root, concrete_args=None):
        gm = real(root, concrete_args)
        for node in gm.graph.nodes:
            if node.target is torch.relu:
                node.target = torch.sigmoid
        gm.recompile()
        return gm

    monkeypatch.setattr(minifx, "symbolic_trace", doctored)
    import io

    out = io.StringIO()
    assert compare_mod.compare(f, (torch.randn(3),), out) is False
    text = out.getvalue()
    assert "== graph: DIFFERENT ==" in text
    assert "|" in text
    assert "== outputs: DIFFERENT ==" in text
    assert text.splitlines()[-1] == "minifx and torch.fx DIFFER"


def test_a_model_neither_can_trace_is_reported(tmp_path):
    path = tmp_path / "branchy.py"
    path.write_text(
        "import torch\n\n\ndef f(x):\n    if x.sum() > 0:\n        return x\n    return -x\n"
    )
    result = run(f"{path}:f", "--input-shape", "3")
    assert result.returncode == 1
    assert "== minifx cannot trace it: TraceError ==" in result.stdout
    assert "if x.sum() > 0:" in result.stdout
    assert "== torch.fx cannot trace it: TraceError ==" in result.stdout
    assert result.stdout.splitlines()[-1] == "neither can trace it"
