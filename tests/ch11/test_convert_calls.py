"""GraphConverter.call_function: which functions keep, which get a twin, which are problems.

A torch function with a twin is replaced; Python's own functions and helpers
that use no torch are kept; reading an attribute tensor lacks, or calling a
torch function with no twin, is a problem with a hint, whatever module the
helper was defined in (a script's functions live in ``__main__``).
"""

import pytest
import torch
import torch.fx

import tensor
from minifx.convert import ConversionError, torch_to_tensor
from minifx.convert.graph_pass import GAPS


def halve(v):
    return v / 2  # plain Python: runs on any library's values


def lower_triangle(v):
    return torch.tril(v)


lower_triangle.__module__ = "__main__"  # as if defined in the user's script
torch.fx.wrap("halve")
torch.fx.wrap("lower_triangle")


class Helpers(torch.nn.Module):
    def forward(self, x):
        return halve(x) + torch.relu(x)


class Problems(torch.nn.Module):
    def forward(self, x):
        y = lower_triangle(x) + torch.tril(x)
        return y * x.layout


def test_a_helper_that_uses_no_torch_is_kept_and_twins_replace_torch_functions():
    gm = torch_to_tensor(Helpers())
    targets = [n.target for n in gm.graph.nodes if n.op == "call_function"]
    assert halve in targets and tensor.relu in targets and torch.relu not in targets
    x = torch.randn(3, 4)
    expected = Helpers()(x)
    ours = gm(tensor.tensor(x.numpy()))
    torch.testing.assert_close(torch.from_numpy(ours.numpy()), expected)


def test_torch_functions_without_twin_and_missing_attributes_are_problems_with_hints():
    with pytest.raises(ConversionError) as caught:
        torch_to_tensor(Problems())
    problems = caught.value.problems
    assert [p.what for p in problems] == [
        "call_function lower_triangle", "call_function torch.tril", "attribute .layout"]
    assert problems[0].reason == problems[1].reason == "tensor has no twin of it"
    assert problems[2].reason == "tensor.Tensor has no attribute 'layout'"
    assert problems[1].hint == GAPS["tril"]  # advice, looked up by the last part of the name
