"""Published models convert to tensor and compute what torch computes.

torchvision's and timm's models as their authors wrote them, built with random
weights (nothing is downloaded), in eval mode, on one small input: the
everyday ops (SiLU, Hardswish, Hardsigmoid, attention) and the functions
torch.fx records whole (``stochastic_depth``, Swin's window attention and its
helpers, through ``minifx.convert.published``) all have tensor twins.

A freshly built model's classifier is often initialised to zero, which would
make every output 0 and the comparison empty, so each parameter and running
statistic is moved by a little noise first.
"""

import numpy as np
import pytest
import torch

import tensor
from minifx.convert import torch_to_tensor
from minifx.convert.published import stochastic_depth
from tests.published import build

# name -> (builder keyword arguments, input side)
MODELS = {
    "mobilenet_v3_small": ({}, 64),
    "efficientnet_b0": ({}, 64),
    "convnext_tiny": ({}, 32),
    "vit_b_16": ({"image_size": 32}, 32),
    "swin_t": ({}, 64),  # 16x16 patches: windows of 7 padded to 21, shifted by 3
    "swin_v2_t": ({}, 64),  # cosine attention, windows of 8, shifted by 4
    "timm:deit_tiny_patch16_224": ({"img_size": 32}, 32),
}


def randomised(model: torch.nn.Module) -> torch.nn.Module:
    """The model with every parameter and running statistic moved by some noise."""
    generator = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn(p.shape, generator=generator) * 0.05)
        for name, b in model.named_buffers():
            if b.is_floating_point() and name.endswith("running_var"):
                b.mul_(1 + torch.rand(b.shape, generator=generator))
            elif b.is_floating_point() and name.endswith("running_mean"):
                b.add_(torch.randn(b.shape, generator=generator) * 0.05)
    return model


@pytest.mark.parametrize("name", list(MODELS))
def test_a_published_model_converts_and_agrees(name):
    kwargs, side = MODELS[name]
    model = randomised(build(name, **kwargs))
    x = torch.randn(2, 3, side, side, generator=torch.Generator().manual_seed(0))
    converted = torch_to_tensor(model, (x,))
    assert isinstance(converted, tensor.nn.Module)
    with torch.no_grad():
        expected = model(x).numpy()
    actual = converted(tensor.from_numpy(x.numpy().copy())).numpy()
    assert np.abs(expected).max() > 1e-2  # a comparison of something
    scale = np.abs(expected).max()
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-5 * scale)


def test_the_functions_torch_fx_records_whole_are_twinned_not_traced_into():
    model = build("swin_t")
    code = torch_to_tensor(model, (torch.randn(1, 3, 64, 64),)).code
    for twin in ("shifted_window_attention", "patch_merging_pad", "relative_position_bias",
                 "stochastic_depth"):
        assert f"minifx.convert.published.{twin}(" in code.replace("minifx_convert_published_",
                                                                    "minifx.convert.published.")
    assert "torchvision" not in code


def test_stochastic_depth_in_training_drops_whole_rows_and_scales_the_rest():
    x = tensor.ones(400, 3)
    assert stochastic_depth(x, 0.3, "row", training=False) is x
    assert stochastic_depth(x, 0.0, "row", training=True) is x
    out = stochastic_depth(x, 0.25, "row", training=True).numpy()
    kept = out[:, 0] > 0
    assert (out == out[:, :1]).all()  # each row dropped or kept whole
    np.testing.assert_allclose(out[kept], 1 / 0.75, rtol=1e-6)  # the survivors scaled up
    assert (out[~kept] == 0).all() and 0.6 < kept.mean() < 0.9  # about three in four kept
    assert (stochastic_depth(x, 1.0, "batch", training=True).numpy() == 0).all()
    with pytest.raises(ValueError, match="mode"):
        stochastic_depth(x, 0.5, "column")
