"""Chapter 12: every nn layer computes through the primitives.

For each layer: make_fx's graph (real and fake) holds only primitives and
computes the layer on a *second* input too (a value computed outside the
primitives would have been frozen into the graph as a constant, and the
second input would show it), and the layer's output under a FakeTensorMode
has the real output's shape, dtype and strides.
"""

import copy

import numpy as np
import pytest

import tensor
import tensor.nn as nn
from minifx.experimental.proxy_tensor import make_fx
from tensor.fake import FakeTensorMode

LAYERS = {  # name -> (layer, input shape)
    "linear": (lambda: nn.Linear(6, 3), (4, 6)),
    "linear_3d": (lambda: nn.Linear(6, 3, bias=False), (2, 4, 6)),
    "conv2d": (lambda: nn.Conv2d(3, 4, 3, padding=1), (2, 3, 8, 8)),
    "conv2d_groups": (lambda: nn.Conv2d(4, 8, 3, stride=2, dilation=2, groups=2), (2, 4, 9, 9)),
    "conv2d_unbatched": (lambda: nn.Conv2d(3, 4, 3), (3, 8, 8)),
    "batch_norm_eval": (lambda: nn.BatchNorm2d(3).eval(), (2, 3, 4, 4)),
    "batch_norm_train": (lambda: nn.BatchNorm2d(3).train(), (2, 3, 4, 4)),
    "layer_norm": (lambda: nn.LayerNorm(6), (2, 5, 6)),
    "relu": (lambda: nn.ReLU(), (3, 4)),
    "relu_inplace": (lambda: nn.ReLU(inplace=True), (3, 4)),
    "relu6": (lambda: nn.ReLU6(), (3, 4)),
    "hardtanh": (lambda: nn.Hardtanh(-0.5, 0.5), (3, 4)),
    "hardsigmoid": (lambda: nn.Hardsigmoid(), (3, 4)),
    "hardswish": (lambda: nn.Hardswish(), (3, 4)),
    "silu": (lambda: nn.SiLU(), (3, 4)),
    "sigmoid": (lambda: nn.Sigmoid(), (3, 4)),
    "tanh": (lambda: nn.Tanh(), (3, 4)),
    "gelu": (lambda: nn.GELU(), (3, 4)),
    "gelu_tanh": (lambda: nn.GELU(approximate="tanh"), (3, 4)),
    "softmax": (lambda: nn.Softmax(dim=1), (3, 4)),
    "dropout_eval": (lambda: nn.Dropout(0.5).eval(), (3, 4)),
    "identity": (lambda: nn.Identity(), (3, 4)),
    "flatten": (lambda: nn.Flatten(), (2, 3, 4)),
    "max_pool2d": (lambda: nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True), (2, 3, 8, 8)),
    "avg_pool2d": (lambda: nn.AvgPool2d(2), (2, 3, 8, 8)),
    "adaptive_avg_pool2d": (lambda: nn.AdaptiveAvgPool2d((2, 3)), (2, 3, 8, 9)),
}


def inputs(shape, seed):
    return tensor.from_numpy(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


def call(layer, x):
    return layer(x)


@pytest.mark.parametrize("mode", ["real", "fake"])
@pytest.mark.parametrize("name", sorted(LAYERS))
def test_layer_traces_to_primitives_that_compute_it(name, mode):
    build, shape = LAYERS[name]
    tensor.manual_seed(0)
    layer = build()
    gm = make_fx(lambda x: call(layer, x), tracing_mode=mode)(inputs(shape, 0))
    for node in gm.graph.nodes:
        if node.op == "call_function":
            assert isinstance(node.target, tensor.ops.OpOverload)
    twin = copy.deepcopy(layer)  # runs beside the graph: running statistics move alike
    for seed in (0, 1):
        x = inputs(shape, seed)
        expected = call(twin, inputs(shape, seed))
        tensor.testing.assert_close(gm(x), expected)
        for mine, theirs in zip(layer.buffers(), twin.buffers()):
            tensor.testing.assert_close(mine, theirs)


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_layer_under_fake_tensors_has_the_real_metadata(name):
    build, shape = LAYERS[name]
    layer = build()
    x = inputs(shape, 0)
    real = call(layer, inputs(shape, 0))
    with FakeTensorMode() as mode:
        fake = call(layer, mode.from_tensor(x))
    assert (fake.shape, fake.dtype, fake.stride()) == (real.shape, real.dtype, real.stride())
