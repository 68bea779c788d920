"""The everyday layers of published models, against torch on both backends.

SiLU, Hardswish, Hardsigmoid, Hardtanh, ReLU6, pad, scaled dot-product
attention and MultiheadAttention: their functions and modules give torch's
numbers (within a few ulps for the elementwise ones, float32 tolerance for the
products), torch's special values (NaN, infinities, the corners at -3 and 3),
torch's reprs, and each function reaches a ``__tensor_function__`` handler.
"""

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import tensor
import tensor.nn.functional as F
from tests.ch00.nn_helpers import check, ours, randn
from tests.ch00.tensor_helpers import data, layouts, pair, views

ACTIVATIONS = ["silu", "hardswish", "hardsigmoid", "relu6", "hardtanh"]
# Within how many ulps of torch: silu goes through exp, whose float32 kernels differ
# by CPU and library; the others are an add, a clamp, a product and a division by 6.
ULPS = {"silu": 4, "hardswish": 2, "hardsigmoid": 2, "relu6": 0, "hardtanh": 0}


def specials(dtype):
    """NaN, the infinities, signed zeros, the corners of the hard ones and their neighbours."""
    corners = [-6.0, -3.0, 3.0, 6.0, -1.0, 1.0]
    near = [np.nextafter(dtype(c), dtype(d)) for c in corners for d in (-np.inf, np.inf)]
    values = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30, -1e-30, 50.0, -50.0, 100.0, -100.0,
              1e30, -1e30] + corners + near
    return np.array(values, dtype)


def assert_ulps(actual, expected, ulps):
    """Equal where torch is NaN or infinite, else at most ``ulps`` units in the last place
    of the larger of the two values apart (0 ulps: the same number, either zero sign)."""
    a, e = actual.numpy(), expected.numpy()
    assert a.shape == e.shape and a.dtype == e.dtype, (a.shape, e.shape, a.dtype, e.dtype)
    assert np.array_equal(np.isnan(a), np.isnan(e)), (a, e)
    finite = np.isfinite(e)
    assert np.array_equal(a[~finite & ~np.isnan(e)], e[~finite & ~np.isnan(e)])
    a, e = a[finite], e[finite]
    spacing = np.spacing(np.maximum(np.abs(a), np.abs(e)))
    bad = np.abs(a - e) > ulps * spacing
    assert not bad.any(), (a[bad], e[bad], ulps)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ACTIVATIONS)
def test_activations_match_torch_on_random_and_special_values(backend, name, dtype):
    ours_fn, torch_fn = getattr(F, name), getattr(TF, name)
    dtype_name = np.dtype(dtype).name
    for shape in [(3, 4, 5), (7,), (2, 0, 3), (), (70000,)]:  # 70000: past the lean path
        for _, (base, view) in layouts(shape).items():
            ours_x, torch_x = pair(data(base, dtype_name, -8.0, 8.0))
            assert_ulps(ours_fn(view(ours_x)), torch_fn(view(torch_x)), ULPS[name])
    values = specials(dtype)
    assert_ulps(ours_fn(ours(values)), torch_fn(torch.from_numpy(values)), ULPS[name])
    big = np.tile(values, 3000)  # the same values through the numba kernels' parallel path
    assert_ulps(ours_fn(ours(big)), torch_fn(torch.from_numpy(big)), ULPS[name])


def test_hard_corners_are_exact():
    x = ours(np.array([-3.0, 3.0, -6.0, 6.0, 0.0], np.float32))
    assert F.hardsigmoid(x).tolist() == [0.0, 1.0, 0.0, 1.0, 0.5]
    assert F.hardswish(x).tolist() == [0.0, 3.0, 0.0, 6.0, 0.0]
    assert F.relu6(x).tolist() == [0.0, 3.0, 0.0, 6.0, 0.0]


@pytest.mark.parametrize("name", ACTIVATIONS)
def test_inplace_writes_into_the_input_as_torch(backend, name):
    array = randn(3, 4) * 4
    ours_x, torch_x = ours(array), torch.from_numpy(array.copy())
    result = getattr(F, name)(ours_x, inplace=True)
    expected = getattr(TF, name)(torch_x, inplace=True)
    assert result is ours_x and expected is torch_x
    assert_ulps(ours_x, torch_x, ULPS[name])


def test_hardtanh_bounds_and_integer_inputs_as_torch(backend):
    x = randn(4, 5) * 3
    for low, high in [(-1.0, 1.0), (0.0, 6.0), (-2.5, 0.5), (2.0, 2.0)]:
        check(F.hardtanh(ours(x), low, high), TF.hardtanh(torch.from_numpy(x), low, high))
    ints = np.arange(-6, 7, dtype=np.int64)
    check(F.hardtanh(ours(ints), -2.5, 2.5), TF.hardtanh(torch.from_numpy(ints), -2.5, 2.5))
    check(F.relu6(ours(ints.astype(np.int32))), TF.relu6(torch.from_numpy(ints.astype(np.int32))))


def test_bad_input_is_refused_by_name():
    with pytest.raises(ValueError, match="min_val cannot be greater than max_val"):
        F.hardtanh(ours(randn(3)), 2.0, 1.0)
    with pytest.raises(ValueError, match="min_val cannot be greater than max_val"):
        tensor.nn.Hardtanh(2.0, 1.0)
    for name in ("relu6", "hardtanh"):
        with pytest.raises(RuntimeError, match="Bool inputs not supported for hardtanh"):
            getattr(F, name)(tensor.tensor([True, False]))
    for name in ("silu", "hardswish", "hardsigmoid"):
        with pytest.raises(TypeError, match=f"{name}.*tensor.int64"):
            getattr(F, name)(tensor.tensor([1, 2]))
        with pytest.raises(NotImplementedError):  # torch refuses integers too
            getattr(TF, name)(torch.tensor([1, 2]))


# ------------------------------------------------------------------ modules and reprs

MODULES = [
    ("SiLU", (), {}), ("SiLU", (True,), {}), ("Hardswish", (), {}),
    ("Hardswish", (), {"inplace": True}), ("Hardsigmoid", (), {}), ("ReLU6", (), {}),
    ("ReLU6", (True,), {}), ("Hardtanh", (), {}), ("Hardtanh", (-2, 3.5, True), {}),
    ("Hardtanh", (), {"min_val": 0.0, "max_val": 6.0}),
]


@pytest.mark.parametrize("name, args, kwargs", MODULES)
def test_modules_compute_and_print_as_torch(backend, name, args, kwargs):
    ours_m = getattr(tensor.nn, name)(*args, **kwargs)
    torch_m = getattr(torch.nn, name)(*args, **kwargs)
    assert repr(ours_m) == repr(torch_m).replace("torch", "tensor")
    x = randn(2, 3, 4, seed=1) * 4
    ours_x, torch_x = ours(x), torch.from_numpy(x.copy())
    ulps = ULPS[name.lower()]
    assert_ulps(ours_m(ours_x), torch_m(torch_x), ulps)
    assert_ulps(ours_x, torch_x, ulps)  # written in place exactly when torch's is


@pytest.mark.parametrize("kwargs", [
    {}, {"batch_first": True}, {"bias": False}, {"kdim": 4, "vdim": 6},
    {"add_bias_kv": True, "add_zero_attn": True}, {"dropout": 0.1},
])
def test_multihead_attention_prints_and_holds_what_torch_holds(kwargs):
    ours_m = tensor.nn.MultiheadAttention(8, 2, **kwargs)
    torch_m = torch.nn.MultiheadAttention(8, 2, **kwargs)
    assert repr(ours_m) == repr(torch_m).replace("torch", "tensor")
    theirs = {k: tuple(v.shape) for k, v in torch_m.state_dict().items()}
    assert {k: tuple(v.shape) for k, v in ours_m.state_dict().items()} == theirs
    assert [n for n, _ in ours_m.named_parameters()] == [
        n for n, _ in torch_m.named_parameters()]
    for name in ("embed_dim", "kdim", "vdim", "num_heads", "dropout", "batch_first",
                 "head_dim", "add_zero_attn", "_qkv_same_embed_dim"):
        assert getattr(ours_m, name) == getattr(torch_m, name), name
    if ours_m.in_proj_bias is not None:  # torch starts the biases at zero
        assert not ours_m.in_proj_bias.numpy().any() and not ours_m.out_proj.bias.numpy().any()


def test_multihead_attention_refuses_bad_sizes():
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        tensor.nn.MultiheadAttention(10, 3)
    with pytest.raises(ValueError, match="embed_dim and num_heads must be greater than 0"):
        tensor.nn.MultiheadAttention(0, 2)


# ------------------------------------------------------------------ pad


@pytest.mark.parametrize("pad, value", [
    ((1, 2), None), ((1, 2, 0, 3), 5.0), ((0, 0, 1, 1, 2, 0), -1.5), ((-1, 2), None),
    ((2, -3, -1, 0), 0.25), ((0, 0), None),
])
def test_pad_matches_torch(backend, pad, value):
    x = randn(2, 3, 4)
    for _, ours_x, torch_x in views((2, 3, 4)):
        check(F.pad(ours_x, pad, value=value), TF.pad(torch_x, pad, value=value))
    check(F.pad(ours(x), pad, "constant", value), TF.pad(torch.from_numpy(x), pad, "constant",
                                                          value))
    ints = np.arange(24, dtype=np.int64).reshape(2, 3, 4)
    fill = 2.5 if value is None else value
    check(F.pad(ours(ints), pad, value=fill), TF.pad(torch.from_numpy(ints), pad, value=fill))


def test_pad_refuses_what_torch_refuses_and_modes_it_lacks():
    x = ours(randn(2, 3))
    with pytest.raises(RuntimeError, match="divisible by 2"):
        F.pad(x, (1, 2, 3))
    with pytest.raises(RuntimeError, match="padding length 6 and input of dimension 2"):
        F.pad(x, (1, 1, 1, 1, 1, 1))
    with pytest.raises(RuntimeError, match="negative size"):
        F.pad(x, (-3, -1))
    with pytest.raises(NotImplementedError, match="mode='reflect'"):
        F.pad(x, (1, 1), mode="reflect")


# ------------------------------------------------------------------ attention


def sdpa_cases():
    rng = np.random.default_rng(3)
    q, k, v = (randn(2, 3, 4, 8, seed=s) for s in (4, 5, 6))
    v6 = randn(2, 3, 6, 5, seed=7)
    k6 = randn(2, 3, 6, 8, seed=8)
    yield (q, k6, v6), {}
    yield (q, k, v), {"is_causal": True}
    yield (q, k6, v6), {"is_causal": True}  # causal with more keys than queries
    yield (q, k6, v6), {"attn_mask": rng.random((4, 6)) > 0.3}
    yield (q, k6, v6), {"attn_mask": randn(2, 1, 4, 6, seed=9)}
    yield (q, k6, v6), {"scale": 0.3}
    yield (q[0], k6[0], v6[0]), {"attn_mask": rng.random((3, 4, 6)) > 0.5}
    yield (q[0, 0], k6[0, 0], v6[0, 0]), {}  # no batch dimensions
    yield (randn(2, 4, 5, 8), randn(2, 2, 7, 8), randn(2, 2, 7, 3)), {"enable_gqa": True}
    yield (q, k6, v6), {"dropout_p": 1.0}  # torch drops every weight: zeros
    empty_row = np.ones((4, 6), np.bool_)
    empty_row[2] = False  # query 2 may attend to nothing: torch's CPU kernel gives zeros
    yield (q, k6, v6), {"attn_mask": empty_row}
    minus_inf = np.where(empty_row, 0.0, -np.inf).astype(np.float32)
    yield (q, k6, v6), {"attn_mask": minus_inf}
    yield tuple(a.astype(np.float64) for a in (q, k6, v6)), {"is_causal": True}


@pytest.mark.parametrize("case", range(len(list(sdpa_cases()))))
def test_scaled_dot_product_attention_matches_torch(backend, case):
    arrays, kwargs = list(sdpa_cases())[case]
    mask = kwargs.get("attn_mask")
    ours_kwargs = {**kwargs, **({"attn_mask": ours(mask)} if mask is not None else {})}
    torch_kwargs = {**kwargs, **({"attn_mask": torch.from_numpy(mask)} if mask is not None
                                 else {})}
    result = F.scaled_dot_product_attention(*map(ours, arrays), **ours_kwargs)
    expected = TF.scaled_dot_product_attention(*map(torch.from_numpy, arrays), **torch_kwargs)
    check(result, expected, tol=1e-5)


def test_attention_dropout_draws_from_the_tensor_generator():
    q, k, v = (ours(randn(2, 4, 8, seed=s)) for s in (1, 2, 3))
    tensor.manual_seed(0)
    first = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    tensor.manual_seed(0)
    again = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    plain = F.scaled_dot_product_attention(q, k, v)
    assert np.array_equal(first.numpy(), again.numpy())
    assert not np.allclose(first.numpy(), plain.numpy())


def test_scaled_dot_product_attention_refuses_bad_input():
    q = ours(randn(2, 4, 8))
    with pytest.raises(RuntimeError, match="attn_mask should not be set when is_causal=True"):
        F.scaled_dot_product_attention(q, q, q, ours(np.ones((4, 4), np.bool_)), is_causal=True)
    with pytest.raises(RuntimeError, match="same floating point dtype.*float64"):
        F.scaled_dot_product_attention(q, ours(randn(2, 4, 8, dtype=np.float64)), q)
    with pytest.raises(RuntimeError, match=r"shapes \[2, 4, 8\], \[2, 4, 6\]"):
        F.scaled_dot_product_attention(q, ours(randn(2, 4, 6)), q)
    with pytest.raises(RuntimeError, match="attn_mask dtype.*tensor.int64"):
        F.scaled_dot_product_attention(q, q, q, tensor.zeros(4, 4, dtype=tensor.int64))
    with pytest.raises(RuntimeError, match="does not broadcast"):
        F.scaled_dot_product_attention(q, q, q, ours(np.ones((3, 4), np.bool_)))
    with pytest.raises(ValueError, match="between 0 and 1"):
        F.scaled_dot_product_attention(q, q, q, dropout_p=1.5)


def mha_cases():
    """(constructor kwargs, L, S, forward kwargs as arrays, self-attention?)"""
    rng = np.random.default_rng(11)
    pad_mask = np.array([[False] * 5 + [True], [False] * 6])
    yield {}, 4, 6, {}, False
    yield {}, 5, 5, {}, True
    yield {"batch_first": True}, 5, 5, {"need_weights": False}, True
    yield {"batch_first": True}, 4, 6, {"average_attn_weights": False}, False
    yield {"bias": False}, 4, 6, {"key_padding_mask": pad_mask}, False
    yield {"kdim": 4, "vdim": 6}, 4, 6, {"attn_mask": rng.random((4, 6)) > 0.8}, False
    yield {"kdim": 4, "vdim": 6}, 4, 6, {"need_weights": False,
                                         "key_padding_mask": pad_mask.astype(np.float32)}, False
    float_pad = np.where(pad_mask, -np.inf, 0.0).astype(np.float32)
    yield {"add_bias_kv": True, "add_zero_attn": True}, 4, 6, {
        "key_padding_mask": float_pad, "attn_mask": randn(4, 6, seed=12)}, False
    yield {}, 5, 5, {"attn_mask": randn(4, 5, 5, seed=13), "need_weights": False}, True
    causal = np.triu(np.ones((5, 5), np.bool_), 1)
    yield {}, 5, 5, {"attn_mask": causal, "is_causal": True, "need_weights": False}, True
    yield {}, 5, 5, {"attn_mask": causal, "is_causal": True}, True
    yield {"unbatched": True}, 4, 6, {"attn_mask": randn(2, 4, 6, seed=14)}, False
    yield {"dropout": 0.3}, 4, 6, {}, False  # eval: no dropout


@pytest.mark.parametrize("case", range(len(list(mha_cases()))))
def test_multihead_attention_matches_torch(backend, case):
    kwargs, length, source, forward, self_attention = list(mha_cases())[case]
    unbatched = kwargs.pop("unbatched", False)
    torch_m = torch.nn.MultiheadAttention(8, 2, **kwargs).eval()
    ours_m = tensor.nn.MultiheadAttention(8, 2, **kwargs).eval()
    ours_m.load_state_dict({k: ours(v) for k, v in torch_m.state_dict().items()})
    batch_first = kwargs.get("batch_first", False)

    def sized(n, features, seed):
        shape = (n, features) if unbatched else ((2, n, features) if batch_first
                                                 else (n, 2, features))
        return randn(*shape, seed=seed)

    q = sized(length, 8, 20)
    k = q if self_attention else sized(source, kwargs.get("kdim", 8), 21)
    v = q if self_attention else sized(source, kwargs.get("vdim", 8), 22)
    ours_forward = {n: ours(a) if isinstance(a, np.ndarray) else a for n, a in forward.items()}
    torch_forward = {n: torch.from_numpy(a) if isinstance(a, np.ndarray) else a
                     for n, a in forward.items()}
    out, weights = ours_m(ours(q), ours(k), ours(v), **ours_forward)
    with torch.no_grad():
        expected, expected_weights = torch_m(*map(torch.from_numpy, (q, k, v)), **torch_forward)
    check(out, expected, tol=1e-5)
    if expected_weights is None:
        assert weights is None
    else:
        check(weights, expected_weights, tol=1e-5)


def test_multi_head_attention_forward_is_torch_functional_form(backend):
    torch_m = torch.nn.MultiheadAttention(8, 4).eval()
    params = {k: v.detach() for k, v in torch_m.state_dict().items()}
    q, k = randn(3, 2, 8, seed=1), randn(5, 2, 8, seed=2)
    args = (8, 4, "in_proj_weight", "in_proj_bias", None, None, False, 0.0,
            "out_proj.weight", "out_proj.bias")

    def call(lib_fn, convert):
        real = [convert(params[a]) if isinstance(a, str) else a for a in args]
        return lib_fn(convert(q), convert(k), convert(k), *real, training=False)

    out, weights = call(F.multi_head_attention_forward, ours)
    expected, expected_weights = call(TF.multi_head_attention_forward,
                                      lambda a: a if isinstance(a, torch.Tensor)
                                      else torch.from_numpy(a))
    check(out, expected)
    check(weights, expected_weights)


def test_multihead_attention_drops_weights_in_training_only():
    m = tensor.nn.MultiheadAttention(8, 2, dropout=0.5)
    x = ours(randn(4, 2, 8))
    kept = m.eval()(x, x, x, average_attn_weights=False)[1].numpy()
    tensor.manual_seed(0)
    dropped = m.train()(x, x, x, average_attn_weights=False)[1].numpy()
    zero = dropped == 0
    assert zero.any() and not zero.all()
    np.testing.assert_allclose(dropped[~zero], 2 * kept[~zero], rtol=1e-6)  # 1 / (1 - p)


def test_multihead_attention_refuses_bad_input():
    m = tensor.nn.MultiheadAttention(8, 2)
    x = ours(randn(4, 2, 8))
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        m(x, x, x, is_causal=True)
    with pytest.raises(RuntimeError, match="2D attn_mask .* should be \\(4, 4\\)"):
        m(x, x, x, attn_mask=ours(np.zeros((4, 3), np.float32)))
    with pytest.raises(AssertionError, match="only bool and floating types of attn_mask"):
        m(x, x, x, attn_mask=tensor.zeros(4, 4, dtype=tensor.int64))
    with pytest.raises(AssertionError, match="expecting embedding dimension of 8, but got 6"):
        m(ours(randn(4, 2, 6)), x, x)


# ------------------------------------------------------------------ dispatch


class Seen(tensor.Tensor):
    """A Tensor subclass that records every call it takes part in, then lets the
    default handler run it (which wraps the results as Seen)."""

    calls = []

    @classmethod
    def __tensor_function__(cls, func, types, args=(), kwargs=None):
        cls.calls.append(func)
        return super().__tensor_function__(func, types, args, kwargs)


X = randn(2, 3, seed=30) * 4
CALLS = {
    "silu": lambda x: F.silu(x), "hardswish": lambda x: F.hardswish(x),
    "hardsigmoid": lambda x: F.hardsigmoid(x), "relu6": lambda x: F.relu6(x),
    "hardtanh": lambda x: F.hardtanh(x, -2.0, 2.0), "pad": lambda x: F.pad(x, (1, 1)),
    "scaled_dot_product_attention": lambda x: F.scaled_dot_product_attention(
        ours(X), x, ours(X)),  # found in any position
    "multi_head_attention_forward": lambda x: F.multi_head_attention_forward(
        x, x, x, 3, 1, ours(randn(9, 3)), None, None, None, False, 0.0, ours(randn(3, 3)),
        None)[0],
}


@pytest.mark.parametrize("name", CALLS)
def test_a_tensor_function_handler_intercepts_each_new_function(name):
    Seen.calls = []
    result = CALLS[name](ours(X).as_subclass(Seen))
    assert Seen.calls == [getattr(F, name)]
    assert type(result) is Seen
    expected = CALLS[name](ours(X))
    assert type(expected) is tensor.Tensor
    assert np.array_equal(result.numpy(), expected.numpy())


@pytest.mark.parametrize("module", [
    tensor.nn.SiLU(), tensor.nn.Hardswish(), tensor.nn.Hardsigmoid(), tensor.nn.ReLU6(),
    tensor.nn.Hardtanh(), tensor.nn.MultiheadAttention(3, 1)], ids=lambda m: type(m).__name__)
def test_modules_call_the_functions_a_handler_sees(module):
    Seen.calls = []
    x = ours(X).as_subclass(Seen)
    if isinstance(module, tensor.nn.MultiheadAttention):
        module(x, x, x)
        assert F.multi_head_attention_forward in Seen.calls  # after Tensor.dim, as in torch
    else:
        name = "hardtanh" if isinstance(module, tensor.nn.Hardtanh) else type(module).__name__
        assert type(module(x)) is Seen
        assert Seen.calls == [getattr(F, name.lower())]
