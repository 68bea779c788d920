"""The chapter 11 zoo: torch models to convert to ``tensor``, written in plain torch.

ResNet-18 and ResNet-50 come from tests/models.py (written once over either
library, torchvision's layouts); the rest are here: an MLP, a CNN with
BatchNorm and pooling, a ViT encoder block and a small ViT, a GPT-style
decoder block and a tiny GPT, and models that mix functional calls with
method calls. ``benchmarks/convert.py`` times ``small_vit`` from here.

Every builder seeds torch and returns ``(model, example_inputs)``.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from tests.ch07.ch07_models import randomize_batchnorms
from tests.models import resnet18, resnet50


class MLP(nn.Module):
    """Linear layers with functional and torch-namespace activations."""

    def __init__(self, sizes=(16, 32, 32, 10)):
        super().__init__()
        self.fc1 = nn.Linear(sizes[0], sizes[1])
        self.fc2 = nn.Linear(sizes[1], sizes[2])
        self.fc3 = nn.Linear(sizes[2], sizes[3])
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = self.drop(torch.tanh(self.fc2(x)))
        return F.log_softmax(self.fc3(x), dim=-1)


class SmallCNN(nn.Module):
    """Conv, BatchNorm, ReLU and three kinds of pooling, as modules and as functions."""

    def __init__(self, classes: int = 10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.pool = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(8, 16, 3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(16)
        self.avg = nn.AvgPool2d(2)
        self.conv3 = nn.Conv2d(16, 16, 3, padding=1, groups=4)
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.flatten = nn.Flatten()
        self.fc = nn.Linear(16, classes)

    def forward(self, x):
        x = self.pool(torch.relu(self.bn1(self.conv1(x))))
        x = self.avg(F.relu(self.bn2(self.conv2(x))))
        x = F.max_pool2d(self.conv3(x), kernel_size=2, stride=1)
        return self.fc(self.flatten(self.gap(x)))


class Attention(nn.Module):
    """Multi-head self-attention through matmul and softmax; ``causal`` masks the future."""

    def __init__(self, dim: int, heads: int, max_len: int = 0, causal: bool = False):
        super().__init__()
        self.heads = heads
        self.scale = 1.0 / math.sqrt(dim // heads)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.causal = causal
        if causal:  # made once here: tracing never sees tril
            mask = torch.tril(torch.ones(max_len, max_len, dtype=torch.bool))
            self.register_buffer("mask", mask.view(1, 1, max_len, max_len))

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        q = q.view(B, T, self.heads, C // self.heads).transpose(1, 2)  # (B, h, T, d)
        k = k.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        v = v.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * self.scale  # (B, h, T, T)
        if self.causal:
            att = torch.where(self.mask[:, :, :T, :T], att, float("-inf"))
        att = att.softmax(dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.proj(y)


class EncoderBlock(nn.Module):
    """A ViT encoder block: pre-norm attention and a GELU MLP, each with a residual."""

    def __init__(self, dim: int = 32, heads: int = 4, hidden: int = 64):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = Attention(dim, heads)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim))

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class SmallViT(nn.Module):
    """A small Vision Transformer: patches by a strided Conv2d, a class token, encoder
    blocks, the class token's row to a linear head."""

    def __init__(self, image: int = 32, patch: int = 8, dim: int = 64, depth: int = 4,
                 heads: int = 4, classes: int = 10):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, dim, patch, stride=patch)
        patches = (image // patch) ** 2
        self.cls_token = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
        self.pos_embed = nn.Parameter(torch.randn(1, patches + 1, dim) * 0.02)
        self.blocks = nn.ModuleList(EncoderBlock(dim, heads, 2 * dim) for _ in range(depth))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        x = self.patch_embed(x).flatten(2).transpose(1, 2)  # (B, patches, dim)
        cls = self.cls_token.expand(x.shape[0], -1, -1)
        x = torch.cat([cls, x], dim=1) + self.pos_embed
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x)[:, 0])


class DecoderBlock(nn.Module):
    """A GPT-style decoder block: LayerNorm, causal attention, a GELU MLP."""

    def __init__(self, dim: int = 32, heads: int = 4, max_len: int = 16):
        super().__init__()
        self.ln_1 = nn.LayerNorm(dim)
        self.attn = Attention(dim, heads, max_len, causal=True)
        self.ln_2 = nn.LayerNorm(dim)
        self.fc = nn.Linear(dim, 4 * dim)
        self.proj = nn.Linear(4 * dim, dim)
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.drop(self.proj(F.gelu(self.fc(self.ln_2(x)), approximate="tanh")))


class TinyGPT(nn.Module):
    """Token and position embeddings, two decoder blocks, an output layer tied to the
    token embedding (``F.linear`` with the embedding's weight)."""

    def __init__(self, vocab: int = 50, dim: int = 32, max_len: int = 16):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(max_len, dim)
        self.register_buffer("positions", torch.arange(max_len))
        self.blocks = nn.Sequential(DecoderBlock(dim, 4, max_len), DecoderBlock(dim, 4, max_len))
        self.ln_f = nn.LayerNorm(dim)

    def forward(self, idx):
        T = idx.size(1)
        x = self.tok(idx) + self.pos(self.positions[:T])
        x = self.ln_f(self.blocks(x))
        return F.linear(x, self.tok.weight)


class Mixed(nn.Module):
    """Functional calls and method calls together: view, permute, flatten, chunk,
    indexing, reductions, comparisons and operators from both sides."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(12, 12)
        self.scale = nn.Parameter(torch.rand(12) + 0.5)
        self.register_buffer("offset", torch.linspace(-1.0, 1.0, 12))

    def forward(self, x):  # x: (B, 3, 4)
        B = x.size(0)
        h = self.linear(x.view(B, 12)) * self.scale - self.offset
        a, b = h.chunk(2, dim=1)  # (B, 6) each
        c = torch.sigmoid(a) * b.tanh() + 1.0 - a.abs().sqrt()
        grid = c.reshape(B, 2, 3).permute(0, 2, 1)  # (B, 3, 2)
        first, rest = grid[:, 0], grid[:, 1:, ...]
        top = rest.flatten(1).amax(dim=-1, keepdim=True)
        best = torch.max(grid, dim=1)
        pooled = torch.cat([first, best.values, top], dim=1)
        pooled = torch.where(pooled > 0, pooled, 0.1 * pooled)
        stacked = torch.stack([pooled.exp().clamp(max=5.0), (pooled.pow(2) + 1).log()], dim=-1)
        parts = stacked.unbind(-1)
        out = parts[0] @ parts[1].t() / x.shape[-1]  # (B, B)
        return out.unsqueeze(0).squeeze(0) + torch.mean(x, dim=(1, 2)), grid.argmax(dim=-1)


class MixedShapes(nn.Module):
    """Shape methods: transpose, contiguous, expand, split, squeeze, indexing with None."""

    def forward(self, x):  # x: (B, C, H, W)
        B, C, H, W = x.shape
        rows = x.transpose(1, 3).contiguous()  # (B, W, H, C)
        left, right = torch.split(rows, [1, W - 1], dim=1)
        ratio = left.expand(B, W - 1, H, C) - right
        norm = ratio.pow(2).sum(dim=-1, keepdim=True).rsqrt().squeeze(-1)
        weights = F.softmax(norm.flatten(1), dim=1)[:, None, :]
        return (weights * x.flatten(2)[:, :, : weights.shape[-1]]).sum(-1).neg()


def mixed_function(x, y):
    """A plain function over torch tensors (no module)."""
    return torch.relu(x @ y.t()).sum(dim=1) - 2 * x.mean(-1)


# Each builder returns (model, example_inputs), built from a fixed seed.
def mlp():
    torch.manual_seed(0)
    return MLP().eval(), (torch.randn(4, 16),)


def small_cnn():
    torch.manual_seed(0)
    model = SmallCNN()
    randomize_batchnorms(model, seed=1)
    return model.eval(), (torch.randn(2, 3, 16, 16),)


def resnet_18():
    torch.manual_seed(0)
    model = resnet18(nn, num_classes=10, width=16)
    randomize_batchnorms(model, seed=2)
    return model.eval(), (torch.randn(2, 3, 32, 32),)


def resnet_50(image: int = 32, batch: int = 1):
    torch.manual_seed(0)
    model = resnet50(nn, num_classes=100)
    randomize_batchnorms(model, seed=3)
    return model.eval(), (torch.randn(batch, 3, image, image),)


def encoder_block():
    torch.manual_seed(0)
    return EncoderBlock().eval(), (torch.randn(2, 5, 32),)


def small_vit(batch: int = 2):
    torch.manual_seed(0)
    return SmallViT().eval(), (torch.randn(batch, 3, 32, 32),)


def decoder_block():
    torch.manual_seed(0)
    return DecoderBlock().eval(), (torch.randn(2, 10, 32),)


def tiny_gpt():
    torch.manual_seed(0)
    model = TinyGPT()
    model.tok.weight.data.mul_(0.1)
    return model.eval(), (torch.randint(0, 50, (2, 12)),)


def mixed():
    torch.manual_seed(0)
    return Mixed().eval(), (torch.randn(3, 3, 4),)


def mixed_shapes():
    torch.manual_seed(0)
    return MixedShapes().eval(), (torch.randn(2, 3, 4, 5),)


def function():
    torch.manual_seed(0)
    return mixed_function, (torch.randn(3, 4), torch.randn(5, 4))


ZOO = {
    "mlp": mlp,
    "small_cnn": small_cnn,
    "resnet_18": resnet_18,
    "resnet_50": resnet_50,
    "encoder_block": encoder_block,
    "small_vit": small_vit,
    "decoder_block": decoder_block,
    "tiny_gpt": tiny_gpt,
    "mixed": mixed,
    "mixed_shapes": mixed_shapes,
    "function": function,
}
