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
  the taught kernel's float32 steps (``int8_simd.requantize``);
- a layer is one task for the spinning workers (``threads.spread``).

``PATH`` names the kernel: ``"amx"``, ``"vnni"`` or ``"portable"``;
``settings.INT8_PATH`` chooses it, by default the fastest that the CPU numba
compiles for has.

The ops at the bottom are the int8 interface of ``kernels/quantized.py``, the
same functions with the same integers; ``tensor.backend.int8()`` hands one of
the two modules to ``tensor.nn.quantized``.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np
from numba import cfunc, njit

from ..kernels import quantized as taught
from ..kernels._cache import keyed_by_every_kernel_source
from . import amx, spin
from . import int8_simd as simd
from .allocator import empty
from .settings import AMX_MIN_ROWS, INT8_MACS_PER_COPY, INT8_PATH
from .threads import spread

BLOCK = 64  # output channels per packed block: four vectors of 16 lanes
TILE = 6  # pixels per vector tile: 6 x 4 accumulators, 24 of AVX-512's 32 registers
GROUP = 16  # windows per AMX tile: its 16 rows
PAD, S2D = 1, 2  # how a layer's input is copied (``_Plan.copy``)
LAYER = 21  # int64 words that describe a layer to its task (``_plan``)
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

    data: np.ndarray  # (blocks, kh, kw, channels // 4, BLOCK, 4) int8, flat, 64-aligned
    sums: np.ndarray  # (out_channels,) int32: each output channel's sum of weights
    out_channels: int
    channels: int  # input channels, a multiple of 4 (zeros added)
    kh: int
    kw: int
    weight: np.ndarray  # the integers as given
    plans: dict  # (path, input shape, ...) -> _Plan, filled on first use


def pack(weight: np.ndarray) -> Packed:
    """Pack a qint8 weight's integers, (O, C, kh, kw) or (O, K), for ``conv2d`` and ``linear``."""
    w = weight.reshape(weight.shape[0], weight.shape[1], *(weight.shape[2:] or (1, 1)))
    o, c, kh, kw = w.shape
    blocks, c4 = -(-o // BLOCK), -(-c // 4)
    padded = np.zeros((blocks * BLOCK, c4 * 4, kh, kw), np.int8)
    padded[:o, :c] = w
    # [block, lane, c4, byte, i, j] -> [block, i, j, c4, lane, byte]
    data = padded.reshape(blocks, BLOCK, c4, 4, kh, kw).transpose(0, 4, 5, 2, 1, 3)
    packed = _aligned(data.size, np.empty).view(np.int8)
    packed[:] = data.reshape(-1)
    sums = w.reshape(o, -1).sum(1, dtype=np.int64).astype(np.int32)
    return Packed(packed, sums, o, c4 * 4, kh, kw, weight, {})


def _aligned(size: int, allocate=empty) -> np.ndarray:
    """``size`` bytes (uint8) from a multiple of 64 on: a load of 64 bytes (a vector, or
    a tile's row) then touches one cache line, not two (AMX's tile loads from
    misaligned rows measured much slower)."""
    block = allocate((size + 64,), np.dtype(np.uint8))
    start = -address(block) % 64
    return block[start:start + size]


# ---- the kernels ---------------------------------------------------------------------
with keyed_by_every_kernel_source():

    @njit(cache=True, nogil=True)
    def address(array):
        """Where ``array``'s data starts (NumPy's ``array.ctypes.data``, sooner)."""
        return array.ctypes.data

    @njit(inline="always")
    def _layer(ints):
        """The layer that ``_plan`` describes, as the kernels' arguments. ``ints`` holds
        the addresses of the output, the input, the plan's words and its four float32
        scalars, then the output's pixels."""
        (x_size, wp, wp_size, taps, n_taps, steps, chunk, channels, oh, ow, hp, wpad, sh, sw,
         shift, mult, bias, n_out) = spin.array_at(ints[2], LAYER, np.int64)[:18]
        f = spin.array_at(ints[3], 4, np.float32)
        return (spin.array_at(ints[1], x_size, np.uint8), spin.array_at(wp, wp_size, np.int8),
                spin.array_at(taps, n_taps, np.int64), steps, chunk, channels,
                (oh, ow, hp, wpad, sh, sw), spin.array_at(shift, n_out, np.int32),
                spin.array_at(mult, n_out, np.float32), spin.array_at(bias, n_out, np.float32),
                (f[0], f[1], f[2], f[3]), spin.array_at(ints[0], (ints[4], n_out), np.uint8))

    @njit(inline="always")
    def _requant(acc, a, layer, o0, o1, p):
        """Output pixel p's channels [o0, o1) from their int32 sums at acc[a:]: the taught
        kernel's requantization, the input's zero point taken off first (``shift`` is
        ``zx * sum(w)``), 16 channels at a time (``int8_simd.requantize``)."""
        shift, mult, bias, scalars, out = layer[7:]
        flat, n_out = out.reshape(-1), out.shape[1]
        for j in range(0, o1 - o0 - 15, 16):
            simd.requantize(acc, a + j, shift, mult, bias, o0 + j, scalars, flat,
                            p * n_out + o0 + j)
        inv_out, zp_out, qmin, qmax = scalars
        for o in range(o0 + (o1 - o0) // 16 * 16, o1):  # the last few, one at a time
            v = np.float32(np.int32(acc[a + o - o0] - shift[o])) * mult[o] + bias[o]
            out[p, o] = min(max(np.rint(v * inv_out) + zp_out, qmin), qmax)

    @njit(inline="always")
    def _pixel(vnni, x, at, a0, a1, a2, a3, w0, w1, w2, w3):
        """One pixel's four accumulators plus its four bytes at x[at] times the weights."""
        b = simd.broadcast(x, at)
        return (simd.dot(vnni, a0, b, w0), simd.dot(vnni, a1, b, w1),
                simd.dot(vnni, a2, b, w2), simd.dot(vnni, a3, b, w3))

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
        for r, sums in enumerate(((a00, a01, a02, a03), (a10, a11, a12, a13),
                                  (a20, a21, a22, a23), (a30, a31, a32, a33),
                                  (a40, a41, a42, a43), (a50, a51, a52, a53))):
            for j in range(4):
                simd.store(acc, 64 * r + 16 * j, sums[j])

    @njit(inline="always")
    def _vector_units(vnni, lo, hi, layer):
        """Units [lo, hi): unit u is output block u // tiles times pixel tile u % tiles."""
        x, wp, taps, steps, _, channels, geometry = layer[:7]
        oh, ow, hp, wpad, sh, sw = geometry
        pixels, n_out = layer[-1].shape
        tiles = -(-pixels // TILE)
        acc = np.empty(TILE * BLOCK, np.int32)
        starts = np.empty(TILE, np.int64)
        for u in range(lo, hi):
            block, first = u // tiles, (u % tiles) * TILE
            for r in range(TILE):  # a short last tile repeats its last pixel
                n, yx = divmod(min(first + r, pixels - 1), oh * ow)
                starts[r] = ((n * hp + yx // ow * sh) * wpad + yx % ow * sw) * channels
            _vector_tile(vnni, wp, block * taps.shape[0] * steps * 256, x, starts[0], starts[1],
                         starts[2], starts[3], starts[4], starts[5], taps, steps, acc)
            for r in range(min(TILE, pixels - first)):
                _requant(acc, BLOCK * r, layer, block * BLOCK,
                         min(block * BLOCK + BLOCK, n_out), first + r)

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
    def _amx_units(lo, hi, layer):
        """Units [lo, hi): unit u is half-block u // pairs (32 output channels) times the
        groups 2 (u % pairs) and the next (``_groups``). Tiles 0-3 hold the sums, 4-5
        the two groups' windows, 6-7 two sets of 16 channels' weights, ``chunk``
        bytes of a row of taps at a time.

        A unit's sums are requantized after the next unit's products are issued: the
        tile unit works through them while the vector units requantize."""
        x, wp, taps, steps, chunk, channels, geometry = layer[:7]
        oh, ow, hp, wpad, sh, sw = geometry
        row_step, per_image, image_step = _groups(geometry)
        groups = layer[-1].shape[0] // (oh * ow) * per_image
        pairs = -(-groups // 2)
        sums = np.empty((2, 2 * GROUP * 32), np.int32)  # this unit's, the last one's
        config = np.zeros(64, np.uint8)
        config[0] = 1  # palette 1; then bytes per row and rows of each tile
        for t in range(8):
            config[16 + 2 * t] = 64 if t < 4 or t > 5 else chunk
            config[48 + t] = chunk // 4 if t > 5 else GROUP
        amx.configure(config)
        for u in range(lo, hi + 1):
            if u < hi:
                half, g0 = u // pairs, 2 * (u % pairs)
                g1 = min(g0 + 1, groups - 1)  # an odd last group runs twice
                s0 = (g0 // per_image * image_step + g0 % per_image * GROUP) * sw * channels
                s1 = (g1 // per_image * image_step + g1 % per_image * GROUP) * sw * channels
                w_half = (half // 2) * taps.shape[0] * steps * 256 + (half % 2) * 128
                amx.zero(0)  # (the tile numbers are part of the instructions: constants)
                amx.zero(1)
                amx.zero(2)
                amx.zero(3)
                for t in range(taps.shape[0]):
                    for k in range(0, 4 * steps, chunk):
                        w = w_half + (t * steps + k // 4) * 256
                        amx.load(4, x, s0 + taps[t] + k, sw * channels)
                        amx.load(6, wp, w, 256)
                        amx.dpbusd(0, 4, 6)
                        amx.load(7, wp, w + 64, 256)
                        amx.dpbusd(1, 4, 7)
                        amx.load(5, x, s1 + taps[t] + k, sw * channels)
                        amx.dpbusd(2, 5, 6)
                        amx.dpbusd(3, 5, 7)
            if u > lo:  # the last unit's pixels, while the tiles compute this one's
                v = u - 1
                half, g0 = v // pairs, 2 * (v % pairs)
                for i in range(2 if g0 + 1 < groups else 1):
                    g = g0 + i
                    for r in range(GROUP):  # the windows that are output pixels
                        y, xo = divmod(g % per_image * GROUP + r, row_step)
                        if y < oh and xo < ow:
                            _requant(sums[v % 2], 32 * (GROUP * i + r), layer, half * 32,
                                     min(half * 32 + 32, layer[-1].shape[1]),
                                     (g // per_image * oh + y) * ow + xo)
            if u < hi:  # (32 windows, 32 channels)
                amx.store(0, sums[u % 2], 0, 128)
                amx.store(1, sums[u % 2], 16, 128)
                amx.store(2, sums[u % 2], GROUP * 32, 128)
                amx.store(3, sums[u % 2], GROUP * 32 + 16, 128)
        amx.release()

    @njit(cache=True, nogil=True)
    def add_requant(a, za, sa, b, zb, sb, inv_out, zp_out, relu, out):
        """The taught ``add_requant`` (flat arrays), 16 elements at a time."""
        n, low = a.shape[0], zp_out if relu else 0
        scalars = (np.float32(sa), np.float32(-za) * sa, np.float32(sb), np.float32(-zb) * sb,
                   inv_out, np.float32(zp_out), np.float32(low), np.float32(255))
        for i in range(0, n - 15, 16):
            simd.add_requantize(a, b, i, scalars, out)
        tail = n - n % 16
        taught.add_requant(a[tail:], za, sa, b[tail:], zb, sb, inv_out, zp_out, relu,
                           out[tail:])

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
        """The taught ``max_pool2d_int`` on NHWC arrays (``x`` (N, H, W, C), ``out``
        (N, OH, OW, C), C a multiple of 64): the maximum of each window, the padding
        never winning, 64 channels at a time."""
        batch, height, width, channels = x.shape
        _, oh, ow, _ = out.shape
        xs, outs = x.reshape(-1), out.reshape(-1)
        for n in range(batch):
            for y in range(oh):
                for xo in range(ow):
                    for c in range(0, channels, 64):
                        best = simd.zeros()
                        for i in range(kh):
                            iy = y * sh - ph + i * dh
                            for j in range(kw):
                                ix = xo * sw - pw + j * dw
                                if 0 <= iy < height and 0 <= ix < width:
                                    best = simd.max_u8(best, simd.load(
                                        xs, ((n * height + iy) * width + ix) * channels + c))
                        simd.store(outs, ((n * oh + y) * ow + xo) * channels + c, best)


@functools.cache
def kernel(path: str):
    """``path``'s kernel as a task for the spinning workers (a ``cfunc``; its ``address``
    is what ``spread`` runs), compiled on first use: a CPU without AMX or VNNI
    cannot even compile those instructions."""
    use_amx, vnni = path == "amx", path == "vnni"
    with keyed_by_every_kernel_source():

        @cfunc(spin.TASK, cache=True)
        def task(ints, floats, lo, hi):
            # Units ``grab`` at a time, from a counter the threads share, whatever range
            # ``spread`` gave: a thread the scheduler holds back delays only its last grab.
            units, grab, counter = spin.array_at(ints[2], LAYER, np.int64)[18:]
            start = simd.fetch_add(spin.array_at(counter, 1, np.int64), grab)
            while start < units:
                if use_amx:
                    _amx_units(start, min(start + grab, units), _layer(ints))
                else:
                    _vector_units(vnni, start, min(start + grab, units), _layer(ints))
                start = simd.fetch_add(spin.array_at(counter, 1, np.int64), grab)

    return task


# ---- the ops -------------------------------------------------------------------------
def _channels_last(x: np.ndarray) -> np.ndarray | None:
    """The NHWC array behind an NCHW-shaped ``x``, if its memory is channels last."""
    nhwc = x.transpose(0, 2, 3, 1)
    return nhwc if nhwc.flags.c_contiguous else None


def _kernel_for(geometry) -> str:
    """``PATH``, unless it is AMX and its tiles would hold too few output pixels
    (``AMX_MIN_ROWS``, ``_groups``): then the vector kernel."""
    if PATH == "amx" and geometry[0] * geometry[1] < AMX_MIN_ROWS * GROUP * _groups(geometry)[1]:
        return "vnni" if simd.VNNI else "portable"
    return PATH


class _Plan(NamedTuple):
    """How one layer runs on inputs of one shape: everything but the input and output
    arrays, worked out on the first call and kept on the ``Packed`` weights."""

    task: int  # the kernel's address (``kernel``)
    units: int
    work: float  # element-copies, for ``threads.spread``
    copy: int  # the input as it is (0), copied padded (PAD) or space to depth (S2D)
    counter: np.ndarray  # the next unit to run (``kernel``), 0 before each call
    size: int  # bytes of the input the kernel may read
    words: np.ndarray  # the layer's description for the task (``_layer``)
    scalars: np.ndarray  # inv_out, zp_out, qmin, qmax as float32
    keep: tuple  # the arrays ``words`` holds the addresses of


def _plan(packed: Packed, path: str, taps: np.ndarray, steps: int, geometry, pixels: int,
          copy: int, size: int, zx: int, mult, bias, scalars) -> _Plan:
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
    # An AMX step takes the largest multiple of 4 up to 64 bytes that divides a row of taps.
    chunk = next(k for k in range(64, 0, -4) if 4 * steps % k == 0)
    counter = np.zeros(8, np.int64)  # (a cache line of its own)
    words = np.array([size, address(packed.data), packed.data.size, address(taps), taps.size,
                      steps, chunk, packed.channels, *geometry, address(shift), address(mult),
                      address(bias), n_out, units, max(1, units // 16), address(counter)],
                     np.int64)
    work = pixels * n_out * taps.size * steps * 4 / INT8_MACS_PER_COPY
    return _Plan(kernel(path).address, units, work, copy, counter, size, words,
                 np.array(scalars, np.float32), (taps, shift, mult, bias))


def _cached(packed: Packed, key: tuple, make) -> _Plan:
    if key not in packed.plans and len(packed.plans) >= 16:  # many shapes: keep a few
        packed.plans.clear()
    return packed.plans[key] if key in packed.plans else packed.plans.setdefault(key, make())


def conv2d(x: np.ndarray, zx: int, packed: Packed, stride, padding, dilation,
           oh: int, ow: int, mult, bias, inv_out, zp_out, qmin, qmax) -> np.ndarray:
    """requant(conv2d(x - zx, weight)) of an NCHW-shaped uint8 ``x``: an NCHW-shaped uint8
    array whose memory is channels last. ``mult`` and ``bias`` must not change between
    calls (their identity is part of the plan's key)."""
    key = (PATH, AMX_MIN_ROWS, x.shape, x.strides, zx, stride, padding, dilation, id(mult),
           id(bias), inv_out, zp_out, qmin, qmax)
    plan = _cached(packed, key, lambda: _conv_plan(x, zx, packed, stride, padding, dilation,
                                                   oh, ow, mult, bias, inv_out, zp_out, qmin,
                                                   qmax))
    n, (ph, pw) = x.shape[0], padding
    if plan.copy:
        hp, wpad, cp = plan.words[[10, 11, 7]]
        flat = _aligned(plan.size)
        padded = flat[:n * hp * wpad * cp].reshape(n, hp, wpad, cp)
        if plan.copy == S2D:
            space_to_depth(x, np.uint8(zx), ph, pw, padded)
        else:  # the padding holds the zero point (the channels past C: weights 0)
            padded[...] = zx
            padded[:, ph:ph + x.shape[2], pw:pw + x.shape[3], :x.shape[1]] = x.transpose(
                0, 2, 3, 1)
    else:
        flat = x.transpose(0, 2, 3, 1).reshape(-1)
    out = _aligned(n * oh * ow * packed.out_channels).reshape(n * oh * ow, -1)
    plan.counter[0] = 0
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
        packed = _s2d_packed(packed)
        (sh, sw), copy = (1, 1), S2D
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
    size = reach = n * hp * wpad * cp
    if path == "amx":  # the last group's windows past the last pixel: room for them
        _, per_image, image_step = _groups(geometry)
        end = ((n - 1) * image_step + per_image * GROUP - 1) * sw * cp + taps[-1] + 4 * steps
        reach = max(size, int(end))
    if copy == 0 and (reach > size or wpad != w):
        copy = PAD
    return _plan(packed, path, taps, steps, geometry, n * oh * ow, copy, reach, zx, mult,
                 bias, (inv_out, zp_out, qmin, qmax))


def _s2d_packed(packed: Packed) -> Packed:
    """The weights of a stride-2 convolution as those of a stride-1 one on its input's
    ``space_to_depth``: w2[o, 8a + 4b + c, i, j] = w[o, c, 2i + a, 2j + b]. Made once."""
    if "s2d" not in packed.plans:
        w = packed.weight
        o, c, kh, kw = w.shape
        w2 = np.zeros((o, 2, 2, 4, -(-kh // 2), -(-kw // 2)), np.int8)
        for a in range(2):
            for b in range(2):
                taps = w[:, :, a::2, b::2]
                w2[:, a, b, :c, :taps.shape[2], :taps.shape[3]] = taps
        packed.plans["s2d"] = pack(w2.reshape(o, 16, *w2.shape[4:]))
    return packed.plans["s2d"]


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
    key = (PATH, AMX_MIN_ROWS, rows.shape, zx, id(mult), id(bias), inv_out, zp_out, qmin,
           qmax)
    plan = _cached(packed, key, lambda: _plan(
        packed, path, np.zeros(1, np.int64), packed.channels // 4, (1, m, 1, m, 1, 1), m, 0,
        rows.size, zx, mult, bias, (inv_out, zp_out, qmin, qmax)))
    out = empty((m, packed.out_channels), np.dtype(np.uint8))
    plan.counter[0] = 0
    spread(plan.task, plan.units, plan.work, out, rows.reshape(-1), plan.words, plan.scalars,
           k0=m)
    return out


def max_pool2d(x: np.ndarray, kernel, stride, padding, dilation, oh: int, ow: int):
    """The quantized max pool of a channels-last NCHW-shaped ``x``, channels last too
    (other layouts, or channels no multiple of 64: the taught kernel's)."""
    nhwc = _channels_last(x)
    if nhwc is None or nhwc.shape[3] % 64:
        return taught.max_pool2d(x, kernel, stride, padding, dilation, oh, ow)
    out = empty((x.shape[0], oh, ow, x.shape[1]), nhwc.dtype)
    max_pool_channels_last(nhwc, *kernel, *stride, *padding, *dilation, out)
    return out.transpose(0, 3, 1, 2)


adaptive_avg_pool2d = taught.adaptive_avg_pool2d  # (a layer's last pool: no faster one)
