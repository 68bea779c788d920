"""Models written once against an ``nn`` namespace, so that ``tensor.nn`` and
``torch.nn`` build the very same network: the benchmarks time both.

- ``resnet50(nn)``: torchvision's ResNet-50 layout (bottlenecks 3-4-6-3).
- ``vit_block(nn, F)``: one ViT-Base encoder block (pre-norm attention and
  MLP, 12 heads of 64, GELU), on (batch, 197 tokens, 768).
- ``fill_weights(model, lib)``: the same deterministic weights for both
  libraries, drawn from NumPy, so that two processes compute the same result.
"""

from __future__ import annotations

import math

import numpy as np


def resnet50(nn):
    """torchvision's ResNet-50 layout, written against an ``nn`` namespace."""

    class Bottleneck(nn.Module):
        def __init__(self, cin, width, stride):
            super().__init__()
            cout = width * 4
            self.conv1 = nn.Conv2d(cin, width, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(width)
            self.conv2 = nn.Conv2d(width, width, 3, stride=stride, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(width)
            self.conv3 = nn.Conv2d(width, cout, 1, bias=False)
            self.bn3 = nn.BatchNorm2d(cout)
            self.relu = nn.ReLU()
            self.downsample = None
            if stride != 1 or cin != cout:
                self.downsample = nn.Sequential(
                    nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout)
                )

        def forward(self, x):
            identity = x if self.downsample is None else self.downsample(x)
            y = self.relu(self.bn1(self.conv1(x)))
            y = self.relu(self.bn2(self.conv2(y)))
            y = self.bn3(self.conv3(y))
            return self.relu(y + identity)

    class ResNet50(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False)
            self.bn1 = nn.BatchNorm2d(64)
            self.relu = nn.ReLU()
            self.maxpool = nn.MaxPool2d(3, stride=2, padding=1)
            layers, cin = [], 64
            for width, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
                stage = []
                for i in range(blocks):
                    stage.append(Bottleneck(cin, width, stride if i == 0 else 1))
                    cin = width * 4
                layers.append(nn.Sequential(*stage))
            self.layer1, self.layer2, self.layer3, self.layer4 = layers
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(2048, 1000)

        def forward(self, x):
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
            return self.fc(self.avgpool(x).flatten(1))

    return ResNet50()


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
