"""Ops whose output shares its input's observer (torch's ``_get_share_qparams_op_configs``):
pools, flatten, ReLU6 and hardtanh run on the integers; Dropout has its own observer
(``_get_default_op_configs``). Checked on a small model and on torchvision's mobilenet_v2."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tensor
import tensor.nn.functional as TF
from minifx.quantization import convert_fx, get_default_qconfig_mapping, prepare_fx
from tests.ch07.ch07_models import randomize_batchnorms
from tests.ch10.parity_models import copy_weights, mobilenet_like
from tests.ch10.qhelpers import ints, twin_quantized
from tests.ch10.torch_parity import (
    assert_converted_equal,
    assert_observers_equal,
    assert_prepared_equal,
    output_steps,
    quantize_both,
)


def _small():
    torch.manual_seed(0)
    model = mobilenet_like(torch)
    randomize_batchnorms(model)
    return model.eval()


@pytest.fixture(scope="module", params=["mobilenet_like", "mobilenet_v2"])
def both(request):
    if request.param == "mobilenet_like":
        return quantize_both(_small(), (2, 3, 16, 16), count=3)
    from tests.ch10.torchvision_models import build

    return quantize_both(build("mobilenet_v2"), (1, 3, 64, 64))


def test_prepared_graph_and_shared_observers_match_torch(both):
    assert_prepared_equal(both)


def test_observers_match_torch(both):
    assert_observers_equal(both)


def test_converted_graph_and_qparams_match_torch(both):
    assert_converted_equal(both)


def test_outputs_within_two_steps_of_torch(both):
    assert output_steps(both) <= 2.0001


def test_relu6_and_hardtanh_run_on_the_integers(both):
    ours, _ = both["converted"]
    for node in ours.graph.nodes:
        module = ours.get_submodule(node.target) if node.op == "call_module" else None
        if isinstance(module, torch.nn.Hardtanh) or node.target is torch.nn.functional.hardtanh:
            assert node.args[0].target != "dequantize", node.name


@pytest.mark.parametrize("bounds", [(0.0, 6.0), (-1.0, 2.0), (-0.3, 0.05)])
def test_hardtanh_kernel_gives_torchs_integers(bounds):
    values = np.random.default_rng(3).normal(0, 3, (2, 4, 5, 5)).astype(np.float32)
    ours, theirs = twin_quantized(values, 0.037, 61)
    np.testing.assert_array_equal(
        ints(TF.hardtanh(ours, *bounds)), ints(torch.nn.functional.hardtanh(theirs, *bounds))
    )
    np.testing.assert_array_equal(ints(TF.relu6(ours)), ints(torch.nn.functional.relu6(theirs)))
    assert TF.relu6(ours).q_scale() == ours.q_scale()


def test_tensor_model_quantizes_as_torch_does():
    """The tensor twin through minifx, against torch's model through torch.ao."""
    theirs = _small()
    ours = mobilenet_like(tensor)
    copy_weights(theirs, ours)
    ours.eval()
    result = quantize_both(theirs, (2, 3, 16, 16), count=3)
    prepared = prepare_fx(ours, get_default_qconfig_mapping(), (tensor.zeros(2, 3, 16, 16),))
    for batch in result["batches"]:
        prepared(tensor.from_numpy(batch.numpy()))
    converted = convert_fx(prepared)
    _, torch_converted = result["converted"]
    scale = torch_converted.fc.scale
    for batch in result["batches"]:
        mine = converted(tensor.from_numpy(batch.numpy())).numpy()
        assert np.abs(mine - torch_converted(batch).numpy()).max() <= 2.0001 * scale
