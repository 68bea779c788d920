"""Conv+BN fusion and a small ResNet (tests/models.py, written once for both), against torch."""

import numpy as np
import pytest
import torch
import torch.nn.utils.fusion as torch_fusion

import tensor
import tensor.nn as nn
from tensor.nn.utils.fusion import fuse_conv_bn_eval, fuse_conv_bn_weights
from tests.ch00.nn_helpers import check, ours, randn, twin
from tests.models import resnet

# Every test runs once per available backend (the `backend` fixture in conftest.py).
pytestmark = pytest.mark.usefixtures("backend")


def trained_bn(lib, channels):
    """A BatchNorm with non-trivial running statistics and affine parameters."""
    bn = lib.BatchNorm2d(channels)
    bn.train()
    data = randn(8, channels, 4, 4, seed=3) * 2 + 1
    bn(ours(data) if lib is nn else torch.from_numpy(data))
    return bn


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("groups", [1, 2])
def test_fuse_conv_bn_eval_matches_torch(bias, groups):
    conv, torch_conv = twin(nn.Conv2d(4, 6, 3, padding=1, groups=groups, bias=bias),
                            torch.nn.Conv2d(4, 6, 3, padding=1, groups=groups, bias=bias))
    torch_bn = trained_bn(torch.nn, 6)
    bn, _ = twin(nn.BatchNorm2d(6), torch_bn)
    for m in (conv, bn, torch_conv, torch_bn):
        m.eval()
    fused = fuse_conv_bn_eval(conv, bn)
    torch_fused = torch_fusion.fuse_conv_bn_eval(torch_conv, torch_bn)
    assert isinstance(fused, nn.Conv2d) and fused is not conv
    assert isinstance(fused.weight, nn.Parameter) and isinstance(fused.bias, nn.Parameter)
    check(fused.weight, torch_fused.weight)
    check(fused.bias, torch_fused.bias)
    x = randn(2, 4, 7, 7)
    check(fused(ours(x)), torch_bn(torch_conv(torch.from_numpy(x))), 1e-4)
    check(conv(ours(x)), torch_conv(torch.from_numpy(x)), 1e-4)  # the original is untouched


def test_fuse_conv_bn_weights_without_affine():
    w, mean, var = ours(randn(3, 2, 1, 1)), ours(randn(3, seed=1)), ours(np.ones(3, np.float32))
    fused_w, fused_b = fuse_conv_bn_weights(w, None, mean, var, 0.0, None, None)
    np.testing.assert_allclose(fused_w._array, w._array)
    np.testing.assert_allclose(fused_b._array, -mean._array)


def test_fusion_refuses_training_mode():
    with pytest.raises(AssertionError, match="eval"):
        fuse_conv_bn_eval(nn.Conv2d(1, 1, 1), nn.BatchNorm2d(1))


def make_resnet(lib):
    """The shared ResNet, small: the stem, a basic block, a downsampling one, the head."""
    return resnet(lib, (1, 1), num_classes=10, width=8)


@pytest.mark.parametrize("mode", ["train", "eval"])
def test_tiny_resnet_matches_torch(mode):
    tensor.manual_seed(0)
    torch.manual_seed(0)
    mine, torchs = twin(make_resnet(nn), make_resnet(torch.nn))
    assert repr(mine) == repr(torchs)
    assert [n for n, _ in mine.named_parameters()] == [n for n, _ in torchs.named_parameters()]
    getattr(mine, mode)()
    getattr(torchs, mode)()
    x = randn(2, 3, 32, 32)
    check(mine(ours(x)), torchs(torch.from_numpy(x)), 1e-4)
    for key, value in torchs.state_dict().items():
        check(mine.state_dict()[key], value, 1e-4)
