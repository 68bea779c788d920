"""conv2d's Winograd path (``_kernels/winograd.py``) against torch.

Every 3x3, stride-1, undilated, ungrouped convolution with enough output
tiles takes this path. The tests lower the tile threshold so that small
shapes take it too (a spy checks that they did), and cover what the tiling
has to get right: odd output sizes (tiles hanging over the edge), every
padding from none to wider than the kernel, batches whose tile rows a
thread split cuts mid-image, a step of fewer tile rows than a thread's
share, non-contiguous inputs, bias or none, and both float dtypes.

The last test is about the products' thread split (``_blas.matmul_into``),
which the Winograd path and every other conv and linear share.
"""

import numpy as np
import pytest
import torch

from tensor.backend.fast import backend as nb
from tensor.backend.fast import winograd_kernels as winograd

pytestmark = pytest.mark.fast_layer  # the fast layer's own machinery

RNG = np.random.default_rng(14)


@pytest.fixture
def taken(monkeypatch):
    """Send every eligible conv through Winograd and count the calls that went there."""
    calls = []
    original = nb._winograd

    def spy(*args):
        calls.append(args[0].shape)
        return original(*args)

    monkeypatch.setattr(nb, "_winograd", spy)
    monkeypatch.setattr(nb, "WINOGRAD_MIN_TILES", 1)
    return calls


def data(shape, dtype):
    return RNG.standard_normal(shape).astype(dtype)


def torch_conv(x, w, b, padding, stride=1, dilation=1, groups=1):
    t = [None if a is None else torch.from_numpy(np.ascontiguousarray(a)) for a in (x, w, b)]
    return torch.nn.functional.conv2d(*t, stride, padding, dilation, groups).numpy()


def tolerance(dtype, fan_in):
    # Winograd sums differently from torch; the error grows like the sum's length.
    return (2e-6 if dtype == np.float32 else 1e-13) * np.sqrt(fan_in) * 4


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "n,c,o,h,w,padding",
    [(1, 3, 4, 8, 8, (1, 1)),  # even output, 'same' padding
     (2, 5, 3, 7, 9, (1, 1)),  # odd output height and width, batch of 2
     (1, 4, 6, 5, 5, (0, 0)),  # no padding: 3x3 output, the last tile hangs over
     (3, 2, 5, 6, 7, (2, 2)),  # padding wider than half the kernel
     (2, 3, 2, 9, 4, (0, 3)),  # different paddings along rows and columns
     (1, 1, 1, 3, 3, (0, 0)),  # one output pixel
     (1, 16, 8, 1, 1, (1, 1))],  # a 1x1 image padded to 3x3
)
def test_winograd_matches_torch(taken, n, c, o, h, w, padding, dtype):
    x, wt, b = data((n, c, h, w), dtype), data((o, c, 3, 3), dtype), data((o,), dtype)
    for bias in (b, None):
        actual = nb.conv2d(x, wt, bias, (1, 1), padding, (1, 1), 1)
        expected = torch_conv(x, wt, bias, padding)
        assert actual.shape == expected.shape and actual.dtype == dtype
        assert actual.flags.c_contiguous
        tol = tolerance(dtype, 9 * c)
        np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol)
    assert len(taken) == 2


def test_threads_and_steps_split_tile_rows_anywhere(taken, monkeypatch):
    # 3 images of 5 tile rows: two threads cut the 15 rows mid-image, and a step of 2 rows
    # (a tiny WINOGRAD_BYTES) leaves a short last step in each thread's share.
    monkeypatch.setattr(nb, "WINOGRAD_BYTES", 1)
    x, w, b = data((3, 6, 10, 11), np.float32), data((7, 6, 3, 3), np.float32), data(
        (7,), np.float32)
    for step_bytes in (1, 64 * 13 * 6 * 2, 1 << 30):
        monkeypatch.setattr(nb, "WINOGRAD_BYTES", step_bytes)
        actual = nb.conv2d(x, w, b, (1, 1), (1, 1), (1, 1), 1)
        np.testing.assert_allclose(actual, torch_conv(x, w, b, (1, 1)), rtol=1e-5, atol=1e-5)
    assert len(taken) == 3


def test_non_contiguous_input_and_weight(taken):
    x = data((2, 4, 9, 8), np.float32).transpose(0, 1, 3, 2)  # (2, 4, 8, 9), not contiguous
    w = data((3, 3, 4, 5), np.float32).transpose(3, 2, 1, 0)[:, :, ::-1]  # (5, 4, 3, 3)
    actual = nb.conv2d(x, w, None, (1, 1), (1, 1), (1, 1), 1)
    np.testing.assert_allclose(actual, torch_conv(x, w, None, (1, 1)), rtol=1e-5, atol=1e-5)
    assert len(taken) == 1


@pytest.mark.parametrize(
    "kernel,stride,dilation,groups",
    [((3, 3), (2, 2), (1, 1), 1), ((3, 3), (1, 2), (1, 1), 1), ((3, 3), (1, 1), (2, 2), 1),
     ((3, 3), (1, 1), (1, 1), 2), ((3, 2), (1, 1), (1, 1), 1), ((5, 5), (1, 1), (1, 1), 1)],
)
def test_other_convolutions_keep_im2col(taken, kernel, stride, dilation, groups):
    x, w = data((2, 4, 9, 10), np.float32), data((6, 4 // groups, *kernel), np.float32)
    actual = nb.conv2d(x, w, None, stride, (1, 1), dilation, groups)
    expected = torch_conv(x, w, None, (1, 1), stride, dilation, groups)
    np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-5)
    assert taken == []


def test_few_tiles_keep_im2col(monkeypatch):
    calls = []
    monkeypatch.setattr(nb, "_winograd", lambda *a: calls.append(1))
    x, w = data((1, 8, 7, 7), np.float32), data((8, 8, 3, 3), np.float32)  # 16 tiles
    nb.conv2d(x, w, None, (1, 1), (1, 1), (1, 1), 1)
    assert calls == []
    x = data((1, 8, 56, 56), np.float32)  # 784 tiles
    nb.conv2d(x, w, None, (1, 1), (1, 1), (1, 1), 1)
    assert calls == [1]


def test_resnet_shape_at_float32_tolerance():
    # The shape the benchmark times, at the threshold's default: as close to torch as im2col.
    x, w, b = data((1, 64, 56, 56), np.float32), data((64, 64, 3, 3), np.float32) * 0.1, data(
        (64,), np.float32)
    expected = torch_conv(x, w, b, (1, 1))
    actual = nb.conv2d(x, w, b, (1, 1), (1, 1), (1, 1), 1)
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-4)
    scale = np.abs(expected).max()
    assert np.abs(actual - expected).max() < 1e-5 * scale


def test_filter_transform_is_g_g_gt():
    w = data((3, 2, 3, 3), np.float64)
    g = np.array([[1, 0, 0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0, 0, 1]])
    u = np.empty((16, 3, 2))
    winograd.filters(u, w, 0, 3)  # the first three of the six filters, then the rest
    winograd.filters(u, w, 3, 6)
    for o in range(3):
        for c in range(2):
            np.testing.assert_allclose(u[:, o, c].reshape(4, 4), g @ w[o, c] @ g.T, rtol=1e-14)


@pytest.mark.parametrize("shape_a,shape_b", [
    ((197, 768), (768, 512)),  # small a, large b (a Linear at batch 1): split by columns
    ((512, 64), (64, 300)),  # large a: split by rows
    ((2, 40, 300), (300, 700)),  # batched a, b broadcast: columns
    ((700, 300), (3, 300, 20)),  # too few columns to split: rows
])
@pytest.mark.parametrize("with_bias", [False, True])
def test_matmul_into_splits_rows_or_columns(shape_a, shape_b, with_bias):
    from tensor.backend.fast import blas as _blas

    a, b = data(shape_a, np.float32), data(shape_b, np.float32)
    bias = data(shape_b[-1:], np.float32) if with_bias else None
    expected = np.matmul(a, b) + (bias if with_bias else 0)
    out = np.full(expected.shape, np.nan, np.float32)
    parts = []

    def ranges(run, n, k):
        parts.append(n)
        nb.in_ranges(run, n, k)

    _blas.matmul_into(a, b, out, ranges, 2, bias)  # each part adds its piece of the bias
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-4)
    m, n = expected.shape[-2:]
    assert len(parts) == 1 and parts[0] in (m, n)
    assert parts[0] == (n if np.prod(shape_a[-2:]) < np.prod(shape_b[-2:]) and n >= 32 else m)
