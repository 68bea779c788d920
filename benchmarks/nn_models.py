"""Models written once against an ``nn`` namespace, so that ``tensor.nn`` and
``torch.nn`` build the very same network: the benchmarks time both.

- ``resnet50(nn)``: torchvision's ResNet-50 layout (bottlenecks 3-4-6-3), from
  tests/models.py.
- ``vit_block(nn, F)``: one ViT-Base encoder block (pre-norm attention and
  MLP, 12 heads of 64, GELU), on (batch, 197 tokens, 768).
- ``fill_weights(model, lib)``: the same deterministic weights for both
  libraries, drawn from NumPy, so that two processes compute the same result.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

# The scripts that import this file run from benchmarks/, so the checkout, where the
# shared models live, is not on their path yet.
ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests import models  # noqa: E402


def resnet50(nn):
    """torchvision's ResNet-50 layout, written against an ``nn`` namespace (tests/models.py's,
    the one the tests use too)."""
    return models.resnet50(nn)


def vit_block(nn, F, dim: int = 768, heads: int = 12, mlp: int = 3072):
    """A ViT-Base encoder block: x + attn(ln1(x)), then x + mlp(ln2(x))."""

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.heads = heads
            self.ln1 = nn.LayerNorm(dim)
            self.qkv = nn.Linear(dim, 3 * dim)
            self.proj = nn.Linear(dim, dim)
            self.ln2 = nn.LayerNorm(dim)
            self.fc1 = nn.Linear(dim, mlp)
            self.fc2 = nn.Linear(mlp, dim)
            self.scale = 1.0 / math.sqrt(dim // heads)

        def forward(self, x):
            b, t, c = x.shape
            q, k, v = self.qkv(self.ln1(x)).chunk(3, dim=-1)
            q = q.reshape(b, t, self.heads, c // self.heads).transpose(1, 2)
            k = k.reshape(b, t, self.heads, c // self.heads).transpose(1, 2)
            v = v.reshape(b, t, self.heads, c // self.heads).transpose(1, 2)
            att = F.softmax((q @ k.transpose(-2, -1)) * self.scale, dim=-1)
            y = (att @ v).transpose(1, 2).reshape(b, t, c)
            x = x + self.proj(y)
            return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))

    return Block()


def fill_weights(model, lib, seed: int = 0) -> None:
    """Deterministic weights, the same for ``tensor`` and ``torch``: He-scaled
    normal weights, BatchNorm statistics near 1, small biases."""
    rng = np.random.default_rng(seed)
    state = {}
    for name, value in sorted(model.state_dict().items()):
        shape = tuple(value.shape)
        if name.endswith("num_batches_tracked"):
            continue
        if name.endswith("running_var") or (name.endswith("weight") and len(shape) == 1):
            data = rng.uniform(0.5, 1.5, shape)
        elif name.endswith("weight"):
            fan_in = int(np.prod(shape[1:]))
            data = rng.standard_normal(shape) * math.sqrt(1.0 / fan_in)
        else:
            data = rng.standard_normal(shape) * 0.1
        state[name] = lib.from_numpy(data.astype(np.float32))
    model.load_state_dict(state, strict=False)
