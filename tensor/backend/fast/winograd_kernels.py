"""Winograd's F(2x2, 3x3): a 3x3 convolution (stride 1, no dilation, no
groups) in 16 multiplies per 2x2 output tile instead of 36.

Cut the output into 2x2 tiles. Each tile depends on a 4x4 patch ``d`` of the
padded input, and its values are ``A^T [(G g G^T) * (B^T d B)] A`` for the
3x3 filter ``g`` (``*`` is elementwise). The transforms ``B``, ``G`` and
``A`` hold only 0, +-1 and 1/2, so they cost additions, not products. Summed
over input channels, the elementwise product becomes, for each of the 16
positions ``e`` of the 4x4 patch, one matrix product::

    M[e] (O, tiles) = U[e] (O, C) @ V[e] (C, tiles)

with ``U = G g G^T`` (the filters, transformed) and ``V = B^T d B`` (the
patches, transformed). Those 16 products go to BLAS; the three kernels
below do the transforms. That is 2.25 times fewer multiply-adds than the
im2col product, and the transformed patches take 16 values per 4 outputs
where im2col copies 9 per output.

The tiles are counted in tile rows: unit ``r`` is tile row ``r % th`` of
image ``r // th``. Each thread of the backend takes a range of units and runs
the three steps on its own buffers, so the threads meet only at the end.

The intermediate values are sums of at most four inputs (or four filter
taps) with weights +-1 or 1/2, so the rounding error stays within a few units
of the last place of the direct method's; the tests hold it to torch's result.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# kron(G, G): the filter transform G g G^T as one (16, 9) matrix on the flattened filter.
_G = np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0.0, 0.0, 1.0]])
GG = np.kron(_G, _G)


def filters(u: np.ndarray, w: np.ndarray, lo: int, hi: int) -> None:
    """u[(i, j), o, c] = (G g G^T)[i, j] for the filters g = w[o, c] with o*C + c in [lo, hi).

    One BLAS product of kron(G, G) with the flattened filters; ``u`` is
    (16, O, C) and ``w`` (O, C, 3, 3), both contiguous.
    """
    flat = w.reshape(-1, 9)
    np.matmul(GG.astype(w.dtype), flat[lo:hi].T, out=u.reshape(16, -1)[:, lo:hi])


@njit(inline="always")
def _combine(out, a, b, sign, n):
    """out[j] = a[j] + sign * b[j] for j < n: one long loop, which LLVM vectorises."""
    for j in range(n):
        out[j] = a[j] + sign * b[j]


@njit(cache=True, nogil=True)
def patches(v, x, r_lo, r_hi, th, tw, ph, pw):
    """v[(i, j), c, tile] = (B^T d B)[i, j] for the 4x4 input patch d of each tile.

    The tiles are those of units (tile rows) [r_lo, r_hi), in order, ``tw``
    per unit. A unit is short (28 tiles in ResNet-50's first stage, 14 in its
    second), and a loop over one unit's tiles is too short for LLVM's
    vectorised loop, which takes 32 floats a turn: it ran scalar. So every
    loop here runs over all the tiles of an image's units at once.

    For that, each image's channel is first split four ways, by the parity
    of the padded row and of the padded column: plane ``rp, cp`` holds the
    padded values (2i + rp, 2q + cp), ``tw`` columns q to a row and the
    last column (q = tw) apart, in ``last``. A tile's 4x4 patch then reads
    row ``r + k // 2`` of plane ``k % 2``, columns t and t + 1: the same
    flat offset for every tile, except that column t + 1 of a unit's last
    tile is in ``last``, which a second, short pass puts right.
    """
    batch, channels, height, width = x.shape
    size = (th + 1) * tw
    # The planes start as zeros, and the padding stays zeros: no image value lands there.
    planes = np.zeros((2, 2, size + tw), x.dtype)
    last = np.zeros((2, 2, th + 1), x.dtype)
    se = np.empty(th * tw, x.dtype)  # s = B^T d, its even and odd columns
    so = np.empty(th * tw, x.dtype)
    se_last = np.empty(th, x.dtype)
    so_last = np.empty(th, x.dtype)
    # Image column b is padded column pw + b: columns 2q and 2q + 1 go to opposite parities.
    a0, b0 = pw // 2, (pw + 1) // 2
    ca, cb = pw % 2, 1 - pw % 2
    for c in range(channels):
        for n in range(r_lo // th, (r_hi - 1) // th + 1):
            first_r, last_r = max(r_lo, n * th), min(r_hi, (n + 1) * th)
            r0, units = first_r - n * th, last_r - first_r
            for pr in range(2 * r0, 2 * (r0 + units) + 2):
                iy = pr - ph
                if 0 <= iy < height:
                    src, i, rp = x[n, c, iy], pr // 2, pr % 2
                    ra = planes[rp, ca, i * tw:(i + 1) * tw]
                    rb = planes[rp, cb, i * tw:(i + 1) * tw]
                    pairs = min(width // 2, tw - a0, tw - b0)  # both land inside the planes
                    for q in range(pairs):
                        ra[a0 + q] = src[2 * q]
                        rb[b0 + q] = src[2 * q + 1]
                    for b in range(2 * pairs, width):  # the last column or two
                        col = pw + b
                        if col // 2 < tw:
                            planes[rp, col % 2, i * tw + col // 2] = src[b]
                        else:
                            last[rp, col % 2, i] = src[b]
            count = units * tw
            base = (first_r - r_lo) * tw
            for i in range(4):
                # s = row i of B^T d: d0 - d2, d1 + d2, d2 - d1, d1 - d3
                ka = 1 if i == 1 or i == 3 else (0 if i == 0 else 2)
                kb = 2 if i < 2 else (1 if i == 2 else 3)
                sign = 1 if i == 1 else -1
                fa, fb = (r0 + ka // 2) * tw, (r0 + kb // 2) * tw
                la, lb = r0 + ka // 2, r0 + kb // 2
                _combine(se, planes[ka % 2, 0, fa:], planes[kb % 2, 0, fb:], sign, count)
                _combine(so, planes[ka % 2, 1, fa:], planes[kb % 2, 1, fb:], sign, count)
                _combine(se_last, last[ka % 2, 0, la:], last[kb % 2, 0, lb:], sign, units)
                _combine(so_last, last[ka % 2, 1, la:], last[kb % 2, 1, lb:], sign, units)
                # then s B, tile by tile: s0 - s2, s1 + s2, s2 - s1, s1 - s3, where s2 and
                # s3 are the next tile's s0 and s1 (or a unit's last column)
                d0 = v[4 * i, c, base:base + count]
                d1 = v[4 * i + 1, c, base:base + count]
                d2 = v[4 * i + 2, c, base:base + count]
                d3 = v[4 * i + 3, c, base:base + count]
                for t in range(count - 1):
                    d0[t] = se[t] - se[t + 1]
                for t in range(count - 1):
                    d1[t] = so[t] + se[t + 1]
                for t in range(count - 1):
                    d2[t] = se[t + 1] - so[t]
                for t in range(count - 1):
                    d3[t] = so[t] - so[t + 1]
                for r in range(units):  # each unit's last tile: its t + 1 column is ``last``
                    t = (r + 1) * tw - 1
                    d0[t] = se[t] - se_last[r]
                    d1[t] = so[t] + se_last[r]
                    d2[t] = se_last[r] - so[t]
                    d3[t] = so[t] - so_last[r]


@njit(cache=True, nogil=True)
def outputs(out, m, bias, has_bias, r_lo, r_hi, th, tw):
    """out[n, o, 2ty:2ty+2, 2tx:2tx+2] = A^T m A (+ bias[o]) for the tiles of units [r_lo, r_hi).

    ``m`` is (16, O, tiles) from the products. A tile that hangs over the
    bottom or right edge (odd output sizes) writes only its inside part. As
    in ``patches``, the arithmetic runs over all the tiles of an image's
    units at once, in loops that touch few arrays, so that it vectorises;
    only the last step, which interleaves each tile's two columns into an
    output row, goes unit by unit.
    """
    batch, channels, oh, ow = out.shape
    full = ow // 2  # tiles with both columns inside
    most = min(th, r_hi - r_lo) * tw  # tiles of one image in [r_lo, r_hi), at most
    s = np.empty((8, most), m.dtype)
    cols = np.empty((2, 2, most), m.dtype)  # output rows 0 and 1 of each tile, by column
    for o in range(channels):
        add = bias[o] if has_bias else bias[0] * 0
        for n in range(r_lo // th, (r_hi - 1) // th + 1):
            first_r, last_r = max(r_lo, n * th), min(r_hi, (n + 1) * th)
            r0, units = first_r - n * th, last_r - first_r
            count = units * tw
            base = (first_r - r_lo) * tw
            # s = A^T m: rows m0 + m1 + m2 (s[0:4]) and m1 - m2 - m3 (s[4:8]), column by column
            for j in range(4):
                a, b = m[j, o, base:base + count], m[4 + j, o, base:base + count]
                e, f = m[8 + j, o, base:base + count], m[12 + j, o, base:base + count]
                s0, s1 = s[j], s[4 + j]
                for t in range(count):
                    s0[t] = a[t] + b[t] + e[t]
                for t in range(count):
                    s1[t] = b[t] - e[t] - f[t]
            # then s A: columns s0 + s1 + s2 and s1 - s2 - s3
            for i in range(2):
                c0, c1, c2, c3 = s[4 * i], s[4 * i + 1], s[4 * i + 2], s[4 * i + 3]
                left, right = cols[i, 0], cols[i, 1]
                for t in range(count):
                    left[t] = c0[t] + c1[t] + c2[t] + add
                for t in range(count):
                    right[t] = c1[t] - c2[t] - c3[t] + add
            for r in range(units):
                y = 2 * (r0 + r)
                for i in range(2):
                    if y + i >= oh:
                        break
                    dst = out[n, o, y + i]
                    left, right = cols[i, 0, r * tw:(r + 1) * tw], cols[i, 1, r * tw:(r + 1) * tw]
                    for t in range(full):
                        dst[2 * t] = left[t]
                        dst[2 * t + 1] = right[t]
                    if full < tw:
                        dst[2 * full] = left[full]
