"""torchvision's models for the chapter 10 tests, built with random weights (never downloaded)."""

from __future__ import annotations

import torch

from tests.published import import_torchvision

import_torchvision()  # beside the CPU torch: see minifx.frameworks.published

import torchvision.models as models  # noqa: E402, I001
import torchvision.models.quantization as quantizable  # noqa: E402

BUILDERS = {
    "mobilenet_v2": models.mobilenet_v2,
    "mobilenet_v3_large": models.mobilenet_v3_large,
    "quantizable_resnet18": quantizable.resnet18,
    "quantizable_mobilenet_v2": quantizable.mobilenet_v2,
    "quantizable_mobilenet_v3_large": quantizable.mobilenet_v3_large,
    "quantizable_shufflenet_v2_x0_5": quantizable.shufflenet_v2_x0_5,
    "quantizable_googlenet": quantizable.googlenet,
}
_OPTIONS = {"quantizable_googlenet": {"aux_logits": False, "init_weights": False}}


def build(name: str) -> torch.nn.Module:
    """The model ``name`` with random weights and random BatchNorm statistics, in eval mode."""
    torch.manual_seed(0)
    model = BUILDERS[name](weights=None, **_OPTIONS.get(name, {}))
    generator = torch.Generator().manual_seed(1)
    for module in model.modules():
        if isinstance(module, torch.nn.BatchNorm2d):
            n = module.num_features
            module.running_mean.copy_(torch.rand(n, generator=generator) - 0.5)
            module.running_var.copy_(torch.rand(n, generator=generator) * 1.5 + 0.5)
    return model.eval()
