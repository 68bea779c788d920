"""tensor.nn.functional: the stateless neural-network operations.

Each function checks its arguments the way torch does (and names the op and
the shapes or dtypes when they are wrong), resolves defaults such as
``stride=None`` or ``padding="same"``, then hands plain NumPy arrays to the
active backend (``tensor.backend.ops()``), so the numba kernels speed up the
layers as well. Every function is wrapped by ``tensor_function``: an object
that defines ``__tensor_function__`` (a Proxy while tracing) receives the
call with ``func`` set to the function itself.
"""

from __future__ import annotations

import math
import operator
import warnings
from collections.abc import Sequence

import numpy as np

from .. import _functions as _core
from .. import dispatch as _dispatch
from .._dtype import as_dtype, dtype
from .._fake_array import FakeArray
from .._shape import in_op as _in_op
from .._shape import linear_shape, output_hw
from .._tensor import Tensor
from ..backend import ops
from ..overrides import tensor_function
from . import _attention

__all__ = [
    "adaptive_avg_pool2d",
    "avg_pool2d",
    "batch_norm",
    "conv2d",
    "dropout",
    "embedding",
    "gelu",
    "hardsigmoid",
    "hardswish",
    "hardtanh",
    "layer_norm",
    "linear",
    "log_softmax",
    "max_pool2d",
    "multi_head_attention_forward",
    "pad",
    "relu",
    "relu6",
    "scaled_dot_product_attention",
    "sigmoid",
    "silu",
    "softmax",
    "tanh",
]

IntPair = int | Sequence[int]

# ------------------------------------------------------------------ helpers


def _wrap(array: np.ndarray) -> Tensor:
    return Tensor._from_array(array)


def _dtype_name(array: np.ndarray) -> str:
    try:
        return repr(as_dtype(array.dtype))
    except TypeError:
        return str(array.dtype)


def _tensor_array(value: object, op: str, arg: str) -> np.ndarray:
    if not isinstance(value, Tensor):
        raise TypeError(f"{op}(): argument '{arg}' must be Tensor, not {type(value).__name__}")
    return value._array


def _float_array(value: object, op: str, arg: str = "input") -> np.ndarray:
    """The array of a floating-point tensor argument; TypeError naming the dtype otherwise."""
    array = _tensor_array(value, op, arg)
    if array.dtype.kind != "f":
        raise TypeError(
            f"{op}(): expected a floating point tensor for '{arg}', got dtype {_dtype_name(array)}"
        )
    return array


def _float_like(value: object, op: str, arg: str, like: np.ndarray) -> np.ndarray:
    """A float tensor argument that must share the input's dtype."""
    array = _float_array(value, op, arg)
    if array.dtype != like.dtype:
        raise TypeError(
            f"{op}(): expected '{arg}' to have the dtype of the input "
            f"({_dtype_name(like)}), got {_dtype_name(array)}"
        )
    return array


def _optional_float(value: object, op: str, arg: str, like: np.ndarray) -> np.ndarray | None:
    return None if value is None else _float_like(value, op, arg, like)


def _pair(value: IntPair, op: str, arg: str) -> tuple[int, int]:
    """``3`` -> ``(3, 3)``; ``(1, 2)`` or ``[1, 2]`` -> ``(1, 2)``; anything else is refused."""
    if hasattr(value, "__index__"):
        return (operator.index(value), operator.index(value))
    try:
        values = tuple(operator.index(v) for v in value)
    except TypeError:
        values = ()
    if len(values) == 1:
        return (values[0], values[0])
    if len(values) != 2:
        raise ValueError(f"{op}(): expected '{arg}' to be an int or a pair of ints, got {value}")
    return values  # type: ignore[return-value]


def _shape(array: np.ndarray) -> list[int]:
    return list(array.shape)


def _size(shape: tuple[int, ...]) -> str:
    return f"tensor.Size({list(shape)})"


def _as_batched(array: np.ndarray, op: str) -> tuple[np.ndarray, bool]:
    """Accept (C, H, W) or (N, C, H, W); return the 4-d array and whether it was unbatched."""
    if array.ndim == 3:
        return _index(array, None), True
    if array.ndim == 4:
        return array, False
    raise RuntimeError(
        f"{op}(): expected 3D (unbatched) or 4D (batched) input, but got input of size: "
        f"{_shape(array)}"
    )


def _unbatch(array: np.ndarray, unbatched: bool) -> Tensor:
    return _wrap(_index(array, 0) if unbatched else array)


def _index(array: np.ndarray, index) -> np.ndarray:
    """``array[index]``; while a dispatch mode is on, the primitive ``getitem``, so that
    a traced graph knows where the view came from."""
    if _dispatch._routing:
        return _dispatch.primitive("getitem")(Tensor._from_array(array), index)._array
    return array[index]


def _normalize_dim(dim: int, ndim: int, op: str) -> int:
    low, high = (-1, 0) if ndim == 0 else (-ndim, ndim - 1)
    if not low <= dim <= high:
        raise IndexError(
            f"{op}(): Dimension out of range (expected to be in range of [{low}, {high}], "
            f"but got {dim})"
        )
    return dim % max(ndim, 1)


# ------------------------------------------------------------------ activations


@tensor_function
def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(input, 0) elementwise."""
    if type(input) is Tensor and not inplace and input._array.dtype.kind == "f":
        result = object.__new__(Tensor)  # the common case first: four Python calls less
        result._array = ops().unary("relu", input._array)
        return result
    array = _tensor_array(input, "relu", "input")
    if array.dtype == np.bool_:
        raise TypeError("relu(): not supported for dtype tensor.bool")
    if inplace:
        if not ops().unary_("relu", array):  # the kernel writes into the tensor itself
            _write(input, ops().unary("relu", array))
        return input
    return _wrap(ops().unary("relu", array))


@tensor_function
def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """x * Phi(x); ``approximate="tanh"`` uses the tanh formula, as torch does."""
    array = _float_array(input, "gelu")
    if approximate == "none":
        return _wrap(ops().unary("gelu", array))
    if approximate == "tanh" and _dispatch._routing:  # the same formula, as primitives
        b = ops()
        cube = b.binary("pow", array, array.dtype.type(3))
        inner = b.binary("add", array, b.binary_scalar("mul", cube, 0.044715, False))
        inner = b.unary("tanh", b.binary_scalar("mul", inner, math.sqrt(2.0 / math.pi), False))
        return _wrap(b.binary("mul", b.binary_scalar("mul", array, 0.5, False),
                              b.binary_scalar("add", inner, 1.0, False)))
    if approximate == "tanh":
        c = array.dtype.type(math.sqrt(2.0 / math.pi))
        inner = ops().unary("tanh", c * (array + array.dtype.type(0.044715) * array**3))
        return _wrap((array.dtype.type(0.5) * array * (1 + inner)).astype(array.dtype))
    raise ValueError(f"gelu(): approximate must be 'none' or 'tanh', got {approximate!r}")


# The piecewise-linear activations that mobile networks use (hardswish, hardsigmoid,
# relu6) and SiLU are written with the backend's clamp, add, mul and div rather
# than as rows of the op table: each is two to four passes of ops that already have
# kernels, and the table's unary rows are pinned by the chapter 0 kernel tests.


def _in_place_or_new(input: Tensor, array: np.ndarray, result: np.ndarray,
                     inplace: bool) -> Tensor:
    """``result`` as a new tensor, or written into ``input`` when ``inplace``."""
    if inplace:
        _write(input, result)
        return input
    return _wrap(result)


def _hard_ramp(array: np.ndarray) -> np.ndarray:
    """clamp(x + 3, 0, 6): the ramp inside hardsigmoid and hardswish (NaN stays NaN)."""
    return ops().clamp(ops().binary_scalar("add", array, 3.0, False), 0.0, 6.0)


@tensor_function
def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """x * sigmoid(x), also called swish (float tensors only, as in torch)."""
    array = _float_array(input, "silu")
    # torch's formula, x / (1 + exp(-x)): a product with sigmoid would add sigmoid's own
    # rounding, many ulps where sigmoid is small; -inf / inf is NaN, as in torch.
    with np.errstate(invalid="ignore", over="ignore"):
        grown = ops().binary_scalar("add", ops().unary("exp", ops().unary("neg", array)), 1.0,
                                    False)
        result = ops().binary("div", array, grown)
    return _in_place_or_new(input, array, result, inplace)


@tensor_function
def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """0 below -3, 1 above 3, (x + 3) / 6 between: a sigmoid made of three lines."""
    array = _float_array(input, "hardsigmoid")
    result = ops().binary_scalar("div", _hard_ramp(array), 6.0, False)
    return _in_place_or_new(input, array, result, inplace)


@tensor_function
def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * hardsigmoid(x): 0 below -3, x above 3, x * (x + 3) / 6 between."""
    array = _float_array(input, "hardswish")
    with np.errstate(invalid="ignore"):  # -inf * 0 is NaN, as in torch
        scaled = ops().binary("mul", array, _hard_ramp(array))  # x * ramp, then / 6: torch's
    result = ops().binary_scalar("div", scaled, 6.0, False)
    return _in_place_or_new(input, array, result, inplace)


@tensor_function
def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> Tensor:
    """x limited to [min_val, max_val]; an integer tensor stays integer, as in torch."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    array = _tensor_array(input, "hardtanh", "input")
    if array.dtype == np.bool_:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if array.dtype.kind != "f":  # torch casts the bounds to the integer type (-2.5 -> -2)
        min_val, max_val = int(min_val), int(max_val)
    result = ops().clamp(array, min_val, max_val)
    return _in_place_or_new(input, array, result, inplace)


@tensor_function
def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """min(max(x, 0), 6): hardtanh between 0 and 6."""
    array = _tensor_array(input, "relu6", "input")
    if array.dtype == np.bool_:
        raise RuntimeError("Bool inputs not supported for hardtanh")  # torch's words
    return _in_place_or_new(input, array, ops().clamp(array, 0, 6), inplace)


@tensor_function
def sigmoid(input: Tensor) -> Tensor:
    """1 / (1 + exp(-input)); integer inputs give float32, as in torch."""
    return _core.sigmoid(input)


@tensor_function
def tanh(input: Tensor) -> Tensor:
    """Hyperbolic tangent; integer inputs give float32, as in torch."""
    return _core.tanh(input)


def _softmax_like(name: str, input: Tensor, dim: int | None, dtype: object) -> Tensor:
    array = _tensor_array(input, name, "input")
    if dtype is not None:
        array = array.astype(as_dtype(dtype).numpy_dtype)
    if array.dtype.kind != "f":
        raise TypeError(f"{name}(): not supported for dtype {_dtype_name(array)}")
    if dim is None:
        dim = 0 if array.ndim in (0, 1, 3) else 1
        warnings.warn(
            f"Implicit dimension choice for {name} has been deprecated. "
            "Change the call to include dim=X as an argument.",
            stacklevel=4,
        )
    dim = _normalize_dim(dim, array.ndim, name)
    if array.ndim == 0:
        return _wrap(getattr(ops(), name)(array.reshape(1), 0).reshape(()))
    return _wrap(getattr(ops(), name)(array, dim))


@tensor_function
def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype: dtype | None = None) -> Tensor:
    """exp(x) / sum(exp(x)) along ``dim``."""
    return _softmax_like("softmax", input, dim, dtype)


@tensor_function
def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
                dtype: dtype | None = None) -> Tensor:
    """log(softmax(x)) along ``dim``, computed stably."""
    return _softmax_like("log_softmax", input, dim, dtype)


@tensor_function
def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by 1/(1-p) (train only)."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    array = _float_array(input, "dropout")
    if not training or p == 0.0:  # the input itself, as torch returns it (no copy, no op)
        return input
    if p == 1.0:
        result = np.zeros_like(array)
    else:
        keep = _core.rand(array.shape)._array >= p  # the tensor RNG: manual_seed applies
        result = np.where(keep, array * array.dtype.type(1.0 / (1.0 - p)), 0).astype(array.dtype)
    if inplace:
        _write(input, result)
        return input
    return _wrap(result)


def _batch_stats_as_primitives(x, axes, stats, momentum, count):
    """batch_norm's training statistics and running-stat updates, each step a primitive."""
    b, channels = ops(), x.shape[1]
    mean = b.reduce("mean", x, axes, False)
    shaped = _dispatch.primitive("reshape")(
        Tensor._from_array(mean), (1, channels) + (1,) * (x.ndim - 2))._array
    centred = b.binary("sub", x, shaped)
    var = b.reduce("mean", b.binary("mul", centred, centred), axes, False)
    for name, new in (("running_mean", mean), ("running_var", var)):
        running = stats[name]
        if running is None:
            continue
        if name == "running_var":
            new = b.binary_scalar("mul", b.binary_scalar("mul", new, momentum, True),
                                  count / (count - 1), False)
        else:
            new = b.binary_scalar("mul", new, momentum, True)
        moved = b.binary("add", b.binary_scalar("mul", running, 1 - momentum, True), new)
        _dispatch.primitive("copy_")(Tensor._from_array(running), Tensor._from_array(moved))
    return mean, var


def _write(input: Tensor, result: np.ndarray) -> None:
    """``input[...] = result``; while a dispatch mode is on, the primitive ``copy_``."""
    if _dispatch._routing:
        _dispatch.primitive("copy_")(input, Tensor._from_array(result))
    else:
        input._array[...] = result


# ------------------------------------------------------------------ linear and conv


@tensor_function
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """input @ weight.T + bias, over the last dimension of ``input``."""
    x = _float_array(input, "linear")
    w = _float_like(weight, "linear", "weight", x)
    b = _optional_float(bias, "linear", "bias", x)
    linear_shape(x.shape, w.shape, None if b is None else b.shape)  # torch's errors (and meta's)
    return _wrap(ops().linear(x, w, b))


def _same_padding(kernel: tuple[int, int], dilation: tuple[int, int]):
    """(left, right) padding per axis that keeps the size with stride 1."""
    totals = [d * (k - 1) for k, d in zip(kernel, dilation)]
    return [(t // 2, t - t // 2) for t in totals]


@tensor_function
def conv2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: IntPair = 1,
    padding: IntPair | str = 0,
    dilation: IntPair = 1,
    groups: int = 1,
) -> Tensor:
    """2-d cross-correlation over an (N, C, H, W) or (C, H, W) input."""
    x = _float_array(input, "conv2d")
    w = _float_like(weight, "conv2d", "weight", x)
    b = _optional_float(bias, "conv2d", "bias", x)
    x, unbatched = _as_batched(x, "conv2d")
    if w.ndim != 4:
        raise RuntimeError(
            f"conv2d(): expected a 4-d weight (out_channels, in_channels/groups, kH, kW), "
            f"got weight of size {_shape(w)}"
        )
    stride = _pair(stride, "conv2d", "stride")
    dilation = _pair(dilation, "conv2d", "dilation")
    if min(stride) <= 0:
        raise RuntimeError("conv2d(): non-positive stride is not supported")
    if min(dilation) <= 0:
        raise RuntimeError("conv2d(): dilation should be greater than zero")
    if not isinstance(groups, int) or groups <= 0:
        raise RuntimeError("conv2d(): non-positive groups is not supported")
    kernel = (w.shape[2], w.shape[3])
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0, 0)
        elif padding == "same":
            if stride != (1, 1):
                raise ValueError("padding='same' is not supported for strided convolutions")
            (top, bottom), (left, right) = _same_padding(kernel, dilation)
            if bottom != top or right != left:
                # An even kernel needs one more row/column of zeros at the far end.
                x = np.pad(x, ((0, 0), (0, 0), (0, bottom - top), (0, right - left)))
            padding = (top, left)
        else:
            raise ValueError(
                f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}"
            )
    padding = _pair(padding, "conv2d", "padding")
    if min(padding) < 0:
        raise RuntimeError("conv2d(): negative padding is not supported")
    if w.shape[0] % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
            f"but got weight of size {_shape(w)} instead"
        )
    if x.shape[1] != w.shape[1] * groups:
        shown = x[0] if unbatched else x
        raise RuntimeError(
            f"Given groups={groups}, weight of size {_shape(w)}, expected input{_shape(shown)} "
            f"to have {w.shape[1] * groups} channels, but got {x.shape[1]} channels instead"
            f"{_in_op('conv2d', shown.shape, w.shape)}"
        )
    if b is not None and b.shape != (w.shape[0],):
        raise RuntimeError(
            f"Given weight of size {_shape(w)}, expected bias to be 1-dimensional with "
            f"{w.shape[0]} elements, but got bias of size {_shape(b)} instead"
        )
    padded = [x.shape[2 + i] + 2 * padding[i] for i in range(2)]
    effective = [dilation[i] * (kernel[i] - 1) + 1 for i in range(2)]
    if padded[0] < effective[0] or padded[1] < effective[1]:
        raise RuntimeError(
            f"Calculated padded input size per channel: ({padded[0]} x {padded[1]}). "
            f"Kernel size: ({effective[0]} x {effective[1]}). "
            "Kernel size can't be greater than actual input size"
            f"{_in_op('conv2d', x.shape, w.shape)}"
        )
    return _unbatch(ops().conv2d(x, w, b, stride, padding, dilation, groups), unbatched)


# ------------------------------------------------------------------ pooling


def _pool_args(op: str, kernel_size, stride, padding, dilation):
    kernel = _pair(kernel_size, op, "kernel_size")
    stride = (
        kernel if stride is None or stride == [] or stride == () else _pair(stride, op, "stride")
    )
    padding = _pair(padding, op, "padding")
    dilation = _pair(dilation, op, "dilation")
    if min(kernel) <= 0:
        raise RuntimeError(f"{op}(): kernel_size must be greater than zero, but got {kernel}")
    if min(stride) <= 0:
        raise RuntimeError(f"{op}(): stride must be greater than zero, but got {stride}")
    if min(dilation) <= 0:
        raise RuntimeError(f"{op}(): dilation must be greater than zero, but got {dilation}")
    for p, k, d in zip(padding, kernel, dilation):
        if p < 0 or 2 * p > d * (k - 1) + 1:
            raise RuntimeError(
                f"{op}(): pad should be at most half of effective kernel size, but got pad={p}, "
                f"kernel_size={k} and dilation={d}"
            )
    return kernel, stride, padding, dilation


def _check_pool_output(op, x, kernel, stride, padding, dilation, ceil_mode):
    out = output_hw(x.shape[2:], kernel, stride, padding, dilation, ceil_mode)
    if min(out) < 1:
        c, h, w = x.shape[1:]
        raise RuntimeError(
            f"{op}(): Given input size: ({c}x{h}x{w}). Calculated output size: "
            f"({c}x{out[0]}x{out[1]}). Output size is too small"
        )


@tensor_function
def max_pool2d(
    input: Tensor,
    kernel_size: IntPair,
    stride: IntPair | None = None,
    padding: IntPair = 0,
    dilation: IntPair = 1,
    ceil_mode: bool = False,
) -> Tensor:
    """Maximum over each (dilated) window; ``stride`` defaults to ``kernel_size``."""
    x, unbatched = _as_batched(_float_array(input, "max_pool2d"), "max_pool2d")
    kernel, stride, padding, dilation = _pool_args(
        "max_pool2d", kernel_size, stride, padding, dilation
    )
    _check_pool_output("max_pool2d", x, kernel, stride, padding, dilation, ceil_mode)
    result = ops().max_pool2d(x, kernel, stride, padding, dilation, bool(ceil_mode))
    return _unbatch(result, unbatched)


@tensor_function
def avg_pool2d(
    input: Tensor,
    kernel_size: IntPair,
    stride: IntPair | None = None,
    padding: IntPair = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
) -> Tensor:
    """Mean over each window; ``count_include_pad`` counts padded zeros in the divisor."""
    x, unbatched = _as_batched(_float_array(input, "avg_pool2d"), "avg_pool2d")
    kernel, stride, padding, _ = _pool_args("avg_pool2d", kernel_size, stride, padding, 1)
    _check_pool_output("avg_pool2d", x, kernel, stride, padding, (1, 1), ceil_mode)
    result = ops().avg_pool2d(x, kernel, stride, padding, bool(ceil_mode), bool(count_include_pad))
    return _unbatch(result, unbatched)


@tensor_function
def adaptive_avg_pool2d(input: Tensor, output_size: int | Sequence[int | None]) -> Tensor:
    """Average pooling to a fixed output size; ``None`` keeps that input size."""
    x, unbatched = _as_batched(_float_array(input, "adaptive_avg_pool2d"), "adaptive_avg_pool2d")
    if isinstance(output_size, int):
        output_size = (output_size, output_size)
    sizes = tuple(output_size)
    if len(sizes) != 2:
        raise ValueError(
            f"adaptive_avg_pool2d(): output_size must be an int or a pair, got {output_size}"
        )
    size = tuple(x.shape[2 + i] if s is None else s for i, s in enumerate(sizes))
    if min(size) < 0:
        raise RuntimeError(f"adaptive_avg_pool2d(): output_size must be >= 0, got {sizes}")
    if min(x.shape[2:]) == 0:
        raise RuntimeError(
            f"adaptive_avg_pool2d(): expected input to have non-zero size for non-batch "
            f"dimensions, but input has sizes {_shape(x)}"
        )
    return _unbatch(ops().adaptive_avg_pool2d(x, size), unbatched)


# ------------------------------------------------------------------ normalisation


def _check_channel_vector(op, name, array, channels, x):
    if array is not None and array.size != channels:
        raise RuntimeError(f"{op}(): {name} should contain {channels} elements not {array.size}"
                           f"{_in_op(op, x.shape, array.shape)}")


@tensor_function
def batch_norm(
    input: Tensor,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalise each channel (dim 1).

    In training the batch statistics are used, and the running statistics (when
    given) move towards them by ``momentum``, the variance unbiased, as in torch.
    """
    x = _float_array(input, "batch_norm")
    if x.ndim < 2:
        raise ValueError(f"batch_norm(): expected 2D or more input (got {x.ndim}D input)")
    channels = x.shape[1]
    stats = {}
    for name, value in (
        ("running_mean", running_mean),
        ("running_var", running_var),
        ("weight", weight),
        ("bias", bias),
    ):
        stats[name] = None if value is None else _float_array(value, "batch_norm", name)
        _check_channel_vector("batch_norm", name, stats[name], channels, x)
    w = None if weight is None else stats["weight"].astype(x.dtype, copy=False)
    b = None if bias is None else stats["bias"].astype(x.dtype, copy=False)
    if training:
        count = x.size // channels
        if count <= 1:
            raise ValueError(
                "Expected more than 1 value per channel when training, got input size "
                f"{_size(x.shape)}"
            )
        axes = (0,) + tuple(range(2, x.ndim))
        if _dispatch._routing:  # the same statistics, as primitives a mode can see
            mean, var = _batch_stats_as_primitives(x, axes, stats, momentum, count)
            return _wrap(ops().batch_norm(x, mean, var, w, b, eps))
        mean = ops().reduce("mean", x, axes, False)
        centred = x - mean.reshape((1, channels) + (1,) * (x.ndim - 2))
        var = ops().reduce("mean", centred * centred, axes, False)
        if stats["running_mean"] is not None:
            rm = stats["running_mean"]
            rm[...] = (1 - momentum) * rm + momentum * mean
        if stats["running_var"] is not None:
            rv = stats["running_var"]
            rv[...] = (1 - momentum) * rv + momentum * var * (count / (count - 1))
    else:
        if stats["running_mean"] is None or stats["running_var"] is None:
            raise RuntimeError(
                "batch_norm(): running_mean and running_var must be defined in evaluation mode"
            )
        mean = stats["running_mean"].astype(x.dtype, copy=False)
        var = stats["running_var"].astype(x.dtype, copy=False)
    return _wrap(ops().batch_norm(x, mean, var, w, b, eps))


@tensor_function
def layer_norm(
    input: Tensor,
    normalized_shape: int | Sequence[int],
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalise over the trailing ``normalized_shape`` dimensions."""
    x = _float_array(input, "layer_norm")
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    n = len(shape)
    if n == 0 or x.shape[x.ndim - n :] != shape or x.ndim < n:
        raise RuntimeError(
            f"Given normalized_shape={list(shape)}, expected input with shape "
            f"[*, {', '.join(str(s) for s in shape)}], but got input of size{_shape(x)}"
            f"{_in_op('layer_norm', x.shape)}"
        )
    w = _optional_float(weight, "layer_norm", "weight", x)
    b = _optional_float(bias, "layer_norm", "bias", x)
    for name, array in (("weight", w), ("bias", b)):
        if array is not None and array.shape != shape:
            raise RuntimeError(
                f"layer_norm(): expected {name} of shape {list(shape)}, got {_shape(array)}"
            )
    return _wrap(ops().layer_norm(x, n, w, b, eps))


# ------------------------------------------------------------------ embedding


@tensor_function
def embedding(
    input: Tensor,
    weight: Tensor,
    padding_idx: int | None = None,
    max_norm: float | None = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    """Rows of ``weight`` looked up by the integer ``input``.

    With ``max_norm``, the looked-up rows whose norm exceeds it are rescaled in
    ``weight`` itself, as torch does. ``padding_idx``, ``scale_grad_by_freq``
    and ``sparse`` only concern gradients, which this library does not have.
    """
    indices = _tensor_array(input, "embedding", "input")
    if indices.dtype not in (np.int64, np.int32):
        raise TypeError(
            "embedding(): expected tensor for argument 'indices' to have one of the following "
            f"dtypes: tensor.int64, tensor.int32; but got {_dtype_name(indices)} instead"
        )
    table = _float_array(weight, "embedding", "weight")
    if table.ndim != 2:
        raise RuntimeError(f"embedding(): 'weight' must be 2-D, got shape {_shape(table)}")
    # The range check reads the indices; fake ones have none, and pass as under torch's meta.
    if indices.size and not isinstance(indices, FakeArray) and (
            indices.min() < 0 or indices.max() >= table.shape[0]):
        raise IndexError(f"index out of range in self (in embedding: indices from "
                         f"{indices.min()} to {indices.max()}, weight of shape {_shape(table)})")
    if max_norm is not None:
        rows = np.unique(indices)
        norms = np.linalg.norm(table[rows], ord=norm_type, axis=1)
        too_long = norms > max_norm
        scale = max_norm / (norms[too_long] + 1e-7)
        table[rows[too_long]] *= scale[:, None].astype(table.dtype)
    return _wrap(ops().embedding(indices, table))


# ------------------------------------------------------------------ padding


@tensor_function
def pad(input: Tensor, pad: Sequence[int], mode: str = "constant",
        value: float | None = None) -> Tensor:
    """Add ``value`` around the last dimensions: ``pad`` is (left, right) for the last
    dimension, then (left, right) for the one before, and so on. A negative amount
    cuts elements off instead, as in torch. Only ``mode="constant"`` is supported."""
    array = _tensor_array(input, "pad", "input")
    if mode != "constant":
        raise NotImplementedError(
            f"pad(): tensor supports only mode='constant', got mode={mode!r}")
    amounts = [operator.index(p) for p in pad]
    if len(amounts) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(amounts) > 2 * array.ndim:
        raise RuntimeError(
            "Padding length should be less than or equal to two times the input dimension "
            f"but got padding length {len(amounts)} and input of dimension {array.ndim}")
    widths = [(0, 0)] * array.ndim
    cuts = [slice(None)] * array.ndim
    for i in range(len(amounts) // 2):
        dim = array.ndim - 1 - i
        before, after = amounts[2 * i], amounts[2 * i + 1]
        size = array.shape[dim] + before + after
        if size < 0 or (size == 0 and array.shape[dim] + min(before, 0) + min(after, 0) < 0):
            raise RuntimeError(
                f"pad(): padding ({before}, {after}) at dimension {dim} leaves "
                f"{array.shape[dim]} elements a negative size")
        widths[dim] = (max(before, 0), max(after, 0))
        cuts[dim] = slice(-min(before, 0), array.shape[dim] + min(after, 0))
    fill = 0 if value is None else value
    if array.dtype.kind in "iu":
        fill = int(fill)  # torch casts the value to the input's type (2.5 -> 2)
    result = np.pad(array[tuple(cuts)], widths, constant_values=fill)
    return _wrap(np.ascontiguousarray(result, dtype=array.dtype))


# ------------------------------------------------------------------ attention


def _same_float(op: str, **tensors: object) -> list[np.ndarray]:
    """The arrays of float tensors that must share one dtype (query, key, value)."""
    arrays = [_tensor_array(value, op, name) for name, value in tensors.items()]
    kinds = {a.dtype for a in arrays}
    if len(kinds) != 1 or arrays[0].dtype.kind != "f":
        found = " ".join(f"{name}.dtype: {_dtype_name(a)}" for name, a in zip(tensors, arrays))
        raise RuntimeError(
            f"{op}(): expected query, key and value to have the same floating point dtype, "
            f"but got {found}")
    return arrays


@tensor_function
def scaled_dot_product_attention(
    query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None = None,
    dropout_p: float = 0.0, is_causal: bool = False, *, scale: float | None = None,
    enable_gqa: bool = False,
) -> Tensor:
    """softmax(query @ key^T * scale + mask) @ value, over the last two dimensions.

    ``scale`` defaults to 1/sqrt(E). A boolean ``attn_mask`` marks with True the
    keys each query may attend to; a float one is added to the scores.
    ``is_causal`` lets query i see keys 0..i only. As in torch, ``dropout_p``
    applies whenever it is above 0 (the function knows no train or eval mode):
    pass 0.0 for evaluation.
    """
    op = "scaled_dot_product_attention"
    q, k, v = _same_float(op, query=query, key=key, value=value)
    if min(q.ndim, k.ndim, v.ndim) < 2:
        raise RuntimeError(f"{op}(): query, key and value must have at least 2 dimensions, "
                           f"got shapes {_shape(q)}, {_shape(k)} and {_shape(v)}")
    if not 0.0 <= dropout_p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {dropout_p}")
    if q.shape[-1] != k.shape[-1] or k.shape[-2] != v.shape[-2]:
        raise RuntimeError(
            f"{op}(): expected query (..., L, E), key (..., S, E) and value (..., S, Ev), "
            f"got shapes {_shape(q)}, {_shape(k)} and {_shape(v)}")
    if enable_gqa and min(q.ndim, k.ndim, v.ndim) >= 3:
        if k.shape[-3] != v.shape[-3] or q.shape[-3] % k.shape[-3]:
            raise RuntimeError(
                f"{op}(): with enable_gqa, query's heads ({q.shape[-3]}) must be a multiple "
                f"of key's and value's ({k.shape[-3]}, {v.shape[-3]})")
        key, value = _attention.repeat_heads(key, value, q.shape[-3])
        k, v = key._array, value._array
    try:
        batch = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except ValueError:
        raise RuntimeError(
            f"{op}(): the batch dimensions of query {_shape(q)}, key {_shape(k)} and value "
            f"{_shape(v)} do not broadcast") from None
    mask = None
    if attn_mask is not None:
        if is_causal:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not "
                               "be set when is_causal=True")
        mask = _tensor_array(attn_mask, op, "attn_mask")
        if mask.dtype != np.bool_ and mask.dtype != q.dtype:
            raise RuntimeError(
                f"Expected attn_mask dtype to be bool or float or to match query dtype, "
                f"but got attn_mask.dtype: {_dtype_name(mask)} and query.dtype: "
                f"{_dtype_name(q)} instead.")
        try:
            np.broadcast_shapes(mask.shape, (*batch, q.shape[-2], k.shape[-2]))
        except ValueError:
            raise RuntimeError(
                f"{op}(): attn_mask of shape {_shape(mask)} does not broadcast to the "
                f"scores' shape {[*batch, q.shape[-2], k.shape[-2]]}") from None
    return _attention.attention(query, key, value, None if mask is None else attn_mask,
                                dropout_p, is_causal, scale)


def _mha_mask(mask: object, name: str, like: Tensor) -> Tensor | None:
    """A "leave out" mask as floats: a boolean one becomes -inf where True."""
    if mask is None:
        return None
    array = _tensor_array(mask, "multi_head_attention_forward", name)
    if array.dtype == np.bool_:
        return _attention.blocked_as_minus_inf(mask, like.dtype)
    if array.dtype.kind != "f":
        raise AssertionError(f"only bool and floating types of {name} are supported")
    return mask


def _optional(value: object, op: str, name: str) -> Tensor | None:
    """``value`` itself, once checked to be a Tensor (or None)."""
    if value is not None:
        _tensor_array(value, op, name)
    return value


@tensor_function
def multi_head_attention_forward(
    query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
    in_proj_weight: Tensor | None, in_proj_bias: Tensor | None, bias_k: Tensor | None,
    bias_v: Tensor | None, add_zero_attn: bool, dropout_p: float, out_proj_weight: Tensor,
    out_proj_bias: Tensor | None, training: bool = True,
    key_padding_mask: Tensor | None = None, need_weights: bool = True,
    attn_mask: Tensor | None = None, use_separate_proj_weight: bool = False,
    q_proj_weight: Tensor | None = None, k_proj_weight: Tensor | None = None,
    v_proj_weight: Tensor | None = None, static_k: Tensor | None = None,
    static_v: Tensor | None = None, average_attn_weights: bool = True,
    is_causal: bool = False,
) -> tuple[Tensor, Tensor | None]:
    """Multi-head attention as torch computes it, on sequence-first inputs.

    ``query`` is (L, N, E) or unbatched (L, E); ``key`` and ``value`` (S, N, ·).
    The inputs are projected (one packed ``in_proj_weight``, or three separate
    weights), split into ``num_heads`` heads, attended, joined and projected by
    ``out_proj``. Returns the output and, with ``need_weights``, the attention
    weights (averaged over heads unless ``average_attn_weights=False``).
    """
    op = "multi_head_attention_forward"
    q, k, v = _same_float(op, query=query, key=key, value=value)
    if q.ndim not in (2, 3) or k.ndim != q.ndim or v.ndim != q.ndim:
        raise AssertionError(
            f"query should be unbatched 2D or batched 3D tensor, with key and value of the "
            f"same rank, but got shapes {_shape(q)}, {_shape(k)} and {_shape(v)}")
    batched = q.ndim == 3
    padding = _mha_mask(key_padding_mask, "key_padding_mask", query)
    if not batched:
        query, key, value = (x.unsqueeze(1) for x in (query, key, value))
        padding = None if padding is None else padding.unsqueeze(0)
    length, batch, embed = query.shape
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    mask = None
    if is_causal and padding is None and not need_weights:
        mask = None  # torch trusts the hint: the causal mask replaces attn_mask
    else:
        mask = _mha_mask(attn_mask, "attn_mask", query)
        is_causal = is_causal and padding is None
    if embed != embed_dim_to_check:
        raise AssertionError(
            f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed}")
    if embed % num_heads:
        raise AssertionError(f"embed_dim {embed} not divisible by num_heads {num_heads}")
    source = key.shape[0]
    if mask is not None:
        expected = (length, source) if mask.ndim == 2 else (batch * num_heads, length, source)
        if mask.ndim not in (2, 3) or tuple(mask.shape) != expected:
            raise RuntimeError(f"The shape of the {mask.ndim}D attn_mask is "
                               f"{_size(mask.shape)}, but should be {expected}.")
    if padding is not None and tuple(padding.shape) != (batch, source):
        raise AssertionError(f"Expected key_padding_mask of shape {(batch, source)}, "
                             f"got {list(padding.shape)}")
    bias = _optional(in_proj_bias, op, "in_proj_bias")
    biases = (None, None, None) if bias is None else _thirds(bias)
    if use_separate_proj_weight:
        weights = [_optional(w, op, name) for w, name in (
            (q_proj_weight, "q_proj_weight"), (k_proj_weight, "k_proj_weight"),
            (v_proj_weight, "v_proj_weight"))]
        if any(w is None for w in weights):
            raise AssertionError("use_separate_proj_weight is True but q_proj_weight, "
                                 "k_proj_weight or v_proj_weight is None")
    else:
        packed = _optional(in_proj_weight, op, "in_proj_weight")
        if packed is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        if key.shape != value.shape:
            raise AssertionError(
                f"key shape {_size(key.shape)} does not match value shape {_size(value.shape)}")
        weights = _thirds(packed)
    _tensor_array(out_proj_weight, op, "out_proj_weight")
    statics = (_optional(static_k, op, "static_k"), _optional(static_v, op, "static_v"))
    out, attn = _attention.multi_head_attention(
        query, key, value, num_heads, tuple(weights), biases,
        (_optional(bias_k, op, "bias_k"), _optional(bias_v, op, "bias_v")), add_zero_attn,
        dropout_p if training else 0.0, out_proj_weight,
        _optional(out_proj_bias, op, "out_proj_bias"), padding, need_weights, mask, statics,
        average_attn_weights, is_causal)
    if not batched:
        out = out[:, 0]
        attn = None if attn is None else attn[0]
    return out.contiguous(), attn


def _thirds(packed: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """The query, key and value rows of a packed projection (torch's in_proj chunks)."""
    third = packed.shape[0] // 3
    return packed[:third], packed[third:2 * third], packed[2 * third:]
