"""Fixed-qparams ops (hardsigmoid, sigmoid, tanh: torch's ``_get_fixed_qparams_op_configs``),
Hardswish with an observer of its own (``_get_default_op_configs``) and ``mul`` of two tensors
(``_get_binary_op_configs``) stay in integers, as in torch; checked on a small
squeeze-excitation model and on torchvision's mobilenet_v3_large."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tensor
import tensor.nn.functional as TF
import tensor.nn.quantized as nnq
from minifx.quantization import convert_fx, get_default_qconfig_mapping, prepare_fx
from minifx.quantization.observer import FixedQParamsObserver
from tests.ch10.parity_models import copy_weights, squeeze_excite_like
from tests.ch10.qhelpers import ints, twin_quantized
from tests.ch10.torch_parity import (
    assert_converted_equal,
    assert_observers_equal,
    assert_prepared_equal,
    output_steps,
    quantize_both,
)

SHAPE = (2, 3, 12, 12)


def _small():
    torch.manual_seed(0)
    return squeeze_excite_like(torch).eval()


@pytest.fixture(scope="module", params=["squeeze_excite_like", "mobilenet_v3_large"])
def both(request):
    if request.param == "squeeze_excite_like":
        return quantize_both(_small(), SHAPE, count=3)
    from tests.ch10.torchvision_models import build

    return quantize_both(build("mobilenet_v3_large"), (1, 3, 64, 64))


def test_prepared_graph_and_shared_observers_match_torch(both):
    assert_prepared_equal(both)


def test_observers_match_torch(both):
    assert_observers_equal(both)


def test_converted_graph_and_qparams_match_torch(both):
    assert_converted_equal(both)


def test_outputs_within_two_steps_of_torch(both):
    assert output_steps(both) <= 2.0001


def test_no_float_island_is_left(both):
    """Every dequantize but the last feeds the output: nothing runs in float in between."""
    ours, _ = both["converted"]
    dequantized = [n for n in ours.graph.nodes if n.target == "dequantize"]
    assert len(dequantized) == 1 and next(iter(dequantized[0].users)).op == "output"


def test_fixed_observer_gives_the_range_qparams():
    observer = FixedQParamsObserver(scale=1.0 / 256, zero_point=0)
    observer.observe(np.array([-5.0, 7.0], np.float32))  # data does not move them
    assert observer.calculate_qparams() == (1.0 / 256, 0)


@pytest.mark.parametrize("name", ["hardsigmoid", "sigmoid", "tanh"])
def test_fixed_qparams_kernels_give_torchs_integers(name):
    values = np.random.default_rng(0).normal(0, 3, (2, 8, 9, 9)).astype(np.float32)
    ours, theirs = twin_quantized(values, 0.05, 120)
    op = {"hardsigmoid": (TF.hardsigmoid, torch.nn.functional.hardsigmoid),
          "sigmoid": (tensor.sigmoid, torch.sigmoid), "tanh": (tensor.tanh, torch.tanh)}[name]
    mine, reference = op[0](ours), op[1](theirs)
    assert (mine.q_scale(), mine.q_zero_point()) == (reference.q_scale(),
                                                     reference.q_zero_point())
    np.testing.assert_array_equal(ints(mine), ints(reference))


def test_mul_kernel_gives_torchs_integers():
    rng = np.random.default_rng(1)
    ours_a, theirs_a = twin_quantized(rng.normal(0, 3, (2, 8, 5, 5)).astype(np.float32),
                                      0.05, 120)
    ours_b, theirs_b = twin_quantized(rng.normal(0, 1, (2, 8, 1, 1)).astype(np.float32),
                                      0.01, 128)
    np.testing.assert_array_equal(ints(nnq.mul(ours_a, ours_b, 0.03, 100)),
                                  ints(torch.ops.quantized.mul(theirs_a, theirs_b, 0.03, 100)))
    np.testing.assert_array_equal(
        ints(nnq.mul_relu(ours_a, ours_b, 0.03, 100)),
        ints(torch.ops.quantized.mul_relu(theirs_a, theirs_b, 0.03, 100)),
    )


def hardswish_by_the_rule(q, in_scale, in_zp, out_scale, out_zp):
    """torch's vector rule, in float64 where it fuses, so the same on every CPU: dequantize
    as ``q * s + (-zp * s)`` rounded once to float32, ``x * relu6(x + 3) / 6`` in
    float32, times ``float32(1 / out_scale)``, rounded half to even, shifted, clamped."""
    f32 = np.float32
    shift = np.float64(f32(in_scale) * f32(-in_zp))
    x = (q.astype(np.float64) * np.float64(f32(in_scale)) + shift).astype(f32)
    y = x * np.minimum(np.maximum(x + f32(3), f32(0)), f32(6)) / f32(6)
    return np.clip(np.rint(y * f32(1.0 / out_scale)) + out_zp, 0, 255).astype(np.uint8)


@pytest.mark.parametrize("qparams", [(0.05, 120, 0.04, 10), (0.031, 77, 0.027, 3),
                                     (0.013, 140, 0.011, 30)])
def test_hardswish_kernel_follows_torchs_vector_rule(qparams):
    """Ours is torch's vector rule everywhere (every integer equal to
    ``hardswish_by_the_rule``). torch follows it where it runs vector code with a fused
    multiply-add; its scalar tail (the last size-mod-SIMD-width elements) and the whole
    tensor when ATen runs without SIMD (``ATEN_CPU_CAPABILITY=default``) dequantize
    without one and can round a near-tie one step the other way. So against torch:
    within 1 step everywhere, and equal in nearly all places."""
    in_scale, in_zp, out_scale, out_zp = qparams
    values = np.random.default_rng(2).normal(0, 3, (2, 8, 8, 8)).astype(np.float32)
    ours, theirs = twin_quantized(values, in_scale, in_zp)
    mine = ints(nnq.Hardswish(out_scale, out_zp)(ours))
    reference = ints(torch.ao.nn.quantized.Hardswish(out_scale, out_zp)(theirs))
    rule = hardswish_by_the_rule(ints(ours), in_scale, in_zp, out_scale, out_zp)
    np.testing.assert_array_equal(mine, rule)
    assert np.abs(mine.astype(np.int64) - reference).max() <= 1
    assert (mine != reference).mean() <= 0.02


def test_tensor_model_quantizes_as_torch_does():
    theirs = _small()
    ours = squeeze_excite_like(tensor)
    copy_weights(theirs, ours)
    result = quantize_both(theirs, SHAPE, count=3)
    prepared = prepare_fx(ours.eval(), get_default_qconfig_mapping(), (tensor.zeros(*SHAPE),))
    for batch in result["batches"]:
        prepared(tensor.from_numpy(batch.numpy()))
    converted = convert_fx(prepared)
    _, torch_converted = result["converted"]
    out = torch_converted.graph.find_nodes(op="call_function", target=torch.ops.quantized.mul)
    scale = float(getattr(torch_converted, out[-1].args[2].target))
    for batch in result["batches"]:
        mine = converted(tensor.from_numpy(batch.numpy())).numpy()
        assert np.abs(mine - torch_converted(batch).numpy()).max() <= 2.0001 * scale
