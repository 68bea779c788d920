"""Row-wise kernels: softmax, log_softmax, layer_norm, batch_norm.

Each takes a contiguous 2-d array (rows, n) and works on one row per
``prange`` task: the backend has already moved the normalised dims last and
flattened the rest. Softmax subtracts the row maximum before exponentiating,
so ``exp`` never overflows; a row holding NaN gives NaN, as in torch.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .scalar import fast_exp, like


@njit(fastmath={"reassoc"})
def _row_sum(x):
    acc = like(x[0], 0)
    for j in range(x.size):
        acc += x[j]
    return acc


@njit(fastmath={"reassoc"})
def _row_sum_squares(x):
    acc = like(x[0], 0)
    for j in range(x.size):
        acc += x[j] * x[j]
    return acc


@njit
def _row_max(x):
    """The row maximum, kept in 16 independent lanes so that LLVM vectorises it.

    It may skip NaN: a NaN in the row makes the sum of exponentials NaN, and
    so the whole softmax row, as in torch.
    """
    n = x.size
    lanes = np.full(16, x[0])
    full = n - n % 16
    for i in range(0, full, 16):
        for k in range(16):
            v = x[i + k]
            lanes[k] = v if v > lanes[k] else lanes[k]
    m = x[0]
    for k in range(16):
        m = lanes[k] if lanes[k] > m else m
    for i in range(full, n):
        m = x[i] if x[i] > m else m
    return m


@njit(inline="always")
def _softmax_row(x, o, log):
    m = _row_max(x)
    for j in range(x.size):
        o[j] = fast_exp(x[j] - m)
    total = _row_sum(o)
    if log:
        log_total = np.log(total)
        for j in range(x.size):
            o[j] = (x[j] - m) - log_total  # not x - (m + log_total): keeps digits
    else:
        inv = like(total, 1.0) / total
        for j in range(x.size):
            o[j] = o[j] * inv


@njit(cache=True, parallel=True, error_model="numpy", fastmath={"contract"})
def softmax_rows(out, a, log):
    for r in prange(a.shape[0]):
        _softmax_row(a[r], out[r], log)


@njit(cache=True, error_model="numpy", fastmath={"contract"})
def softmax_rows_serial(out, a, log):
    """``softmax_rows`` on one thread, for inputs too small to wake the others."""
    for r in range(a.shape[0]):
        _softmax_row(a[r], out[r], log)


@njit(inline="always")
def _layer_norm_row(x, o, weight, bias, eps, affine_w, affine_b):
    n = x.size
    mean = _row_sum(x) / n
    for j in range(n):
        o[j] = x[j] - mean
    acc = _row_sum_squares(o)
    rstd = like(mean, 1.0) / np.sqrt(acc / n + eps)
    for j in range(n):
        o[j] = o[j] * rstd
    if affine_w:
        for j in range(n):
            o[j] = o[j] * weight[j]
    if affine_b:
        for j in range(n):
            o[j] = o[j] + bias[j]


@njit(cache=True, parallel=True, error_model="numpy")
def layer_norm_rows(out, a, weight, bias, eps, affine_w, affine_b):
    """(x - mean) / sqrt(var + eps) * weight + bias over each row (biased var)."""
    for r in prange(a.shape[0]):
        _layer_norm_row(a[r], out[r], weight, bias, eps, affine_w, affine_b)


@njit(cache=True, error_model="numpy")
def layer_norm_rows_serial(out, a, weight, bias, eps, affine_w, affine_b):
    """``layer_norm_rows`` on one thread, for inputs too small to wake the others."""
    for r in range(a.shape[0]):
        _layer_norm_row(a[r], out[r], weight, bias, eps, affine_w, affine_b)


# Below this many elements a row kernel runs on one thread.
PARALLEL_MIN = 1 << 16


@njit(cache=True, parallel=True, error_model="numpy")
def batch_norm_planes(out, a, mean, scale, bias):
    """out[n, c, :] = (a[n, c, :] - mean[c]) * scale[c] + bias[c]; a is (N, C, S)."""
    channels = a.shape[1]
    for i in prange(a.shape[0] * channels):
        c = i % channels
        x = a[i // channels, c]
        o = out[i // channels, c]
        m = mean[c]
        s = scale[c]
        b = bias[c]
        for j in range(x.size):
            o[j] = (x[j] - m) * s + b
