"""``python -m minifx compare``: both tracers side by side, and one-line errors."""

import io
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from minifx.compare import diff_rows, side_by_side
from tests.forked_cli import ForkedCli

ROOT = Path(__file__).resolve().parents[2]
CLI: ForkedCli | None = None  # made by the first run()


@pytest.fixture(scope="module", autouse=True)
def _close_cli():
    yield
    global CLI
    if CLI is not None:
        CLI.close()
        CLI = None


def cli() -> ForkedCli:
    """The server every run() forks from, started when this file's tests first need it."""
    global CLI
    if CLI is None:
        CLI = ForkedCli()
    return CLI


def run(*args, cwd=ROOT, columns=100):
    """``python -m minifx compare ARGS`` in ``cwd``, as a new process runs it: forked from
    one server that has imported torch, tensor and minifx."""
    return cli().run(["compare", *args], cwd, {**os.environ, "COLUMNS": str(columns)})


def test_the_command_agrees_in_a_process_of_its_own(models):
    """One run as a real new process, which every other run here stands in for."""
    cli()  # the server imports beside the real process
    result = subprocess.run([sys.executable, "-m", "minifx", "compare", f"{models}:Small",
                             "--input-shape", "2,3"], cwd=ROOT, capture_output=True, text=True,
                            timeout=300, env={**os.environ, "COLUMNS": "100"})
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == run(f"{models}:Small", "--input-shape", "2,3").stdout


def test_a_folder_with_packages_of_our_names_runs_them_as_a_new_process_would(tmp_path):
    """`python -m minifx` in a folder that holds a `minifx` runs that one: the forked
    run must not keep the server's (tests/forked_cli.py)."""
    (tmp_path / "minifx").mkdir()
    (tmp_path / "minifx" / "__init__.py").write_text("")
    (tmp_path / "minifx" / "__main__.py").write_text("print('the folder\\'s own minifx')\n")
    result = run("anything", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (0, "the folder's own minifx\n")


MODELS = textwrap.dedent(
    """
    import math

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


    class Dropping(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(3, 3)

        def forward(self, x):
            return F.dropout(self.linear(x), p=0.5, training=self.training)


    def scaled(x):
        return x / math.sqrt(x.size(-1))


    def noisy(x):
        return x + torch.rand_like(x)


    class Words(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = torch.nn.Embedding(6, 3)

        def forward(self, indices):
            return self.embedding(indices).mean(dim=0)


    class Wide(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a_rather_long_layer_name = torch.nn.Linear(3, 3)

        def forward(self, some_input_with_a_long_name):
            hidden = self.a_rather_long_layer_name(some_input_with_a_long_name)
            return torch.nn.functional.softmax(hidden, dim=-1, dtype=torch.float32)


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
    assert text[2].split() == ["a", "a"]  # blank lines are left out of the comparison
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


def test_a_model_neither_can_trace_the_same_way_is_agreement(tmp_path):
    path = tmp_path / "branchy.py"
    path.write_text(
        "import torch\n\n\ndef f(x):\n    if x.sum() > 0:\n        return x\n    return -x\n"
    )
    result = run(f"{path}:f", "--input-shape", "3")
    assert result.returncode == 0, result.stdout
    assert "== minifx cannot trace it: TraceError ==" in result.stdout
    assert "if x.sum() > 0:" in result.stdout
    assert "== torch.fx cannot trace it: TraceError ==" in result.stdout
    assert result.stdout.splitlines()[-1] == (
        "both fail to trace it with TraceError: minifx and torch.fx agree"
    )


# -- the reproductions of issue 8: a verdict to trust ------------------------------
def test_dropout_reading_self_training_agrees_every_time(models):
    """Eval mode on both sides: F.dropout(training=self.training) is the identity."""
    for _ in range(6):
        result = run(f"{models}:Dropping", "--input-shape", "4,3")
        assert result.returncode == 0, result.stdout
        assert "== outputs: same ==" in result.stdout


def test_random_ops_run_from_one_seed_on_both_sides(models):
    result = run(f"{models}:noisy", "--input-shape", "5")
    assert result.returncode == 0, result.stdout


def test_the_wrap_line_of_math_sqrt_is_a_known_difference(models):
    result = run(f"{models}:scaled", "--input-shape", "2,4")
    assert result.returncode == 0, result.stdout
    assert "== graph: same ==" in result.stdout
    assert "== code: same but for known lines (~) ==" in result.stdout
    wrap_row = next(line for line in result.stdout.splitlines() if "wrap(" in line)
    ours, mark, theirs = wrap_row.split()
    assert (ours, mark) == ('wrap("math_sqrt")', "~")
    assert theirs == 'torch.fx._symbolic_trace.wrap("math_sqrt")'
    assert "~ known: the wrap(...) line above forward" in result.stdout
    assert result.stdout.splitlines()[-1] == "minifx and torch.fx agree"


def test_assert_is_none_is_a_known_difference():
    import torch
    import torch.fx

    import minifx

    def maybe_add(x, y=None):
        return x if y is None else x + y

    ours = minifx.symbolic_trace(maybe_add, concrete_args={"y": None})
    theirs = torch.fx.symbolic_trace(maybe_add, concrete_args={"y": None})
    for left, right in ((str(ours.graph), str(theirs.graph)), (ours.code, theirs.code)):
        marks = [row.mark for row in diff_rows(left, right)]
        assert "~" in marks and set(marks) <= {" ", "~"}
    # a real difference in the same line is still one
    doctored = theirs.code.replace("_assert_is_none(y_1", "_assert_is_none(x")
    assert "|" in [row.mark for row in diff_rows(ours.code, doctored)]


def test_a_wrong_input_shape_fails_both_sides_alike_and_says_so(models):
    result = run(f"{models}:Small", "--input-shape", "2,5")
    assert result.returncode == 0, result.stdout
    assert "== outputs: both fail the same way (RuntimeError) ==" in result.stdout
    assert "minifx:   RuntimeError: mat1 and mat2 shapes cannot be multiplied" in result.stdout
    assert "torch.fx: RuntimeError: mat1 and mat2 shapes cannot be multiplied" in result.stdout
    assert result.stdout.splitlines()[-1] == "minifx and torch.fx agree"


def test_one_side_failing_is_a_difference(monkeypatch):
    import torch

    import minifx
    from minifx import compare as compare_mod

    def f(x):
        return torch.relu(x)

    real = minifx.symbolic_trace

    def broken(root, concrete_args=None):
        gm = real(root, concrete_args)
        for node in gm.graph.nodes:
            if node.op == "call_function":
                node.target = torch.cat  # cat of a tensor, not a list: a TypeError
        gm.recompile()
        return gm

    monkeypatch.setattr(minifx, "symbolic_trace", broken)
    out = io.StringIO()
    assert compare_mod.compare(f, (torch.randn(3),), out, width=100) is False
    assert "minifx raises TypeError" in out.getvalue()
    assert "torch.fx runs" in out.getvalue()


def test_an_embedding_compares_with_int64_indices(models):
    result = run(f"{models}:Words", "--input-shape", "4:int64")
    assert result.returncode == 0, result.stdout
    assert "== outputs: same ==" in result.stdout


@pytest.mark.parametrize(
    "shape, message",
    [
        ("4:int65", "error: bad --input-shape '4:int65': unknown dtype 'int65'"),
        ("2,x", "error: bad --input-shape '2,x': expected integers like 2,3"),
        ("2,-1", "error: bad --input-shape '2,-1': sizes cannot be negative"),
    ],
)
def test_a_bad_input_shape_is_one_line(models, shape, message):
    result = run(f"{models}:Small", "--input-shape", shape)
    assert result.returncode == 2
    assert result.stderr.strip().startswith(message)
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("columns", [60, 80, 120])
def test_the_output_fits_the_terminal(models, columns):
    result = run(f"{models}:Wide", "--input-shape", "2,3", columns=columns)
    assert result.returncode == 0, result.stdout
    lines = result.stdout.splitlines()
    assert max(len(line) for line in lines) <= columns
    assert "== outputs: same ==" in result.stdout


def test_long_lines_wrap_within_their_column_and_nothing_is_lost():
    line = "    %node : [num_users=1] = call_function[target=torch.{}](args = (%a, %b))"
    left, right = "short\n" + line.format("add"), "short\n" + line.format("sub")
    text = side_by_side(left, right, width=60).splitlines()
    assert max(len(line) for line in text) <= 60
    column = text[0].index("torch.fx")
    lefts = "".join(line[: column - 3] for line in text[2:])
    rights = "".join(line[column:] for line in text[2:])
    assert "".join(lefts.split()) == "".join(left.split())
    assert "".join(rights.split()) == "".join(right.split())
    assert [line[column - 2] for line in text[2:]].count("|") == 1  # one mark per row


def test_diff_prints_only_the_lines_that_differ(monkeypatch):
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
    out = io.StringIO()
    assert compare_mod.compare(f, (torch.randn(3),), out, width=200, only_differences=True) is False
    text = out.getvalue()
    graph_rows = text.split("== graph: DIFFERENT ==\n")[1].split("\n\n")[0].splitlines()[2:]
    assert len(graph_rows) == 1 and graph_rows[0].split()[:2] == ["%relu", ":"]
    assert "|" in graph_rows[0] and "torch.relu" in graph_rows[0]
    assert "placeholder" not in text and "def forward" not in text


def test_diff_on_agreeing_models_prints_no_tables(models):
    result = run(f"{models}:Small", "--input-shape", "2,3", "--diff")
    assert result.returncode == 0
    assert result.stdout.splitlines() == [
        "== graph: same ==",
        "== code: same ==",
        "== outputs: same ==",
        "minifx and torch.fx agree",
    ]


def test_piping_into_head_ends_quietly(models):
    command = (
        f"set -o pipefail; {sys.executable} -m minifx compare {models}:Wide "
        "--input-shape 2,3 | head -n 3"
    )
    result = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=300)
    assert result.stderr == ""
    assert len(result.stdout.splitlines()) == 3


def test_a_reader_that_is_already_gone_ends_quietly(models):
    """The deterministic case: the pipe's reader closed before anything is written."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        result = subprocess.run(
            [sys.executable, "-m", "minifx", "compare", f"{models}:Small", "--input-shape", "2,3"],
            stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=300,
        )
    finally:
        os.close(write_end)
    assert result.stderr == ""
    assert result.returncode == 141  # as a shell reports a process ended by SIGPIPE


BUILDERS = textwrap.dedent(
    """
    import torch


    class Small(torch.nn.Module):
        def __init__(self, width):
            super().__init__()
            self.linear = torch.nn.Linear(width, 2)
            self.drop = torch.nn.Dropout(0.5)

        def forward(self, x):
            return self.drop(self.linear(x))


    def small(*, width=3):
        return Small(width)


    def not_a_model():
        return 42


    def fn(x, y):
        return torch.sigmoid(x) * y
    """
)


@pytest.fixture
def builders(tmp_path):
    (tmp_path / "builders.py").write_text(BUILDERS)
    (tmp_path / "broken.py").write_text("raise RuntimeError('boom')\n")
    return tmp_path


def test_an_installed_module_s_builder_is_called_with_no_arguments(builders):
    # `python -m` puts the working directory on the path: `builders` is importable.
    result = run("builders:small", "--input-shape", "4,3", cwd=builders)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "self.linear(x)" in result.stdout  # the module the builder made, traced
    assert result.stdout.splitlines()[-1] == "minifx and torch.fx agree"


def test_an_installed_module_s_function_with_inputs_is_traced(builders):
    result = run("builders:fn", "--input-shape", "2", "--input-shape", "2", cwd=builders)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "torch.sigmoid(x)" in result.stdout


@pytest.mark.parametrize(
    "target, message",
    [
        ("nosuchmodule:f", "error: no such file or module: nosuchmodule"),
        ("broken:f", "error: cannot import broken: RuntimeError: boom"),
        ("builders:nope", "error: builders has no name 'nope'"),
        ("builders:not_a_model", "error: not_a_model() takes no input, so it was called to "
         "build a module, and returned a int: expected an nn.Module"),
    ],
)
def test_bad_module_targets_say_so_in_one_line(builders, target, message):
    result = run(target, "--input-shape", "2,3", cwd=builders)
    assert result.returncode == 2
    assert result.stderr.strip() == message


def test_a_module_without_example_inputs_is_named(builders):
    result = run("builders:fn", cwd=builders)
    assert result.stderr.strip() == (
        "error: no inputs for fn: pass --input-shape (one per input) "
        "or define example_inputs in builders")


def test_compare_builds_a_torchvision_model_from_its_builder(tmp_path):
    """As a user types it, from a folder of their own: compare makes torchvision
    importable beside the CPU torch itself (minifx.frameworks.published)."""
    result = run("torchvision.models:resnet18", "--input-shape", "1,3,32,32", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "== graph: same ==" in result.stdout and "== outputs: same ==" in result.stdout
    assert "self.layer1" in result.stdout  # resnet18's own submodules, built by the builder
    assert result.stdout.splitlines()[-1] == "minifx and torch.fx agree"
