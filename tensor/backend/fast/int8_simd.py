"""Sixteen int32 lanes as a numba value, and the uint8 x int8 dot product on them.

numba has no vector types, and LLVM's loop vectoriser, left to itself, did
not find the int8 instructions for a convolution's inner loop. So this
module gives numba one value type, ``i32x16`` (LLVM's ``<16 x i32>``, one
512-bit register, or two or four narrower ones where the CPU has no AVX-512),
and a few ``intrinsic`` operations on it, each a handful of lines of LLVM IR.
A kernel that keeps its accumulators in ``i32x16`` variables keeps them in
registers: numba's locals become SSA values.

Seen as 64 bytes, a lane holds four consecutive bytes. ``dot(vnni, acc, x, w)``
multiplies each unsigned byte of ``x`` by the signed byte of ``w`` in the same
place and adds the four products of each lane into that lane of ``acc``:
exact int32 sums, whatever the values. Two implementations, same integers:

- ``vnni=True``: the AVX-512 VNNI instruction ``vpdpbusd``, which does just
  that, 64 multiply-adds in one instruction;
- ``vnni=False``: plain LLVM vector IR that any CPU can run. The even and
  the odd bytes become 16-bit lanes (shifts and a mask), and each pair of
  16-bit products is summed into a 32-bit lane: the shape of x86's
  ``vpmaddwd`` (SSE2 onwards), which LLVM picks for it (AVX-512 VNNI's
  ``vpdpwssd`` adds the accumulator too), and of ARM's pairwise adds.

``requantize`` and ``add_requantize`` are the taught kernels' float32 steps
on 16 values at once (numba's own loops vectorised them 8 wide, and the
epilogue then cost as much as the products).

``VNNI`` says whether the code numba compiles may use ``vpdpbusd``: the CPU
numba compiles for, as numba itself decides it (``NUMBA_CPU_NAME=generic``
compiles for any x86-64 CPU, which has no VNNI).
"""

from __future__ import annotations

import llvmlite.binding as llvm
from llvmlite import ir
from numba import types
from numba.core import cgutils, config
from numba.extending import intrinsic, models, register_model

_LANES = 16
_VEC = ir.VectorType(ir.IntType(32), _LANES)


class I32x16(types.Type):
    """numba's type for sixteen int32 lanes held in registers."""

    def __init__(self) -> None:
        super().__init__(name="i32x16")


i32x16 = I32x16()


@register_model(I32x16)
class _I32x16Model(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, _VEC)


def compiled_features() -> str:
    """The CPU features numba compiles for (its own rule, ``numba.core.codegen``)."""
    if config.CPU_FEATURES is not None:
        return config.CPU_FEATURES
    return llvm.get_host_cpu_features().flatten()


VNNI = "+avx512vnni" in compiled_features().split(",")


def element_address(context, builder, array_type, array, index):
    """The address of ``array[index]`` (a 1-d array), in LLVM IR."""
    data = context.make_array(array_type)(context, builder, array).data
    return builder.gep(data, [index])


def _read(context, builder, sig, args, i, index, vtype):
    """A ``vtype`` vector from array argument ``i`` at the element its argument ``index`` says."""
    address = element_address(context, builder, sig.args[i], args[i], args[index])
    return builder.load(builder.bitcast(address, vtype.as_pointer()), align=1)


def _write(context, builder, sig, args, i, index, value) -> None:
    address = element_address(context, builder, sig.args[i], args[i], args[index])
    builder.store(value, builder.bitcast(address, value.type.as_pointer()), align=1)


def _splat(builder, value, vtype):
    """``value`` in every lane of a ``vtype`` vector."""
    one = builder.insert_element(ir.Constant(vtype, None), value, ir.Constant(ir.IntType(32), 0))
    return builder.shuffle_vector(one, one, ir.Constant(_VEC, None))


def call_llvm(builder, name, result_type, *values):
    """The LLVM intrinsic ``name`` on ``values``, returning a ``result_type``."""
    fn = cgutils.get_or_insert_function(
        builder.module, ir.FunctionType(result_type, [v.type for v in values]), name)
    return builder.call(fn, values)


_FLOATS = ir.VectorType(ir.FloatType(), _LANES)
_BYTES = ir.VectorType(ir.IntType(8), _LANES)


def _quantize(builder, q, scalars, at):
    """clamp(rint(q * scalars[at]) + scalars[at + 1], scalars[at + 2], scalars[at + 3]) as
    16 bytes: the last float32 steps of every requantization, each rounded once."""
    k = [_splat(builder, builder.extract_value(scalars, at + i), _FLOATS) for i in range(4)]
    q = builder.fadd(call_llvm(builder, "llvm.rint.v16f32", _FLOATS, builder.fmul(q, k[0])), k[1])
    q = call_llvm(builder, "llvm.minnum.v16f32", _FLOATS,
              call_llvm(builder, "llvm.maxnum.v16f32", _FLOATS, q, k[2]), k[3])
    return builder.trunc(builder.fptosi(q, _VEC), _BYTES)


@intrinsic
def fetch_add(typingctx, counter, value):
    """``counter[0] += value`` atomically (int64): the value before. Threads that share a
    counter each get a different range of work from it."""
    def codegen(context, builder, sig, args):
        first = ir.Constant(ir.IntType(64), 0)
        address = element_address(context, builder, sig.args[0], args[0], first)
        return builder.atomic_rmw("add", address, args[1], "monotonic")
    return types.int64(counter, value), codegen


@intrinsic
def zeros(typingctx):
    """Sixteen int32 zeros."""
    def codegen(context, builder, sig, args):
        return ir.Constant(_VEC, None)
    return i32x16(), codegen


@intrinsic
def load(typingctx, array, index):
    """The 64 bytes of a 1-d array from ``array[index]`` on, as sixteen lanes."""
    def codegen(context, builder, sig, args):
        return _read(context, builder, sig, args, 0, 1, _VEC)
    return i32x16(array, index), codegen


@intrinsic
def broadcast(typingctx, array, index):
    """The four bytes of a 1-d uint8 array at ``array[index]``, in each of the sixteen lanes."""
    def codegen(context, builder, sig, args):
        word = _read(context, builder, sig, args, 0, 1, ir.IntType(32))
        return _splat(builder, word, _VEC)
    return i32x16(array, index), codegen


@intrinsic
def store(typingctx, array, index, value):
    """The 64 bytes of ``value`` to a 1-d array from ``array[index]`` on."""
    def codegen(context, builder, sig, args):
        _write(context, builder, sig, args, 0, 1, args[2])
        return context.get_dummy_value()
    return types.void(array, index, value), codegen


@intrinsic
def max_u8(typingctx, a, b):
    """The larger unsigned byte of ``a`` and ``b`` in each of the 64 places."""
    def codegen(context, builder, sig, args):
        bytes64 = ir.VectorType(ir.IntType(8), 4 * _LANES)
        larger = call_llvm(builder, "llvm.umax.v64i8", bytes64,
                       *(builder.bitcast(v, bytes64) for v in args))
        return builder.bitcast(larger, _VEC)
    return i32x16(a, b), codegen


@intrinsic
def dot(typingctx, vnni, acc, x, w):
    """``acc`` plus, in each lane, the four uint8(x) * int8(w) products of its bytes.
    ``vnni`` is a constant: True compiles AVX-512 VNNI's ``vpdpbusd``, which does
    just that; False, plain vector IR that any CPU runs: bytes 0 and 2 of each
    lane, then 1 and 3, as 16-bit lanes, each pair of products summed into the
    32-bit lane (x86's ``vpmaddwd``, which LLVM picks for it)."""
    if not isinstance(vnni, types.BooleanLiteral):
        return None  # numba then asks again with the constant's literal type

    def codegen(context, builder, sig, args):
        if vnni.literal_value:
            return call_llvm(builder, "llvm.x86.avx512.vpdpbusd.512", _VEC, *args[1:])
        halves = ir.VectorType(ir.IntType(16), 2 * _LANES)
        wide = ir.VectorType(ir.IntType(32), 2 * _LANES)
        eight = ir.Constant(halves, [8] * 2 * _LANES)
        xs, ws = builder.bitcast(args[2], halves), builder.bitcast(args[3], halves)
        x_even = builder.and_(xs, ir.Constant(halves, [255] * 2 * _LANES))  # unsigned bytes
        w_even = builder.ashr(builder.shl(ws, eight), eight)  # signed bytes
        total = args[1]
        for a, b in ((x_even, w_even), (builder.lshr(xs, eight), builder.ashr(ws, eight))):
            products = builder.mul(builder.sext(a, wide), builder.sext(b, wide))
            pairs = [builder.shuffle_vector(products, products, ir.Constant(
                _VEC, list(range(first, 2 * _LANES, 2)))) for first in (0, 1)]
            total = builder.add(total, builder.add(*pairs))
        return total
    return i32x16(vnni, acc, x, w), codegen


@intrinsic
def requantize(typingctx, acc, a, shift, mult, bias, c, scalars, out, o):
    """The taught kernel's requantization of 16 sums at once: for the int32 ``acc[a:a + 16]``
    and the channels' ``shift``, ``mult`` and ``bias`` from ``c`` on, ``out[o:o + 16]`` =
    clamp(rint((float32(acc - shift) * mult + bias) * inv_out) + zp_out, qmin, qmax),
    with ``scalars`` = (inv_out, zp_out, qmin, qmax), float32. The same float32 steps
    as the scalar loop, each rounded (no fused multiply-add), in any vector width."""
    def codegen(context, builder, sig, args):
        total = builder.sub(_read(context, builder, sig, args, 0, 1, _VEC),
                            _read(context, builder, sig, args, 2, 5, _VEC))
        v = builder.fadd(builder.fmul(builder.sitofp(total, _FLOATS),
                                      _read(context, builder, sig, args, 3, 5, _FLOATS)),
                         _read(context, builder, sig, args, 4, 5, _FLOATS))
        _write(context, builder, sig, args, 7, 8, _quantize(builder, v, args[6], 0))
        return context.get_dummy_value()
    return types.void(acc, a, shift, mult, bias, c, scalars, out, o), codegen


@intrinsic
def add_requantize(typingctx, a, b, i, scalars, out):
    """The taught ``add_requant`` on 16 elements: ``out[i:i + 16]`` from the uint8
    ``a[i:i + 16]`` and ``b[i:i + 16]``, with ``scalars`` = (s_a, -z_a * s_a, s_b,
    -z_b * s_b, 1 / s_out, z_out, low, 255) in float32. Each input is dequantized by
    one fused multiply-add (``llvm.fma``, rounded once on every CPU: what the taught
    kernel's float64 steps give for these operands), then summed and requantized in
    float32."""
    def codegen(context, builder, sig, args):
        def dequantized(k, at):
            q = builder.uitofp(_read(context, builder, sig, args, k, 2, _BYTES), _FLOATS)
            scale, shift = (_splat(builder, builder.extract_value(args[3], at + j), _FLOATS)
                            for j in (0, 1))
            return call_llvm(builder, "llvm.fma.v16f32", _FLOATS, q, scale, shift)

        total = builder.fadd(dequantized(0, 0), dequantized(1, 2))
        _write(context, builder, sig, args, 4, 2, _quantize(builder, total, args[3], 4))
        return context.get_dummy_value()
    return types.void(a, b, i, scalars, out), codegen
