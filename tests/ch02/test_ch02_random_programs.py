"""Chapter 2: random programs of tensor ops, traced, regenerated and run.

Each program is a list of steps; a step applies one op to two earlier
values. The same program is traced with minifx on `tensor` and with torch.fx
on `torch`: the graphs must print the same (with `torch` read as `tensor`),
and the GraphModule must compute what the program computes eagerly.
"""

import numpy as np
import torch
import torch.fx
from hypothesis import given, settings
from hypothesis import strategies as st

import minifx
import tensor

# Every op keeps the (4, 4) shape, so any step can follow any other.
OPS = {
    "add": lambda L, a, b: a + b,
    "sub_scalar": lambda L, a, b: 1.5 - a,
    "mul": lambda L, a, b: a * b,
    "matmul": lambda L, a, b: a @ b,
    "neg": lambda L, a, b: -a,
    "sigmoid": lambda L, a, b: L.sigmoid(a),
    "tanh_method": lambda L, a, b: a.tanh(),
    "relu": lambda L, a, b: L.relu(a),
    "abs": lambda L, a, b: a.abs(),
    "clamp": lambda L, a, b: a.clamp(min=-1.0, max=1.0),
    "where": lambda L, a, b: L.where(a > b, a, b),
    "row_sum": lambda L, a, b: a.sum(dim=1, keepdim=True) + b,
    "transpose": lambda L, a, b: a.t(),
    "softmax": lambda L, a, b: L.softmax(a, dim=-1),
    "index": lambda L, a, b: a[0] * b,
}

steps = st.lists(
    st.tuples(st.sampled_from(sorted(OPS)), st.integers(0, 20), st.integers(0, 20)),
    min_size=1, max_size=8,
)


def make_program(lib, plan):
    def program(x, y):
        values = [x, y]
        for name, i, j in plan:  # unrolled by the trace
            values.append(OPS[name](lib, values[i % len(values)], values[j % len(values)]))
        return values[-1]

    return program


@settings(deadline=None, max_examples=40)
@given(plan=steps, seed=st.integers(0, 2**16))
def test_random_program_traces_like_torch_fx_and_runs_like_eager(plan, seed):
    program = make_program(tensor, plan)
    gm = minifx.symbolic_trace(program)
    gm.graph.lint()

    theirs = torch.fx.symbolic_trace(make_program(torch, plan))
    assert str(gm.graph) == str(theirs.graph).replace("torch", "tensor")
    assert gm.code == theirs.code.replace("torch", "tensor")

    rng = np.random.default_rng(seed)
    x = tensor.from_numpy(rng.standard_normal((4, 4)).astype(np.float32))
    y = tensor.from_numpy(rng.standard_normal((4, 4)).astype(np.float32))
    tensor.testing.assert_close(gm(x, y), program(x, y))
    expected = theirs(torch.from_numpy(x.numpy().copy()), torch.from_numpy(y.numpy().copy()))
    np.testing.assert_allclose(gm(x, y).numpy(), expected.numpy(), rtol=1e-4, atol=1e-5)
