"""Integer kernels for quantized tensors (``tensor.nn.quantized``).

The heart is ``qgemm_requant``: an int8 weight matrix times a matrix of
shifted activations (``q - zero_point``, int16), accumulated in int32, then
*requantized* row by row to the output's uint8 integers::

    out[o, p] = clamp(rint((acc[o, p] * (s_x * s_w[o]) + bias[o]) * (1 / s_out)) + z_out)

in float32, the order torch's x86 kernels use (checked against them). The
weights are symmetric (zero point 0), so only the activations need shifting,
and that shift is done once, when the activations are copied into columns.

The loop is written so that LLVM vectorises it: for each of four output rows
at once, ``acc[:] += w * cols[k, :]`` over a contiguous row of int16 columns,
widened to int32. Four rows share each load of a column row. The int8
multiply-add instructions (``vpdpbusd``, AMX's ``tdpbusd``) are the fast
layer's (``tensor/backend/fast/qgemm.py``): the same integers, sooner.

The pools and the elementwise add work directly on the integers.

The functions at the bottom (``pack``, ``conv2d``, ``linear``, ``max_pool2d``,
``adaptive_avg_pool2d``, ``add_requant``) are the int8 interface that
``tensor.nn.quantized`` calls through ``tensor.backend.int8()``; the fast
layer's ``qgemm`` offers the same functions, with the same integers.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, prange


@njit(cache=True)
def _requant_row(acc, mult, bias, inv_out, zp_out, qmin, qmax, out_row):
    """One output row from its int32 accumulators: torch's float32 requantization."""
    for p in range(acc.shape[0]):
        v = np.float32(acc[p]) * mult + bias
        r = np.rint(v * inv_out) + zp_out
        if r < qmin:
            r = qmin
        elif r > qmax:
            r = qmax
        out_row[p] = r


# --8<-- [start:qgemm]
@njit(cache=True, parallel=True)
def qgemm_requant(w, cols, mult, bias, inv_out, zp_out, qmin, qmax, out):
    """out[o, :] = requant(w[o, :] @ cols): w (O, K) int16, cols (K, P) int16, out (O, P) uint8.

    ``mult[o]`` is ``s_x * s_w[o]`` and ``bias[o]`` the float bias, both float32.
    """
    n_out, depth = w.shape
    width = cols.shape[1]
    n_blocks = (n_out + 3) // 4
    for blk in prange(n_blocks):
        o0 = blk * 4
        rows = min(4, n_out - o0)
        acc = np.zeros((4, width), dtype=np.int32)
        for k in range(depth):
            col = cols[k]
            w0 = np.int32(w[o0, k])
            w1 = np.int32(w[o0 + 1, k]) if rows > 1 else np.int32(0)
            w2 = np.int32(w[o0 + 2, k]) if rows > 2 else np.int32(0)
            w3 = np.int32(w[o0 + 3, k]) if rows > 3 else np.int32(0)
            a0, a1, a2, a3 = acc[0], acc[1], acc[2], acc[3]
            for p in range(width):
                c = np.int32(col[p])
                a0[p] += w0 * c
                a1[p] += w1 * c
                a2[p] += w2 * c
                a3[p] += w3 * c
        for r in range(rows):
            o = o0 + r
            _requant_row(acc[r], mult[o], bias[o], inv_out, zp_out, qmin, qmax, out[o])
# --8<-- [end:qgemm]


@njit(cache=True, parallel=True)
def qgemm_requant_narrow(w_t, cols, mult, bias, inv_out, zp_out, qmin, qmax, out):
    """``qgemm_requant`` for few columns (deep layers, small images): the same sums, but
    vectorised along the output channels. w_t is the weight transposed, (K, O) int16.

    With only a handful of columns a row of ``cols`` is too short to fill a vector
    register, while a row of the transposed weight (one entry per output channel)
    is long; four columns at a time share each load of it.
    """
    depth, n_out = w_t.shape
    width = cols.shape[1]
    n_blocks = (width + 3) // 4
    for blk in prange(n_blocks):
        p0 = blk * 4
        cols_here = min(4, width - p0)
        acc = np.zeros((4, n_out), dtype=np.int32)
        for k in range(depth):
            row = w_t[k]
            c0 = np.int32(cols[k, p0])
            c1 = np.int32(cols[k, p0 + 1]) if cols_here > 1 else np.int32(0)
            c2 = np.int32(cols[k, p0 + 2]) if cols_here > 2 else np.int32(0)
            c3 = np.int32(cols[k, p0 + 3]) if cols_here > 3 else np.int32(0)
            a0, a1, a2, a3 = acc[0], acc[1], acc[2], acc[3]
            for o in range(n_out):
                wv = np.int32(row[o])
                a0[o] += c0 * wv
                a1[o] += c1 * wv
                a2[o] += c2 * wv
                a3[o] += c3 * wv
        for r in range(cols_here):
            for o in range(n_out):
                v = np.float32(acc[r, o]) * mult[o] + bias[o]
                q = np.rint(v * inv_out) + zp_out
                if q < qmin:
                    q = qmin
                elif q > qmax:
                    q = qmax
                out[o, p0 + r] = q


@njit(cache=True)
def im2col_shifted(x, zp, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow, cols):
    """cols[(c, i, j), (y, x)] = x[c, y*sh - ph + i*dh, x*sw - pw + j*dw] - zp, 0 outside.

    ``x`` is one image's (C, H, W) uint8 integers; the shift by the zero point
    makes the padding (the real value 0) the integer 0. Serial: it is a copy,
    and waking the worker threads for it cost more than it saved on small images.
    """
    channels, height, width = x.shape
    for c in range(channels):
        for i in range(kh):
            for j in range(kw):
                row = cols[(c * kh + i) * kw + j]
                for y in range(oh):
                    iy = y * sh - ph + i * dh
                    base = y * ow
                    if iy < 0 or iy >= height:
                        for xo in range(ow):
                            row[base + xo] = 0
                        continue
                    src = x[c, iy]
                    for xo in range(ow):
                        ix = xo * sw - pw + j * dw
                        if ix < 0 or ix >= width:
                            row[base + xo] = 0
                        else:
                            row[base + xo] = np.int16(src[ix]) - zp


@njit(cache=True, parallel=True)
def max_pool2d_int(x, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow, out):
    """Maximum of each window of integers (padding never wins), per (image, channel) plane."""
    batch, channels, height, width = x.shape
    for t in prange(batch * channels):
        n = t // channels
        c = t % channels
        plane = x[n, c]
        for y in range(oh):
            for xo in range(ow):
                best = -1
                for i in range(kh):
                    iy = y * sh - ph + i * dh
                    if iy < 0 or iy >= height:
                        continue
                    for j in range(kw):
                        ix = xo * sw - pw + j * dw
                        if ix < 0 or ix >= width:
                            continue
                        v = np.int32(plane[iy, ix])
                        if best < 0 or v > best:
                            best = v
                out[n, c, y, xo] = best


@njit(cache=True)
def adaptive_avg_pool2d_int(x, oh, ow, out):
    """Mean of each adaptive window of integers, rounded half to even (same qparams)."""
    batch, channels, height, width = x.shape
    for n in range(batch):
        for c in range(channels):
            for y in range(oh):
                h0 = (y * height) // oh
                h1 = -((-(y + 1) * height) // oh)
                for xo in range(ow):
                    w0 = (xo * width) // ow
                    w1 = -((-(xo + 1) * width) // ow)
                    total = 0
                    for iy in range(h0, h1):
                        for ix in range(w0, w1):
                            total += np.int64(x[n, c, iy, ix])
                    out[n, c, y, xo] = np.rint(total / ((h1 - h0) * (w1 - w0)))


@njit(cache=True)
def add_requant(a, za, sa, b, zb, sb, inv_out, zp_out, relu, out):
    """out = quantize(dequantize(a) + dequantize(b)), flat arrays, torch's float32 steps.

    Each input is dequantized as ``q * s + (-z * s)`` rounded once (torch's
    fused multiply-add), the sum is multiplied by ``1 / s_out`` in float32,
    rounded half to even, shifted by the zero point and clamped to 0..255.
    """
    sa64 = np.float64(sa)
    sb64 = np.float64(sb)
    ca = np.float64(np.float32(-za) * sa)
    cb = np.float64(np.float32(-zb) * sb)
    low = zp_out if relu else 0
    for i in range(a.shape[0]):
        da = np.float32(np.float64(a[i]) * sa64 + ca)
        db = np.float32(np.float64(b[i]) * sb64 + cb)
        r = np.rint((da + db) * inv_out) + zp_out
        if r < low:
            r = low
        elif r > 255:
            r = 255
        out[i] = r


# ---- the int8 interface (``tensor.backend.int8``) ---------------------------------------
class Packed(NamedTuple):
    """A layer's weight as ``qgemm_requant`` reads it: made once, kept on the weight."""

    matrix: np.ndarray  # (O, K) int16
    transposed: np.ndarray  # (K, O) int16, for ``qgemm_requant_narrow``
    shape: tuple  # the weight's own shape, (O, C, kh, kw) or (O, K)


def pack(weight: np.ndarray) -> Packed:
    """A qint8 weight's integers as the int16 matrices the GEMMs read."""
    w = np.ascontiguousarray(weight.reshape(weight.shape[0], -1), dtype=np.int16)
    return Packed(w, np.ascontiguousarray(w.T), weight.shape)


# Below this many columns the GEMM vectorises along the output channels instead.
NARROW = 64


def _gemm(packed: Packed, cols, mult, bias, inv_out, zp_out, qmin, qmax) -> np.ndarray:
    """requant(W @ cols): (K, P) int16 columns -> (O, P) uint8."""
    out = np.empty((packed.matrix.shape[0], cols.shape[1]), dtype=np.uint8)
    if cols.shape[1] < NARROW:
        qgemm_requant_narrow(packed.transposed, cols, mult, bias, inv_out, np.float32(zp_out),
                             qmin, qmax, out)
    else:
        qgemm_requant(packed.matrix, cols, mult, bias, inv_out, np.float32(zp_out), qmin, qmax,
                      out)
    return out


def linear(rows: np.ndarray, zx: int, packed: Packed, mult, bias, inv_out, zp_out: int,
           qmin: int, qmax: int) -> np.ndarray:
    """requant((rows - zx) @ weight.T) for (M, K) uint8 rows: (M, O) uint8."""
    cols = np.ascontiguousarray((rows.astype(np.int16) - np.int16(zx)).T)
    return np.ascontiguousarray(_gemm(packed, cols, mult, bias, inv_out, zp_out, qmin, qmax).T)


# --8<-- [start:conv2d]
def conv2d(x: np.ndarray, zx: int, packed: Packed, stride, padding, dilation, oh: int,
           ow: int, mult, bias, inv_out, zp_out: int, qmin: int, qmax: int) -> np.ndarray:
    """requant(conv2d(x - zx, weight)) of an (N, C, H, W) uint8 ``x``: im2col of every
    image's shifted integers side by side, then one ``qgemm_requant`` for the batch."""
    n, c = x.shape[:2]
    o, _, kh, kw = packed.shape
    cols = np.empty((c * kh * kw, n, oh * ow), dtype=np.int16)
    src = np.ascontiguousarray(x)
    for i in range(n):
        im2col_shifted(src[i], np.int16(zx), kh, kw, *stride, *padding, *dilation, oh, ow,
                       cols[:, i, :])
    out = _gemm(packed, cols.reshape(c * kh * kw, n * oh * ow), mult, bias, inv_out, zp_out,
                qmin, qmax)
    return np.ascontiguousarray(out.reshape(o, n, oh, ow).transpose(1, 0, 2, 3))
# --8<-- [end:conv2d]


def max_pool2d(x: np.ndarray, kernel, stride, padding, dilation, oh: int, ow: int):
    """``max_pool2d_int`` of an (N, C, H, W) array into a new one."""
    out = np.empty((*x.shape[:2], oh, ow), dtype=x.dtype)
    max_pool2d_int(np.ascontiguousarray(x), *kernel, *stride, *padding, *dilation, oh, ow, out)
    return out


def adaptive_avg_pool2d(x: np.ndarray, oh: int, ow: int) -> np.ndarray:
    """``adaptive_avg_pool2d_int`` of an (N, C, H, W) array into a new one."""
    out = np.empty((*x.shape[:2], oh, ow), dtype=x.dtype)
    adaptive_avg_pool2d_int(np.ascontiguousarray(x), oh, ow, out)
    return out
