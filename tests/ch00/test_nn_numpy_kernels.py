"""The NumPy reference kernels of tensor.backend.numpy_nn, against torch on plain arrays."""

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from hypothesis import given, settings
from hypothesis import strategies as st

from tensor.backend.reference import nn as K

rng = np.random.default_rng(0)


def randn(*shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def close(ours, theirs, tol=1e-4):
    theirs = theirs.numpy()
    assert ours.shape == theirs.shape
    assert ours.dtype == theirs.dtype
    np.testing.assert_allclose(ours, theirs, rtol=tol, atol=tol)


@pytest.mark.parametrize(
    "stride, padding, dilation, groups",
    [((1, 1), (0, 0), (1, 1), 1), ((2, 1), (1, 2), (1, 1), 1), ((1, 1), (2, 2), (2, 1), 1),
     ((2, 2), (1, 1), (1, 1), 2), ((1, 1), (1, 1), (1, 1), 4)],
)
def test_conv2d(stride, padding, dilation, groups):
    x = randn(2, 4, 9, 8)
    w = randn(8, 4 // groups, 3, 2)
    b = randn(8)
    ours = K.conv2d(x, w, b, stride, padding, dilation, groups)
    theirs = TF.conv2d(torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b),
                       stride, padding, dilation, groups)
    close(ours, theirs)


def test_conv2d_non_contiguous_float64_no_bias():
    x = randn(2, 6, 7, 3, dtype=np.float64).transpose(0, 1, 3, 2)
    w = randn(3, 6, 2, 2, dtype=np.float64)
    ours = K.conv2d(x, w, None, (1, 1), (0, 0), (1, 1), 1)
    close(ours, TF.conv2d(torch.from_numpy(x), torch.from_numpy(w)))


@settings(deadline=None, max_examples=30)
@given(
    n=st.integers(1, 2), cg=st.integers(1, 3), og=st.integers(1, 3), groups=st.integers(1, 3),
    h=st.integers(1, 9), w=st.integers(1, 9), kh=st.integers(1, 3), kw=st.integers(1, 3),
    stride=st.tuples(st.integers(1, 3), st.integers(1, 3)),
    padding=st.tuples(st.integers(0, 2), st.integers(0, 2)),
    dilation=st.tuples(st.integers(1, 2), st.integers(1, 2)),
)
def test_conv2d_shapes(n, cg, og, groups, h, w, kh, kw, stride, padding, dilation):
    if h + 2 * padding[0] < dilation[0] * (kh - 1) + 1:
        return
    if w + 2 * padding[1] < dilation[1] * (kw - 1) + 1:
        return
    x = randn(n, cg * groups, h, w)
    wt = randn(og * groups, cg, kh, kw)
    ours = K.conv2d(x, wt, None, stride, padding, dilation, groups)
    theirs = TF.conv2d(torch.from_numpy(x), torch.from_numpy(wt), None, stride, padding,
                       dilation, groups)
    close(ours, theirs)


POOL_CASES = [
    ((2, 2), (2, 2), (0, 0), (1, 1), False),
    ((3, 3), (2, 2), (1, 1), (1, 1), False),
    ((3, 3), (2, 2), (1, 1), (1, 1), True),
    ((3, 2), (2, 3), (0, 1), (1, 1), True),
    ((2, 3), (1, 2), (1, 1), (2, 1), False),
    ((3, 3), (3, 3), (0, 0), (1, 1), True),
]


@pytest.mark.parametrize("kernel, stride, padding, dilation, ceil_mode", POOL_CASES)
def test_max_pool2d(kernel, stride, padding, dilation, ceil_mode):
    x = randn(2, 3, 10, 7)
    ours = K.max_pool2d(x, kernel, stride, padding, dilation, ceil_mode)
    theirs = TF.max_pool2d(torch.from_numpy(x), kernel, stride, padding, dilation,
                           ceil_mode=ceil_mode)
    close(ours, theirs)


@pytest.mark.parametrize("count_include_pad", [True, False])
@pytest.mark.parametrize("kernel, stride, padding, dilation, ceil_mode", POOL_CASES)
def test_avg_pool2d(kernel, stride, padding, dilation, ceil_mode, count_include_pad):
    x = randn(2, 3, 10, 7, dtype=np.float64)
    ours = K.avg_pool2d(x, kernel, stride, padding, ceil_mode, count_include_pad)
    theirs = TF.avg_pool2d(torch.from_numpy(x), kernel, stride, padding, ceil_mode,
                           count_include_pad)
    close(ours, theirs)


@pytest.mark.parametrize("size, out", [((7, 7), (1, 1)), ((10, 7), (3, 4)), ((5, 5), (5, 5)),
                                       ((4, 9), (7, 2))])
def test_adaptive_avg_pool2d(size, out):
    x = randn(2, 3, *size)
    close(K.adaptive_avg_pool2d(x, out), TF.adaptive_avg_pool2d(torch.from_numpy(x), out))


@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm(affine):
    x = randn(4, 3, 5, 2)
    mean, var = randn(3), np.abs(randn(3)) + 0.1
    w, b = (randn(3), randn(3)) if affine else (None, None)
    t = lambda a: None if a is None else torch.from_numpy(a)
    ours = K.batch_norm(x, mean, var, w, b, 1e-5)
    close(ours, TF.batch_norm(t(x), t(mean), t(var), t(w), t(b), False, 0.1, 1e-5))


@pytest.mark.parametrize("ndim", [1, 2])
def test_layer_norm(ndim):
    x = randn(2, 3, 4, 5)
    shape = x.shape[-ndim:]
    w, b = randn(*shape), randn(*shape)
    ours = K.layer_norm(x, ndim, w, b, 1e-5)
    theirs = TF.layer_norm(torch.from_numpy(x), shape, torch.from_numpy(w), torch.from_numpy(b))
    close(ours, theirs)
    close(K.layer_norm(x, ndim, None, None, 1e-3), TF.layer_norm(torch.from_numpy(x), shape,
                                                                 eps=1e-3))


def test_embedding():
    idx = np.array([[0, 3, 3], [1, 2, 0]], dtype=np.int64)
    w = randn(5, 4)
    close(K.embedding(idx, w), TF.embedding(torch.from_numpy(idx), torch.from_numpy(w)))


@pytest.mark.parametrize("stride, dilation", [((1, 1), (1, 1)), ((2, 1), (1, 2))])
def test_conv2d_depthwise(stride, dilation):
    x, w, b = randn(2, 5, 8, 9), randn(5, 1, 3, 2), randn(5)
    ours = K.conv2d(x, w, b, stride, (1, 1), dilation, 5)
    theirs = TF.conv2d(torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b),
                       stride, (1, 1), dilation, 5)
    close(ours, theirs)


@settings(deadline=None, max_examples=30)
@given(
    h=st.integers(1, 9), w=st.integers(1, 9),
    kernel=st.tuples(st.integers(1, 4), st.integers(1, 4)),
    stride=st.tuples(st.integers(1, 3), st.integers(1, 3)),
    pad=st.tuples(st.integers(0, 2), st.integers(0, 2)),
    ceil_mode=st.booleans(), count_include_pad=st.booleans(),
)
def test_pool_shapes(h, w, kernel, stride, pad, ceil_mode, count_include_pad):
    if 2 * pad[0] > kernel[0] or 2 * pad[1] > kernel[1]:
        return  # torch refuses these (functional.py checks it)
    if h + 2 * pad[0] < kernel[0] or w + 2 * pad[1] < kernel[1]:
        return  # empty output: refused too
    x = randn(2, 3, h, w)
    tx = torch.from_numpy(x)
    close(K.max_pool2d(x, kernel, stride, pad, (1, 1), ceil_mode),
          TF.max_pool2d(tx, kernel, stride, pad, 1, ceil_mode))
    close(K.avg_pool2d(x, kernel, stride, pad, ceil_mode, count_include_pad),
          TF.avg_pool2d(tx, kernel, stride, pad, ceil_mode, count_include_pad))
