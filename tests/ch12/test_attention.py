"""Chapter 12: attention computes through the primitives, so make_fx records it.

``nn.MultiheadAttention`` and ``F.scaled_dot_product_attention`` in many
configurations, and a ViT-like encoder block: make_fx's graph (real and
fake) holds only primitives, computes the same as eager on a *second*
input (a value computed outside the primitives would have been frozen
into the graph and would show there), and under a FakeTensorMode the
outputs have the real outputs' shape, dtype and strides. Eager itself is
checked against torch in tests/ch00/test_nn_everyday.py.
"""

import numpy as np
import pytest

import tensor
import tensor.nn as nn
import tensor.nn.functional as F
from minifx.experimental.proxy_tensor import make_fx
from tensor.fake import FakeTensorMode

rng = np.random.default_rng(0)


def r(*shape):
    return tensor.from_numpy(rng.standard_normal(shape).astype(np.float32))


def mask(*shape, p=0.3):
    return tensor.from_numpy(rng.random(shape) < p)


class Attend(nn.Module):
    """``call(self.attn, *inputs)``, ``self.attn`` a MultiheadAttention: make_fx of a
    Module finds its parameters under their names, so any other constant in the graph
    is a value computed outside the primitives."""

    def __init__(self, call, **kwargs):
        super().__init__()
        tensor.manual_seed(0)
        self.attn = nn.MultiheadAttention(8, 2, **kwargs).eval()
        self.call = call

    def forward(self, *inputs):
        return self.call(self.attn, *inputs)


# name -> (make the function of tensors, make its inputs): the masks are made anew with
# the inputs, so a mask frozen into the graph would show on the second inputs
CASES = {
    "mha": (lambda: Attend(lambda m, q, k, v: m(q, k, v)),
            lambda: (r(5, 2, 8), r(6, 2, 8), r(6, 2, 8))),
    "mha_no_weights": (lambda: Attend(lambda m, q: m(q, q, q, need_weights=False)[0]),
                       lambda: (r(5, 2, 8),)),
    "mha_per_head_weights": (lambda: Attend(lambda m, q: m(q, q, q,
                                                           average_attn_weights=False)),
                             lambda: (r(5, 2, 8),)),
    "mha_key_padding": (lambda: Attend(lambda m, q, pad: m(q, q, q, key_padding_mask=pad)),
                        lambda: (r(5, 2, 8), mask(2, 5))),
    "mha_bool_attn_mask": (lambda: Attend(lambda m, q, am: m(q, q, q, attn_mask=am,
                                                             need_weights=False)[0]),
                           lambda: (r(5, 2, 8), mask(5, 5))),
    "mha_float_3d_mask": (lambda: Attend(lambda m, q, am: m(q, q, q, attn_mask=am)),
                          lambda: (r(5, 2, 8), r(4, 5, 5))),
    "mha_bias_kv_zero_attn": (lambda: Attend(lambda m, q, pad: m(q, q, q, key_padding_mask=pad),
                                             add_bias_kv=True, add_zero_attn=True),
                              lambda: (r(5, 2, 8), mask(2, 5))),
    "mha_kdim_vdim": (lambda: Attend(lambda m, q, k, v: m(q, k, v), kdim=6, vdim=4),
                      lambda: (r(5, 2, 8), r(3, 2, 6), r(3, 2, 4))),
    "mha_batch_first": (lambda: Attend(lambda m, q: m(q, q, q), batch_first=True),
                        lambda: (r(2, 5, 8),)),
    "mha_unbatched": (lambda: Attend(lambda m, q: m(q, q, q)), lambda: (r(5, 8),)),
    "mha_causal": (lambda: Attend(lambda m, q, am: m(q, q, q, attn_mask=am, is_causal=True,
                                                     need_weights=False)[0]),
                   lambda: (r(5, 2, 8), tensor.from_numpy(np.triu(np.ones((5, 5), bool), 1)))),
    "sdpa": (lambda: F.scaled_dot_product_attention, lambda: (r(2, 3, 5, 4),) * 3),
    "sdpa_bool_mask": (lambda: lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, m),
                       lambda: (r(2, 3, 5, 4), r(2, 3, 6, 4), r(2, 3, 6, 4), mask(5, 6, p=0.5))),
    "sdpa_float_mask": (lambda: lambda q, m: F.scaled_dot_product_attention(q, q, q, m),
                        lambda: (r(2, 5, 4), r(5, 5))),
    "sdpa_causal_scale": (lambda: lambda q, k, v: F.scaled_dot_product_attention(
                          q, k, v, is_causal=True, scale=0.3),
                          lambda: (r(2, 5, 4), r(2, 7, 4), r(2, 7, 3))),
    "sdpa_gqa": (lambda: lambda q, k, v: F.scaled_dot_product_attention(q, k, v,
                                                                          enable_gqa=True),
                 lambda: (r(1, 4, 5, 4), r(1, 2, 5, 4), r(1, 2, 5, 4))),
    "sdpa_rows_all_masked": (lambda: lambda q, m: F.scaled_dot_product_attention(q, q, q, m),
                             lambda: (r(2, 4, 4), tensor.tensor([[True] * 4, [False] * 4,
                                                                 [True, False] * 2,
                                                                 [False] * 4]))),
}


def flat(out):
    return [t for t in (out if isinstance(out, tuple) else (out,)) if t is not None]


@pytest.mark.parametrize("mode", ["real", "fake"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_attention_traces_to_primitives_that_compute_it(name, mode):
    build, make_inputs = CASES[name]
    fn = build()
    gm = make_fx(fn, tracing_mode=mode)(*make_inputs())
    for node in gm.graph.nodes:
        assert node.op in ("placeholder", "get_attr", "call_function", "output")
        if node.op == "call_function":
            assert isinstance(node.target, tensor.ops.OpOverload)
    constants = [n.target for n in gm.graph.find_nodes(op="get_attr")
                 if n.target.startswith(("_tensor_constant", "_param_constant"))]
    # only the causal mask, made from the shapes alone, is a constant
    assert len(constants) == (1 if name in ("sdpa_causal_scale", "mha_causal") else 0)
    inputs = make_inputs()  # new values, new masks
    for got, expected in zip(flat(gm(*inputs)), flat(fn(*inputs)), strict=True):
        tensor.testing.assert_close(got, expected, equal_nan=True)


@pytest.mark.parametrize("name", sorted(CASES))
def test_attention_under_fake_tensors_has_the_real_metadata(name):
    build, make_inputs = CASES[name]
    fn, inputs = build(), make_inputs()
    real = flat(fn(*inputs))
    with FakeTensorMode() as mode:
        fake = flat(fn(*[mode.from_tensor(x) for x in inputs]))
    assert [(f.shape, f.dtype, f.stride()) for f in fake] == \
        [(x.shape, x.dtype, x.stride()) for x in real]


def test_rows_with_every_key_masked_are_zero_in_the_graph_too():
    """Eager skips the zeroing when no row is fully masked (a test of values); a traced
    graph records it always, so an input that has such a row still gets zeros."""
    fn = CASES["sdpa_rows_all_masked"][0]()
    q = r(2, 4, 4)
    gm = make_fx(fn)(q, tensor.ones(4, 4, dtype=tensor.bool))  # no row masked
    blocked = tensor.tensor([[False] * 4] + [[True] * 4] * 3)  # query 0 sees no key
    out = gm(q, blocked)
    assert not out.numpy()[:, 0].any() and out.numpy()[:, 1:].all()
    tensor.testing.assert_close(out, fn(q, blocked))


class Block(nn.Module):
    """A ViT encoder block: pre-norm multi-head attention and a GELU MLP, with residuals."""

    def __init__(self, dim=16, heads=4):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

    def forward(self, x):
        y = self.norm1(x)
        x = x + self.attn(y, y, y, need_weights=False)[0]
        return x + self.mlp(self.norm2(x))


@pytest.mark.parametrize("mode", ["real", "fake"])
def test_a_vit_block_traces_and_computes_as_eager(mode):
    tensor.manual_seed(0)
    block = Block().eval()
    gm = make_fx(block, tracing_mode=mode)(r(2, 7, 16))
    ops = {n.target.name for n in gm.graph.find_nodes(op="call_function")}
    assert {"layer_norm", "linear", "matmul", "softmax", "gelu"} <= ops
    assert not gm.graph.find_nodes(op="call_module")
    for _ in range(2):
        x = r(2, 7, 16)
        tensor.testing.assert_close(gm(x), block(x))


def test_dropout_in_attention_is_a_recorded_draw():
    """In training, attention's dropout draws from the tensor RNG: the graph records the
    draw (rand), not its values, so with the same seed it drops what eager drops."""
    fn = Attend(lambda m, q: m(q, q, q), dropout=0.5).train()
    gm = make_fx(fn)(r(5, 2, 8))
    assert "rand" in {n.target.name for n in gm.graph.find_nodes(op="call_function")}
    x = r(5, 2, 8)
    tensor.manual_seed(7)
    got = gm(x)
    tensor.manual_seed(7)
    for a, b in zip(got, fn(x), strict=True):
        tensor.testing.assert_close(a, b)
