"""Shape arithmetic, written once: broadcasting, strides and views, window counts.

Functions of shapes and strides (tuples of ints, strides in elements as torch
counts them), used by the Tensor class, the public functions, both backends
and ``tensor.nn.functional``. No arrays are made here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def in_op(op: str, *shapes: Sequence[int]) -> str:
    """`` (in add: shapes [2, 3] and [4, 3])``: what every shape error appends to torch's
    sentence, so the message names the operation and the shapes it was given."""
    listed = [str(list(s)) for s in shapes]
    if len(listed) == 1:
        return f" (in {op}: shape {listed[0]})"
    return f" (in {op}: shapes {', '.join(listed[:-1])} and {listed[-1]})"


def broadcast_shapes(op: str, a: tuple, b: tuple) -> tuple:
    """NumPy's (and torch's) broadcast of two shapes, or torch's error naming the op."""
    if a == b:
        return a
    ndim = max(len(a), len(b))
    pa = (1,) * (ndim - len(a)) + tuple(a)
    pb = (1,) * (ndim - len(b)) + tuple(b)
    out = []
    for i, (sa, sb) in enumerate(zip(pa, pb)):
        if sa == sb or sb == 1:
            out.append(sa)
        elif sa == 1:
            out.append(sb)
        else:
            raise RuntimeError(
                f"The size of tensor a ({sa}) must match the size of tensor b ({sb}) at "
                f"non-singleton dimension {i}{in_op(op, a, b)}"
            )
    return tuple(out)


def matmul_shape(a: tuple, b: tuple) -> tuple:
    """The shape of ``a @ b`` (torch.matmul's 1-d, 2-d and batched rules), or torch's error.
    The public matmul and its meta function (`tensor._meta`) both check with it."""
    if not a or not b:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {len(a)}D and "
            f"{len(b)}D")
    inner_a, inner_b = a[-1], (b[0] if len(b) == 1 else b[-2])
    if inner_a != inner_b:
        if len(a) == 1 and len(b) == 1:
            raise RuntimeError(
                f"inconsistent tensor size, expected tensor [{inner_a}] and src [{inner_b}] to "
                f"have the same number of elements, but got {inner_a} and {inner_b} elements "
                f"respectively{in_op('matmul', a, b)}"
            )
        rows = a[-2] if len(a) > 1 else 1
        cols = b[-1] if len(b) > 1 else 1
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({rows}x{inner_a} and {inner_b}x{cols})"
            f"{in_op('matmul', a, b)}"
        )
    batch = broadcast_shapes("matmul", a[:-2], b[:-2] if len(b) > 1 else ())
    return tuple(batch) + tuple(a[-2:-1]) + tuple(b[-1:] if len(b) > 1 else ())


def linear_shape(x: tuple, w: tuple, b: tuple | None) -> tuple:
    """The shape of ``linear(x, w, b)``, or torch's error (the public op and its meta)."""
    if len(w) != 2:
        raise RuntimeError(f"linear(): expected a 2-d weight, got shape {list(w)}")
    if not x:
        raise RuntimeError("linear(): input must have at least 1 dimension, got a 0-d tensor")
    if x[-1] != w[1]:
        rows = math.prod(x[:-1])
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({rows}x{x[-1]} and "
            f"{w[1]}x{w[0]}){in_op('linear', x, w)}"
        )
    if b is not None and tuple(b) not in ((w[0],), (1,), ()):
        raise RuntimeError(
            f"linear(): bias of shape {list(b)} does not match out_features={w[0]}"
        )
    return tuple(x[:-1]) + (w[0],)


def contiguous_strides(shape: Sequence[int]) -> tuple[int, ...]:
    """Row-major strides in elements, torch's way (a size-0 dim counts as 1)."""
    strides = []
    step = 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


def is_contiguous(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """Row-major with no gaps; torch ignores the strides of size-1 dims here."""
    expected = 1
    for size, stride in zip(reversed(shape), reversed(strides)):
        if size != 1:
            if stride != expected:
                return False
            expected *= size
    return True


def view_strides(old_shape, old_strides, new_shape) -> tuple[int, ...] | None:
    """Strides that show the same elements in `new_shape` without copying, or None.

    Walk both shapes from the right in chunks of dims that are contiguous
    with each other in memory; each chunk of the old shape must be covered
    exactly by whole dims of the new shape.
    """
    if math.prod(old_shape) == 0 or not old_shape:
        if tuple(old_shape) == tuple(new_shape):
            return tuple(old_strides)
        return contiguous_strides(new_shape)
    new_strides = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    base_stride = old_strides[-1]
    chunk_numel = view_numel = 1
    for d in range(len(old_shape) - 1, -1, -1):
        chunk_numel *= old_shape[d]
        chunk_ends = d == 0 or (
            old_shape[d - 1] != 1 and old_strides[d - 1] != chunk_numel * base_stride
        )
        if not chunk_ends:
            continue
        while view_d >= 0 and (view_numel < chunk_numel or new_shape[view_d] == 1):
            new_strides[view_d] = view_numel * base_stride
            view_numel *= new_shape[view_d]
            view_d -= 1
        if view_numel != chunk_numel:
            return None
        if d > 0:
            base_stride = old_strides[d - 1]
            chunk_numel = view_numel = 1
    if view_d != -1:
        return None
    return tuple(new_strides)


def infer_size(shape: tuple[int, ...], numel: int, name: str,
               input_shape: Sequence[int] = ()) -> tuple[int, ...]:
    """Resolve a single -1 in a requested shape, checking the element count."""
    unknown = [i for i, s in enumerate(shape) if s == -1]
    if len(unknown) > 1:
        raise RuntimeError("only one dimension can be inferred")
    if any(s < -1 for s in shape):
        raise RuntimeError(f"invalid shape dimension {min(shape)}")
    known = math.prod(s for s in shape if s != -1)
    if unknown and known != 0 and numel % known == 0:
        return shape[: unknown[0]] + (numel // known,) + shape[unknown[0] + 1 :]
    if unknown or known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}"
                           f"{in_op(name, input_shape, shape)}")
    return shape


def window_count(size: int, kernel: int, stride: int, pad: int, dilation: int = 1,
                 ceil_mode: bool = False) -> int:
    """How many windows of a conv or pool fit along one axis (torch's ceil_mode rule)."""
    span = size + 2 * pad - dilation * (kernel - 1) - 1
    if not ceil_mode:
        return span // stride + 1
    out = -(-span // stride) + 1
    if (out - 1) * stride >= size + pad:  # the last window must start inside
        out -= 1
    return out


def output_hw(hw: Sequence[int], kernel, stride, padding, dilation=(1, 1),
              ceil_mode: bool = False) -> tuple[int, int]:
    """(OH, OW) of a 2-d conv or pool over an input of height and width ``hw``."""
    return tuple(window_count(hw[i], kernel[i], stride[i], padding[i], dilation[i], ceil_mode)
                 for i in range(2))
