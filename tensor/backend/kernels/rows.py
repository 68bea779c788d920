"""Row-wise kernels: softmax, log_softmax, layer_norm, batch_norm.

Each takes a contiguous 2-d array (rows, n), the backend having moved the
normalised dims last and flattened the rest, and works on it row by row.
All three share their rows (batch_norm its planes) with the spinning workers
of ``spin.py`` (``softmax_task``, ``layer_norm_task``, ``batch_norm_task``).
Softmax subtracts the row maximum before exponentiating,
so ``exp`` never overflows; a row holding NaN gives NaN, as in torch.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .reduce import row_amax
from .scalar import exp_of, like


@njit(fastmath={"reassoc"})
def _row_sum(x):
    acc = like(x[0], 0)
    for j in range(x.size):
        acc += x[j]
    return acc


@njit(fastmath={"reassoc"})
def _exp_and_sum(x, o, m):
    """o = exp(x - m), returning its sum: one pass over the row, not two."""
    acc = like(m, 0)
    for j in range(x.size):
        e = exp_of(x[j] - m)
        o[j] = e
        acc += e
    return acc


@njit(inline="always")
def _softmax_row(x, o, log):
    # row_amax is the vectorised max of reduce.py; a NaN in the row makes m,
    # and so the whole row, NaN, as in torch.
    m = row_amax(x)
    total = _exp_and_sum(x, o, m)
    if log:
        log_total = np.log(total)
        for j in range(x.size):
            o[j] = (x[j] - m) - log_total  # not x - (m + log_total): keeps digits
    else:
        inv = like(total, 1.0) / total
        for j in range(x.size):
            o[j] = o[j] * inv


@njit(cache=True, error_model="numpy", fastmath={"contract"})
def softmax_rows_serial(out, a, log):
    """(log_)softmax of each row of ``a`` into ``out``, on this thread."""
    for r in range(a.shape[0]):
        _softmax_row(a[r], out[r], log)


@njit(fastmath={"reassoc"})
def _row_sum_sq_dev(x, mean):
    """Sum of (x - mean)**2 over the row, without writing the deviations."""
    acc = like(mean, 0)
    for j in range(x.size):
        d = x[j] - mean
        acc += d * d
    return acc


@njit(inline="always")
def _layer_norm_row(x, o, weight, bias, eps, affine_w, affine_b):
    """Three passes over the row and one write: the mean, the squared
    deviations, then the output with the affine step folded in (five passes
    and four writes before, which measured slower: each pass reads the row
    from memory again).

    The mean and rstd are of the row's dtype, as torch's are: ``sum / n``
    with an integer ``n`` gave a float64 mean, which made both later loops
    float64, whose vectors hold half as many lanes, and so slowed the whole
    kernel for float32."""
    n = like(x[0], x.size)
    mean = _row_sum(x) / n
    rstd = like(mean, 1.0) / np.sqrt(_row_sum_sq_dev(x, mean) / n + eps)
    if affine_w and affine_b:
        for j in range(x.size):
            o[j] = (x[j] - mean) * rstd * weight[j] + bias[j]
    elif affine_w:
        for j in range(x.size):
            o[j] = (x[j] - mean) * rstd * weight[j]
    elif affine_b:
        for j in range(x.size):
            o[j] = (x[j] - mean) * rstd + bias[j]
    else:
        for j in range(x.size):
            o[j] = (x[j] - mean) * rstd


@njit(cache=True, error_model="numpy")
def layer_norm_rows_serial(out, a, weight, bias, eps, affine_w, affine_b):
    """(x - mean) / sqrt(var + eps) * weight + bias over each row (biased var), on this
    thread."""
    for r in range(a.shape[0]):
        _layer_norm_row(a[r], out[r], weight, bias, eps, affine_w, affine_b)


@njit(cache=True, nogil=True)
def fold_batch_norm(mean, var, weight, bias, eps, alpha, beta):
    """Each channel's statistics folded into one scale and one shift, as torch's
    eval batch_norm does: alpha = weight / sqrt(var + eps) and
    beta = bias - mean * alpha (``weight`` or ``bias`` None: 1 or 0). One call
    instead of seven NumPy operations on channel vectors, which cost a quarter
    of a batch_norm on ResNet-50's small planes. Every step rounds as NumPy's
    would, in the arrays' dtype (no fused multiply-add)."""
    for c in range(alpha.size):
        scale = like(eps, 1.0) / np.sqrt(var[c] + eps)
        if weight is not None:
            scale = scale * weight[c]
        shift = -mean[c] * scale
        if bias is not None:
            shift = shift + bias[c]
        alpha[c], beta[c] = scale, shift


@njit(cache=True, nogil=True, error_model="numpy", fastmath={"contract"})
def scale_shift_planes(out, a, alpha, beta, channels, size, lo, hi):
    """Planes [lo, hi) of flat (N, C, S) arrays: ``out = a * alpha[c] + beta[c]``, the eval
    batch_norm with its statistics folded (``fold_batch_norm``)."""
    for i in range(lo, hi):
        scale, shift = alpha[i % channels], beta[i % channels]
        o, x = out[i * size:(i + 1) * size], a[i * size:(i + 1) * size]
        for j in range(size):
            o[j] = x[j] * scale + shift
