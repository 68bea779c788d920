"""Chapter 0's kernels on the kernels layer itself: strides, map, zip and reduce.

These tests call ``tensor.backend.kernels`` directly (its backend module, the
strides helpers and the kernel factories), whatever ``TENSOR_FAST`` says, so
the kernels that run are the ones the book teaches (and a learner writes).
NumPy computes every expected value. The operands come in every layout a
view can have: contiguous, transposed, stepped, reversed (negative strides),
broadcast (stride 0), longer than a block, with size-1 and size-0 dims.
"""

import itertools

import numpy as np
import pytest
from numba import njit

from tensor.backend import reference
from tensor.backend.kernels import _cache, elementwise
from tensor.backend.kernels import backend as kernels
from tensor.backend.kernels.strides import coalesce, storage_of

RNG = np.random.default_rng(7)
DTYPES = [np.float32, np.float64, np.int64]


def data(shape, dtype):
    if np.dtype(dtype).kind == "i":
        return RNG.integers(-50, 50, shape).astype(dtype)
    return RNG.standard_normal(shape).astype(dtype)


def layouts(dtype):
    """(name, array): one logical array per layout a view can have."""
    yield "contiguous", data((3, 4, 5), dtype)
    yield "transposed", data((5, 4, 3), dtype).transpose(2, 1, 0)
    yield "stepped", data((6, 4, 11), dtype)[::2, :, 1::2]
    yield "reversed", data((3, 4, 5), dtype)[::-1, :, ::-1]
    yield "broadcast", np.broadcast_to(data((1, 4, 1), dtype), (3, 4, 5))
    yield "long strided rows", data((3000, 3), dtype).T  # rows longer than a block, stride 3
    yield "size-1 dims", data((1, 7, 1), dtype)
    yield "empty", data((2, 0, 3), dtype)
    yield "1-d", data((9,), dtype)


LAYOUT_NAMES = [name for name, _ in layouts(np.float32)]


def layout(name, dtype):
    return dict(layouts(dtype))[name]


def positions(shape, strides, offset):
    """The storage position of every element, in C order."""
    return [offset + sum(i * s for i, s in zip(index, strides)) for index in np.ndindex(shape)]


# ---- strides -------------------------------------------------------------------
@pytest.mark.parametrize("name", LAYOUT_NAMES)
def test_storage_of_addresses_every_element(name):
    view = layout(name, np.float32)
    if view.size == 0:
        return  # test_storage_of_an_empty_or_0d_array
    storage, offset, strides = storage_of(view)
    assert type(strides) is list and strides == [s // view.itemsize for s in view.strides]
    assert storage.ndim == 1 and storage.dtype == view.dtype
    assert storage.strides == (view.itemsize,)
    assert np.shares_memory(storage, view)  # no copy
    where = positions(view.shape, strides, offset)
    assert [storage[p] for p in where] == view.reshape(-1).tolist()
    assert min(where) == 0 and max(where) == storage.size - 1  # exactly the span
    assert offset == where[0]  # where view[0, 0, ...] sits


def test_storage_of_an_empty_or_0d_array():
    empty = np.ones((4, 6), np.float64)[:, 3:3]
    storage, offset, strides = storage_of(empty)
    assert storage.tolist() == [0.0] and storage.dtype == np.float64 and offset == 0
    assert strides == [6, 1] and not np.shares_memory(storage, empty)
    scalar = np.array(2.5, np.float32)
    storage, offset, strides = storage_of(scalar)
    assert storage.tolist() == [2.5] and offset == 0 and strides == []


def test_coalesce_merges_what_every_operand_walks_as_one():
    shape, x, bias = coalesce((8, 64, 56, 56), (200704, 3136, 56, 1), (0, 1, 0, 0))
    assert (shape.tolist(), x.tolist(), bias.tolist()) == ([8, 64, 3136], [200704, 3136, 1],
                                                           [0, 1, 0])
    assert all(a.dtype == np.int64 for a in (shape, x, bias))
    shape, strides = coalesce((1, 1), (5, 7))
    assert (shape.tolist(), strides.tolist()) == ([1], [0])


# ---- map and zip ---------------------------------------------------------------
def run_range(kernel, out_dtype, shape, arrays, lo, hi):
    """Run ``kernel`` on elements [lo, hi) of an output of ``shape``, the rest a sentinel."""
    cshape, args = kernels.broadcast_operands(shape, *arrays)
    out = np.full(int(np.prod(shape)), 99, out_dtype)
    kernel(out, lo, hi, cshape, *args)
    return out


RANGES = [(0, 9000), (1, 2), (5, 4095), (2047, 2050), (3000, 9000), (8999, 9000)]


@pytest.mark.parametrize("lo, hi", RANGES)
def test_map_kernel_writes_exactly_its_range(lo, hi):
    a = data((3000, 3), np.float64).T  # 3 rows of 3000, stride 3: gathered in blocks
    out = run_range(elementwise.map_kernel("neg"), np.float64, a.shape, [a], lo, hi)
    expected = -a.reshape(-1)
    np.testing.assert_array_equal(out[lo:hi], expected[lo:hi])
    assert (out[:lo] == 99).all() and (out[hi:] == 99).all()


def test_map_kernel_gathers_at_most_a_block_at_a_time():
    """Rows longer than a block, whatever their last stride (1, -1, 0, 2, and one dim
    only), cut into blocks that fit the BLOCK-element scratch buffer. The kernel's own
    code, compiled with bounds checks, raises IndexError where the real kernel would
    silently read or write past an array. The real kernel releases the GIL."""
    assert elementwise.map_kernel("neg").targetoptions["nogil"] is True
    checked = njit(boundscheck=True)(elementwise.map_kernel("neg").py_func)
    rows = {"contiguous": data((3, 3000), np.float64),
            "reversed": data((3, 3000), np.float64)[:, ::-1],
            "broadcast": np.broadcast_to(data((3, 1), np.float64), (3, 3000)),
            "stepped": data((3, 6000), np.float64)[:, ::2],
            "1-d reversed": data((9000,), np.float64)[::-1]}
    for name, a in rows.items():
        for lo, hi in RANGES:
            out = run_range(checked, np.float64, a.shape, [a], lo, hi)
            np.testing.assert_array_equal(out[lo:hi], -a.reshape(-1)[lo:hi], err_msg=name)
            assert (out[:lo] == 99).all() and (out[hi:] == 99).all()


@pytest.mark.parametrize("lo, hi", RANGES)
def test_zip_kernel_writes_exactly_its_range(lo, hi):
    a = data((3000, 3), np.float32).T
    b = data((3, 1), np.float32)  # broadcast along the rows: stride 0
    out = run_range(elementwise.zip_kernel("sub"), np.float32, a.shape, [a, b], lo, hi)
    expected = (a - b).reshape(-1)
    np.testing.assert_array_equal(out[lo:hi], expected[lo:hi])
    assert (out[:lo] == 99).all() and (out[hi:] == 99).all()


def check(actual, expected):
    assert actual.shape == expected.shape and actual.dtype == expected.dtype
    if actual.dtype.kind == "f":
        tol = 1e-5 if actual.dtype == np.float32 else 1e-12  # sums may round differently
        np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol, equal_nan=True)
    else:
        np.testing.assert_array_equal(actual, expected)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", LAYOUT_NAMES)
def test_unary_on_every_layout(name, dtype):
    a = layout(name, dtype)
    for op in ("neg", "exp") if np.dtype(dtype).kind == "f" else ("neg",):
        check(kernels.unary(op, a), reference.unary(op, a))
    small = layout(name, np.int32)  # computed in int64, given back as int32
    check(kernels.unary("neg", small), reference.unary("neg", small))


def partners(a):
    """Second operands for ``a``: the same shape, a row that broadcasts, a column that
    broadcasts, and a transposed view of a larger array."""
    yield data(a.shape, a.dtype)
    yield data(a.shape[-1:], a.dtype)
    if a.ndim > 1:
        yield data(a.shape[:-1] + (1,), a.dtype)
        yield data(a.shape[::-1], a.dtype).T


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", LAYOUT_NAMES)
def test_binary_on_every_layout_and_broadcast(name, dtype):
    a = layout(name, dtype)
    for b in partners(a):
        for x, y in ((a, b), (b, a)):
            check(kernels.binary("sub", x, y), reference.binary("sub", x, y))
        check(kernels.binary("lt", a, b), reference.compare("lt", a, b))


def test_kernels_are_cached_in_the_keyed_folder():
    """numba checks a cached kernel against its own file only: the factories build their
    kernels under the folder keyed by every kernel source (``_cache.py``)."""
    folder = f"kernels-{_cache._sources_digest()}"
    for kernel in (elementwise.map_kernel("abs"), elementwise.zip_kernel("mul")):
        assert folder in kernel._cache._cache_path
    assert elementwise.map_kernel("abs") is elementwise.map_kernel("abs")


# ---- reduce --------------------------------------------------------------------
def every_dims(ndim):
    """Every non-empty set of dims of an ``ndim``-d array."""
    return [d for n in range(1, ndim + 1) for d in itertools.combinations(range(ndim), n)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", [n for n in LAYOUT_NAMES if n not in ("1-d", "empty")])
def test_reduce_over_any_dims_on_every_layout(name, dtype):
    a = layout(name, dtype)
    ops = ("sum", "mean", "amax", "amin") if np.dtype(dtype).kind == "f" else \
        ("sum", "amax", "amin")
    for op in ops:
        for dims in every_dims(a.ndim):
            for keepdim in (False, True):
                actual = kernels.reduce(op, a, dims, keepdim)
                if op in ("sum", "mean") and a.dtype.kind == "f":
                    within_summation_bound(actual, op, a, dims, keepdim)
                else:
                    check(actual, reference.reduce(op, a, dims, keepdim))


def within_summation_bound(actual, op, a, dims, keepdim):
    """A float sum against the float64 sum, within the bound of any summation order
    (n * eps * sum|x|): the order differs with the CPU's vector width, and so does NumPy's."""
    exact = reference.reduce(op, a.astype(np.float64), dims, keepdim)
    size = reference.reduce("sum", np.abs(a).astype(np.float64), dims, keepdim)
    n = max(1, a.size // max(1, exact.size))
    if op == "mean":
        size = size / n
    assert actual.shape == exact.shape and actual.dtype == a.dtype
    bound = n * np.finfo(a.dtype).eps * size
    assert (np.abs(actual.astype(np.float64) - exact) <= bound).all()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_amax_and_amin_propagate_nan(dtype):
    a = data((4, 5, 6), dtype)
    a[1, 2, 3] = np.nan  # one NaN: its row, column and plane reduce to NaN
    a[3, 0, ::2] = np.inf
    a[2, 4, 1::2] = -np.inf
    view = a.transpose(1, 2, 0)
    for op in ("amax", "amin", "sum"):
        for dims in every_dims(3):
            with np.errstate(invalid="ignore"):  # NumPy warns at inf + -inf; both give NaN
                expected = reference.reduce(op, view, dims, False)
            check(kernels.reduce(op, view, dims, False), expected)
