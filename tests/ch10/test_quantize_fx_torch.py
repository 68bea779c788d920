"""minifx's prepare_fx / convert_fx on torch models, held against torch.ao's, node for node."""

from __future__ import annotations

import warnings

import pytest
import torch
import torch.ao.quantization.quantize_fx as torch_qfx
from torch.ao.quantization import get_default_qconfig_mapping as torch_mapping

import tests.ch10.qhelpers  # noqa: F401  (sets torch's quantized engine to x86)
from minifx.quantization import convert_fx, get_default_qconfig_mapping, prepare_fx
from tests.ch10.quant_zoo import zoo
from tests.ch10.torch_parity import batches as calibration_batches
from tests.ch10.torch_parity import signature

MODELS = zoo()


@pytest.fixture(scope="module", params=sorted(MODELS))
def both(request):
    """(name, ours prepared, torch's prepared, ours converted, torch's converted, batches)."""
    model, shape = MODELS[request.param]
    batches = calibration_batches(shape, count=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = torch_qfx.prepare_fx(model, torch_mapping("x86"), (batches[0],))
        ours = prepare_fx(model, get_default_qconfig_mapping(), (batches[0],))
        prepared_signatures = signature(ours), signature(theirs)
        for batch in batches:
            theirs(batch)
            ours(batch)
        their_modules = dict(theirs.named_modules())
        observers = {
            name: (module.calculate_qparams(), their_modules[name].calculate_qparams())
            for name, module in ours.named_children() if name.startswith("activation_post_process")
        }
        return {
            "name": request.param,
            "prepared": prepared_signatures,
            "observers": observers,
            "converted": (convert_fx(ours), torch_qfx.convert_fx(theirs)),
            "batches": batches,
        }


def test_prepared_graph_matches_torch(both):
    ours, theirs = both["prepared"]
    assert ours == theirs


def test_observers_agree_with_torch(both):
    assert both["observers"], "every model of the zoo has observers"
    for name, ((scale, zp), (their_scale, their_zp)) in both["observers"].items():
        assert abs(scale - float(their_scale)) <= 0.01 * float(their_scale), name
        assert zp == int(their_zp), name


def test_converted_graph_matches_torch(both):
    ours, theirs = both["converted"]
    assert signature(ours) == signature(theirs)


def test_converted_qparams_match_torch(both):
    ours, theirs = both["converted"]
    their_buffers = dict(theirs.named_buffers())
    our_buffers = dict(ours.named_buffers())
    names = [n for n in their_buffers if "_scale_" in n or "_zero_point_" in n]
    assert names and sorted(names) == sorted(n for n in our_buffers if n in names)
    for name in names:
        assert float(our_buffers[name]) == pytest.approx(float(their_buffers[name]), rel=0.01)
    their_modules = dict(theirs.named_modules())
    for name, module in ours.named_modules():
        if hasattr(module, "zero_point") and hasattr(module, "scale"):
            assert type(module) is type(their_modules[name])
            assert module.zero_point == their_modules[name].zero_point, name
            assert module.scale == pytest.approx(their_modules[name].scale, rel=0.01), name


def test_converted_outputs_within_one_step_of_torch(both):
    ours, theirs = both["converted"]
    out_scale = _output_scale(theirs)
    for batch in both["batches"]:
        mine, reference = ours(batch), theirs(batch)
        assert mine.shape == reference.shape
        assert (mine - reference).abs().max().item() <= out_scale * 1.0001


def _output_scale(gm) -> float:
    """The scale of the value the final dequantize reads (a quantized module's output)."""
    output = next(n for n in gm.graph.nodes if n.op == "output")
    dq = output.args[0]
    source = dq.args[0]
    if source.op == "call_module":
        return float(gm.get_submodule(source.target).scale)
    scale_arg = source.args[1] if source.target is torch.quantize_per_tensor else source.args[2]
    return float(getattr(gm, scale_arg.target))  # quantize_per_tensor or quantized.add(_relu)
