"""The op table of the tests: one entry per public `tensor` operation.

Each `OpInfo` names the operation (``tensor.<name>`` and ``torch.<name>``,
and the Tensor method of that name when ``method``), gives a NumPy reference,
the dtypes it supports and a function that makes sample inputs for one of
them. Samples are NumPy arrays (or Python scalars) with a layout: the same
data becomes a `tensor` and a torch tensor, contiguous or as a view
(permuted, sliced with a step, expanded with stride 0), with 0-d, size-0 and
broadcast shapes. `ErrorCase`s are calls that must fail with a message that
names the operation and the shapes or dtypes at fault.

test_op_db.py runs the table on both backends against NumPy and torch; this
is PyTorch's OpInfo idea (torch/testing/_internal/common_methods_invocations.py)
at the scale of this library.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tensor._ops import OPS as TABLE
from tests.ch00.tensor_helpers import data, layouts

FLOATS = ("float32", "float64")
INTS = ("int64", "int32")
NUMERIC = FLOATS + INTS
ALL = NUMERIC + ("bool",)


@dataclass
class Sample:
    """Positional inputs (arrays become tensors; other values pass as they are),
    keyword arguments, and the view applied to the first input in both libraries."""

    args: tuple
    kwargs: dict = field(default_factory=dict)
    view: Callable[[Any], Any] = staticmethod(lambda x: x)
    layout: str = "contiguous"


@dataclass
class ErrorCase:
    """A call that must fail: its inputs, the exception, and the words the message holds."""

    args: tuple
    kwargs: dict
    error: type
    words: tuple[str, ...]


@dataclass
class OpInfo:
    name: str
    ref: Callable[..., Any]  # NumPy reference on the arrays (after the view)
    dtypes: tuple  # dtype names, or (a, b) pairs for two-input ops
    samples: Callable[[Any], list[Sample]]
    method: bool = True  # also `Tensor.<name>`
    errors: list[ErrorCase] = field(default_factory=list)
    exact: bool = False  # integer-valued results compare exactly
    tolerance: float = 1e-5


# -- sample makers ----------------------------------------------------------

UNARY_SHAPES = [(2, 3), (3, 1, 4), (0, 3), (1,), ()]


def unary_samples(dtype: str, shapes=UNARY_SHAPES, low=-3.0, high=3.0) -> list[Sample]:
    """Every shape in every layout (the view is applied to the base in both libraries)."""
    out = []
    for shape in shapes:
        for layout, (base_shape, view) in layouts(shape).items():
            out.append(Sample((data(base_shape, dtype, low, high),), view=view, layout=layout))
    return out


SHAPE_PAIRS = [
    ((2, 3), (2, 3)),
    ((2, 3), (3,)),
    ((4, 1, 3), (2, 1)),
    ((0, 3), (1, 3)),
    ((2, 1), (1, 0)),
    ((), (2, 2)),
    ((1,), (3,)),
    ((3, 1), ()),
]
DTYPE_PAIRS = [
    ("float32", "float32"), ("float32", "float64"), ("int64", "float32"), ("int32", "int64"),
    ("bool", "int64"), ("bool", "bool"), ("int64", "int64"), ("float64", "int32"),
    ("int32", "float32"),
]


def binary_samples(dtypes: tuple[str, str], exponent=False, scalar=True) -> list[Sample]:
    """Broadcasting shape pairs, a permuted and an expanded view, and Python scalars
    (where torch takes one: not for maximum and minimum)."""
    da, db = dtypes
    out = []
    for sa, sb in SHAPE_PAIRS:
        a, b = data(sa, da), data(sb, db)
        if exponent and db != "bool":
            b = np.abs(b) % 3  # integer powers stay defined
        out.append(Sample((a, b)))
    b = data((3, 2), db) if not exponent else np.abs(data((3, 2), db)) % 3
    out.append(Sample((data((2, 3), da), b.T.copy()), view=lambda x: x.t().t(),
                      layout="transposed twice"))
    b = data((4, 3), db) if not exponent else np.abs(data((4, 3), db)) % 3
    out.append(Sample((data((1, 3), da), b), view=lambda x: x.expand(4, 3), layout="expanded"))
    if scalar:
        number = {"bool": True, "int64": 2, "int32": -3, "float32": 2.5, "float64": -0.5}[db]
        out.append(Sample((data((2, 3), da), abs(number) if exponent else number),
                          layout="python scalar"))
    return out


def shape_mismatch(name: str, dtype: str = "float32") -> ErrorCase:
    return ErrorCase((data((2, 3), dtype), data((4, 3), dtype)), {}, RuntimeError,
                     (f"in {name}", "[2, 3]", "[4, 3]"))


def dtype_error(name: str, a_dtype: str, b_dtype: str | None = None) -> ErrorCase:
    args = (data((2,), a_dtype),) if b_dtype is None else (data((2,), a_dtype),
                                                          data((2,), b_dtype))
    return ErrorCase(args, {}, TypeError, (f"{name}()", f"tensor.{a_dtype}"))


def np_sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x.astype(np.float64)))


def np_softmax(x, dim):
    shifted = x - x.max(axis=dim, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=dim, keepdims=True)


def reduction_samples(dtype: str) -> list[Sample]:
    out = []
    for dim in [None, 0, -1, 1, (0, 2), (-1, 0), ()]:
        for keepdim in (False, True):
            kwargs = {} if dim is None else {"dim": dim, "keepdim": keepdim}
            for layout, (base, view) in layouts((2, 3, 4)).items():
                out.append(Sample((data(base, dtype),), kwargs, view, layout))
    out.append(Sample((data((0, 3), dtype),), {"dim": 1}, layout="size 0"))
    out.append(Sample((data((), dtype),), {}, layout="0-d"))
    return out


def reduction_ref(fn):
    def ref(x, dim=None, keepdim=False):
        axis = tuple(dim) if isinstance(dim, (tuple, list)) else dim
        if dim is None:
            return fn(x, axis=None)
        if axis == ():  # torch: an empty dim list reduces every dim
            axis = None
        return fn(x, axis=axis, keepdims=keepdim)

    return ref


def shape_samples(*pairs) -> Callable[[str], list[Sample]]:
    """Samples for a shape op: (shape, args after the tensor, kwargs) in every layout."""

    def make(dtype: str) -> list[Sample]:
        out = []
        for shape, args, kwargs in pairs:
            for layout, (base, view) in layouts(shape).items():
                out.append(Sample((data(base, dtype), *args), kwargs, view, layout))
        return out

    return make


def list_samples(dtype: str) -> list[Sample]:
    """For cat and stack: a list of arrays (the op's first argument) and a dim."""
    out = []
    for dim in (0, 1, -1):
        out.append(Sample(([data((2, 3), dtype), data((2, 3), dtype)],), {"dim": dim}))
    out.append(Sample(([data((0, 3), dtype), data((2, 3), dtype)],), {"dim": 0},
                      layout="size 0"))
    return out


def _cat_ref(arrays, dim=0):
    return np.concatenate(arrays, axis=dim)


def _stack_ref(arrays, dim=0):
    return np.stack(arrays, axis=dim)


# -- the table ----------------------------------------------------------------

# Torch is the oracle; NumPy is the second. The op table (tensor/_ops.py) gives every
# elementwise op and its NumPy reference; these references compute in float64 instead.
PRECISE_REFS = {
    "exp": lambda x: np.exp(x.astype(np.float64)),
    # Negative inputs too: NaN where torch gives NaN (-inf, inf and NaN inputs are
    # test_tensor_core.py's test_unary_extremes_match_torch).
    "log": lambda x: np.log(x.astype(np.float64)),
    "sqrt": lambda x: np.sqrt(x.astype(np.float64)),
    "rsqrt": lambda x: 1.0 / np.sqrt(x.astype(np.float64)),
    "sigmoid": np_sigmoid,
    "tanh": lambda x: np.tanh(x.astype(np.float64)),
    "relu": lambda x: np.maximum(x, 0).astype(x.dtype),
    "div": lambda a, b: np.true_divide(np.asarray(a, np.float64), b),
    "pow": lambda a, b: np.power(np.asarray(a, np.float64), b),
}

OPS: list[OpInfo] = []

for _op in TABLE:
    if not _op.public or _op.kind not in ("unary", "binary", "compare"):
        continue
    _name, _ref = _op.name, PRECISE_REFS.get(_op.name, _op.numpy)
    if _op.kind == "unary":
        _errors = [dtype_error(_name, "bool")] if _name == "neg" else []
        OPS.append(OpInfo(_name, _ref, NUMERIC, unary_samples, errors=_errors))
        continue
    _errors = [shape_mismatch(_name, "int64" if _op.dtypes == "int" else "float32")]
    if _op.dtypes == "int":
        _errors.append(dtype_error(_name, "float32", "float32"))
    if _name == "sub":
        _errors.append(dtype_error(_name, "bool", "bool"))
    OPS.append(OpInfo(
        _name, _ref, tuple(DTYPE_PAIRS),
        (lambda d, _n=_name: binary_samples(d, exponent=_n == "pow",
                                            scalar=_n not in ("maximum", "minimum"))),
        errors=_errors))

OPS += [
    # Tensor.where(condition, other) reads self as the values: not the function's order.
    OpInfo("where", lambda c, a, b: np.where(c, a, b), ("float32", "int64", "bool"),
           method=False,
           samples=lambda d: [Sample((data((2, 3), "bool"), data((2, 3), d), data((3,), d))),
                      Sample((data((1, 3), "bool"), data((2, 1), d), data((), d)),
                             view=lambda c: c.expand(2, 3), layout="expanded"),
                      Sample((data((0, 3), "bool"), data((0, 3), d), data((3,), d)),
                             layout="size 0")],
           errors=[ErrorCase((data((2, 3)) > 0, data((4, 3)), data((2, 3))), {}, RuntimeError,
                             ("in where", "[4, 3]", "[2, 3]"))]),
    OpInfo("clamp", lambda x, min=None, max=None: np.clip(x, min, max), FLOATS + ("int64",),
           lambda d: [Sample(s.args, {"min": -1, "max": 2}, s.view, s.layout)
                      for s in unary_samples(d)]
           + [Sample((data((2, 3), d),), {"min": 0}), Sample((data((2, 3), d),), {"max": 0})]),
    OpInfo("matmul", np.matmul, ("float32", "float64", "int64"),
           lambda d: [Sample((data(a, d), data(b, d))) for a, b in [
               ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
               ((5, 2, 3), (3, 4)), ((2, 3), (5, 3, 4)), ((5, 1, 2, 3), (4, 3, 2)),
               ((0, 3), (3, 4)), ((2, 0), (0, 4))]]
           + [Sample((data((3, 2), d), data((3, 4), d)), view=lambda x: x.t(),
                     layout="transposed")],
           errors=[ErrorCase((data((2, 3)), data((4, 3))), {}, RuntimeError,
                             ("in matmul", "[2, 3]", "[4, 3]")),
                   ErrorCase((data((2, 2), "bool"), data((2, 2), "bool")), {}, TypeError,
                             ("matmul()", "tensor.bool"))]),
    OpInfo("sum", reduction_ref(np.sum), ("float32", "float64", "int64", "bool"),
           reduction_samples),
    OpInfo("mean", reduction_ref(np.mean), FLOATS, reduction_samples,
           errors=[ErrorCase((data((2,), "int64"),), {}, TypeError, ("mean()", "int64"))]),
    OpInfo("amax", reduction_ref(np.amax), ("float32", "float64", "int64", "bool"),
           lambda d: [s for s in reduction_samples(d) if s.layout not in ("size 0",)]),
    OpInfo("amin", reduction_ref(np.amin), ("float32", "float64", "int64", "bool"),
           lambda d: [s for s in reduction_samples(d) if s.layout not in ("size 0",)]),
    OpInfo("argmax", lambda x, dim=None, keepdim=False: (
        np.argmax(x) if dim is None else np.argmax(x, axis=dim, keepdims=keepdim)),
           ("float32", "int64"),
           shape_samples(((2, 3, 4), (), {}), ((2, 3, 4), (), {"dim": 1}),
                         ((2, 3, 4), (), {"dim": -1, "keepdim": True}), ((), (), {})),
           errors=[ErrorCase((data((0,)),), {}, (RuntimeError, IndexError), ("argmax()",))]),
    OpInfo("argmin", lambda x, dim=None, keepdim=False: (
        np.argmin(x) if dim is None else np.argmin(x, axis=dim, keepdims=keepdim)),
           ("float32", "int64"),
           shape_samples(((2, 3, 4), (), {}), ((2, 3, 4), (), {"dim": 0, "keepdim": True}))),
    OpInfo("softmax", lambda x, dim: np_softmax(x.astype(np.float64), dim), FLOATS,
           shape_samples(((2, 3, 4), (), {"dim": 0}), ((2, 3, 4), (), {"dim": -1}),
                         ((0, 3), (), {"dim": 1}), ((), (), {"dim": 0})),
           errors=[ErrorCase((data((2,), "int64"), 0), {}, TypeError,
                             ("softmax()", "tensor.int64"))]),
    OpInfo("log_softmax", lambda x, dim: np.log(np_softmax(x.astype(np.float64), dim)), FLOATS,
           shape_samples(((2, 3, 4), (), {"dim": 1}), ((3,), (), {"dim": 0}))),
    OpInfo("reshape", lambda x, shape: np.reshape(x, shape), ALL,
           shape_samples(((2, 3), ((3, 2),), {}), ((2, 3), ((-1,),), {}),
                         ((0, 3), ((3, 0),), {}), ((), ((1, 1),), {})),
           errors=[ErrorCase((data((2, 3)), (5,)), {}, RuntimeError,
                             ("in reshape", "[2, 3]", "[5]"))]),
    OpInfo("flatten", lambda x, start_dim=0, end_dim=-1: x.reshape(
        x.shape[:start_dim] + (-1,)) if x.ndim else x.reshape(1), ALL,
           shape_samples(((2, 3, 4), (), {}), ((2, 3, 4), (), {"start_dim": 1}), ((), (), {}))),
    OpInfo("permute", lambda x, dims: np.transpose(x, dims), ALL,
           shape_samples(((2, 3, 4), ((2, 0, 1),), {}), ((2, 3), ((1, 0),), {}))),
    OpInfo("transpose", lambda x, a, b: np.swapaxes(x, a, b), ALL,
           shape_samples(((2, 3, 4), (0, 2), {}), ((2, 3), (-1, 0), {})),
           errors=[ErrorCase((data((2,)), 0, 3), {}, IndexError, ("transpose()", "range"))]),
    OpInfo("t", lambda x: x.T, ALL, shape_samples(((2, 3), (), {}), ((3,), (), {}))),
    OpInfo("squeeze", lambda x, dim=None: np.squeeze(x, dim), ALL,
           shape_samples(((2, 1, 3), (), {}), ((2, 1, 3), (1,), {}), ((1,), (), {}))),
    OpInfo("unsqueeze", lambda x, dim: np.expand_dims(x, dim), ALL,
           shape_samples(((2, 3), (0,), {}), ((2, 3), (-1,), {}), ((), (0,), {})),
           errors=[ErrorCase((data((2, 3)), 5), {}, IndexError, ("unsqueeze()", "range"))]),
    OpInfo("cat", _cat_ref, NUMERIC, list_samples, method=False,
           errors=[ErrorCase(([data((2, 3)), data((2, 4))],), {}, RuntimeError,
                             ("in cat", "[2, 3]", "[2, 4]"))]),
    OpInfo("stack", _stack_ref, NUMERIC,
           lambda d: [s for s in list_samples(d) if s.layout != "size 0"], method=False,
           errors=[ErrorCase(([data((2,)), data((3,))],), {}, RuntimeError,
                             ("stack", "[2]", "[3]"))]),
    OpInfo("chunk", lambda x, n, dim=0: tuple(np.array_split(x, n, axis=dim)), NUMERIC,
           shape_samples(((6, 2), (3,), {}), ((2, 4), (2,), {"dim": 1}))),
    OpInfo("split", lambda x, size, dim=0: tuple(
        np.split(x, range(size, x.shape[dim], size), axis=dim)), NUMERIC,
           shape_samples(((6, 2), (2,), {}), ((2, 5), (2,), {"dim": 1}))),
    OpInfo("unbind", lambda x, dim=0: tuple(np.moveaxis(x, dim, 0)), NUMERIC,
           shape_samples(((3, 2), (), {}), ((2, 3), (), {"dim": 1}))),
]
