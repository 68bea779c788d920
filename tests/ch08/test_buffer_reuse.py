"""Buffer planning in the numba backend: a fused group writes its result into
an intermediate that dies there (a conv's output), never into the caller's
inputs, and the results stay those of eager execution."""

import numpy as np
import torch

import minifx
import tensor
import tensor.nn as nn


class ConvAct(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.flat = nn.Flatten()

    def forward(self, x, scale):
        y = self.conv(x)
        z = tensor.relu(y) * 2.0 + scale  # bias-like epilogue after the conv
        f = self.flat(x)  # a view of the input: never reused
        return z, tensor.sigmoid(f) * 3.0 - 1.0


def fused_nodes(compiled):
    (gm,) = compiled.cache.values()
    return {n.name: n for n in gm.graph.nodes if "fused" in n.meta}


def test_epilogue_after_conv_writes_into_the_conv_output():
    model = ConvAct()
    x = tensor.randn(2, 3, 40, 40)
    scale = tensor.randn(8, 1, 1).expand(8, 40, 40).contiguous()
    x_before = x.numpy().copy()
    compiled = minifx.compile(model, backend="numba")
    for _ in range(3):  # the first call compiles; later calls reuse buffers
        z, w = compiled(x, scale)
        ez, ew = model(x, scale)
        tensor.testing.assert_close(z, ez)
        tensor.testing.assert_close(w, ew)
    np.testing.assert_array_equal(x.numpy(), x_before)  # the caller's input is untouched
    writes = {name: n.meta.get("writes_into") for name, n in fused_nodes(compiled).items()}
    assert sorted(writes.values(), key=str) == [None, "conv"]


def test_a_reusing_kernel_allocates_nothing(monkeypatch):
    from minifx.compiler import kernel

    model = ConvAct()
    x, scale = tensor.randn(1, 3, 20, 20), tensor.randn(8, 20, 20)
    compiled = minifx.compile(model, backend="numba")
    compiled(x, scale)
    calls = []
    real = kernel._output
    monkeypatch.setattr(kernel, "_output", lambda *a: calls.append(a) or real(*a))
    compiled(x, scale)
    assert len(calls) == 1  # the sigmoid group on the flattened input; the conv's epilogue none


def test_inputs_and_shared_values_are_never_reused():
    def f(x, y):
        a = tensor.matmul(x, y)  # fresh, but also returned: read outside the group
        return tensor.tanh(a) * 2.0 + 1.0, a

    x, y = tensor.randn(30, 20), tensor.randn(20, 30)
    compiled = minifx.compile(f, backend="numba")
    out, a = compiled(x, y)
    tensor.testing.assert_close(a, tensor.matmul(x, y))
    tensor.testing.assert_close(out, tensor.tanh(a) * 2.0 + 1.0)
    assert [n.meta.get("writes_into") for n in fused_nodes(compiled).values()] == [None]


def test_torch_linear_epilogue_in_place():
    lin = torch.nn.Linear(16, 32)

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = lin

        def forward(self, x):
            return torch.sigmoid(self.lin(x)) * 2.0 - 1.0

    model = M()
    x = torch.randn(64, 16)
    compiled = minifx.compile(model, backend="numba")
    with torch.no_grad():
        for _ in range(2):
            torch.testing.assert_close(compiled(x), model(x))
    assert [n.meta.get("writes_into") for n in fused_nodes(compiled).values()] == ["lin"]


def test_a_kernel_takes_the_buffer_of_an_intermediate_that_died_before_it(monkeypatch):
    from minifx.compiler import kernel

    def f(x, w):
        h = tensor.matmul(x, w)  # fresh, read only by the next matmul: dead after it
        z = tensor.matmul(h, w)
        return tensor.sigmoid(x) * 2.0 + z.sum()  # reads an input and a 0-d value

    x, w = tensor.randn(40, 40), tensor.randn(40, 40)
    compiled = minifx.compile(f, backend="numba")
    for _ in range(2):
        # (z.sum() adds up 1,600 values: one rounding of the fused kernel moves it an ulp)
        tensor.testing.assert_close(compiled(x, w), f(x, w), rtol=1e-5, atol=1e-5)
    (node,) = fused_nodes(compiled).values()
    assert node.meta["writes_into"] == "matmul"
    assert node.target.reads == 2 and node.args[-1].name == "matmul"
    (gm,) = compiled.cache.values()
    assert "matmul = None" not in gm.code.split("matmul_1 = ")[1].split("\n")[0]
    calls = []
    real = kernel._output
    monkeypatch.setattr(kernel, "_output", lambda *a: calls.append(a) or real(*a))
    compiled(x, w)
    assert calls == []


def test_a_buffer_still_holding_a_value_is_not_taken():
    def f(x, w):
        h = tensor.matmul(x, w)
        g = tensor.tanh(h) * 2.0  # writes into h: h's memory now holds g
        z = tensor.matmul(g, w)
        return tensor.sigmoid(x) * 2.0 + z.sum(), g

    x, w = tensor.randn(30, 30), tensor.randn(30, 30)
    compiled = minifx.compile(f, backend="numba")
    out, g = compiled(x, w)
    want, want_g = f(x, w)
    tensor.testing.assert_close(out, want, rtol=1e-5, atol=1e-5)  # a sum of 900 values
    tensor.testing.assert_close(g, want_g)
    writes = [n.meta.get("writes_into") for n in fused_nodes(compiled).values()]
    assert writes == ["matmul", None]


def test_a_lone_activation_after_a_conv_runs_in_place():
    class ConvReLU(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 8, 3, padding=1)

        def forward(self, x):
            return tensor.relu(self.conv(x)), tensor.relu(x)  # the input's relu: left alone

    model = ConvReLU()
    x = tensor.randn(1, 3, 12, 12)
    compiled = minifx.compile(model, backend="numba")
    for _ in range(2):
        for got, want in zip(compiled(x), model(x)):
            tensor.testing.assert_close(got, want)
    nodes = fused_nodes(compiled)
    assert [(n.meta["fused"], n.meta["writes_into"]) for n in nodes.values()] == [
        (["relu"], "conv")]


def test_one_buffer_per_kernel_and_none_for_a_kernel_that_reuses_its_input():
    def f(x, w):
        h1 = tensor.matmul(x, w)  # dead after h2 ...
        h2 = tensor.matmul(h1, w)  # ... and h2 after h3: two buffers of the right shape
        h3 = tensor.matmul(h2, w)
        return tensor.sigmoid(x) * 2.0 + h3.sum()

    def g(x, w):
        h = tensor.matmul(x, w)  # dead after z: a buffer the kernel does not need
        z = tensor.matmul(h, w)
        return tensor.relu(z + 1.0)  # writes into z, which dies here

    x, w = tensor.randn(20, 20), tensor.randn(20, 20)
    cases = ((f, "matmul", ["x", "sum_1", "matmul"]), (g, "matmul_1", ["matmul_1"]))
    for fn, writes, args in cases:
        compiled = minifx.compile(fn, backend="numba")
        for _ in range(2):
            tensor.testing.assert_close(compiled(x, w), fn(x, w), rtol=1e-5, atol=1e-5)
        (node,) = fused_nodes(compiled).values()
        assert node.meta["writes_into"] == writes
        assert [a.name for a in node.args] == args
