"""torchvision's quantizable models hold their add, cat and mul in ``FloatFunctional`` modules;
prepare_fx swaps each for its FX twin, whose methods trace as ``torch.add`` and the like, as
torch's prepare_fx does. The five models' prepared and converted graphs, qparams and outputs
are held against torch.ao's."""

from __future__ import annotations

import pytest
import torch
from torch.ao.nn.quantized import FloatFunctional

from minifx.quantization import get_default_qconfig_mapping, prepare_fx
from tests.ch10.torch_parity import (
    assert_converted_equal,
    assert_observers_equal,
    assert_prepared_equal,
    output_steps,
    quantize_both,
)

MODELS = [
    "quantizable_resnet18",
    "quantizable_mobilenet_v2",
    "quantizable_mobilenet_v3_large",
    "quantizable_shufflenet_v2_x0_5",
    "quantizable_googlenet",
]


@pytest.fixture(scope="module", params=MODELS)
def both(request):
    from tests.ch10.torchvision_models import build

    return quantize_both(build(request.param), (1, 3, 64, 64))


def test_prepared_graph_and_shared_observers_match_torch(both):
    assert_prepared_equal(both)


def test_observers_match_torch(both):
    assert_observers_equal(both)


def test_converted_graph_and_qparams_match_torch(both):
    assert_converted_equal(both)


def test_outputs_within_two_steps_of_torch(both):
    assert output_steps(both) <= 2.0001


class Residual(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(4, 4, 3, padding=1)
        self.skip = FloatFunctional()

    def forward(self, x):
        return self.skip.add_relu(self.conv(x), x)


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.block = Residual()
        self.join = FloatFunctional()

    def forward(self, x):
        y = self.block(x)
        return self.join.cat([y, self.join.mul(y, x)], 1)


def test_float_functional_traces_as_functions_named_after_its_module():
    model = Net().eval()
    prepared = prepare_fx(model, get_default_qconfig_mapping(), (torch.randn(1, 4, 6, 6),))
    functions = [n.target for n in prepared.graph.nodes if n.op == "call_function"]
    assert functions == [torch.add, torch.nn.functional.relu, torch.mul, torch.cat]
    assert isinstance(model.join, FloatFunctional)  # the user's model is not changed
    result = quantize_both(Net().eval(), (2, 4, 6, 6), count=3)
    assert_prepared_equal(result)
    assert_converted_equal(result)
    converted, _ = result["converted"]
    assert "block_scale_0" in dict(converted.named_buffers())  # add_relu inside block
