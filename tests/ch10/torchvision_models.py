"""torchvision's models for the chapter 10 tests, built with random weights (never downloaded)."""

from __future__ import annotations

import contextlib

import torch
import torch.library


@contextlib.contextmanager
def _fake_kernels_only_for_loaded_ops():
    # PyPI's torchvision wheel is a CUDA build whose C++ ops (torchvision::nms, ...) do not
    # load with the CPU torch; importing torchvision then fails in _meta_registrations.py,
    # which registers fake kernels for nms and qnms with torch.library.register_fake (its
    # other ops are skipped by torchvision itself when _C is missing). While torchvision is
    # imported, register_fake passes over torchvision ops that do not exist; the
    # classification models never call them.
    original = torch.library.register_fake

    def register_fake(op, *args, **kwargs):
        if isinstance(op, str) and op.startswith("torchvision::"):
            name = op.split("::", 1)[1].split(".")[0]
            if not hasattr(torch.ops.torchvision, name):
                return lambda fn=None: fn
        return original(op, *args, **kwargs)

    torch.library.register_fake = register_fake
    try:
        yield
    finally:
        torch.library.register_fake = original


with _fake_kernels_only_for_loaded_ops():
    import torchvision  # noqa: F401

import torchvision.models as models  # noqa: E402
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
