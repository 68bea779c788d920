"""Published models through the adapter: minifx traces them as torch.fx does.

One model per torchvision classification family, the smallest of each (VGG's
with batch norm, which has every layer of the plain one), and a few of
timm's, built with random weights (nothing is downloaded), in eval mode, on
one small input. For each, minifx and torch.fx must print the same graph and
the same code (but for the documented ``wrap(...)`` lines above ``forward``),
and both GraphModules must compute what the model computes. The zoo keeps
every family covered within the time of one test file; the larger variants
run the same code with more blocks or wider layers.

``python -m minifx compare torchvision.models:resnet18`` is tested with the
command's other tests (tests/ch09/test_compare_cli.py).
"""

import copy

import pytest
import torch
import torch.fx

import minifx
from minifx.compare import diff_rows, output_difference
from tests.published import build

# name -> (builder keyword arguments, input side): the smallest input each model takes.
TORCHVISION = {
    "alexnet": ({}, 64),
    "convnext_tiny": ({}, 32),
    "densenet121": ({}, 32),
    "efficientnet_b0": ({}, 32),
    "efficientnet_v2_s": ({}, 32),
    "googlenet": ({}, 32),
    "inception_v3": ({}, 75),  # its stem needs 75 pixels
    "maxvit_t": ({}, 224),  # 7x7 windows at a 32nd of the input
    "mnasnet0_5": ({}, 32),
    "mobilenet_v2": ({}, 32),
    "mobilenet_v3_small": ({}, 32),
    "regnet_x_400mf": ({}, 32),
    "regnet_y_400mf": ({}, 32),
    "resnet18": ({}, 32),
    "resnext50_32x4d": ({}, 32),
    "shufflenet_v2_x0_5": ({}, 32),
    "squeezenet1_1": ({}, 32),
    "swin_t": ({}, 32),
    "swin_v2_t": ({}, 32),
    "vgg11_bn": ({}, 32),
    "vit_b_16": ({"image_size": 32}, 32),
    "wide_resnet50_2": ({}, 32),
}
TIMM = {
    "timm:resnet10t": ({}, 32),
    "timm:deit_tiny_patch16_224": ({"img_size": 32}, 32),
    "timm:convnext_atto": ({}, 32),
    "timm:edgenext_xx_small": ({}, 64),
    "timm:lcnet_050": ({}, 32),
}
ZOO = TORCHVISION | TIMM

# googlenet and inception_v3 say that their default initialisation will change.
pytestmark = pytest.mark.filterwarnings("ignore:The default weight initialization:FutureWarning")


def model_and_input(name):
    kwargs, side = ZOO[name]
    model = build(name, **kwargs)
    return model, torch.randn(1, 3, side, side)


def only_known_differences(ours, theirs):
    """The rows where the two texts differ other than by a documented line."""
    return [row for row in diff_rows(ours, theirs) if row.mark not in " ~"]


# What torchvision registers with torch.fx.wrap, by the models here that call it.
WRAPPED = {
    "convnext_tiny": {"stochastic_depth"},
    "efficientnet_b0": {"stochastic_depth"},
    "swin_t": {"_patch_merging_pad", "_get_relative_position_bias", "shifted_window_attention",
               "stochastic_depth"},  # swin's branch on sizes inside
}


def wrapped_names(graph, wrapped):
    return {n.target.__name__ for n in graph.nodes if wrapped(n)}


@pytest.mark.parametrize("name", ZOO)
def test_minifx_traces_it_as_torch_fx_does(name):
    """Each tracer gets the model as built: both keep the tensor constants they meet on
    the root they trace (``_tensor_constant0``, ...), so minifx traces a copy.

    A function torchvision wraps for torch.fx is one node, marked as wrapped:
    torch.fx's graph calls a torchvision function only where it wrapped one.
    """
    model, x = model_and_input(name)
    ours = minifx.symbolic_trace(copy.deepcopy(model))
    theirs = torch.fx.symbolic_trace(model)
    assert str(ours.graph) == str(theirs.graph)
    assert only_known_differences(ours.code, theirs.code) == []
    wrapped = wrapped_names(ours.graph, lambda n: n.meta.get("is_wrapped"))
    assert wrapped == wrapped_names(theirs.graph, lambda n: n.op == "call_function" and (
        n.target.__module__ or "").startswith("torchvision."))
    assert wrapped == WRAPPED.get(name, wrapped)
    with torch.no_grad():
        expected = model(x)
        assert output_difference(ours(x), expected) is None
        assert output_difference(theirs(x), expected) is None
