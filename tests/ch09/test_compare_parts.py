"""The pieces of ``python -m minifx compare``, in process: loading the target, the
input shapes, the output comparison (against torch.testing), the side-by-side
table and the verdicts printed for the texts and the outputs."""

import io
import sys
import textwrap

import pytest
import torch
import torch.fx

import minifx
from minifx import compare as compare_mod
from minifx.compare import (
    CompareError,
    _compare_outputs,
    _compare_texts,
    _parse_shape,
    load_root,
    output_difference,
    side_by_side,
)

MODELS = textwrap.dedent(
    """
    import torch


    class Small(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(3, 4)

        def forward(self, x):
            return torch.relu(self.linear(x))


    class NeedsArgs(torch.nn.Module):
        def __init__(self, width):
            super().__init__()


    class Holder:
        def __init__(self):
            self.inner = torch.nn.Linear(2, 2)


    def builder(*, width=3):
        return torch.nn.Linear(width, 2)


    def not_a_model():
        return 42


    def needs_keyword(*, width):
        return torch.nn.Linear(width, 2)


    def fn(x, y):
        return torch.sigmoid(x) * y


    small = Small()
    holder = Holder()
    answer = 42
    """
)


@pytest.fixture
def models(tmp_path):
    path = tmp_path / "parts_models.py"
    path.write_text(MODELS)
    yield path
    sys.modules.pop("_minifx_compare_parts_models", None)


# ---- loading ----------------------------------------------------------------------
def test_load_root_builds_classes_and_builders_and_keeps_the_rest(models):
    small, module = load_root(f"{models}:Small")
    assert type(small).__name__ == "Small" and module.__name__ == "_minifx_compare_parts_models"
    for name in ("small", "fn", "needs_keyword", "holder.inner"):
        # an instance, a function with inputs, one with a required keyword, a dotted name:
        # each as it is (the file is imported again by each call)
        obj, module = load_root(f"{models}:{name}")
        assert obj is minifx.node.fetch_path(module, name)
    built, _ = load_root(f"{models}:builder")
    assert isinstance(built, torch.nn.Linear) and built.in_features == 3
    linear, module = load_root("torch.nn:Identity")  # an installed module by name
    assert isinstance(linear, torch.nn.Identity) and module is torch.nn


@pytest.mark.parametrize("target, message", [
    ("{models}", "expected FILE.py:NAME or MODULE:NAME, got '{models}'"),
    (":Small", "expected FILE.py:NAME or MODULE:NAME, got ':Small'"),
    ("{models}:", "expected FILE.py:NAME or MODULE:NAME, got '{models}:'"),
    ("missing.py:Small", "no such file: missing.py"),
    ("not a module:Small", "no such file: not a module"),
    ("{models}:Nope", "{models} has no name 'Nope'"),
    ("{models}:NeedsArgs", "cannot build NeedsArgs with no arguments: "),
    ("{models}:not_a_model", "not_a_model() takes no input, so it was called to build a "
     "module, and returned a int: expected an nn.Module"),
    ("{models}:answer", "answer is a int: expected a function, an nn.Module instance or an "
     "nn.Module class"),
    ("{models}:holder", "holder is a Holder: expected a function"),
    ("no_such_module_anywhere:f", "no such file or module: no_such_module_anywhere"),
])
def test_load_root_says_what_is_wrong_in_one_line(models, target, message):
    with pytest.raises(CompareError) as error:
        load_root(target.format(models=models))
    text = str(error.value)
    assert text.startswith(message.format(models=models)) and "\n" not in text


def test_a_colon_in_the_path_is_part_of_the_path(tmp_path):
    folder = tmp_path / "runs:2024"
    folder.mkdir()
    (folder / "colon_models.py").write_text(MODELS)
    try:
        small, module = load_root(f"{folder}/colon_models.py:Small")
    finally:
        sys.modules.pop("_minifx_compare_colon_models", None)
    assert type(small).__name__ == "Small" and module.__file__.endswith("colon_models.py")


def test_input_shapes_and_dtypes():
    assert _parse_shape("2,3") == ([2, 3], torch.float32)
    assert _parse_shape("4:int64") == ([4], torch.int64)
    assert _parse_shape(" 2 , 3 ,: float64 ") == ([2, 3], torch.float64)
    assert _parse_shape("") == ([], torch.float32)
    assert _parse_shape("0:bool") == ([0], torch.bool)
    for text, message in [
        ("2,x", "bad --input-shape '2,x': expected integers like 2,3 (a dtype may follow: "
         "4:int64)"),
        ("2.5", "bad --input-shape '2.5': expected integers"),
        ("2,-1", "bad --input-shape '2,-1': sizes cannot be negative"),
        ("4:int65", "bad --input-shape '4:int65': unknown dtype 'int65' (for example float32, "
         "float64, int64, int32, bool)"),
        ("4:relu", "bad --input-shape '4:relu': unknown dtype 'relu'"),
    ]:
        with pytest.raises(CompareError) as error:
            _parse_shape(text)
        assert str(error.value).startswith(message)


# ---- outputs ----------------------------------------------------------------------
def _torch_says(actual, expected):
    try:
        torch.testing.assert_close(actual, expected)
    except AssertionError as exc:
        return str(exc).splitlines()[0]
    return None


def test_output_difference_of_tensors_is_torch_testing_s():
    a = torch.randn(3)
    for other in (a.clone(), a + 1e-7, a + 1, a.double(), torch.randn(4)):
        verdict = _torch_says(other, a)
        assert output_difference(other, a) == (None if verdict is None else f"output: {verdict}")
    assert output_difference(3, a) == "output: int instead of a Tensor"


def test_output_difference_walks_containers_and_names_the_place():
    a, b = torch.randn(2), torch.randn(2)
    assert output_difference((a, [b, 3]), (a, [b, 3])) is None
    assert output_difference((a, [b + 1, 3]), (a, [b, 3])).startswith("output[1][0]: ")
    assert output_difference((a, [b, 4]), (a, [b, 3])) == "output[1][1]: 4 != 3"
    assert output_difference([a, b], (a, b)) == "output: list of 2 instead of tuple of 2"
    assert output_difference((a,), (a, b)) == "output: tuple of 1 instead of tuple of 2"
    assert output_difference(a, (a, b)) == "output: Tensor instead of tuple of 2"
    assert output_difference({"x": a, "y": b}, {"x": a, "y": b}) is None
    assert output_difference({"y": b, "x": a}, {"x": a, "y": b}) == \
        "output: dict of 2 instead of dict of 2"
    assert output_difference({"x": a, "y": b + 1}, {"x": a, "y": b}).startswith(
        "output['y']: ")
    assert output_difference([a], {"x": a}) == "output: list of 1 instead of dict of 1"
    assert output_difference("b", "a", where="result") == "result: 'b' != 'a'"


# ---- the table ----------------------------------------------------------------------
def test_rows_pair_lines_and_mark_known_differences():
    from minifx.compare import Row, diff_rows

    ours = "a\n\ny = minifx.tracer._assert_is_none(x)\nb\nc\nmine"
    theirs = "a\ny = torch.fx._symbolic_trace._assert_is_none(x)\nB\nC\nD\n"
    why = compare_mod.KNOWN_DIFFERENCES[0].why
    assert diff_rows(ours, theirs) == [
        Row("a", " ", "a"),
        Row("y = minifx.tracer._assert_is_none(x)", "~",
            "y = torch.fx._symbolic_trace._assert_is_none(x)", why),
        Row("b", "|", "B"), Row("c", "|", "C"), Row("mine", "|", "D"),
    ]
    assert diff_rows("a\nb", "b\nc") == [Row("a", "<", None), Row("b", " ", "b"),
                                         Row(None, ">", "c")]
    # difflib's autojunk off: in a long text, a line repeated many times still lines up
    rows = diff_rows("\n".join(["x"] * 210 + ["a"]), "\n".join(["b"] + ["x"] * 210))
    assert [row.mark for row in rows] == [">"] + [" "] * 210 + ["<"]



def test_side_by_side_columns_headers_and_marks():
    left = "same\nleft only\n\nmine"
    right = "same\ntheirs\nright only 1\nright only 2"
    lines = side_by_side(left, right, headers=("ours", "theirs"), width=40).splitlines()
    assert lines == [
        "ours        theirs",
        "----        ------",
        "same        same",
        "left only | theirs",
        "mine      | right only 1",
        "          > right only 2",
    ]
    assert side_by_side("a", "b", width=40).splitlines() == [
        "minifx   torch.fx", "------   --------", "a      | b"]  # the header sets the column
    only = side_by_side(left, right, width=40, only_differences=True).splitlines()
    assert only[2:] == ["left only | theirs", "mine      | right only 1",
                        "          > right only 2"]
    assert only[0] == "minifx      torch.fx"  # the left column is as wide as its header
    # A width below MIN_WIDTH counts as MIN_WIDTH; long lines go on in the next rows.
    wide = side_by_side("x " * 30, "y " * 30, width=10).splitlines()
    assert max(len(line) for line in wide) <= compare_mod.MIN_WIDTH
    assert [line[19] for line in wide[2:]] == ["|"] + [" "] * (len(wide) - 3)


# ---- the verdicts ---------------------------------------------------------------------
def relu_plus_one(x):
    return torch.relu(x) + 1


def _pair(fn, doctor=None):
    ours, theirs = minifx.symbolic_trace(fn), torch.fx.symbolic_trace(fn)
    if doctor:
        for node in ours.graph.nodes:
            if node.target is torch.relu:
                node.target = doctor
        ours.recompile()
    return ours, theirs


def test_text_verdicts_tables_and_known_lines():
    out = io.StringIO()
    assert _compare_texts(*_pair(relu_plus_one), out, 100, False) == [True, True]
    text = out.getvalue()
    assert text.startswith("== graph: same ==\nminifx")
    assert "\n\n== code: same ==\n" in text and text.endswith("\n\n")
    out = io.StringIO()
    assert _compare_texts(*_pair(relu_plus_one), out, 100, True) == [True, True]
    assert out.getvalue() == "== graph: same ==\n== code: same ==\n"
    out = io.StringIO()
    assert _compare_texts(*_pair(relu_plus_one, torch.sigmoid), out, 100, True) == \
        [False, False]
    text = out.getvalue()
    assert "== graph: DIFFERENT ==" in text and "== code: DIFFERENT ==" in text
    assert "placeholder" not in text  # only the rows that differ
    assert text.count(" | ") == 2 and "torch.sigmoid" in text  # one table row each

    def f(x, flag):
        return x + 1 if flag is None else x

    ours = minifx.symbolic_trace(f, concrete_args={"flag": None})
    theirs = torch.fx.symbolic_trace(f, concrete_args={"flag": None})
    out = io.StringIO()
    assert _compare_texts(ours, theirs, out, 200, False) == [True, True]
    text = out.getvalue()
    assert "== graph: same but for known lines (~) ==" in text
    assert "== code: same but for known lines (~) ==" in text
    why = compare_mod.KNOWN_DIFFERENCES[0].why
    assert text.count(f"~ known: {why}") == 1 and text.endswith(f"~ known: {why}\n\n")


def refuse(x):
    raise ValueError("refused")


def test_output_verdicts():
    x = (torch.randn(3),)
    out = io.StringIO()
    assert _compare_outputs(*_pair(relu_plus_one), x, out, 100) is True
    assert out.getvalue() == "== outputs: same ==\n"
    out = io.StringIO()
    assert _compare_outputs(*_pair(relu_plus_one, torch.sigmoid), x, out, 100) is False
    lines = out.getvalue().splitlines()
    assert lines[0] == "== outputs: DIFFERENT ==" and lines[1].startswith("output: ")
    out = io.StringIO()
    assert _compare_outputs(*_pair(relu_plus_one), (torch.randn(2), 1), out, 100) is True
    assert out.getvalue().splitlines() == [
        "== outputs: both fail the same way (TypeError) ==",
        "minifx:   TypeError: forward() takes 2 positional arguments but 3 were given",
        "torch.fx: TypeError: forward() takes 2 positional arguments but 3 were given"]
    out = io.StringIO()  # both fail, but not alike
    assert _compare_outputs(*_pair(relu_plus_one, refuse), ("text",), out, 100) is False
    assert out.getvalue().splitlines() == [
        "== outputs: DIFFERENT ==", "minifx raises ValueError: refused",
        "torch.fx raises TypeError: relu(): argument 'input' (position 1) must be Tensor, not str"]
    out = io.StringIO()
    assert _compare_outputs(*_pair(relu_plus_one, torch.cat), x, out, 100) is False
    lines = out.getvalue().splitlines()
    assert lines[0] == "== outputs: DIFFERENT =="
    assert lines[1].startswith("minifx raises TypeError: ") and lines[2] == "torch.fx runs"
