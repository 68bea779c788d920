"""Twin models for chapters 4 and 5: one source, written against `lib`.

`build_*(lib)` returns a module (or function) that uses `lib` (`tensor` or
`torch`) for everything, so the same program can be traced by minifx on
`tensor`, by minifx on `torch`, and by torch.fx on `torch`. `twins(build)`
makes the `tensor` and `torch` instances with the same weights.
"""

import numpy as np
import torch

import tensor
from tests.helpers import copy_weights, to_torch  # noqa: F401  (to_torch: for the tests)


def to_numpy(value):
    if isinstance(value, torch.Tensor):
        return value.detach().numpy()
    return np.asarray(value.numpy())


def assert_same_values(ours, theirs, tol=1e-5):
    """Same structure, shapes and values (within tol), tensors of either library."""
    if not isinstance(ours, (tensor.Tensor, torch.Tensor, tuple, list)):
        assert ours == theirs
        return
    if isinstance(ours, (tuple, list)):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            assert_same_values(a, b, tol)
        return
    a, b = to_numpy(ours), to_numpy(theirs)
    assert a.shape == b.shape
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def output_of(gm):
    """The output node (the last node), for minifx and torch.fx graphs alike."""
    return list(gm.graph.nodes)[-1]


def twins(build, *, train=False):
    """The tensor and torch instances of `build`, with the same weights and buffers."""
    ours, theirs = build(tensor), build(torch)
    if isinstance(ours, tensor.nn.Module):
        copy_weights(ours, theirs)
        ours.train(train)
        theirs.train(train)
    return ours, theirs


# --- the seed's programs ----------------------------------------------------

def build_sigmoid_neg(lib):
    def fn(x):
        return lib.sigmoid(x).neg()

    return fn


def build_two_layer_net(lib, d_in=1000, h=100, d_out=10):
    class TwoLayerNet(lib.nn.Module):
        def __init__(self, D_in, H, D_out):  # noqa: N803 (the seed's names)
            super().__init__()
            self.linear1 = lib.nn.Linear(D_in, H)
            self.linear2 = lib.nn.Linear(H, D_out)

        def forward(self, x):
            h_relu = self.linear1(x).clamp(min=0)
            y_pred = self.linear2(h_relu)
            return y_pred

    return TwoLayerNet(d_in, h, d_out)


# --- models an Interpreter must run as eager does ------------------------------

def build_mlp(lib):
    class MLP(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = lib.nn.Linear(8, 16)
            self.fc2 = lib.nn.Linear(16, 16)
            self.head = lib.nn.Linear(16, 3)

        def forward(self, x):
            x = lib.relu(self.fc1(x))
            x = lib.tanh(self.fc2(x)) + x
            return self.head(x).softmax(dim=-1)

    return MLP()


def build_convnet(lib):
    class ConvNet(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = lib.nn.Conv2d(3, 8, 3, padding=1)
            self.bn1 = lib.nn.BatchNorm2d(8)
            self.pool = lib.nn.MaxPool2d(2)
            self.conv2 = lib.nn.Conv2d(8, 8, 3, stride=2, padding=1, bias=False)
            self.bn2 = lib.nn.BatchNorm2d(8)
            self.gap = lib.nn.AdaptiveAvgPool2d(1)
            self.fc = lib.nn.Linear(8, 4)

        def forward(self, x):
            x = self.pool(lib.relu(self.bn1(self.conv1(x))))
            x = lib.relu(self.bn2(self.conv2(x)))
            x = lib.flatten(self.gap(x), 1)
            return self.fc(x)

    return ConvNet()


def build_residual(lib):
    class Block(lib.nn.Module):
        def __init__(self, channels):
            super().__init__()
            self.conv1 = lib.nn.Conv2d(channels, channels, 3, padding=1, bias=False)
            self.bn1 = lib.nn.BatchNorm2d(channels)
            self.relu = lib.nn.ReLU()
            self.conv2 = lib.nn.Conv2d(channels, channels, 3, padding=1, bias=False)
            self.bn2 = lib.nn.BatchNorm2d(channels)

        def forward(self, x):
            identity = x
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            out += identity
            return self.relu(out)

    class Residual(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = lib.nn.Conv2d(3, 4, 1)
            self.layer = lib.nn.Sequential(Block(4), Block(4))

        def forward(self, x):
            return self.layer(self.stem(x))

    return Residual()


def build_views(lib):
    """Non-contiguous results: strides a shape pass must report as they are."""
    class Views(lib.nn.Module):
        def forward(self, x):
            t = x.t()
            p = x.unsqueeze(0).permute(2, 0, 1)
            s = x.sum(dim=0, keepdim=True)
            return t, p, (s * 2).reshape(-1), {"first": x[0], "size": x.size(1)}

    return Views()


def build_split(lib):
    """Slices (views with an offset) and a nested tuple as the output."""
    def fn(x):
        a, b = x[:, :3], x[:, 3:]
        return lib.sigmoid(a) * b, (a.neg(), b.shape)

    return fn


# (name, builder, example-input shape)
EAGER_MODELS = [
    ("mlp", build_mlp, (5, 8)),
    ("convnet", build_convnet, (2, 3, 8, 8)),
    ("residual", build_residual, (2, 3, 6, 6)),
    ("two_layer_net", build_two_layer_net, (7, 1000)),
]


def example_input(shape, seed=0):
    """A float32 tensor.Tensor and its torch copy."""
    array = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    ours = tensor.Tensor._from_array(array)
    return ours, to_torch(ours)
