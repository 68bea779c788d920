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


@njit(cache=True, nogil=True)
def patches(v, x, r_lo, r_hi, th, tw, ph, pw):
    """v[(i, j), c, tile] = (B^T d B)[i, j] for the 4x4 input patch d of each tile.

    The tiles are those of units (tile rows) [r_lo, r_hi), in order, ``tw``
    per unit. Four padded input rows are copied first into a small buffer,
    split into their even and odd columns, so that every later loop reads
    and writes with unit stride, without bounds checks, and touches few
    arrays: LLVM vectorises such loops. (One loop writing all 16 outputs, or
    reading every second column, did not vectorise and was several times
    slower.)
    """
    batch, channels, height, width = x.shape
    half = tw + 1  # padded columns 2j (even) and 2j + 1 (odd), j < half
    even = np.zeros((4, half), x.dtype)
    odd = np.zeros((4, half), x.dtype)
    se = np.empty(half, x.dtype)
    so = np.empty(half, x.dtype)
    for c in range(channels):
        for r in range(r_lo, r_hi):
            n = r // th
            top = 2 * (r % th) - ph
            for k in range(4):
                iy = top + k
                ek, ok = even[k], odd[k]
                ek[:] = 0
                ok[:] = 0
                if 0 <= iy < height:
                    src = x[n, c, iy]
                    for b in range(width):
                        p = pw + b
                        if p % 2 == 0:
                            ek[p // 2] = src[b]
                        else:
                            ok[p // 2] = src[b]
            base = (r - r_lo) * tw
            for i in range(4):
                # s = row i of B^T d: d0 - d2, d1 + d2, d2 - d1, d1 - d3
                ka = 1 if i == 1 or i == 3 else (0 if i == 0 else 2)
                kb = 2 if i < 2 else (1 if i == 2 else 3)
                sign = 1 if i == 1 else -1
                ea, eb, oa, ob = even[ka], even[kb], odd[ka], odd[kb]
                for q in range(half):
                    se[q] = ea[q] + sign * eb[q]
                for q in range(half):
                    so[q] = oa[q] + sign * ob[q]
                # then s B, tile by tile: s0 - s2, s1 + s2, s2 - s1, s1 - s3
                d = v[4 * i, c, base:base + tw]
                for t in range(tw):
                    d[t] = se[t] - se[t + 1]
                d = v[4 * i + 1, c, base:base + tw]
                for t in range(tw):
                    d[t] = so[t] + se[t + 1]
                d = v[4 * i + 2, c, base:base + tw]
                for t in range(tw):
                    d[t] = se[t + 1] - so[t]
                d = v[4 * i + 3, c, base:base + tw]
                for t in range(tw):
                    d[t] = so[t] - so[t + 1]


@njit(cache=True, nogil=True)
def outputs(out, m, bias, has_bias, r_lo, r_hi, th, tw):
    """out[n, o, 2ty:2ty+2, 2tx:2tx+2] = A^T m A (+ bias[o]) for the tiles of units [r_lo, r_hi).

    ``m`` is (16, O, tiles) from the products. A tile that hangs over the
    bottom or right edge (odd output sizes) writes only its inside part. As
    in ``patches``, every loop touches few arrays, so that it vectorises.
    """
    batch, channels, oh, ow = out.shape
    full = ow // 2  # tiles with both columns inside
    s = np.empty((8, tw), m.dtype)
    for o in range(channels):
        add = bias[o] if has_bias else bias[0] * 0
        for r in range(r_lo, r_hi):
            n = r // th
            y = 2 * (r % th)
            base = (r - r_lo) * tw
            # s = A^T m: rows m0 + m1 + m2 (s[0:4]) and m1 - m2 - m3 (s[4:8]), column by column
            for j in range(4):
                end = base + tw
                a, b = m[j, o, base:end], m[4 + j, o, base:end]
                e, f = m[8 + j, o, base:end], m[12 + j, o, base:end]
                s0, s1 = s[j], s[4 + j]
                for t in range(tw):
                    s0[t] = a[t] + b[t] + e[t]
                for t in range(tw):
                    s1[t] = b[t] - e[t] - f[t]
            for i in range(2):
                if y + i >= oh:
                    break
                dst = out[n, o, y + i]
                c0, c1, c2, c3 = s[4 * i], s[4 * i + 1], s[4 * i + 2], s[4 * i + 3]
                # then s A: columns s0 + s1 + s2 and s1 - s2 - s3
                for t in range(full):
                    dst[2 * t] = c0[t] + c1[t] + c2[t] + add
                    dst[2 * t + 1] = c1[t] - c2[t] - c3[t] + add
                if full < tw:
                    dst[2 * full] = c0[full] + c1[full] + c2[full] + add
