"""tensor.nn.quantized's integer kernels against torch's quantized ops on the same integers.

Equal ``int_repr`` everywhere, with one documented exception: torch's x86
int8 GEMM adds pairs of uint8 x int8 products in int16 with saturation
(``vpmaddubsw``), so with activations over the full 0..255 range a few sums
clip; our int32 accumulation does not. That is why the x86 mapping observes
activations with ``reduce_range=True`` (0..127), where the two agree exactly.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.ao.nn.intrinsic.quantized as tnniq
import torch.ao.nn.quantized as tnnq

import tensor
import tensor.nn.functional as F
import tensor.nn.quantized as nnq
from tests.ch10.qhelpers import ints, mismatch_fraction, twin_quantized, twin_weight

RNG = np.random.default_rng(0)


def reduced_range_input(shape, seed=0):
    """Activations quantized into 0..127, as the x86 mapping's observers choose."""
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    scale = float((x.max() - min(x.min(), 0)) / 127)
    zero_point = int(round(-min(x.min(), 0) / scale))
    return twin_quantized(x, scale, zero_point)


def twin_modules(ours_cls, theirs_cls, args, kwargs, weight_shape, bias, scale, zp):
    w = (np.random.default_rng(5).standard_normal(weight_shape) * 0.2).astype(np.float32)
    ow, tw = twin_weight(w)
    ours, theirs = ours_cls(*args, **kwargs), theirs_cls(*args, **kwargs)
    b = (np.random.default_rng(6).standard_normal(weight_shape[0]) * 0.1).astype(np.float32)
    ours.set_weight_bias(ow, tensor.from_numpy(b) if bias else None)
    theirs.set_weight_bias(tw, torch.from_numpy(b) if bias else None)
    ours.scale = theirs.scale = scale
    ours.zero_point = theirs.zero_point = zp
    return ours, theirs


CONVS = [
    dict(args=(8, 12, 3), kwargs=dict(stride=1, padding=1)),
    dict(args=(8, 12, 3), kwargs=dict(stride=2, padding=1)),
    dict(args=(8, 16, 1), kwargs=dict(stride=2, bias=False)),
    dict(args=(8, 4, 5), kwargs=dict(stride=1, padding=2, dilation=2)),
    dict(args=(8, 6, (3, 1)), kwargs=dict(stride=(2, 1), padding=(1, 0))),
]


@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("config", CONVS)
def test_conv2d_equals_torchs(config, relu):
    qx, tx = reduced_range_input((2, 8, 11, 13))
    args, kwargs = config["args"], config["kwargs"]
    ks = args[2] if isinstance(args[2], tuple) else (args[2], args[2])
    ours, theirs = twin_modules(
        nnq.ConvReLU2d if relu else nnq.Conv2d, tnniq.ConvReLU2d if relu else tnnq.Conv2d,
        args, kwargs, (args[1], args[0], *ks), kwargs.get("bias", True), 0.05, 64,
    )
    assert np.array_equal(ints(ours(qx)), ints(theirs(tx)))
    assert repr(ours) == repr(theirs).replace("torch.", "tensor.")


def test_conv2d_on_small_images_equals_torchs():
    """Few output pixels: the GEMM runs along the output channels (``qgemm_requant_narrow``)."""
    qx, tx = reduced_range_input((1, 8, 5, 5), seed=4)
    ours, theirs = twin_modules(nnq.ConvReLU2d, tnniq.ConvReLU2d, (8, 70, 3),
                                dict(stride=2, padding=1), (70, 8, 3, 3), True, 0.05, 64)
    assert np.array_equal(ints(ours(qx)), ints(theirs(tx)))


@pytest.mark.parametrize("rows", [33, 130])  # the narrow and the wide GEMM
@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_equals_torchs(relu, bias, rows):
    qx, tx = reduced_range_input((rows, 40), seed=1)
    ours, theirs = twin_modules(
        nnq.LinearReLU if relu else nnq.Linear, tnniq.LinearReLU if relu else tnnq.Linear,
        (40, 7), {}, (7, 40), bias, 0.03, 70,
    )
    assert np.array_equal(ints(ours(qx)), ints(theirs(tx)))
    assert repr(ours) == repr(theirs).replace("torch.", "tensor.")


def test_full_range_activations_differ_only_where_torch_saturates():
    x = np.random.default_rng(2).standard_normal((256, 96)).astype(np.float32)
    qx, tx = twin_quantized(x, 0.03, 60)  # 0..255: torch's int16 pair sums may clip
    ours, theirs = twin_modules(nnq.Linear, tnnq.Linear, (96, 40), {}, (40, 96), True, 0.05, 64)
    fraction, _ = mismatch_fraction(ints(ours(qx)), ints(theirs(tx)))
    assert fraction < 0.001  # measured: 2 of 10240 on this draw


def add_by_the_rule(a, za, sa, b, zb, sb, scale, zero_point, relu):
    """Quantized add as torch's vector loop computes it, in float64 so that it rounds the
    same on every CPU: each input dequantized as ``q * s + (-z * s)`` rounded once to
    float32 (a fused multiply-add: the product of two float32s is exact in float64),
    the sum times ``1 / scale`` in float32, rounded half to even, shifted, clamped."""
    def dequantized(q, z, s):
        s = np.float32(s)
        shift = np.float64(np.float32(-z) * s)
        return (q.astype(np.float64) * np.float64(s) + shift).astype(np.float32)

    total = dequantized(a, za, sa) + dequantized(b, zb, sb)
    r = np.rint(total * (np.float32(1.0) / np.float32(scale))) + zero_point
    return np.clip(r, zero_point if relu else 0, 255).astype(np.uint8)


@pytest.mark.parametrize("relu", [False, True])
def test_add_follows_torchs_vector_rule(relu):
    """Our quantized add is torch's vector rule everywhere (``add_by_the_rule``, every
    integer equal). torch itself follows it only where it runs vector code with a fused
    multiply-add: its scalar tail (the last ``n % 64`` elements on some machines), and
    the whole tensor when ATen runs without SIMD (``ATEN_CPU_CAPABILITY=default``),
    dequantize without one and move a near-tie by one now and then. So against torch:
    within 1 everywhere, and equal in nearly all places."""
    rng = np.random.default_rng(3)
    fa = rng.standard_normal((3, 4, 5, 6)).astype(np.float32)
    fb = rng.standard_normal((3, 4, 5, 6)).astype(np.float32) * 2
    a, ta = twin_quantized(fa, 0.031, 70)
    b, tb = twin_quantized(fb, 0.043, 55)
    ours = (nnq.add_relu if relu else nnq.add)(a, b, 0.052, 64)
    theirs = (torch.ops.quantized.add_relu if relu else torch.ops.quantized.add)(
        ta, tb, 0.052, 64
    )
    mine, reference = ints(ours).ravel(), ints(theirs).ravel()
    rule = add_by_the_rule(ints(a).ravel(), 70, 0.031, ints(b).ravel(), 55, 0.043, 0.052, 64, relu)
    assert np.array_equal(mine, rule)
    assert np.abs(mine.astype(np.int64) - reference).max() <= 1
    assert (mine != reference).mean() <= 0.02
    assert (ours.q_scale(), ours.q_zero_point()) == (0.052, 64)


@pytest.mark.parametrize("args", [(3, 2, 1), (2, 2, 0), (3, 1, 1)])
def test_max_pool2d_equals_torchs(args):
    q, t = twin_quantized(RNG.standard_normal((2, 3, 9, 8)).astype(np.float32), 0.05, 60)
    ours, theirs = F.max_pool2d(q, *args), torch.nn.functional.max_pool2d(t, *args)
    assert np.array_equal(ints(ours), ints(theirs))
    assert ours.q_scale() == theirs.q_scale()


@pytest.mark.parametrize("size", [(1, 1), (3, 4), (2, 2), (5, 3)])
def test_adaptive_avg_pool2d_equals_torchs(size):
    q, t = twin_quantized(RNG.standard_normal((4, 8, 7, 9)).astype(np.float32), 0.05, 60)
    ours = F.adaptive_avg_pool2d(q, size)
    theirs = torch.nn.functional.adaptive_avg_pool2d(t, size)
    assert np.array_equal(ints(ours), ints(theirs))


def test_relu_equals_torchs():
    q, t = twin_quantized(RNG.standard_normal((5, 7)).astype(np.float32), 0.05, 60)
    for ours in (tensor.relu(q), F.relu(q), nnq.ReLU()(q), tensor.nn.ReLU()(q)):
        assert np.array_equal(ints(ours), ints(torch.relu(t)))
        assert ours.q_zero_point() == 60
