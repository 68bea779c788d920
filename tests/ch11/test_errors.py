"""ConversionError lists every problem at once, with the user's file and line and
what tensor offers nearby; bad input (hooks, CUDA or half-precision weights) is refused."""

import inspect

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from minifx.convert import ConversionError, Unsupported, torch_to_tensor
from minifx.convert.errors import user_line


def line_of(text):
    """The line number in this file of the line of Unconvertible.forward holding ``text``."""
    lines, first = inspect.getsourcelines(Unconvertible.forward)
    found = [first + i for i, line in enumerate(lines) if text in line]
    assert len(found) == 1, found
    return found[0]


class Unconvertible(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1d = nn.Conv1d(4, 4, 3)
        self.act = nn.Mish()
        self.fc = nn.Linear(4, 4)

    def forward(self, x, mask):
        x = self.act(self.conv1d(x))  # marker: conv1d
        x = x.masked_fill(mask, 0.0)  # marker: masked_fill
        y = F.mish(self.fc(x.transpose(1, 2)))  # marker: F.mish
        z = torch.tril(y)  # marker: tril
        return torch.relu(z) + y.sigmoid()  # converts


def test_every_unsupported_op_is_listed_at_once_with_file_and_line():
    with pytest.raises(ConversionError) as caught:
        torch_to_tensor(Unconvertible())
    problems = caught.value.problems
    whats = [p.what for p in problems]
    assert whats == [
        "call_module conv1d (Conv1d)",
        "call_module act (Mish)",
        "call_method masked_fill",
        "call_function torch.nn.functional.mish",
        "call_function torch.tril",
    ]
    expected_lines = [line_of("x = self.act(self.conv1d(x))")] * 2 + [
        line_of("x = x.masked_fill(mask, 0.0)"), line_of("y = F.mish(self.fc("),
        line_of("z = torch.tril(y)")]
    assert [p.lineno for p in problems] == expected_lines
    assert all(p.filename == __file__ for p in problems)
    assert problems[2].code == "x = x.masked_fill(mask, 0.0)  # marker: masked_fill"
    message = str(caught.value)
    assert message.startswith("cannot convert Unconvertible to tensor: 5 things to change")
    assert f"test_errors.py:{line_of('z = torch.tril(y)')}" in message
    assert "5. call_function torch.tril" in message


def test_hints_name_what_tensor_offers():
    with pytest.raises(ConversionError) as caught:
        torch_to_tensor(Unconvertible())
    hints = {p.what: p.hint for p in caught.value.problems}
    assert "tensor.where" in hints["call_method masked_fill"]
    assert "tanh" in hints["call_function torch.nn.functional.mish"]
    assert "buffer" in hints["call_function torch.tril"]
    assert "Conv2d" in hints["call_module conv1d (Conv1d)"]


def test_nearby_names_from_difflib_when_no_advice_is_written():
    class Typo(nn.Module):
        def forward(self, x):
            return torch.nn.functional.elu(x)

    with pytest.raises(ConversionError) as caught:
        torch_to_tensor(Typo())
    (problem,) = caught.value.problems
    assert problem.what == "call_function torch.nn.functional.elu"
    assert "tensor.nn.functional.relu" in problem.hint


class Settings(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3, padding=1, padding_mode="reflect")
        self.pool = nn.MaxPool2d(2, return_indices=True)
        self.avg = nn.AvgPool2d(2, divisor_override=3)

    def forward(self, x):
        values, _ = self.pool(self.conv(x))
        return self.avg(values), F.softmax(x, dim=1, dtype=torch.float64)


def test_settings_a_twin_cannot_take_are_refused_by_name():
    with pytest.raises(ConversionError) as caught:
        torch_to_tensor(Settings())
    reasons = {p.what: p.reason for p in caught.value.problems}
    assert "padding_mode" in reasons["call_module conv (Conv2d)"]
    assert "return_indices=True" in reasons["call_module pool (MaxPool2d)"]
    assert "divisor_override=3" in reasons["call_module avg (AvgPool2d)"]
    assert len(caught.value.problems) == 3  # dtype=torch.float64 converts


def test_an_unknown_keyword_is_refused_and_a_default_one_dropped():
    class Keywords(nn.Module):
        def forward(self, x):
            a = F.max_pool2d(x, 2, return_indices=False)  # torch's default: dropped
            return a, torch.arange(4, device=x.device)

    with pytest.raises(ConversionError) as caught:
        torch_to_tensor(Keywords())
    whats = [p.what for p in caught.value.problems]
    assert whats == ["attribute .device", "call_function tensor.arange"]
    assert "device=" in caught.value.problems[1].reason


def test_operators_on_tensors_are_checked_when_inputs_are_given():
    class Floor(nn.Module):
        def forward(self, x):
            half = x.shape[-1] // 2  # ints: Python's own //
            return x[..., :half] // 2  # a tensor: tensor has no //

    model = Floor()
    converted = torch_to_tensor(model)  # without inputs, nothing tells ints from tensors
    assert converted is not None
    with pytest.raises(ConversionError) as caught:
        torch_to_tensor(model, (torch.randn(2, 4),))
    (problem,) = caught.value.problems
    assert problem.what == "operator floordiv (__floordiv__)"
    assert problem.code == "return x[..., :half] // 2  # a tensor: tensor has no //"


def hooked():
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
    model[0].register_forward_hook(lambda module, args, out: out * 2)
    model.register_forward_pre_hook(lambda module, args: None)
    return model


def test_hooks_are_refused_on_leaves_and_on_traced_modules():
    with pytest.raises(ConversionError) as caught:
        torch_to_tensor(hooked())
    whats = [p.what for p in caught.value.problems]
    assert whats == ["the root module (Sequential)", "submodule 0 (Linear)"]
    assert "forward pre-hook" in caught.value.problems[0].reason
    assert "forward hook" in caught.value.problems[1].reason


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_weights_are_refused_with_what_tensor_supports(dtype):
    model = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4)).to(dtype)
    with pytest.raises(ConversionError) as caught:
        torch_to_tensor(model)
    message = str(caught.value)
    assert "parameter 0.weight" in message and str(dtype) in message
    assert "tensor computes on the CPU in float32 and float64" in message
    assert "model.float()" in message
    # every weight and buffer in the wrong dtype, listed at once
    assert len(caught.value.problems) == 6  # 2 + 2 parameters, 2 running statistics


def test_a_model_on_another_device_is_refused():
    # No CUDA here: the meta device stands in for it; the check is on .device.
    model = nn.Linear(4, 4, device="meta")
    with pytest.raises(ConversionError) as caught:
        torch_to_tensor(model)
    (weight, bias) = caught.value.problems
    assert "it is on meta" in weight.reason and "CPU" in weight.reason
    assert "model.cpu()" in weight.hint


def test_example_inputs_are_checked_too():
    with pytest.raises(ConversionError) as caught:
        torch_to_tensor(nn.Linear(4, 4), (torch.randn(2, 4, dtype=torch.float16),))
    (problem,) = caught.value.problems
    assert problem.what == "example input 0" and "float16" in problem.reason


def test_float64_models_convert():
    model = nn.Linear(4, 3).double()
    converted = torch_to_tensor(model)
    assert str(converted.weight.dtype) == "tensor.float64"


def test_not_a_torch_model():
    with pytest.raises(TypeError, match="torch.nn.Module or a function"):
        torch_to_tensor(42)


def test_user_line_reads_the_innermost_frame():
    trace = 'File "a.py", line 3, in f\n    g()\n  File "b.py", line 7, in g\n    x = y\n'
    assert user_line(trace) == ("b.py", 7, "x = y")
    assert user_line(None) == ("", 0, "")


def test_report_without_location():
    error = ConversionError("M", [Unsupported("parameter w", "bad dtype", "fix it")])
    assert str(error) == (
        "cannot convert M to tensor: 1 thing to change\n"
        "1. parameter w\n   bad dtype\n   instead: fix it")
