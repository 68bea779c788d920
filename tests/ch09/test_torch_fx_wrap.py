"""Functions registered with ``torch.fx.wrap`` are recorded whole, as torch.fx records them.

Library code registers its helpers with torch.fx's own ``wrap`` (torchvision's
``stochastic_depth``, swin's window attention), often because their bodies
branch on values. A trace of a torch root reads that registry beside
minifx's, so each call is one ``call_function`` node with torch.fx's name,
target and code; only the ``wrap(...)`` line above ``forward`` names each
library's own ``wrap`` (chapter 9's known difference).
"""

import pytest
import torch
import torch.fx
from torch import nn

import minifx
import tensor
from minifx._framework import adapter
from minifx.compare import diff_rows, output_difference
from minifx.proxy import TraceError
from minifx.wrapping import _wrapped_fns_to_patch


def clipped(x, limit):
    """Branches on a value: a trace that went into it would fail."""
    norm = x.norm()
    if norm > limit:
        return x * (limit / norm)
    return x


torch.fx.wrap("clipped")


@torch.fx.wrap
def halved(x):
    return x / 2


def doubled(x):
    return x * 2


torch.fx.wrap("doubled")
minifx.wrap("doubled")  # in both registries: still patched once


class UsesWrapped(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 4)

    def forward(self, x):
        return halved(clipped(self.linear(x), 1.0)) + clipped(x, limit=2.0)


def uses_wrapped(x):
    return torch.relu(doubled(clipped(x, 0.5)))


def only_known_differences(ours, theirs):
    """The rows where the two texts differ other than by a documented line."""
    return [row for row in diff_rows(ours, theirs) if row.mark not in " ~"]


def traced_both(root):
    return minifx.symbolic_trace(root), torch.fx.symbolic_trace(root)


def test_a_wrapped_function_is_one_node_with_torch_fx_s_graph():
    ours, theirs = traced_both(UsesWrapped())
    assert str(ours.graph) == str(theirs.graph)
    calls = [n for n in ours.graph.nodes if n.op == "call_function"]
    assert [n.target for n in calls][:3] == [clipped, halved, clipped]
    assert all(n.meta["is_wrapped"] for n in calls[:3])
    assert calls[2].kwargs == {"limit": 2.0}


def test_the_code_is_torch_fx_s_but_for_the_wrap_lines():
    ours, theirs = traced_both(UsesWrapped())
    assert ours.code.split("def forward")[1] == theirs.code.split("def forward")[1]
    ours_wraps = [line for line in ours.code.splitlines() if "wrap(" in line]
    theirs_wraps = [line for line in theirs.code.splitlines() if "wrap(" in line]
    names = [f'("{__name__.replace(".", "_")}_{fn}")' for fn in ("clipped", "halved")]
    assert ours_wraps == [f"wrap{name}" for name in names]
    assert theirs_wraps == [f"torch.fx._symbolic_trace.wrap{name}" for name in names]
    assert only_known_differences(ours.code, theirs.code) == []


def test_outputs_agree_on_both_sides_of_the_branch():
    model = UsesWrapped()
    ours, theirs = traced_both(model)
    for scale in (0.01, 100.0):  # inside and beyond both limits
        x = torch.randn(3, 4) * scale
        assert output_difference(ours(x), model(x)) is None
        assert output_difference(ours(x), theirs(x)) is None


def test_a_function_root_records_it_too():
    ours, theirs = traced_both(uses_wrapped)
    assert str(ours.graph) == str(theirs.graph)
    assert only_known_differences(ours.code, theirs.code) == []
    x = torch.randn(5) * 10
    torch.testing.assert_close(ours(x), uses_wrapped(x))


def test_a_function_in_both_registries_is_recorded_as_itself():
    ours = minifx.symbolic_trace(uses_wrapped)
    assert [n.target for n in ours.graph.nodes if n.op == "call_function"][:2] == [
        clipped, doubled]


def test_tracing_the_generated_code_again_keeps_it_one_node():
    again = minifx.symbolic_trace(minifx.symbolic_trace(UsesWrapped()))
    targets = [n.target for n in again.graph.nodes if n.op == "call_function"]
    assert targets[:3] == [clipped, halved, clipped]


def test_the_globals_are_put_back_after_the_trace():
    minifx.symbolic_trace(UsesWrapped())
    assert globals()["clipped"] is clipped and clipped.__name__ == "clipped"
    assert clipped(torch.full((4,), 10.0), 1.0).norm().item() < 1.0 + 1e-6


def test_torch_fx_s_registry_is_read_by_the_torch_adapter_only():
    """torch.fx.wrap writes torch.fx's registry, not minifx's: the torch adapter
    reads it for a torch root, and a ``tensor`` root's trace never sees it."""
    assert adapter("torch").wrapped_functions() is torch.fx._symbolic_trace._wrapped_fns_to_patch
    assert adapter("tensor").wrapped_functions() == {}
    assert (id(globals()), "clipped") in adapter("torch").wrapped_functions()
    assert (id(globals()), "clipped") not in _wrapped_fns_to_patch

    class TensorModel(tensor.nn.Module):
        def forward(self, x):
            return clipped(x, 1.0)

    with pytest.raises(TraceError, match="control flow"):  # traced into: the branch stops it
        minifx.symbolic_trace(TensorModel())
