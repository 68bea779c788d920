"""Published models through the adapter: minifx traces them as torch.fx does.

One model per torchvision classification family, the smallest of each, and
a few of timm's, built with random weights (nothing is downloaded), in eval
mode, on one small input. For each, minifx and torch.fx must print the same
graph and the same code (but for the documented ``wrap(...)`` lines above
``forward``), and both GraphModules must compute what the model computes.
The zoo keeps every family covered within the time of one test file; the
larger variants run the same code with more blocks or wider layers.
"""

import copy
import subprocess
import sys
import tempfile

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
    "vgg11": ({}, 32),
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


@pytest.mark.parametrize("name", ZOO)
def test_minifx_traces_it_as_torch_fx_does(name):
    model, x = model_and_input(name)
    ours = minifx.symbolic_trace(copy.deepcopy(model))
    theirs = torch.fx.symbolic_trace(model)
    assert str(ours.graph) == str(theirs.graph)
    assert only_known_differences(ours.code, theirs.code) == []
    with torch.no_grad():
        expected = model(x)
        assert output_difference(ours(x), expected) is None
        assert output_difference(theirs(x), expected) is None


@pytest.mark.parametrize(("name", "wrapped"), [
    ("convnext_tiny", {"stochastic_depth"}),
    ("efficientnet_b0", {"stochastic_depth"}),
    ("swin_t", {"_patch_merging_pad", "_get_relative_position_bias",
                "shifted_window_attention", "stochastic_depth"}),
])
def test_the_functions_torchvision_wraps_for_torch_fx_are_one_node_each(name, wrapped):
    """torchvision registers them with torch.fx.wrap; swin's branch on sizes inside."""
    model, _ = model_and_input(name)
    nodes = [n for n in minifx.symbolic_trace(model).graph.nodes if n.meta.get("is_wrapped")]
    assert {n.target.__name__ for n in nodes} == wrapped
    assert all(n.target.__module__.startswith("torchvision.") for n in nodes)


def test_compare_builds_a_torchvision_model_from_its_builder():
    """``python -m minifx compare torchvision.models:resnet18``, as a user types it: in a
    fresh process, from another folder, where compare itself makes torchvision
    importable beside the CPU torch (minifx.frameworks.published)."""
    done = subprocess.run(
        [sys.executable, "-m", "minifx", "compare", "torchvision.models:resnet18",
         "--input-shape", "1,3,32,32"],
        capture_output=True, text=True, cwd=tempfile.gettempdir(), timeout=600,
    )
    printed = done.stdout
    assert done.returncode == 0, printed + done.stderr
    assert "== graph: same ==" in printed and "== outputs: same ==" in printed
    assert "self.layer1" in printed  # resnet18's own submodules, built by the builder
    assert printed.splitlines()[-1] == "minifx and torch.fx agree"
