"""class Tensor: a NumPy array seen through torch's eyes.

A Tensor keeps its elements in `self._array`, a NumPy array that may be a
view of another tensor's array. Shape, strides (in elements, as torch counts
them), dtype and the printed form all follow torch. Views (`view`,
`transpose`, `permute`, `expand`, `unsqueeze`, `squeeze`, basic indexing)
share memory with the tensor they come from and get torch's strides.

The math methods (`add`, `sum`, `__add__`, ...) are installed by
`tensor._functions`, from the same implementations as the functions, so that
each op is written once.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from . import dispatch as _dispatch
from . import overrides
from ._dtype import _FROM_NUMPY, DEFAULT_FLOAT, as_dtype, bool_, dtype, float32, int64
from ._shape import contiguous_strides, in_op, infer_size, is_contiguous, view_strides
from ._size import Size
from .overrides import tensor_function

# The Tensor subclass that wraps an array of each ndarray subclass that needs one:
# tensor._fake_tensor adds FakeArray -> FakeTensor, so that the front end's ops,
# which wrap their results with `Tensor._from_array`, answer FakeTensors under a
# fake mode without asking FakeTensor's handler.
TENSOR_CLASS_OF: dict[type, type] = {}


def _shape_arg(shape: tuple, name: str) -> tuple[int, ...]:
    """Accept sizes as varargs (`view(2, 3)`) or as one sequence (`view((2, 3))`)."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    for s in shape:
        if type(s) is not int:
            break
    else:
        return shape  # the usual case: plain ints
    for s in shape:
        if not isinstance(s, (int, np.integer)) or isinstance(s, bool):
            raise TypeError(
                f"{name}(): argument 'size' must be a tuple of ints, but found element of "
                f"type {type(s).__name__}"
            )
    return tuple(int(s) for s in shape)


def _wrap_dim(dim: int, ndim: int, name: str) -> int:
    """A dim in [-ndim, ndim) made non-negative; 0-d tensors accept -1 and 0, as in torch."""
    bound = max(ndim, 1)
    if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool):
        raise TypeError(f"{name}(): dim must be an int, not {type(dim).__name__}")
    if not -bound <= dim < bound:
        raise IndexError(
            f"{name}(): Dimension out of range (expected to be in range of "
            f"[{-bound}, {bound - 1}], but got {dim})"
        )
    return int(dim) % bound


def check_writable(arr: np.ndarray, op: str) -> None:
    """Refuse an in-place ``op`` (``add_``, ``copy_``) into memory that two elements share
    (an ``expand`` view: a stride 0 over a size above 1), as torch does, or that is read-only."""
    if not arr.flags.writeable or any(st == 0 and n > 1 for n, st in zip(arr.shape, arr.strides)):
        raise RuntimeError(
            f"{op}(): unsupported operation: more than one element of the written-to tensor "
            "refers to a single memory location (or it is read-only). Please clone() the "
            "tensor before performing the operation.")


def _plainly_contiguous(arr: np.ndarray) -> bool:
    """Contiguous with no size-1 dim, so NumPy's reshape gives torch's strides.

    NumPy calls an array contiguous whatever the strides of its size-1 dims;
    torch carries those strides into a view (``x[::2].unsqueeze(0).flatten()``
    keeps stride 2), so such arrays take the stride walk of ``view_strides``.
    """
    return arr.flags.c_contiguous and arr.size > 0 and 1 not in arr.shape


def _primitive_method(name: str):
    """Route a view or copy method through its `tensor.ops` primitive while a dispatch
    mode is on (`tensor.dispatch`); otherwise, and inside the primitive itself, the
    method's own code runs. The primitive reaches that code as ``.raw``."""

    def decorate(method):
        @functools.wraps(method)
        def routed(self, *args, **kwargs):
            if _dispatch._routing:
                return _dispatch.primitive(name)(self, *args, **kwargs)
            return method(self, *args, **kwargs)

        routed.raw = method
        return routed

    return decorate


def _restride(arr: np.ndarray, shape: tuple, strides: tuple) -> np.ndarray:
    """A view of `arr`'s memory (same first element) with the given shape and element strides."""
    itemsize = arr.itemsize
    byte_strides = tuple(s * itemsize for s in strides)
    if arr.shape == shape and arr.strides == byte_strides:
        return arr.view()
    if arr.flags.c_contiguous:
        out = arr.reshape(shape)  # never copies a C-contiguous array
        if out.strides == byte_strides:
            return out
    return as_strided(arr, shape, byte_strides, subok=True, writeable=arr.flags.writeable)


def _array_from_data(data, dtype_) -> np.ndarray:
    """Build a fresh NumPy array from Python data with torch's dtype inference."""
    if isinstance(data, Tensor):
        arr = data._array
    elif isinstance(data, np.ndarray):
        arr = data
    else:
        if isinstance(data, (list, tuple)):
            data = _unwrap_nested(data)
        try:
            arr = np.array(data)
        except ValueError as error:
            raise ValueError(
                f"tensor(): data is not a rectangular nested sequence ({error})"
            ) from None
        if arr.dtype == object:
            raise TypeError(
                f"tensor(): could not infer a dtype for data of type {type(data).__name__}"
            )
        if arr.dtype.kind == "f":
            arr = arr.astype(DEFAULT_FLOAT.numpy_dtype)
        elif arr.dtype.kind in "iu":
            arr = arr.astype(np.int64)
    if dtype_ is not None:
        return np.array(arr, dtype=as_dtype(dtype_).numpy_dtype)
    if arr.dtype not in _FROM_NUMPY:
        raise TypeError(
            f"unsupported dtype {arr.dtype}: tensor supports float32, float64, int32, int64 "
            "and bool"
        )
    return np.array(arr)


def _unwrap_nested(data):
    if isinstance(data, Tensor):
        return data._array
    if isinstance(data, (list, tuple)):
        return [_unwrap_nested(d) for d in data]
    return data


# --8<-- [start:format]
class _ElementFormat:
    """How wide each printed element is and in which notation, decided once per tensor."""

    PRECISION = 4

    def __init__(self, values: np.ndarray):
        self.floating = values.dtype.kind == "f"
        self.integral_floats = True
        self.scientific = False
        if not self.floating:
            texts = [str(v) for v in values.ravel().tolist()]
            self.width = max((len(t) for t in texts), default=1)
            return
        flat = values.ravel().astype(np.float64)
        finite = flat[np.isfinite(flat) & (flat != 0)]
        self.width = 1
        if finite.size == 0:
            return
        magnitudes = np.abs(finite)
        smallest, largest = magnitudes.min(), magnitudes.max()
        self.integral_floats = bool(np.all(finite == np.ceil(finite)))
        spread_too_wide = largest / smallest > 1000.0 or largest > 1.0e8
        if self.integral_floats:
            self.scientific = spread_too_wide
        else:
            self.scientific = spread_too_wide or smallest < 1.0e-4
        if self.scientific:
            self.width = max(len(f"{v:.{self.PRECISION}e}") for v in finite.tolist())
        elif self.integral_floats:
            self.width = max(len(f"{v:.0f}") + 1 for v in finite.tolist())
        else:
            self.width = max(len(f"{v:.{self.PRECISION}f}") for v in finite.tolist())

    def __call__(self, value) -> str:
        if not self.floating:
            text = str(value)
        elif self.scientific:
            text = f"{value:.{self.PRECISION}e}"
        elif self.integral_floats:
            text = f"{value:.0f}" + ("" if math.isinf(value) or math.isnan(value) else ".")
        else:
            text = f"{value:.{self.PRECISION}f}"
        return text.rjust(self.width)


_SUMMARY_THRESHOLD = 1000  # more elements than this: print only the edges
_EDGE_ITEMS = 3
_LINE_WIDTH = 80


def _edges(values: np.ndarray) -> np.ndarray:
    """The elements a summarised print shows (the first and last few along each dim)."""
    if values.ndim == 0:
        return values
    if values.shape[0] > 2 * _EDGE_ITEMS:
        values = np.concatenate([values[:_EDGE_ITEMS], values[-_EDGE_ITEMS:]])
    if values.ndim == 1:
        return values
    return np.stack([_edges(row) for row in values])


def _body(values: np.ndarray, indent: int, summarize: bool, fmt: _ElementFormat) -> str:
    """The bracketed text of `values`, nested rows aligned under each other."""
    if values.ndim == 0:
        return fmt(values.item())
    long_dim = summarize and values.shape[0] > 2 * _EDGE_ITEMS
    if values.ndim == 1:
        if long_dim:
            items = [fmt(v) for v in values[:_EDGE_ITEMS].tolist()]
            items += [" ..."] + [fmt(v) for v in values[-_EDGE_ITEMS:].tolist()]
        else:
            items = [fmt(v) for v in values.tolist()]
        per_line = max(1, (_LINE_WIDTH - indent) // (fmt.width + 2))
        lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    if long_dim:
        rows = [_body(values[i], indent + 1, summarize, fmt) for i in range(_EDGE_ITEMS)]
        rows.append("...")
        n = values.shape[0]
        rows += [_body(values[i], indent + 1, summarize, fmt) for i in range(n - _EDGE_ITEMS, n)]
    else:
        rows = [_body(row, indent + 1, summarize, fmt) for row in values]
    separator = "," + "\n" * (values.ndim - 1) + " " * (indent + 1)
    return "[" + separator.join(rows) + "]"


def tensor_repr(t: Tensor, name: str = "tensor", extra_suffixes: Sequence[str] = ()) -> str:
    """Print `t` the way torch prints a tensor, `name(` in front (torch's `tensor(`).

    `extra_suffixes` (such as "requires_grad=True") follow the dtype, as in torch.
    """
    values = t._array
    prefix = name + "("
    indent = len(prefix)
    suffixes = []
    if values.size == 0:
        body = "[]"
        if values.ndim != 1:
            suffixes.append(f"size={tuple(values.shape)}")
    else:
        summarize = values.size > _SUMMARY_THRESHOLD
        fmt = _ElementFormat(_edges(values) if summarize else values)
        body = _body(values, indent, summarize, fmt)
    if t.dtype not in (DEFAULT_FLOAT, int64, bool_):
        suffixes.append(f"dtype={t.dtype!r}")
    suffixes.extend(extra_suffixes)
    text = prefix + body
    last_line = len(text) - text.rfind("\n") + 1  # torch's count, kept for identical wrapping
    for suffix in suffixes:
        # Wrap where torch wraps: its ``torch.float64`` is a letter shorter than ours.
        width = len(suffix) - suffix.count("tensor.")
        if last_line + width + 2 > _LINE_WIDTH:
            text += ",\n" + " " * indent + suffix
            last_line = indent + len(suffix)
        else:
            text += ", " + suffix
            last_line += len(suffix) + 2
    return text + ")"


# --8<-- [end:format]


def _convert_result(result, cls):
    """Give Tensor results the subclass `cls`, looking inside tuples and lists."""
    if isinstance(result, Tensor):
        return result if isinstance(result, cls) else result.as_subclass(cls)
    if isinstance(result, (tuple, list)):
        converted = [_convert_result(r, cls) for r in result]
        return (
            type(result)._make(converted) if hasattr(result, "_fields") else type(result)(converted)
        )
    return result


class Tensor:
    """An n-dimensional array with torch's API; its data lives in `self._array`."""

    __slots__ = ("_array", "__dict__", "__weakref__")
    __array_priority__ = 1000  # numpy scalars on the left defer to our operators

    def __new__(cls, *args):
        """torch.Tensor's legacy constructor: `Tensor(2, 3)` (zeros here) or `Tensor(data)`."""
        if len(args) == 1 and not isinstance(args[0], (int, np.integer)):
            arr = _array_from_data(args[0], float32)
        else:
            arr = np.zeros(_shape_arg(args, "Tensor"), dtype=np.float32)
        t = object.__new__(cls)
        t._array = arr
        return t

    @classmethod
    def _from_array(cls, arr: np.ndarray) -> Tensor:
        """Wrap a NumPy array (float32/64, int32/64 or bool) without copying it. A plain
        Tensor of an array in `TENSOR_CLASS_OF` (a FakeArray: no data) is of that class."""
        if type(arr) is not np.ndarray and cls is Tensor:
            cls = TENSOR_CLASS_OF.get(type(arr), cls)
        t = object.__new__(cls)
        t._array = arr
        return t

    @classmethod
    def __tensor_function__(cls, func, types, args=(), kwargs=None):
        """The default handler: run `func`, then give Tensor results the subclass `cls`."""
        if kwargs is None:
            kwargs = {}
        if not all(issubclass(cls, t) for t in types):
            return NotImplemented
        with overrides.disable_subclass_dispatch():
            result = func(*args, **kwargs)
        return _convert_result(result, cls)

    # ---- attributes -------------------------------------------------------
    @property
    def shape(self) -> Size:
        return Size(self._array.shape)

    @property
    def dtype(self) -> dtype:
        return _FROM_NUMPY[self._array.dtype]

    @property
    def ndim(self) -> int:
        return self._array.ndim

    @property
    def T(self) -> Tensor:  # noqa: N802 (torch's name)
        return self.permute(*range(self._array.ndim - 1, -1, -1))

    @property
    def mT(self) -> Tensor:  # noqa: N802 (torch's name)
        return self.transpose(-2, -1)

    @property
    def data(self) -> Tensor:
        return Tensor._from_array(self._array)

    @tensor_function
    def size(self, dim: int | None = None) -> Size | int:
        """The shape as a Size, or the length of one dim (negative dims count from the end)."""
        if dim is None:
            return Size(self._array.shape)
        return self._array.shape[_wrap_dim(dim, self._array.ndim, "size")]

    @tensor_function
    def stride(self, dim: int | None = None) -> tuple[int, ...] | int:
        """Steps in elements (not NumPy's bytes), as torch counts them: 0 along an expanded dim."""
        arr = self._array
        strides = _strides(arr)
        if dim is None:
            return strides
        return strides[_wrap_dim(dim, arr.ndim, "stride")]

    @tensor_function
    def dim(self) -> int:
        """The number of dims (torch's name for `ndim`)."""
        return self._array.ndim

    @tensor_function
    def numel(self) -> int:
        """How many elements the tensor holds: the product of its shape."""
        return self._array.size

    @tensor_function
    def element_size(self) -> int:
        return self._array.itemsize

    @tensor_function
    def is_floating_point(self) -> bool:
        return self._array.dtype.kind == "f"

    @property
    def is_quantized(self) -> bool:
        """False: a quantized tensor is a `tensor._quantized.QTensor` (chapter 10)."""
        return False

    @tensor_function
    def dequantize(self) -> Tensor:
        """A float tensor is already dequantized: itself, as in torch."""
        return self

    @tensor_function
    def numpy(self) -> np.ndarray:
        """The NumPy array behind this tensor; it shares memory, as torch's does."""
        return self._array

    @tensor_function
    def item(self) -> int | float | bool:
        """The one element of a one-element tensor, as a Python number."""
        if self._array.size != 1:
            raise RuntimeError(
                f"a Tensor with {self._array.size} elements cannot be converted to Scalar"
            )
        return self._array.reshape(()).item()

    @tensor_function
    def tolist(self) -> Any:
        """The elements as nested Python lists (a Python number for a 0-d tensor)."""
        return self._array.tolist()

    @tensor_function
    def is_contiguous(self) -> bool:
        """Whether the elements lie in row-major order with no gaps (size-1 dims do not count)."""
        arr = self._array
        return (
            arr.size == 0 or is_contiguous(arr.shape, _strides(arr))
        )

    @tensor_function
    def contiguous(self) -> Tensor:
        """This tensor if it is contiguous, else a row-major copy (kernels and `view` want one)."""
        if self.is_contiguous():
            return self
        return Tensor.clone.__wrapped__(self)  # a C-order copy (the primitive clone)

    @tensor_function
    @_primitive_method("clone")
    def clone(self) -> Tensor:
        return Tensor._from_array(self._array.copy())

    @tensor_function
    def detach(self) -> Tensor:
        return Tensor._from_array(self._array)

    @tensor_function
    def to(self, dtype) -> Tensor:
        target = as_dtype(dtype).numpy_dtype
        if self._array.dtype == target:
            return self
        if _dispatch._routing:
            return _dispatch.primitive("to_dtype")(self, as_dtype(dtype))
        return Tensor._from_array(self._array.astype(target))

    @tensor_function
    def float(self) -> Tensor:
        return self.to(float32)

    @tensor_function
    def double(self) -> Tensor:
        return self.to(_FROM_NUMPY[np.dtype(np.float64)])

    @tensor_function
    def long(self) -> Tensor:
        return self.to(int64)

    @tensor_function
    def int(self) -> Tensor:
        return self.to(_FROM_NUMPY[np.dtype(np.int32)])

    @tensor_function
    def bool(self) -> Tensor:
        return self.to(bool_)

    def as_subclass(self, cls: type) -> Tensor:
        """The same data seen as an instance of `cls` (a Tensor subclass); no copy."""
        if not (isinstance(cls, type) and issubclass(cls, Tensor)):
            raise TypeError(f"as_subclass(): cls must be a subclass of tensor.Tensor, not {cls!r}")
        t = object.__new__(cls)
        t._array = self._array
        return t

    # ---- views -----------------------------------------------------------
    @tensor_function
    @_primitive_method("view")
    def view(self, *shape: int | Sequence[int]) -> Tensor:
        """The same memory seen with another shape; refuses when strides forbid it."""
        arr = self._array
        if len(shape) == 1 and isinstance(shape[0], dtype):
            raise TypeError("view(dtype) is not supported by tensor")
        new_shape = infer_size(_shape_arg(shape, "view"), arr.size, "view", arr.shape)
        if _plainly_contiguous(arr):
            return Tensor._from_array(arr.reshape(new_shape))  # contiguous in, contiguous out
        strides = view_strides(arr.shape, _strides(arr), new_shape)
        if strides is None:
            raise RuntimeError(
                "view size is not compatible with input tensor's size and stride (at least one "
                "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
                f"{in_op('view', arr.shape, new_shape)}"
            )
        return Tensor._from_array(_restride(arr, new_shape, strides))

    @tensor_function
    @_primitive_method("reshape")
    def reshape(self, *shape: int | Sequence[int]) -> Tensor:
        """Another shape: a view when the strides allow it, else a copy."""
        arr = self._array
        new_shape = infer_size(_shape_arg(shape, "reshape"), arr.size, "reshape",
                                arr.shape)
        if _plainly_contiguous(arr):
            return Tensor._from_array(arr.reshape(new_shape))
        strides = view_strides(arr.shape, _strides(arr), new_shape)
        if strides is None:
            return Tensor._from_array(arr.copy().reshape(new_shape))  # a C-order copy
        return Tensor._from_array(_restride(arr, new_shape, strides))

    @tensor_function
    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor:
        """Merge dims `start_dim`..`end_dim` into one (a view where `reshape` can make one)."""
        arr = self._array
        if arr.ndim == 0:
            return self.reshape(1)
        start = _wrap_dim(start_dim, arr.ndim, "flatten")
        end = _wrap_dim(end_dim, arr.ndim, "flatten")
        if start > end:
            raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
        if start == end:
            return self
        shape = arr.shape[:start] + (math.prod(arr.shape[start : end + 1]),) + arr.shape[end + 1 :]
        return self.reshape(shape)

    @tensor_function
    @_primitive_method("permute")
    def permute(self, *dims: int | Sequence[int]) -> Tensor:
        """A view with the dims reordered; the strides move with them, no data moves."""
        arr = self._array
        dims = _shape_arg(dims, "permute")
        if len(dims) != arr.ndim:
            raise RuntimeError(
                f"permute(sparse_coo): number of dimensions in the tensor input does not match "
                f"the length of the desired ordering of dimensions i.e. input.dim() = {arr.ndim} "
                f"is not equal to len(dims) = {len(dims)}"
            )
        wrapped = tuple(_wrap_dim(d, arr.ndim, "permute") for d in dims)
        if len(set(wrapped)) != len(wrapped):
            raise RuntimeError("permute(): duplicate dims are not allowed.")
        return Tensor._from_array(arr.transpose(wrapped))

    @tensor_function
    @_primitive_method("transpose")
    def transpose(self, dim0: int, dim1: int) -> Tensor:
        """A view with two dims swapped (their sizes and strides trade places)."""
        arr = self._array
        if arr.ndim == 0:
            _wrap_dim(dim0, 0, "transpose")
            _wrap_dim(dim1, 0, "transpose")
            return Tensor._from_array(arr.view())
        d0 = _wrap_dim(dim0, arr.ndim, "transpose")
        d1 = _wrap_dim(dim1, arr.ndim, "transpose")
        return Tensor._from_array(np.swapaxes(arr, d0, d1))

    @tensor_function
    def split(self, split_size_or_sections, dim: int = 0) -> tuple[Tensor, ...]:
        """Views of consecutive pieces along `dim`: equal pieces of an int size, or given sizes."""
        arr = self._array
        if arr.ndim == 0:
            raise RuntimeError("split expects at least a 1-dimensional tensor")
        d = _wrap_dim(dim, arr.ndim, "split")
        length = arr.shape[d]
        if isinstance(split_size_or_sections, int):
            step = split_size_or_sections
            if step <= 0 and not (step == 0 and length == 0):
                raise RuntimeError(f"split expects split_size be non-negative, but got {step}")
            sizes = [min(step, length - start) for start in range(0, length, step)] if step else [0]
        else:
            sizes = list(split_size_or_sections)
            if sum(sizes) != length:
                raise RuntimeError(
                    f"split_with_sizes expects split_sizes to sum exactly to {length} (input "
                    f"tensor's size at dimension {d}), but got split_sizes={sizes}"
                )
        pieces, start = [], 0
        for size in sizes:
            index = [slice(None)] * arr.ndim
            index[d] = slice(start, start + size)
            pieces.append(Tensor.__getitem__.__wrapped__(self, tuple(index)))  # a view
            start += size
        return tuple(pieces)

    @tensor_function
    def chunk(self, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
        """At most `chunks` views along `dim`, each ceil(size / chunks) long but the last."""
        if chunks <= 0:
            raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
        arr = self._array
        if arr.ndim == 0:
            raise RuntimeError("chunk expects at least a 1-dimensional tensor")
        d = _wrap_dim(dim, arr.ndim, "chunk")
        length = arr.shape[d]
        if length == 0:  # torch gives `chunks` empty pieces here
            return self.split([0] * chunks, d)
        return self.split(-(-length // chunks), d)

    @tensor_function
    def unbind(self, dim: int = 0) -> tuple[Tensor, ...]:
        """Views of each index along `dim`, with that dim removed."""
        arr = self._array
        d = _wrap_dim(dim, arr.ndim, "unbind")
        index = [slice(None)] * arr.ndim
        pieces = []
        for i in range(arr.shape[d]):
            index[d] = i
            pieces.append(Tensor.__getitem__.__wrapped__(self, tuple(index)))  # a view
        return tuple(pieces)

    @tensor_function
    @_primitive_method("t")
    def t(self) -> Tensor:
        """The transpose of a matrix, as a view; 0-d and 1-d tensors come back as they are."""
        arr = self._array
        if arr.ndim > 2:
            raise RuntimeError(
                f"t() expects a tensor with <= 2 dimensions, but self is {arr.ndim}D"
            )
        return Tensor._from_array(arr.T)

    @tensor_function
    @_primitive_method("unsqueeze")
    def unsqueeze(self, dim: int) -> Tensor:
        """A view with a new dim of size 1 at `dim`, to line shapes up for broadcasting."""
        arr = self._array
        return Tensor._from_array(_unsqueeze(arr, _wrap_dim(dim, arr.ndim + 1, "unsqueeze")))

    @tensor_function
    @_primitive_method("squeeze")
    def squeeze(self, dim: int | Sequence[int] | None = None) -> Tensor:
        """A view without the size-1 dims (all of them, or those of `dim`; other dims stay)."""
        arr = self._array
        if dim is None:
            dims = tuple(i for i, s in enumerate(arr.shape) if s == 1)
        else:
            wanted = dim if isinstance(dim, (tuple, list)) else (dim,)
            dims = tuple(
                d
                for d in (_wrap_dim(w, arr.ndim, "squeeze") for w in wanted)
                if arr.ndim and arr.shape[d] == 1
            )
        return Tensor._from_array(np.squeeze(arr, axis=dims) if dims else arr.view())

    @tensor_function
    @_primitive_method("expand")
    def expand(self, *sizes: int | Sequence[int]) -> Tensor:
        """A view that repeats size-1 dims to `sizes` with stride 0 (-1 keeps a size).

        Its ``numpy()`` is writable and shares memory with the base, as torch's; writing
        into it in place is refused (``has_internal_overlap``)."""
        arr = self._array
        sizes = _shape_arg(sizes, "expand")
        if len(sizes) < arr.ndim:
            raise RuntimeError(
                f"expand(tensor.{self.dtype.name}{{{list(arr.shape)}}}, size={list(sizes)}): the "
                "number of sizes provided "
                f"({len(sizes)}) must be greater or equal to the number of dimensions in the "
                f"tensor ({arr.ndim})"
            )
        lead = len(sizes) - arr.ndim
        old_strides = self.stride()
        shape, strides = [], []
        for i, size in enumerate(sizes):
            if i < lead:
                if size < 0:
                    raise RuntimeError(
                        f"The expanded size of the tensor ({size}) isn't allowed in a leading, "
                        "non-existing dimension 0"
                    )
                shape.append(size)
                strides.append(0)
                continue
            old = arr.shape[i - lead]
            if size == -1:
                size = old
            if old == size:
                shape.append(size)
                strides.append(old_strides[i - lead])
            elif old == 1:
                shape.append(size)
                strides.append(0)
            else:
                raise RuntimeError(
                    f"The expanded size of the tensor ({size}) must match the existing size "
                    f"({old}) at non-singleton dimension {i}.  Target sizes: {list(sizes)}.  "
                    f"Tensor sizes: {list(arr.shape)}"
                )
        out = as_strided(arr, tuple(shape), tuple(s * arr.itemsize for s in strides),
                         subok=True, writeable=arr.flags.writeable)
        return Tensor._from_array(out)

    @tensor_function
    def expand_as(self, other: Tensor) -> Tensor:
        return self.expand(other.shape)

    # ---- indexing ----------------------------------------------------------
    @tensor_function
    @_primitive_method("getitem")
    def __getitem__(self, index: Any) -> Tensor:
        """Ints, slices, None and ... give views, as in torch; tensors and lists of ints copy."""
        return Tensor._from_array(_index(self._array, index))

    @tensor_function
    def __setitem__(self, index, value) -> None:
        if isinstance(value, Tensor):
            value = value._array
        target = self._array
        if not target.flags.writeable:  # torch lets an expanded view be written, so do we
            raise RuntimeError("cannot write into a read-only tensor (its NumPy array is not "
                               "writeable); clone it first")
        target[_numpy_index(index, target.ndim)] = value

    # ---- Python protocols (not dispatched) ---------------------------------
    def __repr__(self) -> str:
        """torch's printed form, with a subclass's name in place of `tensor`."""
        name = "tensor" if type(self) is Tensor else type(self).__name__
        return tensor_repr(self, name)

    __hash__ = object.__hash__

    def __len__(self) -> int:
        if self._array.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._array.shape[0]

    def __iter__(self):
        if self._array.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._array.shape[0]))

    def __bool__(self) -> bool:
        if self._array.size != 1:
            raise RuntimeError(
                f"Boolean value of Tensor with {'no' if self._array.size == 0 else 'more than one'}"
                " values is ambiguous"
            )
        return bool(self._array.reshape(()))

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self._array.dtype.kind not in "iub" or self._array.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __array__(self, dtype=None, copy=None):
        arr = self._array
        if dtype is not None:
            return arr.astype(dtype)
        return arr.copy() if copy else arr

    def __reduce__(self):
        return _rebuild, (type(self), self._array.copy())


def _rebuild(cls, arr):
    return Tensor._from_array(arr) if cls is Tensor else Tensor._from_array(arr).as_subclass(cls)


def _strides(arr: np.ndarray) -> tuple[int, ...]:
    """Strides in elements; an empty array reports torch's contiguous strides."""
    if arr.size == 0:
        return contiguous_strides(arr.shape)
    itemsize = arr.itemsize
    return tuple(s // itemsize for s in arr.strides)


def _unsqueeze(arr: np.ndarray, dim: int) -> np.ndarray:
    """Insert a size-1 dim at `dim` with torch's stride for it."""
    strides = (
        [s // arr.itemsize for s in arr.strides]
        if arr.size
        else list(contiguous_strides(arr.shape))
    )
    new_stride = arr.shape[dim] * strides[dim] if dim < arr.ndim else 1
    shape = arr.shape[:dim] + (1,) + arr.shape[dim:]
    strides.insert(dim, new_stride)
    return _restride(arr, shape, tuple(strides))


def _numpy_index(index, ndim: int):
    """Turn Tensor parts of an index into NumPy arrays and refuse what torch refuses."""
    parts = index if isinstance(index, tuple) else (index,)
    converted = []
    for part in parts:
        if isinstance(part, Tensor):
            part = part._array
        elif isinstance(part, slice) and part.step is not None and part.step <= 0:
            raise ValueError("step must be greater than zero")
        elif isinstance(part, list):
            part = np.asarray(part)
        converted.append(part)
    return tuple(converted)


def _index(arr: np.ndarray, index):
    parts = _numpy_index(index, arr.ndim)
    if not any(p is None for p in parts) or any(isinstance(p, np.ndarray) for p in parts):
        result = arr[parts]  # ints and slices give torch's strides; index arrays copy
        return result if isinstance(result, np.ndarray) else np.asarray(result)
    # `None` inserts a dim with torch's stride, so walk the index left to right as torch does
    if sum(p is Ellipsis for p in parts) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(p is not Ellipsis and p is not None for p in parts)
    if consumed > arr.ndim:
        raise IndexError(f"too many indices for tensor of dimension {arr.ndim}")
    result, dim = arr, 0
    for p in parts:
        if p is Ellipsis:
            dim += arr.ndim - consumed
        elif p is None:
            result = _unsqueeze(result, dim)
            dim += 1
        else:
            result = result[(slice(None),) * dim + (p,)]
            dim += isinstance(p, slice)
    return result if isinstance(result, np.ndarray) else np.asarray(result)


Tensor.__module__ = "tensor"
overrides._register_base_tensor(Tensor)
