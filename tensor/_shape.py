"""Shape arithmetic, written once: broadcasting, strides and views, window counts.

Functions of shapes and strides (tuples of ints, strides in elements as torch
counts them), used by the Tensor class, the public functions, both backends
and ``tensor.nn.functional``. No arrays are made here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


# --8<-- [start:in_op]
def in_op(op: str, *shapes: Sequence[int]) -> str:
    """`` (in add: shapes [2, 3] and [4, 3])``: what every shape error appends to torch's
    sentence, so the message names the operation and the shapes it was given.

    Each shape is written as a list. One shape: `` (in OP: shape [2, 3])``;
    two or more: `` (in OP: shapes A, B and C)``, the last one after "and"
    and the others joined by ", ". The text starts with a space.
    """
    listed = [str(list(s)) for s in shapes]
    if len(listed) == 1:
        return f" (in {op}: shape {listed[0]})"
    return f" (in {op}: shapes {', '.join(listed[:-1])} and {listed[-1]})"
# --8<-- [end:in_op]


# --8<-- [start:broadcast_shapes]
def broadcast_shapes(op: str, a: tuple, b: tuple) -> tuple:
    """The broadcast of shapes ``a`` and ``b`` (NumPy's and torch's rule), or torch's error.

    Equal shapes come back as they are. Otherwise the shorter shape is padded
    with leading ones; dim by dim the two sizes must be equal or one of them 1,
    and the result, a tuple, takes the size that is not 1. The dims are
    checked from the last to the first, as torch does, so a mismatch names
    the last dim ``i`` (counted in the padded shapes) that has one: a
    RuntimeError("The size of tensor a (A) must match the size of tensor b
    (B) at non-singleton dimension i") with ``in_op(op, a, b)`` appended,
    which names the op and both shapes.
    """
    if a == b:
        return a
    ndim = max(len(a), len(b))
    pa = (1,) * (ndim - len(a)) + tuple(a)
    pb = (1,) * (ndim - len(b)) + tuple(b)
    out = [0] * ndim
    for i in range(ndim - 1, -1, -1):
        sa, sb = pa[i], pb[i]
        if sa == sb or sb == 1:
            out[i] = sa
        elif sa == 1:
            out[i] = sb
        else:
            raise RuntimeError(
                f"The size of tensor a ({sa}) must match the size of tensor b ({sb}) at "
                f"non-singleton dimension {i}{in_op(op, a, b)}"
            )
    return tuple(out)
# --8<-- [end:broadcast_shapes]


# --8<-- [start:matmul_shape]
def matmul_shape(a: tuple, b: tuple) -> tuple:
    """The shape of ``a @ b`` by torch.matmul's rules, as a tuple, or torch's error. The
    public matmul and its meta function (``tensor._meta``) both check with it.

    The inner sizes, ``a``'s last and ``b``'s only one (1-d) or second to last,
    must agree. A 1-d ``b`` is one column: the result is ``a``'s shape
    without its last dim. A 2-d ``b`` is a matrix that every row of ``a``
    meets (all of ``a``'s dims but the last count as rows, a 1-d ``a`` as one
    row): the result is ``a``'s shape with its last size ``b``'s columns. A
    ``b`` of 3 dims or more is batched: the dims of each operand before its
    last two broadcast (``broadcast_shapes`` named "matmul", whose error names
    those batch shapes), then come ``a``'s rows (none for a 1-d ``a``) and
    ``b``'s columns. The other errors, RuntimeErrors, all but the first
    followed by ``in_op("matmul", a, b)``:

    - a 0-d operand: "both arguments to matmul need to be at least 1D, but
      they are {len(a)}D and {len(b)}D";
    - both 1-d, sizes n and m: "inconsistent tensor size, expected tensor [n]
      and src [m] to have the same number of elements, but got n and m
      elements respectively";
    - a 1-d ``b``: "size mismatch, got input (R), mat (RxK), vec (J)";
    - a 2-d ``b``: "mat1 and mat2 shapes cannot be multiplied (RxK and JxC)";
    - batched: "Expected size for first two dimensions of batch2 tensor to be:
      [B, K] but got: [B, J]." once the batch dims have broadcast;

    where K and J are the inner sizes of ``a`` and ``b``, R the number of
    rows of ``a`` (1 for a 1-d ``a``), C ``b``'s columns and B the number of
    elements of the broadcast batch shape.
    """
    if not a or not b:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {len(a)}D and "
            f"{len(b)}D")
    k, j = a[-1], (b[0] if len(b) == 1 else b[-2])
    rows = math.prod(a[:-1])
    if len(b) == 1:
        if k != j and len(a) == 1:
            raise RuntimeError(
                f"inconsistent tensor size, expected tensor [{k}] and src [{j}] to have the "
                f"same number of elements, but got {k} and {j} elements respectively"
                + in_op("matmul", a, b))
        if k != j:
            raise RuntimeError(
                f"size mismatch, got input ({rows}), mat ({rows}x{k}), vec ({j})"
                + in_op("matmul", a, b))
        return tuple(a[:-1])
    if len(b) == 2:
        if k != j:
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{k} and "
                               f"{j}x{b[-1]}){in_op('matmul', a, b)}")
        return tuple(a[:-1]) + (b[-1],)
    batch = broadcast_shapes("matmul", a[:-2], b[:-2])
    if k != j:
        count = math.prod(batch)
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{count}, {k}] but got: [{count}, {j}].{in_op('matmul', a, b)}")
    return tuple(batch) + tuple(a[-2:-1]) + (b[-1],)
# --8<-- [end:matmul_shape]


# --8<-- [start:linear_shape]
def linear_shape(x: tuple, w: tuple, b: tuple | None) -> tuple:
    """The shape of ``linear(x, w, b)``, or torch's error (the public op and its meta).

    The result, a tuple, is ``x``'s shape with its last size replaced by
    ``w[0]`` (out_features). The checks, in this order, each a RuntimeError:

    - ``w`` not 2-d: "linear(): expected a 2-d weight, got shape {list(w)}";
    - ``x`` 0-d: "linear(): input must have at least 1 dimension, got a 0-d
      tensor";
    - ``x[-1] != w[1]``: "mat1 and mat2 shapes cannot be multiplied
      ({rows}x{x[-1]} and {w[1]}x{w[0]})" followed by
      ``in_op('linear', x, w)``, with rows the product of ``x``'s other sizes;
    - a bias ``b`` (None: no bias) whose shape is none of ``(w[0],)``,
      ``(1,)`` and ``()``: "linear(): bias of shape {list(b)} does not match
      out_features={w[0]}".
    """
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
# --8<-- [end:linear_shape]


# --8<-- [start:contiguous_strides]
def contiguous_strides(shape: Sequence[int]) -> tuple[int, ...]:
    """Row-major strides in elements, torch's way (a size-0 dim counts as 1).

    A tuple, one stride per dim: the last dim's is 1, and each other dim's is
    the next dim's stride times the next dim's size, a size 0 counted as 1 (so
    no stride is 0). A 0-d shape gives ``()``.
    """
    strides = []
    step = 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))
# --8<-- [end:contiguous_strides]


# --8<-- [start:is_contiguous]
def is_contiguous(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """Row-major with no gaps; torch ignores the strides of size-1 dims here.

    From the last dim to the first, each dim whose size is not 1 must have as
    its stride the product of the sizes of the dims after it (1 for the
    last): the first that does not gives False, else True. Dims of size 1
    are skipped, whatever their strides; a 0-d shape is contiguous. An
    empty shape (a size 0) gets no special case.
    """
    expected = 1
    for size, stride in zip(reversed(shape), reversed(strides)):
        if size != 1:
            if stride != expected:
                return False
            expected *= size
    return True
# --8<-- [end:is_contiguous]


# --8<-- [start:view_strides]
def view_strides(old_shape, old_strides, new_shape) -> tuple[int, ...] | None:
    """Strides that show the same elements in ``new_shape`` without copying, as a tuple,
    or None when no strides can (torch's rule for ``view``).

    An old shape with no dims or no elements needs no walk: the old strides
    when ``new_shape`` equals it, else ``contiguous_strides(new_shape)``.
    Otherwise walk the old dims from the last to the first, cut into
    *chunks* of dims that memory lays out as one: a chunk that began at a
    dim of stride ``base`` ends at dim ``d`` when ``d`` is 0, or when dim
    ``d - 1`` is not of size 1 and its stride is not the chunk's element
    count times ``base``. Each chunk must be covered exactly by whole new
    dims, taken from the right: a new dim is taken while the new dims taken
    for the chunk hold fewer elements than it, or while its size is 1, and
    gets the stride (elements of the new dims taken before it) * ``base``.
    A chunk not covered exactly, or new dims left over, give None.
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
# --8<-- [end:view_strides]


# --8<-- [start:infer_size]
def infer_size(shape: tuple[int, ...], numel: int, name: str,
               input_shape: Sequence[int] = ()) -> tuple[int, ...]:
    """The requested ``shape`` (a tuple) of ``view`` or ``reshape`` ``name``, its -1
    resolved, for an input of ``numel`` elements and shape ``input_shape``.

    The sizes are read in order, as torch reads them: a second -1 raises
    RuntimeError("only one dimension can be inferred"), a size below -1
    RuntimeError("invalid shape dimension {size} at index {i} of shape
    {shape as a list}"). The -1 becomes ``numel`` divided by the product of
    the other sizes, when that product is not 0 and divides ``numel``; a
    shape without a -1 must hold exactly ``numel`` elements. A -1 beside a
    0 for an input of 0 elements could be anything: RuntimeError("cannot
    reshape tensor of 0 elements into shape {shape as a list} because the
    unspecified dimension size -1 can be any value and is ambiguous"). Any
    other case raises RuntimeError("shape '{shape as a list}' is invalid
    for input of size {numel}"). Both end with ``in_op(name, input_shape,
    shape)``.
    """
    unknown = None
    known = 1
    for i, size in enumerate(shape):
        if size == -1:
            if unknown is not None:
                raise RuntimeError("only one dimension can be inferred")
            unknown = i
        elif size >= 0:
            known *= size
        else:
            raise RuntimeError(f"invalid shape dimension {size} at index {i} of shape "
                               f"{list(shape)}")
    if unknown is None and known == numel:
        return tuple(shape)
    if unknown is not None and known != 0 and numel % known == 0:
        return tuple(shape[:unknown]) + (numel // known,) + tuple(shape[unknown + 1:])
    where = in_op(name, input_shape, shape)
    if unknown is not None and known == numel == 0:
        raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {list(shape)} "
                           "because the unspecified dimension size -1 can be any value and is "
                           f"ambiguous{where}")
    raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}{where}")
# --8<-- [end:infer_size]


# --8<-- [start:window_count]
def window_count(size: int, kernel: int, stride: int, pad: int, dilation: int = 1,
                 ceil_mode: bool = False) -> int:
    """How many windows of a conv or pool fit along one axis (torch's ceil_mode rule).

    With ``span = size + 2*pad - dilation*(kernel - 1) - 1`` (how far the
    first window's start may move): ``span // stride + 1`` windows. With
    ``ceil_mode`` the division rounds up instead, and then one window fewer
    when the last one would start at or after ``size + pad``: torch lets a
    window hang over the right edge, never start beyond the input and its
    left padding.
    """
    span = size + 2 * pad - dilation * (kernel - 1) - 1
    if not ceil_mode:
        return span // stride + 1
    out = -(-span // stride) + 1
    if (out - 1) * stride >= size + pad:  # the last window must start inside
        out -= 1
    return out
# --8<-- [end:window_count]


def output_hw(hw: Sequence[int], kernel, stride, padding, dilation=(1, 1),
              ceil_mode: bool = False) -> tuple[int, int]:
    """(OH, OW) of a 2-d conv or pool over an input of height and width ``hw``."""
    return tuple(window_count(hw[i], kernel[i], stride[i], padding[i], dilation[i], ceil_mode)
                 for i in range(2))
