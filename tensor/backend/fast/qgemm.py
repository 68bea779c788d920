"""int8 convolutions and linear layers at speed: the taught ``qgemm_requant``'s
integers, from kernels that keep their sums in registers.

Chapter 10's kernel (``kernels/quantized.py``) copies every input value once
per kernel tap (im2col), widens it to int16, and reads the weights as they
are stored. Here:

- the activations are *channels last* (NHWC): a pixel's channels are
  contiguous, and so is a whole row of taps (``kw`` pixels side by side), so
  a convolution reads its windows straight from the input, padded once; no
  tap is copied. The output is channels last too (an NCHW-shaped view of
  NHWC memory, as torch's quantized convolutions give), ready for the next
  layer;
- the weights are packed once, when the module gets them (``pack``): blocks
  of 64 output channels, and in each block, for every tap and every four
  input channels, 64 x 4 bytes, the order both kernels read;
- uint8 activations meet int8 weights four bytes at a time, summed exactly
  into int32: ``vpdpbusd`` (AVX-512 VNNI) or its portable equal
  (``int8_simd.dot``) on 6 pixels x 64 channels held in 24 vector
  registers, or AMX's ``tdpbusd`` on 32 pixels x 32 channels in four tiles
  (``amx.py``);
- the input's zero point is not subtracted in the loop: the padding holds
  the zero point itself, so ``sum((x - z) * w) = sum(x * w) - z * sum(w)``,
  with ``sum(w)`` computed at packing;
- the sums are requantized in the same kernel as soon as a tile is done, by
  the taught kernel's float32 arithmetic, while they are in the cache;
- a layer is one task for the spinning workers (``threads.spread``).

``PATH`` names the kernel: ``"amx"``, ``"vnni"`` or ``"portable"``;
``settings.INT8_PATH`` chooses it, by default the fastest that the CPU numba
compiles for has.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np
from numba import cfunc, njit

from ..kernels._cache import keyed_by_every_kernel_source
from . import amx, spin
from . import int8_simd as simd
from .allocator import empty
from .int8_simd import dot
from .settings import AMX_MIN_ROWS, INT8_MACS_PER_COPY, INT8_PATH
from .threads import spread

BLOCK = 64  # output channels per packed block: four vectors of 16 lanes
TILE = 6  # pixels per vector tile: 6 x 4 accumulators, 24 of AVX-512's 32 registers
GROUP = 16  # pixels per AMX tile row group (one output row's neighbours)
PAD, S2D = 1, 2  # how a layer's input is copied (``_Plan.copy``)
LAYER = 18  # int64 words that describe a layer to its task (``_plan``)
_AVAILABLE = {"amx": amx.AMX, "vnni": simd.VNNI, "portable": True}


def _path() -> str:
    if INT8_PATH == "auto":
        return next(name for name, ok in _AVAILABLE.items() if ok)
    if INT8_PATH not in _AVAILABLE:
        raise ValueError(f"TENSOR_INT8_PATH={INT8_PATH!r}: choose auto, amx, vnni or portable")
    if not _AVAILABLE[INT8_PATH]:
        raise RuntimeError(f"TENSOR_INT8_PATH={INT8_PATH}: the CPU numba compiles for has no "
                           f"{INT8_PATH.upper()} (or the system does not grant it)")
    return INT8_PATH


PATH = _path()


class Packed(NamedTuple):
    """A layer's int8 weights in the kernels' order, and what they need to know of them."""

    data: np.ndarray  # (blocks, kh, kw, channels // 4, BLOCK, 4) int8, flat
    sums: np.ndarray  # (out_channels,) int32: each output channel's sum of weights
    out_channels: int
    channels: int  # input channels, a multiple of 4 (zeros added)
    kh: int
    kw: int
    weight: np.ndarray  # the integers as given
    plans: dict  # (input shape, ...) -> _Plan, filled on first use


def pack(weight: np.ndarray) -> Packed:
    """Pack a qint8 weight's integers, (O, C, kh, kw) or (O, K), for ``conv2d`` and ``linear``."""
    w = weight.reshape(weight.shape[0], weight.shape[1], *(weight.shape[2:] or (1, 1)))
    o, c, kh, kw = w.shape
    blocks, c4 = -(-o // BLOCK), -(-c // 4)
    padded = np.zeros((blocks * BLOCK, c4 * 4, kh, kw), np.int8)
    padded[:o, :c] = w
    # [block, lane, c4, byte, i, j] -> [block, i, j, c4, lane, byte]
    data = padded.reshape(blocks, BLOCK, c4, 4, kh, kw).transpose(0, 4, 5, 2, 1, 3)
    sums = w.reshape(o, -1).sum(1, dtype=np.int64).astype(np.int32)
    packed = _aligned(data.size, np.uint8, np.empty).view(np.int8)
    packed[:] = data.reshape(-1)
    return Packed(packed, sums, o, c4 * 4, kh, kw, weight, {})


def _aligned(size: int, dtype, allocate=empty) -> np.ndarray:
    """A 1-d array of ``size`` elements whose first byte is at a multiple of 64: a load
    of 64 bytes (a vector, or a tile's row) then touches one cache line, not two. AMX
    tile loads ran four times slower from misaligned rows."""
    block = allocate((size * np.dtype(dtype).itemsize + 64,), np.dtype(np.uint8))
    start = -address(block) % 64
    return block[start:start + size * np.dtype(dtype).itemsize].view(dtype)


# ---- the kernels ---------------------------------------------------------------------
with keyed_by_every_kernel_source():

    @njit(inline="always")
    def _requant(acc, shift, mult, bias, scalars, out):
        """The taught kernel's requantization of one pixel's sums, the input's zero
        point taken off first (``sum(x * w) - zx * sum(w)``; ``shift`` is ``zx * sum(w)``)."""
        inv_out, zp_out, qmin, qmax = scalars
        for o in range(out.shape[0]):
            v = np.float32(np.int32(acc[o] - shift[o])) * mult[o] + bias[o]
            q = np.rint(v * inv_out) + zp_out
            out[o] = min(max(q, qmin), qmax)

    @njit(inline="always")
    def _pixel(vnni, x, at, a0, a1, a2, a3, w0, w1, w2, w3):
        """One pixel's four accumulators plus its four bytes at x[at] times the weights."""
        b = simd.broadcast(x, at)
        return dot(vnni, a0, b, w0), dot(vnni, a1, b, w1), dot(vnni, a2, b, w2), dot(vnni, a3, b, w3)

    @njit(inline="always")
    def _store4(acc, i, v0, v1, v2, v3):
        simd.store(acc, i, v0)
        simd.store(acc, i + 16, v1)
        simd.store(acc, i + 32, v2)
        simd.store(acc, i + 48, v3)

    # --8<-- [start:vector_tile]
    @njit(inline="always")
    def _vector_tile(vnni, wp, wi, x, p0, p1, p2, p3, p4, p5, taps, steps, acc):
        """acc[64 r:64 r + 64] = the int32 sums of pixel r (whose window starts at x[p_r])
        with the 64 output channels of the packed block at wp[wi]."""
        z = simd.zeros()
        a00, a01, a02, a03, a10, a11, a12, a13 = z, z, z, z, z, z, z, z
        a20, a21, a22, a23, a30, a31, a32, a33 = z, z, z, z, z, z, z, z
        a40, a41, a42, a43, a50, a51, a52, a53 = z, z, z, z, z, z, z, z
        for t in range(taps.shape[0]):  # a row of taps: 4 * steps contiguous bytes
            at = taps[t]
            q0, q1, q2, q3, q4, q5 = p0 + at, p1 + at, p2 + at, p3 + at, p4 + at, p5 + at
            for c in range(0, 4 * steps, 4):
                w0, w1 = simd.load(wp, wi), simd.load(wp, wi + 64)
                w2, w3 = simd.load(wp, wi + 128), simd.load(wp, wi + 192)
                wi += 256
                a00, a01, a02, a03 = _pixel(vnni, x, q0 + c, a00, a01, a02, a03, w0, w1, w2, w3)
                a10, a11, a12, a13 = _pixel(vnni, x, q1 + c, a10, a11, a12, a13, w0, w1, w2, w3)
                a20, a21, a22, a23 = _pixel(vnni, x, q2 + c, a20, a21, a22, a23, w0, w1, w2, w3)
                a30, a31, a32, a33 = _pixel(vnni, x, q3 + c, a30, a31, a32, a33, w0, w1, w2, w3)
                a40, a41, a42, a43 = _pixel(vnni, x, q4 + c, a40, a41, a42, a43, w0, w1, w2, w3)
                a50, a51, a52, a53 = _pixel(vnni, x, q5 + c, a50, a51, a52, a53, w0, w1, w2, w3)
        _store4(acc, 0, a00, a01, a02, a03)
        _store4(acc, 64, a10, a11, a12, a13)
        _store4(acc, 128, a20, a21, a22, a23)
        _store4(acc, 192, a30, a31, a32, a33)
        _store4(acc, 256, a40, a41, a42, a43)
        _store4(acc, 320, a50, a51, a52, a53)
    # --8<-- [end:vector_tile]

    @njit(inline="always")
    def _groups(geometry):
        """How AMX's groups of 16 windows cover a layer's pixels. Window v starts
        ``v * sw * channels`` bytes into the padded input (``wpad`` is a multiple of
        ``sw``), so output pixel (n, y, x) is window ``n * image_step + y * row_step + x``,
        and 16 consecutive windows are one strided tile load, whatever rows they
        straddle; the windows between two output rows are computed and dropped.
        Returns (row_step, groups per image, image_step)."""
        oh, ow, hp, wpad, sh, sw = geometry
        row_step = sh * wpad // sw
        return row_step, -(-((oh - 1) * row_step + ow) // GROUP), hp * wpad // sw

    @njit(inline="always")
    def _start(p, geometry, channels):
        """Where pixel ``p``'s window starts in the padded input, in bytes."""
        oh, ow, hp, wpad, sh, sw = geometry
        n, yx = p // (oh * ow), p % (oh * ow)
        return ((n * hp + (yx // ow) * sh) * wpad + (yx % ow) * sw) * channels

    @njit(inline="always")
    def _vector_units(vnni, lo, hi, x, wp, taps, steps, channels, geometry, shift, mult,
                      bias, scalars, out):
        """Units [lo, hi): unit u is output block u // tiles times pixel tile u % tiles."""
        pixels, n_out = out.shape
        tiles = -(-pixels // TILE)
        flat = out.reshape(-1)
        acc = np.empty(TILE * BLOCK, np.int32)
        starts = np.empty(TILE, np.int64)
        for u in range(lo, hi):
            block, first = u // tiles, (u % tiles) * TILE
            for r in range(TILE):  # a short last tile repeats its last pixel
                starts[r] = _start(min(first + r, pixels - 1), geometry, channels)
            _vector_tile(vnni, wp, block * taps.shape[0] * steps * 256, x, starts[0], starts[1],
                         starts[2], starts[3], starts[4], starts[5], taps, steps, acc)
            o0, o1 = block * BLOCK, min(block * BLOCK + BLOCK, n_out)
            z, m, b = shift[o0:o1], mult[o0:o1], bias[o0:o1]
            for r in range(min(TILE, pixels - first)):
                if o1 - o0 == BLOCK:
                    for j in range(0, BLOCK, 16):
                        simd.requantize(acc, BLOCK * r + j, shift, mult, bias, o0 + j, scalars,
                                        flat, (first + r) * n_out + o0 + j)
                else:
                    _requant(acc[BLOCK * r:BLOCK * r + o1 - o0], z, m, b, scalars,
                             out[first + r, o0:o1])

    # --8<-- [start:amx_units]
    @njit(inline="always")
    def _amx_units(lo, hi, x, wp, taps, steps, chunk, channels, geometry, shift, mult, bias,
                   scalars, out):
        """Units [lo, hi): unit u is half-block u // pairs (32 output channels) times the
        groups 2 (u % pairs) and the next. A group is 16 windows ``sw * channels`` bytes
        apart in the padded input (``_groups``): a tile's 16 rows, loaded with one
        stride. Tiles 0-3 hold the sums, 4-5 the two groups' windows, 6-7 two sets of
        16 channels' weights, ``chunk`` bytes of a row of taps at a time.

        A unit's sums are requantized after the next unit's products are issued: the
        tile unit works through them while the vector units requantize."""
        oh, ow, hp, wpad, sh, sw = geometry
        row_step, per_image, image_step = _groups(geometry)
        groups = out.shape[0] // (oh * ow) * per_image
        pairs = -(-groups // 2)
        sums_tiles = np.empty((2, 2 * GROUP * 32), np.int32)  # this unit's, the last one's
        config = np.zeros(64, np.uint8)
        config[0] = 1  # palette 1
        for t in range(8):  # bytes per row, rows
            config[16 + 2 * t] = 64 if t < 4 or t > 5 else chunk
            config[48 + t] = chunk // 4 if t > 5 else GROUP
        amx.configure(config)
        for u in range(lo, hi):
            half, g0 = u // pairs, 2 * (u % pairs)
            g1 = min(g0 + 1, groups - 1)  # an odd last group runs twice
            s0 = (g0 // per_image * image_step + g0 % per_image * GROUP) * sw * channels
            s1 = (g1 // per_image * image_step + g1 % per_image * GROUP) * sw * channels
            w_half = (half // 2) * taps.shape[0] * steps * 256 + (half % 2) * 128
            amx.zero(0)
            amx.zero(1)
            amx.zero(2)
            amx.zero(3)
            for t in range(taps.shape[0]):
                for k in range(0, 4 * steps, chunk):
                    amx.load(4, x, s0 + taps[t] + k, sw * channels)
                    amx.load(6, wp, w_half + (t * steps + k // 4) * 256, 256)
                    amx.dpbusd(0, 4, 6)
                    amx.load(7, wp, w_half + (t * steps + k // 4) * 256 + 64, 256)
                    amx.dpbusd(1, 4, 7)
                    amx.load(5, x, s1 + taps[t] + k, sw * channels)
                    amx.dpbusd(2, 5, 6)
                    amx.dpbusd(3, 5, 7)
            if u > lo:
                _amx_requant(u - 1, pairs, groups, per_image, row_step, geometry,
                             sums_tiles[(u - 1) % 2], shift, mult, bias, scalars, out)
            sums = sums_tiles[u % 2]  # (32 windows, 32 channels)
            amx.store(0, sums, 0, 128)
            amx.store(1, sums, 16, 128)
            amx.store(2, sums, GROUP * 32, 128)
            amx.store(3, sums, GROUP * 32 + 16, 128)
        if hi > lo:
            _amx_requant(hi - 1, pairs, groups, per_image, row_step, geometry,
                         sums_tiles[(hi - 1) % 2], shift, mult, bias, scalars, out)
        amx.release()

    @njit(inline="always")
    def _amx_requant(u, pairs, groups, per_image, row_step, geometry, sums, shift, mult, bias,
                     scalars, out):
        """Unit u's output pixels from its (32 windows, 32 channels) sums."""
        oh, ow = geometry[0], geometry[1]
        half, g0 = u // pairs, 2 * (u % pairs)
        o0, o1 = half * 32, min(half * 32 + 32, out.shape[1])
        z, m, b = shift[o0:o1], mult[o0:o1], bias[o0:o1]
        flat = out.reshape(-1)
        for i in range(2 if g0 + 1 < groups else 1):
            g = g0 + i
            for r in range(GROUP):  # the windows that are output pixels
                y, xo = divmod(g % per_image * GROUP + r, row_step)
                if y < oh and xo < ow:
                    row, p = 32 * (GROUP * i + r), (g // per_image * oh + y) * ow + xo
                    if o1 - o0 == 32:
                        for j in range(0, 32, 16):
                            simd.requantize(sums, row + j, shift, mult, bias, o0 + j, scalars,
                                            flat, p * out.shape[1] + o0 + j)
                    else:
                        _requant(sums[row:row + o1 - o0], z, m, b, scalars, out[p, o0:o1])
    # --8<-- [end:amx_units]

    @njit(inline="always")
    def _layer(ints):
        """The layer that ``_plan`` describes, as the kernels' arguments. ``ints`` holds
        the addresses of the output, the input, the plan's words and its four float32
        scalars, then the output's pixels."""
        (x_size, wp, wp_size, taps, n_taps, steps, chunk, channels, oh, ow, hp, wpad, sh, sw,
         shift, mult, bias, n_out) = spin.array_at(ints[2], LAYER, np.int64)
        f = spin.array_at(ints[3], 4, np.float32)
        return (spin.array_at(ints[1], x_size, np.uint8), spin.array_at(wp, wp_size, np.int8),
                spin.array_at(taps, n_taps, np.int64), steps, chunk, channels,
                (oh, ow, hp, wpad, sh, sw), spin.array_at(shift, n_out, np.int32),
                spin.array_at(mult, n_out, np.float32), spin.array_at(bias, n_out, np.float32),
                (f[0], f[1], f[2], f[3]), spin.array_at(ints[0], (ints[4], n_out), np.uint8))

    @njit(cache=True, nogil=True)
    def address(array):
        """Where ``array``'s data starts (NumPy's ``array.ctypes.data``, sooner)."""
        return array.ctypes.data

    @njit(cache=True, nogil=True)
    def pad_rows(x, zp, ph, pw, out):
        """``pad_channels_last`` for a channels-last ``x`` (N, H, W, C) of as many channels
        as ``out`` (N, HP, WP, C): whole rows copied, everything else ``zp``."""
        batch, height, width, channels = x.shape
        for n in range(batch):
            for y in range(out.shape[1]):
                row = out[n, y].reshape(-1)
                iy = y - ph
                if iy < 0 or iy >= height:
                    row[:] = zp
                else:
                    row[:pw * channels] = zp
                    row[pw * channels:(pw + width) * channels] = x[n, iy].reshape(-1)
                    row[(pw + width) * channels:] = zp

    @njit(cache=True, nogil=True)
    def pad_channels_last(x, zp, ph, pw, out):
        """out[n, ph + y, pw + x, c] = x[n, c, y, x] for ``x`` of any strides (NCHW-shaped);
        everything else ``zp`` (the real 0; the channels past C have weights 0)."""
        batch, channels, height, width = x.shape
        out[:] = zp
        for n in range(batch):
            for c in range(channels):
                for y in range(height):
                    src, dst = x[n, c, y], out[n, ph + y, pw:pw + width, c]
                    for i in range(width):
                        dst[i] = src[i]

    @njit(cache=True, nogil=True)
    def space_to_depth(x, zp, ph, pw, out):
        """out[n, y, x, 8a + 4b + c] = x[n, c, 2y + a - ph, 2x + b - pw] for ``x`` of any
        strides and at most 4 channels, ``zp`` outside ``x``: a stride-2 window of
        ``x`` is then a stride-1 window of ``out``, whose rows of taps are 64 bytes
        (16 channels, 4 pixels) where ``x``'s were 28 (7 pixels of 4 channels)."""
        batch, channels, height, width = x.shape
        out[:] = zp
        for n in range(batch):
            for c in range(channels):
                for y in range(height):
                    a, src = (y + ph) % 2, x[n, c, y]
                    for b in range(2):
                        first = (b - pw) % 2  # the first column x with (x + pw) % 2 == b
                        dst = out[n, (y + ph) // 2, (first + pw) // 2:, 8 * a + 4 * b + c]
                        for i in range((width - first + 1) // 2):
                            dst[i] = src[first + 2 * i]

    @njit(cache=True, nogil=True)
    def max_pool_channels_last(x, kh, kw, sh, sw, ph, pw, dh, dw, out):
        """The taught ``max_pool2d_int`` on NHWC arrays, flat (``x`` is (N, H, W, C) and
        ``out`` (N, OH, OW, C)): the maximum of each window, the padding never
        winning, 64 channels at a time (C a multiple of 64)."""
        batch, height, width, channels = x.shape
        _, oh, ow, _ = out.shape
        xs, outs = x.reshape(-1), out.reshape(-1)
        for n in range(batch):
            for y in range(oh):
                for xo in range(ow):
                    at = ((n * oh + y) * ow + xo) * channels
                    for c in range(0, channels, 64):
                        best = simd.zeros()
                        for i in range(kh):
                            iy = y * sh - ph + i * dh
                            if 0 <= iy < height:
                                for j in range(kw):
                                    ix = xo * sw - pw + j * dw
                                    if 0 <= ix < width:
                                        best = simd.max_u8(best, simd.load(
                                            xs, ((n * height + iy) * width + ix) * channels + c))
                        simd.store(outs, at + c, best)

@functools.cache
def task(path: str) -> int:
    """The address of ``path``'s kernel as a task for the spinning workers, compiled on
    first use: a CPU without AMX or VNNI cannot even compile those instructions."""
    with keyed_by_every_kernel_source():
        if path == "amx":

            @cfunc(spin.TASK, cache=True)
            def kernel(ints, floats, lo, hi):
                x, wp, taps, steps, chunk, channels, geometry, shift, mult, bias, scalars, \
                    out = _layer(ints)
                _amx_units(lo, hi, x, wp, taps, steps, chunk, channels, geometry, shift,
                           mult, bias, scalars, out)

        elif path == "vnni":

            @cfunc(spin.TASK, cache=True)
            def kernel(ints, floats, lo, hi):
                x, wp, taps, steps, _, channels, geometry, shift, mult, bias, scalars, out = \
                    _layer(ints)
                _vector_units(True, lo, hi, x, wp, taps, steps, channels, geometry, shift,
                              mult, bias, scalars, out)

        else:

            @cfunc(spin.TASK, cache=True)
            def kernel(ints, floats, lo, hi):
                x, wp, taps, steps, _, channels, geometry, shift, mult, bias, scalars, out = \
                    _layer(ints)
                _vector_units(False, lo, hi, x, wp, taps, steps, channels, geometry, shift,
                              mult, bias, scalars, out)

    return kernel.address


# ---- the ops -------------------------------------------------------------------------
def _channels_last(x: np.ndarray) -> np.ndarray | None:
    """The NHWC array behind an NCHW-shaped ``x``, if its memory is channels last."""
    nhwc = x.transpose(0, 2, 3, 1)
    return nhwc if nhwc.flags.c_contiguous else None


def _chunk(run: int) -> int:
    """The bytes of a tap row one AMX step takes: the largest multiple of 4 up to 64
    that divides the row's ``run`` bytes (a step never crosses into the next row)."""
    return next(k for k in range(64, 0, -4) if run % k == 0)


def _kernel_for(geometry) -> str:
    """``PATH``, unless it is AMX and its tiles would hold too few output pixels
    (``AMX_MIN_ROWS``, ``_groups``): then the vector kernel."""
    if PATH == "amx":
        oh, ow = geometry[:2]
        if oh * ow < AMX_MIN_ROWS * GROUP * _groups(geometry)[1]:
            return "vnni" if simd.VNNI else "portable"
    return PATH


class _Plan(NamedTuple):
    """How one layer runs on inputs of one shape: everything but the input and output
    arrays, worked out on the first call and kept on the ``Packed`` weights."""

    task: int  # the kernel's address (``task``)
    units: int
    work: float  # element-copies, for ``threads.spread``
    copy: int  # the input as it is (0), copied padded (PAD) or space to depth (S2D)
    size: int  # bytes of that copy
    words: np.ndarray  # the layer's description for the task (``_layer``)
    scalars: np.ndarray  # inv_out, zp_out, qmin, qmax as float32
    keep: tuple  # the arrays ``words`` holds the addresses of


def _plan(packed: Packed, path: str, taps: np.ndarray, steps: int, geometry, pixels: int,
          copy: bool, size: int, zx: int, mult, bias, scalars) -> _Plan:
    """The words ``_layer`` reads: the sizes, the geometry, and the addresses of the
    weights, the taps, the shift ``zx * sum(w)`` of each output channel, mult and bias."""
    n_out = packed.out_channels
    if path == "amx":
        groups = pixels // (geometry[0] * geometry[1]) * _groups(geometry)[1]
        units = -(-n_out // 32) * -(-groups // 2)
    else:
        units = -(-n_out // BLOCK) * -(-pixels // TILE)
    mult, bias = np.ascontiguousarray(mult, np.float32), np.ascontiguousarray(bias, np.float32)
    shift = (np.int64(zx) * packed.sums).astype(np.int32)
    words = np.array([size, address(packed.data), packed.data.size, address(taps), taps.size,
                      steps, _chunk(4 * steps), packed.channels, *geometry, address(shift),
                      address(mult), address(bias), n_out], np.int64)
    work = pixels * n_out * taps.size * steps * 4 / INT8_MACS_PER_COPY
    return _Plan(task(path), units, work, copy, size, words,
                 np.array(scalars, np.float32), (taps, shift, mult, bias))


def _s2d_weight(w: np.ndarray) -> np.ndarray:
    """The weights of a stride-2 convolution as those of a stride-1 one on the input's
    ``space_to_depth``: w2[o, 8a + 4b + c, i, j] = w[o, c, 2i + a, 2j + b]."""
    o, c, kh, kw = w.shape
    w2 = np.zeros((o, 2, 2, 4, -(-kh // 2), -(-kw // 2)), np.int8)
    for a in range(2):
        for b in range(2):
            taps = w[:, :, a::2, b::2]
            w2[:, a, b, :c, :taps.shape[2], :taps.shape[3]] = taps
    return w2.reshape(o, 16, *w2.shape[4:])


def _cached(packed: Packed, key: tuple, make) -> _Plan:
    plan = packed.plans.get(key)
    if plan is None:
        if len(packed.plans) >= 16:  # inputs of many shapes: keep the last few
            s2d = packed.plans.get("s2d")
            packed.plans.clear()
            if s2d is not None:
                packed.plans["s2d"] = s2d
        plan = packed.plans[key] = make()
    return plan


def conv2d(x: np.ndarray, zx: int, packed: Packed, stride, padding, dilation,
           oh: int, ow: int, mult, bias, inv_out, zp_out, qmin, qmax) -> np.ndarray:
    """requant(conv2d(x - zx, weight)) of an NCHW-shaped uint8 ``x``: an NCHW-shaped uint8
    array whose memory is channels last. ``mult`` and ``bias`` must not change between
    calls (their identity is part of the plan's key)."""
    key = (x.shape, x.strides, zx, stride, padding, dilation, id(mult), id(bias), inv_out,
           zp_out, qmin, qmax)
    plan = _cached(packed, key, lambda: _conv_plan(x, zx, packed, stride, padding, dilation,
                                                   oh, ow, mult, bias, inv_out, zp_out, qmin,
                                                   qmax))
    n = x.shape[0]
    if plan.copy:
        (ph, pw), (hp, wpad, cp) = padding, plan.words[[10, 11, 7]]
        flat = _aligned(plan.size, np.uint8)
        padded = flat[:n * hp * wpad * cp].reshape(n, hp, wpad, cp)
        nhwc = _channels_last(x)
        if plan.copy == S2D:
            space_to_depth(x, np.uint8(zx), ph, pw, padded)
        elif nhwc is not None and x.shape[1] == cp:
            pad_rows(nhwc, np.uint8(zx), ph, pw, padded)
        else:
            pad_channels_last(x, np.uint8(zx), ph, pw, padded)
    else:
        flat = x.transpose(0, 2, 3, 1).reshape(-1)
    out = _aligned(n * oh * ow * packed.out_channels, np.uint8).reshape(n * oh * ow, -1)
    spread(plan.task, plan.units, plan.work, out, flat, plan.words, plan.scalars, k0=out.shape[0])
    return out.reshape(n, oh, ow, -1).transpose(0, 3, 1, 2)


def _conv_plan(x, zx, packed: Packed, stride, padding, dilation, oh, ow, mult, bias,
               inv_out, zp_out, qmin, qmax) -> _Plan:
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    n, c, h, w = x.shape
    hp, wpad = h + 2 * ph, w + 2 * pw
    if (sh, sw, dh, dw) == (2, 2, 1, 1) and packed.channels == 4 and packed.kw > 1:
        # A few channels, stride 2 (a network's first layer): space to depth
        kh, kw = -(-packed.kh // 2), -(-packed.kw // 2)
        hp, wpad = max(-(-hp // 2), oh + kh - 1), max(-(-wpad // 2), ow + kw - 1)
        if "s2d" not in packed.plans:
            packed.plans["s2d"] = pack(_s2d_weight(packed.weight))
        packed, (sh, sw), copy = packed.plans["s2d"], (1, 1), S2D
    else:
        copy = PAD if (_channels_last(x) is None or ph or pw or c != packed.channels) else 0
    cp = packed.channels
    path = _kernel_for((oh, ow, hp, wpad + -wpad % sw, sh, sw))
    if path == "amx":  # AMX's windows are sw pixels apart: rows of a multiple of sw
        wpad += -wpad % sw
    if dw == 1:  # a row of taps is kw pixels side by side: one run of kw * C bytes
        taps = np.arange(packed.kh, dtype=np.int64) * (dh * wpad * cp)
        steps = packed.kw * cp // 4
    else:
        taps = np.array([(i * dh * wpad + j * dw) * cp
                         for i in range(packed.kh) for j in range(packed.kw)], np.int64)
        steps = cp // 4
    geometry = (oh, ow, hp, wpad, sh, sw)
    size = room = n * hp * wpad * cp
    if path == "amx":  # the last group's windows past the last pixel: room for them
        _, per_image, image_step = _groups(geometry)
        end = ((n - 1) * image_step + per_image * GROUP - 1) * sw * cp + taps[-1] + 4 * steps
        room = max(size, int(end))
    if copy == 0 and (room > size or wpad != w):
        copy = PAD
    return _plan(packed, path, taps, steps, geometry, n * oh * ow, copy, room, zx, mult,
                 bias, (inv_out, zp_out, qmin, qmax))


def linear(rows: np.ndarray, zx: int, packed: Packed, mult, bias, inv_out, zp_out, qmin,
           qmax) -> np.ndarray:
    """requant((rows - zx) @ weight.T) for (M, K) uint8 rows: (M, O) uint8. The rows are
    one output row of M pixels to the convolution kernels."""
    m, k = rows.shape
    path = _kernel_for((1, m, 1, m, 1, 1))
    room = GROUP if path == "amx" else 0  # AMX's rows past the last one
    if k != packed.channels or not rows.flags.c_contiguous or room:
        padded = np.zeros((m + room, packed.channels), np.uint8)
        padded[:m, :k] = rows
        rows = padded
    key = (rows.shape, zx, id(mult), id(bias), inv_out, zp_out, qmin, qmax)
    plan = _cached(packed, key, lambda: _plan(
        packed, path, np.zeros(1, np.int64), packed.channels // 4, (1, m, 1, m, 1, 1), m, False,
        rows.size, zx, mult, bias, (inv_out, zp_out, qmin, qmax)))
    out = empty((m, packed.out_channels), np.dtype(np.uint8))
    spread(plan.task, plan.units, plan.work, out, rows.reshape(-1), plan.words, plan.scalars,
           k0=m)
    return out


def max_pool2d(x: np.ndarray, kernel, stride, padding, dilation, oh: int, ow: int):
    """The quantized max pool of a channels-last NCHW-shaped ``x`` (else None: the
    taught kernel takes it), channels last too."""
    nhwc = _channels_last(x)
    if nhwc is None or nhwc.shape[3] % 64:
        return None
    n, _, _, c = nhwc.shape
    out = empty((n, oh, ow, c), nhwc.dtype)
    max_pool_channels_last(nhwc, *kernel, *stride, *padding, *dilation, out)
    return out.transpose(0, 3, 1, 2)
