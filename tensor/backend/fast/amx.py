"""Intel AMX's tiles for numba: eight 16 x 64-byte registers and a matrix multiply-add.

AMX (Sapphire Rapids Xeons onwards) adds eight *tiles*, each up to 16 rows
of 64 bytes, and ``tdpbusd``: for a tile C of 16 x 16 int32, a tile A of
16 x 64 uint8 and a tile B of 16 x 64 int8 (16 rows of four bytes for each
of 16 columns, the order ``int8_simd.dot`` reads too)::

    C[m, n] += sum over k < 64 of A[m, k] * B[k // 4, 4 * n + k % 4]

16 x 16 x 64 = 16384 exact multiply-adds in one instruction, 256 times a
``vpdpbusd``. The rows of a tile are loaded from memory with a stride, so
A's rows can be 16 output pixels' windows, read where they are.

Each intrinsic below is one LLVM call. The tile numbers are constants (the
instructions encode them); a kernel first loads a 64-byte *configuration*
(rows and bytes per row of each tile) and releases the tiles at the end.
LLVM treats these calls as touching memory, so it keeps their order.

Linux hands a process the tiles' state only when asked (``arch_prctl``), so
``AMX`` is True only if the CPU numba compiles for has AMX-INT8 and Linux
said yes.
"""

from __future__ import annotations

import ctypes
import platform
import sys

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from .int8_simd import call_llvm, compiled_features, element_address

_I8, _I64 = ir.IntType(8), ir.IntType(64)
_SYS_ARCH_PRCTL, _ARCH_REQ_XCOMP_PERM, _XFEATURE_XTILEDATA = 158, 0x1023, 18


def _linux_grants_tiles() -> bool:
    """Ask Linux (x86-64) for the tile state; whether it granted it."""
    if sys.platform != "linux" or platform.machine() != "x86_64":
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.syscall(_SYS_ARCH_PRCTL, _ARCH_REQ_XCOMP_PERM, _XFEATURE_XTILEDATA) == 0


_FEATURES = compiled_features().split(",")
AMX = "+amx-int8" in _FEATURES and "+amx-tile" in _FEATURES and _linux_grants_tiles()


@intrinsic
def configure(typingctx, config):
    """Load the tile configuration, a 64-byte uint8 array (``ldtilecfg``)."""
    def codegen(context, builder, sig, args):
        address = element_address(context, builder, sig.args[0], args[0], ir.Constant(_I64, 0))
        call_llvm(builder, "llvm.x86.ldtilecfg", ir.VoidType(), address)
        return context.get_dummy_value()
    return types.void(config), codegen


@intrinsic
def release(typingctx):
    """Give the tiles back (``tilerelease``)."""
    return _instruction("llvm.x86.tilerelease", (), ())


@intrinsic
def zero(typingctx, tile):
    """Tile ``tile`` := 0 (``tilezero``)."""
    return _instruction("llvm.x86.tilezero", (tile,), ())


@intrinsic
def dpbusd(typingctx, c, a, b):
    """Tile c += tile a (uint8) times tile b (int8, four bytes per column), in int32."""
    return _instruction("llvm.x86.tdpbusd", (c, a, b), ())


@intrinsic
def load(typingctx, tile, array, index, stride):
    """Tile ``tile``'s rows from ``array[index]`` on, ``stride`` bytes apart (``tileloadd``)."""
    return _instruction("llvm.x86.tileloadd64", (tile,), (array, index, stride))


@intrinsic
def store(typingctx, tile, array, index, stride):
    """Tile ``tile``'s rows to ``array[index]`` on, ``stride`` bytes apart (``tilestored``)."""
    return _instruction("llvm.x86.tilestored64", (tile,), (array, index, stride))


def _instruction(name: str, tiles: tuple, memory: tuple):
    """The signature and code of a call to ``name`` on constant tile numbers (if any), then, if
    ``memory`` is (array, index, stride), on the address of ``array[index]`` and the
    stride."""
    if not all(isinstance(t, types.IntegerLiteral) for t in tiles):
        return None  # numba then asks again with the constants' literal types
    numbers = [ir.Constant(_I8, t.literal_value) for t in tiles]

    def codegen(context, builder, sig, args):
        rest = args[len(tiles):]
        if memory:
            array_type = sig.args[len(tiles)]
            rest = [element_address(context, builder, array_type, rest[0], rest[1]), rest[2]]
        call_llvm(builder, name, ir.VoidType(), *numbers, *rest)
        return context.get_dummy_value()
    return types.void(*tiles, *memory), codegen
