"""Tracing a GraphModule again gives the same graph (SPEC section 5), as in torch.fx.

Two things in generated code used to be traced *through* on a retrace: the
run-time checks that ``concrete_args`` records, and functions registered with
``minifx.wrap`` (by name or as a decorator). Both now record themselves again.
"""

import pytest
import torch
import torch.fx

import minifx
import tensor
from minifx.experimental.optimization import fuse
from tests.ch02.ch02_wrap_registry import registered


def decorated_scale(x, k):
    return x * (2.0 if k > 0 else 3.0)  # control flow: traced through, it would fail


def named_scale(x, k):
    return x * (2.0 if k > 0 else 3.0)


@pytest.fixture(autouse=True, scope="module")
def _registered_with_minifx_wrap():
    # minifx.wrap as this module's code, undone when its tests end (ch02_wrap_registry).
    yield from registered(globals(), "\n".join([
        'minifx.wrap(decorated_scale)',
        'minifx.wrap("named_scale")',
        'minifx.wrap("torch_scale")',
    ]))


def branchy(x, flag, bias=None):
    y = x + 1 if flag else x - 1
    return y if bias is None else y + bias


def uses_wrapped(x):
    return decorated_scale(x, 1) + named_scale(x, -1)


def placeholders_first(graph):
    """The graph's lines with its placeholders moved to the top: a retrace makes every
    placeholder first, while ``concrete_args`` puts a check after each specialised one."""
    lines = str(graph).splitlines()
    return [line for line in lines if "placeholder[" in line] + [
        line for line in lines if "placeholder[" not in line]


def assert_retrace_is_identical(gm):
    again = minifx.symbolic_trace(gm)
    again.graph.lint()
    assert placeholders_first(again.graph) == placeholders_first(gm.graph)
    assert again.code == gm.code
    return again


def test_retrace_after_concrete_args_gives_the_same_graph_as_torch_fx():
    gm = minifx.symbolic_trace(lambda x, flag: x + 1 if flag else x, concrete_args={"flag": 1})
    assert str(minifx.symbolic_trace(gm).graph) == str(gm.graph)  # the last one: the very graph
    gm = minifx.symbolic_trace(branchy, concrete_args={"flag": True, "bias": None})
    again = assert_retrace_is_identical(gm)
    x = tensor.randn(3)
    tensor.testing.assert_close(again(x, True, None), x + 1)
    with pytest.raises(AssertionError, match="flag has been specialized to have value True"):
        again(x, False, None)
    with pytest.raises(AssertionError, match="bias has been specialized to have value None"):
        again(x, True, x)
    # torch.fx does the same, placeholders moved first included; its checks are its own.
    # (Not with a None: torch.fx's retrace then registers a wrap of a dotted name that
    # makes every later torch.fx trace in the process fail with a KeyError.)
    gm = minifx.symbolic_trace(branchy, concrete_args={"flag": True})
    theirs = torch.fx.symbolic_trace(branchy, concrete_args={"flag": True})
    again, theirs_again = assert_retrace_is_identical(gm), torch.fx.symbolic_trace(theirs)
    for mine, its in ((gm, theirs), (again, theirs_again)):
        assert str(mine.graph).replace("minifx.tracer._assert", "torch._assert") == str(
            its.graph)


def test_fuse_works_on_what_compile_traced_with_a_constant_argument():
    gm = minifx.symbolic_trace(branchy, concrete_args={"flag": False, "bias": None})
    fused = fuse(gm)  # fuse traces its input again
    assert fused.code == gm.code
    x = tensor.randn(2)
    tensor.testing.assert_close(fused(x, False), x - 1)


def test_wrapped_functions_stay_leaves_on_a_retrace():
    gm = minifx.symbolic_trace(uses_wrapped)
    targets = [n.target for n in gm.graph.nodes if n.op == "call_function"]
    assert decorated_scale in targets and named_scale in targets
    assert all(n.meta.get("is_wrapped") for n in gm.graph.nodes
               if n.target in (decorated_scale, named_scale))
    again = assert_retrace_is_identical(gm)
    third = assert_retrace_is_identical(again)
    x = tensor.randn(4)
    tensor.testing.assert_close(third(x), uses_wrapped(x))


def torch_scale(x, k):
    return x * (2.0 if k > 0 else 3.0)


torch.fx.wrap("torch_scale")


def torch_uses_wrapped(x):
    return torch_scale(x, 1)


def test_generated_wrap_line_is_torch_fx_s_with_minifx_s_function():
    ours = minifx.symbolic_trace(torch_uses_wrapped)
    theirs = torch.fx.symbolic_trace(torch_uses_wrapped)
    assert str(ours.graph) == str(theirs.graph)
    # torch.fx writes `torch.fx._symbolic_trace.wrap("...")` above forward; minifx
    # binds its own wrap as the global `wrap`: the only difference.
    assert ours.code.replace('\nwrap("', '\ntorch.fx._symbolic_trace.wrap("') == theirs.code
    assert str(minifx.symbolic_trace(ours).graph) == str(ours.graph)


def test_a_no_op_transformer_keeps_wrapped_calls_wrapped():
    # Found by the random-program generator: the Transformer's new nodes lost
    # `is_wrapped`, so the new code had no `wrap` line and a retrace traced through.
    gm = minifx.symbolic_trace(uses_wrapped)
    transformed = minifx.Transformer(gm).transform()
    assert transformed.code == gm.code
    assert_retrace_is_identical(transformed)
