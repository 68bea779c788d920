"""The fast paths of the numba backend against torch: Python-scalar operands
(never broadcast into arrays), the lean same-shape path, small reductions,
and the caching allocator that hands freed output blocks out again.

Sizes are above ``numba_backend.SMALL``, so the kernels run, not NumPy.
"""

import gc

import numba
import numpy as np
import pytest
import torch

import tensor
from tensor._ops import OPS
from tensor.backend.fast import allocator as _allocator
from tensor.backend.fast import backend as nb
from tensor.testing import assert_close
from tests import oracles

pytestmark = pytest.mark.fast_layer  # the fast layer's own machinery

RNG = np.random.default_rng(7)
BINARY = tuple(op.name for op in OPS if op.kind == "binary" and op.dtypes == "numeric")
COMPARE = tuple(op.name for op in OPS if op.kind == "compare")


@pytest.fixture(autouse=True)
def numba_backend():
    previous = tensor.backend.get_backend()
    tensor.backend.set_backend("numba")
    yield
    tensor.backend.set_backend(previous)


def pair(a):
    return tensor.from_numpy(a.copy()), torch.from_numpy(a.copy())


def layouts(dtype):
    """A contiguous, a transposed and a sliced operand of more than SMALL elements."""
    base = RNG.uniform(0.5, 2.0, (30, 40)).astype(dtype)
    if dtype.kind in "iu":
        base = RNG.integers(1, 5, (30, 40)).astype(dtype)
    return {"contiguous": base, "transposed": base.T, "sliced": base[::2, 1::3]}


SCALAR_CASES = [
    (dtype, op, left)
    for dtype in (np.float32, np.float64, np.int32, np.int64)
    for op in BINARY
    for left in (False, True)
    # int division promotes to float and int ** tensor is torch's own path: not these kernels
    if not (np.dtype(dtype).kind == "i" and (op == "div" or (op == "pow" and left)))
]


@pytest.mark.parametrize(("dtype", "op", "scalar_left"), SCALAR_CASES)
def test_python_scalar_operands_match_torch(dtype, op, scalar_left):
    dtype = np.dtype(dtype)
    value = 3 if dtype.kind == "i" else 1.5
    for layout, a in layouts(dtype).items():
        ours, theirs = pair(a)
        fn_ours, fn_theirs = getattr(tensor, op), getattr(torch, op)
        if op in ("maximum", "minimum"):  # torch takes tensors only: compare with a full tensor
            other = np.full(a.shape, value, dtype)
            expected = fn_theirs(theirs, torch.from_numpy(other))
        elif scalar_left:
            expected = fn_theirs(value, theirs) if op != "sub" else value - theirs
        else:
            expected = fn_theirs(theirs, value)
        result = fn_ours(value, ours) if scalar_left else fn_ours(ours, value)
        assert_close(result, expected, msg=f"{op} {layout} {dtype}")


@pytest.mark.parametrize("op", COMPARE)
def test_compare_with_python_scalar_both_sides(op):
    for layout, a in layouts(np.dtype(np.float32)).items():
        ours, theirs = pair(a)
        a_ours = getattr(ours, f"__{op}__")(1.0)
        a_theirs = getattr(theirs, f"__{op}__")(1.0)
        assert_close(a_ours, a_theirs, msg=f"{op} {layout}")
        assert_close(getattr(tensor, op)(1.0, ours), getattr(torch, op)(torch.tensor(1.0), theirs))


def test_scalar_operators_and_nan_inf():
    a = RNG.standard_normal(1000).astype(np.float32)
    a[:3] = [np.nan, np.inf, -np.inf]
    ours, theirs = pair(a)
    for f in (lambda x: x * 2.0, lambda x: x + 1.0, lambda x: 2.0 - x, lambda x: 1.0 / x,
              lambda x: x / 0.0, lambda x: 2.0 ** x, lambda x: x ** 2, lambda x: x * float("nan")):
        assert_close(f(ours), f(theirs), equal_nan=True)


@pytest.mark.parametrize("backend", ["numba", "numpy"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_python_float_counts_as_its_value_in_the_tensors_dtype(backend, dtype):
    """x * 0.1 hands 0.1 to the backend as a Python float (``binary_scalar``): every
    bit of the result is what the number made a NumPy scalar of x's dtype gives
    (0.1 is not a float32, so a float64 0.1 in the arithmetic would show)."""
    tensor.backend.set_backend(backend)
    ops = tensor.backend.ops()
    base = RNG.standard_normal((30, 40)).astype(dtype) + 2.0
    for a in (base, base.T, base[::2, 1::3], base[:5, :5], base[0, :1].reshape(())):
        x = tensor.from_numpy(a.copy())
        for op in BINARY:
            for value in (0.1, -1.7, 3.0):
                number = np.dtype(dtype).type(value)
                got = getattr(tensor, op)(x, value).numpy()
                np.testing.assert_array_equal(got, ops.binary(op, a, number), err_msg=op)
                if op not in ("maximum", "minimum"):  # the reflected operators
                    got = getattr(x, f"__r{op.replace('div', 'truediv')}__")(value).numpy()
                    np.testing.assert_array_equal(got, ops.binary(op, number, a), err_msg=op)


# The exponents torch computes with other operations, and those operations.
BY_OTHER_OPS = {
    1: lambda x: x.clone(), 2: lambda x: x * x, 3: lambda x: x * x * x,
    -1: lambda x: 1.0 / x, -2: lambda x: 1.0 / (x * x),
    0.5: lambda x: x.sqrt(), -0.5: lambda x: x.rsqrt(),
}


@pytest.mark.parametrize("backend", ["numba", "numpy"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_whole_and_half_exponents_are_computed_as_torch_does(backend, dtype):
    """x ** 2 is x * x, x ** 0.5 is sqrt(x), and so on for 1, 3, -1, -2 and -0.5, as
    in torch: the same bits as those operations, whole exponents given as
    ints or floats, in every layout, at every size, in place too; and the
    values torch gives, (-0.0) ** 0.5 = -0.0 and (-inf) ** 0.5 = NaN
    included, where C's pow gives 0.0 and inf."""
    tensor.backend.set_backend(backend)
    base = (RNG.standard_normal((300, 400)) * 1e3).astype(dtype)
    base.flat[:5] = (np.nan, np.inf, -np.inf, -0.0, 0.0)
    for a in (base, base.T, base[::2, 1::3], base[:5, :5], base[0, :1].reshape(())):
        x, tx = tensor.from_numpy(a), torch.from_numpy(a.copy())
        for exponent, other_ops in BY_OTHER_OPS.items():
            expected = other_ops(x).numpy()
            for number in {exponent, float(exponent)}:
                np.testing.assert_array_equal((x ** number).numpy(), expected)
                np.testing.assert_array_equal(tensor.pow(x, number).numpy(), expected)
                in_place = x.clone()
                in_place **= number
                np.testing.assert_array_equal(in_place.numpy(), expected)
                assert_close(x ** number, tx ** number, equal_nan=True)
    root = (tensor.from_numpy(base) ** 0.5).numpy()[0]
    assert root[3] == 0 and np.signbit(root[3])  # (-0.0) ** 0.5
    assert np.isnan(root[2])  # (-inf) ** 0.5
    # A 0-d tensor exponent is not a number: torch runs pow, and so do we.
    half = tensor.tensor(0.5, dtype=tensor.float32 if dtype == np.float32 else tensor.float64)
    root = (tensor.from_numpy(base) ** half).numpy()[0]
    assert root[3] == 0 and not np.signbit(root[3]) and root[2] == np.inf
    torch_base = torch.from_numpy(base.copy())
    torch_root = torch_base ** torch.tensor(0.5, dtype=torch_base.dtype)
    assert_close(tensor.from_numpy(base) ** half, torch_root, equal_nan=True)


@pytest.mark.parametrize("backend", ["numba", "numpy"])
def test_integer_tensors_keep_their_exact_powers(backend):
    """An int tensor to a whole power stays an exact int power; to the power 0.5
    it becomes float32 and takes the float route (sqrt), as in torch."""
    tensor.backend.set_backend(backend)
    a = RNG.integers(-40, 40, (300, 400))
    x, tx = tensor.from_numpy(a), torch.from_numpy(a.copy())
    for exponent in (1, 2, 3, 5):
        np.testing.assert_array_equal((x ** exponent).numpy(), (tx ** exponent).numpy())
    root = x.abs() ** 0.5
    assert root.dtype == tensor.float32
    np.testing.assert_array_equal(root.numpy(), x.abs().float().sqrt().numpy())


@pytest.mark.parametrize("backend", ["numba", "numpy"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_same_shape_operands_in_every_layout_match_torch(backend, dtype):
    """x + y of one shape and dtype goes to ``binary_same_shape``: contiguous, transposed,
    sliced and tiny operands (below SMALL), each against torch."""
    tensor.backend.set_backend(backend)
    dtype = np.dtype(dtype)
    first, second = layouts(dtype), layouts(dtype)
    first["tiny"], second["tiny"] = first["sliced"][:2, :3], second["sliced"][:2, :3]
    for layout in first:
        a, b = first[layout], second[layout]
        x, y = tensor.from_numpy(a), tensor.from_numpy(b)  # views: their strides kept
        assert x._array.strides == a.strides and y._array.strides == b.strides
        tx, ty = torch.from_numpy(a.copy()), torch.from_numpy(b.copy())
        for op in BINARY:
            if dtype.kind == "i" and op in ("div", "pow"):
                continue
            assert_close(getattr(tensor, op)(x, y), getattr(torch, op)(tx, ty),
                         msg=f"{op} {layout} {dtype}")


def test_scalar_is_not_broadcast(monkeypatch):
    """x * 2.0 must not build a broadcast view of the scalar (the old 70-90 us path)."""
    def refuse(*args, **kwargs):
        raise AssertionError("a Python scalar was broadcast into an array")

    monkeypatch.setattr(nb, "_operands", refuse)
    x = tensor.from_numpy(RNG.standard_normal((50, 60)).astype(np.float32))
    for result in (x * 2.0, x + 1, 3.0 - x, (x.t() / 4.0).t(), x > 0.5, 0.5 < x):
        assert result.shape == x.shape


@pytest.mark.parametrize("op", ["sum", "mean", "amax", "amin"])
@pytest.mark.parametrize("n", [65, 1000, 32768, 32769, 100_000])
def test_small_and_large_reductions(op, n):
    a = RNG.standard_normal(n).astype(np.float32)
    ours, theirs = pair(a)
    assert_close(getattr(ours, op)(), getattr(theirs, op)(), rtol=1e-5, atol=1e-4)
    assert_close(getattr(ours.reshape(1, n), op)(1, keepdim=True),
                 getattr(theirs.reshape(1, n), op)(1, keepdim=True), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("n", [1000, 600_000, 1_100_000])
def test_sizes_that_split_over_threads(n):
    a, b = RNG.standard_normal(n).astype(np.float32), RNG.standard_normal(n).astype(np.float32)
    (x, tx), (y, ty) = pair(a), pair(b)
    assert_close(x + y, tx + ty)
    assert_close(x * 2.0, tx * 2.0)
    assert_close(tensor.sigmoid(x), torch.sigmoid(tx))
    assert_close((x.reshape(-1, 100) - y.reshape(-1, 100)).sum(-1),
                 (tx.reshape(-1, 100) - ty.reshape(-1, 100)).sum(-1), rtol=1e-4, atol=1e-4)


def test_allocator_reuses_a_freed_block_only():
    shape, dtype = (512, 1024), np.dtype(np.float32)
    first = _allocator.empty(shape, dtype)
    address = first.ctypes.data
    second = _allocator.empty(shape, dtype)
    assert second.ctypes.data != address  # first is still alive
    del first
    gc.collect()
    third = _allocator.empty(shape, dtype)
    assert third.ctypes.data == address  # its block came back
    view = third[::2].T  # a view keeps the block in use
    del third
    fourth = _allocator.empty(shape, dtype)
    assert fourth.ctypes.data != address
    shared = torch.from_numpy(view.copy())  # unrelated memory: no effect
    del shared


def test_allocator_blocks_start_on_a_cache_line_and_are_reused_aligned():
    _allocator.clear()
    for shape in [(100_000,), (333, 777), (70_001,)]:
        for dtype in map(np.dtype, (np.float32, np.float64, np.int64)):
            first = _allocator.empty(shape, dtype)
            assert first.ctypes.data % 64 == 0 and first.shape == shape and first.dtype == dtype
            assert first.flags.c_contiguous and first.flags.writeable
            address = first.ctypes.data
            del first
            again = _allocator.empty(shape, dtype)
            assert again.ctypes.data == address  # the same aligned block came back


def test_allocator_hands_out_views_so_a_changed_shape_never_reaches_the_block():
    shape, dtype = (256, 1024), np.dtype(np.float32)
    _allocator.clear()
    first = _allocator.empty(shape, dtype)
    address = first.ctypes.data
    first.shape = (1024, 256)  # NumPy lets a caller reshape its array in place
    del first
    gc.collect()
    second = _allocator.empty(shape, dtype)
    assert second.ctypes.data == address and second.shape == shape
    assert _allocator.empty((1024, 256), dtype).ctypes.data != address  # its own blocks


def test_outputs_held_by_tensors_and_torch_are_never_overwritten():
    n = 300_000  # 1.2 MB: from the allocator
    a = RNG.standard_normal(n).astype(np.float32)
    x = tensor.from_numpy(a)
    kept = [x * float(i) for i in range(6)]  # more than PER_SIZE blocks of one size
    torch_view = torch.from_numpy((x + 1.0).numpy())
    del_me = x * 100.0
    del del_me
    for _ in range(5):
        _ = x - 7.0
    for i, k in enumerate(kept):
        np.testing.assert_array_equal(k.numpy(), a * np.float32(i))
    np.testing.assert_array_equal(torch_view.numpy(), a + np.float32(1.0))


@pytest.mark.parametrize(("a_shape", "b_shape"), [
    ((256, 512), (512, 256)),  # rows split
    ((1, 2048), (2048, 1000)),  # one row: columns split
    ((2, 3, 100, 64), (64, 700)),  # batched, broadcast
    ((2, 12, 197, 64), (2, 12, 64, 197)),  # attention scores
])
def test_split_matrix_products_match_torch(a_shape, b_shape):
    a = RNG.standard_normal(a_shape).astype(np.float32)
    b = RNG.standard_normal(b_shape).astype(np.float32)
    (x, tx), (y, ty) = pair(a), pair(b)
    assert_close(x @ y, tx @ ty, rtol=1e-4, atol=1e-4)


def test_split_linear_and_conv_match_torch():
    F, TF = tensor.nn.functional, torch.nn.functional
    x, tx = pair(RNG.standard_normal((197, 768)).astype(np.float32))
    w, tw = pair(RNG.standard_normal((3072, 768)).astype(np.float32) * 0.05)
    b, tb = pair(RNG.standard_normal(3072).astype(np.float32))
    assert_close(F.linear(x, w, b), TF.linear(tx, tw, tb), rtol=1e-4, atol=1e-4)
    assert_close(F.linear(x[:1], w, b), TF.linear(tx[:1], tw, tb), rtol=1e-4, atol=1e-4)
    # many rows, few outputs: split by rows, each part adding its rows' bias
    x, tx = pair(RNG.standard_normal((2, 2000, 64)).astype(np.float32))
    w, tw = pair(RNG.standard_normal((48, 64)).astype(np.float32) * 0.1)
    b, tb = pair(RNG.standard_normal(48).astype(np.float32))
    assert_close(F.linear(x, w, b), TF.linear(tx, tw, tb), rtol=1e-4, atol=1e-4)
    for batch in (1, 3):
        img, timg = pair(RNG.standard_normal((batch, 16, 40, 40)).astype(np.float32))
        k, tk = pair(RNG.standard_normal((256, 16, 3, 3)).astype(np.float32) * 0.1)
        for stride, pad in ((1, 1), (2, 1)):
            assert_close(F.conv2d(img, k, None, stride, pad),
                         TF.conv2d(timg, tk, None, stride, pad), rtol=1e-4, atol=1e-4)
        k1, tk1 = pair(RNG.standard_normal((256, 16, 1, 1)).astype(np.float32))
        assert_close(F.conv2d(img, k1), TF.conv2d(timg, tk1), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(("channels", "size", "kernel", "stride", "pad", "groups"), [
    (3, 64, 7, 2, 3, 1),  # a stem: three channels, split one and two
    (64, 16, 3, 2, 1, 1),  # strided 3x3
    (96, 12, 3, 1, 1, 1),  # late-stage 3x3 (too few tiles for Winograd)
    (64, 18, 3, 2, 1, 4),  # grouped: the product reads each group's rows of the columns
    (32, 20, 3, 1, 0, 1),  # with dilation below
])
def test_one_image_copies_split_by_channels_match_torch(monkeypatch, channels, size, kernel,
                                                         stride, pad, groups):
    splits = []
    in_ranges = nb.in_ranges

    def spy(run, n, k):
        splits.append((n, k))
        in_ranges(run, n, k)

    monkeypatch.setattr(nb, "in_ranges", spy)
    monkeypatch.setattr(nb, "COPY_SPLIT_MIN", 1)
    dilation = 2 if pad == 0 else 1
    img, timg = pair(RNG.standard_normal((1, channels, size, size)).astype(np.float32))
    k, tk = pair(RNG.standard_normal((48, channels // groups, kernel, kernel)).astype(np.float32))
    b, tb = pair(RNG.standard_normal(48).astype(np.float32))
    F, TF = tensor.nn.functional, torch.nn.functional
    assert_close(F.conv2d(img, k, b, stride, pad, dilation, groups),
                 TF.conv2d(timg, tk, tb, stride, pad, dilation, groups), rtol=1e-4, atol=1e-4)
    threads = min(numba.get_num_threads(), channels)
    assert (channels, threads) in splits  # the copies went to every thread, by channels


def test_vectorised_gelu_matches_torch_everywhere():
    """Finite inputs against torch's float32 gelu, within float32 tolerance (torch's vector
    routine differs by CPU in the last bits); the special values against the exact ones
    (torch's float32 gelu(inf) is NaN on some AVX-512 machines: see test_kernels.py)."""
    xs = np.concatenate([np.linspace(-12, 12, 200_001, dtype=np.float32),
                         np.array([0.0, -0.0, 1e-30, 30.0, -30.0], np.float32)])
    ours, theirs = pair(xs)
    assert_close(tensor.nn.functional.gelu(ours), torch.nn.functional.gelu(theirs))
    special = tensor.from_numpy(oracles.GELU_SPECIAL.copy())
    oracles.same_bits(tensor.nn.functional.gelu(special).numpy(), oracles.GELU_AT_SPECIAL)


@pytest.mark.parametrize("shape", [(10, 100), (4, 5, 300), (300, 300)])
def test_row_kernels_serial_and_parallel_match_torch(shape):
    a = RNG.standard_normal(shape).astype(np.float32)
    ours, theirs = pair(a)
    for dim in (-1, 0):
        assert_close(tensor.softmax(ours, dim=dim), torch.softmax(theirs, dim=dim))
        assert_close(tensor.log_softmax(ours, dim=dim), torch.log_softmax(theirs, dim=dim))
    n = shape[-1]
    w, b = RNG.standard_normal(n).astype(np.float32), RNG.standard_normal(n).astype(np.float32)
    (tw, ttw), (tb, ttb) = pair(w), pair(b)
    assert_close(tensor.nn.functional.layer_norm(ours, (n,), tw, tb),
                 torch.nn.functional.layer_norm(theirs, (n,), ttw, ttb), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_in_place_ops_write_into_the_tensor_itself(dtype):
    n = 100_000  # shared with the polling workers
    a = (RNG.standard_normal(n) * 10).astype(dtype)
    b = (RNG.standard_normal(n) * 10).astype(dtype) + 1
    x, y = tensor.from_numpy(a.copy()), tensor.from_numpy(b)
    address = x.numpy().ctypes.data
    expected = a.copy()
    for step, spelled in (
        (lambda: x.__iadd__(y), lambda e: e + b),
        (lambda: x.__isub__(3), lambda e: e - 3),
        (lambda: x.mul_(y), lambda e: e * b),
        (lambda: x.__iadd__(x), lambda e: e + e),  # the tensor itself: computed, then copied
    ):
        assert step() is x
        expected = spelled(expected).astype(dtype)
        np.testing.assert_allclose(x.numpy(), expected, rtol=1e-6)
    assert x.numpy().ctypes.data == address
    if dtype != np.int64:
        x *= 0.5
        np.testing.assert_allclose(x.numpy(), expected * 0.5, rtol=1e-6)
        assert tensor.nn.functional.relu(x, inplace=True) is x
        np.testing.assert_array_equal(x.numpy(), np.maximum(expected * 0.5, 0).astype(dtype))
        assert x.numpy().ctypes.data == address


def test_in_place_ops_on_overlapping_or_strided_operands_match_the_out_of_place_result():
    a = RNG.standard_normal(200_000).astype(np.float32)
    x = tensor.from_numpy(a.copy())
    x[1:] += x[:-1]  # overlapping views: computed first, then copied (NumPy's answer)
    expected = a.copy()
    expected[1:] = a[1:] + a[:-1]
    np.testing.assert_array_equal(x.numpy(), expected)
    x[::2] *= 2.0  # a strided target
    expected[::2] *= 2.0
    np.testing.assert_array_equal(x.numpy(), expected)
    ints = tensor.from_numpy(np.arange(100_000))
    with pytest.raises(RuntimeError, match="can't be cast"):
        ints /= 2  # true division gives floats, as in torch
    with pytest.raises(RuntimeError, match="can't be cast"):
        ints += 0.5


def _outcome(op, operands):
    """(result, None), or (None, the error's type)."""
    try:
        return op(*operands), None
    except (RuntimeError, TypeError) as error:
        return None, type(error)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int32, np.bool_])
def test_operator_shortcuts_keep_torchs_types_and_values(dtype):
    """``x + y``, ``x * 2.0`` and ``2.0 - x`` skip ``binary_op`` for plain tensors; the
    answers (dtype included, and the errors) are torch's, as on the full path."""
    import operator

    a = (RNG.standard_normal(300) * 5).astype(dtype)
    if dtype != np.bool_:
        a[a == 0] = 1  # no division by zero
    x, tx = pair(a)
    for number in (3, 2.5, -1):
        for op in (operator.add, operator.sub, operator.mul, operator.truediv, operator.pow):
            for left in (False, True):
                ours, ours_error = _outcome(op, (number, x) if left else (x, number))
                theirs, their_error = _outcome(op, (number, tx) if left else (tx, number))
                assert (ours_error is None) == (their_error is None), (op, number, left)
                if ours is not None:
                    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
                    assert_close(ours, theirs, rtol=1e-5, atol=1e-5, equal_nan=True)
        same, tsame = x + x, tx + tx
        assert str(same.dtype).split(".")[-1] == str(tsame.dtype).split(".")[-1]
        assert_close(same, tsame)
