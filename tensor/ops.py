"""`tensor.ops`: the primitives, one table, and the router that makes the front end use them.

Every public op of `tensor` checks its arguments, settles dtypes and
shapes, and then asks the backend for the numbers (ARCHITECTURE.md, "from
a call to a kernel"). The calls it makes there are few: ``unary``,
``binary``, ``reduce``, ``matmul``, ``conv2d``, ... This module names each
of them as a primitive, an `OpOverload` object: ``tensor.ops.add``,
``tensor.ops.matmul``, ``tensor.ops.conv2d``, ``tensor.ops.sum``. One
backend call with an op name (``binary("add", a, b)``) is one primitive
per name (``tensor.ops.add``), as ATen has ``aten.add`` and ``aten.mul``.

Which calls are primitives (the table `PRIMITIVES` below):

- the backend interface: the elementwise ops of `tensor._ops.OPS`
  (unary, binary, compare, and the in-place twin of each unary op, as
  ATen has them: ``relu_`` is ``ReLU(inplace=True)``), ``where``,
  ``clamp``, the reductions ``sum``, ``mean``, ``amax``, ``amin``,
  ``argmax``, ``softmax``, ``log_softmax``,
  ``matmul``, ``linear``, ``conv2d``, the pools, ``batch_norm``,
  ``layer_norm``, ``embedding``;
- the views, because a graph must say where a view came from, as ATen
  has ``view`` and ``permute``: ``view``, ``reshape``, ``permute``,
  ``transpose``, ``t``, ``expand``, ``unsqueeze``, ``squeeze``,
  ``getitem`` (basic indexing); their arguments are the Tensor method's;
- the copies: ``clone`` (``contiguous`` when it must copy), ``to_dtype``
  (``Tensor.to`` and friends, and dtype promotion), ``copy_`` (an in-place
  write: ``x += y``, BatchNorm's running statistics), and the joins
  ``cat`` and ``stack``;
- creation: ``full`` (``zeros``, ``ones``, ``empty``, ``full``), ``rand``,
  ``randn``, ``arange`` (``start, end, step, dtype``), so that a fake mode
  can create without allocating. Tensors made from data
  (``tensor.tensor([...])``) are constants, not calls.

The router. The front end reaches the backend through one attribute,
``tensor.backend.ops()`` (kept in a global by ``on_switch``). While no dispatch
mode is on, that is the kernel module itself and nothing here costs a
thing. While one is, it is the `_Router`: the same names and signatures,
each turning the call into its primitive on Tensors, so the mode sees
``tensor.ops.add(x, y)`` where the front end wrote ``binary("add", a, b)``.
Views, copies and creation calls reach their primitive through a hook
(`tensor.dispatch.primitive`).

A primitive's arguments are the kernel's, with Tensors for arrays: Python
numbers stay numbers (``tensor.ops.mul(x, 0.5)``), dims and sizes are
tuples. Operands already share a dtype, as the kernels require; the public
ops promote before they get here.
"""

from __future__ import annotations

import functools

import numpy as np

from . import _functions, _meta, dispatch
from . import backend as _backend
from ._dtype import as_dtype
from ._fake_tensor import fake_mode_of
from ._ops import OPS
from ._tensor import Tensor

# OPS, the elementwise op table (tensor/_ops.py), is public here too: chapter 8's
# compiler and the torch adapter read it.
__all__ = ["OPS", "OpOverload", "PRIMITIVES"]


def _kernels():
    return _backend._modules[_backend._active_name]


class OpOverload:
    """A primitive: a name, the kernel call it stands for, and its meta function.

    Calling it on Tensors (and numbers, tuples) gives a Tensor. With no
    dispatch mode on, it runs the kernel (`impl`, on arrays); with one, the
    top mode's ``__tensor_dispatch__`` receives it. `meta(*arrays)` answers
    the output's shape, dtype and strides as a FakeArray, without data.
    """

    def __init__(self, name: str, kind: str, impl, meta, doc: str = "") -> None:
        self.__name__ = self.__qualname__ = name
        self.__module__ = "tensor.ops"
        self.kind = kind
        self.impl = impl
        self.meta = meta
        self.__doc__ = doc or f"The primitive {name} ({kind})."

    @property
    def name(self) -> str:
        return self.__name__

    def __repr__(self) -> str:
        return f"tensor.ops.{self.__name__}"

    def __reduce__(self) -> tuple:
        """Pickled by name, as a function is: the one primitive of that name on loading."""
        return (_primitive, (self.__name__,))

    def __call__(self, *args, **kwargs):
        if dispatch._modes:
            return dispatch.call_with_modes(self, _tensor_types(args), args, kwargs)
        fake = fake_mode_of(args)
        if fake is not None:  # a fake tensor outside its mode: enter it, as torch does
            with fake:
                return self(*args, **kwargs)
        return self.run(*args, **kwargs)

    def run(self, *args, **kwargs):
        """The kernel, on the arrays of the Tensor arguments, beneath every mode.

        The meta function runs first, as the check: a primitive called directly
        with bad shapes fails as it does on fake tensors, not deep in a kernel.
        """
        arrays = _arrays(args)
        with dispatch._kernel():
            if self.kind in _CHECKED:
                self.meta(*arrays, **kwargs)
            out = self.impl(*arrays, **kwargs)
        return _tensors(out, args)

    def compute_meta(self, *args, **kwargs):
        """The output's metadata: a FakeArray from the meta function, no kernel run."""
        if not dispatch._routing:  # speed only: the usual case under a fake mode, nothing to switch
            return self.meta(*_arrays(args), **kwargs)
        with dispatch._kernel():
            out = self.meta(*_arrays(args), **kwargs)
        return out


def _primitive(name: str) -> OpOverload:
    return PRIMITIVES[name]


_CHECKED = ("binary", "compare", "reduce", "kernel", "join")  # views check themselves

# ---------------------------------------------------------------------------
# Tensors in, arrays to the kernels, Tensors out
# ---------------------------------------------------------------------------

def _arrays(args: tuple) -> list:
    """The arguments as the kernels take them: each Tensor as its array, a list or tuple
    of Tensors (cat's and stack's first argument) as a list of arrays, and anything
    else (numbers, sizes, dims, an index) as it is. One level down, as `_tensor_types`
    looks: no primitive takes Tensors deeper."""
    return [a._array if isinstance(a, Tensor) else
            [v._array if isinstance(v, Tensor) else v for v in a]
            if isinstance(a, (tuple, list)) and a and isinstance(a[0], Tensor) else a
            for a in args]


def _tensor_types(args) -> tuple:
    types = []
    for a in args:
        if isinstance(a, Tensor):  # speed only: the usual argument, tested before the nested ones
            if type(a) not in types:
                types.append(type(a))
        elif isinstance(a, (tuple, list)):
            for v in a:
                if isinstance(v, Tensor) and type(v) not in types:
                    types.append(type(v))
    return tuple(types)


def _tensors(out, args):
    if isinstance(out, np.generic):  # a kernel may answer a 0-d result as a NumPy scalar
        out = np.asarray(out)
    if isinstance(out, np.ndarray):
        for a in args:  # an in-place primitive answers its own argument
            if isinstance(a, Tensor) and a._array is out:
                return a
        return Tensor._from_array(out)  # a FakeTensor around a FakeArray
    if isinstance(out, tuple):
        return tuple(_tensors(o, args) for o in out)
    return out


# ---------------------------------------------------------------------------
# the kernels behind each primitive (arrays in, an array out)
# ---------------------------------------------------------------------------

def _operand(x, like):
    """A Python number as a NumPy scalar of the other operand's dtype, as the front end passes."""
    return like.dtype.type(x) if not isinstance(x, np.ndarray) else x


def _binary_impl(name):
    def impl(a, b):
        if not isinstance(a, np.ndarray):
            a = _operand(a, b)
        elif not isinstance(b, np.ndarray):
            b = _operand(b, a)
        return _kernels().binary(name, a, b)
    return impl


def _compare_impl(name):
    def impl(a, b):
        if not isinstance(a, np.ndarray):
            a = _operand(a, b)
        elif not isinstance(b, np.ndarray):
            b = _operand(b, a)
        return _kernels().compare(name, a, b)
    return impl


def _unary_inplace_impl(name):
    def impl(a):
        if not _kernels().unary_(name, a):  # no in-place kernel: compute, then write back
            a[...] = _kernels().unary(name, a)
        return a
    return impl


def _method_impl(method: str):
    """A view or copy primitive: the Tensor method's own code, on a plain Tensor."""
    def impl(a, *args, **kwargs):
        raw = getattr(Tensor, method).__wrapped__.raw
        return raw(Tensor._from_array(a), *args, **kwargs)._array
    return impl


def _creation_impl(name):
    def impl(shape, *rest):
        dtype = rest[-1].numpy_dtype
        if name == "full":
            return np.full(shape, rest[0], dtype=dtype)
        draw = _functions._generator.random if name == "rand" else \
            _functions._generator.standard_normal
        return draw(shape, dtype=dtype)
    return impl


def _arange_impl(start, end, step, dtype):
    """start, start + step, ... short of end, in ``dtype``: value i is start + i * step,
    computed in int64 (all three ints) or float64, as tensor.arange computes it."""
    ints = all(isinstance(v, (int, np.integer)) for v in (start, end, step))
    steps = np.arange(_meta.arange_length(start, end, step), dtype=np.int64 if ints else np.float64)
    return (start + steps * step).astype(dtype.numpy_dtype)


def _copy_impl(dst, src):
    np.copyto(dst, np.broadcast_to(src, dst.shape), casting="unsafe")
    return dst


def _named(attr):
    return lambda *args: getattr(_kernels(), attr)(*args)


def _build() -> dict[str, OpOverload]:
    table: dict[str, OpOverload] = {}

    def add(name, kind, impl, meta, doc=""):
        table[name] = OpOverload(name, kind, impl, meta, doc)

    for op in OPS:
        if op.kind == "unary":
            add(op.name, "unary", (lambda n: lambda a: _kernels().unary(n, a))(op.name),
                _meta.unary(op.name))
            add(op.name + "_", "inplace", _unary_inplace_impl(op.name), _meta.unary_inplace)
        elif op.kind == "binary":
            add(op.name, "binary", _binary_impl(op.name), _meta.binary(op.name))
        elif op.kind == "compare":
            add(op.name, "compare", _compare_impl(op.name), _meta.compare(op.name))
    for name in ("sum", "mean", "amax", "amin"):
        add(name, "reduce", (lambda n: lambda a, dims, keepdim:
                             _kernels().reduce(n, a, tuple(dims), keepdim))(name),
            _meta.reduce(name))
    for name in ("where", "clamp", "argmax", "softmax", "log_softmax", "matmul", "linear",
                 "conv2d", "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "batch_norm",
                 "layer_norm", "embedding"):
        add(name, "kernel", _named(name), _meta.META[name])
    for name in ("view", "reshape", "permute", "transpose", "t", "expand", "unsqueeze",
                 "squeeze"):
        impl = _method_impl(name)
        add(name, "view", impl, impl)  # a view's meta is the view itself, on a FakeArray
    getitem = _method_impl("__getitem__")
    add("getitem", "view", getitem, getitem)
    add("clone", "copy", lambda a: a.copy(), _meta.clone)
    add("to_dtype", "copy", lambda a, dtype: a.astype(as_dtype(dtype).numpy_dtype),
        _meta.to_dtype)
    add("copy_", "copy", _copy_impl, _meta.copy_)
    add("cat", "join", lambda arrays, dim: np.concatenate(arrays, axis=dim), _meta.cat)
    add("stack", "join", lambda arrays, dim: np.stack(arrays, axis=dim), _meta.stack)
    for name in ("full", "rand", "randn"):
        add(name, "creation", _creation_impl(name), _meta.META[name])
    add("arange", "creation", _arange_impl, _meta.META["arange"])
    return table


PRIMITIVES: dict[str, OpOverload] = _build()
globals().update(PRIMITIVES)
__all__ += sorted(PRIMITIVES)


# ---------------------------------------------------------------------------
# the router: the backend interface, spoken in primitives
# ---------------------------------------------------------------------------

def _call(name, *args):
    """One backend call as its primitive: arrays become Tensors, NumPy scalars Python
    numbers (so that a graph prints them as numbers), the answer an array."""
    out = PRIMITIVES[name](*[Tensor._from_array(a) if isinstance(a, np.ndarray) else
                             a.item() if isinstance(a, np.generic) else a for a in args])
    return out._array if isinstance(out, Tensor) else out


class _Router:
    """What ``tensor.backend.ops()`` returns while a dispatch mode is on. Names and
    signatures are the backend interface's; each call becomes its primitive."""

    def unary(self, op, a):
        return _call(op, a)

    def binary(self, op, a, b):
        return _call(op, a, b)

    binary_same_shape = binary

    def binary_scalar(self, op, a, value, left):
        return _call(op, value, a) if left else _call(op, a, value)

    def unary_(self, op, a):  # in place: the primitive relu_ (for op "relu") writes into a
        _call(op + "_", a)
        return True

    def binary_(self, op, a, b):  # refused: the front end computes, then writes with copy_
        return False

    def compare(self, op, a, b):
        return _call(op, a, b)

    def reduce(self, op, a, dims, keepdim):
        return _call(op, a, tuple(dims), keepdim)

    def __getattr__(self, name):
        if name in PRIMITIVES:  # where, clamp, matmul, conv2d, ...: the same arguments
            route = functools.partial(_call, name)
            setattr(self, name, route)  # speed only: found at once on the next call
            return route
        return getattr(_kernels(), name)  # not a primitive: straight to the kernels


_ROUTER = _Router()


def _switch(on: bool) -> None:
    _backend._make_active(_ROUTER if on else _kernels())


dispatch._set_router(_switch, PRIMITIVES)
