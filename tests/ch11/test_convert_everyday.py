"""The blocks of published models convert to tensor and compute what torch computes.

Each model is written here in the shape of a published block (MobileNetV3's
inverted residual with squeeze-excitation, EfficientNet's MBConv, a ViT encoder
block, timm's attention that calls scaled_dot_product_attention), with random
weights, in eval mode. The converted model's code names the tensor twins, and
its outputs are torch's within float32 tolerance.
"""

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

import tensor
from minifx.convert import ConversionError, torch_to_tensor
from tests.helpers import check


def run_both(model, *inputs):
    converted = torch_to_tensor(model)
    ours = converted(*(tensor.from_numpy(x.numpy().copy()) for x in inputs))
    with torch.no_grad():
        theirs = model(*inputs)
    return converted, ours, theirs


class SqueezeExcite(nn.Module):
    def __init__(self, channels, squeezed, act=nn.ReLU, gate=nn.Hardsigmoid):
        super().__init__()
        self.fc1 = nn.Conv2d(channels, squeezed, 1)
        self.act = act()
        self.fc2 = nn.Conv2d(squeezed, channels, 1)
        self.gate = gate()

    def forward(self, x):
        s = F.adaptive_avg_pool2d(x, 1)
        return x * self.gate(self.fc2(self.act(self.fc1(s))))


class InvertedResidualSE(nn.Module):
    """MobileNetV3's block: expand, depthwise, squeeze-excite, project, add."""

    def __init__(self, channels=8, expanded=24):
        super().__init__()
        self.expand = nn.Sequential(nn.Conv2d(channels, expanded, 1, bias=False),
                                    nn.BatchNorm2d(expanded), nn.Hardswish())
        self.depthwise = nn.Sequential(
            nn.Conv2d(expanded, expanded, 3, padding=1, groups=expanded, bias=False),
            nn.BatchNorm2d(expanded), nn.Hardswish(inplace=True))
        self.se = SqueezeExcite(expanded, 8)
        self.project = nn.Sequential(nn.Conv2d(expanded, channels, 1, bias=False),
                                     nn.BatchNorm2d(channels))

    def forward(self, x):
        y = self.project(self.se(self.depthwise(self.expand(x))))
        return F.hardswish(x + y) + F.hardsigmoid(y) - F.relu6(y) * F.hardtanh(x, -0.5, 2.0)


class MBConv(nn.Module):
    """EfficientNet's block: SiLU everywhere, a sigmoid gate."""

    def __init__(self, channels=8, expanded=32):
        super().__init__()
        self.expand = nn.Conv2d(channels, expanded, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(expanded)
        self.act = nn.SiLU(inplace=True)
        self.depthwise = nn.Conv2d(expanded, expanded, 3, padding=1, groups=expanded)
        self.se = SqueezeExcite(expanded, 4, act=nn.SiLU, gate=nn.Sigmoid)
        self.project = nn.Conv2d(expanded, channels, 1)
        self.stem_act = nn.ReLU6()

    def forward(self, x):
        y = self.act(self.bn1(self.expand(self.stem_act(x))))
        y = self.se(F.silu(self.depthwise(y)))
        return x + self.project(y)


class EncoderBlock(nn.Module):
    """torchvision's ViT encoder block: pre-norm attention and MLP, both residual."""

    def __init__(self, dim=16, heads=4, batch_first=True):
        super().__init__()
        self.ln_1 = nn.LayerNorm(dim)
        self.self_attention = nn.MultiheadAttention(dim, heads, dropout=0.1,
                                                    batch_first=batch_first)
        self.dropout = nn.Dropout(0.1)
        self.ln_2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        y = self.ln_1(x)
        y, _ = self.self_attention(y, y, y, need_weights=False)
        x = x + self.dropout(y)
        return x + self.mlp(self.ln_2(x))


class TimmAttention(nn.Module):
    """timm's Attention: one qkv Linear, heads split by reshape, F.scaled_dot_product_attention."""

    def __init__(self, dim=16, heads=4, causal=False):
        super().__init__()
        self.heads, self.causal = heads, causal
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        x = F.scaled_dot_product_attention(q, k, v, dropout_p=0.0, is_causal=self.causal)
        return self.proj(x.transpose(1, 2).reshape(B, N, C))


def randomised(model):
    """Random BatchNorm statistics too (fresh ones are 0 and 1), then eval mode."""
    torch.manual_seed(0)
    for module in model.modules():
        if isinstance(module, nn.BatchNorm2d):
            module.running_mean.uniform_(-0.5, 0.5)
            module.running_var.uniform_(0.5, 1.5)
            nn.init.uniform_(module.weight, 0.5, 1.5)
    return model.eval()


@pytest.mark.parametrize("make, shape", [
    (InvertedResidualSE, (2, 8, 7, 7)),
    (MBConv, (2, 8, 6, 6)),
    (lambda: EncoderBlock(batch_first=True), (2, 5, 16)),
    (lambda: EncoderBlock(batch_first=False), (5, 2, 16)),
    (TimmAttention, (2, 5, 16)),
    (lambda: TimmAttention(causal=True), (2, 5, 16)),
], ids=["inverted-residual-se", "mbconv", "vit-block", "vit-block-seq-first", "timm-attention",
        "timm-causal"])
def test_published_blocks_convert_and_match_torch(make, shape):
    torch.manual_seed(1)
    model = randomised(make())
    x = torch.randn(shape) * 3  # past the corners of the hard activations
    _, ours, theirs = run_both(model, x)
    check(ours, theirs, rtol=1e-4, atol=1e-5)


def test_converted_code_names_the_tensor_twins():
    converted = torch_to_tensor(randomised(InvertedResidualSE()))
    for name in ("hardswish", "hardsigmoid", "relu6", "hardtanh"):
        assert f"tensor.nn.functional.{name}(" in converted.code, name
    act, inplace_act = converted.get_submodule("expand.2"), converted.get_submodule("depthwise.2")
    assert type(act) is tensor.nn.Hardswish and type(inplace_act) is tensor.nn.Hardswish
    assert act.inplace is False and inplace_act.inplace is True
    assert type(converted.get_submodule("se.gate")) is tensor.nn.Hardsigmoid
    converted = torch_to_tensor(TimmAttention())
    assert "tensor.nn.functional.scaled_dot_product_attention(" in converted.code
    assert type(torch_to_tensor(MBConv()).get_submodule("act")) is tensor.nn.SiLU


@pytest.mark.parametrize("kwargs", [
    {}, {"bias": False}, {"kdim": 6, "vdim": 10}, {"add_bias_kv": True, "add_zero_attn": True},
    {"batch_first": True, "dropout": 0.2},
])
def test_multihead_attention_converts_with_its_settings_and_weights(kwargs):
    class Cross(nn.Module):
        def __init__(self):
            super().__init__()
            self.attn = nn.MultiheadAttention(16, 4, **kwargs)

        def forward(self, q, k, v, padding):
            out, weights = self.attn(q, k, v, key_padding_mask=padding)
            return out, weights

    torch.manual_seed(2)
    model = Cross().eval()
    if model.attn.bias_k is not None:
        nn.init.normal_(model.attn.bias_k)
    batch_first = kwargs.get("batch_first", False)

    def sized(n, features):
        return torch.randn((2, n, features) if batch_first else (n, 2, features))

    q, k, v = sized(3, 16), sized(5, kwargs.get("kdim", 16)), sized(5, kwargs.get("vdim", 16))
    padding = torch.tensor([[False] * 4 + [True], [False] * 5])
    converted, (out, weights), (expected, expected_weights) = run_both(model, q, k, v, padding)
    twin = converted.attn
    assert type(twin) is tensor.nn.MultiheadAttention and not twin.training
    assert repr(twin) == repr(model.attn).replace("torch", "tensor")
    for name, value in model.attn.state_dict().items():
        np.testing.assert_array_equal(twin.state_dict()[name].numpy(), value.numpy())
    for name in ("kdim", "vdim", "dropout", "batch_first", "add_zero_attn"):
        assert getattr(twin, name) == getattr(model.attn, name), name
    check(out, expected, rtol=1e-4, atol=1e-5)
    check(weights, expected_weights, rtol=1e-4, atol=1e-5)


def test_pad_converts():
    class Pad(nn.Module):
        def forward(self, x):
            x = F.pad(x, (0, 0, 0, 1, 0, 1))  # as swin pads (B, H, W, C) to whole windows
            return torch.nn.functional.pad(x, [1, -1], value=2.0)

    x = torch.randn(2, 3, 5, 4)
    _, ours, theirs = run_both(Pad(), x)
    check(ours, theirs, exact=True)


class StillUnsupported(nn.Module):
    """Everyday-looking, but with ops that tensor still lacks beside ones it now has."""

    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(8, 2, batch_first=True)
        self.act = nn.Mish()
        self.hard = nn.Hardswish()

    def forward(self, x):
        y, _ = self.attn(x, x, x)
        y = torch.roll(self.act(y), shifts=1, dims=1)  # marker: roll
        y = F.pad(y, (1, 1), mode="reflect")
        z = y.masked_fill(y > 0, 0.0)  # marker: masked_fill
        return self.hard(F.silu(z))


def test_what_still_cannot_convert_is_listed_in_full():
    with pytest.raises(ConversionError) as caught:
        torch_to_tensor(StillUnsupported())
    whats = [p.what for p in caught.value.problems]
    assert whats == ["call_module act (Mish)", "call_function torch.roll",
                     "call_method masked_fill"]
    message = str(caught.value)
    assert message.startswith("cannot convert StillUnsupported to tensor: 3 things to change")
    assert all(p.filename == __file__ for p in caught.value.problems)
    assert "tensor.cat" in caught.value.problems[1].hint  # roll's advice
    assert "tanh" in caught.value.problems[0].hint  # Mish's


def test_a_pad_mode_tensor_lacks_fails_by_name_when_run():
    class Reflect(nn.Module):
        def forward(self, x):
            return F.pad(x, (1, 1), mode="reflect")

    converted = torch_to_tensor(Reflect())
    with pytest.raises(NotImplementedError, match="mode='reflect'"):
        converted(tensor.randn(2, 3, 4))


def test_a_layer_the_twin_lacks_is_refused_by_name():
    class Extra(nn.Module):
        def __init__(self):
            super().__init__()
            self.attn = nn.MultiheadAttention(8, 2)
            self.attn.gate = nn.Linear(8, 8)  # a layer torch's forward never uses

        def forward(self, x):
            return self.attn(x, x, x)[0]

    with pytest.raises(ConversionError) as caught:
        torch_to_tensor(Extra())
    (problem,) = caught.value.problems
    assert problem.what == "call_module attn (MultiheadAttention)"
    assert "'gate'" in problem.reason and "'out_proj'" in problem.reason
