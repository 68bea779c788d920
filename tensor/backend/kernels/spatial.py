"""Kernels on images (N, C, H, W) and on lookup tables.

conv2d is im2col plus a matrix product: ``im2col`` copies every receptive
field of one image into one column of a (C*kh*kw, OH*OW) matrix, and the
backend multiplies the (O, C*kh*kw) weight by it with NumPy's matmul, that
is BLAS, writing straight into that image's part of the output. (3x3
stride-1 convolutions with enough output take Winograd's route instead:
``winograd.py``.)

Copying is only fast when it is contiguous, so im2col works in two steps.
``split_phases`` pads each input plane and splits it by *stride phase*:
phase (qy, qx) holds the padded pixels whose row is qy modulo the row stride
and whose column is qx modulo the column stride. For a stride of 1 that is
just the padded plane. In its phase, every kernel tap (i, j) reads a plain
rectangle, so each row of an output image becomes one contiguous copy, with
no bounds checks and no strided gathers (``im2col``).

The pools read their windows directly, a plane at a time (``max_pool_plane``
and the others); ``prange`` runs one task per (image, channel) plane.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .scalar import like


@njit(cache=True, nogil=True)
def split_phases(phases, x, kh, kw, sh, sw, ph, pw, dh, dw):
    """phases[n, c, qy, qx, a, b] = padded x[n, c, a*sh + qy, b*sw + qx] (0 in the padding).

    A phase that no tap reads (a 1x1 kernel with a stride reads only phase
    (0, 0)) is left unwritten. It copies the input once, which is cheap next
    to im2col; a serial loop also compiles faster than a parallel one.
    """
    batch, channels, height, width = x.shape
    hq, wq = phases.shape[4], phases.shape[5]
    for t in range(batch * channels * sh):
        n = t // (channels * sh)
        c = (t // sh) % channels
        qy = t % sh
        for qx in range(sw):
            if qy > (kh - 1) * dh or qx > (kw - 1) * dw:
                continue
            dst = phases[n, c, qy, qx]
            # Columns b in [lo, hi) come from inside the image: 0 <= b*sw + qx - pw < width.
            lo = min(wq, max(0, (pw - qx + sw - 1) // sw))
            hi = max(lo, min(wq, (width + pw - qx + sw - 1) // sw))
            first = lo * sw + qx - pw
            for a in range(hq):
                row = dst[a]
                iy = a * sh + qy - ph
                if iy < 0 or iy >= height:
                    row[:] = 0
                    continue
                row[:lo] = 0
                row[hi:] = 0
                inside = row[lo:hi]
                src = x[n, c, iy]
                if sw == 1:
                    seg = src[first : first + hi - lo]
                    for b in range(hi - lo):
                        inside[b] = seg[b]
                else:
                    for b in range(hi - lo):
                        inside[b] = src[first + b * sw]


@njit(cache=True, nogil=True)
def im2col(cols, phases, kh, kw, dh, dw, oh, ow):
    """cols[(c, i, j), (y, x)] = padded image[c, y*sh + i*dh, x*sw + j*dw], from its phases.

    ``phases`` is one image's (C, sh, sw, Hq, Wq) from ``split_phases``. Tap
    (i, j) lives in phase (i*dh % sh, j*dw % sw), shifted by (i*dh // sh,
    j*dw // sw): output row y is a contiguous run of ``ow`` values there.

    Serial on purpose: the backend alternates it with BLAS products, image
    by image, and handing the cores back and forth between numba's threads
    and OpenBLAS's made a batched convolution on two threads erratic, and
    often several times slower than with a serial copy.
    """
    channels, sh, sw, hq, wq = phases.shape
    taps = kh * kw
    for r in range(channels * taps):
        c = r // taps
        ry = (r // kw) % kh * dh
        rx = r % kw * dw
        plane = phases[c, ry % sh, rx % sw]
        dst = cols[r]
        a0 = ry // sh
        b0 = rx // sw
        for y in range(oh):
            src = plane[a0 + y, b0 : b0 + ow]
            out = dst[y * ow : (y + 1) * ow]
            for xo in range(ow):
                out[xo] = src[xo]


@njit
def max_pool_plane(dst, plane, kh, kw, sh, sw, ph, pw, dh, dw):
    """Max over each window of one (H, W) plane into its (OH, OW) output; padding
    never wins; NaN propagates, as in torch.

    The loops run tap by tap: for one kernel offset (i, j), a whole output
    row takes the max with one strided input row, a loop without bounds
    checks (its valid range is computed first) that LLVM vectorises.
    """
    height, width = plane.shape
    oh, ow = dst.shape
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


@njit(error_model="numpy")
def avg_pool_plane(dst, plane, kh, kw, sh, sw, ph, pw, count_include_pad):
    """Mean over each window of one plane, with torch's divisor rules for padding."""
    height, width = plane.shape
    oh, ow = dst.shape
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


@njit(error_model="numpy")
def adaptive_avg_pool_plane(dst, plane):
    """Output cell (y, x) averages rows floor(y*H/OH) .. ceil((y+1)*H/OH) of one plane."""
    height, width = plane.shape
    oh, ow = dst.shape
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
def max_pool2d(out, x, kh, kw, sh, sw, ph, pw, dh, dw):
    """``max_pool_plane`` on every (image, channel) plane, on numba's threads."""
    channels = x.shape[1]
    for t in prange(x.shape[0] * channels):
        max_pool_plane(out[t // channels, t % channels], x[t // channels, t % channels],
                       kh, kw, sh, sw, ph, pw, dh, dw)


@njit(cache=True, parallel=True)
def avg_pool2d(out, x, kh, kw, sh, sw, ph, pw, count_include_pad):
    """``avg_pool_plane`` on every plane, on numba's threads."""
    channels = x.shape[1]
    for t in prange(x.shape[0] * channels):
        avg_pool_plane(out[t // channels, t % channels], x[t // channels, t % channels],
                       kh, kw, sh, sw, ph, pw, count_include_pad)


@njit(cache=True, parallel=True)
def adaptive_avg_pool2d(out, x):
    """``adaptive_avg_pool_plane`` on every plane, on numba's threads."""
    channels = x.shape[1]
    for t in prange(x.shape[0] * channels):
        adaptive_avg_pool_plane(out[t // channels, t % channels], x[t // channels, t % channels])


@njit(cache=True, parallel=True)
def embedding(out, indices, weight):
    """out[k] = weight[indices[k]] for every (flattened) index k."""
    for k in prange(indices.size):
        out[k] = weight[indices[k]]
