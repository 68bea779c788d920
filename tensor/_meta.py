"""The meta functions: each primitive's output metadata, and nothing else.

One function per kind of primitive, with the primitive's arguments (arrays
where the primitive takes tensors), answering a `FakeArray`: the shape,
dtype and strides the real kernel's result would have. A fake tensor mode
runs these instead of the kernels, so a whole network's shapes cost no
memory. The shape rules are the ones the front end checks with
(`tensor._shape`), so a primitive called directly with bad shapes fails as
the public op would. Views have no meta function of their own: a view moves
no data, so the view's own code runs on the FakeArray (see `tensor.ops`).
"""

from __future__ import annotations

import math

import numpy as np

from ._fake_array import fake_array
from ._shape import broadcast_shapes, linear_shape, matmul_shape, output_hw

__all__ = ["META"]


def _shape(x) -> tuple:
    # An array's own shape: np.shape would go through FakeArray's __array_function__.
    return x.shape if isinstance(x, np.ndarray) else tuple(np.shape(x))


def _dtype(*xs):
    """The dtype of the first array operand (the front end has already promoted)."""
    for x in xs:
        if isinstance(x, np.ndarray):
            return x.dtype
    return np.result_type(*xs)


def like(shape, dtype, *operands):
    """An elementwise result: laid out as its first operand of the same shape (the
    kernels keep a transposed input's order, as NumPy's and torch's do), else row-major."""
    for x in operands:
        if not isinstance(x, np.ndarray) or x.shape != tuple(shape):
            continue
        if x.ndim > 1 and not x.flags.c_contiguous and 0 not in x.strides:
            order = sorted(range(x.ndim), key=lambda d: -abs(x.strides[d]))  # outermost first
            strides, step = [0] * x.ndim, np.dtype(dtype).itemsize
            for d in reversed(order):
                strides[d] = step
                step *= max(shape[d], 1)
            return fake_array(shape, dtype, tuple(strides))
        break
    return fake_array(shape, dtype)


def unary(name):
    return lambda a: like(a.shape, a.dtype, a)


def unary_inplace(a):
    """relu_, exp_, ...: the answer is the input itself, written in place."""
    return a


def binary(name):
    def meta(a, b):
        if isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.dtype != b.dtype:
            raise RuntimeError(
                f"{name}(): operands must share a dtype, got {a.dtype} and {b.dtype}")
        return like(broadcast_shapes(name, _shape(a), _shape(b)), _dtype(a, b), a, b)
    return meta


def compare(name):
    return lambda a, b: like(broadcast_shapes(name, _shape(a), _shape(b)), np.bool_, a, b)


def where(cond, a, b):
    shape = broadcast_shapes("where", broadcast_shapes("where", _shape(cond), _shape(a)), _shape(b))
    return like(shape, _dtype(a, b), cond, a, b)


def clamp(a, lo, hi):
    return like(a.shape, a.dtype, a)


def _reduced(shape, dims, keepdim) -> tuple:
    dims = dims or tuple(range(len(shape)))
    if keepdim:
        return tuple(1 if d in dims else s for d, s in enumerate(shape))
    return tuple(s for d, s in enumerate(shape) if d not in dims)


def reduce(name):
    return lambda a, dims, keepdim: fake_array(_reduced(a.shape, dims, keepdim), a.dtype)


def argmax(a, dim, keepdim):
    dims = () if dim is None else (dim,)
    shape = _reduced(a.shape, dims, keepdim) if dim is not None or keepdim else ()
    return fake_array(shape, np.int64)


def rows(a, dim):  # softmax, log_softmax
    return like(a.shape, a.dtype, a)


def matmul(a, b):
    return fake_array(matmul_shape(_shape(a), _shape(b)), a.dtype)


def linear(x, w, b):
    return fake_array(linear_shape(x.shape, w.shape, None if b is None else b.shape), x.dtype)


def conv2d(x, w, b, stride, padding, dilation, groups):
    oh, ow = output_hw(x.shape[2:], w.shape[2:], stride, padding, dilation)
    return fake_array((x.shape[0], w.shape[0], oh, ow), x.dtype)


def max_pool2d(x, kernel, stride, padding, dilation, ceil_mode):
    return fake_array(x.shape[:-2] + output_hw(x.shape[-2:], kernel, stride, padding, dilation,
                                               ceil_mode), x.dtype)


def avg_pool2d(x, kernel, stride, padding, ceil_mode, count_include_pad):
    return fake_array(x.shape[:-2] + output_hw(x.shape[-2:], kernel, stride, padding, (1, 1),
                                               ceil_mode), x.dtype)


def adaptive_avg_pool2d(x, output_size):
    return fake_array(x.shape[:-2] + tuple(output_size), x.dtype)


def batch_norm(x, mean, var, w, b, eps):
    return fake_array(x.shape, x.dtype)


def layer_norm(x, normalized_ndim, w, b, eps):
    return fake_array(x.shape, x.dtype)


def embedding(indices, weight):
    return fake_array(indices.shape + weight.shape[1:], weight.dtype)


def creation(shape, *rest):
    """full(shape, value, dtype), rand(shape, dtype), randn(shape, dtype)."""
    dtype = rest[-1]
    if any(s < 0 for s in shape):
        raise RuntimeError(f"negative dimension in {list(shape)}")
    return fake_array(shape, dtype.numpy_dtype, None)


def arange_length(start, end, step) -> int:
    """How many values arange(start, end, step) has; torch's errors for a bad step."""
    if step == 0:
        raise RuntimeError("arange(): step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("arange(): upper bound and larger bound inconsistent with step sign")
    return max(math.ceil((end - start) / step), 0)


def arange(start, end, step, dtype):
    return fake_array((arange_length(start, end, step),), dtype.numpy_dtype)


def clone(a):
    return fake_array(a.shape, a.dtype)


def to_dtype(a, dtype):
    return fake_array(a.shape, dtype.numpy_dtype)


def copy_(dst, src):
    broadcast_shapes("copy_", _shape(dst), _shape(src))
    return dst


def cat(arrays, dim):
    shape = list(arrays[0].shape)
    shape[dim] = sum(a.shape[dim] for a in arrays)
    return fake_array(shape, arrays[0].dtype)


def stack(arrays, dim):
    shape = list(arrays[0].shape)
    shape.insert(dim, len(arrays))
    return fake_array(shape, arrays[0].dtype)


META = {
    "where": where, "clamp": clamp, "argmax": argmax, "softmax": rows, "log_softmax": rows,
    "matmul": matmul, "linear": linear, "conv2d": conv2d, "max_pool2d": max_pool2d,
    "avg_pool2d": avg_pool2d, "adaptive_avg_pool2d": adaptive_avg_pool2d,
    "batch_norm": batch_norm, "layer_norm": layer_norm, "embedding": embedding,
    "full": creation, "rand": creation, "randn": creation, "arange": arange, "clone": clone,
    "to_dtype": to_dtype, "copy_": copy_, "cat": cat, "stack": stack,
}
