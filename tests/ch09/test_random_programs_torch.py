"""The random-program generator (tests/generators.py) on torch, through the adapter.

Each program is built twice from the same plan and the same numbers: on
`tensor` and on torch. The torch module goes through every path of minifx
(as the `tensor` one does in chapter 8), torch.fx traces it too and must
print the same graph and the same code, and the `tensor` module must compute
what the torch module computes.
"""

import numpy as np
import torch
import torch.fx
from hypothesis import HealthCheck, given, settings

import tensor
from tests.generators import as_numpy, build, check_all_paths, leaves, plans

# Where minifx's text must name its own library: the functions a trace records
# for concrete_args and the `wrap` line above forward (tests/ch09/test_known_differences.py).
KNOWN = [("minifx.tracer._assert_is_none", "torch.fx._symbolic_trace._assert_is_none"),
         ("minifx_tracer__assert_is_none", "torch.fx._symbolic_trace._assert_is_none"),
         ('\nwrap("', '\ntorch.fx._symbolic_trace.wrap("')]


def spelled_as_torch_fx(text):
    for ours, theirs in KNOWN:
        text = text.replace(ours, theirs)
    return text


# 30 programs: most of their time is numba compiling their fused kernels, which a new
# process does again (chapter 8 keeps them in memory); chapter 8 runs 60 on `tensor`.
@settings(deadline=None, max_examples=30, suppress_health_check=[HealthCheck.too_slow])
@given(plan=plans())
def test_random_torch_programs_agree_with_torch_fx_and_every_path(plan):
    model, args, concrete = build(plan, torch)
    model.eval()
    ours = check_all_paths(model, args, concrete)
    theirs = torch.fx.symbolic_trace(model, concrete_args=concrete)
    assert spelled_as_torch_fx(str(ours.graph)) == str(theirs.graph)
    assert spelled_as_torch_fx(ours.code) == theirs.code
    expected = model(*args)
    for got, want in zip(leaves(theirs(*args)), leaves(expected)):
        torch.testing.assert_close(got, want)

    twin, twin_args, _ = build(plan, tensor)  # the same program and numbers on `tensor`
    for got, want in zip(leaves(twin(*twin_args)), leaves(expected)):
        np.testing.assert_allclose(as_numpy(got), as_numpy(want), rtol=1e-4, atol=1e-5)
