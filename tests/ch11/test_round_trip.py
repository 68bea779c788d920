"""check_conversion: convert, run both, and a verdict that can be trusted (what
``compare --convert`` prints); and the chapter 9 zoo through the converter."""


import pytest
import torch
from torch import nn

from minifx.convert import ConversionError, check_conversion, torch_to_tensor
from minifx.convert.round_trip import output_difference
from tests.ch09.zoo import ZOO as CH09_ZOO
from tests.ch11.ch11_models import ZOO


def test_agreement_is_reported():
    model, inputs = ZOO["mlp"]()
    report = check_conversion(model, inputs)
    assert report.agree and report.converted is not None
    assert report.max_difference is not None and report.max_difference < 1e-5
    lines = str(report).splitlines()
    assert lines[0] == "== conversion to tensor: same =="
    assert lines[1] == "converted MLP: 9 nodes (4 call_module, 3 call_function)"
    assert lines[-1] == "the tensor model agrees with torch"


def test_the_users_model_is_left_as_it_was():
    model, inputs = ZOO["small_cnn"]()
    model.train()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    assert check_conversion(model, inputs).agree
    for key, value in model.state_dict().items():
        assert torch.equal(value, before[key]), key
    assert not any(name.startswith("_tensor_constant") for name, _ in model.named_buffers())


def test_a_difference_is_reported():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.5))  # training: random masks differ
    report = check_conversion(model, (torch.randn(4, 8),))
    assert not report.agree
    assert "DIFFERENT" in report.text.splitlines()[0]
    assert "elements differ by more than allowed" in report.text
    assert report.text.splitlines()[-1] == "the tensor model DIFFERS from torch"


def test_a_conversion_error_is_the_report():
    class Mish(nn.Module):
        def forward(self, x):
            return torch.nn.functional.mish(x)

    report = check_conversion(Mish(), (torch.randn(2),))
    assert not report.agree and report.converted is None
    assert report.text.splitlines()[0] == "== conversion to tensor: FAILED =="
    assert "call_function torch.nn.functional.mish" in report.text


def test_output_difference_walks_structures():
    import tensor

    ours = (tensor.ones(2), {"a": 3})
    assert output_difference(ours, (torch.ones(2), {"a": 3}))[0] is None
    problem, _ = output_difference(ours, (torch.zeros(2), {"a": 3}))
    assert problem.startswith("output[0]: 2 of 2 elements differ")
    assert "shape [2] instead of [3]" in output_difference(tensor.ones(2), torch.ones(3))[0]
    assert "dtype" in output_difference(tensor.ones(2), torch.ones(2, dtype=torch.float64))[0]
    inf = torch.tensor([float("-inf"), 1.0])
    assert output_difference(tensor.tensor([float("-inf"), 1.0]), inf)[0] is None


@pytest.mark.parametrize("name", sorted(CH09_ZOO))
def test_chapter_9_zoo_converts_or_is_refused_never_silently_wrong(name):
    """Each of chapter 9's models either converts and agrees with torch, or is
    refused by a ConversionError that names what to change."""
    root, inputs = CH09_ZOO[name]()
    try:
        torch_to_tensor(root, inputs)
    except ConversionError as exc:
        assert exc.problems and all(p.reason for p in exc.problems)
        assert all(p.lineno > 0 for p in exc.problems if p.filename)
        return
    report = check_conversion(root, inputs)
    assert report.agree, report.text


def test_most_of_chapter_9_zoo_converts():
    converted = 0
    for build in CH09_ZOO.values():
        root, inputs = build()
        try:
            torch_to_tensor(root, inputs)
            converted += 1
        except ConversionError:
            pass
    assert converted >= len(CH09_ZOO) - 10
