"""Reductions over the last dim fused with their elementwise prologue and
epilogue (minifx/compiler/rows.py): softmax and layer_norm written from
primitives become one row kernel, and every result is the eager one."""

import math

import numpy as np
import pytest
import torch

import minifx
import tensor
import tensor.nn as nn
from minifx.compiler import rows
from minifx.compiler.rows import RowKernel


def softmax(x):
    m = x.amax(-1, keepdim=True)
    e = (x - m).exp()
    return e / e.sum(-1, keepdim=True)


def layer_norm(x, w, b):
    mu = x.mean(-1, keepdim=True)
    var = ((x - mu) ** 2).mean(-1, keepdim=True)
    return (x - mu) / tensor.sqrt(var + 1e-5) * w + b


def fused(compiled):
    (gm,) = compiled.cache.values()
    return [n for n in gm.graph.nodes if "fused" in n.meta]


def check(fn, *inputs, **tolerance):
    compiled = minifx.compile(fn, backend="numba")
    for _ in range(2):  # the second call runs the cached kernel
        got, want = compiled(*inputs), fn(*inputs)
        if isinstance(got, tuple):
            for g, w in zip(got, want):
                tensor.testing.assert_close(g, w, equal_nan=True, **tolerance)
        else:
            tensor.testing.assert_close(got, want, equal_nan=True, **tolerance)
    return compiled


@pytest.mark.parametrize("shape", [(7, 33), (2, 5, 64), (300,), (3, 1, 2)])
def test_softmax_from_primitives_is_one_row_kernel(shape):
    x = tensor.randn(*shape) * 3
    compiled = check(softmax, x)
    (node,) = fused(compiled)
    assert isinstance(node.target, RowKernel)
    assert node.meta["fused"] == ["amax", "sub", "exp", "sum_1", "truediv"]
    source = node.target.source
    assert "rd.row_amax(x[r])" in source and "exp_row[j] = exp" in source
    assert source.count("scalar.exp") == 1  # the epilogue reads exp back from its row


@pytest.mark.parametrize("shape", [(4, 16), (2, 3, 48)])
def test_layer_norm_from_primitives_with_weight_and_bias(shape):
    x = tensor.randn(*shape) * 2 + 1
    w, b = tensor.randn(shape[-1]), tensor.randn(shape[-1])
    compiled = check(layer_norm, x, w, b)
    (node,) = fused(compiled)
    assert isinstance(node.target, RowKernel)
    assert node.target.layouts == ["full", "col", "col"]  # x per element; w, b one row for all
    assert len(node.meta["fused"]) == 10


def test_float64_and_constants_keep_their_dtype():
    x = tensor.randn(5, 40, dtype=tensor.float64)
    compiled = check(lambda x: softmax(x) * 0.5 + x.sum(-1, keepdim=True), x)
    (node,) = fused(compiled)
    assert "np.float64(0.5)" in node.target.source
    assert compiled(x).dtype == tensor.float64


def test_nan_in_a_row_gives_nan_as_eager():
    x = tensor.randn(6, 20)
    x[2, 5] = float("nan")
    x[4, 0] = float("inf")
    got = minifx.compile(softmax, backend="numba")(x)
    tensor.testing.assert_close(got, softmax(x), equal_nan=True)
    assert np.isnan(got.numpy()[2]).all()


def test_a_per_row_result_and_shared_values():
    def stats(x):
        mu = x.mean(-1, keepdim=True)  # returned and read again: ends its group
        var = ((x - mu) ** 2).sum(-1, keepdim=True) / 30.0
        return mu, tensor.sqrt(var) * 2.0

    x = tensor.randn(9, 31)
    compiled = check(stats, x)
    nodes = fused(compiled)
    assert [n.meta["fused"] for n in nodes] == [["sub", "pow_1", "sum_1", "truediv", "sqrt",
                                                 "mul"]]
    assert nodes[0].target.out_shape == (9, 1)
    assert "out[r] = mul" in nodes[0].target.source


def test_broadcast_inputs_per_row_per_column_and_materialised():
    def f(x, row, col, other, scalar):
        m = (x * row + col).amax(-1, keepdim=True)
        return (x - m) * other + scalar

    x = tensor.randn(2, 3, 10)
    row, col = tensor.randn(2, 3, 1), tensor.randn(10)
    other, scalar = tensor.randn(2, 1, 10), tensor.randn(1)
    compiled = check(f, x, row, col, other, scalar)
    (node,) = fused(compiled)
    assert node.target.layouts == ["full", "row", "col", "full", "row"]


def test_other_reductions_are_left_alone():
    def f(x):
        a = x.sum(0, keepdim=True)  # not the last dim
        b = x.amax(-1)  # the dim not kept
        c = x.mean(-1, keepdim=True, dtype=tensor.float64)  # a dtype change
        return a * 2.0 + 1.0, b * 2.0 + 1.0, c * 2.0 + 1.0

    x = tensor.randn(4, 6)
    compiled = check(f, x)
    assert all(not isinstance(n.target, RowKernel) for n in fused(compiled))


def per_row_stats(x, row):
    return (x * row).amax(-1, keepdim=True) + row  # a per-row output, a per-row input


def broadcasts(x, row, col, other, scalar):
    m = (x * row + col).amax(-1, keepdim=True)
    return (x - m) * other + scalar


ROW_CASES = {  # function, input shapes, whether its kernel is a task (at most 3 inputs)
    "softmax": (softmax, [(1200, 700)], True),
    "layer_norm, two shared rows": (layer_norm, [(1200, 700), (700,), (700,)], True),
    "per-row output": (per_row_stats, [(1200, 700), (1200, 1)], True),
    "five inputs": (broadcasts, [(30, 40, 700), (30, 40, 1), (700,), (30, 1, 700), (1,)], False),
}


@pytest.mark.parametrize("case", ROW_CASES)
def test_rows_shared_with_the_workers_give_the_one_thread_result(case, monkeypatch):
    """From SPIN_MIN copies a row kernel of up to three inputs runs as a task of
    the polling workers (``rows.row_task``: each array rebuilt at its address
    for the task's rows); with more it hands rows to the worker threads (``in_ranges``). A row is
    computed the same way on any thread, so the result equals, to the bit,
    that of the kernel run on one thread, and is eager's."""
    fn, shapes, as_task = ROW_CASES[case]
    inputs = [tensor.randn(*shape) for shape in shapes]
    backend = rows.threads
    spread, shared = backend.spread, []
    monkeypatch.setattr(backend, "spread", lambda *a, **k: (shared.append(a[1]),
                                                             spread(*a, **k)))
    compiled = check(fn, *inputs)
    (node,) = fused(compiled)
    assert isinstance(node.target, RowKernel)
    rows_of_x = math.prod(shapes[0][:-1])
    shared.clear()
    together = [compiled(*inputs).numpy() for _ in range(5)]  # later calls find it polling
    assert shared == ([rows_of_x] * 5 if as_task else [])
    monkeypatch.setattr(rows.settings, "SPIN_MIN", 1 << 60)  # one thread
    alone = compiled(*inputs).numpy()
    for result in together:
        np.testing.assert_array_equal(result, alone)


def test_layer_norm_after_linear_writes_into_its_output():
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(16, 32)
            self.w, self.b = nn.Parameter(tensor.randn(32)), nn.Parameter(tensor.randn(32))

        def forward(self, x):
            return layer_norm(self.lin(x), self.w, self.b).relu()

    model = Block()
    compiled = check(model, tensor.randn(8, 16))
    (node,) = fused(compiled)
    assert node.meta["writes_into"] == "lin"
    assert node.meta["fused"][-1] == "relu"


def test_torch_spellings():
    def f(x, w):
        m = torch.amax(x, dim=-1, keepdim=True)
        e = torch.exp(x - m)
        s = torch.sum(e, dim=(-1,), keepdim=True)
        return torch.nn.functional.relu(e / s * w - 0.01)

    x, w = torch.randn(10, 50), torch.randn(50)
    compiled = minifx.compile(f, backend="numba")
    torch.testing.assert_close(compiled(x, w), f(x, w))
    (node,) = fused(compiled)
    assert isinstance(node.target, RowKernel)


def test_each_loop_over_a_row_is_a_function_called_per_row():
    x = tensor.randn(6, 40)
    w, b = tensor.randn(40), tensor.randn(40)
    compiled = check(layer_norm, x, w, b)
    (node,) = fused(compiled)
    source = node.target.source
    assert "def pow_1_loop(pow_1_row, x, mean):" in source  # x: one row of x
    assert "pow_1_loop(pow_1_row, x[r], mean)" in source
    # the epilogue gets the row of x, two per-row numbers and the whole of w and b
    assert "def add_1_loop(out, x, mean, sqrt, w, b):" in source
    assert "add_1_loop(out[r], x[r], mean, sqrt, w, b)" in source
    kernel = node.target.kernel
    assert kernel.py_func.__globals__["add_1_loop"].py_func.__name__ == "add_1_loop"


def test_work_counts_what_runs_per_element_not_per_row():
    from minifx.compiler.kernel import EXTRA_WORK

    x = tensor.randn(5, 30)
    w, b = tensor.randn(30), tensor.randn(30)
    (node,) = fused(check(layer_norm, x, w, b))
    # two means and a division per element; the sqrt is one number per row
    assert node.target.work == pytest.approx(1.0 + 2 * EXTRA_WORK["mean"] + EXTRA_WORK["div"])
    (node,) = fused(check(softmax, x))
    assert node.target.work == pytest.approx(
        1.0 + sum(EXTRA_WORK[op] for op in ("amax", "exp", "sum", "div")))
