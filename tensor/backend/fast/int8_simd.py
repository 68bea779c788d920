"""Sixteen int32 lanes as a numba value, and the uint8 x int8 dot product on them.

numba has no vector types, and LLVM's loop vectoriser, left to itself, did
not find the int8 instructions for a convolution's inner loop. So this
module gives numba one value type, ``i32x16`` (LLVM's ``<16 x i32>``, one
512-bit register, or two or four narrower ones where the CPU has no AVX-512),
and a few ``intrinsic`` operations on it, each a handful of lines of LLVM IR.
A kernel that keeps its accumulators in ``i32x16`` variables keeps them in
registers: numba's locals become SSA values.

Seen as 64 bytes, a lane holds four consecutive bytes. ``dot(acc, x, w)``
multiplies each unsigned byte of ``x`` by the signed byte of ``w`` in the same
place and adds the four products of each lane into that lane of ``acc``:
exact int32 sums, whatever the values. Two implementations, same integers:

- ``dot_vnni``: the AVX-512 VNNI instruction ``vpdpbusd``, which does just
  that, 64 multiply-adds in one instruction;
- ``dot_portable``: plain LLVM vector IR that any CPU can run. The even and
  the odd bytes become 16-bit lanes (shifts and a mask), and each pair of
  16-bit products is summed into a 32-bit lane: the shape of x86's
  ``vpmaddwd`` (SSE2 onwards), which LLVM picks for it (AVX-512 VNNI's
  ``vpdpwssd`` adds the accumulator too), and of ARM's pairwise adds.

``VNNI`` says whether the code numba compiles may use ``vpdpbusd``: the CPU
numba compiles for, as numba itself decides it (``NUMBA_CPU_NAME=generic``
compiles for any x86-64 CPU, which has no VNNI).
"""

from __future__ import annotations

import llvmlite.binding as llvm
from llvmlite import ir
from numba import types
from numba.core import cgutils, config
from numba.extending import intrinsic, models, overload, register_model

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


def _address(context, builder, array_type, array, index):
    data = context.make_array(array_type)(context, builder, array).data
    return builder.gep(data, [index])


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
        address = _address(context, builder, sig.args[0], *args)
        return builder.load(builder.bitcast(address, _VEC.as_pointer()), align=1)
    return i32x16(array, index), codegen


@intrinsic
def broadcast(typingctx, array, index):
    """The four bytes of a 1-d uint8 array at ``array[index]``, in each of the sixteen lanes."""
    def codegen(context, builder, sig, args):
        address = _address(context, builder, sig.args[0], *args)
        word = builder.load(builder.bitcast(address, ir.IntType(32).as_pointer()), align=1)
        first = builder.insert_element(ir.Constant(_VEC, None), word, ir.Constant(ir.IntType(32), 0))
        return builder.shuffle_vector(first, first, ir.Constant(_VEC, None))
    return i32x16(array, index), codegen


@intrinsic
def store(typingctx, array, index, value):
    """The 64 bytes of ``value`` to a 1-d array from ``array[index]`` on."""
    def codegen(context, builder, sig, args):
        address = _address(context, builder, sig.args[0], args[0], args[1])
        builder.store(args[2], builder.bitcast(address, _VEC.as_pointer()), align=4)
        return context.get_dummy_value()
    return types.void(array, index, value), codegen


@intrinsic
def requantize(typingctx, acc, a, shift, mult, bias, c, scalars, out, o):
    """The taught kernel's requantization of 16 sums at once: for the int32 ``acc[a:a + 16]``
    and the channels' ``shift``, ``mult`` and ``bias`` from ``c`` on, ``out[o:o + 16]`` =
    clamp(rint((float32(acc - shift) * mult + bias) * inv_out) + zp_out, qmin, qmax),
    with ``scalars`` = (inv_out, zp_out, qmin, qmax), float32. The same float32 steps
    as the scalar loop, each rounded (no fused multiply-add), in any vector width."""
    def codegen(context, builder, sig, args):
        floats = ir.VectorType(ir.FloatType(), _LANES)

        def vector(i, index, vtype):
            address = _address(context, builder, sig.args[i], args[i], args[index])
            return builder.load(builder.bitcast(address, vtype.as_pointer()), align=4)

        def splat(value):
            one = builder.insert_element(ir.Constant(floats, None), value,
                                         ir.Constant(ir.IntType(32), 0))
            return builder.shuffle_vector(one, one, ir.Constant(_VEC, None))

        def call(name, *values):
            fn = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(floats, [floats] * len(values)), name)
            return builder.call(fn, values)

        inv_out, zp_out, qmin, qmax = (splat(builder.extract_value(args[6], i)) for i in range(4))
        total = builder.sub(vector(0, 1, _VEC), vector(2, 5, _VEC))
        v = builder.fadd(builder.fmul(builder.sitofp(total, floats), vector(3, 5, floats)),
                         vector(4, 5, floats))
        q = builder.fadd(call("llvm.rint.v16f32", builder.fmul(v, inv_out)), zp_out)
        q = call("llvm.minnum.v16f32", call("llvm.maxnum.v16f32", q, qmin), qmax)
        small = builder.trunc(builder.fptosi(q, _VEC), ir.VectorType(ir.IntType(8), _LANES))
        address = _address(context, builder, sig.args[7], args[7], args[8])
        builder.store(small, builder.bitcast(address, small.type.as_pointer()), align=1)
        return context.get_dummy_value()
    return types.void(acc, a, shift, mult, bias, c, scalars, out, o), codegen


@intrinsic
def max_u8(typingctx, a, b):
    """The larger unsigned byte of ``a`` and ``b`` in each of the 64 places."""
    def codegen(context, builder, sig, args):
        bytes64 = ir.VectorType(ir.IntType(8), 4 * _LANES)
        umax = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(bytes64, [bytes64] * 2), "llvm.umax.v64i8")
        larger = builder.call(umax, [builder.bitcast(v, bytes64) for v in args])
        return builder.bitcast(larger, _VEC)
    return i32x16(a, b), codegen


@intrinsic
def dot_vnni(typingctx, acc, x, w):
    """``acc`` plus, in each lane, the four uint8(x) * int8(w) products: ``vpdpbusd``."""
    def codegen(context, builder, sig, args):
        vpdpbusd = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(_VEC, [_VEC] * 3), "llvm.x86.avx512.vpdpbusd.512")
        return builder.call(vpdpbusd, args)
    return i32x16(acc, x, w), codegen


@intrinsic
def dot_portable(typingctx, acc, x, w):
    """``dot_vnni``'s sums in plain vector IR: bytes 0 and 2 of each lane, then 1 and 3,
    as 16-bit lanes, each pair of products summed into the 32-bit lane."""
    def codegen(context, builder, sig, args):
        halves = ir.VectorType(ir.IntType(16), 2 * _LANES)
        wide = ir.VectorType(ir.IntType(32), 2 * _LANES)
        eight = ir.Constant(halves, [8] * 2 * _LANES)
        xs, ws = builder.bitcast(args[1], halves), builder.bitcast(args[2], halves)
        x_even = builder.and_(xs, ir.Constant(halves, [255] * 2 * _LANES))  # unsigned bytes
        x_odd = builder.lshr(xs, eight)
        w_even = builder.ashr(builder.shl(ws, eight), eight)  # signed bytes
        w_odd = builder.ashr(ws, eight)
        even = ir.Constant(_VEC, list(range(0, 2 * _LANES, 2)))
        odd = ir.Constant(_VEC, list(range(1, 2 * _LANES, 2)))
        total = args[0]
        for a, b in ((x_even, w_even), (x_odd, w_odd)):
            products = builder.mul(builder.sext(a, wide), builder.sext(b, wide))
            pairs = builder.add(builder.shuffle_vector(products, products, even),
                                builder.shuffle_vector(products, products, odd))
            total = builder.add(total, pairs)
        return total
    return i32x16(acc, x, w), codegen


def dot(vnni, acc, x, w):
    """``dot_vnni(acc, x, w)`` if the constant ``vnni`` is True, else ``dot_portable``
    (compiled only: the overload below picks one when the kernel is compiled)."""


@overload(dot, inline="always")
def _dot(vnni, acc, x, w):
    if not isinstance(vnni, types.BooleanLiteral):
        return None  # numba then asks again with the constant's literal type
    if vnni.literal_value:
        return lambda vnni, acc, x, w: dot_vnni(acc, x, w)
    return lambda vnni, acc, x, w: dot_portable(acc, x, w)
