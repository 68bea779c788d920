"""The numba backend: fused kernels give the eager results, on tensor and
torch models, with broadcasting and non-contiguous inputs.

Every distinct generated source is one numba compilation, so the models
here reuse a few chains (the same node names give the same source).
"""

import copy

import numba
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minifx
import tensor
import tensor.nn as nn
import tensor.nn.functional as F
from minifx.compiler import kernel
from minifx.compiler.kernel import FusedKernel
from tensor.testing import assert_close


def sigmoid_mul_add(x, y):
    return tensor.sigmoid(x) * y + 1


def torch_sigmoid_mul_add(x, y):
    return torch.sigmoid(x) * y + 1


class LinearRelu(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(tensor.randn(6, 5))
        self.b = nn.Parameter(tensor.randn(5))

    def forward(self, x):
        return F.relu(x @ self.w + self.b)


def fused_nodes(gm):
    return [n for n in gm.graph.nodes if "fused" in n.meta]


def only_entry(compiled):
    (gm,) = compiled.cache.values()
    return gm


def test_sigmoid_mul_add_is_one_kernel_and_equals_eager():
    compiled = minifx.compile(sigmoid_mul_add, backend="numba")
    x, y = tensor.randn(30, 40), tensor.randn(30, 40)
    assert_close(compiled(x, y), sigmoid_mul_add(x, y))
    gm = only_entry(compiled)
    (fused,) = fused_nodes(gm)
    assert fused.op == "call_function"
    assert fused.meta["fused"] == ["sigmoid", "mul", "add"]
    assert isinstance(fused.target, FusedKernel)
    assert "def fused_sigmoid_mul_add(out, x, y):" in fused.target.source
    assert "scalar.sigmoid(x[i])" in fused.target.source
    assert [n.op for n in gm.graph.nodes] == ["placeholder", "placeholder", "call_function",
                                              "output"]
    assert "sigmoid_mul_add = fused_sigmoid_mul_add(x, y)" in gm.code


def test_broadcasting_and_non_contiguous_inputs():
    compiled = minifx.compile(sigmoid_mul_add, backend="numba")
    base = tensor.randn(40, 30)
    cases = [
        (base.t(), tensor.randn(40)),  # transposed x, broadcast y
        (tensor.randn(30, 1), tensor.randn(1, 40)),  # both broadcast
        (base[::2, ::3], tensor.randn(20, 10)[:, :].t().t()),  # sliced
        (tensor.randn(3, 1, 4).expand(3, 5, 4), tensor.randn(5, 1)),  # an expanded view
        (tensor.randn(()), tensor.randn(())),  # 0-d
        (tensor.randn(0, 3), tensor.randn(3)),  # empty
    ]
    before = len(kernel._COMPILED)
    for x, y in cases:
        out = compiled(x, y)
        expected = sigmoid_mul_add(x, y)
        assert out.shape == expected.shape
        assert_close(out, expected)
    assert len(compiled.cache) == len(cases)  # one entry per signature ...
    assert len(kernel._COMPILED) - before <= 1  # ... but one generated source for all


@settings(deadline=None, max_examples=25)
@given(
    shape=st.lists(st.integers(1, 5), min_size=1, max_size=3),
    drop=st.lists(st.booleans(), min_size=3, max_size=3),
    transpose=st.booleans(),
)
def test_random_broadcasts_match_eager(shape, drop, transpose):
    y_shape = [1 if d else n for n, d in zip(shape, drop)]
    x = tensor.randn(*shape)
    if transpose and x.ndim >= 2:
        x = tensor.randn(*reversed(shape)).permute(*reversed(range(len(shape))))
    y = tensor.randn(*y_shape)
    compiled = minifx.compile(sigmoid_mul_add, backend="numba")
    assert_close(compiled(x, y), sigmoid_mul_add(x, y))


def test_float64_gets_its_own_source_and_matches():
    compiled = minifx.compile(sigmoid_mul_add, backend="numba")
    x, y = tensor.randn(7, 3, dtype=tensor.float64), tensor.randn(3, dtype=tensor.float64)
    out = compiled(x, y)
    assert out.dtype == tensor.float64
    assert_close(out, sigmoid_mul_add(x, y))
    (fused,) = fused_nodes(only_entry(compiled))
    assert "np.float64(1.0)" in fused.target.source


def test_matmul_stays_unfused_in_relu_of_linear():
    model = LinearRelu()
    compiled = minifx.compile(model, backend="numba")
    x = tensor.randn(8, 6)
    assert_close(compiled(x), model(x))
    gm = only_entry(compiled)
    (fused,) = fused_nodes(gm)
    assert fused.meta["fused"] == ["add", "relu"]
    ops = [(n.op, getattr(n.target, "__name__", n.target)) for n in gm.graph.nodes]
    assert ("call_function", "matmul") in ops
    assert "matmul = x @ w" in gm.code
    assert "add_relu = fused_add_relu(matmul, b)" in gm.code


def test_a_torch_model():
    compiled = minifx.compile(torch_sigmoid_mul_add, backend="numba")
    x, y = torch.randn(30, 40), torch.randn(40, 30).t()
    out = compiled(x, y)
    assert isinstance(out, torch.Tensor)
    torch.testing.assert_close(out, torch_sigmoid_mul_add(x, y))
    (fused,) = fused_nodes(only_entry(compiled))
    assert fused.meta["fused"] == ["sigmoid", "mul", "add"]


def test_a_torch_module_with_parameters_and_a_leaf():
    class TorchLinearRelu(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.randn(6, 5))
            self.b = torch.nn.Parameter(torch.randn(5))

        def forward(self, x):
            return torch.nn.functional.relu(x @ self.w + self.b)

    model = TorchLinearRelu()
    compiled = minifx.compile(model, backend="numba")
    x = torch.randn(8, 6)
    with torch.no_grad():
        expected = model(x)
    torch.testing.assert_close(compiled(x), expected)
    (fused,) = fused_nodes(only_entry(compiled))
    assert fused.meta["fused"] == ["add", "relu"]


def test_an_intermediate_used_elsewhere_is_materialised_and_correct():
    def f(x, y):
        s = tensor.exp(x) + 1
        return s * y - tensor.tanh(s), s

    compiled = minifx.compile(f, backend="numba")
    x, y = tensor.randn(6, 7), tensor.randn(7)
    out, s = compiled(x, y)
    expected_out, expected_s = f(x, y)
    assert_close(out, expected_out)
    assert_close(s, expected_s)
    gm = only_entry(compiled)
    first, second = fused_nodes(gm)
    assert first.meta["fused"] == ["exp", "add"]
    assert second.meta["fused"] == ["mul", "tanh", "sub"]
    assert second.args == (first, gm.graph.find_nodes(op="placeholder")[1])
    assert gm.graph.output_node().args[0] == (second, first)


def test_where_comparisons_clamp_pow_and_a_mask():
    def f(x, y):
        t = tensor.where(x > y, x - y, (y / 2) ** 2)
        return t.clamp(min=-1.0, max=1.5).abs().sqrt() + (x > 0) * x

    compiled = minifx.compile(f, backend="numba")
    x, y = tensor.randn(50, 20), tensor.randn(20)
    assert_close(compiled(x, y), f(x, y))
    (fused,) = fused_nodes(only_entry(compiled))
    assert len(fused.meta["fused"]) == 11


def test_integer_models_run_eagerly_and_stay_exact():
    compiled = minifx.compile(lambda x: (x + 1) * 3 - x, backend="numba")
    x = tensor.arange(12).view(3, 4)
    out = compiled(x)
    assert out.dtype == tensor.int64
    assert_close(out, (x + 1) * 3 - x)
    assert fused_nodes(only_entry(compiled)) == []


def test_a_fused_graph_module_survives_deepcopy():
    compiled = minifx.compile(sigmoid_mul_add, backend="numba")
    x, y = tensor.randn(4, 5), tensor.randn(4, 5)
    expected = compiled(x, y)
    clone = copy.deepcopy(only_entry(compiled))
    assert_close(clone(x, y), expected)
    (fused,) = fused_nodes(clone)
    assert fused.target.source == fused_nodes(only_entry(compiled))[0].target.source


def test_the_backend_is_called_once_per_signature():
    calls = []

    def counting_numba(gm, example_inputs):
        calls.append(gm)
        return minifx.compiler.backends.numba(gm, example_inputs)

    compiled = minifx.compile(sigmoid_mul_add, backend=counting_numba)
    for n in (3, 3, 4, 3, 4):
        x = tensor.randn(n, 2)
        assert_close(compiled(x, x), sigmoid_mul_add(x, x))
    assert len(calls) == 2


def test_every_operation_in_one_kernel_against_torch():
    def f(x, y):
        masks = ((x < y) * x + (x >= 0.5) * y + (y <= -0.5) * 2.0 + (x == x) * 1.0
                 + (x != y) * 0.25)
        z = -masks / (torch.abs(y) + 1)
        return (torch.exp(z).pow(torch.sigmoid(x)) + torch.relu(z).sqrt()
                - torch.tanh(z).clamp(-0.5, 0.5) + torch.clamp(z, min=-1) * z.sub(y).mul(2))

    compiled = minifx.compile(f, backend="numba")
    x, y = torch.randn(40, 30), torch.randn(30)
    torch.testing.assert_close(compiled(x, y), f(x, y))
    gm = only_entry(compiled)
    (fused,) = fused_nodes(gm)
    traced_ops = [n for n in minifx.symbolic_trace(f).graph.nodes if n.op.startswith("call")]
    assert fused.meta["fused"] == [n.name for n in traced_ops]
    source = fused.target.source
    for piece in ("x[i] < y[i]", "x[i] >= np.float32(0.5)", "y[i] <= np.float32(-0.5)",
                  "x[i] == x[i]", "x[i] != y[i]", "scalar.exp(", "scalar.sigmoid(x[i])",
                  "scalar.relu(", "scalar.sqrt(", "scalar.tanh(", "scalar.absolute(y[i])"):
        assert piece in source, piece


def test_threads_follow_the_work_of_each_element():
    """A sigmoid kernel costs a few copies per element, so it splits over threads
    at a smaller size than a plain add; both split results equal eager."""

    chain = minifx.compile(sigmoid_mul_add, backend="numba")
    x, y = tensor.randn(300, 1000), tensor.randn(300, 1000)
    assert_close(chain(x, y), sigmoid_mul_add(x, y))
    (fused,) = fused_nodes(only_entry(chain))
    work = fused.target.work
    assert work == pytest.approx(1.0 + kernel.EXTRA_WORK["sigmoid"])  # mul, add: nothing extra
    backend = kernel.threads  # whose thread_count the compiler asks
    minimum = kernel.settings.PARALLEL_MIN
    assert backend.thread_count(minimum, 1.0) == 1
    assert backend.thread_count(int(2 * minimum / work) + 1, work) == min(
        2, numba.get_num_threads())
    assert backend.thread_count(int(2 * minimum / work) - 1, work) == 1
    assert copy.deepcopy(fused.target).work == work  # pickled with the kernel


def test_integer_powers_cost_nothing_extra_and_a_float_power_does():
    def powers(x):
        return (x ** 2 + 1) ** 1.5

    compiled = minifx.compile(powers, backend="numba")
    x = tensor.randn(50)
    assert_close(compiled(x), powers(x))
    (fused,) = fused_nodes(only_entry(compiled))
    assert fused.target.work == pytest.approx(1.0 + kernel.EXTRA_WORK["pow"])


def test_constant_powers_are_computed_as_eager_computes_them():
    """0.5 and -0.5 become sqrt and rsqrt, whole exponents multiplications, and any
    other exponent pow32: the fused kernel gives eager's bits for each."""
    def powers(x):
        y = x + 1.0
        return y ** 0.5 - y ** -0.5 + y ** 1.7 + y ** -2

    compiled = minifx.compile(powers, backend="numba")
    x = tensor.rand(3000) * 4
    assert_close(compiled(x), powers(x))
    (fused,) = fused_nodes(only_entry(compiled))
    for spelling in ("scalar.sqrt(add)", "scalar.rsqrt(add)", "scalar.power(add, np.float32(1.7))",
                     "add ** -2"):
        assert spelling in fused.target.source
    for exponent in (0.5, -0.5, 1.7, -2):
        alone = minifx.compile(power_of_x_plus_one(exponent), backend="numba")
        assert_close(alone(x), (x + 1.0) ** exponent, rtol=0, atol=0)
        assert fused_nodes(only_entry(alone))


def power_of_x_plus_one(exponent):
    def power(x):
        return (x + 1.0) ** exponent

    return power


def four_inputs(x, y, z, w):
    return tensor.sigmoid(x) * y + z - w


@pytest.mark.parametrize("fn, inputs", [(sigmoid_mul_add, 2), (four_inputs, 4)])
def test_a_large_kernel_shares_its_ranges_and_equals_eager(fn, inputs, monkeypatch):
    """From SPIN_MIN copies a flat kernel of up to three inputs runs as a task of
    the polling workers (a cfunc, ``kernel_task``); with more inputs it hands
    ranges to the worker threads. Either way the result is eager's."""
    backend = kernel.threads
    monkeypatch.setattr(kernel.settings, "SPIN_MIN", 1)
    spread, shared = backend.spread, []
    monkeypatch.setattr(backend, "spread", lambda *a, **k: (shared.append(a[1]),
                                                             spread(*a, **k)))
    compiled = minifx.compile(fn, backend="numba")
    xs = [tensor.randn(1000, 100) for _ in range(inputs)]
    compiled(*xs)  # the first call runs the graph eagerly to find shapes and dtypes
    for _ in range(5):
        before = len(shared)
        got = compiled(*xs)  # one fused kernel: shared once, or not at all
        assert shared[before:] == ([100_000] if inputs <= 3 else [])
        assert_close(got, fn(*xs))
