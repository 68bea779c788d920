"""Kernels on images (N, C, H, W) and on lookup tables.

conv2d is im2col plus a matrix product: ``im2col`` copies every receptive
field into one column of a (C*kh*kw, N*OH*OW) matrix, and the backend
multiplies it by the (O, C*kh*kw) weight with NumPy's matmul, that is BLAS.
The pools read their windows directly; one ``prange`` task per (image,
channel) plane.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .scalar import like


@njit(cache=True, parallel=True)
def im2col(cols, x, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow):
    """cols[(c, i, j), (n, y, x)] = x[n, c, y*sh - ph + i*dh, x*sw - pw + j*dw] (0 outside).

    One column per output pixel of every image, so a single matrix product
    per group computes the whole batch.
    """
    batch, channels, height, width = x.shape
    for t in prange(batch * channels):
        n = t // channels
        c = t % channels
        plane = x[n, c]
        for i in range(kh):
            for j in range(kw):
                row = cols[(c * kh + i) * kw + j, n * oh * ow : (n + 1) * oh * ow]
                for y in range(oh):
                    iy = y * sh - ph + i * dh
                    dst = row[y * ow : (y + 1) * ow]
                    if iy < 0 or iy >= height:
                        dst[:] = 0
                        continue
                    src = plane[iy]
                    off = j * dw - pw
                    lo = min(ow, max(0, (sw - 1 - off) // sw))  # first xo inside the image
                    hi = max(lo, min(ow, (width - 1 - off) // sw + 1))
                    dst[:lo] = 0
                    dst[hi:] = 0
                    if sw == 1:
                        dst[lo:hi] = src[lo + off : hi + off]
                    else:
                        for xo in range(lo, hi):
                            dst[xo] = src[xo * sw + off]


@njit(cache=True, parallel=True)
def max_pool2d(out, x, kh, kw, sh, sw, ph, pw, dh, dw):
    """Max over each window; padding never wins; NaN propagates, as in torch.

    The loops run tap by tap: for one kernel offset (i, j), a whole output
    row takes the max with one strided input row, a loop without bounds
    checks (its valid range is computed first) that LLVM vectorises.
    """
    batch, channels, height, width = x.shape
    oh, ow = out.shape[2], out.shape[3]
    for t in prange(batch * channels):
        plane = x[t // channels, t % channels]
        dst = out[t // channels, t % channels]
        for y in range(oh):
            o = dst[y]
            o[:] = -np.inf
            for i in range(kh):
                iy = y * sh - ph + i * dh
                if iy < 0 or iy >= height:
                    continue
                src = plane[iy]
                for j in range(kw):
                    off = j * dw - pw
                    lo = max(0, (sw - 1 - off) // sw)  # first xo with xo*sw + off >= 0
                    hi = min(ow, (width - 1 - off) // sw + 1)
                    for xo in range(lo, hi):
                        v = src[xo * sw + off]
                        cur = o[xo]
                        o[xo] = v if (v > cur or v != v) else cur


@njit(cache=True, parallel=True, error_model="numpy")
def avg_pool2d(out, x, kh, kw, sh, sw, ph, pw, count_include_pad):
    """Mean over each window, with torch's divisor rules for padding."""
    batch, channels, height, width = x.shape
    oh, ow = out.shape[2], out.shape[3]
    for t in prange(batch * channels):
        plane = x[t // channels, t % channels]
        dst = out[t // channels, t % channels]
        for y in range(oh):
            y0 = y * sh - ph
            y1 = min(y0 + kh, height + ph)
            for xo in range(ow):
                x0 = xo * sw - pw
                x1 = min(x0 + kw, width + pw)
                pool = (y1 - y0) * (x1 - x0)
                ya, yb = max(y0, 0), min(y1, height)
                xa, xb = max(x0, 0), min(x1, width)
                acc = like(plane[0, 0], 0)
                for iy in range(ya, yb):
                    for ix in range(xa, xb):
                        acc += plane[iy, ix]
                divisor = pool if count_include_pad else (yb - ya) * (xb - xa)
                dst[y, xo] = acc / divisor


@njit(cache=True, parallel=True, error_model="numpy")
def adaptive_avg_pool2d(out, x):
    """Output cell (y, x) averages rows floor(y*H/OH) .. ceil((y+1)*H/OH)."""
    batch, channels, height, width = x.shape
    oh, ow = out.shape[2], out.shape[3]
    for t in prange(batch * channels):
        plane = x[t // channels, t % channels]
        dst = out[t // channels, t % channels]
        for y in range(oh):
            ya = (y * height) // oh
            yb = -((-(y + 1) * height) // oh)
            for xo in range(ow):
                xa = (xo * width) // ow
                xb = -((-(xo + 1) * width) // ow)
                acc = like(plane[0, 0], 0)
                for iy in range(ya, yb):
                    for ix in range(xa, xb):
                        acc += plane[iy, ix]
                dst[y, xo] = acc / ((yb - ya) * (xb - xa))


@njit(cache=True, parallel=True)
def embedding(out, indices, weight):
    """out[k] = weight[indices[k]] for every (flattened) index k."""
    for k in prange(indices.size):
        out[k] = weight[indices[k]]
