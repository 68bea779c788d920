"""Where minifx's text cannot be torch.fx's: the name of the library itself.

A function that torch.fx defines and records (``_assert_is_none``, the
``wrap`` call in front of code that uses an auto-wrapped ``math`` function) is
minifx's own function here, so its dotted path says ``minifx`` where torch.fx's
says ``torch.fx``. These tests pin down that this is the only difference.
"""

import math

import pytest
import torch
import torch.fx

import minifx


def maybe_add(x, y=None):
    return x if y is None else x + y


def test_none_in_concrete_args_differs_only_by_the_checks_module():
    ours = minifx.symbolic_trace(maybe_add, concrete_args={"y": None})
    theirs = torch.fx.symbolic_trace(maybe_add, concrete_args={"y": None})
    assert str(ours.graph).replace("minifx.tracer", "torch.fx._symbolic_trace") == str(
        theirs.graph
    )
    # torch.fx spells its own functions by path; minifx binds its function as a global.
    spelled = ours.code.replace("minifx_tracer__assert", "torch.fx._symbolic_trace._assert")
    assert spelled == theirs.code
    x = torch.randn(3)
    torch.testing.assert_close(ours(x), x)
    with pytest.raises(AssertionError, match="specialized to have value None"):
        ours(x, x)


def scaled(x):
    return x / math.sqrt(x.size(-1))


def test_math_functions_are_recorded_as_torch_fx_records_them():
    ours = minifx.symbolic_trace(scaled)
    theirs = torch.fx.symbolic_trace(scaled)
    assert str(ours.graph) == str(theirs.graph)
    # torch.fx puts `torch.fx._symbolic_trace.wrap("math_sqrt")` above forward, so
    # that tracing the generated code again keeps math.sqrt a leaf; the body is the same.
    assert ours.code.split("def forward")[1] == theirs.code.split("def forward")[1]
    x = torch.randn(2, 4)
    torch.testing.assert_close(ours(x), x / 2)
