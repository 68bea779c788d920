"""Every tensor.nn layer against its torch twin, with copied weights and identical inputs."""

import numpy as np
import pytest
import torch

import tensor
import tensor.nn as nn
from tests.ch00.nn_helpers import check, ours, randn, twin

# Every test runs once per available backend (the `backend` fixture in conftest.py).
pytestmark = pytest.mark.usefixtures("backend")

# (our layer, torch layer, input shape): built from the same arguments.
CASES = [
    ("Linear", (3, 4), {}, (2, 3)),
    ("Linear", (3, 4), {"bias": False}, (5, 2, 3)),
    ("Conv2d", (4, 6, 3), {}, (2, 4, 8, 8)),
    ("Conv2d", (4, 6, (3, 2)), {"stride": 2, "padding": 1, "dilation": 2, "groups": 2,
                                "bias": False}, (2, 4, 9, 8)),
    ("Conv2d", (4, 4, 3), {"groups": 4, "padding": "same"}, (1, 4, 5, 5)),
    ("Conv2d", (3, 2, 2), {"padding": "valid", "stride": (1, 2)}, (3, 5, 6)),
    ("LayerNorm", (4,), {}, (2, 3, 4)),
    ("LayerNorm", ((3, 4),), {"elementwise_affine": False}, (2, 3, 4)),
    ("LayerNorm", (4,), {"bias": False, "eps": 1e-3}, (2, 4)),
    ("ReLU", (), {}, (2, 3)),
    ("Sigmoid", (), {}, (2, 3)),
    ("Tanh", (), {}, (2, 3)),
    ("GELU", (), {}, (2, 3)),
    ("GELU", ("tanh",), {}, (2, 3)),
    ("Softmax", (1,), {}, (2, 3, 4)),
    ("Softmax", (), {"dim": -1}, (2, 3)),
    ("Dropout", (), {}, (2, 3)),
    ("Identity", (), {}, (2, 3)),
    ("Flatten", (), {}, (2, 3, 4, 5)),
    ("Flatten", (0, 2), {}, (2, 3, 4, 5)),
    ("MaxPool2d", (2,), {}, (2, 3, 8, 8)),
    ("MaxPool2d", (3, 2, 1), {"ceil_mode": True, "dilation": 1}, (2, 3, 10, 9)),
    ("AvgPool2d", (2,), {}, (2, 3, 8, 8)),
    ("AvgPool2d", (3, 2, 1, True, False), {}, (2, 3, 10, 9)),
    ("AdaptiveAvgPool2d", (1,), {}, (2, 3, 7, 7)),
    ("AdaptiveAvgPool2d", ((3, None),), {}, (2, 3, 7, 5)),
    ("BatchNorm2d", (3,), {}, (4, 3, 5, 5)),
    ("BatchNorm2d", (3,), {"affine": False, "momentum": None}, (4, 3, 5, 5)),
    ("BatchNorm2d", (3,), {"track_running_stats": False}, (4, 3, 2, 2)),
    ("BatchNorm2d", (3,), {"bias": False}, (4, 3, 2, 2)),
    ("Embedding", (10, 3), {}, None),
    ("Embedding", (10, 3), {"padding_idx": -1, "max_norm": 1.0}, None),
]


def build(name, args, kwargs):
    return getattr(nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)


def example_input(shape):
    if shape is None:
        return np.array([[1, 9, 9], [0, 3, 2]], dtype=np.int64)
    return randn(*shape) * 2


@pytest.mark.parametrize("name, args, kwargs, shape", CASES)
def test_repr_matches_torch(name, args, kwargs, shape):
    mine, torchs = build(name, args, kwargs)
    assert repr(mine) == repr(torchs)


@pytest.mark.parametrize("mode", ["train", "eval"])
@pytest.mark.parametrize("name, args, kwargs, shape", CASES)
def test_forward_matches_torch(name, args, kwargs, shape, mode):
    mine, torchs = twin(*build(name, args, kwargs))
    getattr(mine, mode)()
    getattr(torchs, mode)()
    x = example_input(shape)
    if name == "Dropout" and mode == "train":
        out = mine(ours(x))._array
        assert ((out == 0) | np.isclose(out, 2 * x)).all()
        return
    for _ in range(2):  # twice: BatchNorm's running stats move between calls
        check(mine(ours(x)), torchs(torch.from_numpy(x)), 1e-4)
    for key, value in torchs.state_dict().items():
        check(mine.state_dict()[key], value, 1e-5)


def test_batchnorm_train_updates_running_stats_like_torch():
    mine, torchs = twin(nn.BatchNorm2d(3, momentum=0.2), torch.nn.BatchNorm2d(3, momentum=0.2))
    for seed in range(3):
        x = randn(4, 3, 5, 5, seed=seed) * 3 + 1
        check(mine(ours(x)), torchs(torch.from_numpy(x)), 1e-4)
    check(mine.running_mean, torchs.running_mean)
    check(mine.running_var, torchs.running_var)
    assert mine.num_batches_tracked.dtype == tensor.int64
    assert mine.num_batches_tracked.item() == 3
    mine.eval()
    torchs.eval()
    x = randn(2, 3, 4, 4, seed=9)
    check(mine(ours(x)), torchs(torch.from_numpy(x)), 1e-4)
    with pytest.raises(ValueError, match="expected 4D input"):
        mine(ours(randn(2, 3)))


def test_float64_layers():
    mine, torchs = twin(nn.Conv2d(2, 3, 3, dtype=tensor.float64),
                        torch.nn.Conv2d(2, 3, 3, dtype=torch.float64))
    assert mine.weight.dtype == tensor.float64
    x = randn(1, 2, 5, 5, dtype=np.float64)
    check(mine(ours(x)), torchs(torch.from_numpy(x)), 1e-10)


def test_initialisation_scale_like_torch():
    tensor.manual_seed(0)
    layer = nn.Linear(100, 50)
    bound = 1 / 10
    w = layer.weight._array
    assert w.shape == (50, 100) and w.dtype == np.float32
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    assert np.abs(layer.bias._array).max() <= bound
    conv = nn.Conv2d(4, 8, 3, groups=2)
    assert np.abs(conv.weight._array).max() <= 1 / np.sqrt(2 * 9)
    emb = nn.Embedding(100, 20, padding_idx=3)
    assert abs(emb.weight._array.std() - 1) < 0.1
    assert (emb.weight._array[3] == 0).all()
    tensor.manual_seed(0)
    np.testing.assert_array_equal(nn.Linear(100, 50).weight._array, w)


def test_dropout_rejects_bad_p():
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout(-0.1)


def test_conv_rejects_bad_groups_and_padding():
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match="strided"):
        nn.Conv2d(3, 4, 3, stride=2, padding="same")
