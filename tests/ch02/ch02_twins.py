"""Trace the same program in minifx (on `tensor`) and in torch.fx (on `torch`).

A twin is a function `build(lib)` that returns a module or function written
against `lib`, so one source serves both libraries. `assert_same_trace`
checks that minifx's graph text and generated code equal torch.fx's with
`torch` read as `tensor`.
"""

import torch
import torch.fx

import minifx
import tensor


def assert_same_trace(build, concrete_args=None):
    """Trace `build(tensor)` with minifx and `build(torch)` with torch.fx; compare."""
    ours = minifx.symbolic_trace(build(tensor), concrete_args=concrete_args)
    theirs = torch.fx.symbolic_trace(build(torch), concrete_args=concrete_args)
    ours.graph.lint()
    expected_graph = str(theirs.graph).replace("torch", "tensor")
    assert str(ours.graph) == expected_graph
    assert ours.code == theirs.code.replace("torch", "tensor")
    return ours, theirs
