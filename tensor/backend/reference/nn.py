"""NumPy reference kernels for the neural-network operations.

Arrays in, array out, no argument checking: ``tensor.nn.functional`` has
already checked shapes and dtypes and resolved defaults (pairs of ints,
``None`` sizes) before calling here. The numba backend offers the same names
and signatures, so every function here is also the oracle its kernel is
tested against.

Convolution and pooling work on a strided *window view* of the padded input:
``_windows`` returns an array of shape (N, C, out_h, out_w, kh, kw) that
shares memory with the input, so a convolution is one matrix product per
group and a pooling is one reduction over the last two axes.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ..._shape import output_hw

Pair = tuple[int, int]


def _pad(x: np.ndarray, pad: Pair, extra: Pair, value: float) -> np.ndarray:
    """Pad H and W by ``pad`` on both sides, plus ``extra`` on the far side."""
    (ph, pw), (eh, ew) = pad, extra
    if ph == pw == eh == ew == 0:
        return x
    return np.pad(x, ((0, 0), (0, 0), (ph, ph + eh), (pw, pw + ew)), constant_values=value)


def _windows(xp: np.ndarray, kernel: Pair, stride: Pair, dilation: Pair, out: Pair) -> np.ndarray:
    """A read-only view (N, C, out_h, out_w, kh, kw) of every window of ``xp``."""
    n, c = xp.shape[:2]
    sn, sc, sh, sw = xp.strides
    return as_strided(
        xp,
        shape=(n, c, out[0], out[1], kernel[0], kernel[1]),
        strides=(sn, sc, sh * stride[0], sw * stride[1], sh * dilation[0], sw * dilation[1]),
        writeable=False,
    )


def _shifted(xp: np.ndarray, kernel: Pair, stride: Pair, dilation: Pair, out: Pair):
    """For each kernel offset (i, j), the (N, C, out_h, out_w) view of the inputs it sees.

    Reducing over these kh*kw views one at a time (np.maximum, +=) is much
    faster in NumPy than reducing the 6-d window view over its last two axes.
    """
    for i in range(kernel[0]):
        top = i * dilation[0]
        rows = slice(top, top + (out[0] - 1) * stride[0] + 1, stride[0])
        for j in range(kernel[1]):
            left = j * dilation[1]
            yield xp[:, :, rows, left : left + (out[1] - 1) * stride[1] + 1 : stride[1]]


def _far_side_extra(size: int, kernel: int, stride: int, pad: int, dil: int, out: int) -> int:
    """How much padding beyond ``pad`` the last (ceil_mode) window reaches."""
    needed = (out - 1) * stride + dil * (kernel - 1) + 1
    return max(0, needed - (size + 2 * pad))


def conv2d(
    x: np.ndarray,
    w: np.ndarray,
    b: np.ndarray | None,
    stride: Pair,
    padding: Pair,
    dilation: Pair,
    groups: int,
) -> np.ndarray:
    """2-d cross-correlation, NCHW input, (O, C/groups, kh, kw) weight."""
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    out = output_hw((h, wd), (kh, kw), stride, padding, dilation)
    xp = _pad(x, padding, (0, 0), 0)
    og = o // groups
    if cg == 1 and og == 1:
        # Depthwise: one multiply-add per kernel offset beats a batch of tiny matmuls.
        y = np.zeros((n, o, out[0], out[1]), dtype=x.dtype)
        taps = w.reshape(o, kh * kw)
        for k, window in enumerate(_shifted(xp, (kh, kw), stride, dilation, out)):
            y += window * taps[:, k].reshape(1, o, 1, 1)
        if b is not None:
            y += b.reshape(1, o, 1, 1)
        return y
    cols = _windows(xp, (kh, kw), stride, dilation, out)  # (N, C, OH, OW, kh, kw)
    # im2col as (groups, Cg*kh*kw, N*OH*OW): the copy keeps the output pixels
    # innermost, which NumPy copies fast, and each group is then one large
    # matrix product, the shape BLAS likes best.
    cols = cols.transpose(1, 4, 5, 0, 2, 3).reshape(groups, cg * kh * kw, n * out[0] * out[1])
    y = np.matmul(w.reshape(groups, og, cg * kh * kw), cols)  # (groups, Og, N*OH*OW)
    y = y.reshape(o, n, out[0], out[1]).transpose(1, 0, 2, 3)
    y = np.ascontiguousarray(y)  # NCHW
    if b is not None:
        y += b.reshape(1, o, 1, 1).astype(y.dtype, copy=False)
    return np.ascontiguousarray(y, dtype=x.dtype)


def max_pool2d(
    x: np.ndarray, kernel: Pair, stride: Pair, padding: Pair, dilation: Pair, ceil_mode: bool
) -> np.ndarray:
    """Maximum over each window; padding never wins (it is -inf)."""
    h, wd = x.shape[2:]
    out = output_hw((h, wd), kernel, stride, padding, dilation, ceil_mode)
    extra = (
        _far_side_extra(h, kernel[0], stride[0], padding[0], dilation[0], out[0]),
        _far_side_extra(wd, kernel[1], stride[1], padding[1], dilation[1], out[1]),
    )
    fill = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    xp = _pad(x, padding, extra, fill)
    result = None
    for window in _shifted(xp, kernel, stride, dilation, out):
        result = window.copy() if result is None else np.maximum(result, window, out=result)
    return result


def _avg_divisors(size: int, kernel: int, stride: int, pad: int, out: int, include: bool):
    """Per-output-position window length along one axis, as torch counts it."""
    start = np.arange(out) * stride - pad
    end = np.minimum(start + kernel, size + pad)
    if include:
        return end - start
    return np.minimum(end, size) - np.maximum(start, 0)


def avg_pool2d(
    x: np.ndarray,
    kernel: Pair,
    stride: Pair,
    padding: Pair,
    ceil_mode: bool,
    count_include_pad: bool,
) -> np.ndarray:
    """Mean over each window; torch's divisor rules for padding and ceil_mode."""
    h, wd = x.shape[2:]
    out = output_hw((h, wd), kernel, stride, padding, (1, 1), ceil_mode)
    extra = (
        _far_side_extra(h, kernel[0], stride[0], padding[0], 1, out[0]),
        _far_side_extra(wd, kernel[1], stride[1], padding[1], 1, out[1]),
    )
    xp = _pad(x, padding, extra, 0)
    sums = np.zeros(x.shape[:2] + out, dtype=x.dtype)
    for window in _shifted(xp, kernel, stride, (1, 1), out):
        sums += window
    dh = _avg_divisors(h, kernel[0], stride[0], padding[0], out[0], count_include_pad)
    dw = _avg_divisors(wd, kernel[1], stride[1], padding[1], out[1], count_include_pad)
    return (sums / np.multiply.outer(dh, dw)).astype(x.dtype, copy=False)


def _adaptive_bounds(size: int, out: int) -> list[tuple[int, int]]:
    """Window [start, end) of each output cell: floor(i*size/out), ceil((i+1)*size/out)."""
    return [((i * size) // out, -(-((i + 1) * size) // out)) for i in range(out)]


def adaptive_avg_pool2d(x: np.ndarray, output_size: Pair) -> np.ndarray:
    """Average over adaptive windows, done separably: rows first, then columns."""
    h, wd = x.shape[-2:]
    oh, ow = output_size
    if oh == 0 or ow == 0:
        return np.zeros(x.shape[:-2] + (oh, ow), dtype=x.dtype)
    if (oh, ow) == (1, 1):
        return x.mean(axis=(-2, -1), keepdims=True, dtype=x.dtype)
    rows = np.stack(
        [x[..., s:e, :].mean(axis=-2, dtype=x.dtype) for s, e in _adaptive_bounds(h, oh)],
        axis=-2,
    )
    return np.stack(
        [rows[..., s:e].mean(axis=-1, dtype=x.dtype) for s, e in _adaptive_bounds(wd, ow)],
        axis=-1,
    )


def _channel_shape(x: np.ndarray) -> tuple[int, ...]:
    """Shape that broadcasts a per-channel vector along dim 1 of ``x``."""
    return (1, x.shape[1]) + (1,) * (x.ndim - 2)


def batch_norm(
    x: np.ndarray,
    mean: np.ndarray,
    var: np.ndarray,
    weight: np.ndarray | None,
    bias: np.ndarray | None,
    eps: float,
) -> np.ndarray:
    """(x - mean) / sqrt(var + eps) * weight + bias, per channel (dim 1)."""
    shape = _channel_shape(x)
    scale = 1.0 / np.sqrt(var.astype(x.dtype) + x.dtype.type(eps))
    if weight is not None:
        scale = scale * weight
    shift = -mean * scale
    if bias is not None:
        shift = shift + bias
    y = x * scale.reshape(shape).astype(x.dtype) + shift.reshape(shape).astype(x.dtype)
    return y.astype(x.dtype, copy=False)


def layer_norm(
    x: np.ndarray,
    normalized_ndim: int,
    weight: np.ndarray | None,
    bias: np.ndarray | None,
    eps: float,
) -> np.ndarray:
    """Normalise over the last ``normalized_ndim`` dims (biased variance)."""
    axes = tuple(range(x.ndim - normalized_ndim, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    centred = x - mean
    var = np.mean(centred * centred, axis=axes, keepdims=True)
    y = centred / np.sqrt(var + x.dtype.type(eps))
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y.astype(x.dtype, copy=False)


def embedding(indices: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """Rows of ``weight`` picked by ``indices``: shape indices.shape + (dim,)."""
    return weight[indices]
