"""The public functions of `tensor` and the Tensor methods made from them.

Each op is written once, as an implementation that checks its arguments,
settles the dtype and shape of the result with torch's rules, and asks the
active backend (`tensor.backend.ops()`) for the numbers. `tensor_function`
turns it into the public function (`tensor.add`); `_install_methods` at the
bottom turns the same implementation into the method (`Tensor.add`) and the
operators (`Tensor.__add__`, `Tensor.__radd__`), each a distinct public
callable that `__tensor_function__` handlers receive as `func`.
"""

from __future__ import annotations

import builtins
import functools
import math
from collections import namedtuple
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np

from . import backend as _backend
from . import dispatch as _dispatch
from ._dtype import (
    DEFAULT_FLOAT,
    as_dtype,
    bool_,
    dtype,
    float32,
    from_numpy_dtype,
    int64,
    result_type,
    scalar_dtype,
)
from ._ops import FLOAT_ONLY, OPS, Op
from ._shape import broadcast_shapes, in_op, matmul_shape
from ._size import Size
from ._tensor import Tensor, _array_from_data, _shape_arg, _wrap_dim, check_writable
from .overrides import _function_modes, dispatch, tensor_function

_NUMBER_TYPES = (int, float, np.number, np.bool_)
Scalar = int | float | bool  # a Python number used as an operand
_OPERAND_TYPES = (Tensor, *_NUMBER_TYPES)
_new_tensor = object.__new__
_Tensor_new = Tensor
_ops: Any  # the module `tensor.backend.ops()` returns, kept current by `on_switch`


def _use_backend(module) -> None:
    global _ops
    _ops = module


_backend.on_switch(_use_backend)

# ---------------------------------------------------------------------------
# helpers shared by the ops
# ---------------------------------------------------------------------------


def _public(impl):
    """The public, overridable function for `impl`, spelled `tensor.<name>`."""
    public = tensor_function(impl)
    public.__module__ = "tensor"
    public.__qualname__ = impl.__name__
    return public


def _require_tensor(x, op: str, arg: str = "input") -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument '{arg}' must be Tensor, not {type(x).__name__}")


def _require_operand(x, op: str, arg: str) -> None:
    if not isinstance(x, _OPERAND_TYPES):
        raise TypeError(
            f"{op}(): argument '{arg}' must be Tensor or Number, not {type(x).__name__}"
        )


def _array_as(x, np_dtype) -> np.ndarray:
    """The array of a Tensor or Python number, converted to `np_dtype` if needed."""
    if isinstance(x, Tensor):
        arr = x._array
        if arr.dtype == np_dtype:
            return arr
        if _dispatch._routing:  # a conversion is a primitive: modes see it
            return _dispatch.primitive("to_dtype")(x, from_numpy_dtype(np_dtype))._array
        return arr.astype(np_dtype)
    return np.asarray(x, dtype=np_dtype)


def _shape_of(x) -> tuple:
    return x._array.shape if isinstance(x, Tensor) else ()


def _wrap(arr: np.ndarray) -> Tensor:
    return Tensor._from_array(arr)


def _fast_float_reduction(op: str, arr: np.ndarray, dim, keepdim: bool) -> Tensor | None:
    """``x.sum()``, ``x.sum(-1)``, ``x.amax()`` ... of a float tensor without the
    general argument handling (which costs a good share of a row sum of 1e5
    elements); None for every other case, which takes the full path."""
    ndim = arr.ndim
    if arr.dtype.kind != "f" or not ndim or (keepdim is not True and keepdim is not False):
        return None
    if dim is None:
        dims = ()
    elif type(dim) is int and -ndim <= dim < ndim:
        dims = (dim % ndim,)
    else:
        return None
    result = _new_tensor(_Tensor_new)
    result._array = _ops.reduce(op, arr, dims, keepdim)
    return result


def _reduce_dims(dim, ndim: int, op: str) -> tuple[int, ...]:
    """A `dim` argument (None, int, or tuple/list of ints) as sorted non-negative dims."""
    if dim is None or ndim == 0:
        if ndim == 0 and dim is not None:
            for d in dim if isinstance(dim, (tuple, list)) else (dim,):
                _wrap_dim(d, 0, op)
        return ()
    wanted = dim if isinstance(dim, (tuple, list)) else (dim,)
    dims = tuple(_wrap_dim(d, ndim, op) for d in wanted)
    for d in dims:
        if dims.count(d) > 1:
            raise RuntimeError(f"{op}(): dim {d} appears multiple times in the list of dims")
    return tuple(sorted(dims))


# ---------------------------------------------------------------------------
# creation
# ---------------------------------------------------------------------------

_DEFAULT_SEED = 67280421310721  # torch's default seed, so a fresh process is reproducible
_generator = np.random.default_rng(_DEFAULT_SEED)


def manual_seed(seed: int) -> np.random.Generator:
    """Seed the generator behind `rand`, `randn` and friends; the same seed, the same numbers."""
    global _generator
    _generator = np.random.default_rng(int(seed))
    return _generator


def _dtype_or(value, default: dtype) -> dtype:
    return default if value is None else as_dtype(value)


@_public
def tensor(data: Any, dtype: dtype | None = None) -> Tensor:
    """A new tensor holding a copy of `data` (nested lists, numbers, NumPy arrays)."""
    return _wrap(_array_from_data(data, dtype))


@_public
def as_tensor(data: Any, dtype: dtype | None = None) -> Tensor:
    """Like `tensor`, but a Tensor or NumPy array of the right dtype is shared, not copied."""
    if isinstance(data, Tensor) and (dtype is None or as_dtype(dtype) == data.dtype):
        return data
    if isinstance(data, np.ndarray) and dtype is None and data.dtype in _NP_SUPPORTED:
        return _wrap(data)
    return tensor.__wrapped__(data, dtype)


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor that shares memory with `array` (changes show on both sides)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy(): expected np.ndarray (got {type(array).__name__})")
    if array.dtype not in _NP_SUPPORTED:
        raise TypeError(
            f"from_numpy(): can't convert np.ndarray of type numpy.{array.dtype}. The only "
            "supported types are: float64, float32, int64, int32, and bool."
        )
    return _wrap(array)


_NP_SUPPORTED = {np.dtype(n) for n in ("float32", "float64", "int32", "int64", "bool")}


def _filled(size, dtype_, fill, name: str) -> Tensor:
    shape = _shape_arg(size, name)
    if any(s < 0 for s in shape):
        raise RuntimeError(
            f"{name}(): Trying to create tensor with negative dimension "
            f"{builtins.min(shape)}: {list(shape)}"
        )
    dt = _dtype_or(dtype_, DEFAULT_FLOAT)
    if _dispatch._routing:  # creation is a primitive: a fake mode allocates nothing
        return _dispatch.primitive("full")(shape, fill, dt)
    return _wrap(np.full(shape, fill, dtype=dt.numpy_dtype))


@_public
def zeros(*size: int | Sequence[int], dtype: dtype | None = None) -> Tensor:
    """A tensor of zeros; sizes as `zeros(2, 3)` or `zeros((2, 3))`."""
    return _filled(size, dtype, 0, "zeros")


@_public
def ones(*size: int | Sequence[int], dtype: dtype | None = None) -> Tensor:
    """A tensor of ones."""
    return _filled(size, dtype, 1, "ones")


@_public
def empty(*size: int | Sequence[int], dtype: dtype | None = None) -> Tensor:
    """A tensor whose values are not set (here: zeros, so results are reproducible)."""
    return _filled(size, dtype, 0, "empty")


@_public
def full(size: int | Sequence[int], fill_value: Scalar, dtype: dtype | None = None) -> Tensor:
    """A tensor filled with `fill_value`; the dtype follows the value, as in torch."""
    if dtype is None:
        dtype = scalar_dtype(fill_value)
    return _filled((size,), dtype, fill_value, "full")


@_public
def arange(start: int | float, end: int | float | None = None, step: int | float = 1,
           dtype: dtype | None = None) -> Tensor:
    """Values from `start` up to (not including) `end`, `step` apart."""
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("arange(): step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("arange(): upper bound and larger bound inconsistent with step sign")
    ints = all(isinstance(v, (int, np.integer)) for v in (start, end, step))
    target = as_dtype(dtype) if dtype is not None else (int64 if ints else DEFAULT_FLOAT)
    if _dispatch._routing:  # creation is a primitive: make_fx records it, fake mode sizes it
        return _dispatch.primitive("arange")(start, end, step, target)
    count = builtins.max(math.ceil((end - start) / step), 0)
    steps = np.arange(count, dtype=np.int64 if ints else np.float64)  # value i is start + i*step
    return _wrap((start + steps * step).astype(target.numpy_dtype))


def _random(size, dtype_, name: str, draw) -> Tensor:
    shape = _shape_arg(size, name)
    target = _dtype_or(dtype_, DEFAULT_FLOAT)
    if not target.is_floating_point:
        raise TypeError(f"{name}(): unsupported dtype {target!r}: random values need a float dtype")
    if _dispatch._routing:
        return _dispatch.primitive(name)(shape, target)
    return _wrap(draw(shape, target.numpy_dtype))


@_public
def rand(*size: int | Sequence[int], dtype: dtype | None = None) -> Tensor:
    """Uniform random values in [0, 1), from the generator `manual_seed` sets."""
    return _random(size, dtype, "rand", lambda s, d: _generator.random(s, dtype=d))


@_public
def randn(*size: int | Sequence[int], dtype: dtype | None = None) -> Tensor:
    """Standard normal random values, from the generator `manual_seed` sets."""
    return _random(size, dtype, "randn", lambda s, d: _generator.standard_normal(s, dtype=d))


@_public
def zeros_like(input: Tensor, dtype: dtype | None = None) -> Tensor:
    """A new tensor of zeros with the shape (and, unless given, the dtype) of `input`."""
    _require_tensor(input, "zeros_like")
    return zeros.__wrapped__(input.shape, dtype=dtype or input.dtype)


@_public
def ones_like(input: Tensor, dtype: dtype | None = None) -> Tensor:
    """A new tensor of ones with the shape (and, unless given, the dtype) of `input`."""
    _require_tensor(input, "ones_like")
    return ones.__wrapped__(input.shape, dtype=dtype or input.dtype)


@_public
def empty_like(input: Tensor, dtype: dtype | None = None) -> Tensor:
    """Uninitialised values, with the shape (and, unless given, the dtype) of `input`."""
    _require_tensor(input, "empty_like")
    return empty.__wrapped__(input.shape, dtype=dtype or input.dtype)


@_public
def full_like(input: Tensor, fill_value: Scalar, dtype: dtype | None = None) -> Tensor:
    """A new tensor of `fill_value` with the shape (and, unless given, the dtype) of `input`."""
    _require_tensor(input, "full_like")
    return full.__wrapped__(input.shape, fill_value, dtype=dtype or input.dtype)


@_public
def rand_like(input: Tensor, dtype: dtype | None = None) -> Tensor:
    """Uniform samples in [0, 1), with the shape (and, unless given, the dtype) of `input`."""
    _require_tensor(input, "rand_like")
    return rand.__wrapped__(input.shape, dtype=dtype or input.dtype)


@_public
def randn_like(input: Tensor, dtype: dtype | None = None) -> Tensor:
    """Standard normal samples, with the shape (and, unless given, the dtype) of `input`."""
    _require_tensor(input, "randn_like")
    return randn.__wrapped__(input.shape, dtype=dtype or input.dtype)


def is_tensor(obj) -> bool:
    """True for a `tensor.Tensor` (subclasses included)."""
    return isinstance(obj, Tensor)


# ---------------------------------------------------------------------------
# elementwise math
# ---------------------------------------------------------------------------

def unary_op(op: str, input: Tensor) -> Tensor:
    """Run backend unary op `op` on a tensor with torch's dtype rules (ints become float32)."""
    if type(input) is _Tensor_new and input._array.dtype.kind == "f":  # the common case
        result = _new_tensor(_Tensor_new)
        result._array = _ops.unary(op, input._array)
        return result
    _require_tensor(input, op)
    arr = input._array
    kind = arr.dtype.kind
    if op in FLOAT_ONLY:
        if kind != "f":
            arr = _array_as(input, DEFAULT_FLOAT.numpy_dtype)
    elif kind == "b":
        raise TypeError(
            f"{op}(): unsupported dtype tensor.bool (use logical operations on bool tensors)"
        )
    return Tensor._from_array(_ops.unary(op, arr))


# For each binary op and comparison, the dtype kinds ("f" float, "i" int) in which it
# needs no dtype check when both operands share the dtype: bool operands and the rest
# (bitwise on floats, int division or powers) take the full path.
_PLAIN_KINDS = {
    op.name: "fi" if op.kind == "compare" else
    ("f" if op.dtypes == "numeric" else "") + ("i" if op.name not in ("div", "pow") else "")
    for op in OPS if op.kind in ("binary", "compare")
}
_COMPARE_OPS = frozenset(op.name for op in OPS if op.kind == "compare")


def _plain_case(op: str):
    """The plain case of binary op or comparison ``op``: a function of ``(a, other,
    left)`` that computes it, or returns None for any other case.

    Plain: array ``a`` (of a Tensor) with a Tensor of its dtype, or with a
    Python number of its kind (``x * 2.0``; ``2.0 * x`` when ``left``), and an
    op that needs no dtype check for that dtype. Nothing is promoted, and a
    Python float stays a number all the way into the backend, which chooses
    its own fastest path for the operands it gets. Shapes are checked first,
    as on the full path. What can be settled from ``op`` alone is settled once,
    here, not on every call."""
    kinds = _PLAIN_KINDS[op]
    compare = op in _COMPARE_OPS
    float_scalar = "f" in kinds and not compare  # x * 2.0 goes to binary_scalar

    def plain(a: np.ndarray, other, left: bool) -> np.ndarray | None:
        kind = a.dtype.kind
        t = type(other)
        if t is float and float_scalar and kind == "f":
            return _ops.binary_scalar(op, a, other, left)
        if kind not in kinds:
            return None
        if t is _Tensor_new or (t is not float and t is not int and isinstance(other, Tensor)):
            b = other._array
            if b.dtype is not a.dtype:
                return None
            if a.shape != b.shape:
                broadcast_shapes(op, a.shape, b.shape)
            elif not left and not compare:
                return _ops.binary_same_shape(op, a, b)
            x, y = (b, a) if left else (a, b)
        elif (t is float and kind == "f") or t is int:
            number = a.dtype.type(other)  # the number takes the tensor's dtype
            x, y = (number, a) if left else (a, number)
        else:
            return None
        return _ops.compare(op, x, y) if compare else _ops.binary(op, x, y)

    return plain


_PLAIN = {op: _plain_case(op) for op in _PLAIN_KINDS}


def _promoted_operands(op: str, input, other, dt: dtype) -> tuple:
    """Both operands as arrays of the result dtype ``dt``, their shapes checked."""
    broadcast_shapes(op, _shape_of(input), _shape_of(other))
    return _array_as(input, dt.numpy_dtype), _array_as(other, dt.numpy_dtype)


def _is_bool(x) -> bool:
    if isinstance(x, Tensor):
        return x._array.dtype.kind == "b"
    return isinstance(x, (bool, np.bool_))


def binary_op(op: str, input, other) -> Tensor:
    """Run backend binary op `op` with torch's promotion and broadcasting checks."""
    if isinstance(input, Tensor):
        out = _PLAIN[op](input._array, other, False)
    elif type(input) in (float, int) and isinstance(other, Tensor):  # 2.0 * x: the mirror
        out = _PLAIN[op](other._array, input, True)
    else:
        out = None
    if out is not None:
        return _wrap(out)  # a subclass operand: a fake result is wrapped as a FakeTensor
    _check_pair(op, input, other)
    dt = result_type(input, other)
    if op == "div" and not dt.is_floating_point:
        dt = DEFAULT_FLOAT  # true division of integers gives the default float
    elif op in ("bitwise_and", "bitwise_or") and dt.is_floating_point:
        raise TypeError(f"{op}(): unsupported dtype {dt!r}: bitwise operations need int or bool")
    elif (
        op == "pow"
        and not dt.is_floating_point
        and isinstance(other, (int, np.integer))
        and not isinstance(other, (bool, np.bool_))
        and other < 0
    ):
        # torch refuses only a negative *number* exponent; a tensor of exponents
        # gives 1 ** -n = 1, (-1) ** -n = +-1 and 0 for every other base.
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    elif op == "pow" and dt is bool_:
        if isinstance(other, Tensor) or not isinstance(input, Tensor):
            raise TypeError("pow(): unsupported dtype tensor.bool")
        # torch allows bool_tensor ** True/False (x and ones); compute it in int64
        return binary_op("pow", input.long(), int(other)).bool()
    elif op == "sub" and (dt is bool_ or _is_bool(input) or _is_bool(other)):
        raise TypeError(
            "sub(): unsupported dtype tensor.bool: subtraction with a bool operand is not "
            "supported (to invert a mask use logical operations)"
        )
    a, b = _promoted_operands(op, input, other, dt)
    if op == "pow" and not isinstance(other, Tensor):
        # A number exponent reaches the backend as a NumPy scalar, as on the plain
        # path: the backend computes x ** 2 as x * x for a number, and through
        # pow for a 0-d tensor, as torch does (tensor/backend/powers.py).
        b = b[()]
    return _wrap(_ops.binary(op, a, b))


def compare_op(op: str, input, other) -> Tensor:
    """Run backend comparison `op`: operands promoted to a common dtype, result bool."""
    if isinstance(input, Tensor) and (out := _PLAIN[op](input._array, other, False)) is not None:
        return _wrap(out)
    _check_pair(op, input, other)
    dt = result_type(input, other)
    return _wrap(_ops.compare(op, *_promoted_operands(op, input, other, dt)))


def _check_pair(op: str, input, other) -> None:
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        _require_tensor(input, op)
    _require_operand(input, op, "input")
    _require_operand(other, op, "other")


def _plain_first(name: str, reflected: bool, general):
    """A binary op or comparison as a callable that computes the plain case itself
    (``_plain_case``). No handler can claim plain operands, so the callable skips
    ``tensor_function``'s wrapper too: the Python calls saved show in the time
    of an add of 1e5 elements. Anything else goes through the protocol
    (``overrides.dispatch``, which asks handlers with this callable) and then
    ``general``. Operators and the public binary functions (``tensor.add``,
    ``tensor.mul``, ...) are made this way."""
    plain = _PLAIN[name]
    if reflected:

        def plain_first(input, other):  # 2.0 * x: Python asks x.__rmul__(2.0)
            t = type(other)
            if type(input) is _Tensor_new and not _function_modes and (t is float or t is int):
                out = plain(input._array, other, True)
                if out is not None:
                    result = _new_tensor(_Tensor_new)
                    result._array = out
                    return result
            return dispatch(plain_first, general, (input, other))

    else:

        def plain_first(input, other, **kwargs):
            t = type(other)
            if (type(input) is _Tensor_new and not kwargs and not _function_modes
                    and (t is _Tensor_new or t is float or t is int)):
                out = plain(input._array, other, False)
                if out is not None:
                    result = _new_tensor(_Tensor_new)
                    result._array = out
                    return result
            return dispatch(plain_first, general, (input, other), kwargs)

    plain_first.dispatches = True  # ``_install`` must not wrap it again
    return plain_first


def _elementwise_public(op: Op):
    """``tensor.<name>`` for an elementwise row of the op table."""
    name = op.name
    if op.kind == "unary":

        def impl(input: Tensor) -> Tensor:
            if type(input) is _Tensor_new and input._array.dtype.kind == "f":  # unary_op's
                result = _new_tensor(_Tensor_new)  # first case, one call less
                result._array = _ops.unary(name, input._array)
                return result
            return unary_op(name, input)
    else:
        runner = compare_op if op.kind == "compare" else binary_op

        def impl(input: Tensor | Scalar, other: Tensor | Scalar) -> Tensor:
            return runner(name, input, other)

    impl.__name__ = impl.__qualname__ = name
    impl.__doc__ = op.doc
    if op.kind == "binary":
        return _binary_public(impl)
    return _public(impl)


def _binary_public(impl):
    """``tensor.<name>`` for a binary op: ``_plain_first`` around ``impl``."""
    public = functools.update_wrapper(_plain_first(impl.__name__, False, impl), impl)
    public.__module__ = "tensor"
    return public


# tensor.neg, tensor.mul, tensor.gt, ...: one public function per elementwise row of the
# op table; add and sub, which take ``alpha=``, are written out below.
_ELEMENTWISE = [op for op in OPS if op.public and op.kind in ("unary", "binary", "compare")]
globals().update({op.name: _elementwise_public(op) for op in _ELEMENTWISE})


def _times_alpha(op: str, input, other, alpha: Scalar):
    """``alpha * other`` for add's and sub's ``alpha=``, with torch's rule: a float
    alpha needs a floating-point result. A number ``other`` is scaled as a
    Python number, so ``sub(x, 1, alpha=3)`` is ``x - 3``."""
    _check_pair(op, input, other)
    if isinstance(alpha, float) and not result_type(input, other).is_floating_point:
        raise TypeError(f"{op}(): for integral input tensors, argument alpha must not be "
                        f"a floating point number (got alpha={alpha!r})")
    if isinstance(other, Tensor):
        return binary_op("mul", other, alpha)
    return other * alpha


@_binary_public
def add(input: Tensor | Scalar, other: Tensor | Scalar, *, alpha: Scalar = 1) -> Tensor:
    """input + alpha * other, broadcasting."""
    if alpha != 1:
        other = _times_alpha("add", input, other, alpha)
    return binary_op("add", input, other)


@_binary_public
def sub(input: Tensor | Scalar, other: Tensor | Scalar, *, alpha: Scalar = 1) -> Tensor:
    """input - alpha * other, broadcasting."""
    if alpha != 1:
        other = _times_alpha("sub", input, other, alpha)
    return binary_op("sub", input, other)


@_public
def where(condition: Tensor, input: Tensor | Scalar, other: Tensor | Scalar) -> Tensor:
    """Elements of `input` where `condition` is True, else of `other`."""
    _require_tensor(condition, "where", "condition")
    if condition._array.dtype != np.bool_:
        raise TypeError(
            f"where(): expected condition to be a bool tensor, but got dtype {condition.dtype!r}"
        )
    _require_operand(input, "where", "input")
    _require_operand(other, "where", "other")
    dt = result_type(input, other)
    shape = broadcast_shapes("where", _shape_of(input), _shape_of(other))
    broadcast_shapes("where", condition._array.shape, shape)
    np_dtype = dt.numpy_dtype
    return _wrap(
        _ops.where(
            condition._array, _array_as(input, np_dtype), _array_as(other, np_dtype)
        )
    )


@_public
def clamp(input: Tensor, min: Tensor | Scalar | None = None,  # noqa: A002 (torch's names)
          max: Tensor | Scalar | None = None) -> Tensor:  # noqa: A002
    """Limit `input` to [min, max]; bounds are numbers or tensors, either may be None."""
    _require_tensor(input, "clamp")
    if min is None and max is None:
        raise RuntimeError("clamp(): At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        out = input
        if min is not None:
            out = binary_op("maximum", out, min)
        if max is not None:
            out = binary_op("minimum", out, max)
        return out
    bounds = [b for b in (min, max) if b is not None]
    for b in bounds:
        _require_operand(b, "clamp", "min" if b is min else "max")
    dt = result_type(input, *bounds)
    return _wrap(_ops.clamp(_array_as(input, dt.numpy_dtype), min, max))


# ---------------------------------------------------------------------------
# matrix product
# ---------------------------------------------------------------------------


@_public
def matmul(input: Tensor, other: Tensor) -> Tensor:
    """Matrix product with torch.matmul's rules for 1-d, 2-d and batched operands."""
    _require_tensor(input, "matmul")
    _require_tensor(other, "matmul", "other")
    a, b = input._array, other._array
    if a.dtype != b.dtype and a.ndim and b.ndim:
        raise RuntimeError(
            "expected m1 and m2 to have the same dtype, but got: "
            f"{input.dtype!r} != {other.dtype!r}"
        )
    if a.dtype == np.bool_ and a.ndim and b.ndim:
        raise TypeError("matmul(): unsupported dtype tensor.bool")
    matmul_shape(a.shape, b.shape)  # torch's errors; the meta function checks with it too
    return _wrap(_ops.matmul(a, b))


# ---------------------------------------------------------------------------
# reductions
# ---------------------------------------------------------------------------


def _check_nonempty(arr: np.ndarray, dims: tuple, op: str) -> None:
    reduced = dims if dims else range(arr.ndim)
    if arr.size == 0 and (arr.ndim == 0 or any(arr.shape[d] == 0 for d in reduced) or not dims):
        raise RuntimeError(
            f"{op}(): Expected reduction dim to have non-zero size "
            f"(input shape {list(arr.shape)}); "
            "the operation has no identity"
        )


@_public
def sum(input: Tensor, dim: int | Sequence[int] | None = None,  # noqa: A001
        keepdim: bool = False, *, dtype: dtype | None = None) -> Tensor:
    """Sum over `dim` (int or tuple, all dims when None); bool and ints sum as int64."""
    if dtype is None and type(input) is _Tensor_new:
        fast = _fast_float_reduction("sum", input._array, dim, keepdim)
        if fast is not None:
            return fast
    _require_tensor(input, "sum")
    arr = input._array
    target = (
        as_dtype(dtype) if dtype is not None else (input.dtype if arr.dtype.kind == "f" else int64)
    )
    if arr.dtype != target.numpy_dtype:
        arr = arr.astype(target.numpy_dtype)
    dims = _reduce_dims(dim, arr.ndim, "sum")
    return _wrap(_ops.reduce("sum", arr, dims, keepdim))


@_public
def mean(input: Tensor, dim: int | Sequence[int] | None = None, keepdim: bool = False, *,
         dtype: dtype | None = None) -> Tensor:
    """Mean over `dim`; needs a float dtype (or `dtype=`), as in torch."""
    if dtype is None and type(input) is _Tensor_new:
        fast = _fast_float_reduction("mean", input._array, dim, keepdim)
        if fast is not None:
            return fast
    _require_tensor(input, "mean")
    arr = input._array
    if dtype is not None:
        arr = arr.astype(as_dtype(dtype).numpy_dtype)
    if arr.dtype.kind != "f":
        raise TypeError(
            "mean(): could not infer output dtype. Input dtype must be a floating point dtype. "
            f"Got: {from_numpy_dtype(arr.dtype)!r}"
        )
    dims = _reduce_dims(dim, arr.ndim, "mean")
    return _wrap(_ops.reduce("mean", arr, dims, keepdim))


def _extreme(op: str, input, dim, keepdim) -> Tensor:
    if type(input) is _Tensor_new and input._array.size:
        every = type(dim) is tuple and not dim  # amax's default: all dims
        fast = _fast_float_reduction(op, input._array, None if every else dim, keepdim)
        if fast is not None:
            return fast
    _require_tensor(input, op)
    arr = input._array
    dims = _reduce_dims(dim, arr.ndim, op)
    _check_nonempty(arr, dims, op)
    return _wrap(_ops.reduce(op, arr, dims, keepdim))


@_public
def amax(input: Tensor, dim: int | Sequence[int] = (), keepdim: bool = False) -> Tensor:
    """Largest value over `dim` (all dims when empty); NaN propagates."""
    return _extreme("amax", input, dim, keepdim)


@_public
def amin(input: Tensor, dim: int | Sequence[int] = (), keepdim: bool = False) -> Tensor:
    """Smallest value over `dim` (all dims when empty); NaN propagates."""
    return _extreme("amin", input, dim, keepdim)


def _return_type(name: str):
    fields = namedtuple(name, ["values", "indices"])

    class ReturnType(fields):
        __slots__ = ()

        def __repr__(self) -> str:
            return (
                f"tensor.return_types.{name}(\nvalues={self.values!r},\nindices={self.indices!r})"
            )

    ReturnType.__name__ = ReturnType.__qualname__ = name
    ReturnType.__module__ = "tensor.return_types"
    return ReturnType


return_types = SimpleNamespace(max=_return_type("max"), min=_return_type("min"))


def _extreme_with_indices(op: str, input, dim, keepdim, other):
    _require_tensor(input, op)
    if isinstance(other, Tensor) or (dim is not None and isinstance(dim, Tensor)):
        return binary_op(
            "maximum" if op == "max" else "minimum", input, other if other is not None else dim
        )
    if dim is None:
        if keepdim:
            raise TypeError(f"{op}(): keepdim=True needs a dim")
        return _extreme("amax" if op == "max" else "amin", input, (), False)
    arr = input._array
    d = _wrap_dim(dim, arr.ndim, op)
    if arr.ndim == 0:
        return getattr(return_types, op)(_wrap(arr.copy()), _wrap(np.zeros((), np.int64)))
    if arr.shape[d] == 0:
        raise IndexError(
            f"{op}(): Expected reduction dim {d} to have non-zero size "
            f"(input shape {list(arr.shape)})"
        )
    values = _ops.reduce("amax" if op == "max" else "amin", arr, (d,), keepdim)
    if op == "max":
        indices = _ops.argmax(arr, d, keepdim)
    else:
        indices = np.asarray(np.argmin(arr, axis=d, keepdims=keepdim), dtype=np.int64)
    return getattr(return_types, op)(_wrap(values), _wrap(indices))


@_public
def max(input: Tensor, dim: int | Tensor | None = None, keepdim: bool = False, *,  # noqa: A001
        other: Tensor | None = None) -> Any:
    """max(x): the largest value; max(x, dim): (values, indices); max(x, y): elementwise."""
    return _extreme_with_indices("max", input, dim, keepdim, other)


@_public
def min(input: Tensor, dim: int | Tensor | None = None, keepdim: bool = False, *,  # noqa: A001
        other: Tensor | None = None) -> Any:
    """min(x): the smallest value; min(x, dim): (values, indices); min(x, y): elementwise."""
    return _extreme_with_indices("min", input, dim, keepdim, other)


@_public
def argmax(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index of the largest value over `dim` (of the flattened tensor when None), int64."""
    _require_tensor(input, "argmax")
    arr = input._array
    if dim is None:
        if arr.size == 0:
            raise RuntimeError(
                "argmax(): Expected reduction dim to be specified for input.numel() == 0."
            )
        if arr.ndim == 0:
            return _wrap(np.zeros((), np.int64))
        return _wrap(_ops.argmax(arr, None, keepdim))
    d = _wrap_dim(dim, arr.ndim, "argmax")
    if arr.ndim == 0:
        return _wrap(np.zeros((), np.int64))
    if arr.shape[d] == 0:
        raise IndexError(f"argmax(): Expected reduction dim {d} to have non-zero size.")
    return _wrap(_ops.argmax(arr, d, keepdim))


@_public
def argmin(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index of the smallest value over `dim` (of the flattened tensor when None), int64."""
    _require_tensor(input, "argmin")
    arr = input._array
    if arr.size == 0:
        raise RuntimeError("argmin(): Expected a non-empty tensor.")
    axis = None if dim is None or arr.ndim == 0 else _wrap_dim(dim, arr.ndim, "argmin")
    return _wrap(np.asarray(np.argmin(arr, axis=axis, keepdims=keepdim), dtype=np.int64))


def _softmax_like(op: str, input, dim, dtype) -> Tensor:
    _require_tensor(input, op)
    if dim is None:
        raise TypeError(f"{op}(): missing the required argument 'dim'")
    arr = input._array
    if dtype is not None:
        arr = arr.astype(as_dtype(dtype).numpy_dtype)
    if arr.dtype.kind != "f":
        raise TypeError(
            f"{op}(): unsupported dtype {from_numpy_dtype(arr.dtype)!r}: needs a float dtype"
        )
    d = _wrap_dim(dim, arr.ndim, op)
    if arr.ndim == 0:
        return _wrap(np.zeros((), arr.dtype) if op == "log_softmax" else np.ones((), arr.dtype))
    return _wrap(getattr(_ops, op)(arr, d))


@_public
def softmax(input: Tensor, dim: int | None = None, dtype: dtype | None = None) -> Tensor:
    """exp(x) / sum(exp(x)) along `dim`."""
    return _softmax_like("softmax", input, dim, dtype)


@_public
def log_softmax(input: Tensor, dim: int | None = None, dtype: dtype | None = None) -> Tensor:
    """log(softmax(x)) along `dim`, computed stably."""
    return _softmax_like("log_softmax", input, dim, dtype)


# ---------------------------------------------------------------------------
# joining
# ---------------------------------------------------------------------------


def _tensor_list(tensors, op: str) -> list[Tensor]:
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(
            f"{op}(): argument 'tensors' must be a tuple or list of Tensors, "
            f"not {type(tensors).__name__}"
        )
    if not tensors:
        raise ValueError(f"{op}(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(
                f"{op}(): expected Tensor as element {i} in argument 0, but got {type(t).__name__}"
            )
    return list(tensors)


@_public
def cat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Join tensors along an existing dim; dtypes promote as in torch."""
    items = _tensor_list(tensors, "cat")
    dt = result_type(*items) if len(items) > 1 else items[0].dtype
    # torch still skips 1-d empty tensors here (a legacy rule)
    kept = [t for t in items if not (t._array.ndim == 1 and t._array.size == 0)] or items[:1]
    first = kept[0]._array
    if first.ndim == 0:
        raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
    d = _wrap_dim(dim, first.ndim, "cat")
    for i, t in enumerate(kept):
        arr = t._array
        if arr.ndim != first.ndim:
            raise RuntimeError(
                f"Tensors must have same number of dimensions: got {first.ndim} and {arr.ndim}"
                f"{in_op('cat', *(t._array.shape for t in items))}"
            )
        for k in range(first.ndim):
            if k != d and arr.shape[k] != first.shape[k]:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {d}. Expected size "
                    f"{first.shape[k]} but got size {arr.shape[k]} for tensor number {i} in the "
                    f"list.{in_op('cat', *(t._array.shape for t in items))}"
                )
    arrays = [_array_as(t, dt.numpy_dtype) for t in kept]
    if _dispatch._routing:
        return _dispatch.primitive("cat")([Tensor._from_array(a) for a in arrays], d)
    return _wrap(np.concatenate(arrays, axis=d))


@_public
def stack(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Join same-shaped tensors along a new dim."""
    items = _tensor_list(tensors, "stack")
    first = items[0]._array
    for i, t in enumerate(items):
        if t._array.shape != first.shape:
            raise RuntimeError(
                "stack expects each tensor to be equal size, but got "
                f"{list(first.shape)} at entry 0 "
                f"and {list(t._array.shape)} at entry {i}"
            )
    d = _wrap_dim(dim, first.ndim + 1, "stack")
    dt = result_type(*items)
    arrays = [_array_as(t, dt.numpy_dtype) for t in items]
    if _dispatch._routing:
        return _dispatch.primitive("stack")([Tensor._from_array(a) for a in arrays], d)
    return _wrap(np.stack(arrays, axis=d))


# ---------------------------------------------------------------------------
# functions that are Tensor methods first (views), and in-place updates
# ---------------------------------------------------------------------------


def _function_from_method(name: str):
    impl = getattr(Tensor, name).__wrapped__

    def function(input: Tensor, *args: Any, **kwargs: Any) -> Any:
        _require_tensor(input, name)
        return impl(input, *args, **kwargs)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = impl.__doc__
    return _public(function)


reshape = _function_from_method("reshape")
flatten = _function_from_method("flatten")
permute = _function_from_method("permute")
transpose = _function_from_method("transpose")
t = _function_from_method("t")
squeeze = _function_from_method("squeeze")
unsqueeze = _function_from_method("unsqueeze")
numel = _function_from_method("numel")
split = _function_from_method("split")
chunk = _function_from_method("chunk")
unbind = _function_from_method("unbind")


def _in_place(op_impl, name: str, op: str):
    def method(self, *args, **kwargs):
        if len(args) == 1 and not kwargs and type(self) is _Tensor_new:
            # x += y of one dtype and shape, x *= 2.0: the kernel writes into x itself
            a, other = self._array, args[0]
            if a.dtype.kind in _PLAIN_KINDS.get(op, ""):
                if type(other) is _Tensor_new and other._array.dtype is a.dtype:
                    b = other._array
                elif (type(other) is float and a.dtype.kind == "f") or type(other) is int:
                    b = a.dtype.type(other)
                else:
                    b = None
                if b is not None and _ops.binary_(op, a, b):
                    return self
        result = op_impl(self, *args, **kwargs)
        target = self._array
        if result._array.shape != target.shape:
            raise RuntimeError(
                f"{name}(): output with shape {list(target.shape)} doesn't match the broadcast "
                f"shape {list(result._array.shape)}"
            )
        if not np.can_cast(result._array.dtype, target.dtype, casting="same_kind"):
            raise RuntimeError(
                f"{name}(): result type {result.dtype!r} can't be cast to the desired output type "
                f"{self.dtype!r}"
            )
        check_writable(target, name)
        if _dispatch._routing:  # an in-place write is a primitive: a graph must see it
            _dispatch.primitive("copy_")(self, result)
            return self
        np.copyto(target, result._array, casting="same_kind")
        return self

    method.__name__ = method.__qualname__ = name
    return method


def _fill_(self, value):
    self._array[...] = value._array if isinstance(value, Tensor) else value
    return self


def _zero_(self):
    self._array[...] = 0
    return self


def _copy_(self, src):
    _require_tensor(src, "copy_", "src")
    check_writable(self._array, "copy_")
    broadcast_shapes("copy_", self._array.shape, src._array.shape)
    np.copyto(self._array, np.broadcast_to(src._array, self._array.shape), casting="unsafe")
    return self


def _uniform_(self, a=0.0, b=1.0):
    check_writable(self._array, "uniform_")
    self._array[...] = _generator.uniform(a, b, self._array.shape)
    return self


def _normal_(self, mean=0.0, std=1.0):
    check_writable(self._array, "normal_")
    self._array[...] = _generator.normal(mean, std, self._array.shape)
    return self


# ---------------------------------------------------------------------------
# installing the methods and operators on Tensor
# ---------------------------------------------------------------------------


def _install(name: str, impl) -> None:
    method = impl if getattr(impl, "dispatches", False) else tensor_function(impl)
    method.__name__ = name
    method.__qualname__ = f"Tensor.{name}"
    method.__module__ = "tensor"
    setattr(Tensor, name, method)


def _operator(op: Op, reflected: bool):
    """``x + y``, ``2 ** x``, ...: NotImplemented for foreign operands, so Python can try
    the other side. Elementwise operators go straight to ``binary_op`` / ``compare_op``
    (``_binary_operator``), one Python call less than through the public function
    (the hottest path)."""
    name = op.name
    if op.kind == "unary":
        return globals()[name].__wrapped__
    if op.kind in ("binary", "compare"):
        runner = compare_op if op.kind == "compare" else binary_op
        return _binary_operator(name, runner, op.kind == "binary", reflected)
    impl = globals()[name].__wrapped__
    if reflected:

        def method(self, other):
            if not isinstance(other, _OPERAND_TYPES):
                return NotImplemented
            return impl(other, self)
    else:

        def method(self, other):
            if not isinstance(other, _OPERAND_TYPES):
                return NotImplemented
            return impl(self, other)

    return method


def _binary_operator(name: str, runner, binary: bool, reflected: bool):
    """``x + y``: the plain case straight to the backend (``_plain_first``); anything
    else through ``runner``, and a foreign operand gets NotImplemented, so
    Python can try the other side. The operator is itself the callable
    handlers receive."""

    def general(input, other):
        if not isinstance(other, _OPERAND_TYPES):
            return NotImplemented
        return runner(name, other, input) if reflected else runner(name, input, other)

    return _plain_first(name, reflected, general)


_IN_PLACE = {"add": "__iadd__", "sub": "__isub__", "mul": "__imul__", "div": "__itruediv__",
             "pow": "", "clamp": ""}  # the name_ methods, and Python's operator where it has one


def _install_methods() -> None:
    """Tensor's math methods and operators, from the op table."""
    for op in OPS:
        public = globals()[op.name].__wrapped__ if op.method else None
        if op.method:
            _install(op.name, public)
        if op.operator:
            _install(op.operator, _operator(op, False))
        if op.reflected:
            _install("__r" + op.operator[2:], _operator(op, True))
        if op.name in _IN_PLACE:
            _install(op.name + "_", _in_place(public, op.name + "_", op.name))
            if _IN_PLACE[op.name]:
                _install(_IN_PLACE[op.name], _in_place(public, _IN_PLACE[op.name], op.name))
    _install("where", _tensor_where)
    for name, impl in (
        ("fill_", _fill_),
        ("zero_", _zero_),
        ("copy_", _copy_),
        ("uniform_", _uniform_),
        ("normal_", _normal_),
    ):
        _install(name, impl)


def _tensor_where(self, condition, other):
    """x.where(condition, y): elements of x where condition holds, else of y."""
    return where.__wrapped__(condition, self, other)


_install_methods()

__all__ = [
    "Size", "add", "amax", "amin", "arange", "argmax", "argmin", "as_tensor", "broadcast_shapes",
    "cat", "chunk", "clamp", "empty", "empty_like", "flatten", "float32", "from_numpy", "full",
    "full_like", "is_tensor", "log_softmax", "manual_seed", "matmul", "max", "mean", "min",
    "numel", "ones", "ones_like", "permute", "rand", "rand_like", "randn", "randn_like", "reshape",
    "return_types", "softmax", "split", "squeeze", "stack", "sub", "sum", "t", "tensor",
    "transpose", "unbind", "unsqueeze", "where", "zeros", "zeros_like",
]
__all__ += [op.name for op in _ELEMENTWISE if op.name not in __all__]  # tensor.neg, tensor.mul, ...
